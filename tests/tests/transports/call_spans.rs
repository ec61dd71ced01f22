//! Each call is a `tracing` span with OpenTelemetry's JSON-RPC field names,
//! as a subscriber sees them: a success, a failure with its code and
//! message (from a plain and from an `async` method), a notification, an
//! unknown method, a batch with a child per call, and the transport and
//! peer address over TCP and over HTTP.
//!
//! The recording subscriber is the thread's default, so each test runs on
//! a current-thread runtime: the server's tasks run on the test's thread.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use rpc_runtime::transport::http::Http;
use rpc_runtime::wire::ErrorObject;
use rpc_runtime::{rpc, Server};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use crate::common::{Calculator, Wire};
use crate::web_support::{exchange, post_json};

/// A service with calls that succeed and fail, plain and `async`.
#[rpc]
pub trait Traced {
    /// `a + b`.
    fn add(&self, a: i64, b: i64) -> i64;
    /// Always fails with code 7.
    fn refuse(&self) -> Result<i64, ErrorObject>;
    /// `n`, or code 8 when `n` is negative, after a yield.
    async fn later(&self, n: i64) -> Result<i64, ErrorObject>;
}

/// The implementation (the metrics tests serve it too).
#[derive(Debug)]
pub struct TracedImpl;

impl Traced for TracedImpl {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    fn refuse(&self) -> Result<i64, ErrorObject> {
        Err(ErrorObject::new(7, "not today"))
    }

    async fn later(&self, n: i64) -> Result<i64, ErrorObject> {
        tokio::task::yield_now().await;
        if n < 0 {
            Err(ErrorObject::new(8, "negative"))
        } else {
            Ok(n)
        }
    }
}

/// One span as the subscriber saw it.
#[derive(Clone, Debug)]
struct SeenSpan {
    name: &'static str,
    fields: BTreeMap<String, String>,
    /// The index of its parent among the recorded spans.
    parent: Option<usize>,
}

impl SeenSpan {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Where a span is among the recorded ones (kept in the registry's
/// extensions of the span).
struct Index(usize);

/// A layer that records every span with its fields.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<SeenSpan>>>);

impl Recorder {
    fn spans(&self) -> Vec<SeenSpan> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The call spans recorded, with their parents' indices.
    fn calls(&self) -> Vec<(usize, SeenSpan)> {
        self.spans().into_iter().enumerate().filter(|(_, span)| span.name == "rpc.call").collect()
    }

    /// The one call span of `method`.
    fn call(&self, method: &str) -> SeenSpan {
        let calls: Vec<_> =
            self.calls().into_iter().filter(|(_, span)| span.field("rpc.method") == Some(method)).collect();
        assert_eq!(calls.len(), 1, "one span for {method}: {calls:#?}");
        calls[0].1.clone()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let span = ctx.span(id).expect("a new span is in the registry");
        let parent = span.parent().and_then(|parent| parent.extensions().get::<Index>().map(|index| index.0));
        let mut spans = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spans.push(SeenSpan { name: attrs.metadata().name(), fields, parent });
        span.extensions_mut().insert(Index(spans.len() - 1));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(index) = span.extensions().get::<Index>().map(|index| index.0) else { return };
        let mut spans = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        values.record(&mut Fields(&mut spans[index].fields));
    }
}

/// Installs a recorder as this thread's subscriber until the guard drops.
fn record() -> (Recorder, tracing::subscriber::DefaultGuard) {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    (recorder, tracing::subscriber::set_default(subscriber))
}

/// A newline-framed TCP client.
struct Client {
    lines: tokio::io::Lines<BufReader<tokio::net::tcp::OwnedReadHalf>>,
    writer: tokio::net::tcp::OwnedWriteHalf,
    local: SocketAddr,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.unwrap();
        let local = stream.local_addr().unwrap();
        let (reader, writer) = stream.into_split();
        Client { lines: BufReader::new(reader).lines(), writer, local }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    async fn call(&mut self, message: Value) -> Value {
        self.send(message).await;
        let line = self.lines.next_line().await.unwrap().expect("an answer");
        serde_json::from_str(&line).unwrap()
    }
}

async fn serve_tcp() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Server::new(TracedImpl.into_rpc()).serve(listener));
    addr
}

