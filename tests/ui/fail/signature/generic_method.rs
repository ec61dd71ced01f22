use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn type_param<T>(&self, value: T);
    fn lifetime<'a>(&'a self);
    fn where_clause(&self)
    where
        Self: Sized;
    fn impl_trait(&self, value: impl Clone);
}

fn main() {}
