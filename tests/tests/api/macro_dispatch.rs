//! What `#[rpc]` promises on the wire, checked end to end through the
//! engine: wire names (rename_all, namespace, overrides, param renames),
//! decoding by position and by name, param-structure restrictions, extra
//! params, whole params, optional params, `Context` injection, user error
//! types and notifications. Every assertion is on the exact response bytes.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{dispatch::Engine, rpc, Context, ErrorObject, Limits, Router};

#[rpc(rename_all = "camelCase")]
pub trait Naming {
    fn get_block_by_hash(&self, block_hash: String, full_tx: Option<bool>) -> String;

    #[rpc(name = "exact_name")]
    fn overridden(&self, #[rpc(name = "The-Value")] value: u8) -> u8;
}

#[rpc(namespace = "text", namespace_separator = "/")]
pub trait Namespaced {
    fn did_open(&self, uri: String) -> String;

    #[rpc(name = "hover")]
    fn on_hover(&self) -> String;
}

#[rpc(namespace = "eth")]
pub trait DefaultSeparator {
    fn block_number(&self) -> u64;
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

#[derive(Debug)]
pub struct NotFound(String);

impl From<NotFound> for ErrorObject {
    fn from(err: NotFound) -> Self {
        ErrorObject::new(-32001, format!("not found: {}", err.0)).with_data(&err.0)
    }
}

#[rpc]
pub trait Decoding {
    fn greet(&self, name: String, greeting: Option<String>, punctuation: Option<String>) -> String;

    fn strict(&self, a: i64) -> i64;

    #[rpc(allow_extra_params)]
    fn lenient(&self, a: i64) -> i64;

    #[rpc(param_structure = "by-name")]
    fn named(&self, a: i64, b: i64) -> i64;

    #[rpc(param_structure = "by-position")]
    fn positional(&self, a: i64, b: i64) -> i64;

    #[rpc(whole_params)]
    fn hover(&self, position: Position) -> Position;

    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;

    #[rpc(whole_params)]
    fn sum_with_context(&self, cx: Context, numbers: Vec<i64>) -> i64;

    fn with_context(&self, cx: Context, value: i64) -> String;

    async fn add_async(&self, a: i64, b: i64) -> i64;

    fn find(&self, key: String) -> Result<u8, NotFound>;

    async fn find_async(&self, key: String) -> Result<u8, NotFound>;

