// A notification is never answered, so it returns nothing.
use rpc_runtime::{rpc, wire::RpcResult};

#[rpc]
pub trait Service {
    #[rpc(notification)]
    fn value(&self) -> u32;
    #[rpc(notification)]
    fn fallible(&self) -> RpcResult<()>;
    #[rpc(notification)]
    async fn asynchronous(&self) -> String;
    #[rpc(notification)]
    fn unit(&self) -> ();
}

fn main() {}
