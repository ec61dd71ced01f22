// `blocking` is for plain `fn`s: an `async fn` (a subscription too) runs
// as a task already.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc]
pub trait Service {
    #[rpc(blocking)]
    async fn index(&self) -> u64;

    #[rpc(blocking, unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);

    #[rpc(blocking = true)]
    fn valued(&self);
}

fn main() {}
