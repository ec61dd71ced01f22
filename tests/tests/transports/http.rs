//! The HTTP transport over real sockets: every status code and body the
//! server answers, its security checks and limits, graceful shutdown, the
//! tower service mounted in axum, and the HTTP client under a typed client.

use crate::web_support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use rpc_runtime::{
    dispatch::{MethodCall, MethodResponse},
    transport::http::HttpConnect,
    wire::{LIMIT_EXCEEDED, PERMISSION_DENIED, TRANSPORT_ERROR},
    ClientError, ErrorObject, Limits, Peer,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower::Service;
use web_support::*;

#[tokio::test]
async fn a_post_is_answered_200_with_the_response() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let reply =
        exchange(addr, &post_json(addr, r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":7}"#, &[])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json(), json!({"jsonrpc": "2.0", "result": "value of k", "id": 7}));

    let batch = r#"[{"jsonrpc":"2.0","method":"read","params":["a"],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":2}]"#;
    let reply = exchange(addr, &post_json(addr, batch, &[])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json(),
        json!([{"jsonrpc": "2.0", "result": "value of a", "id": 1}, {"jsonrpc": "2.0", "result": 1, "id": 2}])
    );
}

#[tokio::test]
async fn a_large_answer_arrives_whole_on_a_kept_alive_connection() {
    // The server writes an answer's head and body with one write (hyper's
    // flattened writes); a 3 MiB answer must still arrive whole, and the
    // connection serve the next request.
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let key = "k".repeat(3 << 20);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = post_json(addr, &format!(r#"{{"jsonrpc":"2.0","method":"read","params":["{key}"],"id":1}}"#), &[]);
    stream.write_all(request.as_bytes()).await.unwrap();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"].as_str().map(str::len), Some(key.len() + "value of ".len()));
    let request = post_json(addr, r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":2}"#, &[]);
    stream.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_reply(&mut stream).await.json(), json!({"jsonrpc": "2.0", "result": "value of k", "id": 2}));
}

#[tokio::test]
async fn only_notifications_are_answered_204_without_a_body() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    for body in
        [r#"{"jsonrpc":"2.0","method":"read","params":["k"]}"#, r#"[{"jsonrpc":"2.0","method":"read","params":["k"]}]"#]
    {
        let reply = exchange(addr, &post_json(addr, body, &[])).await;
        assert_eq!(reply.status, 204, "{body}");
        assert_eq!(reply.body, "");
    }
}

#[tokio::test]
async fn json_rpc_failures_are_error_objects_in_a_200() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let cases = [
        ("{not json", -32700),
        (r#"{"jsonrpc":"2.0","method":"nope","id":1}"#, -32601),
        (r#"{"jsonrpc":"2.0","method":"read","params":[1],"id":1}"#, -32602),
        (r#"{"jsonrpc":"2.0","method":"wipe","params":[true],"id":1}"#, PERMISSION_DENIED),
        ("[]", -32600),
    ];
    for (body, code) in cases {
        let reply = exchange(addr, &post_json(addr, body, &[])).await;
        assert_eq!(reply.status, 200, "{body}");
        assert_eq!(reply.json()["error"]["code"], code, "{body}: {}", reply.body);
    }
}

#[tokio::test]
async fn other_methods_are_answered_405_with_allow() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    for method in ["GET", "PUT", "DELETE"] {
        let reply = exchange(addr, &format!("{method} / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n")).await;
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
        assert!(reply.body.contains(method), "{}", reply.body);
    }
}

#[tokio::test]
async fn a_content_type_that_is_not_json_is_answered_415() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    for headers in [&["Content-Type: text/plain"][..], &["Content-Type: application/x-www-form-urlencoded"], &[]] {
        let reply = exchange(addr, &post(addr, body, headers)).await;
        assert_eq!(reply.status, 415, "{headers:?}");
        assert!(reply.body.contains("application/json"), "{}", reply.body);
    }
    let reply = exchange(addr, &post(addr, body, &["Content-Type: application/json; charset=utf-8"])).await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_before_it_is_read() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().max_body(64)).await;
    // Only the headers are sent: the answer comes from Content-Length.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head =
        format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 413);
    assert!(reply.body.contains("64 bytes"), "{}", reply.body);

    // Chunked, with no length given: refused once past the limit.
    let chunk = "x".repeat(100);
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        chunk.len()
    );
    assert_eq!(exchange(addr, &request).await.status, 413);
}

#[tokio::test]
async fn a_batch_over_the_length_limit_is_a_json_rpc_error() {
    let (server, _) = vault();
    let server = server.limits(Limits::default().max_batch_len(2));
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let entry = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    let reply = exchange(addr, &post_json(addr, &format!("[{entry},{entry},{entry}]"), &[])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["error"]["code"], -32600);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("limit of 2"));
}

