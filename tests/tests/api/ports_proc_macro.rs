//! jsonrpsee's `examples/proc_macro.rs`, ported: a generic trait
//! `Rpc<Hash, StorageKey>` in namespace `state`, with a method
//! `getKeys` and two subscriptions whose items are `Vec<Hash>`, served
//! over WebSocket with `Hash = [u8; 32]` and `StorageKey = Vec<u8>`, and
//! called through the generated client of those same types.
//!
//! jsonrpsee's subscriptions name their item type in the attribute and
//! their notification method each (`"subscribeStorage" => "override"`,
//! sent as `state_override`); here the item type is the sink's, and the
//! notification method is the trait's (`subscription_notification`,
//! taken as written), one for both. jsonrpsee's
//! `s` is a plain `fn` that spawns a task to accept and send; here a
//! subscription method is an `async fn`, and `s` takes the
//! `SubscriptionSink` directly (accepted when it first waits).

use std::fmt::Debug;

use rpc_runtime::peer::PendingSubscription;
use rpc_runtime::transport::http::Http;
use rpc_runtime::transport::ws::WsConnect;
use rpc_runtime::{rpc, ErrorObject, Peer, Server, SubscriptionSink};

use crate::common::HANG_GUARD;

type ExampleHash = [u8; 32];
type ExampleStorageKey = Vec<u8>;

/// jsonrpsee's example trait, generic over the hash and the storage key.
#[rpc(namespace = "state", subscription_notification = "state_override")]
pub trait Rpc<Hash: Clone, StorageKey>
where
    Hash: Debug,
{
    /// Async method call example.
    #[rpc(name = "getKeys")]
    async fn storage_keys(&self, storage_key: StorageKey, hash: Option<Hash>) -> Result<Vec<StorageKey>, ErrorObject>;

    /// Subscription that takes a `StorageKey` as input and produces a
    /// `Vec<Hash>`.
    #[rpc(name = "subscribeStorage", unsubscribe = "unsubscribeStorage")]
    async fn subscribe_storage(
        &self,
        keys: Option<Vec<StorageKey>>,
        pending: PendingSubscription<Vec<Hash>>,
    ) -> Result<(), ErrorObject>;

    /// The same, its id answered as soon as the method waits.
    #[rpc(name = "subscribeSync", unsubscribe = "unsubscribeSync")]
    async fn s(&self, keys: Option<Vec<StorageKey>>, sink: SubscriptionSink<Vec<Hash>>) -> Result<(), ErrorObject>;
}

/// jsonrpsee's `RpcServerImpl`.
#[derive(Debug)]
pub struct RpcServerImpl;

impl Rpc<ExampleHash, ExampleStorageKey> for RpcServerImpl {
    async fn storage_keys(
        &self,
        storage_key: ExampleStorageKey,
        _hash: Option<ExampleHash>,
    ) -> Result<Vec<ExampleStorageKey>, ErrorObject> {
        Ok(vec![storage_key])
    }

    async fn subscribe_storage(
        &self,
        _keys: Option<Vec<ExampleStorageKey>>,
        pending: PendingSubscription<Vec<ExampleHash>>,
    ) -> Result<(), ErrorObject> {
        let sink = pending.accept().await?;
        sink.send(vec![[0; 32]]).await?;
        Ok(())
    }

    async fn s(
        &self,
        _keys: Option<Vec<ExampleStorageKey>>,
        sink: SubscriptionSink<Vec<ExampleHash>>,
    ) -> Result<(), ErrorObject> {
        sink.send(vec![[0; 32]]).await?;
        Ok(())
    }
}

/// jsonrpsee's `run_server`: a WebSocket server on a port the system
/// picks; its URL.
async fn run_server() -> String {
    let router = RpcServerImpl.into_rpc();
    // The wire names of jsonrpsee's example, namespace first.
    for name in [
        "state_getKeys",
        "state_subscribeStorage",
        "state_unsubscribeStorage",
        "state_subscribeSync",
        "state_unsubscribeSync",
    ] {
        assert!(router.spec(name).is_some(), "{name} is served");
    }
    let listener = Http::default().bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}", listener.local_addr().expect("local address"));
    tokio::spawn(Server::new(router).serve(listener));
    url
}

#[tokio::test]
async fn generic_trait_serves_a_method_and_subscriptions_of_its_types() {
    let url = run_server().await;
    tokio::time::timeout(HANG_GUARD, async {
        let peer = Peer::builder().connect(WsConnect::new(&url)).await.expect("connect");
        let client = RpcClient::<ExampleHash, ExampleStorageKey>::new(peer);

        assert_eq!(client.storage_keys(vec![1, 2, 3, 4], None).await.expect("getKeys"), vec![vec![1, 2, 3, 4]]);

        let mut storage = client.subscribe_storage(None).await.expect("subscribeStorage");
        assert_eq!(storage.next().await.transpose().expect("an item"), Some(vec![[0; 32]]));
        assert!(storage.next().await.is_none(), "the method returned: the subscription ended");

        let mut sync = client.s(Some(vec![vec![9]])).await.expect("subscribeSync");
        assert_eq!(sync.next().await.transpose().expect("an item"), Some(vec![[0; 32]]));
        assert!(sync.next().await.is_none());
    })
    .await
    .expect("no hang");
}

#[test]
fn the_catalog_names_the_notification_and_the_item_type() {
    let document =
        rpc_runtime::serde_json::to_value(RpcCatalog::<ExampleHash, ExampleStorageKey>::catalog().document())
            .expect("a JSON document");
    let methods = document["methods"].as_array().expect("methods");
    let subscribe = methods.iter().find(|method| method["name"] == "state_subscribeStorage").expect("subscribeStorage");
    // jsonrpsee's `"subscribeStorage" => "override"`, which it namespaces.
    assert_eq!(subscribe["x-subscription"]["notification"], "state_override", "{subscribe}");
    assert_eq!(subscribe["x-subscription"]["unsubscribe"], "state_unsubscribeStorage", "{subscribe}");
    // `item = Vec<Hash>`, with `Hash = [u8; 32]`.
    let item = &subscribe["x-subscription"]["item"];
    assert_eq!((&item["type"], &item["items"]["minItems"]), (&"array".into(), &32.into()), "{item}");
}
