use rpc_runtime::rpc;

#[rpc]
pub struct Service;

#[rpc]
impl Service {
    fn a(&self) {}
}

#[rpc]
fn handler() {}

fn main() {}
