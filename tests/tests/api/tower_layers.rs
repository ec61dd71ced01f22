//! Middleware as tower layers (issue 22): tower's own timeout,
//! concurrency-limit and load-shed layers apply per call, and a layer of
//! one's own sees every call, each entry of a batch on its own.
//!
//! Waiting is proven by ordering, never by timing: methods wait on a gate
//! only the test opens, and a probe layer reports when a call is held back
//! at `poll_ready`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use rpc_runtime::dispatch::{Engine, MethodCall, MethodResponse};
use rpc_runtime::wire::{LIMIT_EXCEEDED, PERMISSION_DENIED, SERVER_OVERLOADED};
use rpc_runtime::{rpc, Context, ErrorObject, Limits};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Semaphore};
use tower::{Layer, Service, ServiceBuilder};

/// How long a test waits for something that must happen before calling it
/// a hang: a guard against a broken build hanging CI, not a threshold.
const HANG_GUARD: Duration = Duration::from_secs(20);

/// Methods that say when they run, and one that waits for the test.
#[rpc]
pub trait Held {
    /// Logs `start n`, waits until the test opens the gate, logs `end n`.
    async fn held(&self, n: u32) -> u32;
    /// Logs `start n` and `end n` and answers at once.
    fn quick(&self, n: u32) -> u32;
    /// Never answers.
    async fn hang(&self) -> u32;
    /// Answers `"the secret"`; the test's layer lets only admins call it.
    fn secret(&self) -> String;
}

struct HeldService {
    log: Log,
    gate: Arc<Semaphore>,
}

impl Held for HeldService {
    async fn held(&self, n: u32) -> u32 {
        self.log.push(format!("start {n}"));
        self.gate.acquire().await.expect("gate open").forget();
        self.log.push(format!("end {n}"));
        n
    }

    fn quick(&self, n: u32) -> u32 {
        self.log.push(format!("start {n}"));
        self.log.push(format!("end {n}"));
        n
    }

    async fn hang(&self) -> u32 {
        std::future::pending().await
    }

    fn secret(&self) -> String {
        "the secret".to_owned()
    }
}

/// What happened, in order, and a channel that tells the test as it
/// happens.
#[derive(Clone)]
struct Log {
    entries: Arc<Mutex<Vec<String>>>,
    events: mpsc::UnboundedSender<String>,
}

impl Log {
    fn new() -> (Log, mpsc::UnboundedReceiver<String>) {
        let (events, receiver) = mpsc::unbounded_channel();
        (Log { entries: Arc::default(), events }, receiver)
    }

    fn push(&self, entry: String) {
        self.entries.lock().unwrap().push(entry.clone());
        // The test may have stopped listening; the entry is kept anyway.
        let _ = self.events.send(entry);
    }

    fn entries(&self) -> Vec<String> {
        self.entries.lock().unwrap().clone()
    }
}

/// A router of [`Held`], the log it writes and the gate its `held` waits on.
fn held() -> (rpc_runtime::Router, Log, mpsc::UnboundedReceiver<String>, Arc<Semaphore>) {
    let (log, events) = Log::new();
    let gate = Arc::new(Semaphore::new(0));
    let router = HeldService { log: log.clone(), gate: Arc::clone(&gate) }.into_rpc();
    (router, log, events, gate)
}

fn request(method: &str, params: Value, id: u32) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}).to_string().into_bytes()
}

async fn answer(engine: &Engine, message: &[u8], cx: &Context) -> Value {
    let reply = tokio::time::timeout(HANG_GUARD, engine.handle(message, cx)).await.expect("answered");
    serde_json::from_slice(&reply).expect("the answer is JSON")
}

async fn next_event(events: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(HANG_GUARD, events.recv()).await.expect("an event").expect("log still open")
}

#[tokio::test]
async fn a_timeout_layer_answers_a_slow_async_method_with_an_error_naming_the_timeout() {
    let (router, _, _, _) = held();
    let engine =
        Engine::new(router, Limits::default()).layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(20)));
    let reply = answer(&engine, &request("hang", json!([]), 1), &Context::new()).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], LIMIT_EXCEEDED);
    assert_eq!(reply["error"]["message"], "Request timed out");
    // A plain method under the same layer is answered at once, its result
    // as the method wrote it.
    let reply = answer(&engine, &request("quick", json!([7]), 2), &Context::new()).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "result": 7, "id": 2}));
}

/// Reports each call that its inner service holds back at `poll_ready`.
#[derive(Clone)]
struct ProbeLayer(mpsc::UnboundedSender<String>);

impl<S> Layer<S> for ProbeLayer {
    type Service = Probe<S>;
    fn layer(&self, inner: S) -> Probe<S> {
        Probe { inner, events: self.0.clone(), reported: false }
    }
}

