//! HTTP/2 (h2c with prior knowledge) on the HTTP listener's port, with
//! real clients: `curl --http2-prior-knowledge` (skipped without curl
//! unless `RPC_REQUIRE_INTEROP=1`), hyper's HTTP/2 client, the h2 crate's
//! client (to read the server's settings) and our own client under a typed
//! client. Calls, batches, notifications and errors answer as on
//! HTTP/1.1; the limits hold (body, streams per connection, a connection
//! that sends no request, idle connections, `max_connections`, header
//! size, write timeout), graceful shutdown sends `GOAWAY` and lets the
//! streams in progress finish; HTTP/1.1 and WebSocket upgrades are still
//! served on the same port, and so is MCP's Streamable HTTP.

use crate::web_support;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rpc_runtime::http::{Request, StatusCode, Version};
use rpc_runtime::mcp::{McpHttp, McpServer};
use rpc_runtime::transport::http::HttpConnect;
use rpc_runtime::{rpc, Peer, Server};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;
use web_support::*;

/// A service whose calls wait for the test's permits, counting how many
/// run at once; and whose answers can be large.
#[rpc]
pub trait Gate {
    /// Waits for a permit; answers how many calls ran at once, at most.
    async fn hold(&self) -> u64;

    /// An answer of `len` bytes of `x`.
    fn big(&self, len: usize) -> String;
}

#[derive(Clone)]
struct GateImpl {
    inside: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    permits: Arc<Semaphore>,
}

impl Default for GateImpl {
    fn default() -> Self {
        GateImpl { inside: Arc::default(), most: Arc::default(), permits: Arc::new(Semaphore::new(0)) }
    }
}

impl Gate for GateImpl {
    async fn hold(&self) -> u64 {
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.permits.acquire().await.expect("open").forget();
        self.inside.fetch_sub(1, Ordering::SeqCst);
        self.most.load(Ordering::SeqCst) as u64
    }

    fn big(&self, len: usize) -> String {
        "x".repeat(len)
    }
}

/// Waits until `done` holds (polled every few milliseconds), failing the
/// test after [`HANG_GUARD`].
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(HANG_GUARD, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never happened: {what}"));
}

type Sender = http2::SendRequest<Full<Bytes>>;

/// hyper's HTTP/2 client on a new connection to `addr`, with prior
/// knowledge.
async fn h2(addr: SocketAddr) -> Sender {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, connection) =
        http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.expect("h2 handshake");
    tokio::spawn(connection);
    sender
}

/// An answer read whole: status, headers, body.
struct H2Reply {
    status: StatusCode,
    headers: rpc_runtime::http::HeaderMap,
    body: String,
}

impl H2Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }
}

/// A request to `addr` over `sender`: `POST` of `body` as JSON unless
/// `method` or `headers` say otherwise.
async fn send(sender: &mut Sender, addr: SocketAddr, method: &str, body: &str, headers: &[(&str, &str)]) -> H2Reply {
    try_send(sender, addr, method, body, headers).await.unwrap()
}

