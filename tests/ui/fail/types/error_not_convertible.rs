// The error type of a `Result` must convert into an ErrorObject.
use rpc_runtime::rpc;

#[derive(Debug)]
pub struct MyError;

#[rpc]
pub trait Service {
    fn fallible(&self) -> Result<u8, MyError>;
    async fn fallible_async(&self) -> Result<u8, MyError>;
}

fn main() {}