#[tokio::test]
async fn a_loopback_server_refuses_other_hosts_with_403() {
    let (server, _) = vault();
    let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    let request = |host: &str| {
        format!(
            "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let port = addr.port();
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}"), "localhost".to_owned()] {
        assert_eq!(exchange(addr, &request(&host)).await.status, 200, "{host}");
    }
    for host in ["evil.example", "evil.example:80", "127.0.0.1.evil.example"] {
        let reply = exchange(addr, &request(host)).await;
        assert_eq!(reply.status, 403, "{host}");
        assert!(reply.body.contains("Host"), "{}", reply.body);
    }
    let (addr, _stop, _task) = serve(&server, Http::default().allowed_hosts(["rpc.example"])).await;
    assert_eq!(exchange(addr, &request("rpc.example:8080")).await.status, 200);
    assert_eq!(exchange(addr, &request("other.example")).await.status, 403);
    let (addr, _stop, _task) = serve(&server, Http::default().allow_any_host()).await;
    assert_eq!(exchange(addr, &request("other.example")).await.status, 200);
}

#[tokio::test]
async fn a_foreign_origin_is_refused_with_403() {
    let (server, _) = vault();
    let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    let (addr, _stop, _task) = serve(&server, Http::default().allowed_origins(["https://app.example"])).await;
    let same = format!("Origin: http://{addr}");
    for (origin, status) in [
        ("Origin: https://evil.example", 403),
        ("Origin: null", 403),
        (same.as_str(), 200),
        ("Origin: https://app.example", 200),
    ] {
        let reply = exchange(addr, &post_json(addr, body, &[origin])).await;
        assert_eq!(reply.status, status, "{origin}: {}", reply.body);
    }
}

#[tokio::test]
async fn the_hook_answers_401_and_403_and_its_identity_reaches_handlers() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    let whoami = r#"{"jsonrpc":"2.0","method":"whoami","id":1}"#;
    let reply = exchange(addr, &post_json(addr, whoami, &[])).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    let reply = exchange(addr, &post_json(addr, whoami, &["Authorization: Bearer mallory"])).await;
    assert_eq!(reply.status, 403);
    let reply = exchange(addr, &post_json(addr, whoami, &["Authorization: Bearer bob"])).await;
    assert_eq!(reply.json()["result"], "bob");
    // `ConnectionInfo::bearer_token`: the scheme in any case (RFC 9110),
    // spaces around the token dropped; another scheme, two headers or a
    // token with a space in it are no bearer token (401).
    for header in ["authorization: bearer bob", "Authorization: BEARER   bob  "] {
        let reply = exchange(addr, &post_json(addr, whoami, &[header])).await;
        assert_eq!(reply.json()["result"], "bob", "{header}");
    }
    for headers in [
        &["Authorization: Basic Ym9iOg=="][..],
        &["Authorization: Bearer b ob"],
        &["Authorization: Bearer"],
        &["Authorization: Bearer bob", "Authorization: Bearer alice"],
    ] {
        let reply = exchange(addr, &post_json(addr, whoami, headers)).await;
        assert_eq!(reply.status, 401, "{headers:?}");
    }
}

