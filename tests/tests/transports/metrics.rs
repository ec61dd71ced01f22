//! Server metrics (`rpc_runtime::dispatch::metrics`) as a Prometheus exporter
//! renders them, parsed from its text format after known calls: exact
//! counts by method and outcome, errors by code, histogram buckets, calls
//! in flight back to 0, an unknown method under the one fixed label, open
//! connections (TCP, HTTP, WebSocket) and subscriptions up and down; and
//! the calculator's
//! `--metrics ADDR`, fetched over HTTP.
//!
//! The recorder is the test thread's default (the facade's global one is
//! process-wide, and other tests serve too), so each test runs on a
//! current-thread runtime: the server's tasks run on the test's thread.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use rpc_runtime::dispatch::metrics::{
    CALLS, CALLS_IN_FLIGHT, CALL_DURATION, DURATION_BUCKETS, ERRORS, OPEN_CONNECTIONS, OPEN_SUBSCRIPTIONS, OTHER_METHOD,
};
use rpc_runtime::dispatch::Engine;
use rpc_runtime::transport::http::Http;
use rpc_runtime::wire::{ErrorObject, REQUEST_CANCELLED, SERVER_OVERLOADED};
use rpc_runtime::{rpc, Context, Limits, Router, Server, SubscriptionSink};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;

use crate::common::{calculator_path, connect, Conn, Wire, HANG_GUARD};
use crate::transports::call_spans::{Traced, TracedImpl};
use crate::web_support::{exchange, post_json, read_reply};

/// Beside the span tests' service (`add`; `refuse`, code 7; `later`,
/// code 8 when negative, after a yield): a call that waits until told,
/// and a subscription.
#[rpc]
pub trait Held {
    /// Answers `true` once the test releases it; -32800 if the call is
    /// cancelled first (its connection ends, say).
    async fn hold(&self, cx: Context) -> Result<bool, ErrorObject>;
    /// A subscription that lasts until the client unsubscribes or leaves.
    #[rpc(unsubscribe = "unwatch")]
    async fn watch(&self, sink: SubscriptionSink<u64>) -> Result<(), ErrorObject>;
}

struct HeldImpl {
    release: Arc<Notify>,
}

impl Held for HeldImpl {
    async fn hold(&self, cx: Context) -> Result<bool, ErrorObject> {
        tokio::select! {
            () = self.release.notified() => Ok(true),
            () = cx.cancelled() => Err(ErrorObject::new(REQUEST_CANCELLED, "cancelled")),
        }
    }

    async fn watch(&self, sink: SubscriptionSink<u64>) -> Result<(), ErrorObject> {
        sink.closed().await;
        Ok(())
    }
}

/// Both services in one router; `release` lets `hold` calls answer.
fn router(release: &Arc<Notify>) -> Router {
    let mut router = TracedImpl.into_rpc();
    router.merge(HeldImpl { release: Arc::clone(release) }.into_rpc()).expect("no shared names");
    router
}

/// One sample line of Prometheus' text format.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of a page in Prometheus' text format (version 0.0.4):
/// `name{label="value",...} value`, comments and blank lines skipped.
fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| parse_line(line).unwrap_or_else(|| panic!("not a sample line: {line:?}")))
        .collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_owned();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(inside) = rest.strip_prefix('{') {
        rest = inside;
        loop {
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = rest.find('=')?;
            let key = rest[..eq].trim_start_matches(',').to_owned();
            let (value, after) = quoted(rest[eq + 1..].strip_prefix('"')?)?;
            labels.insert(key, value);
            rest = after.strip_prefix(',').unwrap_or(after);
        }
    }
    let value = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        number => number.parse().ok()?,
    };
    Some(Sample { name, labels, value })
}

/// A label value up to its closing quote (escapes `\\`, `\"`, `\n`
/// undone), and what follows the quote.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}

/// The samples of one page, looked up by name and exact labels.
struct Page(Vec<Sample>);

