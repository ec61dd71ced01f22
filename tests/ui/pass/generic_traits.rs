// Generic traits: type parameters with inline bounds, defaults and a
// `where` clause (one naming `Self`), used in params, results, typed
// errors and subscription items; a type parameter named `S`; aliases of
// `Result`; `blocking` methods; a trait served only, one without a
// catalog, one through a re-exported runtime. Each instantiation is
// served, called and described.
use std::fmt::Debug;

use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::serde_json::{self, json, Value};
use rpc_runtime::{dispatch::Engine, rpc, Context, ErrorObject, Limits, Router, SubscriptionSink};

mod facade {
    pub mod rt {
        pub use rpc_runtime::*;
    }
}

/// A chain, as substrate's `ChainApi<Number, Hash, Header, SignedBlock>`.
#[rpc(namespace = "chain")]
pub trait Chain<Number, Hash: Clone + Debug, Header = Vec<u8>, S = ()>
where
    Number: Copy + Into<u64>,
    Self: Debug,
{
    fn header(&self, hash: Option<Hash>) -> Result<Option<Header>, ErrorObject>;
    async fn block_hash(&self, number: Option<Number>) -> Vec<Hash>;
    fn finalized(&self) -> Hash;
    #[rpc(blocking)]
    fn verify(&self, header: Header, cx: Context) -> bool;
    fn extra(&self, s: S) -> S;
    #[rpc(unsubscribe = "chain_unsubscribeHeads")]
    async fn subscribe_heads(&self, sink: SubscriptionSink<Vec<Header>>);
    #[rpc(notification)]
    fn forget(&self, hash: Hash);
}

/// Generic over its error, returned plain and through an alias.
#[rpc]
pub trait Fallible<T, E> {
    fn get(&self) -> Result<T, E>;
    async fn get_async(&self) -> Result<T, E>;
    fn aliased(&self) -> AliasedResult<T, E>;
    #[rpc(unsubscribe = "stop")]
    async fn watch(&self, sink: SubscriptionSink<T>) -> Result<(), E>;
}

pub type AliasedResult<T, E> = Result<T, E>;

/// Served only, so its param types need not be `Serialize`.
#[rpc(server_only)]
pub trait Served<Q> {
    fn search(&self, query: Q) -> usize;
}

/// Without a catalog, so its types need no `JsonSchema`.
#[rpc(catalog = false)]
pub trait Uncatalogued<T> {
    #[rpc(blocking, notification)]
    fn push(&self, item: T);
}

/// Through a re-export of the runtime.
#[rpc(crate = "crate::facade::rt")]
pub trait Facade<T> {
    fn echo(&self, value: T) -> T;
}

/// A type parameter no method names: it only tells instantiations apart.
#[rpc]
pub trait Tagged<Tag> {
    fn tag(&self) -> String;
}

/// Not generic, with a `where` clause.
#[rpc]
pub trait Cloned
where
    Self: Clone,
{
    fn twice(&self, n: u8) -> u8;
}

#[derive(Clone, Debug)]
struct Node;

impl Tagged<u8> for Node {
    fn tag(&self) -> String {
        "u8".into()
    }
}

impl Cloned for Node {
    fn twice(&self, n: u8) -> u8 {
        n * 2
    }
}

impl Chain<u32, [u8; 4], String, bool> for Node {
    fn header(&self, hash: Option<[u8; 4]>) -> Result<Option<String>, ErrorObject> {
        Ok(hash.map(|hash| format!("{hash:?}")))
    }
    async fn block_hash(&self, number: Option<u32>) -> Vec<[u8; 4]> {
        vec![[number.unwrap_or(0) as u8; 4]]
    }
    fn finalized(&self) -> [u8; 4] {
        [9; 4]
    }
    fn verify(&self, header: String, _: Context) -> bool {
        !header.is_empty()
    }
    fn extra(&self, s: bool) -> bool {
        !s
    }
    async fn subscribe_heads(&self, sink: SubscriptionSink<Vec<String>>) {
        let _ = sink.send(vec!["head".into()]).await;
    }
    fn forget(&self, _: [u8; 4]) {}
}

// A second instantiation on the same type, with the defaults.
impl Chain<u8, u64> for Node {
    fn header(&self, _: Option<u64>) -> Result<Option<Vec<u8>>, ErrorObject> {
        Ok(None)
    }
    async fn block_hash(&self, _: Option<u8>) -> Vec<u64> {
        Vec::new()
    }
    fn finalized(&self) -> u64 {
        7
    }
    fn verify(&self, _: Vec<u8>, _: Context) -> bool {
        true
    }
    fn extra(&self, _: ()) {}
    async fn subscribe_heads(&self, _: SubscriptionSink<Vec<Vec<u8>>>) {}
    fn forget(&self, _: u64) {}
}