#[tokio::test]
async fn per_method_authorization_refuses_before_decoding_and_allows_holders() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    // Params that would not even decode: the permission is checked first.
    let wipe = r#"{"jsonrpc":"2.0","method":"wipe","params":["not a bool"],"id":1}"#;
    let reply = exchange(addr, &post_json(addr, wipe, &["Authorization: Bearer bob"])).await;
    assert_eq!(reply.status, 200);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], PERMISSION_DENIED);
    assert_eq!(error["data"], json!({"requires": "admin"}));
    assert!(error["message"].as_str().unwrap().contains("`wipe` requires the permission `admin`"), "{error}");
    let wipe = r#"{"jsonrpc":"2.0","method":"wipe","params":[true],"id":1}"#;
    let reply = exchange(addr, &post_json(addr, wipe, &["Authorization: Bearer alice"])).await;
    assert_eq!(reply.json()["result"], true);
}

#[test]
fn the_catalog_lists_the_required_permission() {
    let document = serde_json::to_value(VaultCatalog::catalog().document()).unwrap();
    let method =
        |name: &str| document["methods"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap().clone();
    assert_eq!(method("wipe")["x-requires"], "admin");
    assert!(method("wipe")["errors"].as_array().unwrap().iter().any(|e| e["code"] == PERMISSION_DENIED));
    assert!(method("read").get("x-requires").is_none());
}

#[tokio::test]
async fn connections_are_kept_alive() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    for id in 1..=3 {
        let body = format!(r#"{{"jsonrpc":"2.0","method":"read","params":["k"],"id":{id}}}"#);
        stream.write_all(post_json(addr, &body, &[]).as_bytes()).await.unwrap();
        assert_eq!(read_reply(&mut stream).await.json()["id"], id);
    }
}

#[tokio::test]
async fn a_slow_loris_is_cut_off_while_others_are_served() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().header_timeout(Duration::from_millis(300))).await;
    let slow = TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = slow.into_split();
    let started = tokio::time::Instant::now();
    // A header, one byte every 100 ms: 5 s if the server let it.
    let dripping = tokio::spawn(async move {
        for byte in b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let cut_off = async {
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest).await;
        started.elapsed()
    };
    let others = async {
        for _ in 0..5 {
            let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
            assert_eq!(exchange(addr, &post_json(addr, body, &[])).await.status, 200);
        }
    };
    let (cut_off, ()) = tokio::join!(cut_off, others);
    assert!(cut_off < Duration::from_secs(3), "the slow client held its connection for {cut_off:?}");
    dripping.abort();
}

#[tokio::test]
async fn the_header_timeout_counts_only_while_a_connection_waits_for_a_request() {
    // The standalone server keeps the header timeout itself (not hyper):
    // a call running longer than it is answered, a connection that keeps
    // sending requests stays open past it, and a kept-alive connection
    // left idle after its answer is closed once it ran out.
    let (server, _) = vault();
    let timeout = Duration::from_millis(400);
    let (addr, _stop, _task) = serve(&server, Http::default().header_timeout(timeout)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let slow_call = post_json(addr, r#"{"jsonrpc":"2.0","method":"sleep","params":[1000],"id":1}"#, &[]);
    stream.write_all(slow_call.as_bytes()).await.unwrap();
    assert_eq!(read_reply(&mut stream).await.json()["result"], 1000);
    for id in 2..8 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let body = format!(r#"{{"jsonrpc":"2.0","method":"read","params":["k"],"id":{id}}}"#);
        stream.write_all(post_json(addr, &body, &[]).as_bytes()).await.unwrap();
        assert_eq!(read_reply(&mut stream).await.json()["id"], id, "open past the timeout while busy");
    }
    let idle = tokio::time::Instant::now();
    let mut rest = Vec::new();
    tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut rest)).await.expect("closed").unwrap();
    let waited = idle.elapsed();
    assert!(rest.is_empty(), "closed without an answer: {}", String::from_utf8_lossy(&rest));
    assert!(waited >= timeout - Duration::from_millis(20), "closed after {waited:?}, before the timeout");
    assert!(waited < timeout * 3, "an idle connection stayed open for {waited:?}");
}

