//! A subscription method may take a `PendingSubscription<Item>` in place of a
//! `SubscriptionSink<Item>`, accept or reject after setup that awaits, and share an
//! unsubscribe method with `SubscriptionSink` methods; the generated code stays
//! warning-free and hygienic.

#![deny(warnings, unused_results, unused_qualifications, unreachable_pub)]
#![forbid(unsafe_code)]

use rpc_runtime::{peer::PendingSubscription, rpc, ErrorObject, SubscriptionSink};

/// Price feeds.
#[rpc(namespace = "prices")]
pub trait Prices {
    /// Every new price of `symbol`, once the feed is found.
    #[rpc(unsubscribe = "unsubscribe")]
    async fn watch(&self, symbol: String, pending: PendingSubscription<f64>) -> Result<(), ErrorObject>;

    /// Every price of every symbol.
    #[rpc(unsubscribe = "unsubscribe")]
    async fn all(&self, sink: SubscriptionSink<(String, f64)>);
}

struct Exchange;

impl Prices for Exchange {
    async fn watch(&self, symbol: String, pending: PendingSubscription<f64>) -> Result<(), ErrorObject> {
        if symbol.is_empty() {
            pending.reject(ErrorObject::invalid_params("no symbol")).await;
            return Ok(());
        }
        let sink = pending.accept().await?;
        sink.send(1.5).await?;
        Ok(())
    }

    async fn all(&self, sink: SubscriptionSink<(String, f64)>) {
        let _ = sink.send(("A".to_owned(), 1.5)).await;
    }
}

/// Generated code names everything by absolute path.
mod no_prelude {
    #![no_implicit_prelude]

    use ::rpc_runtime::rpc;

    #[rpc]
    pub(crate) trait Bare {
        #[rpc(unsubscribe = "stop")]
        async fn ticks(&self, pending: ::rpc_runtime::peer::PendingSubscription<u8>);
    }

    pub(crate) struct Impl;

    impl Bare for Impl {
        async fn ticks(&self, pending: ::rpc_runtime::peer::PendingSubscription<u8>) {
            if let ::std::result::Result::Ok(sink) = pending.accept().await {
                let _ = sink.send(1).await;
            }
        }
    }
}

use no_prelude::Bare;

fn main() {
    let router = Exchange.into_rpc();
    assert!(router.spec("prices_watch").is_some());
    assert!(router.spec("prices_unsubscribe").is_some());
    let methods = PricesCatalog::catalog().document().methods.len();
    assert_eq!(methods, 3);
    let router = no_prelude::Impl.into_rpc();
    assert!(router.spec("stop").is_some());
}
