//! Results are encoded straight into the response buffer: these pin down
//! that a failure midway leaves no partial bytes, and that batches mixing
//! ready, waiting, failing and silent entries keep their order.

use std::collections::BTreeMap;

use rpc_runtime::{
    Context, ErrorObject, Limits, Router,
    dispatch::{Engine, MethodOutcome, MethodSpec},
    rpc,
};

#[rpc]
trait Mixed {
    fn add(&self, a: i64, b: i64) -> i64;
    async fn later(&self, value: i64) -> i64;
    fn refuse(&self) -> Result<i64, ErrorObject>;
    /// A map with non-string keys cannot be JSON: encoding fails midway.
    fn unencodable(&self) -> BTreeMap<(i64, i64), i64>;
    #[rpc(notification)]
    fn note(&self, value: i64);
}

struct Service;

impl Mixed for Service {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    async fn later(&self, value: i64) -> i64 {
        tokio::task::yield_now().await;
        value * 10
    }
    fn refuse(&self) -> Result<i64, ErrorObject> {
        Err(ErrorObject::new(-32001, "refused"))
    }
    fn unencodable(&self) -> BTreeMap<(i64, i64), i64> {
        BTreeMap::from([((1, 2), 3)])
    }
    fn note(&self, _value: i64) {}
}

fn engine() -> Engine {
    Engine::new(Service.into_rpc(), Limits::default())
}

fn handle(engine: &Engine, message: &str) -> String {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let bytes = runtime.block_on(engine.handle(message.as_bytes(), &Context::default()));
    String::from_utf8(bytes).unwrap()
}

const ENCODE_FAILED: &str = r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result failed to serialize: key must be a string"},"id":1}"#;

#[test]
fn a_result_that_fails_to_encode_leaves_no_partial_bytes() {
    let engine = engine();
    assert_eq!(handle(&engine, r#"{"jsonrpc":"2.0","method":"unencodable","id":1}"#), ENCODE_FAILED);
    let batch =
        r#"[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":0},{"jsonrpc":"2.0","method":"unencodable","id":1}]"#;
    assert_eq!(handle(&engine, batch), format!(r#"[{{"jsonrpc":"2.0","result":3,"id":0}},{ENCODE_FAILED}]"#));
}

#[test]
fn a_batch_mixing_ready_waiting_failing_and_silent_entries_keeps_its_order() {
    let batch = concat!(
        "[",
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},"#,
        r#"{"jsonrpc":"2.0","method":"note","params":[5]},"#,
        r#"{"jsonrpc":"2.0","method":"later","params":[4],"id":"two"},"#,
        r#"{"jsonrpc":"2.0","method":"missing","id":3},"#,
        r#"{"jsonrpc":"2.0","method":"later","params":[9]},"#,
        r#"{"jsonrpc":"2.0","method":"refuse","id":4},"#,
        r#"{"jsonrpc":"2.0","method":"add","params":{"a":1,"b":1}},"#,
        r#"7,"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[2,2],"id":5}"#,
        "]"
    );
    let expected = concat!(
        "[",
        r#"{"jsonrpc":"2.0","result":3,"id":1},"#,
        r#"{"jsonrpc":"2.0","result":40,"id":"two"},"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3},"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"refused"},"id":4},"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null},"#,
        r#"{"jsonrpc":"2.0","result":4,"id":5}"#,
        "]"
    );
    assert_eq!(handle(&engine(), batch), expected);
}

#[test]
fn a_batch_of_notifications_only_sends_nothing() {
    let batch = r#"[{"jsonrpc":"2.0","method":"note","params":[1]},{"jsonrpc":"2.0","method":"later","params":[2]}]"#;
    assert_eq!(handle(&engine(), batch), "");
    let ready_only =
        r#"[{"jsonrpc":"2.0","method":"note","params":[1]},{"jsonrpc":"2.0","method":"add","params":[1,2]}]"#;
    let mut out = Vec::new();
    assert!(engine().process(ready_only.as_bytes(), &Context::default(), &mut out).is_none());
    assert!(out.is_empty());
}

#[test]
fn handlers_registered_by_hand_answer_like_generated_ones() {
    static DOUBLE: MethodSpec = MethodSpec::new("double", &[rpc_runtime::dispatch::ParamSpec::new("n", "i64")]);
    static BROKEN: MethodSpec = MethodSpec::new("broken", &[]);
    let mut router = Router::new();
    router
        .register(&DOUBLE, |params, _cx| {
            Ok(MethodOutcome::Ready(rpc_runtime::dispatch::encode(&(params.decode::<i64>(0)? * 2))))
        })
        .unwrap();
    router
        .register(&BROKEN, |_params, _cx| {
            Ok(MethodOutcome::Ready(rpc_runtime::dispatch::encode(&BTreeMap::from([((1, 2), 3)]))))
        })
        .unwrap();
    let engine = Engine::new(router, Limits::default());
    let batch =
        r#"[{"jsonrpc":"2.0","method":"double","params":[21],"id":0},{"jsonrpc":"2.0","method":"broken","id":1}]"#;
    assert_eq!(handle(&engine, batch), format!(r#"[{{"jsonrpc":"2.0","result":42,"id":0}},{ENCODE_FAILED}]"#));
}