/// [`send`], or hyper's error.
async fn try_send(
    sender: &mut Sender,
    addr: SocketAddr,
    method: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> Result<H2Reply, hyper::Error> {
    let mut request = Request::builder().method(method).uri(format!("http://{addr}/"));
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
        request = request.header("content-type", "application/json");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let response = tokio::time::timeout(HANG_GUARD, sender.send_request(request)).await.expect("answered")?;
    assert_eq!(response.version(), Version::HTTP_2);
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(H2Reply { status: parts.status, headers: parts.headers, body: String::from_utf8(body.to_vec()).unwrap() })
}

async fn post(sender: &mut Sender, addr: SocketAddr, body: &str) -> H2Reply {
    send(sender, addr, "POST", body, &[]).await
}

const READ: &str = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;

#[tokio::test]
async fn curl_speaks_h2c_with_prior_knowledge_and_http1_on_the_same_port() {
    if !tests::interop::require(&["curl"], "curl_speaks_h2c_with_prior_knowledge_and_http1_on_the_same_port") {
        return;
    }
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().max_body(256)).await;
    // curl: the body, then a line with the HTTP version and the status.
    let curl = |args: &'static [&'static str], body: String| async move {
        let data: &[&str] = match body.is_empty() {
            true => &[],
            false => &["--data-binary", &body],
        };
        let output = tokio::process::Command::new("curl")
            .args(["-sS", "-o", "-", "-w", "\n%{http_version} %{http_code}"])
            .args(args)
            .args(data)
            .arg(format!("http://{addr}/"))
            .output()
            .await
            .expect("curl runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "curl {args:?} {:.40}: {stderr}", body);
        let text = String::from_utf8(output.stdout).unwrap();
        let (body, last) = text.rsplit_once('\n').unwrap();
        let (version, status) = last.split_once(' ').unwrap();
        (version.to_owned(), status.parse::<u16>().unwrap(), body.to_owned())
    };
    const H2: &[&str] = &["--http2-prior-knowledge", "-H", "content-type: application/json"];
    let (version, status, body) = curl(H2, READ.to_owned()).await;
    assert_eq!((version.as_str(), status), ("2", 200));
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"jsonrpc": "2.0", "result": "value of k", "id": 1})
    );

    let batch = r#"[{"jsonrpc":"2.0","method":"read","params":["a"],"id":1},{"jsonrpc":"2.0","method":"nope","id":2}]"#;
    let (version, status, body) = curl(H2, batch.to_owned()).await;
    assert_eq!((version.as_str(), status), ("2", 200));
    let answers: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answers[0]["result"], "value of a");
    assert_eq!(answers[1]["error"]["code"], -32601, "{body}");

    let notification = r#"{"jsonrpc":"2.0","method":"read","params":["k"]}"#;
    assert_eq!(curl(H2, notification.to_owned()).await, ("2".to_owned(), 204, String::new()));

    // The HTTP answers are HTTP/1.1's. (An answer given before the body
    // is read, as 415 and 413 are, ends the stream with RST_STREAM
    // NO_ERROR, which RFC 9113 section 8.1 allows and hyper's client
    // takes, but which curl 7.88 reports as error 92: those are checked
    // with hyper's client below.)
    const H2_GET: &[&str] = &["--http2-prior-knowledge"];
    let (version, status, body) = curl(H2_GET, String::new()).await;
    assert_eq!((version.as_str(), status), ("2", 405));
    assert!(body.contains("POST"), "{body}");

    // HTTP/1.1 on the same port.
    const H1: &[&str] = &["--http1.1", "-H", "content-type: application/json"];
    let (version, status, body) = curl(H1, READ.to_owned()).await;
    assert_eq!((version.as_str(), status), ("1.1", 200));
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["result"], "value of k");
}

