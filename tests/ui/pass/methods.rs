//! Every method shape: sync and async, plain and `Result` returns (with a
//! user error type and with `RpcResult`), optional params, an injected
//! `Context`, notifications, whole params, extra params and param
//! structures. `main` builds the router, so the generated code is
//! type-checked and its specs are what the attributes asked for.

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{dispatch::ParamStructure, rpc, wire::RpcResult, Context, ErrorObject};

#[derive(Debug)]
pub enum StoreError {
    Missing(String),
}

impl From<StoreError> for ErrorObject {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Missing(key) => ErrorObject::new(-32001, format!("no such key: {key}")),
        }
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

#[rpc]
pub trait Store {
    fn plain(&self, a: i64, b: i64) -> i64;
    async fn plain_async(&self, a: i64) -> i64;
    fn borrowed(&self) -> &str;
    async fn static_async(&self) -> &'static str;
    fn unit(&self);
    async fn unit_async(&self) -> ();
    fn fallible(&self, key: String) -> Result<String, StoreError>;
    async fn fallible_async(&self, key: String) -> Result<u64, StoreError>;
    fn alias(&self) -> RpcResult<bool>;
    async fn alias_async(&self) -> RpcResult<Vec<u8>>;
    fn optional(&self, name: String, greeting: Option<String>, times: Option<u8>) -> String;
    fn with_context(&self, cx: Context, value: u8) -> bool;
    async fn with_context_async(&self, value: u8, cx: Context) -> bool;
    #[rpc(notification)]
    fn changed(&self, key: String);
    #[rpc(notification)]
    async fn changed_async(&self) -> ();
    #[rpc(whole_params)]
    fn hover(&self, position: Position) -> Position;
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;
    #[rpc(whole_params)]
    fn sum_with_context(&self, cx: Context, numbers: Vec<i64>) -> i64;
    #[rpc(allow_extra_params)]
    fn lenient(&self, a: u8) -> u8;
    #[rpc(param_structure = "by-name")]
    fn by_name(&self, a: u8) -> u8;
    #[rpc(param_structure = "by-position")]
    fn by_position(&self, a: u8) -> u8;
    #[rpc(param_structure = "either")]
    fn either(&self, a: u8) -> u8;
    #[rpc(param_structure = "by_name", allow_extra_params)]
    fn by_name_lenient(&self, a: u8) -> u8;
    /// A provided method works too, sync and async.
    fn provided(&self) -> u8 {
        7
    }
    async fn provided_async(&self, x: u8) -> u8 {
        x + 1
    }
}

struct Impl;

impl Store for Impl {
    fn plain(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    async fn plain_async(&self, a: i64) -> i64 {
        a
    }
    fn borrowed(&self) -> &str {
        "borrowed from self"
    }
    async fn static_async(&self) -> &'static str {
        "static"
    }
    fn unit(&self) {}
    async fn unit_async(&self) {}
    fn fallible(&self, key: String) -> Result<String, StoreError> {
        Err(StoreError::Missing(key))
    }
    async fn fallible_async(&self, key: String) -> Result<u64, StoreError> {
        Err(StoreError::Missing(key))
    }
    fn alias(&self) -> RpcResult<bool> {
        Ok(true)
    }
    async fn alias_async(&self) -> RpcResult<Vec<u8>> {
        Ok(vec![1])
    }
    fn optional(&self, name: String, greeting: Option<String>, times: Option<u8>) -> String {
        format!("{} {name} x{}", greeting.unwrap_or_default(), times.unwrap_or(1))
    }
    fn with_context(&self, cx: Context, value: u8) -> bool {
        cx.peer_addr().is_none() && value > 0
    }
    async fn with_context_async(&self, value: u8, cx: Context) -> bool {
        cx.peer_addr().is_none() && value > 0
    }
    fn changed(&self, _key: String) {}
    async fn changed_async(&self) {}
    fn hover(&self, position: Position) -> Position {
        position
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn sum_with_context(&self, _cx: Context, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn lenient(&self, a: u8) -> u8 {
        a
    }
    fn by_name(&self, a: u8) -> u8 {
        a
    }
    fn by_position(&self, a: u8) -> u8 {
        a
    }
    fn either(&self, a: u8) -> u8 {
        a
    }
    fn by_name_lenient(&self, a: u8) -> u8 {
        a
    }
}

fn assert_send<T: Send>(_: T) {}

/// A borrowed result is decoded into its owned form on the client side.
#[allow(dead_code)]
async fn client_owns_borrowed_results(client: StoreClient) {
    let _: String = client.borrowed().await.unwrap();
    let _: String = client.static_async().await.unwrap();
}

fn main() {
    // The async methods' futures are `Send`, also through the trait.
    assert_send(Impl.plain_async(1));
    assert_send(Impl.provided_async(1));

    let router = Impl.into_rpc();
    assert_eq!(router.method_names().len(), 25);

    let optional = router.spec("optional").unwrap();
    let flags: Vec<(&str, bool)> = optional.params.iter().map(|p| (p.name, p.optional)).collect();
    assert_eq!(flags, [("name", false), ("greeting", true), ("times", true)]);
    assert_eq!(optional.params[1].ty, "Option<String>");

    // `Context` is injected, not a wire param.
    let names: Vec<&str> = router.spec("with_context").unwrap().params.iter().map(|p| p.name).collect();
    assert_eq!(names, ["value"]);
    assert_eq!(router.spec("with_context_async").unwrap().params.len(), 1);

    assert!(router.spec("changed").unwrap().notification);
    assert!(router.spec("changed_async").unwrap().notification);
    assert!(!router.spec("unit").unwrap().notification);
    assert!(router.spec("hover").unwrap().whole);
    assert!(router.spec("sum").unwrap().whole);
    assert!(router.spec("sum_with_context").unwrap().whole);
    assert_eq!(router.spec("sum_with_context").unwrap().params.len(), 1);
    assert!(router.spec("lenient").unwrap().allow_extra);
    assert!(!router.spec("plain").unwrap().allow_extra);
    assert_eq!(router.spec("by_name").unwrap().structure, ParamStructure::ByName);
    assert_eq!(router.spec("by_position").unwrap().structure, ParamStructure::ByPosition);
    assert_eq!(router.spec("either").unwrap().structure, ParamStructure::Either);
    assert_eq!(router.spec("plain").unwrap().structure, ParamStructure::Either);
    let lenient = router.spec("by_name_lenient").unwrap();
    assert!(lenient.structure == ParamStructure::ByName && lenient.allow_extra);
}
