// The trait itself: no generics, nothing but methods.
use rpc_runtime::rpc;

#[rpc]
pub trait Generic<T> {
    fn a(&self);
}

#[rpc]
pub trait WithWhere
where
    Self: Clone,
{
    fn a(&self);
}

#[rpc]
pub trait NonMethods {
    type Item;
    const LIMIT: usize;
    fn a(&self);
}

fn main() {}
