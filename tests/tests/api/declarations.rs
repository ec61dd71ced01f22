//! What one declaration gives, end to end: a typed error declared with
//! `#[derive(RpcError)]` (the server's answer, the client's decoding, the
//! catalog's `errors`), method aliases (served, and listed as deprecated),
//! param and result types without `JsonSchema` (an "any value" schema with
//! a note), results that borrow inside a container (decoded owned), and the
//! error type as a `std::error::Error` (`?` into a boxed error).

use rpc_runtime::serde_json::{self, json, Value};
use rpc_runtime::{dispatch::Engine, rpc, ClientError, Context, ErrorObject, Limits, Peer, RpcError, Server};

/// The code of `StoreError::NotFound`.
pub const NOT_FOUND: i64 = -32004;

mod codes {
    /// A code from another module.
    pub const READ_ONLY: i64 = -32005;
}

/// Errors of the store, declared once.
#[derive(Debug, PartialEq, RpcError)]
pub enum StoreError {
    #[rpc(code = NOT_FOUND, message = "Key not found")]
    NotFound { key: String, nearest: Option<String> },
    #[rpc(code = codes::READ_ONLY, message = "Store is read-only")]
    ReadOnly,
    #[rpc(code = -32006, message = "Value too large")]
    TooLarge(u64),
    #[rpc(code = -32007, message = "Conflict")]
    Conflict(String, u32),
}

/// Not `JsonSchema`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Foreign {
    pub blob: String,
}

/// A key-value store.
#[rpc(rename_all = "camelCase")]
pub trait Store {
    /// Reads a key.
    #[rpc(alias = "fetch", alias = "read")]
    fn get_value(&self, key: String) -> Result<i64, StoreError>;

    /// Writes a key; the error type is given through an alias.
    async fn put_value(&self, key: String, value: i64) -> StoreResult<()>;

    /// Also declares an error by hand, next to those of the type.
    #[rpc(error(code = NOT_FOUND, message = "Key not found"), error(code = 9, message = "Other"))]
    fn delete(&self, key: String) -> Result<bool, StoreError>;

    /// A foreign type: an unconstrained schema in the catalog.
    fn load(&self, foreign: Foreign) -> usize;