#[tokio::test]
async fn a_body_that_does_not_arrive_is_answered_408() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().body_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{{\"jsonrpc\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 408);
}

#[tokio::test]
async fn connections_over_the_limit_are_answered_503() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server.max_connections(1), Http::default()).await;
    let mut first = TcpStream::connect(addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    first.write_all(post_json(addr, body, &[]).as_bytes()).await.unwrap();
    assert_eq!(read_reply(&mut first).await.status, 200);
    let reply = exchange(addr, &post_json(addr, body, &[])).await;
    assert_eq!(reply.status, 503);
    assert!(reply.body.contains("max_connections"), "{}", reply.body);
}

#[tokio::test]
async fn graceful_shutdown_answers_the_request_in_progress() {
    let (server, _) = vault();
    let (addr, stop, task) = serve(&server, Http::default()).await;
    let request = post_json(addr, r#"{"jsonrpc":"2.0","method":"sleep","params":[300],"id":1}"#, &[]);
    let slow = tokio::spawn(async move { exchange(addr, &request).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let reply = slow.await.unwrap();
    assert_eq!(reply.json()["result"], 300);
    tokio::time::timeout(HANG_GUARD, task).await.expect("stopped").unwrap().unwrap();
    assert!(TcpStream::connect(addr).await.is_err(), "no longer listening");
}

/// The future of a call through one of this file's layers.
type CallFuture<E> = Pin<Box<dyn Future<Output = Result<MethodResponse, E>> + Send>>;

/// Logs every call with its outcome (into a vector, for the test).
#[derive(Clone)]
struct Log<S> {
    inner: S,
    log: Arc<Mutex<Vec<String>>>,
}

impl<S> Service<MethodCall> for Log<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = CallFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        let log = Arc::clone(&self.log);
        let method = call.method().to_owned();
        let response = self.inner.call(call);
        Box::pin(async move {
            let response = response.await?;
            log.lock().unwrap().push(format!("{method} ok={}", response.is_ok()));
            Ok(response)
        })
    }
}

/// At most `max` calls in all, then -32005.
#[derive(Clone)]
struct RateLimit<S> {
    inner: S,
    max: usize,
    used: Arc<AtomicUsize>,
}

impl<S> Service<MethodCall> for RateLimit<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = CallFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        if self.used.fetch_add(1, Ordering::Relaxed) >= self.max {
            let refused = ErrorObject::new(LIMIT_EXCEEDED, "Limit exceeded: try again later");
            return Box::pin(async move { Ok(MethodResponse::error(refused)) });
        }
        Box::pin(self.inner.call(call))
    }
}

