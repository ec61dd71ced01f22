//! Generic `#[rpc]` traits: the shape of jsonrpsee's
//! `examples/proc_macro.rs` (`Rpc<Hash: Clone, StorageKey> where Hash:
//! Debug`, with a subscription of `Vec<Hash>`) served, called through its
//! typed client and batch and described by its catalog, in process and
//! over TCP; a trait generic over its result and error types, with typed
//! errors and the errors its catalog lists; two instantiations on one
//! type; and instantiations that only one side can use.

use std::time::Duration;

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::{rpc, ClientError, ErrorObject, Peer, RpcError, Server, SubscriptionSink};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A block hash, as jsonrpsee's example has it.
pub type ExampleHash = [u8; 32];
/// A storage key, as jsonrpsee's example has it.
pub type ExampleStorageKey = Vec<u8>;

/// The state of a chain, generic over its hash and storage key types.
#[rpc(namespace = "state")]
pub trait Rpc<Hash: Clone, StorageKey>
where
    Hash: std::fmt::Debug,
{
    /// The keys that start with `storage_key`, at block `hash` (the best
    /// block when absent).
    #[rpc(name = "getKeys")]
    async fn storage_keys(&self, storage_key: StorageKey, hash: Option<Hash>) -> Result<Vec<StorageKey>, ErrorObject>;

    /// The values stored under `keys`, at block `at`.
    #[rpc(name = "getStorage")]
    fn storage(&self, keys: Vec<StorageKey>, at: Option<Hash>) -> Vec<Vec<u8>>;

    /// The hashes of the blocks that change `keys`, as they come.
    #[rpc(name = "subscribeStorage", unsubscribe = "unsubscribeStorage")]
    async fn subscribe_storage(&self, keys: Option<Vec<StorageKey>>, sink: SubscriptionSink<Vec<Hash>>);
}

/// A chain of three blocks.
#[derive(Clone, Debug)]
pub struct Chain;

impl Rpc<ExampleHash, ExampleStorageKey> for Chain {
    async fn storage_keys(
        &self,
        storage_key: ExampleStorageKey,
        hash: Option<ExampleHash>,
    ) -> Result<Vec<ExampleStorageKey>, ErrorObject> {
        match hash {
            Some(hash) if hash[0] > 2 => Err(ErrorObject::new(-32010, "unknown block").with_data(&hash[0])),
            _ => Ok(vec![[storage_key.clone(), vec![1]].concat(), [storage_key, vec![2]].concat()]),
        }
    }

    fn storage(&self, keys: Vec<ExampleStorageKey>, at: Option<ExampleHash>) -> Vec<Vec<u8>> {
        let block = at.map_or(2, |hash| hash[0]);
        keys.into_iter().map(|key| [key, vec![block]].concat()).collect()
    }

    async fn subscribe_storage(&self, keys: Option<Vec<ExampleStorageKey>>, sink: SubscriptionSink<Vec<ExampleHash>>) {
        let count = keys.map_or(0, |keys| keys.len()) as u8;
        for block in 0..count {
            if sink.send(vec![[block; 32], [block + 1; 32]]).await.is_err() {
                return;
            }
        }
    }
}

type ChainClient = RpcClient<ExampleHash, ExampleStorageKey>;

const WAIT: Duration = Duration::from_secs(30);

