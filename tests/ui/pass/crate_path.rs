//! `crate = "..."`: generated code reaches the runtime through a re-export
//! instead of `::rpc_runtime`, e.g. when a facade crate re-exports it.

mod facade {
    pub mod rt {
        pub use rpc_runtime::*;
    }
}

use facade::rt::rpc;

#[rpc(crate = "crate::facade::rt")]
pub trait Facade {
    fn ping(&self) -> String;
    async fn pong(&self, x: Option<u8>) -> crate::facade::rt::wire::RpcResult<u8>;
}

#[rpc(crate = "::rpc_runtime")]
pub trait Absolute {
    fn ping(&self) -> String;
}

struct Impl;

impl Facade for Impl {
    fn ping(&self) -> String {
        "pong".to_owned()
    }
    async fn pong(&self, x: Option<u8>) -> crate::facade::rt::wire::RpcResult<u8> {
        Ok(x.unwrap_or(0))
    }
}

impl Absolute for Impl {
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

fn main() {
    let router: facade::rt::Router = Facade::into_rpc(Impl);
    assert_eq!(router.method_names(), ["ping", "pong"]);
    assert_eq!(Absolute::into_rpc(Impl).method_names(), ["ping"]);
}
