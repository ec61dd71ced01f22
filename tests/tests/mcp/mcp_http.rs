//! MCP over Streamable HTTP, byte by byte over real sockets: every status
//! code and header rule of both eras (sessions, `DELETE`, `GET`, the
//! protocol version header, the 2026-07-28 metadata headers, Origin and
//! Host, 202 for notifications), event streams with progress, and
//! cancellation by closing the stream (2026-07-28) or by
//! `notifications/cancelled` (in a session).

use crate::web_support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpc_runtime::mcp::McpHttp;
use rpc_runtime::transport::http::Http;
use rpc_runtime::{mcp::McpServer, rpc, Context, Limits};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use web_support::{exchange, listener, post_json, read_reply, Reply, HANG_GUARD};

/// Tools with observable cancellation.
#[rpc]
pub trait Desk {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;

    /// Reports progress `1..=steps`, then answers `steps`.
    async fn count(&self, steps: u64, cx: Context) -> u64;

    /// Reports progress once, then waits until cancelled; answers 0.
    async fn hang(&self, cx: Context) -> u64;
}

#[derive(Clone, Default)]
struct Counters {
    running: Arc<AtomicUsize>,
    cancelled: Arc<AtomicUsize>,
}

impl Desk for Counters {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }

    async fn count(&self, steps: u64, cx: Context) -> u64 {
        for step in 1..=steps {
            cx.report_progress(step as f64, Some(steps as f64), None).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        steps
    }

    async fn hang(&self, cx: Context) -> u64 {
        self.running.fetch_add(1, Ordering::SeqCst);
        cx.report_progress(1.0, None, Some("hanging")).await;
        cx.cancelled().await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.cancelled.fetch_add(1, Ordering::SeqCst);
        0
    }
}

/// Serves the endpoint with `settings` on a free port; the sender stops it.
async fn serve_with(settings: McpHttp) -> (SocketAddr, Counters, tokio::sync::oneshot::Sender<()>) {
    let counters = Counters::default();
    let server = McpServer::new(counters.clone().into_rpc()).name("desk").into_server();
    let (listener, addr) = listener().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(settings.listener(listener)).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    (addr, counters, stop)
}

async fn serve() -> (SocketAddr, Counters, tokio::sync::oneshot::Sender<()>) {
    serve_with(McpHttp::default()).await
}

const ACCEPT_BOTH: &str = "Accept: application/json, text/event-stream";

fn initialize(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

/// A new session: its id.
async fn open_session(addr: SocketAddr) -> String {
    let reply = exchange(addr, &post_json(addr, &initialize("2025-11-25"), &[ACCEPT_BOTH])).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-11-25");
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = exchange(addr, &post_json(addr, initialized, &[&format!("Mcp-Session-Id: {id}")])).await;
    assert_eq!(reply.status, 202, "{reply:?}");
    id
}

fn call(id: u64, tool: &str, arguments: Value, meta: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta}})
    .to_string()
}

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The 2026-07-28 headers of a `tools/call` of `tool`.
fn modern_headers(tool: &str) -> Vec<String> {
    vec![
        ACCEPT_BOTH.to_owned(),
        "MCP-Protocol-Version: 2026-07-28".to_owned(),
        "Mcp-Method: tools/call".to_owned(),
        format!("Mcp-Name: {tool}"),
    ]
}

async fn post(addr: SocketAddr, body: &str, headers: &[String]) -> Reply {
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    exchange(addr, &post_json(addr, body, &headers)).await
}