/// Everything a client of [`Rpc`] can do, against [`Chain`].
async fn exercise(client: &ChainClient) {
    assert_eq!(client.storage_keys(vec![7], None).await.unwrap(), vec![vec![7, 1], vec![7, 2]]);
    match client.storage_keys(vec![7], Some([9; 32])).await {
        Err(ClientError::Server(error)) => assert_eq!((error.code(), error.message()), (-32010, "unknown block")),
        other => panic!("expected the server's error, got {other:?}"),
    }
    assert_eq!(client.storage(vec![vec![1], vec![2]], Some([1; 32])).await.unwrap(), vec![vec![1, 1], vec![2, 1]]);
    assert_eq!(client.storage(vec![vec![5]], None).await.unwrap(), vec![vec![5, 2]]);

    let mut batch = client.batch();
    let keys = batch.storage_keys(vec![3], Some([0; 32]));
    let values = batch.storage(vec![vec![4]], None);
    batch.send().await.unwrap();
    assert_eq!(keys.await.unwrap(), vec![vec![3, 1], vec![3, 2]]);
    assert_eq!(values.await.unwrap(), vec![vec![4, 2]]);

    let mut changes = client.subscribe_storage(Some(vec![vec![1], vec![2]])).await.unwrap();
    let mut items = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, changes.next()).await.expect("an item in time") {
        items.push(item.unwrap());
    }
    assert_eq!(items, vec![vec![[0; 32], [1; 32]], vec![[1; 32], [2; 32]]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generic_trait_serves_and_calls_in_process() {
    let peer = Peer::builder().connect(Server::new(Chain.into_rpc())).await.unwrap();
    exercise(&ChainClient::new(peer)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generic_trait_serves_and_calls_over_tcp() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Server::new(Chain.into_rpc()).serve(listener));
    let peer = Peer::builder().connect(rpc_runtime::transport::tcp::Tcp::new(addr)).await.unwrap();
    let client = RpcClient::<ExampleHash, ExampleStorageKey>::from(peer);
    exercise(&client).await;
    // What a client that is not ours sends and reads: the wire names,
    // params by position, the hash as an array of numbers.
    let keys: Value = client.peer().call("state_getKeys", json!([[1], vec![0u8; 32]])).await.unwrap();
    assert_eq!(keys, json!([[1, 1], [1, 2]]));
}

/// The method of `document` called `name`.
fn method<'a>(document: &'a Value, name: &str) -> &'a Value {
    let methods = document["methods"].as_array().unwrap();
    methods.iter().find(|method| method["name"] == name).unwrap_or_else(|| panic!("no method {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_describes_the_instantiation() {
    let document = serde_json::to_value(RpcCatalog::<ExampleHash, ExampleStorageKey>::catalog().document()).unwrap();
    let bytes = json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}});
    let get_keys = method(&document, "state_getKeys");
    assert_eq!(get_keys["params"][0]["name"], "storage_key");
    assert_eq!(get_keys["params"][0]["schema"], bytes);
    // `Option<[u8; 32]>`: 32 bytes or null.
    let hash = &get_keys["params"][1]["schema"];
    assert_eq!(hash["maxItems"], 32, "{hash}");
    assert_eq!(hash["minItems"], 32, "{hash}");
    assert_eq!(get_keys["result"]["schema"], json!({"type": "array", "items": bytes}));
    let get_storage = method(&document, "state_getStorage");
    assert_eq!(get_storage["params"][0]["schema"], json!({"type": "array", "items": bytes}));
    assert_eq!(get_storage["result"]["schema"], json!({"type": "array", "items": bytes}));
    // The items of the subscription are `Vec<[u8; 32]>`.
    let subscribe = method(&document, "state_subscribeStorage");
    let item = &subscribe["x-subscription"]["item"];
    assert_eq!(item["type"], "array", "{subscribe}");
    assert_eq!(item["items"]["maxItems"], 32, "{subscribe}");
    assert_eq!(subscribe["x-subscription"]["unsubscribe"], "state_unsubscribeStorage", "{subscribe}");

    // The router serves the same document as `rpc.discover`.
    let peer = Peer::builder().connect(Server::new(Chain.into_rpc())).await.unwrap();
    let discovered: Value = peer.call("rpc.discover", json!([])).await.unwrap();
    assert_eq!(discovered, document);
}

/// A book, what a [`Library`] stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Book {
    /// Its title.
    pub title: String,
}

/// What a [`Library`] fails with.
#[derive(Debug, PartialEq, RpcError)]
pub enum LibraryError {
    /// No item under that key.
    #[rpc(code = -32004, message = "Not found")]
    NotFound { key: String },
}

/// A store generic over what it stores and how it fails.
#[rpc(namespace = "store")]
pub trait Store<Item, Error> {
    /// The item under `key`.
    fn get(&self, key: String) -> Result<Item, Error>;

    /// Stores `item` under `key`; the item it replaced.
    async fn put(&self, key: String, item: Item) -> Result<Option<Item>, Error>;

    /// Every key, on the blocking pool.
    #[rpc(blocking)]
    fn keys(&self) -> Vec<String>;
}

/// Books by key, and notes by key, in one type.
#[derive(Clone, Debug, Default)]
pub struct Library {
    books: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, Book>>>,
    notes: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, String>>>,
}

impl Store<Book, LibraryError> for Library {
    fn get(&self, key: String) -> Result<Book, LibraryError> {
        self.books.lock().unwrap().get(&key).cloned().ok_or(LibraryError::NotFound { key })
    }

    async fn put(&self, key: String, item: Book) -> Result<Option<Book>, LibraryError> {
        Ok(self.books.lock().unwrap().insert(key, item))
    }

    fn keys(&self) -> Vec<String> {
        self.books.lock().unwrap().keys().cloned().collect()
    }
}

impl Store<String, ErrorObject> for Library {
    fn get(&self, key: String) -> Result<String, ErrorObject> {
        self.notes.lock().unwrap().get(&key).cloned().ok_or_else(|| ErrorObject::new(-32044, "no such note"))
    }

