// A plain method returning `impl Trait`: the client and the catalog need
// to name the result type.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn value(&self) -> impl rpc_runtime::serde::Serialize;
}

fn main() {}
