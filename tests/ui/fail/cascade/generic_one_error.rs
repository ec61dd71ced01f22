// One mistake in a generic trait, one error: the trait and its catalog
// struct (generic too) are still emitted, so the code that implements,
// serves and names them produces no further errors.
use rpc_runtime::{rpc, Router};

#[rpc]
pub trait Service<T> {
    fn good(&self, a: T) -> T;
    fn bad(&mut self);
}

struct Impl;

impl Service<u8> for Impl {
    fn good(&self, a: u8) -> u8 {
        a
    }
    fn bad(&mut self) {}
}

fn main() {
    let _: Router = Impl.into_rpc();
    let _ = ServiceCatalog::<u8>::catalog;
}
