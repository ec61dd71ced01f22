//! Subscriptions over WebSocket: a method that takes a
//! `SubscriptionSink<Item>` streams items to its caller. Here it forwards
//! the events of a `tokio::sync::broadcast` feed that match the caller's
//! filter, stops as soon as the client leaves, and ends the subscription
//! with an error when it falls behind the feed. The client reads the typed
//! `Subscription` stream and drops it to unsubscribe. Server and client
//! run in this process.
//!
//! ```text
//! cargo run --example subscriptions
//! cargo run --example subscriptions --no-default-features --features ws
//! ```

use std::sync::Arc;
use std::time::Duration;

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::transport::http::Http;
use rpc_runtime::transport::ws::WsConnect;
use rpc_runtime::wire::SUBSCRIPTION_LAGGED;
use rpc_runtime::{rpc, ErrorObject, Peer, Server, SubscriptionSink};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::Notify;

/// One trade on the market.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Trade {
    /// What was traded.
    pub symbol: String,
    /// At what price, in cents.
    pub price: u64,
}

/// A market's live data.
#[rpc]
pub trait Market {
    /// Streams the trades of `symbol` until the client unsubscribes
    /// (with `unsubscribe_trades`, the name the method that ends a
    /// subscription gets unless `#[rpc(unsubscribe = "...")]` names it).
    async fn trades(&self, symbol: String, sink: SubscriptionSink<Trade>) -> Result<(), ErrorObject>;
}

struct Exchange {
    feed: broadcast::Sender<Trade>,
    /// Raised each time a subscription's method returns.
    ended: Arc<Notify>,
}

impl Market for Exchange {
    async fn trades(&self, symbol: String, sink: SubscriptionSink<Trade>) -> Result<(), ErrorObject> {
        // Setup before the first `.await`: it is done before the client
        // gets the subscription's id, so no trade after that is missed.
        let mut feed = self.feed.subscribe();
        let _ended = NotifyOnDrop(Arc::clone(&self.ended));
        loop {
            let trade = tokio::select! {
                // Unsubscribed, or the connection closed: stop at once
                // rather than at the next matching trade.
                why = sink.closed() => {
                    println!("server: subscription {} ended: {why}", sink.id());
                    return Ok(());
                }
                trade = feed.recv() => trade,
            };
            match trade {
                Ok(trade) if trade.symbol == symbol => sink.send(trade).await?,
                Ok(_) => {}
                // The feed moved on without us: end with an error the
                // client sees, rather than leave a silent gap.
                Err(RecvError::Lagged(missed)) => {
                    let message = format!("Subscription ended: {missed} trades were missed");
                    return Err(ErrorObject::new(SUBSCRIPTION_LAGGED, message));
                }
                Err(RecvError::Closed) => return Ok(()),
            }
        }
    }
}

/// Raises the `Notify` when dropped, however the method returns.
struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (feed, _) = broadcast::channel(16);
    let ended = Arc::new(Notify::new());
    let exchange = Exchange { feed: feed.clone(), ended: Arc::clone(&ended) };
    let listener = Http::default().bind("127.0.0.1:0").await?; // WebSocket upgrades on the HTTP port
    let addr = listener.local_addr()?;
    tokio::spawn(Server::new(exchange.into_rpc()).serve(listener));

    // A trade every 5 ms, alternating between two symbols.
    let ticker = feed.clone();
    tokio::spawn(async move {
        for price in 100.. {
            let symbol = if price % 2 == 0 { "ACME" } else { "INITECH" };
            let _ = ticker.send(Trade { symbol: symbol.to_owned(), price });
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });

    let market = MarketClient::new(Peer::builder().connect(WsConnect::new(format!("ws://{addr}/"))).await?);
    let mut trades = market.trades("ACME".to_owned()).await?; // a Subscription<Trade>
    for _ in 0..3 {
        let trade = trades.next().await.ok_or("the subscription ended early")??;
        println!("client: {} at {}", trade.symbol, trade.price);
    }
    drop(trades); // unsubscribes
    ended.notified().await;

    // A burst larger than the feed's buffer (16) overtakes the method.
    let mut trades = market.trades("ACME".to_owned()).await?;
    for price in 0..1_000 {
        let _ = feed.send(Trade { symbol: "ACME".to_owned(), price });
    }
    let (mut received, mut last) = (0, None);
    let read = async {
        while let Some(item) = trades.next().await {
            match item {
                Ok(_) => received += 1,
                Err(error) => last = Some(error),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await?;
    let error = last.ok_or("the subscription ended without an error")?;
    let code = error.server_error().map(ErrorObject::code);
    println!("client: {received} trades, then error {code:?} (SUBSCRIPTION_LAGGED): {error}");
    assert_eq!(code, Some(SUBSCRIPTION_LAGGED));
    Ok(())
}
