// An async method's result is encoded after its future completes, when the
// borrow of `self` has ended: it must be owned and named. (`&'static str`
// is fine, and so are borrowed results of plain `fn` methods: see
// ui/pass/methods.rs.)
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    async fn borrowed(&self) -> &str;
    async fn nested(&self) -> Vec<&[u8]>;
    async fn opaque(&self) -> impl rpc_runtime::serde::Serialize;
}

fn main() {}