#[tokio::test]
async fn layers_log_and_rate_limit_with_json_rpc_errors() {
    let (server, _) = vault();
    let log = Arc::new(Mutex::new(Vec::new()));
    let used = Arc::new(AtomicUsize::new(0));
    // The last layer added is outermost: the log sees the limit's refusals.
    let server = server
        .layer(tower::layer::layer_fn(move |inner| RateLimit { inner, max: 2, used: Arc::clone(&used) }))
        .layer(tower::layer::layer_fn({
            let log = Arc::clone(&log);
            move |inner| Log { inner, log: Arc::clone(&log) }
        }));
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let call =
        |method: &str, params: &str| format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":1}}"#);
    assert_eq!(exchange(addr, &post_json(addr, &call("read", r#"["k"]"#), &[])).await.json()["result"], "value of k");
    assert_eq!(exchange(addr, &post_json(addr, &call("sleep", "[5]"), &[])).await.json()["result"], 5);
    let reply = exchange(addr, &post_json(addr, &call("read", r#"["k"]"#), &[])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["error"]["code"], LIMIT_EXCEEDED);
    assert_eq!(*log.lock().unwrap(), ["read ok=true", "sleep ok=true", "read ok=false"]);
}

#[tokio::test]
async fn the_service_mounts_in_axum_next_to_other_routes() {
    let (server, _) = vault();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/rpc", Http::default().service(&with_tokens(server)));
    let (listener, addr) = listener().await;
    tokio::spawn(async move { axum::serve(listener, app).await });
    let reply = exchange(addr, &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "ok"));
    let body = r#"{"jsonrpc":"2.0","method":"whoami","id":1}"#;
    let request = |auth: &str| {
        format!(
            "POST /rpc HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    assert_eq!(exchange(addr, &request("Authorization: Bearer alice\r\n")).await.json()["result"], "alice");
    assert_eq!(exchange(addr, &request("")).await.status, 401);
}

#[tokio::test]
async fn cors_answers_preflights_only_when_configured() {
    let (server, _) = vault();
    let preflight = |addr| {
        format!(
            "OPTIONS / HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r\nContent-Length: 0\r\n\r\n"
        )
    };
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let reply = exchange(addr, &preflight(addr)).await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    let (addr, _stop, _task) = serve(&server, Http::default().cors(["https://app.example"])).await;
    let reply = exchange(addr, &preflight(addr)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some("https://app.example"));
    let body = r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#;
    let reply = exchange(addr, &post_json(addr, body, &["Origin: https://app.example"])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some("https://app.example"));
}

#[tokio::test]
async fn a_typed_client_works_over_http_with_batches() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    let peer = Peer::builder()
        .connect(HttpConnect::new(format!("http://{addr}/")).header("authorization", "Bearer alice"))
        .await
        .unwrap();
    let vault = VaultClient::new(peer);
    assert_eq!(vault.whoami().await.unwrap(), "alice");
    assert!(vault.wipe(true).await.unwrap());
    let (a, b) = tokio::join!(vault.sleep(30), vault.read("x".into()));
    assert_eq!((a.unwrap(), b.unwrap().as_str()), (30, "value of x"));
    let mut batch = vault.batch();
    let (one, two) = (batch.read("1".into()), batch.sleep(1));
    batch.send().await.unwrap();
    assert_eq!(one.await.unwrap(), "value of 1");
    assert_eq!(two.await.unwrap(), 1);
    // HTTP cannot call back: the server says so in an error object.
    assert!(matches!(vault.call_back().await, Err(ClientError::Server(e)) if e.message().contains("no connection")));
}

#[tokio::test]
async fn http_statuses_fail_each_call_with_a_transport_error() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    let vault = VaultClient::new(
        Peer::builder()
            .connect(rpc_runtime::transport::http::HttpConnect::new(format!("http://{addr}/")))
            .await
            .unwrap(),
    );
    match vault.read("k".into()).await {
        Err(ClientError::Server(error)) => {
            assert_eq!(error.code(), TRANSPORT_ERROR);
            assert!(error.message().starts_with("HTTP 401"), "{}", error.message());
            assert_eq!(error.data_as::<serde_json::Value>().unwrap().unwrap(), json!({"httpStatus": 401}));
        }
        other => panic!("expected a transport error object, got {other:?}"),
    }
    let mut batch = vault.batch();
    let (one, two) = (batch.read("1".into()), batch.read("2".into()));
    batch.send().await.unwrap();
    assert!(matches!(one.await, Err(ClientError::Server(e)) if e.code() == TRANSPORT_ERROR));
    assert!(matches!(two.await, Err(ClientError::Server(e)) if e.code() == TRANSPORT_ERROR));
    // Nothing listening: the call fails at once, saying why.
    let (gone, gone_addr) = listener().await;
    drop(gone);
    let nobody = VaultClient::new(
        Peer::builder()
            .connect(rpc_runtime::transport::http::HttpConnect::new(format!("http://{gone_addr}/")))
            .await
            .unwrap(),
    );
    assert!(
        matches!(nobody.read("k".into()).await, Err(ClientError::Server(e)) if e.message().contains("HTTP request failed"))
    );
    assert!(Peer::builder()
        .connect(rpc_runtime::transport::http::HttpConnect::new("https://example.com/"))
        .await
        .is_err());
}
