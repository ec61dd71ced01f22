//! The subscription benchmark's service: `items(count)` streams `count`
//! [`Quote`]s to its caller and ends, implemented with `rpc-runtime`
//! (`SubscriptionSink::send`) and with jsonrpsee 0.26 (`SubscriptionSink::send`, its
//! single-allocation `SubscriptionMessage::new`). Both wait for room when
//! the connection is full, neither drops items.

use serde::{Deserialize, Serialize};

/// One item: about 45 bytes of JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, rpc_runtime::schemars::JsonSchema)]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Quote {
    /// Counts from 0.
    pub seq: u64,
    /// A short name.
    pub symbol: &'static str,
    /// A price.
    pub price: f64,
}

impl Quote {
    /// The `seq`-th item.
    pub fn nth(seq: u64) -> Self {
        Quote { seq, symbol: "ABCD", price: 101.25 + (seq % 100) as f64 }
    }
}

/// `rpc-runtime`'s side.
pub mod ours {
    use rpc_runtime::{rpc, ErrorObject, Router, SubscriptionSink};

    use super::Quote;

    /// The feed. Only served here (the benchmark's client counts raw
    /// frames), so no client: `Quote` borrows its symbol and is not
    /// `DeserializeOwned`.
    #[rpc(server_only)]
    pub trait Feed {
        /// Streams `count` quotes, then ends.
        #[rpc(unsubscribe = "unsubscribe_items")]
        async fn items(&self, count: u64, sink: SubscriptionSink<Quote>) -> Result<(), ErrorObject>;
    }

    struct Service;

    impl Feed for Service {
        async fn items(&self, count: u64, sink: SubscriptionSink<Quote>) -> Result<(), ErrorObject> {
            for seq in 0..count {
                sink.send(Quote::nth(seq)).await?;
            }
            Ok(())
        }
    }

    /// The router.
    pub fn router() -> Router {
        Service.into_rpc()
    }
}

/// jsonrpsee's side.
pub mod jsonrpsee_feed {
    use jsonrpsee::core::SubscriptionResult;
    use jsonrpsee::proc_macros::rpc;
    use jsonrpsee::{PendingSubscriptionSink, RpcModule, SubscriptionMessage};

    use super::Quote;

    /// The feed.
    #[rpc(server)]
    pub trait FeedApi {
        /// Streams `count` quotes, then ends.
        #[subscription(name = "items", unsubscribe = "unsubscribe_items", item = Quote)]
        async fn items(&self, count: u64) -> SubscriptionResult;
    }

    struct Service;

    #[jsonrpsee::core::async_trait]
    impl FeedApiServer for Service {
        async fn items(&self, pending: PendingSubscriptionSink, count: u64) -> SubscriptionResult {
            let sink = pending.accept().await?;
            for seq in 0..count {
                let message = SubscriptionMessage::new(sink.method_name(), sink.subscription_id(), &Quote::nth(seq))?;
                sink.send(message).await?;
            }
            Ok(())
        }
    }

    /// The module.
    pub fn module() -> RpcModule<()> {
        let mut module = RpcModule::new(());
        module.merge(Service.into_rpc()).expect("no duplicate names");
        module
    }
}
