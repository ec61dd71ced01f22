// The item notification's method must be a name a client can send.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc(subscription_notification = "")]
pub trait Empty {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

#[rpc(subscription_notification = " padded")]
pub trait Padded {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

#[rpc(subscription_notification = true)]
pub trait NotAString {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

fn main() {}