#[tokio::test]
async fn hyper_h2_client_gets_calls_batches_notifications_and_errors_as_on_http1() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().max_body(256)).await;
    let mut sender = h2(addr).await;
    let reply = post(&mut sender, addr, READ).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers.get("content-type").unwrap(), "application/json");
    assert_eq!(reply.json(), json!({"jsonrpc": "2.0", "result": "value of k", "id": 1}));

    let batch = r#"[{"jsonrpc":"2.0","method":"read","params":["a"],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":2}]"#;
    let reply = post(&mut sender, addr, batch).await;
    assert_eq!(
        reply.json(),
        json!([{"jsonrpc": "2.0", "result": "value of a", "id": 1}, {"jsonrpc": "2.0", "result": 1, "id": 2}])
    );

    let reply = post(&mut sender, addr, r#"[{"jsonrpc":"2.0","method":"read","params":["k"]}]"#).await;
    assert_eq!((reply.status, reply.body.as_str()), (StatusCode::NO_CONTENT, ""));

    let reply = post(&mut sender, addr, "{not json").await;
    assert_eq!(reply.json()["error"]["code"], -32700);

    let reply = send(&mut sender, addr, "GET", "", &[]).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(reply.headers.get("allow").unwrap(), "POST");

    let long = format!(r#"{{"jsonrpc":"2.0","method":"read","params":["{}"],"id":1}}"#, "k".repeat(300));
    let reply = post(&mut sender, addr, &long).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(reply.body.contains("256 bytes"), "{}", reply.body);

    let reply = send(&mut sender, addr, "POST", READ, &[("content-type", "text/plain")]).await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let reply = send(&mut sender, addr, "POST", READ, &[("origin", "https://evil.example")]).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    // Same-origin: HTTP/2 names the host in `:authority`, not `Host`.
    let own = format!("http://{addr}");
    assert_eq!(send(&mut sender, addr, "POST", READ, &[("origin", &own)]).await.status, 200);

    // All on one connection, still open.
    assert_eq!(post(&mut sender, addr, READ).await.status, 200);
}

#[tokio::test]
async fn a_typed_client_multiplexes_its_calls_on_one_h2_connection() {
    let (server, _) = vault();
    // The hook sees each request's HTTP version and the client's port.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let server = server.on_connect(move |info, cx| {
        let parts = info.part::<rpc_runtime::http::request::Parts>().expect("HTTP parts");
        log.lock().unwrap().push((parts.version, info.peer_addr().expect("a peer").port()));
        Ok(cx)
    });
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let peer =
        Peer::builder().connect(HttpConnect::new(format!("http://{addr}/")).http2_prior_knowledge()).await.unwrap();
    let vault = VaultClient::new(peer);
    assert_eq!(vault.read("x".into()).await.unwrap(), "value of x");
    let (a, b, c) = tokio::join!(vault.sleep(50), vault.sleep(40), vault.read("y".into()));
    assert_eq!((a.unwrap(), b.unwrap(), c.unwrap().as_str()), (50, 40, "value of y"));
    let mut batch = vault.batch();
    let (one, two) = (batch.read("1".into()), batch.sleep(1));
    batch.send().await.unwrap();
    assert_eq!((one.await.unwrap().as_str(), two.await.unwrap()), ("value of 1", 1));
    // A handler's error comes back as the error it is.
    let denied = vault.wipe(true).await.unwrap_err();
    assert!(denied.to_string().contains("admin"), "{denied}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.iter().all(|(version, _)| *version == Version::HTTP_2), "{seen:?}");
    assert!(seen.iter().all(|(_, port)| *port == seen[0].1), "one connection: {seen:?}");
}

#[tokio::test]
async fn http1_and_websocket_are_still_served_beside_an_h2_connection() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut sender = h2(addr).await;
    assert_eq!(post(&mut sender, addr, READ).await.status, 200);
    let reply = exchange(addr, &post_json(addr, READ, &[])).await;
    assert_eq!((reply.status, reply.json()["result"].clone()), (200, json!("value of k")));
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/"), stream).await.expect("upgraded");
    ws.send(Message::text(READ)).await.unwrap();
    let answer = tokio::time::timeout(HANG_GUARD, ws.next()).await.expect("answered").unwrap().unwrap();
    let answer: Value = serde_json::from_str(answer.to_text().unwrap()).unwrap();
    assert_eq!(answer["result"], "value of k");
    assert_eq!(post(&mut sender, addr, READ).await.status, 200);
}

