// Through an alias the macro cannot see the `Ok` type; the compiler checks
// that the method returns `()` or `Result<(), E>`.
use rpc_runtime::{rpc, SubscriptionSink, wire::RpcResult};

#[rpc]
pub trait Service {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>) -> RpcResult<u64>;
}

fn main() {}
