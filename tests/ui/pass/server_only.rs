// `#[rpc(server_only)]`: a param type that is `Deserialize` only and a
// result type that is `Serialize` only serve fine, and no client is
// generated (the names `IndexClient` and `IndexBatch` stay free).
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{rpc, SubscriptionSink};

#[derive(Deserialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Query {
    pub text: String,
}

#[derive(Serialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Report {
    pub length: usize,
}

#[rpc(server_only, catalog = false)]
pub trait Index {
    fn search(&self, query: Query) -> Report;
    async fn search_async(&self, query: Option<Query>) -> Result<Report, rpc_runtime::ErrorObject>;
    #[rpc(unsubscribe = "unsubscribe_reports")]
    async fn reports(&self, sink: SubscriptionSink<Report>);
}

/// Would collide with a generated client.
pub struct IndexClient;
/// Would collide with a generated batch.
pub struct IndexBatch;

struct Impl;

impl Index for Impl {
    fn search(&self, query: Query) -> Report {
        Report { length: query.text.len() }
    }
    async fn search_async(&self, query: Option<Query>) -> Result<Report, rpc_runtime::ErrorObject> {
        Ok(Report { length: query.map_or(0, |query| query.text.len()) })
    }
    async fn reports(&self, sink: SubscriptionSink<Report>) {
        let _ = sink.send(Report { length: 0 }).await;
    }
}

fn main() {
    let router = Impl.into_rpc();
    assert_eq!(router.method_names(), ["reports", "search", "search_async", "unsubscribe_reports"]);
    let _ = (IndexClient, IndexBatch);
}
