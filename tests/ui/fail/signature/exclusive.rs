// `exclusive` orders calls that end: a subscription's call lasts as long as
// the subscription, and the flag takes no value.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc]
pub trait Service {
    #[rpc(exclusive, unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);

    #[rpc(exclusive = true)]
    async fn valued(&self);
}

fn main() {}