#[derive(Clone)]
struct Probe<S> {
    inner: S,
    events: mpsc::UnboundedSender<String>,
    reported: bool,
}

impl<S: Service<MethodCall>> Service<MethodCall> for Probe<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        let poll = self.inner.poll_ready(cx);
        if poll.is_pending() && !self.reported {
            self.reported = true;
            let _ = self.events.send("held back".to_owned());
        }
        poll
    }

    fn call(&mut self, call: MethodCall) -> S::Future {
        self.inner.call(call)
    }
}

#[tokio::test]
async fn a_concurrency_limit_of_one_makes_a_second_call_wait_for_the_first() {
    let (router, log, mut events, gate) = held();
    let (probe, mut held_back) = mpsc::unbounded_channel();
    let engine = Engine::new(router, Limits::default())
        .layer(ServiceBuilder::new().layer(ProbeLayer(probe)).concurrency_limit(1));
    let first = tokio::spawn({
        let engine = engine.clone();
        async move { answer(&engine, &request("held", json!([1]), 1), &Context::new()).await }
    });
    assert_eq!(next_event(&mut events).await, "start 1");
    // A plain method: it, too, waits for the limit, and its result then
    // travels with the waiting call.
    let second = tokio::spawn({
        let engine = engine.clone();
        async move { answer(&engine, &request("quick", json!([2]), 2), &Context::new()).await }
    });
    assert_eq!(next_event(&mut held_back).await, "held back");
    assert_eq!(log.entries(), ["start 1"], "the second call has not started");
    gate.add_permits(1);
    assert_eq!(first.await.unwrap(), json!({"jsonrpc": "2.0", "result": 1, "id": 1}));
    assert_eq!(second.await.unwrap(), json!({"jsonrpc": "2.0", "result": 2, "id": 2}));
    assert_eq!(log.entries(), ["start 1", "end 1", "start 2", "end 2"]);
}

#[tokio::test]
async fn load_shedding_over_a_concurrency_limit_refuses_with_the_overloaded_error() {
    let (router, _, mut events, gate) = held();
    let engine = Engine::new(router, Limits::default()).layer(ServiceBuilder::new().load_shed().concurrency_limit(1));
    let first = tokio::spawn({
        let engine = engine.clone();
        async move { answer(&engine, &request("held", json!([1]), 1), &Context::new()).await }
    });
    assert_eq!(next_event(&mut events).await, "start 1");
    let refused = answer(&engine, &request("quick", json!([2]), 2), &Context::new()).await;
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], SERVER_OVERLOADED);
    assert!(refused["error"]["message"].as_str().unwrap().contains("retry later"), "{refused}");
    gate.add_permits(1);
    assert_eq!(first.await.unwrap()["result"], 1);
    // The slot is free again.
    let reply = answer(&engine, &request("quick", json!([3]), 3), &Context::new()).await;
    assert_eq!(reply["result"], 3);
}

/// An admin, as a connection hook would mark one.
struct Admin;

/// Records each call's method and outcome, and refuses `secret` to anyone
/// but an admin: a user's async middleware, as an ordinary layer.
#[derive(Clone)]
struct AuditLayer(Arc<Mutex<Vec<String>>>);

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;
    fn layer(&self, inner: S) -> Audit<S> {
        Audit { inner, audit: Arc::clone(&self.0) }
    }
}

#[derive(Clone)]
struct Audit<S> {
    inner: S,
    audit: Arc<Mutex<Vec<String>>>,
}

impl<S> Service<MethodCall> for Audit<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<MethodResponse, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        let audit = Arc::clone(&self.audit);
        let entry = format!("{}{}", call.method(), if call.is_notification() { " (notification)" } else { "" });
        if call.method() == "secret" && call.context().extension::<Admin>().is_none() {
            audit.lock().unwrap().push(format!("{entry}: refused"));
            let refused = ErrorObject::new(PERMISSION_DENIED, "Admins only");
            return Box::pin(async move { Ok(MethodResponse::error(refused)) });
        }
        let response = self.inner.call(call);
        Box::pin(async move {
            let response = response.await?;
            let outcome = match (response.result_json(), response.error_object()) {
                (Some(json), _) => String::from_utf8_lossy(json).into_owned(),
                (None, Some(error)) => error.code().to_string(),
                (None, None) => unreachable!("a response is a result or an error"),
            };
            audit.lock().unwrap().push(format!("{entry}: {outcome}"));
            Ok(response)
        })
    }
}