impl Page {
    /// The value of the sample `name{labels}` (exactly these labels).
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let wanted: BTreeMap<String, String> =
            labels.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect();
        self.0.iter().find(|sample| sample.name == name && sample.labels == wanted).map(|sample| sample.value)
    }

    /// [`Page::get`], which must be there.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or_else(|| panic!("no {name}{labels:?} in {:#?}", self.0))
    }

    /// Every sample of `name`.
    fn all(&self, name: &str) -> Vec<&Sample> {
        self.0.iter().filter(|sample| sample.name == name).collect()
    }
}

/// A Prometheus recorder as the exporter makes it, with the suggested
/// buckets for call durations.
fn prometheus() -> PrometheusRecorder {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(CALL_DURATION.to_owned()), DURATION_BUCKETS)
        .expect("buckets")
        .build_recorder()
}

fn page(handle: &PrometheusHandle) -> Page {
    Page(parse(&handle.render()))
}

/// Waits (yielding to the server's tasks) until `value` of the current
/// page is `expected`; panics with the page after the hang guard.
async fn eventually(handle: &PrometheusHandle, name: &str, labels: &[(&str, &str)], expected: f64) {
    let waited = tokio::time::timeout(HANG_GUARD, async {
        while page(handle).get(name, labels) != Some(expected) {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "{name}{labels:?} never became {expected}: {}", handle.render());
}

async fn serve_tcp(release: &Arc<Notify>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Server::new(router(release)).serve(listener));
    addr
}

#[tokio::test]
async fn calls_are_counted_by_method_outcome_and_error_code_with_their_durations() {
    let recorder = prometheus();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let mut client = connect(serve_tcp(&Arc::new(Notify::new())).await, Wire::Ndjson).await;

    for id in 0..3 {
        client.call(format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{id},1],"id":{id}}}"#)).await;
    }
    client.call(r#"{"jsonrpc":"2.0","method":"refuse","id":"r"}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"later","params":[-1],"id":4}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"later","params":[2],"id":5}"#).await;
    // Two made-up names: one label between them, never the names sent.
    client.call(r#"{"jsonrpc":"2.0","method":"nope","id":6}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"made_up_42","params":[],"id":7}"#).await;
    // A notification counts as a call; each call of a batch counts.
    client.send(r#"{"jsonrpc":"2.0","method":"add","params":[1,1]}"#).await;
    let batch = client
        .call(
            r#"[{"jsonrpc":"2.0","method":"add","params":[2,2],"id":8},
                {"jsonrpc":"2.0","method":"refuse","id":9},
                {"jsonrpc":"2.0","method":"later","params":[-3],"id":10},
                {"jsonrpc":"2.0","method":"nope","id":11}]"#,
        )
        .await;
    assert_eq!(serde_json::from_str::<serde_json::Value>(&batch).unwrap().as_array().map(Vec::len), Some(4));

    let page = page(&handle);
    let calls = |method: &str, outcome: &str| page.get(CALLS, &[("method", method), ("outcome", outcome)]);
    assert_eq!(calls("add", "ok"), Some(5.0), "3 calls, the notification, the batch's");
    // Every method's series are there from the start, at 0 until used.
    assert_eq!(calls("add", "error"), Some(0.0), "{:#?}", page.all(CALLS));
    assert_eq!(calls("hold", "ok"), Some(0.0));
    assert_eq!(calls("refuse", "error"), Some(2.0));
    assert_eq!(calls("later", "ok"), Some(1.0));
    assert_eq!(calls("later", "error"), Some(2.0));
    assert_eq!(calls(OTHER_METHOD, "error"), Some(3.0));
    let errors = |method: &str, code: &str| page.get(ERRORS, &[("method", method), ("code", code)]);
    assert_eq!(errors("refuse", "7"), Some(2.0));
    assert_eq!(errors("later", "8"), Some(2.0));
    assert_eq!(errors(OTHER_METHOD, "-32601"), Some(3.0));
    assert_eq!(page.all(ERRORS).len(), 3, "{:#?}", page.all(ERRORS));
    // The names sent are nowhere: only the server's methods and `_OTHER`.
    let known = ["add", "refuse", "later", "hold", "watch", "unwatch", "rpc.discover", OTHER_METHOD];
    for sample in &page.0 {
        if let Some(method) = sample.labels.get("method") {
            assert!(known.contains(&method.as_str()), "{sample:?}");
        }
    }

    // The histogram: every bucket, cumulative, all calls in `+Inf`.
    let count = format!("{CALL_DURATION}_count");
    assert_eq!(page.value(&count, &[("method", "add")]), 5.0);
    assert_eq!(page.value(&count, &[("method", "later")]), 3.0);
    assert_eq!(page.value(&count, &[("method", OTHER_METHOD)]), 3.0);
    let bucket = format!("{CALL_DURATION}_bucket");
    let mut last = 0.0;
    for bound in DURATION_BUCKETS {
        let cumulative = page.value(&bucket, &[("method", "add"), ("le", &bound.to_string())]);
        assert!(cumulative >= last, "buckets are cumulative: {:#?}", page.all(&bucket));
        last = cumulative;
    }
    assert_eq!(page.value(&bucket, &[("method", "add"), ("le", "+Inf")]), 5.0);
    assert!(page.value(&format!("{CALL_DURATION}_sum"), &[("method", "add")]) > 0.0);

    for method in ["add", "refuse", "later", OTHER_METHOD] {
        assert_eq!(page.get(CALLS_IN_FLIGHT, &[("method", method)]), Some(0.0), "{method}");
    }
}

#[tokio::test]
async fn a_call_is_in_flight_until_its_answer_is_ready() {
    let recorder = prometheus();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let release = Arc::new(Notify::new());
    let mut client = connect(serve_tcp(&release).await, Wire::Ndjson).await;

    client.send(r#"{"jsonrpc":"2.0","method":"hold","id":1}"#).await;
    client.send(r#"{"jsonrpc":"2.0","method":"hold","id":2}"#).await;
    eventually(&handle, CALLS_IN_FLIGHT, &[("method", "hold")], 2.0).await;
    assert_eq!(page(&handle).get(CALLS, &[("method", "hold"), ("outcome", "ok")]), Some(0.0));

    release.notify_one();
    client.recv().await;
    assert_eq!(page(&handle).value(CALLS_IN_FLIGHT, &[("method", "hold")]), 1.0);
    release.notify_one();
    client.recv().await;
    let page = page(&handle);
    assert_eq!(page.value(CALLS_IN_FLIGHT, &[("method", "hold")]), 0.0);
    assert_eq!(page.value(CALLS, &[("method", "hold"), ("outcome", "ok")]), 2.0);
    assert_eq!(page.value(&format!("{CALL_DURATION}_count"), &[("method", "hold")]), 2.0);

    // The connection goes away: its running call sees the cancellation and
    // ends with -32800, which is what it counts as.
    client.send(r#"{"jsonrpc":"2.0","method":"hold","id":3}"#).await;
    eventually(&handle, CALLS_IN_FLIGHT, &[("method", "hold")], 1.0).await;
    drop(client);
    eventually(&handle, CALLS_IN_FLIGHT, &[("method", "hold")], 0.0).await;
    let page = self::page(&handle);
    assert_eq!(page.value(CALLS, &[("method", "hold"), ("outcome", "error")]), 1.0);
    assert_eq!(page.value(ERRORS, &[("method", "hold"), ("code", &REQUEST_CANCELLED.to_string())]), 1.0);
    assert_eq!(page.value(&format!("{CALL_DURATION}_count"), &[("method", "hold")]), 3.0);
}

#[tokio::test]
async fn a_call_dropped_before_its_answer_is_cancelled_and_one_turned_away_is_an_error() {
    let recorder = prometheus();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let engine = Engine::new(router(&Arc::new(Notify::new())), Limits::default());
    let hold = br#"{"jsonrpc":"2.0","method":"hold","id":1}"#;
    let in_flight = || page(&handle).value(CALLS_IN_FLIGHT, &[("method", "hold")]);

    // Started, then dropped (as a server drops the answer of an HTTP
    // client that left): no answer, no duration.
    let pending = engine.process(hold, &Context::new(), &mut Vec::new()).expect("an async call");
    assert_eq!(in_flight(), 1.0);
    let mut run = Box::pin(pending.run());
    let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(run.as_mut().poll(cx))).await;
    assert!(polled.is_pending());
    drop(run);
    assert_eq!(in_flight(), 0.0);
    assert_eq!(page(&handle).value(CALLS, &[("method", "hold"), ("outcome", "cancelled")]), 1.0);
    let durations = page(&handle).get(&format!("{CALL_DURATION}_count"), &[("method", "hold")]);
    assert_eq!(durations.unwrap_or(0.0), 0.0, "no duration for a call never answered");

    // Turned away at the concurrency limit before it ran: -32000.
    let pending = engine.process(hold, &Context::new(), &mut Vec::new()).expect("an async call");
    assert_eq!(in_flight(), 1.0);
    let answer = pending.reject(&ErrorObject::new(SERVER_OVERLOADED, "busy"));
    assert!(String::from_utf8(answer).unwrap().contains("-32000"));
    assert_eq!(in_flight(), 0.0);
    let page = page(&handle);
    assert_eq!(page.value(CALLS, &[("method", "hold"), ("outcome", "error")]), 1.0);
    assert_eq!(page.value(ERRORS, &[("method", "hold"), ("code", "-32000")]), 1.0);
}

#[tokio::test]
async fn open_connections_and_subscriptions_go_up_and_down() {
    let recorder = prometheus();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let addr = serve_tcp(&Arc::new(Notify::new())).await;
    let tcp = [("transport", "tcp")];
    let watch = [("method", "watch")];

    let mut first = connect(addr, Wire::Ndjson).await;
    let mut second = connect(addr, Wire::Ndjson).await;
    eventually(&handle, OPEN_CONNECTIONS, &tcp, 2.0).await;

    let subscribe = |id: u32| format!(r#"{{"jsonrpc":"2.0","method":"watch","id":{id}}}"#);
    let id = subscription_id(&first.call(subscribe(1)).await);
    subscription_id(&first.call(subscribe(2)).await);
    subscription_id(&second.call(subscribe(3)).await);
    assert_eq!(page(&handle).value(OPEN_SUBSCRIPTIONS, &watch), 3.0);

    let unsubscribed = first.call(format!(r#"{{"jsonrpc":"2.0","method":"unwatch","params":[{id}],"id":4}}"#)).await;
    assert!(unsubscribed.contains(r#""result":true"#), "{unsubscribed}");
    eventually(&handle, OPEN_SUBSCRIPTIONS, &watch, 2.0).await;

    // Leaving ends the connection's subscriptions with it.
    first.close().await;
    assert!(first.rest().await.iter().all(|message| !message.contains(r#""id""#)));
    eventually(&handle, OPEN_CONNECTIONS, &tcp, 1.0).await;
    eventually(&handle, OPEN_SUBSCRIPTIONS, &watch, 1.0).await;
    second.close().await;
    second.rest().await;
    eventually(&handle, OPEN_CONNECTIONS, &tcp, 0.0).await;
    eventually(&handle, OPEN_SUBSCRIPTIONS, &watch, 0.0).await;
    // Each subscribe call counts as a call too.
    assert_eq!(page(&handle).value(CALLS, &[("method", "watch"), ("outcome", "ok")]), 3.0);
}

#[tokio::test]
async fn http_and_websocket_connections_are_counted_by_their_transport() {
    let recorder = prometheus();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let listener = Http::default().bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Server::new(router(&Arc::new(Notify::new()))).serve(listener));
    let (http, ws) = ([("transport", "http")], [("transport", "ws")]);

    // A kept-alive HTTP connection counts until it closes; its calls too.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let call = post_json(addr, r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}"#, &[]);
    stream.write_all(call.as_bytes()).await.unwrap();
    assert_eq!(read_reply(&mut stream).await.json()["result"], 3);
    eventually(&handle, OPEN_CONNECTIONS, &http, 1.0).await;
    assert_eq!(page(&handle).value(CALLS, &[("method", "add"), ("outcome", "ok")]), 1.0);
    drop(stream);
    eventually(&handle, OPEN_CONNECTIONS, &http, 0.0).await;

    // A WebSocket is an HTTP connection until the upgrade, then a `ws` one.
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut socket, _) = tokio_tungstenite::client_async(format!("ws://{addr}/"), stream).await.expect("handshake");
    eventually(&handle, OPEN_CONNECTIONS, &ws, 1.0).await;
    eventually(&handle, OPEN_CONNECTIONS, &http, 0.0).await;
    socket.send(Message::text(r#"{"jsonrpc":"2.0","method":"add","params":[2,2],"id":2}"#)).await.unwrap();
    let answer = socket.next().await.expect("an answer").unwrap();
    assert!(answer.to_text().unwrap().contains(r#""result":4"#), "{answer:?}");
    socket.close(None).await.unwrap();
    drop(socket);
    eventually(&handle, OPEN_CONNECTIONS, &ws, 0.0).await;
    assert_eq!(page(&handle).value(CALLS, &[("method", "add"), ("outcome", "ok")]), 2.0);
}

/// The subscription id of a subscribe call's answer.
fn subscription_id(answer: &str) -> u64 {
    let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
    answer["result"].as_u64().unwrap_or_else(|| panic!("a subscription id: {answer}"))
}

#[test]
fn the_parser_reads_labels_escapes_and_special_values() {
    let page = Page(parse(
        "# HELP x_total Things.\n# TYPE x_total counter\nx_total{a=\"1\",b=\"q\\\"uote\\\\\"} 3\nx_bucket{le=\"+Inf\"} 4\nup 1\nx{} NaN\n",
    ));
    assert_eq!(page.get("x_total", &[("a", "1"), ("b", "q\"uote\\")]), Some(3.0));
    assert_eq!(page.get("x_bucket", &[("le", "+Inf")]), Some(4.0));
    assert_eq!(page.get("up", &[]), Some(1.0));
    assert!(page.get("x", &[]).is_some_and(f64::is_nan));
    assert_eq!(page.0.len(), 4);
}

/// The calculator's `--metrics` page, fetched over HTTP as Prometheus
/// would, after calls over TCP.
#[tokio::test(flavor = "multi_thread")]
async fn the_calculator_serves_its_metrics_in_prometheus_format() {
    let (_child, addrs) = crate::client_support::spawn_announcing(
        calculator_path(),
        &["--tcp", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
        &["listening on ", "metrics on http://"],
    )
    .await;
    let tcp: SocketAddr = addrs[0].parse().unwrap();
    let metrics: SocketAddr = addrs[1].strip_suffix("/metrics").unwrap().parse().unwrap();

    let mut client: Conn = connect(tcp, Wire::Ndjson).await;
    client.call(r#"{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":1}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2},"id":2}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"fail","params":[5,"five"],"id":3}"#).await;
    client.call(r#"{"jsonrpc":"2.0","method":"no_such_method","id":4}"#).await;

    let reply =
        exchange(metrics, &format!("GET /metrics HTTP/1.1\r\nHost: {metrics}\r\nConnection: close\r\n\r\n")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.header("content-type").is_some_and(|kind| kind.starts_with("text/plain")));
    assert!(reply.body.contains(&format!("# TYPE {CALLS} counter")), "{}", reply.body);
    assert!(reply.body.contains(&format!("# HELP {CALL_DURATION}")), "described: {}", reply.body);
    let page = Page(parse(&reply.body));
    assert_eq!(page.value(CALLS, &[("method", "subtract"), ("outcome", "ok")]), 2.0);
    assert_eq!(page.value(CALLS, &[("method", "fail"), ("outcome", "error")]), 1.0);
    assert_eq!(page.value(ERRORS, &[("method", "fail"), ("code", "5")]), 1.0);
    assert_eq!(page.value(ERRORS, &[("method", OTHER_METHOD), ("code", "-32601")]), 1.0);
    assert_eq!(page.value(&format!("{CALL_DURATION}_bucket"), &[("method", "subtract"), ("le", "+Inf")]), 2.0);
    assert_eq!(page.value(&format!("{CALL_DURATION}_count"), &[("method", "subtract")]), 2.0);
    assert_eq!(page.all(&format!("{CALL_DURATION}_bucket")).len() % (DURATION_BUCKETS.len() + 1), 0);
    assert_eq!(page.value(CALLS_IN_FLIGHT, &[("method", "subtract")]), 0.0);
    assert_eq!(page.value(OPEN_CONNECTIONS, &[("transport", "tcp")]), 1.0);

    let missing = exchange(metrics, &format!("GET /other HTTP/1.1\r\nHost: {metrics}\r\n\r\n")).await;
    assert_eq!(missing.status, 404);
}
