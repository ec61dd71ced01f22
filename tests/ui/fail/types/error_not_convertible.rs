// The error type of a `Result` must convert into an ErrorObject.
use rpc_runtime::{rpc, SubscriptionSink};

#[derive(Debug)]
pub struct MyError;

#[rpc]
pub trait Service {
    fn fallible(&self) -> Result<u8, MyError>;
    async fn fallible_async(&self) -> Result<u8, MyError>;
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>) -> Result<(), MyError>;
}

fn main() {}