    async fn put(&self, key: String, item: String) -> Result<Option<String>, ErrorObject> {
        Ok(self.notes.lock().unwrap().insert(key, item))
    }

    fn keys(&self) -> Vec<String> {
        self.notes.lock().unwrap().keys().cloned().collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_results_and_errors_of_each_instantiation() {
    let library = Library::default();
    // One type, two instantiations: each served on a connection of its own.
    let books = <Library as Store<Book, LibraryError>>::into_rpc(library.clone());
    let notes = <Library as Store<String, ErrorObject>>::into_rpc(library.clone());
    let books = StoreClient::<Book, LibraryError>::new(Peer::builder().connect(Server::new(books)).await.unwrap());
    let notes = StoreClient::<String, ErrorObject>::new(Peer::builder().connect(Server::new(notes)).await.unwrap());

    let dune = Book { title: "Dune".into() };
    assert_eq!(books.put("d".into(), dune.clone()).await.unwrap(), None);
    assert_eq!(books.get("d".into()).await.unwrap(), dune);
    match books.get("x".into()).await {
        Err(ClientError::App(LibraryError::NotFound { key })) => assert_eq!(key, "x"),
        other => panic!("expected the typed error, got {other:?}"),
    }
    assert_eq!(notes.put("n".into(), "remember".into()).await.unwrap(), None);
    assert_eq!(notes.put("n".into(), "forget".into()).await.unwrap().as_deref(), Some("remember"));
    match notes.get("x".into()).await {
        Err(ClientError::Server(error)) => assert_eq!((error.code(), error.message()), (-32044, "no such note")),
        other => panic!("expected the server's error object, got {other:?}"),
    }
    // Each instantiation reaches its own state of the one type.
    assert_eq!(books.keys().await.unwrap(), ["d"]);
    assert_eq!(notes.keys().await.unwrap(), ["n"]);
    // A book is not a note: the server of notes cannot decode it.
    let wrong = StoreClient::<Book, LibraryError>::new(notes.peer().clone());
    let err = wrong.put("b".into(), dune).await.unwrap_err();
    assert_eq!(err.server_error().map(ErrorObject::code), Some(rpc_runtime::wire::INVALID_PARAMS), "{err}");
}

#[test]
fn each_instantiation_has_its_own_catalog() {
    let books = serde_json::to_value(StoreCatalog::<Book, LibraryError>::catalog().document()).unwrap();
    let notes = serde_json::to_value(StoreCatalog::<String, ErrorObject>::catalog().document()).unwrap();
    let get = method(&books, "store_get");
    assert_eq!(get["result"]["schema"], json!({"$ref": "#/components/schemas/Book"}));
    assert_eq!(books["components"]["schemas"]["Book"]["properties"]["title"]["type"], "string");
    // The errors the error type declares.
    assert_eq!(get["errors"], json!([{"code": -32004, "message": "Not found"}]), "{get}");
    let put = method(&books, "store_put");
    assert_eq!(put["params"][1]["schema"], json!({"$ref": "#/components/schemas/Book"}));

    let get = method(&notes, "store_get");
    assert_eq!(get["result"]["schema"], json!({"type": "string"}));
    assert!(get.get("errors").is_none(), "an `ErrorObject` declares none: {get}");
    assert!(notes["components"]["schemas"].get("Book").is_none(), "{notes}");
}

/// A sink of items, generic over them.
#[rpc]
pub trait Sink<Item> {
    /// Takes one item; how many it has taken.
    fn push(&self, item: Item) -> usize;
}

/// What only a client sends: `Serialize` and nothing else.
#[derive(Debug, Serialize)]
pub struct Outgoing {
    /// Its text.
    pub text: &'static str,
}

/// What only a server reads: `Deserialize` (and `JsonSchema`, for its
/// catalog), not `Serialize`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Incoming {
    /// Its text.
    pub text: String,
}

/// Counts what it is pushed.
#[derive(Debug, Default)]
pub struct Counter {
    count: std::sync::atomic::AtomicUsize,
}

impl Sink<Incoming> for Counter {
    fn push(&self, item: Incoming) -> usize {
        assert_eq!(item.text, "hello");
        self.count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_side_per_instantiation_where_the_types_allow_only_one() {
    // `Incoming` cannot be sent: `Sink<Incoming>` is only served...
    let peer = Peer::builder().connect(Server::new(Counter::default().into_rpc())).await.unwrap();
    // ...and `Outgoing` cannot be received: `Sink<Outgoing>` is only called.
    let client = SinkClient::<Outgoing>::new(peer);
    assert_eq!(client.push(Outgoing { text: "hello" }).await.unwrap(), 1);
    assert_eq!(client.push(Outgoing { text: "hello" }).await.unwrap(), 2);
}
