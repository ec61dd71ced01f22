// Every misuse of a subscription method is reported, each on its own code.
use rpc_runtime::{rpc, ErrorObject, SubscriptionSink};

#[rpc]
pub trait Service {
    // Nothing to unsubscribe from.
    #[rpc(unsubscribe = "unsubscribe_plain")]
    async fn plain(&self, count: u64);

    // One call opens one subscription.
    #[rpc(unsubscribe = "unsubscribe_two")]
    async fn two_sinks(&self, a: SubscriptionSink<u64>, b: SubscriptionSink<u64>);

    // The subscription lasts while the method runs.
    #[rpc(unsubscribe = "unsubscribe_blocking")]
    fn blocking(&self, sink: SubscriptionSink<u64>);

    // The answer is the subscription id.
    #[rpc(unsubscribe = "unsubscribe_valued")]
    async fn valued(&self, sink: SubscriptionSink<u64>) -> u64;

    #[rpc(unsubscribe = "unsubscribe_result")]
    async fn valued_result(&self, sink: SubscriptionSink<u64>) -> Result<u64, ErrorObject>;

    // Nobody would learn the id.
    #[rpc(notification, unsubscribe = "unsubscribe_silent")]
    async fn silent(&self, sink: SubscriptionSink<u64>);

    // The item type is missing.
    #[rpc(unsubscribe = "unsubscribe_bare")]
    async fn bare(&self, sink: SubscriptionSink);

    // By reference.
    #[rpc(unsubscribe = "unsubscribe_borrowed")]
    async fn borrowed(&self, sink: &SubscriptionSink<u64>);

    // The unsubscribe method's name is taken, or not a name.
    fn stop(&self);
    #[rpc(unsubscribe = "stop")]
    async fn taken(&self, sink: SubscriptionSink<u64>);
    #[rpc(unsubscribe = "")]
    async fn nameless(&self, sink: SubscriptionSink<u64>);
    #[rpc(unsubscribe = "rpc.unsubscribe")]
    async fn reserved(&self, sink: SubscriptionSink<u64>);
    #[rpc(unsubscribe = 7)]
    async fn not_a_string(&self, sink: SubscriptionSink<u64>);
}

fn main() {}
