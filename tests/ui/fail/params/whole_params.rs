use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(whole_params)]
    fn none(&self);
    #[rpc(whole_params)]
    fn two(&self, a: u8, b: u8);
    #[rpc(whole_params)]
    fn context_only(&self, cx: rpc_runtime::Context);
}

fn main() {}
