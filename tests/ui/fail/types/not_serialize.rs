// A return type that cannot be encoded is reported on the return type.
use rpc_runtime::{rpc, wire::RpcResult};

pub struct Opaque;

#[rpc(catalog = false, server_only)] // only the server's serde bounds are under test here
pub trait Service {
    fn plain(&self) -> Opaque;
    async fn plain_async(&self) -> Opaque;
    fn result(&self) -> RpcResult<Opaque>;
    async fn result_async(&self) -> RpcResult<Opaque>;
}

fn main() {}
