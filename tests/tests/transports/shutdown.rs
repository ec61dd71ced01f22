//! How the calculator ends: gracefully on SIGTERM over stdio and TCP (the
//! request running when the signal came is still answered, exit status 0),
//! and quietly when its client closes while an answer is on its way; and
//! `with_graceful_shutdown` on a served byte stream.

use crate::client_support;

use std::process::Stdio;
use std::time::Duration;

use rpc_runtime::Peer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

async fn eventually<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future).await.expect("the event never happened")
}

fn terminate(child: &Child) {
    let pid = child.id().expect("the child is running").to_string();
    let status = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
    assert!(status.success());
}

const SLOW: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"sleep\",\"params\":[300],\"id\":1}\n";
const QUICK: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[5,3],\"id\":2}\n";

/// Sends a slow and a quick request, then SIGTERM once the quick one is
/// answered (so the slow one is known to be running): the slow one is
/// still answered, then the connection ends and the child exits 0.
async fn a_running_request_outlives_sigterm(
    child: &mut Child,
    reader: impl tokio::io::AsyncRead + Unpin,
    mut writer: impl tokio::io::AsyncWrite + Unpin,
) {
    let mut lines = BufReader::new(reader).lines();
    writer.write_all(SLOW).await.unwrap();
    writer.write_all(QUICK).await.unwrap();
    let quick: Value = serde_json::from_str(&eventually(lines.next_line()).await.unwrap().unwrap()).unwrap();
    assert_eq!(quick["result"], 2);
    terminate(child);
    let slow: Value = serde_json::from_str(&eventually(lines.next_line()).await.unwrap().unwrap()).unwrap();
    assert_eq!((slow["id"].clone(), slow["result"].clone()), (1.into(), 300.into()));
    assert_eq!(eventually(lines.next_line()).await.unwrap(), None);
    let status = eventually(child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_over_stdio_answers_the_running_request_and_exits_0() {
    let mut child = Command::new(client_support::calculator())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    a_running_request_outlives_sigterm(&mut child, stdout, stdin).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_over_tcp_answers_the_running_request_and_exits_0() {
    let (mut child, addrs) =
        client_support::spawn_announcing(&client_support::calculator(), &["--tcp", "127.0.0.1:0"], &["listening on "])
            .await;
    let addr = &addrs[0];
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (reader, writer) = stream.into_split();
    a_running_request_outlives_sigterm(&mut child, reader, writer).await;
}

/// Regression (issue 9, defect 2): the client closing while an answer is on
/// its way made serving stdio return `Err(BrokenPipe)` and the calculator
/// exit 1. The other side going away is the normal end of a connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_closing_while_an_answer_is_on_its_way_is_not_an_error() {
    let mut command = Command::new(client_support::calculator());
    command.stderr(Stdio::piped());
    let (peer, mut child) = Peer::builder().spawn_child(&mut command).unwrap();
    let pending = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<u64, _>("sleep", [200]).await })
    };
    // Known to be running once a later call is answered.
    assert_eq!(peer.call::<i64, _>("subtract", [5, 3]).await.unwrap(), 2);
    peer.close();
    assert!(eventually(pending).await.unwrap().is_err());
    let status = eventually(child.wait()).await.unwrap();
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).await.unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// Holds each call until the test releases it, and says when one started.
#[rpc_runtime::rpc]
pub trait Gate {
    /// Answers `value` once released.
    async fn pass(&self, value: u64) -> u64;
}

struct GateImpl {
    started: std::sync::Arc<tokio::sync::Notify>,
    release: std::sync::Arc<tokio::sync::Notify>,
}

impl Gate for GateImpl {
    async fn pass(&self, value: u64) -> u64 {
        self.started.notify_one();
        self.release.notified().await;
        value
    }
}

/// `with_graceful_shutdown` on a listener of one byte stream: the request
/// running when the signal came is answered, then the connection is
/// closed (the client never closed its side) and serving returns `Ok`.
#[tokio::test]
async fn graceful_shutdown_of_a_stream_answers_the_running_request_then_closes() {
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let gate = GateImpl { started: started.clone(), release: release.clone() };
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(served);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        rpc_runtime::Server::new(gate.into_rpc())
            .serve(rpc_runtime::transport::stream::Stream::new(reader, writer))
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            }),
    );
    let (client_reader, mut client_writer) = tokio::io::split(client);
    client_writer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"pass\",\"params\":[7],\"id\":1}\n").await.unwrap();
    eventually(started.notified()).await;
    stop.send(()).unwrap();
    release.notify_one();
    let mut lines = BufReader::new(client_reader).lines();
    let answer: Value = serde_json::from_str(&eventually(lines.next_line()).await.unwrap().unwrap()).unwrap();
    assert_eq!((answer["id"].clone(), answer["result"].clone()), (1.into(), 7.into()));
    assert_eq!(eventually(lines.next_line()).await.unwrap(), None, "the connection is closed");
    eventually(serving).await.expect("the server task").expect("serving ends cleanly");
    drop(client_writer);
}