/// Reads an event stream answer to its end: the status, and each event's
/// JSON message.
async fn read_events(stream: &mut TcpStream) -> (u16, Vec<(String, String)>, Vec<Value>) {
    let text = tokio::time::timeout(HANG_GUARD, async {
        let mut buf = Vec::new();
        while !buf.ends_with(b"\r\n0\r\n\r\n") {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "closed inside the stream: {}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8(buf).expect("UTF-8")
    })
    .await
    .expect("the stream ends");
    let (head, chunked) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    // Undo the chunked framing.
    let mut body = String::new();
    let mut rest = chunked;
    loop {
        let (size, after) = rest.split_once("\r\n").expect("a chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    let events = body
        .split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            assert!(event.starts_with("event: message\n"), "{event:?}");
            let data: Vec<&str> = event.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
            serde_json::from_str(&data.join("\n")).expect("JSON data")
        })
        .collect();
    (status, headers, events)
}

async fn until(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_session_is_issued_at_initialize_required_after_and_ended_by_delete() {
    let (addr, _, _stop) = serve().await;
    let id = open_session(addr).await;
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_ne!(open_session(addr).await, id, "every session has its own id");

    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let reply = post(addr, list, &[]).await;
    assert_eq!(reply.status, 400, "no session id");
    assert_eq!(reply.json()["error"]["code"], -32600);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("Mcp-Session-Id"), "{}", reply.body);

    let reply = post(addr, list, &["Mcp-Session-Id: 0123456789abcdef0123456789abcdef".to_owned()]).await;
    assert_eq!(reply.status, 404, "unknown session");

    let session = format!("Mcp-Session-Id: {id}");
    let reply = post(addr, list, &[session.clone(), "MCP-Protocol-Version: 2025-11-25".to_owned()]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let listing = reply.json();
    let names: Vec<&str> =
        listing["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(reply.header("mcp-session-id"), None, "issued once, at initialize");

    let reply = post(
        addr,
        &call(2, "subtract", json!({"minuend": 5, "subtrahend": 2}), json!({})),
        std::slice::from_ref(&session),
    )
    .await;
    assert_eq!(reply.json()["result"]["structuredContent"], json!({"result": 3}));

    let again = post(addr, &initialize("2025-11-25"), std::slice::from_ref(&session)).await;
    assert_eq!(again.json()["error"]["code"], -32600, "initialize is sent once per session");

    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}\r\n\r\n");
    assert_eq!(exchange(addr, &delete).await.status, 204);
    assert_eq!(post(addr, list, std::slice::from_ref(&session)).await.status, 404, "an ended session is gone");
    assert_eq!(exchange(addr, &delete).await.status, 404, "ended once");
    let reply = exchange(addr, &format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    assert_eq!(reply.status, 400, "DELETE without a session id");

    // A failed initialize opens no session.
    let reply = post(addr, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#, &[]).await;
    assert_eq!(reply.json()["error"]["code"], -32602);
    assert_eq!(reply.header("mcp-session-id"), None);
}

#[tokio::test]
async fn notifications_and_responses_are_answered_202_without_a_body() {
    let (addr, _, _stop) = serve().await;
    let session = format!("Mcp-Session-Id: {}", open_session(addr).await);
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
        r#"{"jsonrpc":"2.0","result":{},"id":"s1"}"#,
    ] {
        let reply = post(addr, body, std::slice::from_ref(&session)).await;
        assert_eq!((reply.status, reply.body.as_str()), (202, ""), "{body}");
    }
    let modern = json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"_meta": modern_meta()}});
    let headers = vec!["MCP-Protocol-Version: 2026-07-28".to_owned(), "Mcp-Method: notifications/whatever".to_owned()];
    let reply = post(addr, &modern.to_string(), &headers).await;
    assert_eq!((reply.status, reply.body.as_str()), (202, ""));
}

#[tokio::test]
async fn the_protocol_version_header_must_name_a_revision_this_server_speaks() {
    let (addr, _, _stop) = serve().await;
    let session = format!("Mcp-Session-Id: {}", open_session(addr).await);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let reply = post(addr, ping, &[session.clone(), "MCP-Protocol-Version: 1999-01-01".to_owned()]).await;
    assert_eq!(reply.status, 400);
    assert!(reply.body.contains("1999-01-01") && reply.body.contains("2025-11-25"), "{}", reply.body);
    for version in [None, Some("2025-03-26"), Some("2025-11-25")] {
        let mut headers = vec![session.clone()];
        headers.extend(version.map(|version| format!("MCP-Protocol-Version: {version}")));
        let reply = post(addr, ping, &headers).await;
        assert_eq!((reply.status, reply.json()["result"].clone()), (200, json!({})), "{version:?}");
    }
    let reply = post(addr, &initialize("2025-06-18"), &["MCP-Protocol-Version: 2024-01-01".to_owned()]).await;
    assert_eq!(reply.status, 400, "checked on initialize too");
}

