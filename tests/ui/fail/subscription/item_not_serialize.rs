// An item type that cannot be encoded is reported on the item type of the
// `SubscriptionSink` parameter.
use rpc_runtime::{rpc, SubscriptionSink};

pub struct Opaque;

#[rpc(catalog = false, server_only)] // only the server's serde bound is under test here
pub trait Service {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<Opaque>);

    // The whole item type is pointed at.
    async fn batches(&self, sink: SubscriptionSink<Vec<Opaque>>);
}

fn main() {}