#[tokio::test]
async fn each_call_is_a_span_with_the_open_telemetry_fields() {
    let (recorder, _guard) = record();
    let mut client = Client::connect(serve_tcp().await).await;
    let port = client.local.port().to_string();

    let answer = client.call(json!({"jsonrpc": "2.0", "method": "add", "params": [1, 2], "id": 1})).await;
    assert_eq!(answer["result"], 3);
    let add = recorder.call("add");
    assert_eq!(add.field("rpc.system"), Some("jsonrpc"));
    assert_eq!(add.field("rpc.jsonrpc.request_id"), Some("1"));
    assert_eq!(add.field("network.transport"), Some("tcp"));
    assert_eq!(add.field("network.peer.address"), Some("127.0.0.1"));
    assert_eq!(add.field("network.peer.port"), Some(port.as_str()));
    assert_eq!(add.field("rpc.jsonrpc.error_code"), None, "{add:?}");
    assert_eq!(add.field("rpc.jsonrpc.error_message"), None, "{add:?}");

    // A failure, with a string id (given as its value).
    let answer = client.call(json!({"jsonrpc": "2.0", "method": "refuse", "id": "two"})).await;
    assert_eq!(answer["error"]["code"], 7);
    let refuse = recorder.call("refuse");
    assert_eq!(refuse.field("rpc.jsonrpc.request_id"), Some("two"));
    assert_eq!(refuse.field("rpc.jsonrpc.error_code"), Some("7"));
    assert_eq!(refuse.field("rpc.jsonrpc.error_message"), Some("not today"));
    assert_eq!(refuse.field("network.transport"), Some("tcp"));

    // An `async` method's failure is recorded when it ends.
    let answer = client.call(json!({"jsonrpc": "2.0", "method": "later", "params": [-1], "id": null})).await;
    assert_eq!(answer["error"]["code"], 8);
    let later = recorder.call("later");
    assert_eq!(later.field("rpc.jsonrpc.request_id"), Some(""), "a null id is the empty string");
    assert_eq!(later.field("rpc.jsonrpc.error_code"), Some("8"));
    assert_eq!(later.field("rpc.jsonrpc.error_message"), Some("negative"));

    // A notification has no request id; an unknown method is -32601. The
    // notification is handled before the call after it is answered.
    client.send(json!({"jsonrpc": "2.0", "method": "nobody", "params": []})).await;
    let answer = client.call(json!({"jsonrpc": "2.0", "method": "missing", "id": 5})).await;
    assert_eq!(answer["error"]["code"], -32601);
    let notification = recorder.call("nobody");
    assert_eq!(notification.field("rpc.jsonrpc.request_id"), None, "{notification:?}");
    assert_eq!(notification.field("rpc.jsonrpc.error_code"), Some("-32601"));
    assert_eq!(notification.field("rpc.system"), Some("jsonrpc"));
    let missing = recorder.call("missing");
    assert_eq!(missing.field("rpc.jsonrpc.request_id"), Some("5"));
    assert_eq!(missing.field("rpc.jsonrpc.error_code"), Some("-32601"));
    assert_eq!(missing.field("rpc.jsonrpc.error_message"), Some("Method not found"));
    assert!(recorder.spans().iter().all(|span| span.name != "rpc.batch"));
}