#[tokio::test]
async fn get_without_a_session_and_other_methods_are_405_with_allow() {
    let (addr, _, _stop) = serve().await;
    for method in ["GET", "PUT", "PATCH"] {
        let request =
            format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nContent-Length: 0\r\n\r\n");
        let reply = exchange(addr, &request).await;
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("GET, POST, DELETE"));
    }
    // A session that does not exist: 404.
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: nope\r\nContent-Length: 0\r\n\r\n"
    );
    assert_eq!(exchange(addr, &request).await.status, 404);
}

#[tokio::test]
async fn modern_requests_need_headers_that_mirror_the_body() {
    let (addr, _, _stop) = serve().await;
    let body = call(7, "subtract", json!({"minuend": 5, "subtrahend": 2}), modern_meta());
    let reply = post(addr, &body, &modern_headers("subtract")).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["result"]["structuredContent"], 3);
    assert_eq!(reply.json()["result"]["resultType"], "complete");

    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    let with = |index: usize, line: Option<&str>| {
        let mut headers = modern_headers("subtract");
        match line {
            Some(line) => headers[index] = line.to_owned(),
            None => drop(headers.remove(index)),
        }
        headers
    };
    cases.push((with(1, None), "MCP-Protocol-Version` header is missing"));
    cases.push((with(1, Some("MCP-Protocol-Version: 2025-11-25")), "does not match"));
    cases.push((with(2, None), "`Mcp-Method` header is missing"));
    cases.push((with(2, Some("Mcp-Method: tools/list")), "does not match the body's method `tools/call`"));
    cases.push((with(3, None), "`Mcp-Name` header is missing"));
    cases.push((with(3, Some("Mcp-Name: divide")), "`Mcp-Name` header `divide` does not match"));
    cases.push((with(3, Some("Mcp-Name: =?base64?c3VidHJhY3Q?=")), "not valid"));
    let mut twice = modern_headers("subtract");
    twice.push("Mcp-Method: tools/call".to_owned());
    cases.push((twice, "more than once"));
    for (headers, reason) in cases {
        let reply = post(addr, &body, &headers).await;
        assert_eq!(reply.status, 400, "{headers:?}");
        assert_eq!(reply.json()["error"]["code"], -32020, "{headers:?}");
        assert_eq!(reply.json()["id"], 7, "the request's id");
        assert!(reply.body.contains(reason), "{reason}: {}", reply.body);
    }
    // The Base64 sentinel is decoded before comparing.
    let reply = post(addr, &body, &with(3, Some("Mcp-Name: =?base64?c3VidHJhY3Q=?="))).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn modern_errors_get_the_status_the_revision_gives_them() {
    let (addr, _, _stop) = serve().await;
    // An unsupported revision, in body and header alike: -32022, 400.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut headers = modern_headers("subtract");
    headers[1] = "MCP-Protocol-Version: 2099-01-01".to_owned();
    let reply = post(addr, &call(1, "subtract", json!({}), meta), &headers).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32022)), "{}", reply.body);
    assert_eq!(reply.json()["error"]["data"]["supported"], json!(["2026-07-28"]));

    // An unknown method: -32601, 404.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "roots/list", "params": {"_meta": modern_meta()}});
    let headers = vec!["MCP-Protocol-Version: 2026-07-28".to_owned(), "Mcp-Method: roots/list".to_owned()];
    let reply = post(addr, &body.to_string(), &headers).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (404, json!(-32601)));

    // An unknown tool: -32602, 400; invalid arguments are a tool result.
    let reply = post(addr, &call(3, "nope", json!({}), modern_meta()), &modern_headers("nope")).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32602)));
    let reply =
        post(addr, &call(4, "subtract", json!({"minuend": 1}), modern_meta()), &modern_headers("subtract")).await;
    assert_eq!((reply.status, reply.json()["result"]["isError"].clone()), (200, json!(true)));

    // A header saying 2026-07-28 on a body without `_meta`: -32602, 400.
    let reply = post(addr, &call(5, "subtract", json!({}), json!({})), &modern_headers("subtract")).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32602)));

    // Not JSON at all: -32700, 400.
    let reply = post(addr, "{nope", &modern_headers("subtract")).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32700)));

    // A session id on a modern request is ignored, and none is issued.
    let mut headers = modern_headers("subtract");
    headers.push("Mcp-Session-Id: nonsense".to_owned());
    let body = call(6, "subtract", json!({"minuend": 1, "subtrahend": 1}), modern_meta());
    let reply = post(addr, &body, &headers).await;
    assert_eq!((reply.status, reply.header("mcp-session-id")), (200, None));
}

