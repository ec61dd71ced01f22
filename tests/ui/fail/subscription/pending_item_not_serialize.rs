// An item type that cannot be encoded is reported on the `PendingSink`
// parameter.
use rpc_runtime::{rpc, PendingSink};

pub struct Opaque;

#[rpc(catalog = false)] // only the serde bound is under test here
pub trait Service {
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, pending: PendingSink<Opaque>);
}

fn main() {}
