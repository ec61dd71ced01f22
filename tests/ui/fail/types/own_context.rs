// A parameter whose type is named `Context` is the runtime's injected
// context; a user type of that name is reported on the parameter.
use rpc_runtime::rpc;

pub mod app {
    #[derive(Clone)]
    pub struct Context;
}

#[rpc]
pub trait Service {
    fn call(&self, cx: app::Context);
}

fn main() {}