    #[rpc(notification)]
    fn record(&self, value: i64);
}

#[derive(Default)]
struct Service {
    recorded: Arc<AtomicI64>,
}

impl Naming for Service {
    fn get_block_by_hash(&self, block_hash: String, full_tx: Option<bool>) -> String {
        format!("{block_hash}:{full_tx:?}")
    }
    fn overridden(&self, value: u8) -> u8 {
        value
    }
}

impl Namespaced for Service {
    fn did_open(&self, uri: String) -> String {
        uri
    }
    fn on_hover(&self) -> String {
        "hovered".to_owned()
    }
}

impl DefaultSeparator for Service {
    fn block_number(&self) -> u64 {
        42
    }
}

impl Decoding for Service {
    fn greet(&self, name: String, greeting: Option<String>, punctuation: Option<String>) -> String {
        format!("{}, {name}{}", greeting.as_deref().unwrap_or("Hello"), punctuation.as_deref().unwrap_or("!"))
    }
    fn strict(&self, a: i64) -> i64 {
        a
    }
    fn lenient(&self, a: i64) -> i64 {
        a
    }
    fn named(&self, a: i64, b: i64) -> i64 {
        a - b
    }
    fn positional(&self, a: i64, b: i64) -> i64 {
        a - b
    }
    fn hover(&self, position: Position) -> Position {
        Position { line: position.line + 1, character: position.character + 1 }
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn sum_with_context(&self, cx: Context, numbers: Vec<i64>) -> i64 {
        assert!(cx.peer_addr().is_none());
        numbers.iter().sum()
    }
    fn with_context(&self, cx: Context, value: i64) -> String {
        format!("{value} from {:?}", cx.peer_addr())
    }
    async fn add_async(&self, a: i64, b: i64) -> i64 {
        tokio::task::yield_now().await;
        a + b
    }
    fn find(&self, key: String) -> Result<u8, NotFound> {
        if key == "one" {
            Ok(1)
        } else {
            Err(NotFound(key))
        }
    }
    async fn find_async(&self, key: String) -> Result<u8, NotFound> {
        self.find(key)
    }
    fn record(&self, value: i64) {
        self.recorded.store(value, Ordering::SeqCst);
    }
}

fn new_engine(router: Router) -> Engine {
    Engine::new(router, Limits::default())
}

async fn call(engine: &Engine, request: &str) -> String {
    let response = engine.handle(request.as_bytes(), &Context::default()).await;
    String::from_utf8(response).expect("responses are UTF-8")
}

/// A request with id 1 for `method` with `params` (raw JSON).
fn request(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":1}}"#)
}

fn result(json: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","result":{json},"id":1}}"#)
}

fn invalid_params(message: &str) -> String {
    let message = rpc_runtime::serde_json::to_string(message).unwrap();
    format!(r#"{{"jsonrpc":"2.0","error":{{"code":-32602,"message":{message}}},"id":1}}"#)
}

const METHOD_NOT_FOUND: &str = r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}"#;

fn decoding() -> Engine {
    new_engine(Decoding::into_rpc(Service::default()))
}

#[tokio::test]
async fn rename_all_applies_to_method_and_param_names() {
    let engine = new_engine(Naming::into_rpc(Service::default()));
    assert_eq!(engine.router().method_names(), ["exact_name", "getBlockByHash"]);
    assert_eq!(
        call(&engine, &request("getBlockByHash", r#"{"blockHash":"0xab","fullTx":true}"#)).await,
        result(r#""0xab:Some(true)""#)
    );
    assert_eq!(call(&engine, &request("getBlockByHash", r#"["0xab"]"#)).await, result(r#""0xab:None""#));
    // The Rust names are not wire names.
    assert_eq!(call(&engine, &request("get_block_by_hash", r#"["0xab"]"#)).await, METHOD_NOT_FOUND);
    assert_eq!(
        call(&engine, &request("getBlockByHash", r#"{"block_hash":"0xab"}"#)).await,
        invalid_params(
            "unknown parameter `block_hash` for method `getBlockByHash` (did you mean `blockHash`?); expected one of: blockHash, fullTx"
        )
    );
}

#[tokio::test]
async fn named_params_are_case_sensitive() {
    let engine = new_engine(Naming::into_rpc(Service::default()));
    assert_eq!(
        call(&engine, &request("getBlockByHash", r#"{"blockhash":"0xab"}"#)).await,
        invalid_params("unknown parameter `blockhash` for method `getBlockByHash` (did you mean `blockHash`?); expected one of: blockHash, fullTx")
    );
    assert_eq!(call(&engine, &request("GetBlockByHash", r#"["0xab"]"#)).await, METHOD_NOT_FOUND);
}

#[tokio::test]
async fn name_overrides_and_param_renames_are_used_verbatim() {
    let engine = new_engine(Naming::into_rpc(Service::default()));
    assert_eq!(call(&engine, &request("exact_name", r#"{"The-Value":7}"#)).await, result("7"));
    assert_eq!(call(&engine, &request("exact_name", "[7]")).await, result("7"));
    assert_eq!(
        call(&engine, &request("exact_name", r#"{"value":7}"#)).await,
        invalid_params("unknown parameter `value` for method `exact_name`; expected one of: The-Value")
    );
    assert_eq!(call(&engine, &request("overridden", "[7]")).await, METHOD_NOT_FOUND);
    assert_eq!(call(&engine, &request("exactName", "[7]")).await, METHOD_NOT_FOUND);
}

#[tokio::test]
async fn namespace_prefixes_every_method_including_overrides() {
    let engine = new_engine(Namespaced::into_rpc(Service::default()));
    assert_eq!(engine.router().method_names(), ["text/did_open", "text/hover"]);
    assert_eq!(call(&engine, &request("text/did_open", r#"{"uri":"file:///a"}"#)).await, result(r#""file:///a""#));
    assert_eq!(call(&engine, &request("text/hover", "[]")).await, result(r#""hovered""#));
    assert_eq!(call(&engine, &request("did_open", r#"["x"]"#)).await, METHOD_NOT_FOUND);
    assert_eq!(call(&engine, &request("hover", "[]")).await, METHOD_NOT_FOUND);

    let engine = new_engine(DefaultSeparator::into_rpc(Service::default()));
    assert_eq!(call(&engine, r#"{"jsonrpc":"2.0","method":"eth_block_number","id":1}"#).await, result("42"));
}

#[tokio::test]
async fn trailing_options_may_be_omitted_by_position_and_by_name() {
    let engine = decoding();
    assert_eq!(call(&engine, &request("greet", r#"["Ann"]"#)).await, result(r#""Hello, Ann!""#));
    assert_eq!(call(&engine, &request("greet", r#"["Ann","Hi"]"#)).await, result(r#""Hi, Ann!""#));
    assert_eq!(call(&engine, &request("greet", r#"["Ann",null,"?"]"#)).await, result(r#""Hello, Ann?""#));
    assert_eq!(call(&engine, &request("greet", r#"{"name":"Ann"}"#)).await, result(r#""Hello, Ann!""#));
    // By name, any optional param may be left out, not only trailing ones.
    assert_eq!(
        call(&engine, &request("greet", r#"{"punctuation":"?","name":"Ann"}"#)).await,
        result(r#""Hello, Ann?""#)
    );
    assert_eq!(
        call(&engine, &request("greet", "[]")).await,
        invalid_params("missing required parameter `name` (String) of method `greet`")
    );
    assert_eq!(
        call(&engine, &request("greet", r#"{"greeting":"Hi"}"#)).await,
        invalid_params("missing required parameter `name` (String) of method `greet`")
    );
    assert_eq!(
        call(&engine, r#"{"jsonrpc":"2.0","method":"greet","id":1}"#).await,
        invalid_params("missing required parameter `name` (String) of method `greet`")
    );
}

#[tokio::test]
async fn extra_params_are_rejected_unless_allowed() {
    let engine = decoding();
    assert_eq!(
        call(&engine, &request("strict", "[1,2]")).await,
        invalid_params("too many params: method `strict` takes at most 1, got 2")
    );
    assert_eq!(
        call(&engine, &request("strict", r#"{"a":1,"b":2}"#)).await,
        invalid_params("unknown parameter `b` for method `strict`; expected one of: a")
    );
    assert_eq!(call(&engine, &request("lenient", "[1,2,3]")).await, result("1"));
    assert_eq!(call(&engine, &request("lenient", r#"{"b":[2],"a":1}"#)).await, result("1"));
    // Extra params do not excuse missing ones.
    assert_eq!(
        call(&engine, &request("lenient", r#"{"b":2}"#)).await,
        invalid_params("missing required parameter `a` (i64) of method `lenient`")
    );
}

/// The array of a one-param method is read as its one element without
/// being split first (the engine's fast path for large params); what
/// comes back is what the split gives.
#[tokio::test]
async fn one_param_arrays_answer_as_if_split() {
    let engine = decoding();
    assert_eq!(call(&engine, &request("strict", " [ 7 ] ")).await, result("7"));
    assert_eq!(call(&engine, &request("strict", "[-0]")).await, result("0"));
    // Too many params comes before a type error, whichever element is wrong.
    for params in [r#"[1,"x"]"#, r#"["x",1]"#, "[1, 2]", "[[1],{}]"] {
        assert_eq!(
            call(&engine, &request("strict", params)).await,
            invalid_params("too many params: method `strict` takes at most 1, got 2"),
            "{params}"
        );
    }
    assert_eq!(
        call(&engine, &request("with_context", "[1,2]")).await,
        invalid_params("too many params: method `with_context` takes at most 1, got 2")
    );
    assert_eq!(call(&engine, &request("lenient", "[1,[2],{}]")).await, result("1"));
    assert_eq!(
        call(&engine, &request("lenient", r#"["x",1]"#)).await,
        invalid_params(r#"invalid parameter `a` of method `lenient`: invalid type: string "x", expected i64"#)
    );
    assert_eq!(
        call(&engine, &request("strict", "[ ]")).await,
        invalid_params("missing required parameter `a` (i64) of method `strict`")
    );
}

#[tokio::test]
async fn wrong_types_name_the_parameter() {
    let engine = decoding();
    assert_eq!(
        call(&engine, &request("strict", r#"["one"]"#)).await,
        invalid_params(r#"invalid parameter `a` of method `strict`: invalid type: string "one", expected i64"#)
    );
    assert_eq!(
        call(&engine, &request("strict", r#"{"a":null}"#)).await,
        invalid_params("invalid parameter `a` of method `strict`: invalid type: null, expected i64")
    );
}

#[tokio::test]
async fn param_structure_restricts_the_accepted_shape() {
    let engine = decoding();
    assert_eq!(call(&engine, &request("named", r#"{"b":1,"a":3}"#)).await, result("2"));
    assert_eq!(
        call(&engine, &request("named", "[3,1]")).await,
        invalid_params("method `named` takes params by name (an object), got an array")
    );
    assert_eq!(call(&engine, &request("positional", "[3,1]")).await, result("2"));
    assert_eq!(
        call(&engine, &request("positional", r#"{"a":3,"b":1}"#)).await,
        invalid_params("method `positional` takes params by position (an array), got an object")
    );
}

#[tokio::test]
async fn whole_params_receive_the_entire_params_value() {
    let engine = decoding();
    assert_eq!(
        call(&engine, &request("hover", r#"{"line":1,"character":2}"#)).await,
        result(r#"{"line":2,"character":3}"#)
    );
    assert_eq!(
        call(&engine, &request("hover", r#"{"line":1}"#)).await,
        invalid_params("invalid params of method `hover`: missing field `character` (expected Position)")
    );
    assert_eq!(
        call(&engine, r#"{"jsonrpc":"2.0","method":"hover","id":1}"#).await,
        invalid_params("method `hover` requires params (Position)")
    );
    assert_eq!(call(&engine, &request("sum", "[1,2,3]")).await, result("6"));
    assert_eq!(call(&engine, &request("sum", "[]")).await, result("0"));
    assert_eq!(
        call(&engine, &request("sum", r#"[1,"2"]"#)).await,
        invalid_params(r#"invalid params of method `sum`: invalid type: string "2", expected i64"#)
    );
    assert_eq!(
        call(&engine, &request("sum", r#"{"a":1}"#)).await,
        invalid_params("invalid params of method `sum`: invalid type: map, expected a sequence")
    );
}

#[tokio::test]
async fn context_is_injected_and_not_counted_as_a_param() {
    let engine = decoding();
    assert_eq!(call(&engine, &request("with_context", "[5]")).await, result(r#""5 from None""#));
    assert_eq!(call(&engine, &request("with_context", r#"{"value":5}"#)).await, result(r#""5 from None""#));
    assert_eq!(
        call(&engine, &request("with_context", "[5,6]")).await,
        invalid_params("too many params: method `with_context` takes at most 1, got 2")
    );
    assert_eq!(
        call(&engine, &request("with_context", r#"{"cx":{},"value":5}"#)).await,
        invalid_params("unknown parameter `cx` for method `with_context`; expected one of: value")
    );
    assert_eq!(call(&engine, &request("sum_with_context", "[1,2,3]")).await, result("6"));
}

#[tokio::test]
async fn async_methods_and_user_errors() {
    let engine = decoding();
    assert_eq!(call(&engine, &request("add_async", r#"{"a":2,"b":3}"#)).await, result("5"));
    assert_eq!(call(&engine, &request("find", r#"["one"]"#)).await, result("1"));
    let not_found = r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"not found: two","data":"two"},"id":1}"#;
    assert_eq!(call(&engine, &request("find", r#"["two"]"#)).await, not_found);
    assert_eq!(call(&engine, &request("find_async", r#"["two"]"#)).await, not_found);
    assert_eq!(call(&engine, &request("find_async", r#"{"key":"one"}"#)).await, result("1"));
}

#[tokio::test]
async fn notifications_run_without_an_answer() {
    let service = Service::default();
    let recorded = Arc::clone(&service.recorded);
    let engine = new_engine(Decoding::into_rpc(service));
    assert!(engine.router().spec("record").unwrap().notification);
    assert_eq!(call(&engine, r#"{"jsonrpc":"2.0","method":"record","params":[7]}"#).await, "");
    assert_eq!(recorded.load(Ordering::SeqCst), 7);
    assert_eq!(call(&engine, r#"{"jsonrpc":"2.0","method":"record","params":{"value":8}}"#).await, "");
    assert_eq!(recorded.load(Ordering::SeqCst), 8);
    // A bad notification is not answered either.
    assert_eq!(call(&engine, r#"{"jsonrpc":"2.0","method":"record","params":["x"]}"#).await, "");
    assert_eq!(recorded.load(Ordering::SeqCst), 8);
}

/// `requires` with one permission, any of several, or all of several.
#[rpc]
pub trait Guarded {
    #[rpc(requires = "admin")]
    fn reset(&self) -> bool;

    #[rpc(requires(any("admin", "ops")))]
    fn restart(&self) -> bool;

    #[rpc(requires(all("read", "write")))]
    fn copy(&self) -> bool;

    /// A refused notification cannot be answered: the server log says so.
    #[rpc(notification, requires = "admin")]
    fn poke(&self);
}

struct Guard;

impl Guarded for Guard {
    fn reset(&self) -> bool {
        true
    }
    fn restart(&self) -> bool {
        true
    }
    fn copy(&self) -> bool {
        true
    }
    fn poke(&self) {}
}

#[tokio::test]
async fn requires_takes_one_any_or_all_permissions() {
    use rpc_runtime::dispatch::Permissions;
    use rpc_runtime::serde_json::{self, json, Value};
    let engine = new_engine(Guard.into_rpc());
    let answer = |method: &'static str, held: &'static [&'static str]| {
        let engine = &engine;
        async move {
            let cx = Context::default().with_extension(Permissions::new(held.iter().copied()));
            let request = format!(r#"{{"jsonrpc":"2.0","method":"{method}","id":1}}"#);
            let response = engine.handle(request.as_bytes(), &cx).await;
            serde_json::from_slice::<Value>(&response).expect("JSON")
        }
    };
    let granted: [(&str, &[&str]); 6] = [
        ("reset", &["admin"]),
        ("restart", &["admin"]),
        ("restart", &["ops"]),
        ("restart", &["ops", "admin"]),
        ("copy", &["read", "write"]),
        ("copy", &["write", "read", "admin"]),
    ];
    for (method, held) in granted {
        assert_eq!(answer(method, held).await["result"], true, "{method} with {held:?}");
    }
    let refused: [(&str, &[&str], Value, &str); 4] = [
        ("reset", &["ops"], json!("admin"), "requires the permission `admin`"),
        ("restart", &["read"], json!({"anyOf": ["admin", "ops"]}), "requires one of the permissions `admin` or `ops`"),
        ("copy", &["read"], json!({"allOf": ["read", "write"]}), "requires the permissions `read` and `write`"),
        ("copy", &[], json!({"allOf": ["read", "write"]}), "requires the permissions `read` and `write`"),
    ];
    for (method, held, requires, message) in refused {
        let response = answer(method, held).await;
        assert_eq!(response["error"]["code"], -32003, "{method} with {held:?}: {response}");
        assert_eq!(response["error"]["data"], json!({ "requires": requires }), "{response}");
        assert!(response["error"]["message"].as_str().unwrap().ends_with(message), "{response}");
    }
    // A refused notification gets no answer (and a log line).
    let response = engine.handle(br#"{"jsonrpc":"2.0","method":"poke"}"#, &Context::default()).await;
    assert!(response.is_empty());
    // The catalog says it in the same shape.
    let document = serde_json::to_value(GuardedCatalog::catalog().document()).unwrap();
    let requires: Vec<Value> =
        document["methods"].as_array().unwrap().iter().map(|method| method["x-requires"].clone()).collect();
    assert_eq!(
        requires,
        [json!("admin"), json!({"anyOf": ["admin", "ops"]}), json!({"allOf": ["read", "write"]}), json!("admin")]
    );
}
