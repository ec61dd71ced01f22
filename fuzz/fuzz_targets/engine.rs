//! Arbitrary bytes as one message, through `Engine::process`, with every
//! `async` method driven to completion. Checks that nothing panics and
//! that every answer is JSON-RPC 2.0: a response object, or a non-empty
//! array of them.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rpc_runtime::serde_json::value::RawValue;
use rpc_runtime::{rpc, Context, ErrorObject, Limits, dispatch::Engine};
use serde_json::Value;

#[rpc]
trait Service {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    fn echo(&self, value: Box<RawValue>) -> Box<RawValue>;
    fn greet(&self, name: String, greeting: Option<String>) -> String;
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;
    #[rpc(param_structure = "by-name")]
    fn by_name(&self, a: u8, b: Option<Vec<bool>>) -> usize;
    #[rpc(param_structure = "by-position", allow_extra_params)]
    fn loose(&self, a: Option<f64>) -> Option<f64>;
    #[rpc(notification)]
    fn note(&self, value: Value);
    fn fail(&self, code: i64) -> Result<(), ErrorObject>;
    async fn later(&self, value: Value) -> Value;
    async fn later_add(&self, a: i32, b: i32) -> Result<i64, ErrorObject>;
    async fn with_context(&self, cx: Context, n: Option<u32>) -> bool;
}

struct Impl;

impl Service for Impl {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend.wrapping_sub(subtrahend)
    }
    fn echo(&self, value: Box<RawValue>) -> Box<RawValue> {
        value
    }
    fn greet(&self, name: String, greeting: Option<String>) -> String {
        format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.into_iter().fold(0, i64::wrapping_add)
    }
    fn by_name(&self, a: u8, b: Option<Vec<bool>>) -> usize {
        usize::from(a) + b.map_or(0, |b| b.len())
    }
    fn loose(&self, a: Option<f64>) -> Option<f64> {
        a
    }
    fn note(&self, _value: Value) {}
    fn fail(&self, code: i64) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(code, "failed"))
    }
    async fn later(&self, value: Value) -> Value {
        tokio::task::yield_now().await;
        value
    }
    async fn later_add(&self, a: i32, b: i32) -> Result<i64, ErrorObject> {
        tokio::task::yield_now().await;
        Ok(i64::from(a) + i64::from(b))
    }
    async fn with_context(&self, cx: Context, n: Option<u32>) -> bool {
        tokio::task::yield_now().await;
        !cx.is_cancelled() || n.is_some()
    }
}

struct Harness {
    engine: Engine,
    runtime: tokio::runtime::Runtime,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| Harness {
        // Small limits, so that the fuzzer reaches them.
        engine: Engine::new(
            Impl.into_rpc(),
            Limits::default().max_message_size(1 << 20).max_batch_len(16).max_concurrent_requests(64),
        ),
        runtime: tokio::runtime::Builder::new_current_thread().build().expect("a runtime"),
    })
}

fuzz_target!(|message: &[u8]| {
    let harness = harness();
    let mut out = Vec::new();
    let answer = match harness.engine.process(message, &Context::default(), &mut out) {
        Some(pending) => {
            assert!(out.is_empty(), "a pending answer carries the whole answer");
            harness.runtime.block_on(pending.run())
        }
        None => out,
    };
    if answer.is_empty() {
        return;
    }
    if let Err(err) = serde_json::from_slice::<&RawValue>(&answer) {
        panic!("the answer is not JSON ({err}): {}", String::from_utf8_lossy(&answer));
    }
    // JSON's grammar allows escapes of lone surrogates (`"\ud800"`), which
    // no Rust string holds: an id with one is echoed as it came, so the
    // answer reads as a `Value` exactly when the message did.
    let answer: Value = match serde_json::from_slice(&answer) {
        Ok(answer) => answer,
        Err(err) => {
            let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
            assert!(
                serde_json::from_slice::<Value>(message).is_err(),
                "the answer to a message that reads as a Value does not ({err}): {}",
                String::from_utf8_lossy(&answer)
            );
            return;
        }
    };
    match &answer {
        Value::Array(responses) => {
            assert!(!responses.is_empty(), "an empty batch answer is never sent");
            responses.iter().for_each(check_response);
        }
        response => check_response(response),
    }
});

fn check_response(response: &Value) {
    let object = response.as_object().unwrap_or_else(|| panic!("a response is an object: {response}"));
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")), "{response}");
    assert!(object.contains_key("id"), "{response}");
    assert_eq!(object.len(), 3, "jsonrpc, id and one of result or error: {response}");
    if let Some(error) = object.get("error") {
        assert!(error["code"].is_i64(), "{response}");
        assert!(error["message"].is_string(), "{response}");
    } else {
        assert!(object.contains_key("result"), "{response}");
    }
}