#[tokio::test]
async fn an_h2_connection_runs_at_most_max_concurrent_streams_calls_at_once() {
    let gate = GateImpl::default();
    let server = Server::new(gate.clone().into_rpc());
    let (addr, _stop, _task) = serve(&server, Http::default().max_concurrent_streams(2)).await;
    // The server announces the limit (the h2 crate's client reads it).
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut client, connection) = h2::client::handshake(stream).await.unwrap();
    tokio::spawn(connection);
    let request = Request::post(format!("http://{addr}/")).header("content-type", "application/json").body(()).unwrap();
    let (response, mut body) = client.send_request(request, false).unwrap();
    body.send_data(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"big","params":[1],"id":1}"#), true).unwrap();
    assert_eq!(response.await.unwrap().status(), 200);
    assert_eq!(client.current_max_send_streams(), 2);
    // Five calls at once on a new connection of hyper's client: two run
    // at once. The client waits for a stream once it knows the limit;
    // streams it opened before are refused (`REFUSED_STREAM`, nothing
    // run, safe to retry).
    let sender = h2(addr).await;
    let mut calls = Vec::new();
    for id in 0..5 {
        let mut sender = sender.clone();
        calls.push(tokio::spawn(async move {
            let body = format!(r#"{{"jsonrpc":"2.0","method":"hold","id":{id}}}"#);
            try_send(&mut sender, addr, "POST", &body, &[]).await
        }));
    }
    until("two calls running", || gate.inside.load(Ordering::SeqCst) == 2).await;
    gate.permits.add_permits(5);
    let mut answered = 0;
    for call in calls {
        match call.await.unwrap() {
            Ok(reply) => {
                assert!(reply.json()["result"].as_u64().unwrap() <= 2, "{}", reply.body);
                answered += 1;
            }
            Err(err) => {
                let reason = std::error::Error::source(&err).and_then(|err| err.downcast_ref::<h2::Error>());
                assert_eq!(reason.and_then(h2::Error::reason), Some(h2::Reason::REFUSED_STREAM), "{err}");
            }
        }
    }
    assert!(answered >= 2, "{answered} answered");
    assert_eq!(gate.most.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_connection_that_sends_no_request_is_closed_after_the_header_timeout() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().header_timeout(Duration::from_millis(200))).await;
    // Nothing at all; part of the HTTP/2 preface; the preface and nothing
    // more (no SETTINGS, no stream).
    for sent in [&b""[..], b"PRI * HTTP/2.0\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(sent).await.unwrap();
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "open after sending {:?}", String::from_utf8_lossy(sent));
    }
    // Meanwhile the server serves.
    assert_eq!(post(&mut h2(addr).await, addr, READ).await.status, 200);
}

#[tokio::test]
async fn an_idle_h2_connection_is_shut_down_and_the_client_makes_a_new_one() {
    let (server, _) = vault();
    let timeout = Duration::from_millis(300);
    let (addr, _stop, _task) = serve(&server, Http::default().header_timeout(timeout)).await;
    let mut sender = h2(addr).await;
    // A call running longer than the timeout holds the connection open.
    let slow = post(&mut sender, addr, r#"{"jsonrpc":"2.0","method":"sleep","params":[900],"id":1}"#).await;
    assert_eq!(slow.json()["result"], 900);
    assert_eq!(post(&mut sender, addr, READ).await.status, 200, "open after a long call");
    // Then, idle: the server's GOAWAY closes it.
    until("the idle connection closed", || sender.is_closed()).await;
    // Our client makes a new connection when its one was closed.
    let peer =
        Peer::builder().connect(HttpConnect::new(format!("http://{addr}/")).http2_prior_knowledge()).await.unwrap();
    let vault = VaultClient::new(peer);
    assert_eq!(vault.read("a".into()).await.unwrap(), "value of a");
    tokio::time::sleep(timeout * 3).await;
    assert_eq!(vault.read("b".into()).await.unwrap(), "value of b");
}

#[tokio::test]
async fn max_connections_counts_h2_connections() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server.max_connections(1), Http::default()).await;
    let mut first = h2(addr).await;
    assert_eq!(post(&mut first, addr, READ).await.status, 200);
    let reply = post(&mut h2(addr).await, addr, READ).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(reply.body.contains("max_connections"), "{}", reply.body);
    assert_eq!(exchange(addr, &post_json(addr, READ, &[])).await.status, 503);
    // Once the first is gone, its place is free again.
    drop(first);
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            if exchange(addr, &post_json(addr, READ, &[])).await.status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the place was given back");
}

