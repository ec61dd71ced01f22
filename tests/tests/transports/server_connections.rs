//! Connection-level behaviour of a server, over real TCP sockets: the
//! connection hook (per-connection data, refusal), the connection limit,
//! the idle timeout and graceful shutdown; and the hook over stdio.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpc_runtime::{rpc, Context, Refused, Server};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A service that tells each caller what its connection carries.
#[rpc]
pub trait Probe {
    /// The user the connection hook attached, if any.
    fn whoami(&self, cx: Context) -> Option<String>;

    /// Sleeps, then answers `ms`.
    async fn sleep(&self, ms: u64) -> u64;
}

struct ProbeImpl;

impl Probe for ProbeImpl {
    fn whoami(&self, cx: Context) -> Option<String> {
        cx.extension::<User>().map(|user| user.0.clone())
    }

    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
}

/// Per-connection data the hook attaches.
struct User(String);

/// Waits for something the test knows will happen; the limit only turns a
/// bug into a failure instead of a hang.
async fn eventually<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future).await.expect("the event never happened")
}

/// One client connection, newline framing, driven by hand.
struct Client {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (reader, writer) = stream.into_split();
        Client { lines: BufReader::new(reader).lines(), writer }
    }

    async fn send(&mut self, method: &str, params: Value, id: u64) {
        let request = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id});
        let mut line = request.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message, or `None` once the server closed the connection.
    async fn next(&mut self) -> Option<Value> {
        match eventually(self.lines.next_line()).await {
            Ok(Some(line)) => Some(serde_json::from_str(&line).unwrap()),
            Ok(None) | Err(_) => None,
        }
    }

    async fn call(&mut self, method: &str, params: Value, id: u64) -> Value {
        self.send(method, params, id).await;
        let answer = self.next().await.expect("an answer");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

/// Serves `server` on a fresh local port until `shutdown` fires.
async fn start(server: Server) -> (SocketAddr, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server
            .serve(listener)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    (addr, stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_attaches_data_to_its_connection_only() {
    let counter = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&counter);
    let server = Server::new(ProbeImpl.into_rpc()).on_connect(move |info, cx| {
        assert_eq!(info.transport(), "tcp");
        assert!(info.peer_addr().is_some() && info.local_addr().is_some(), "{info:?}");
        let n = seen.fetch_add(1, Ordering::SeqCst);
        Ok(cx.with_extension(User(format!("user{n}"))))
    });
    let (addr, _stop, _task) = start(server).await;
    let mut first = Client::connect(addr).await;
    assert_eq!(first.call("whoami", serde_json::json!([]), 1).await["result"], "user0");
    let mut second = Client::connect(addr).await;
    assert_eq!(second.call("whoami", serde_json::json!([]), 1).await["result"], "user1");
    // Each connection keeps its own.
    assert_eq!(first.call("whoami", serde_json::json!([]), 2).await["result"], "user0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_closed_without_being_served() {
    // Every second connection is refused.
    let arrivals = Arc::new(AtomicUsize::new(0));
    let server = Server::new(ProbeImpl.into_rpc()).on_connect_async(move |_info, cx| {
        let allowed = arrivals.fetch_add(1, Ordering::SeqCst).is_multiple_of(2);
        async move {
            // Anything the hook waits on (a token lookup, say) runs here.
            tokio::task::yield_now().await;
            if allowed {
                Ok(cx.with_extension(User("welcome".into())))
            } else {
                Err(Refused::unauthorized("every second caller is turned away"))
            }
        }
    });
    let (addr, _stop, _task) = start(server).await;
    for attempt in 0..4u32 {
        let mut client = Client::connect(addr).await;
        client.send("whoami", serde_json::json!([]), 1).await;
        let answer = client.next().await;
        if attempt.is_multiple_of(2) {
            assert_eq!(answer.expect("an admitted connection is served")["result"], "welcome");
        } else {
            assert_eq!(answer, None, "a refused connection is closed without an answer");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_the_hook_runs_before_connect_returns() {
    // Admitted in the order they were made, and a refusal is connect's error.
    let arrivals = Arc::new(AtomicUsize::new(0));
    let server = Server::new(ProbeImpl.into_rpc()).on_connect_async(move |info, cx| {
        assert_eq!(info.transport(), "memory");
        let n = arrivals.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::task::yield_now().await;
            match n {
                2 => Err(Refused::unauthorized("the third caller is turned away")),
                n => Ok(cx.with_extension(User(format!("user{n}")))),
            }
        }
    });
    let first = ProbeClient::new(rpc_runtime::Peer::builder().connect(server.clone()).await.expect("admitted"));
    let second = ProbeClient::new(rpc_runtime::Peer::builder().connect(server.clone()).await.expect("admitted"));
    let refused = rpc_runtime::Peer::builder().connect(server).await.expect_err("refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(refused.to_string().contains("the third caller is turned away"), "{refused}");
    assert_eq!(second.whoami().await.expect("served").as_deref(), Some("user1"));
    assert_eq!(first.whoami().await.expect("served").as_deref(), Some("user0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_are_refused_with_a_reason() {
    let server = Server::new(ProbeImpl.into_rpc()).max_connections(2);
    let (addr, _stop, _task) = start(server).await;
    let mut first = Client::connect(addr).await;
    let mut second = Client::connect(addr).await;
    assert_eq!(first.call("sleep", serde_json::json!([0]), 1).await["result"], 0);
    assert_eq!(second.call("sleep", serde_json::json!([0]), 1).await["result"], 0);
    // A third is told why, then closed.
    let mut third = Client::connect(addr).await;
    let refusal = third.next().await.expect("a refusal");
    assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
    assert!(refusal["error"]["message"].as_str().unwrap().contains("at most 2 connections"), "{refusal}");
    assert_eq!(refusal["id"], Value::Null);
    assert!(third.next().await.is_none());
    // Once one closes, a new connection is served again.
    drop(first);
    let served = eventually(async {
        loop {
            let mut client = Client::connect(addr).await;
            client.send("sleep", serde_json::json!([0]), 7).await;
            match client.next().await {
                Some(answer) if answer["id"] == 7 => return answer,
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    })
    .await;
    assert_eq!(served["result"], 0);
    assert_eq!(second.call("sleep", serde_json::json!([0]), 2).await["result"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_but_a_busy_one_is_not() {
    let server = Server::new(ProbeImpl.into_rpc()).idle_timeout(Duration::from_millis(200));
    let (addr, _stop, _task) = start(server).await;
    // Busy: a request running longer than the idle timeout is answered.
    let mut busy = Client::connect(addr).await;
    assert_eq!(busy.call("sleep", serde_json::json!([600]), 1).await["result"], 600);
    // Idle: closed by the server after the timeout, without any message.
    let mut idle = Client::connect(addr).await;
    let started = tokio::time::Instant::now();
    assert!(idle.next().await.is_none());
    assert!(started.elapsed() >= Duration::from_millis(150), "closed too early: {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_running_requests_then_closes() {
    let server = Server::new(ProbeImpl.into_rpc());
    let (addr, stop, task) = start(server).await;
    let mut client = Client::connect(addr).await;
    client.send("sleep", serde_json::json!([300]), 1).await;
    // The request is running (answered after it was received: the next
    // request on the same connection proves it was read).
    assert_eq!(client.call("whoami", serde_json::json!([]), 2).await["result"], Value::Null);
    stop.send(()).unwrap();
    // Still answered, then the connection is closed.
    let answer = client.next().await.expect("the running request's answer");
    assert_eq!((answer["id"].clone(), answer["result"].clone()), (1.into(), 300.into()), "{answer}");
    assert!(client.next().await.is_none());
    eventually(task).await.unwrap().unwrap();
    // No longer accepting.
    assert!(TcpStream::connect(addr).await.is_err());
}

/// The hook over stdio: a small server binary (`hooked_stdio`) whose hook
/// attaches the user named by `HOOK_USER`, or refuses when it is unset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_runs_for_stdio_too() {
    let binary = env!("CARGO_BIN_EXE_hooked_stdio");
    let request = b"{\"jsonrpc\":\"2.0\",\"method\":\"whoami\",\"id\":1}\n";

    let mut admitted = tokio::process::Command::new(binary);
    admitted.env("HOOK_USER", "ada").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = admitted.spawn().unwrap();
    child.stdin.take().unwrap().write_all(request).await.unwrap();
    let output = eventually(child.wait_with_output()).await.unwrap();
    assert!(output.status.success(), "{output:?}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["result"], "ada");

    let mut refused = tokio::process::Command::new(binary);
    refused.env_remove("HOOK_USER").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = refused.spawn().unwrap();
    let _ = child.stdin.take().unwrap().write_all(request).await;
    let output = eventually(child.wait_with_output()).await.unwrap();
    assert!(!output.status.success(), "a refused stdio connection is an error exit: {output:?}");
    assert!(output.stdout.is_empty(), "nothing was served: {}", String::from_utf8_lossy(&output.stdout));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no HOOK_USER"), "{output:?}");
}