#[tokio::test]
async fn a_batch_is_one_span_with_a_child_per_call() {
    let (recorder, _guard) = record();
    let mut client = Client::connect(serve_tcp().await).await;
    let batch = json!([
        {"jsonrpc": "2.0", "method": "add", "params": [2, 3], "id": 10},
        {"jsonrpc": "2.0", "method": "later", "params": [-4], "id": 11},
        {"jsonrpc": "2.0", "method": "refuse", "id": 12},
        {"jsonrpc": "2.0", "method": "later", "params": [4]},
    ]);
    let answer = client.call(batch).await;
    assert_eq!(answer.as_array().map(Vec::len), Some(3), "{answer}");

    let spans = recorder.spans();
    let batches: Vec<usize> = (0..spans.len()).filter(|&i| spans[i].name == "rpc.batch").collect();
    assert_eq!(batches.len(), 1, "{spans:#?}");
    let batch = &spans[batches[0]];
    assert_eq!(batch.field("rpc.system"), Some("jsonrpc"));
    assert_eq!(batch.field("rpc.jsonrpc.batch_len"), Some("4"));
    assert_eq!(batch.field("network.transport"), Some("tcp"));
    assert_eq!(batch.field("network.peer.address"), Some("127.0.0.1"));

    let calls = recorder.calls();
    assert_eq!(calls.len(), 4, "{calls:#?}");
    assert!(calls.iter().all(|(_, call)| call.parent == Some(batches[0])), "{calls:#?}");
    let by_id = |id: Option<&str>| {
        calls.iter().map(|(_, call)| call).find(|call| call.field("rpc.jsonrpc.request_id") == id).unwrap().clone()
    };
    assert_eq!(by_id(Some("10")).field("rpc.jsonrpc.error_code"), None);
    assert_eq!(by_id(Some("11")).field("rpc.jsonrpc.error_code"), Some("8"));
    assert_eq!(by_id(Some("11")).field("rpc.jsonrpc.error_message"), Some("negative"));
    assert_eq!(by_id(Some("12")).field("rpc.jsonrpc.error_code"), Some("7"));
    let notification = by_id(None);
    assert_eq!(notification.field("rpc.method"), Some("later"));
    assert_eq!(notification.field("rpc.jsonrpc.error_code"), None);
}

#[tokio::test]
async fn over_http_the_transport_is_http_with_the_peer_address() {
    let (recorder, _guard) = record();
    let server = Server::new(TracedImpl.into_rpc());
    let listener = Http::default().bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve(listener));
    let body = r#"{"jsonrpc":"2.0","method":"add","params":[4,5],"id":"h"}"#;
    let reply = exchange(addr, &post_json(addr, body, &[])).await;
    assert_eq!(reply.json()["result"], 9);
    let add = recorder.call("add");
    assert_eq!(add.field("rpc.system"), Some("jsonrpc"));
    assert_eq!(add.field("rpc.jsonrpc.request_id"), Some("h"));
    assert_eq!(add.field("network.transport"), Some("http"));
    assert_eq!(add.field("network.peer.address"), Some("127.0.0.1"));
    assert!(add.field("network.peer.port").is_some(), "{add:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_calculator_at_debug_writes_one_line_per_call_with_its_fields() {
    let mut calc = Calculator::spawn_with_env(Wire::Ndjson, &[("RPC_LOG", "debug")]);
    calc.conn.send(r#"{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":1}"#).await;
    calc.conn.send(r#"{"jsonrpc":"2.0","method":"fail","params":[5,"five"],"id":"f"}"#).await;
    calc.conn.send(r#"{"jsonrpc":"2.0","method":"notify_hello","params":[1]}"#).await;
    let exit = calc.finish().await;
    assert!(exit.status.success(), "{}", exit.stderr);
    let lines: Vec<&str> =
        exit.stderr.lines().filter(|line| line.contains("rpc.call{") && line.contains("close")).collect();
    assert_eq!(lines.len(), 3, "one line per call:\n{}", exit.stderr);
    let line = |method: &str| {
        let field = format!("rpc.method=\"{method}\"");
        lines.iter().find(|line| line.contains(&field)).unwrap_or_else(|| panic!("{method}:\n{}", exit.stderr))
    };
    let subtract = line("subtract");
    for field in ["DEBUG", "rpc.system=\"jsonrpc\"", "rpc.jsonrpc.request_id=\"1\"", "network.transport=\"stdio\""] {
        assert!(subtract.contains(field), "{field} in {subtract}");
    }
    assert!(!subtract.contains("error_code"), "{subtract}");
    let fail = line("fail");
    for field in ["rpc.jsonrpc.request_id=\"f\"", "rpc.jsonrpc.error_code=5", "rpc.jsonrpc.error_message=\"five\""] {
        assert!(fail.contains(field), "{field} in {fail}");
    }
    assert!(!line("notify_hello").contains("request_id"), "a notification has no id");
}
