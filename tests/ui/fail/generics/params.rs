// A trait's type parameters are supported; its lifetime and const
// parameters are not.
use rpc_runtime::rpc;

#[rpc]
pub trait Borrowing<'a> {
    fn name(&self) -> String;
}

#[rpc]
pub trait Sized<const N: usize> {
    fn values(&self) -> Vec<u8>;
}

#[rpc]
pub trait Mixed<'a, T, const N: usize> {
    fn echo(&self, value: T) -> T;
}

fn main() {}
