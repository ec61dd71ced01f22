//! W3C Trace Context in process, with OpenTelemetry's SDK collecting the
//! spans that tracing-opentelemetry makes of each call's span: our HTTP
//! client (HTTP/1.1 and HTTP/2) makes a client span and sends its context,
//! and the server's span is its child; a failed call is an error on both
//! sides; a WebSocket upgrade's `traceparent` parents every
//! call on the connection, and our WebSocket client sends the span it
//! connects in; MCP's `params._meta.traceparent` parents its
//! call and wins over the transport's; an invalid `traceparent` is
//! ignored (a new trace). The whole path over HTTP and NATS with
//! OpenTelemetry's Python SDK is `interop::trace_context`.
//!
//! The subscriber is the thread's default, so each test runs on a
//! current-thread runtime: the server's tasks run on the test's thread.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::{SinkExt, StreamExt};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use rpc_runtime::mcp::McpServer;
use rpc_runtime::otel::opentelemetry::trace::{SpanId, SpanKind, Status, TraceContextExt, TraceId, TracerProvider};
use rpc_runtime::otel::tracing_opentelemetry::{self, OpenTelemetrySpanExt};
use rpc_runtime::transport::http::{Http, HttpConnect};
use rpc_runtime::{rpc, Peer, Server};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tracing_subscriber::layer::SubscriberExt;

use crate::common::{serve_in_process, Wire};
use crate::web_support::{exchange, post_json};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// What the spans are made of.
#[rpc]
pub trait Sum {
    /// `a + b`.
    fn add(&self, a: i64, b: i64) -> i64;
}

struct SumImpl;

impl Sum for SumImpl {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// Keeps every span the SDK ends.
#[derive(Clone, Debug, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend(batch);
        std::future::ready(Ok(()))
    }
}

impl Collected {
    /// The last span of `kind` ended so far.
    fn last(&self, kind: SpanKind) -> Option<SpanData> {
        let spans = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spans.iter().rev().find(|span| span.span_kind == kind).cloned()
    }

    /// The server spans (a call's `rpc.call`) ended so far.
    fn calls(&self) -> Vec<SpanData> {
        let spans = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spans.iter().filter(|span| span.span_kind == SpanKind::Server).cloned().collect()
    }
}

/// A subscriber exporting every span to what it returns, as this
/// thread's default.
fn collect() -> (Collected, SdkTracerProvider, tracing::subscriber::DefaultGuard) {
    let collected = Collected::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(collected.clone()).build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("trace_context tests")));
    (collected, provider, tracing::subscriber::set_default(subscriber))
}

async fn serve_http(server: Server) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(server.serve(Http::default().listener(listener)));
    addr
}

fn traceparent(trace: &str, parent: &str) -> String {
    format!("00-{trace}-{parent}-01")
}

#[tokio::test]
async fn the_http_client_sends_its_span_and_the_server_span_is_its_child() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    for http2 in [false, true] {
        let target = HttpConnect::new(format!("http://{addr}/"));
        let target = if http2 { target.http2_prior_knowledge() } else { target };
        let client = SumClient::new(Peer::builder().connect(target).await.expect("connect"));
        let caller = tracing::info_span!("caller");
        let sum = tracing::Instrument::instrument(client.add(2, 3), caller.clone()).await.expect("add");
        assert_eq!(sum, 5);
        let caller = caller.context().span().span_context().clone();
        drop(client);
        // The call is a client span inside the caller's; the server's span
        // is the client span's child, over HTTP.
        let outgoing = collected.last(SpanKind::Client).expect("the client's span");
        assert_eq!(outgoing.name, "add");
        assert_eq!(outgoing.parent_span_id, caller.span_id(), "inside the caller's span (http2: {http2})");
        let call = collected.last(SpanKind::Server).expect("the server's span");
        assert_eq!(call.name, "add", "named after the method");
        assert_eq!(call.span_context.trace_id(), caller.trace_id(), "one trace (http2: {http2})");
        assert_eq!(
            call.parent_span_id,
            outgoing.span_context.span_id(),
            "the client span is the parent (http2: {http2})"
        );
        assert!(call.parent_span_is_remote, "the parent came over HTTP");
    }
}

#[tokio::test]
async fn a_failed_outgoing_call_and_its_server_span_are_errors() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    let peer = Peer::builder().connect(HttpConnect::new(format!("http://{addr}/"))).await.expect("connect");
    let failed = peer.call::<i64, _>("add", ["one", "two"]).await.expect_err("invalid params");
    assert!(failed.is_invalid_params(), "{failed}");
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = collected.last(kind.clone()).expect("a span");
        assert!(matches!(span.status, Status::Error { .. }), "{kind:?}: {:?}", span.status);
        let code = span
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == "rpc.jsonrpc.error_code")
            .map(|kv| kv.value.to_string());
        assert_eq!(code.as_deref(), Some("-32602"), "{kind:?}");
    }
}