#[tokio::test]
async fn a_bad_origin_is_403_and_a_bad_host_too() {
    let (addr, _, _stop) = serve().await;
    let body = call(1, "subtract", json!({"minuend": 1, "subtrahend": 1}), modern_meta());
    let mut headers = modern_headers("subtract");
    headers.push("Origin: http://evil.example".to_owned());
    assert_eq!(post(addr, &body, &headers).await.status, 403);
    let delete =
        format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nMcp-Session-Id: x\r\n\r\n");
    assert_eq!(exchange(addr, &delete).await.status, 403);
    let request = post_json(addr, &body, &[]).replace(&format!("Host: {addr}"), "Host: evil.example");
    assert_eq!(exchange(addr, &request).await.status, 403, "DNS rebinding protection");
    // The page's own origin is fine.
    headers.pop();
    headers.push(format!("Origin: http://{addr}"));
    assert_eq!(post(addr, &body, &headers).await.status, 200);
}

#[tokio::test]
async fn accept_decides_between_json_and_an_event_stream() {
    let (addr, _, _stop) = serve().await;
    let body = call(1, "subtract", json!({"minuend": 1, "subtrahend": 1}), modern_meta());
    let mut headers = modern_headers("subtract");
    headers[0] = "Accept: text/html".to_owned();
    assert_eq!(post(addr, &body, &headers).await.status, 406);

    // A client that takes only event streams gets one, even for a quick answer.
    headers[0] = "Accept: text/event-stream".to_owned();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let lines: Vec<&str> = headers.iter().map(String::as_str).collect();
    stream.write_all(post_json(addr, &body, &lines).as_bytes()).await.unwrap();
    let (status, head, events) = read_events(&mut stream).await;
    assert_eq!(status, 200);
    assert!(head.iter().any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream"));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["result"]["structuredContent"], 0);
}

#[tokio::test]
async fn a_call_asking_for_progress_streams_it_before_the_response() {
    let (addr, _, _stop) = serve().await;
    let session = format!("Mcp-Session-Id: {}", open_session(addr).await);
    for (meta, headers) in [
        (json!({"progressToken": "p"}), vec![ACCEPT_BOTH.to_owned(), session.clone()]),
        (
            {
                let mut meta = modern_meta();
                meta["progressToken"] = json!("p");
                meta
            },
            modern_headers("count"),
        ),
    ] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let lines: Vec<&str> = headers.iter().map(String::as_str).collect();
        let body = call(9, "count", json!({"steps": 3}), meta);
        stream.write_all(post_json(addr, &body, &lines).as_bytes()).await.unwrap();
        let (status, head, events) = read_events(&mut stream).await;
        assert_eq!(status, 200);
        let header = |name: &str| head.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
        assert_eq!(header("content-type"), Some("text/event-stream"));
        assert_eq!(header("x-accel-buffering"), Some("no"));
        assert_eq!(events.len(), 4, "{events:?}");
        for (step, event) in events[..3].iter().enumerate() {
            assert_eq!(event["method"], "notifications/progress");
            assert_eq!(event["params"], json!({"progressToken": "p", "progress": step as f64 + 1.0, "total": 3.0}));
        }
        assert_eq!(events[3]["id"], 9);
        assert_eq!(events[3]["result"]["content"][0]["text"], "3");
    }
    // Without a progress token: plain JSON.
    let reply =
        post(addr, &call(10, "count", json!({"steps": 2}), json!({})), &[ACCEPT_BOTH.to_owned(), session]).await;
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "2");
}

