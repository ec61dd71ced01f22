//! A subscription method without `#[rpc(unsubscribe = "...")]` is ended by
//! `unsubscribe_<method>` named as the trait names its methods
//! (`rename_all` applied), or `unsubscribe_<name>` after a `name` written,
//! and the namespace then applies as to a name written; the catalog and the client
//! name it too, and the generated code stays warning-free and hygienic.

#![deny(warnings, unused_results, unused_qualifications, unreachable_pub)]
#![forbid(unsafe_code)]

use rpc_runtime::{peer::PendingSubscription, rpc, ErrorObject, SubscriptionSink};

/// Market data.
#[rpc(namespace = "market", rename_all = "camelCase")]
pub trait Market {
    /// Every new price.
    async fn price_ticks(&self, sink: SubscriptionSink<f64>);

    /// Every trade of `symbol`, once its feed is found.
    #[rpc(name = "trades")]
    async fn trade_feed(&self, symbol: String, pending: PendingSubscription<(String, f64)>) -> Result<(), ErrorObject>;

    /// Written: shared with `price_ticks`, whose default it is.
    #[rpc(unsubscribe = "unsubscribePriceTicks")]
    async fn closing_prices(&self, sink: SubscriptionSink<f64>);
}

struct Exchange;

impl Market for Exchange {
    async fn price_ticks(&self, sink: SubscriptionSink<f64>) {
        let _ = sink.send(1.5).await;
    }

    async fn trade_feed(&self, symbol: String, pending: PendingSubscription<(String, f64)>) -> Result<(), ErrorObject> {
        let sink = pending.accept().await?;
        sink.send((symbol, 1.5)).await?;
        Ok(())
    }

    async fn closing_prices(&self, sink: SubscriptionSink<f64>) {
        let _ = sink.send(1.5).await;
    }
}

/// Generated code names everything by absolute path.
mod no_prelude {
    #![no_implicit_prelude]

    use ::rpc_runtime::rpc;

    #[rpc]
    pub(crate) trait Bare {
        async fn ticks(&self, sink: ::rpc_runtime::SubscriptionSink<u8>);
    }

    pub(crate) struct Impl;

    impl Bare for Impl {
        async fn ticks(&self, sink: ::rpc_runtime::SubscriptionSink<u8>) {
            let _ = sink.send(1).await;
        }
    }
}

use no_prelude::Bare;

fn main() {
    let router = Exchange.into_rpc();
    assert_eq!(
        router.method_names(),
        [
            "market_closingPrices",
            "market_priceTicks",
            "market_trades",
            "market_unsubscribePriceTicks",
            "market_unsubscribe_trades",
        ]
    );
    assert_eq!(router.spec("market_unsubscribe_trades").unwrap().params[0].name, "subscription");

    let catalog = MarketCatalog::catalog();
    let unsubscribes: Vec<(&str, &str)> = catalog
        .methods()
        .filter_map(|method| method.subscription.as_ref().map(|s| (method.spec.name, s.unsubscribe)))
        .collect();
    assert_eq!(
        unsubscribes,
        [
            ("market_priceTicks", "market_unsubscribePriceTicks"),
            ("market_trades", "market_unsubscribe_trades"),
            ("market_closingPrices", "market_unsubscribePriceTicks"),
        ]
    );
    let names: Vec<&str> = catalog.methods().map(|method| method.spec.name).collect();
    assert!(names.contains(&"market_unsubscribePriceTicks"), "{names:?}");
    assert!(names.contains(&"market_unsubscribe_trades"), "{names:?}");

    let router = no_prelude::Impl.into_rpc();
    assert!(router.spec("unsubscribe_ticks").is_some());
}
