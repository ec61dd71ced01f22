//! A subscription method declared without `#[rpc(unsubscribe = "...")]` is
//! ended by `unsubscribe_<method>` (`rename_all` and the namespace applied
//! as to a name written), end to end over the in-memory transport: the typed client
//! subscribes, reads items and unsubscribes by dropping the stream (the
//! server's `sink.closed()` completes); the method is on the wire under
//! that name, and the catalog lists it.

use rpc_runtime::serde_json::{self, json, Value};
use rpc_runtime::{peer::SendError, rpc, Peer, Server, SubscriptionSink};
use tokio::sync::mpsc;

use crate::api::subscriptions::{next, next_seen};

/// Ticks, with their unsubscribe methods' default names.
#[rpc]
pub trait Ticker {
    /// Sends 1, 2, 3, then waits for the subscription to end and reports why.
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

/// The same under a namespace and `rename_all`: ended by
/// `clock_unsubscribeMinuteTicks`.
#[rpc(namespace = "clock", rename_all = "camelCase")]
pub trait Clock {
    /// Sends 1, then waits for the subscription to end and reports why.
    async fn minute_ticks(&self, sink: SubscriptionSink<u64>);
}

/// Reports why each sink closed.
#[derive(Clone)]
struct Impl {
    seen: mpsc::UnboundedSender<SendError>,
}

impl Ticker for Impl {
    async fn ticks(&self, sink: SubscriptionSink<u64>) {
        for n in 1..=3 {
            if sink.send(n).await.is_err() {
                return;
            }
        }
        let why = sink.closed().await;
        let _ = self.seen.send(why);
    }
}

impl Clock for Impl {
    async fn minute_ticks(&self, sink: SubscriptionSink<u64>) {
        let _ = sink.send(1).await;
        let why = sink.closed().await;
        let _ = self.seen.send(why);
    }
}

fn service() -> (Impl, mpsc::UnboundedReceiver<SendError>) {
    let (seen, rx) = mpsc::unbounded_channel();
    (Impl { seen }, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typed_client_subscribes_and_dropping_the_stream_unsubscribes() {
    let (service, mut seen) = service();
    let client = TickerClient::new(Peer::builder().connect(Server::new(Ticker::into_rpc(service))).await.unwrap());
    let mut ticks = client.ticks().await.unwrap();
    for n in 1..=3 {
        assert_eq!(next(&mut ticks).await.unwrap().unwrap(), n);
    }
    drop(ticks);
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);

    // An explicit unsubscribe goes through the same method.
    let mut ticks = client.ticks().await.unwrap();
    assert_eq!(next(&mut ticks).await.unwrap().unwrap(), 1);
    assert!(ticks.unsubscribe().await.unwrap());
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_name_is_the_wire_name() {
    let (service, mut seen) = service();
    let client = TickerClient::new(Peer::builder().connect(Server::new(Ticker::into_rpc(service))).await.unwrap());
    let peer = client.peer().clone();
    let mut ticks = client.ticks().await.unwrap();
    assert_eq!(next(&mut ticks).await.unwrap().unwrap(), 1);
    let id: Value = serde_json::from_str(ticks.id().get()).unwrap();
    // Called raw, by the default name.
    assert!(peer.call::<bool, _>("unsubscribe_ticks", [&id]).await.unwrap());
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    assert!(!peer.call::<bool, _>("unsubscribe_ticks", [&id]).await.unwrap(), "already ended");
    drop(ticks);

    // The untyped subscribe, naming the unsubscribe method itself.
    let mut untyped = peer.subscribe::<u64, _>("ticks", json!([]), "subscription", "unsubscribe_ticks").await.unwrap();
    assert_eq!(next(&mut untyped).await.unwrap().unwrap(), 1);
    assert!(untyped.unsubscribe().await.unwrap());
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespace_applies_to_the_default_name() {
    let (service, mut seen) = service();
    let client = ClockClient::new(Peer::builder().connect(Server::new(Clock::into_rpc(service))).await.unwrap());
    let mut ticks = client.minute_ticks().await.unwrap();
    assert_eq!(next(&mut ticks).await.unwrap().unwrap(), 1);
    let id: Value = serde_json::from_str(ticks.id().get()).unwrap();
    let peer = client.peer().clone();
    assert!(peer.call::<bool, _>("clock_unsubscribeMinuteTicks", [&id]).await.unwrap());
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    drop(ticks);

    // Dropping the typed stream calls it too.
    let mut ticks = client.minute_ticks().await.unwrap();
    assert_eq!(next(&mut ticks).await.unwrap().unwrap(), 1);
    drop(ticks);
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
}

#[test]
fn the_catalog_lists_the_default_unsubscribe_method() {
    let catalog = TickerCatalog::catalog();
    let names: Vec<&str> = catalog.methods().map(|method| method.spec.name).collect();
    assert_eq!(names, ["ticks", "unsubscribe_ticks"]);
    let ticks = catalog.methods().next().unwrap();
    assert_eq!(ticks.subscription.as_ref().unwrap().unsubscribe, "unsubscribe_ticks");

    let catalog = ClockCatalog::catalog();
    let names: Vec<&str> = catalog.methods().map(|method| method.spec.name).collect();
    assert_eq!(names, ["clock_minuteTicks", "clock_unsubscribeMinuteTicks"]);
}
