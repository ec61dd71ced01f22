// A string is no JSON-RPC error: it has no code.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn owned(&self) -> Result<u8, String>;
    async fn borrowed(&self) -> Result<u8, &'static str>;
}

fn main() {}
