// A param type that cannot be decoded is reported on the param's type.
use rpc_runtime::rpc;

pub struct Opaque;

#[rpc(catalog = false, server_only)] // only the server's serde bounds are under test here
pub trait Service {
    fn take(&self, value: Opaque);
    async fn take_async(&self, first: u8, value: Option<Opaque>);
}

fn main() {}