#[tokio::test]
async fn a_header_list_over_the_limit_is_refused() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut sender = h2(addr).await;
    let big = "b".repeat(80 * 1024);
    let request = Request::post(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .header("x-big", big.as_str())
        .body(Full::new(Bytes::from_static(READ.as_bytes())))
        .unwrap();
    match tokio::time::timeout(HANG_GUARD, sender.send_request(request)).await.expect("answered") {
        Ok(response) => assert_eq!(response.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
        Err(err) => panic!("refused without an answer: {err}"),
    }
    // The connection goes on.
    assert_eq!(post(&mut h2(addr).await, addr, READ).await.status, 200);
}

#[tokio::test]
async fn graceful_shutdown_sends_goaway_and_lets_running_streams_finish() {
    let gate = GateImpl::default();
    let server = Server::new(gate.clone().into_rpc());
    let (addr, stop, task) = serve(&server, Http::default()).await;
    let sender = h2(addr).await;
    let running = {
        let mut sender = sender.clone();
        tokio::spawn(async move { post(&mut sender, addr, r#"{"jsonrpc":"2.0","method":"hold","id":1}"#).await })
    };
    until("the call running", || gate.inside.load(Ordering::SeqCst) == 1).await;
    stop.send(()).unwrap();
    // GOAWAY: once the client has it, it opens no new stream on this
    // connection.
    let mut closing = sender.clone();
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            let request = Request::post(format!("http://{addr}/"))
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"big","params":[1],"id":2}"#)))
                .unwrap();
            if closing.send_request(request).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("GOAWAY seen");
    gate.permits.add_permits(1);
    let reply = running.await.unwrap();
    assert_eq!(reply.json()["result"], 1);
    tokio::time::timeout(HANG_GUARD, task).await.expect("stopped").unwrap().unwrap();
    assert!(TcpStream::connect(addr).await.is_err(), "no longer listening");
}

/// A socket whose reads stop (pending forever) once `stalled` is set: a
/// client that stops reading.
struct Stalling {
    inner: TokioIo<TcpStream>,
    stalled: Arc<AtomicBool>,
}

impl hyper::rt::Read for Stalling {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.stalled.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Stalling {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[tokio::test]
async fn an_h2_client_that_stops_reading_is_let_go_after_the_write_timeout() {
    let server =
        Server::new(GateImpl::default().into_rpc()).max_connections(1).write_timeout(Some(Duration::from_millis(300)));
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let stalled = Arc::new(AtomicBool::new(false));
    let io = Stalling { inner: TokioIo::new(TcpStream::connect(addr).await.unwrap()), stalled: Arc::clone(&stalled) };
    // Windows large enough that HTTP/2's flow control never stops the
    // server: only the socket does.
    let (mut sender, connection) = http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(1 << 30)
        .initial_connection_window_size(1 << 30)
        .handshake(io)
        .await
        .unwrap();
    tokio::spawn(connection);
    let reply = post(&mut sender, addr, r#"{"jsonrpc":"2.0","method":"big","params":[10],"id":1}"#).await;
    assert_eq!(reply.json()["result"], "xxxxxxxxxx");
    stalled.store(true, Ordering::SeqCst);
    // 16 MiB of answers, never read.
    for id in 0..4 {
        let mut sender = sender.clone();
        let body = format!(r#"{{"jsonrpc":"2.0","method":"big","params":[{}],"id":{id}}}"#, 4 << 20);
        tokio::spawn(async move { post(&mut sender, addr, &body).await });
    }
    // The connection holds the only place until the write timeout frees it.
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            if exchange(addr, &post_json(addr, r#"{"jsonrpc":"2.0","method":"big","params":[1],"id":9}"#, &[]))
                .await
                .status
                == 200
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the stalled connection was let go");
}

/// One MCP tool.
#[rpc]
pub trait Calc {
    /// `a - b`.
    fn subtract(&self, a: i64, b: i64) -> i64;
}

struct CalcImpl;

impl Calc for CalcImpl {
    fn subtract(&self, a: i64, b: i64) -> i64 {
        a - b
    }
}

#[tokio::test]
async fn mcp_streamable_http_is_served_over_h2c() {
    let server = McpServer::new(CalcImpl.into_rpc()).name("calc").into_server();
    let (listener, addr) = listener().await;
    tokio::spawn(server.serve(McpHttp::default().listener(listener)));
    let mut sender = h2(addr).await;
    let accept = ("accept", "application/json, text/event-stream");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h2", "version": "1"}}});
    let reply = send(&mut sender, addr, "POST", &initialize.to_string(), &[accept]).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body.contains(r#""protocolVersion":"2025-11-25""#), "{}", reply.body);
    let session = reply.headers.get("mcp-session-id").expect("a session").to_str().unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = send(&mut sender, addr, "POST", initialized, &[accept, ("mcp-session-id", &session)]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "subtract", "arguments": {"a": 5, "b": 3}}});
    let reply = send(&mut sender, addr, "POST", &call.to_string(), &[accept, ("mcp-session-id", &session)]).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["result"]["structuredContent"], json!({"result": 2}), "{}", reply.body);
}
