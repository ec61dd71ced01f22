// `#[rpc(blocking)]` on plain `fn`s of every shape: a value, a `Result`,
// an alias of one, nothing, a notification, with a `Context`, with other
// keys. None is answered inline: each is left pending, to run on the
// blocking thread pool.
use rpc_runtime::serde_json::json;
use rpc_runtime::{dispatch::Engine, rpc, Context, ErrorObject, Limits};

#[rpc]
pub trait Heavy {
    #[rpc(blocking)]
    fn value(&self, n: u64) -> u64;
    #[rpc(blocking)]
    fn fallible(&self) -> Result<String, ErrorObject>;
    #[rpc(blocking)]
    fn aliased(&self) -> rpc_runtime::wire::RpcResult<()>;
    #[rpc(blocking)]
    fn nothing(&self, cx: Context);
    #[rpc(blocking, notification)]
    fn notified(&self, text: String);
    #[rpc(blocking, name = "renamed", alias = "old", param_structure = "by-position")]
    fn keyed(&self, a: u8, b: Option<u8>) -> u8;
    /// Answered inline.
    fn inline(&self) -> bool;
}

struct Impl;

impl Heavy for Impl {
    fn value(&self, n: u64) -> u64 {
        n
    }
    fn fallible(&self) -> Result<String, ErrorObject> {
        Ok(String::new())
    }
    fn aliased(&self) -> rpc_runtime::wire::RpcResult<()> {
        Ok(())
    }
    fn nothing(&self, _: Context) {}
    fn notified(&self, _: String) {}
    fn keyed(&self, a: u8, b: Option<u8>) -> u8 {
        a + b.unwrap_or(0)
    }
    fn inline(&self) -> bool {
        true
    }
}

fn main() {
    let engine = Engine::new(Impl.into_rpc(), Limits::default());
    let cx = Context::new();
    for (method, params) in [
        ("value", json!([1])),
        ("fallible", json!([])),
        ("aliased", json!([])),
        ("nothing", json!([])),
        ("renamed", json!([1])),
        ("old", json!([1, 2])),
    ] {
        let request = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
        let mut out = Vec::new();
        assert!(engine.process(request.to_string().as_bytes(), &cx, &mut out).is_some(), "{method}");
    }
    let request = json!({"jsonrpc": "2.0", "method": "notified", "params": ["x"]});
    assert!(engine.process(request.to_string().as_bytes(), &cx, &mut Vec::new()).is_some());
    let request = json!({"jsonrpc": "2.0", "method": "inline", "id": 1});
    assert!(engine.process(request.to_string().as_bytes(), &cx, &mut Vec::new()).is_none());
    // Bad params are answered inline, before anything runs.
    let request = json!({"jsonrpc": "2.0", "method": "value", "params": ["x"], "id": 1});
    let mut out = Vec::new();
    assert!(engine.process(request.to_string().as_bytes(), &cx, &mut out).is_none());
    assert!(String::from_utf8(out).unwrap().contains("-32602"));
}
