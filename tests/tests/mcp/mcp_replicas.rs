//! Two replicas of one MCP server behind a round-robin balancer, serving
//! handshake-era sessions (`initialize`, `Mcp-Session-Id`) without sticky
//! sessions: each replica is a `Server` and Streamable HTTP endpoint of its
//! own (its own router, which answers which replica it is), both given one
//! `MemoryStore` with `McpHttp::session_store`. The balancer is a small
//! hyper reverse proxy that sends each HTTP request to the next replica in
//! turn and counts what each served. The official Python SDK drives a
//! session through it (`tests/python/mcp_replicas.py`); raw requests check
//! that changes of the session (`logging/setLevel`) and its end (`DELETE`)
//! reach the other replica, and, without the shared store, that the same
//! alternation fails with 404 "no such session".

use crate::web_support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rpc_runtime::mcp::{McpHttp, McpServer, MemoryStore};
use rpc_runtime::rpc;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use web_support::{exchange, listener, post_json, Reply};

/// Adds, and says which replica answered.
#[rpc]
pub trait Tally {
    /// The sum of `a` and `b`.
    fn add(&self, a: i64, b: i64) -> i64;
    /// The name of the replica that answers.
    fn replica(&self) -> String;
}

struct Replica(&'static str);

impl Tally for Replica {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    fn replica(&self) -> String {
        self.0.to_owned()
    }
}

/// Serves replica `name` with `settings` on a free port until `stop` fires.
async fn replica(name: &'static str, settings: McpHttp) -> (SocketAddr, oneshot::Sender<()>) {
    let server = McpServer::new(Replica(name).into_rpc()).name("tally").into_server();
    let (listener, addr) = listener().await;
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve(settings.listener(listener)).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// A round-robin balancer: each HTTP request (not each connection) goes to
/// the next upstream, on a connection of its own; event streams pass
/// through as they come.
struct Balancer {
    upstreams: Vec<SocketAddr>,
    next: AtomicUsize,
    /// Requests each upstream served.
    served: Vec<AtomicUsize>,
}

impl Balancer {
    fn served(&self) -> Vec<usize> {
        self.served.iter().map(|count| count.load(Ordering::SeqCst)).collect()
    }

    async fn forward(&self, request: hyper::Request<Incoming>) -> Result<hyper::Response<Incoming>, hyper::Error> {
        let turn = self.next.fetch_add(1, Ordering::SeqCst) % self.upstreams.len();
        self.served[turn].fetch_add(1, Ordering::SeqCst);
        let tcp = tokio::net::TcpStream::connect(self.upstreams[turn]).await.expect("connect to a replica");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(connection);
        sender.send_request(request).await
    }
}

/// Starts a balancer over `upstreams` on a free port.
async fn balance(upstreams: Vec<SocketAddr>) -> (SocketAddr, Arc<Balancer>) {
    let served = upstreams.iter().map(|_| AtomicUsize::new(0)).collect();
    let balancer = Arc::new(Balancer { upstreams, next: AtomicUsize::new(0), served });
    let (listener, addr) = listener().await;
    let shared = Arc::clone(&balancer);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let balancer = Arc::clone(&shared);
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let balancer = Arc::clone(&balancer);
                    async move {
                        let response = match balancer.forward(request).await {
                            Ok(response) => response.map(|body| body.boxed()),
                            Err(err) => {
                                let body = http_body_util::Full::new(bytes::Bytes::from(err.to_string()))
                                    .map_err(|never| match never {})
                                    .boxed();
                                hyper::Response::builder().status(502).body(body).expect("a response")
                            }
                        };
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
            });
        }
    });
    (addr, balancer)
}

/// Two replicas with `settings` behind a balancer; the stop senders keep
/// them running.
async fn replicas(settings: McpHttp) -> (SocketAddr, Arc<Balancer>, Vec<oneshot::Sender<()>>) {
    let (a, stop_a) = replica("A", settings.clone()).await;
    let (b, stop_b) = replica("B", settings).await;
    let (addr, balancer) = balance(vec![a, b]).await;
    (addr, balancer, vec![stop_a, stop_b])
}

const ACCEPT_BOTH: &str = "Accept: application/json, text/event-stream";

