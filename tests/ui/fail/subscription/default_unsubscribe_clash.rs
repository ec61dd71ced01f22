// A subscription method without `unsubscribe` is ended by
// `unsubscribe_<method>`: when that name is taken, by a method or an alias,
// the subscription method is where the error is, with the fix.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc]
pub trait Clock {
    async fn ticks(&self, sink: SubscriptionSink<u64>);

    // A method of its own, not the end of `ticks`.
    fn unsubscribe_ticks(&self);
}

#[rpc(namespace = "feed")]
pub trait Feed {
    #[rpc(alias = "unsubscribe_prices")]
    fn stop_all(&self);

    async fn prices(&self, sink: SubscriptionSink<f64>);
}

fn main() {}