#[tokio::test]
async fn closing_the_stream_cancels_a_modern_call() {
    let (addr, counters, _stop) = serve().await;
    // As an event stream (the call asked for progress), and as JSON.
    for progress in [true, false] {
        let mut meta = modern_meta();
        if progress {
            meta["progressToken"] = json!(1);
        }
        let headers = modern_headers("hang");
        let lines: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(post_json(addr, &call(1, "hang", json!({}), meta), &lines).as_bytes()).await.unwrap();
        let running = Arc::clone(&counters.running);
        until("the call runs", || running.load(Ordering::SeqCst) == 1).await;
        if progress {
            let mut seen = Vec::new();
            while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
                let mut chunk = [0u8; 1024];
                let n = stream.read(&mut chunk).await.unwrap();
                assert!(n > 0);
                seen.extend_from_slice(&chunk[..n]);
            }
        }
        let before = counters.cancelled.load(Ordering::SeqCst);
        drop(stream);
        let cancelled = Arc::clone(&counters.cancelled);
        until("the call is cancelled", || cancelled.load(Ordering::SeqCst) == before + 1).await;
        assert_eq!(counters.running.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn in_a_session_closing_does_not_cancel_but_notifications_cancelled_and_delete_do() {
    let (addr, counters, _stop) = serve().await;
    let id = open_session(addr).await;
    let session = format!("Mcp-Session-Id: {id}");
    let running = Arc::clone(&counters.running);
    let cancelled = Arc::clone(&counters.cancelled);

    // A closed connection is not a cancellation (handshake revisions).
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_json(addr, &call(1, "hang", json!({}), json!({})), &[&session]).as_bytes()).await.unwrap();
    until("the call runs", || running.load(Ordering::SeqCst) == 1).await;
    drop(stream);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counters.running.load(Ordering::SeqCst), 1, "still running");

    // notifications/cancelled is: the call ends, and the POST that waits
    // on a second one gets no answer to it, as MCP says (202, no body).
    let mut waiting = TcpStream::connect(addr).await.unwrap();
    waiting.write_all(post_json(addr, &call(2, "hang", json!({}), json!({})), &[&session]).as_bytes()).await.unwrap();
    until("both calls run", || running.load(Ordering::SeqCst) == 2).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    assert_eq!(post(addr, cancel, std::slice::from_ref(&session)).await.status, 202);
    until("the call is cancelled", || cancelled.load(Ordering::SeqCst) == 1).await;
    let reply = read_reply(&mut waiting).await;
    assert_eq!(reply.status, 202, "{:?}", reply.body);
    assert!(reply.body.is_empty(), "a cancelled request is not answered: {:?}", reply.body);

    // As an event stream (the call asked for progress): its progress, then
    // the stream ends without a response.
    let mut streaming = TcpStream::connect(addr).await.unwrap();
    let progress = post_json(addr, &call(3, "hang", json!({}), json!({"progressToken": "p"})), &[&session]);
    streaming.write_all(progress.as_bytes()).await.unwrap();
    until("the streaming call runs", || running.load(Ordering::SeqCst) == 2).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
    assert_eq!(post(addr, cancel, std::slice::from_ref(&session)).await.status, 202);
    let (status, _, events) = read_events(&mut streaming).await;
    assert_eq!(status, 200);
    assert_eq!(events.len(), 1, "progress only, no response: {events:?}");
    assert_eq!(events[0]["method"], "notifications/progress");
    until("the streaming call is cancelled", || cancelled.load(Ordering::SeqCst) == 2).await;

    // Ending the session cancels the rest.
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}\r\n\r\n");
    assert_eq!(exchange(addr, &delete).await.status, 204);
    until("every call is cancelled", || cancelled.load(Ordering::SeqCst) == 3).await;
    assert_eq!(counters.running.load(Ordering::SeqCst), 0);
}

