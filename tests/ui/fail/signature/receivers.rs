// Every method takes `&self`.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn no_receiver(a: u8);
    fn by_value(self);
    fn by_mut_ref(&mut self);
    fn boxed(self: Box<Self>);
    fn typed_ref(self: &Self);
}

fn main() {}