    /// Borrows inside a container; the client decodes `(String, i64)`.
    fn pair(&self) -> (&'static str, i64);

    /// Returns an error object as a value.
    fn last_error(&self) -> ErrorObject;
}

/// An alias of `Result`, as crates often have.
pub type StoreResult<T> = Result<T, StoreError>;

struct Kv;

impl Store for Kv {
    fn get_value(&self, key: String) -> Result<i64, StoreError> {
        match key.as_str() {
            "answer" => Ok(42),
            "big" => Err(StoreError::TooLarge(1 << 40)),
            "busy" => Err(StoreError::Conflict("writer".to_owned(), 3)),
            _ => Err(StoreError::NotFound { key, nearest: Some("answer".to_owned()) }),
        }
    }
    async fn put_value(&self, _key: String, _value: i64) -> StoreResult<()> {
        Err(StoreError::ReadOnly)
    }
    fn delete(&self, key: String) -> Result<bool, StoreError> {
        Err(StoreError::NotFound { key, nearest: None })
    }
    fn load(&self, foreign: Foreign) -> usize {
        foreign.blob.len()
    }
    fn pair(&self) -> (&'static str, i64) {
        ("hello", 5)
    }
    fn last_error(&self) -> ErrorObject {
        ErrorObject::new(1, "one")
    }
}

async fn call(engine: &Engine, request: Value) -> Value {
    let out = engine.handle(request.to_string().as_bytes(), &Context::default()).await;
    serde_json::from_slice(&out).expect("a JSON response")
}

async fn client() -> StoreClient {
    StoreClient::new(Peer::builder().connect(Server::new(Kv.into_rpc())).await.unwrap())
}

#[tokio::test]
async fn the_server_answers_with_each_variant_code_message_and_data() {
    let engine = Engine::new(Kv.into_rpc(), Limits::default());
    let get = |key: &str| json!({"jsonrpc": "2.0", "method": "getValue", "params": [key], "id": 1});
    assert_eq!(
        call(&engine, get("nope")).await["error"],
        json!({"code": -32004, "message": "Key not found", "data": {"key": "nope", "nearest": "answer"}})
    );
    assert_eq!(
        call(&engine, get("big")).await["error"],
        json!({"code": -32006, "message": "Value too large", "data": 1u64 << 40})
    );
    assert_eq!(
        call(&engine, get("busy")).await["error"],
        json!({"code": -32007, "message": "Conflict", "data": ["writer", 3]})
    );
    let put = json!({"jsonrpc": "2.0", "method": "putValue", "params": ["k", 1], "id": 2});
    assert_eq!(call(&engine, put).await["error"], json!({"code": -32005, "message": "Store is read-only"}));
}

#[tokio::test]
async fn the_client_decodes_each_variant() {
    let store = client().await;
    assert_eq!(store.get_value("answer".into()).await.unwrap(), 42);
    let not_found = store.get_value("nope".into()).await.unwrap_err();
    assert_eq!(
        not_found.app_error(),
        Some(&StoreError::NotFound { key: "nope".into(), nearest: Some("answer".into()) })
    );
    let missing_optional = store.delete("gone".into()).await.unwrap_err();
    assert_eq!(missing_optional.app_error(), Some(&StoreError::NotFound { key: "gone".into(), nearest: None }));
    assert_eq!(store.get_value("big".into()).await.unwrap_err().app_error(), Some(&StoreError::TooLarge(1 << 40)));
    assert_eq!(
        store.get_value("busy".into()).await.unwrap_err().app_error(),
        Some(&StoreError::Conflict("writer".into(), 3))
    );
    assert_eq!(store.put_value("k".into(), 1).await.unwrap_err().app_error(), Some(&StoreError::ReadOnly));
    // A protocol error is not one of ours.
    let peer = store.peer().clone();
    let err = peer.call::<Value, _>("getValue", [1, 2]).await.unwrap_err();
    assert!(matches!(err, ClientError::Server(ref e) if e.code() == -32602), "{err:?}");
}

#[test]
fn error_objects_convert_both_ways() {
    use rpc_runtime::peer::FromErrorObject;
    for error in [
        StoreError::NotFound { key: "k".into(), nearest: None },
        StoreError::ReadOnly,
        StoreError::TooLarge(7),
        StoreError::Conflict("w".into(), 1),
    ] {
        let object = ErrorObject::from(match &error {
            StoreError::NotFound { key, nearest } => {
                StoreError::NotFound { key: key.clone(), nearest: nearest.clone() }
            }
            StoreError::ReadOnly => StoreError::ReadOnly,
            StoreError::TooLarge(n) => StoreError::TooLarge(*n),
            StoreError::Conflict(a, b) => StoreError::Conflict(a.clone(), *b),
        });
        assert_eq!(StoreError::from_error_object(&object), Some(error));
    }
    assert_eq!(StoreError::from_error_object(&ErrorObject::new(-32004, "Key not found")), None, "data is required");
    assert_eq!(StoreError::from_error_object(&ErrorObject::new(1, "x")), None);
    assert_eq!(<StoreError as RpcError>::ERRORS.len(), 4);
}

fn document() -> Value {
    serde_json::to_value(StoreCatalog::catalog().document()).unwrap()
}

fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn the_catalog_lists_the_errors_of_the_error_type() {
    let doc = document();
    let all = json!([
        {"code": -32004, "message": "Key not found"},
        {"code": -32005, "message": "Store is read-only"},
        {"code": -32006, "message": "Value too large"},
        {"code": -32007, "message": "Conflict"},
    ]);
    assert_eq!(method(&doc, "getValue")["errors"], all);
    assert_eq!(method(&doc, "putValue")["errors"], all, "through a Result alias");
    // Declared by hand first, then the type's, each once.
    let delete = method(&doc, "delete")["errors"].as_array().unwrap().clone();
    assert_eq!(
        delete[..2],
        [json!({"code": -32004, "message": "Key not found"}), json!({"code": 9, "message": "Other"})]
    );
    assert_eq!(delete.len(), 5);
    assert!(method(&doc, "pair").get("errors").is_none());
}

#[tokio::test]
async fn a_swapped_pair_of_letters_in_a_param_name_gets_a_suggestion() {
    let engine = Engine::new(Kv.into_rpc(), Limits::default());
    let put = |params: Value| json!({"jsonrpc": "2.0", "method": "putValue", "params": params, "id": 1});
    for (params, typo, meant) in
        [(json!({"kye": "k", "value": 1}), "kye", "key"), (json!({"key": "k", "valeu": 1}), "valeu", "value")]
    {
        let error = &call(&engine, put(params)).await["error"];
        assert_eq!(error["code"], -32602);
        assert_eq!(
            error["message"],
            format!(
                "unknown parameter `{typo}` for method `putValue` (did you mean `{meant}`?); expected one of: key, value"
            )
        );
    }
}

#[tokio::test]
async fn aliases_are_served_and_listed_as_deprecated() {
    let engine = Engine::new(Kv.into_rpc(), Limits::default());
    for name in ["getValue", "fetch", "read"] {
        let response =
            call(&engine, json!({"jsonrpc": "2.0", "method": name, "params": {"key": "answer"}, "id": 1})).await;
        assert_eq!(response["result"], 42, "{name}");
    }
    let doc = document();
    let names: Vec<&str> = doc["methods"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names[..3], ["getValue", "fetch", "read"]);
    let fetch = method(&doc, "fetch");
    assert_eq!(fetch["deprecated"], true);
    assert_eq!(fetch["x-alias-of"], "getValue");
    assert_eq!(fetch["summary"], "Deprecated alias of `getValue`: call `getValue` instead.");
    assert_eq!(fetch["params"], method(&doc, "getValue")["params"]);
    assert_eq!(fetch["errors"], method(&doc, "getValue")["errors"]);
    assert!(method(&doc, "getValue").get("deprecated").is_none());
}

#[test]
fn a_type_without_json_schema_is_any_value_with_a_note() {
    let doc = document();
    let schema = &method(&doc, "load")["params"][0]["schema"];
    assert_eq!(schema["x-no-schema"], true);
    let note = schema["description"].as_str().unwrap();
    assert!(note.contains("Foreign") && note.contains("JsonSchema"), "{note}");
    // ErrorObject has a schema of its own.
    let error = &method(&doc, "lastError")["result"]["schema"];
    assert_eq!(error["$ref"], "#/components/schemas/ErrorObject");
    assert_eq!(doc["components"]["schemas"]["ErrorObject"]["required"], json!(["code", "message"]));
}

#[tokio::test]
async fn a_result_borrowing_inside_a_container_decodes_owned() {
    let (text, number): (String, i64) = client().await.pair().await.unwrap();
    assert_eq!((text.as_str(), number), ("hello", 5));
}

#[test]
fn each_variant_displays_its_message_and_is_an_error() {
    assert_eq!(StoreError::NotFound { key: "k".into(), nearest: None }.to_string(), "Key not found");
    assert_eq!(StoreError::ReadOnly.to_string(), "Store is read-only");
    assert_eq!(StoreError::TooLarge(7).to_string(), "Value too large");
    assert_eq!(StoreError::Conflict("w".into(), 1).to_string(), "Conflict");
    let error: &dyn std::error::Error = &StoreError::ReadOnly;
    assert!(error.source().is_none(), "a variant's fields are data, not a wrapped error");
}

/// An error enum that writes its own `Display`.
#[derive(Debug, RpcError)]
#[rpc(display = false)]
pub enum QuotaError {
    #[rpc(code = -32010, message = "Quota exceeded")]
    Exceeded { limit: u64 },
}

impl std::fmt::Display for QuotaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuotaError::Exceeded { limit } => write!(f, "quota of {limit} calls exceeded"),
        }
    }
}

#[test]
fn display_false_keeps_the_users_display_and_still_derives_error() {
    let error: Box<dyn std::error::Error + Send + Sync> = Box::new(QuotaError::Exceeded { limit: 3 });
    assert_eq!(error.to_string(), "quota of 3 calls exceeded");
    // The wire message is still the declared one.
    assert_eq!(ErrorObject::from(QuotaError::Exceeded { limit: 3 }).message(), "Quota exceeded");
}

/// What a caller writes: `?` on a typed call, in a function that returns a
/// boxed error (as `anyhow::Result` would).
async fn read(store: &StoreClient, key: &str) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
    let value = store.get_value(key.to_owned()).await?;
    Ok(value)
}

#[tokio::test]
async fn a_client_error_moves_into_a_boxed_error_with_the_question_mark() {
    let store = client().await;
    assert_eq!(read(&store, "answer").await.unwrap(), 42);
    let err = read(&store, "nope").await.unwrap_err();
    assert_eq!(err.to_string(), "the method failed: Key not found");
    let err = err.downcast::<ClientError<StoreError>>().expect("the typed client error");
    assert!(matches!(err.app_error(), Some(StoreError::NotFound { .. })), "{err:?}");
}