/// Issue 19: calls outlive their connections in a session (3,000
/// abandoned `wait` calls once ran at once in one session), so the limit
/// on running calls (`max_concurrent_requests`, 8 here) holds per session:
/// the calls past it are refused at once, abandoning a call does not give
/// its place back, and ending the session does.
#[tokio::test]
async fn a_session_runs_at_most_max_concurrent_requests_calls_even_when_their_clients_left() {
    let counters = Counters::default();
    let limits = Limits::default().max_concurrent_requests(8);
    let server = McpServer::new(counters.clone().into_rpc()).name("desk").into_server().limits(limits);
    let (listener, addr) = listener().await;
    tokio::spawn(server.serve(McpHttp::default().listener(listener)));
    let id = open_session(addr).await;
    let session = format!("Mcp-Session-Id: {id}");
    let mut open = Vec::new();
    let mut refused = 0;
    for n in 0..20 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(post_json(addr, &call(n, "hang", json!({}), json!({})), &[&session]).as_bytes())
            .await
            .unwrap();
        if n >= 8 {
            let reply = tokio::time::timeout(HANG_GUARD, read_reply(&mut stream)).await.expect("refused at once");
            let error = &reply.json()["error"];
            assert_eq!(error["code"], -32000, "{reply:?}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(message.contains("max_concurrent_requests") && message.contains("MCP session"), "{message}");
            refused += 1;
        } else {
            let running = Arc::clone(&counters.running);
            until("the call runs", || running.load(Ordering::SeqCst) == n as usize + 1).await;
        }
        open.push(stream);
    }
    assert_eq!((refused, counters.running.load(Ordering::SeqCst)), (12, 8));
    // Every client goes away: the calls keep running and keep their places.
    drop(open);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counters.running.load(Ordering::SeqCst), 8);
    let reply = post(
        addr,
        &call(99, "subtract", json!({"minuend": 3, "subtrahend": 1}), json!({})),
        std::slice::from_ref(&session),
    )
    .await;
    assert!(
        reply.json()["error"].is_null() && reply.json()["result"].is_object(),
        "a plain call needs no place: {reply:?}"
    );
    let mut late = TcpStream::connect(addr).await.unwrap();
    late.write_all(post_json(addr, &call(100, "hang", json!({}), json!({})), &[&session]).as_bytes()).await.unwrap();
    let reply = tokio::time::timeout(HANG_GUARD, read_reply(&mut late)).await.expect("refused at once");
    assert_eq!(reply.json()["error"]["code"], -32000, "{reply:?}");
    // Ending the session cancels them and gives the places back.
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}\r\n\r\n");
    assert_eq!(exchange(addr, &delete).await.status, 204);
    let running = Arc::clone(&counters.running);
    until("every call is cancelled", || running.load(Ordering::SeqCst) == 0).await;
}

#[tokio::test]
async fn sessions_are_bounded_and_expire_when_idle() {
    let (addr, _, _stop) =
        serve_with(McpHttp::default().max_sessions(1).session_idle_timeout(Duration::from_millis(300))).await;
    let first = open_session(addr).await;
    let reply = post(addr, &initialize("2025-11-25"), &[]).await;
    assert_eq!(reply.status, 503, "one session at most");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert!(reply.body.contains("max_sessions"), "{}", reply.body);

    tokio::time::sleep(Duration::from_millis(500)).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(post(addr, ping, &[format!("Mcp-Session-Id: {first}")]).await.status, 404, "expired");
    let second = open_session(addr).await;
    assert_ne!(first, second);
}