async fn post(addr: SocketAddr, body: &Value, headers: &[&str]) -> Reply {
    let mut all = vec![ACCEPT_BOTH];
    all.extend_from_slice(headers);
    exchange(addr, &post_json(addr, &body.to_string(), &all)).await
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn without_a_shared_store_alternating_requests_lose_the_session() {
    let (addr, balancer, _stop) = replicas(McpHttp::default()).await;
    let reply = post(addr, &initialize(), &[]).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").expect("a session id"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(addr, &initialized, &[&session]).await;
    assert_eq!(reply.status, 404, "the other replica never heard of the session: {reply:?}");
    assert!(reply.body.contains("no such session"), "{}", reply.body);
    assert_eq!(balancer.served(), [1, 1]);
}

#[tokio::test]
async fn with_a_shared_store_either_replica_serves_the_session() {
    let store = MemoryStore::default();
    let (addr, balancer, _stop) = replicas(McpHttp::default().session_store(store.clone())).await;
    let reply = post(addr, &initialize(), &[]).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let session = format!("Mcp-Session-Id: {id}");
    assert_eq!(store.len(), 1);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &initialized, &[&session]).await.status, 202);

    let listing = post(addr, &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), &[&session]).await;
    assert_eq!(listing.json()["result"]["tools"].as_array().map(Vec::len), Some(2), "{listing:?}");
    let mut answered = Vec::new();
    for id in 2..6 {
        let reply = post(addr, &call(id, "replica", json!({})), &[&session]).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        answered.push(reply.json()["result"]["structuredContent"]["result"].clone());
    }
    assert_eq!(answered, [json!("B"), json!("A"), json!("B"), json!("A")], "requests alternate between replicas");

    // The level set through one replica holds on the other: a session that
    // asked for logs gets its calls answered as event streams.
    let set_level = json!({"jsonrpc": "2.0", "id": 6, "method": "logging/setLevel", "params": {"level": "debug"}});
    assert_eq!(post(addr, &set_level, &[&session]).await.status, 200);
    for id in 7..9 {
        let reply = post(addr, &call(id, "add", json!({"a": 1, "b": 2})), &[&session]).await;
        assert_eq!(reply.header("content-type"), Some("text/event-stream"), "{reply:?}");
    }

    // Ending it through one replica ends it on both.
    let delete = format!("DELETE / HTTP/1.1\r\nHost: {addr}\r\n{session}\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(exchange(addr, &delete).await.status, 204);
    assert!(store.is_empty());
    for id in 9..11 {
        let reply = post(addr, &call(id, "add", json!({"a": 1, "b": 2})), &[&session]).await;
        assert_eq!(reply.status, 404, "{reply:?}");
    }
    let served = balancer.served();
    assert_eq!(served.iter().sum::<usize>(), 13);
    assert!(served.iter().all(|&count| count >= 6), "both replicas served: {served:?}");
}

#[test]
fn the_python_sdk_drives_a_session_across_two_replicas() {
    if !tests::interop::require(&["python3"], "the_python_sdk_drives_a_session_across_two_replicas") {
        return;
    }
    let python = super::mcp_python::python();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (addr, balancer, _stop) = runtime.block_on(replicas(McpHttp::default().session_store(MemoryStore::default())));
    let output = Command::new(python)
        .arg("mcp_replicas.py")
        .arg(format!("http://{addr}/mcp"))
        .current_dir(super::mcp_python::python_dir())
        .output()
        .expect("run mcp_replicas.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mcp_replicas.py failed ({}):\n{stdout}\n{stderr}", output.status);
    for check in [
        "ok initialize negotiates 2025-11-25",
        "ok tools/list lists the tools",
        "ok tools/call is answered by both replicas in one session",
        "ok logging/setLevel, then calls on either replica",
        "ok ping",
    ] {
        assert!(stdout.lines().any(|line| line == check), "missing `{check}` in:\n{stdout}");
    }
    assert!(stdout.contains("all checks passed"), "{stdout}");
    let served = balancer.served();
    assert!(served.iter().all(|&count| count >= 5), "both replicas served the SDK's requests: {served:?}");
}
