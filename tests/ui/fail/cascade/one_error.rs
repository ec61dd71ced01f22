// One mistake, one error: the trait is still emitted with `into_rpc`, so the
// impl below and the code that serves it produce no further errors.
use rpc_runtime::{rpc, Limits, Router, dispatch::Engine};

#[rpc]
pub trait Service {
    fn good(&self, a: u8) -> u8;
    fn bad(&mut self);
    async fn later(&self) -> String;
}

struct Impl;

impl Service for Impl {
    fn good(&self, a: u8) -> u8 {
        a
    }
    fn bad(&mut self) {}
    async fn later(&self) -> String {
        String::new()
    }
}

fn main() {
    let router: Router = Impl.into_rpc();
    let _engine = Engine::new(router, Limits::default());
    let _ = Impl.good(1);
}