#[tokio::test]
async fn a_batch_continues_the_callers_trace_with_its_calls_inside() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    let body = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "add", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 2, "method": "add", "params": [3, 4]},
    ])
    .to_string();
    let reply =
        exchange(addr, &post_json(addr, &body, &[&format!("traceparent: {}", traceparent(TRACE, PARENT))])).await;
    assert!(reply.body.contains("\"result\":7"), "{}", reply.body);
    let spans = collected.0.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let batch = spans.iter().find(|span| span.name == "rpc.batch").expect("the batch's span");
    assert_eq!(batch.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(batch.parent_span_id, SpanId::from_hex(PARENT).unwrap());
    let calls = collected.calls();
    assert_eq!(calls.len(), 2);
    for call in calls {
        assert_eq!(call.parent_span_id, batch.span_context.span_id(), "inside the batch");
    }
}

#[tokio::test]
async fn an_invalid_traceparent_is_ignored_and_the_call_starts_a_trace() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "add", "params": [1, 2]}).to_string();
    for header in [traceparent(&TRACE.to_uppercase(), PARENT), traceparent(TRACE, "0000000000000000"), "junk".into()] {
        let reply = exchange(addr, &post_json(addr, &body, &[&format!("traceparent: {header}")])).await;
        assert!(reply.body.contains("\"result\":3"), "{}", reply.body);
        let calls = collected.calls();
        let call = calls.last().expect("a span");
        assert_ne!(call.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap(), "{header}");
        assert_eq!(call.parent_span_id, SpanId::INVALID, "a root span: {header}");
    }
}

#[tokio::test]
async fn a_websocket_upgrade_s_traceparent_parents_every_call_on_the_connection() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    let mut request = format!("ws://{addr}/").into_client_request().expect("request");
    request.headers_mut().insert("traceparent", traceparent(TRACE, PARENT).parse().expect("header"));
    request.headers_mut().insert("tracestate", "congo=t61rcWkgMzE".parse().expect("header"));
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut socket, _) = tokio_tungstenite::client_async(request, stream).await.expect("upgrade");
    for id in 1..=2 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "add", "params": [id, 1]}).to_string();
        socket.send(Message::text(call)).await.expect("send");
        let answer = socket.next().await.expect("an answer").expect("read");
        assert!(answer.to_text().expect("text").contains("\"result\""), "{answer}");
    }
    let calls = collected.calls();
    assert_eq!(calls.len(), 2);
    for call in calls {
        assert_eq!(call.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
        assert_eq!(call.parent_span_id, SpanId::from_hex(PARENT).unwrap());
        assert_eq!(call.span_context.trace_state().get("congo"), Some("t61rcWkgMzE"), "tracestate carried on");
    }
}

#[tokio::test]
async fn our_websocket_client_sends_the_span_it_connects_in() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    let caller = tracing::info_span!("connecting");
    let connect = Peer::builder().connect(rpc_runtime::transport::ws::WsConnect::new(format!("ws://{addr}/")));
    let peer = tracing::Instrument::instrument(connect, caller.clone()).await.expect("connect");
    let client = SumClient::new(peer);
    assert_eq!(client.add(1, 1).await.expect("add"), 2);
    let caller = caller.context().span().span_context().clone();
    let calls = collected.calls();
    let call = calls.last().expect("the server's span");
    assert_eq!(call.span_context.trace_id(), caller.trace_id());
    assert_eq!(call.parent_span_id, caller.span_id());
}

#[tokio::test]
async fn mcp_meta_traceparent_parents_its_call() {
    let (collected, _provider, _guard) = collect();
    let (mut conn, _task) = serve_in_process(McpServer::new(SumImpl.into_rpc()).into_server(), Wire::Ndjson);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    conn.call(init.to_string()).await;
    conn.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;
    let other = "1111111111111111";
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"traceparent": traceparent(TRACE, other)}}});
    let answer = conn.call(call.to_string()).await;
    assert!(answer.contains(r#""structuredContent":{"result":3}"#), "{answer}");
    let calls = collected.calls();
    let call =
        calls.iter().find(|span| span.name == "tools/call add").expect("the tools/call span, named with its tool");
    assert_eq!(call.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(call.parent_span_id, SpanId::from_hex(other).unwrap());
    assert!(call.parent_span_is_remote);
    // Without `_meta`, the call starts a trace of its own.
    let plain = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    conn.call(plain.to_string()).await;
    let calls = collected.calls();
    let last = calls.iter().rev().find(|span| span.name == "tools/call add").expect("a second span");
    assert_ne!(last.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
}

#[tokio::test]
async fn mcp_meta_wins_over_the_http_header() {
    let (collected, _provider, _guard) = collect();
    let addr = serve_http(Server::new(SumImpl.into_rpc())).await;
    // Any call's `params._meta.traceparent` is read, MCP's or not.
    let meta = "2222222222222222";
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "add",
        "params": {"a": 1, "b": 2, "_meta": {"traceparent": traceparent(TRACE, meta)}}})
    .to_string();
    let header = traceparent("0af7651916cd43dd8448eb211c80319c", PARENT);
    // `add` itself refuses the unknown `_meta` (-32602); its span is
    // the child of `_meta`'s parent all the same.
    let reply = exchange(addr, &post_json(addr, &body, &[&format!("traceparent: {header}")])).await;
    assert!(reply.body.contains("-32602"), "{}", reply.body);
    let calls = collected.calls();
    let call = calls.last().expect("a span");
    assert_eq!(call.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(call.parent_span_id, SpanId::from_hex(meta).unwrap());
}
