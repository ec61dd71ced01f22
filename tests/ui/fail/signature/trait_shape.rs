// The trait itself: nothing but methods.
use rpc_runtime::rpc;

#[rpc]
pub trait NonMethods {
    type Item;
    const LIMIT: usize;
    fn a(&self);
}

fn main() {}
