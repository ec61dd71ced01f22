// A parameter written as a bare `Context` is the runtime's injected
// context: a user type imported under that name is reported on the
// parameter, with the fix (write its path to take it as a param).
use rpc_runtime::rpc;

pub mod app {
    #[derive(Clone)]
    pub struct Context;

    #[derive(Clone)]
    pub struct Settings;
}

mod imported {
    use crate::app::Context;

    #[rpc_runtime::rpc]
    pub trait Service {
        fn call(&self, cx: Context);
    }
}

mod renamed {
    use crate::app::Settings as Context;

    #[super::rpc]
    pub trait Service {
        async fn call(&self, first: u8, cx: Context) -> u8;
    }
}

fn main() {}
