// An item type that cannot be encoded is reported on the item type of the
// `PendingSubscription` parameter.
use rpc_runtime::{rpc, peer::PendingSubscription};

pub struct Opaque;

#[rpc(catalog = false)] // only the serde bound is under test here
pub trait Service {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, pending: PendingSubscription<Opaque>);
}

fn main() {}