#[derive(Debug, rpc_runtime::RpcError)]
pub enum Oops {
    #[rpc(code = -32001, message = "Oops")]
    Oops,
}

struct Value7;

impl Fallible<u8, Oops> for Value7 {
    fn get(&self) -> Result<u8, Oops> {
        Ok(7)
    }
    async fn get_async(&self) -> Result<u8, Oops> {
        Err(Oops::Oops)
    }
    fn aliased(&self) -> AliasedResult<u8, Oops> {
        Ok(7)
    }
    async fn watch(&self, _: SubscriptionSink<u8>) -> Result<(), Oops> {
        Ok(())
    }
}

impl Fallible<String, ErrorObject> for Value7 {
    fn get(&self) -> Result<String, ErrorObject> {
        Ok("seven".into())
    }
    async fn get_async(&self) -> Result<String, ErrorObject> {
        Ok("seven".into())
    }
    fn aliased(&self) -> AliasedResult<String, ErrorObject> {
        Err(ErrorObject::new(-32002, "no"))
    }
    async fn watch(&self, _: SubscriptionSink<String>) -> Result<(), ErrorObject> {
        Ok(())
    }
}

#[derive(Deserialize, rpc_runtime::schemars::JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Query {
    pub text: String,
}

impl Served<Query> for Value7 {
    fn search(&self, query: Query) -> usize {
        query.text.len()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Opaque;

impl Uncatalogued<Opaque> for Value7 {
    fn push(&self, _: Opaque) {}
}

impl Facade<i64> for Value7 {
    fn echo(&self, value: i64) -> i64 {
        value
    }
}

fn call(router: Router, request: Value) -> Value {
    let engine = Engine::new(router, Limits::default());
    let mut out = Vec::new();
    assert!(engine.process(request.to_string().as_bytes(), &Context::new(), &mut out).is_none());
    if out.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&out).unwrap()
    }
}

fn main() {
    let router = <Node as Chain<u32, [u8; 4], String, bool>>::into_rpc(Node);
    let answer = call(router, json!({"jsonrpc": "2.0", "method": "chain_finalized", "id": 1}));
    assert_eq!(answer["result"], json!([9, 9, 9, 9]));
    let answer = call(Cloned::into_rpc(Node), json!({"jsonrpc": "2.0", "method": "twice", "params": [2], "id": 1}));
    assert_eq!(answer["result"], 4);
    let answer = call(Tagged::<u8>::into_rpc(Node), json!({"jsonrpc": "2.0", "method": "tag", "id": 1}));
    assert_eq!(answer["result"], "u8");
    let _ = TaggedClient::<u8>::new;
    let router = <Node as Chain<u8, u64>>::into_rpc(Node);
    let answer = call(router, json!({"jsonrpc": "2.0", "method": "chain_finalized", "id": 1}));
    assert_eq!(answer["result"], 7);

    let catalog = ChainCatalog::<u32, [u8; 4], String, bool>::catalog();
    assert_eq!(catalog.methods().count(), 8);
    let _ = ChainCatalog::<u8, u64>::default();
    let _: fn(rpc_runtime::Peer) -> ChainClient<u32, [u8; 4], String, bool> = ChainClient::new;
    let _: fn(&ChainClient<u8, u64>) -> ChainBatch<u8, u64> = ChainClient::batch;

    let router = <Value7 as Fallible<u8, Oops>>::into_rpc(Value7);
    assert_eq!(call(router, json!({"jsonrpc": "2.0", "method": "get", "id": 1}))["result"], 7);
    let _ = FallibleCatalog::<String, ErrorObject>::catalog();
    let _ = FallibleClient::<u8, Oops>::new;
    let _ = <Value7 as Fallible<String, ErrorObject>>::into_rpc(Value7);

    let router = <Value7 as Served<Query>>::into_rpc(Value7);
    assert_eq!(router.method_names(), ["search"]);
    let _ = <Value7 as Uncatalogued<Opaque>>::into_rpc(Value7);
    let _ = UncataloguedClient::<Opaque>::new;
    let _ = <Value7 as Facade<i64>>::into_rpc(Value7);
    let _ = FacadeCatalog::<i64>::catalog();
}