#[tokio::test]
async fn a_layer_of_ones_own_sees_each_call_of_a_batch() {
    let (router, _, _, gate) = held();
    gate.add_permits(1);
    let audit = Arc::new(Mutex::new(Vec::new()));
    let engine = Engine::new(router, Limits::default()).layer(AuditLayer(Arc::clone(&audit)));
    let batch = json!([
        {"jsonrpc": "2.0", "method": "quick", "params": [1], "id": 1},
        {"jsonrpc": "2.0", "method": "secret", "id": 2},
        {"jsonrpc": "2.0", "method": "held", "params": [3], "id": 3},
        {"jsonrpc": "2.0", "method": "quick", "params": [4]},
        {"jsonrpc": "2.0", "method": "nope", "id": 5}
    ]);
    let reply = answer(&engine, batch.to_string().as_bytes(), &Context::new()).await;
    assert_eq!(
        reply,
        json!([
            {"jsonrpc": "2.0", "result": 1, "id": 1},
            {"jsonrpc": "2.0", "error": {"code": PERMISSION_DENIED, "message": "Admins only"}, "id": 2},
            {"jsonrpc": "2.0", "result": 3, "id": 3},
            {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": 5}
        ])
    );
    let mut seen = audit.lock().unwrap().clone();
    // `held` may finish after the entries behind it.
    seen.sort();
    assert_eq!(seen, ["held: 3", "nope: -32601", "quick (notification): 4", "quick: 1", "secret: refused"]);

    let admin = Context::new().with_extension(Admin);
    let reply = answer(&engine, &request("secret", json!([]), 6), &admin).await;
    assert_eq!(reply["result"], "the secret");
}

/// A service that fails every call with `error` instead of calling the
/// service it was layered on.
#[derive(Clone)]
struct Failing {
    error: fn() -> Box<dyn std::error::Error + Send + Sync>,
}

impl Service<MethodCall> for Failing {
    type Response = MethodResponse;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = std::future::Ready<Result<MethodResponse, Self::Error>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: MethodCall) -> Self::Future {
        std::future::ready(Err((self.error)()))
    }
}

#[tokio::test]
async fn a_layers_error_object_is_answered_as_is_and_other_errors_are_internal() {
    for (error, code, message) in [
        (
            (|| ErrorObject::new(-32042, "Quota used up").into()) as fn() -> Box<dyn std::error::Error + Send + Sync>,
            -32042,
            "Quota used up",
        ),
        (|| "disk on fire".into(), -32603, "Internal error"),
    ] {
        let (router, _, _, _) = held();
        let engine = Engine::new(router, Limits::default()).layer(tower::layer::layer_fn(move |_| Failing { error }));
        let reply = answer(&engine, &request("quick", json!([1]), 1), &Context::new()).await;
        assert_eq!(reply, json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": 1}));
    }
}

/// A service that panics in `call`, or (`later`) in its future.
#[derive(Clone)]
struct Panicking {
    later: bool,
}

impl Service<MethodCall> for Panicking {
    type Response = MethodResponse;
    type Error = ErrorObject;
    type Future = Pin<Box<dyn Future<Output = Result<MethodResponse, ErrorObject>> + Send>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: MethodCall) -> Self::Future {
        assert!(self.later, "a layer's bug, in call");
        Box::pin(async {
            tokio::task::yield_now().await;
            panic!("a layer's bug, in its future")
        })
    }
}

#[tokio::test]
async fn a_panicking_layer_answers_internal_error_and_the_engine_goes_on() {
    for later in [false, true] {
        let (router, _, _, _) = held();
        let engine = Engine::new(router, Limits::default()).layer(tower::layer::layer_fn(move |_| Panicking { later }));
        let reply = answer(&engine, &request("quick", json!([1]), 1), &Context::new()).await;
        assert_eq!(reply["id"], 1, "later = {later}: {reply}");
        assert_eq!(reply["error"]["code"], -32603, "later = {later}: {reply}");
        let again = answer(&engine, &request("quick", json!([2]), 2), &Context::new()).await;
        assert_eq!(again["error"]["code"], -32603, "later = {later}: {again}");
    }
}

#[tokio::test]
async fn a_rate_limit_shared_through_a_buffer_sheds_the_call_over_the_rate() {
    let (router, _, _, _) = held();
    // tower's `RateLimit` counts per instance and is not `Clone`; a
    // `Buffer` in front of it makes every call share one.
    let engine = Engine::new(router, Limits::default())
        .layer(ServiceBuilder::new().buffer(8).load_shed().rate_limit(1, Duration::from_secs(3600)));
    let reply = answer(&engine, &request("quick", json!([1]), 1), &Context::new()).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "result": 1, "id": 1}));
    let refused = answer(&engine, &request("quick", json!([2]), 2), &Context::new()).await;
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], SERVER_OVERLOADED, "{refused}");
}
