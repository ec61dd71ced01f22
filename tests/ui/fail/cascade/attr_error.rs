// A bad option inside the trait is the only error: every `#[rpc(...)]` is
// still stripped from the emitted trait, so the valid param rename and the
// impl below, and the server built from it, compile without further errors.
use rpc_runtime::{rpc, Server};

#[rpc(rename_all = "camelCase")]
pub trait Service {
    #[rpc(notifcation)]
    fn changed(&self, #[rpc(name = "newValue")] value: u8);
    async fn get(&self) -> u8;
}

struct Impl;

impl Service for Impl {
    fn changed(&self, _value: u8) {}
    async fn get(&self) -> u8 {
        1
    }
}

fn main() {
    let _server = Server::new(Impl.into_rpc());
}