#[tokio::test]
async fn batches_are_taken_only_in_sessions_of_revisions_that_have_them() {
    let (addr, _, _stop) = serve().await;
    let reply = post(addr, &initialize("2025-03-26"), &[]).await;
    let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").unwrap());
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    let reply = post(addr, batch, &[session]).await;
    assert_eq!(reply.json(), json!([{"jsonrpc": "2.0", "result": {}, "id": 1}]));
    let modern = format!("Mcp-Session-Id: {}", open_session(addr).await);
    let reply = post(addr, batch, &[modern]).await;
    assert_eq!(reply.json()["error"]["code"], -32600, "2025-11-25 has no batches");
}

#[tokio::test]
async fn the_endpoint_mounts_in_axum_and_runs_the_connection_hook() {
    let server = McpServer::new(Counters::default().into_rpc()).into_server().on_connect(|info, cx| {
        let headers = info.part::<rpc_runtime::http::request::Parts>().map(|parts| parts.headers.clone());
        let token = headers.and_then(|headers| headers.get("authorization").cloned());
        match token.as_ref().and_then(|value| value.to_str().ok()) {
            Some("Bearer ok") => Ok(cx),
            _ => Err(rpc_runtime::Refused::unauthorized("no token")),
        }
    });
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", McpHttp::default().service(&server));
    let (listener, addr) = listener().await;
    tokio::spawn(async move { axum::serve(listener, app).await });
    let body = call(1, "subtract", json!({"minuend": 3, "subtrahend": 1}), modern_meta());
    let mut headers = modern_headers("subtract");
    let to_mcp = |headers: &[String]| {
        post_json(addr, &body, &headers.iter().map(String::as_str).collect::<Vec<_>>()).replace("POST / ", "POST /mcp ")
    };
    assert_eq!(exchange(addr, &to_mcp(&headers)).await.status, 401, "refused by the hook");
    headers.push("Authorization: Bearer ok".to_owned());
    let reply = exchange(addr, &to_mcp(&headers)).await;
    assert_eq!((reply.status, reply.json()["result"]["structuredContent"].clone()), (200, json!(2)));
}

#[tokio::test]
async fn cors_lets_a_configured_web_origin_hold_a_session() {
    let preflight = |addr: SocketAddr| {
        format!(
            "OPTIONS / HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://inspector.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, mcp-session-id, mcp-protocol-version\r\nContent-Length: 0\r\n\r\n"
        )
    };
    // Off by default: no preflight is answered, a foreign Origin is 403.
    let (addr, _, _stop) = serve().await;
    assert_eq!(exchange(addr, &preflight(addr)).await.status, 405);
    let origin = "Origin: https://inspector.example";
    let reply = exchange(addr, &post_json(addr, &initialize("2025-11-25"), &[ACCEPT_BOTH, origin])).await;
    assert_eq!(reply.status, 403);

    let (addr, _, _stop) =
        serve_with(McpHttp::default().http(Http::default().cors(["https://inspector.example"]))).await;
    let reply = exchange(addr, &preflight(addr)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some("https://inspector.example"));
    let allowed = reply.header("access-control-allow-headers").unwrap_or_default().to_ascii_lowercase();
    for name in ["content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"] {
        assert!(allowed.contains(name), "{name} in {allowed}");
    }
    let methods = reply.header("access-control-allow-methods").unwrap_or_default().to_owned();
    assert!(methods.contains("POST") && methods.contains("DELETE"), "{methods}");
    // The page can read the session id it is given.
    let reply = exchange(addr, &post_json(addr, &initialize("2025-11-25"), &[ACCEPT_BOTH, origin])).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_some());
    assert_eq!(reply.header("access-control-allow-origin"), Some("https://inspector.example"));
    let exposed = reply.header("access-control-expose-headers").unwrap_or_default().to_ascii_lowercase();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");
    // Other origins are still refused.
    let other = "Origin: https://elsewhere.example";
    let reply = exchange(addr, &post_json(addr, &initialize("2025-11-25"), &[ACCEPT_BOTH, other])).await;
    assert_eq!(reply.status, 403);
}
