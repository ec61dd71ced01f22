// `Context` is injected by value.
use rpc_runtime::{rpc, Context};

#[rpc]
pub trait Service {
    fn call(&self, cx: &Context, value: u8);
}

fn main() {}
