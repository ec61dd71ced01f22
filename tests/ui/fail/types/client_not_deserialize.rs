// A result or subscription item type the client cannot decode (the server
// encodes it, so only the client fails) is reported at that type;
// `#[rpc(server_only)]` is the way out.
use rpc_runtime::serde::Serialize;
use rpc_runtime::{rpc, SubscriptionSink, wire::RpcResult};

#[derive(Serialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Report {
    pub length: usize,
}

#[rpc(catalog = false)] // only the client's serde bounds are under test here
pub trait Index {
    fn plain(&self) -> Report;
    async fn result(&self) -> Result<Report, rpc_runtime::ErrorObject>;
    fn alias(&self) -> RpcResult<Report>;
    #[rpc(unsubscribe = "unsubscribe_reports")]
    async fn reports(&self, sink: SubscriptionSink<Report>);
}

fn main() {}
