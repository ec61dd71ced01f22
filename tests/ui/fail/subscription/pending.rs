// Every misuse of a `PendingSubscription` is reported, each on its own code.
use rpc_runtime::{rpc, SubscriptionSink, peer::PendingSubscription};

#[rpc]
pub trait Service {
    // One call opens one subscription, answered one way.
    #[rpc(unsubscribe = "unsubscribe_two")]
    async fn two_pending(&self, a: PendingSubscription<u64>, b: PendingSubscription<u64>);
    #[rpc(unsubscribe = "unsubscribe_both")]
    async fn both(&self, a: PendingSubscription<u64>, b: SubscriptionSink<u64>);

    // The item type is missing.
    #[rpc(unsubscribe = "unsubscribe_bare")]
    async fn bare(&self, pending: PendingSubscription);

    // By reference: `accept` consumes it.
    #[rpc(unsubscribe = "unsubscribe_borrowed")]
    async fn borrowed(&self, pending: &PendingSubscription<u64>);

    // The answer is the subscription id.
    #[rpc(unsubscribe = "unsubscribe_valued")]
    async fn valued(&self, pending: PendingSubscription<u64>) -> u64;
}

fn main() {}
