//! The typed client over every transport: a child process (the calculator
//! example over its stdin/stdout, both framings), TCP (both framings) and
//! in-process.

use crate::client_support;

use std::time::Duration;

use client_support::calculator;

use rpc_runtime::serde_json::{json, Value};
use rpc_runtime::{rpc, ClientError, Context, ErrorObject, Framing, Peer, Server};

/// The calculator's wire contract: the example binary serves it, this file
/// serves it too (for TCP and in-process), and its generated client drives
/// both. `Context` params are injected on the server and absent from the
/// client.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    /// Adds up the whole params.
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;
    /// Says hello to the server log.
    #[rpc(notification)]
    fn notify_hello(&self, value: i64);
    /// Greets `name`.
    fn greet(&self, name: String, greeting: Option<String>) -> String;
    /// Always fails.
    fn fail(&self, code: i64, message: String, data: Option<Value>) -> Result<(), ErrorObject>;
    /// Calls the caller back and answers with its result.
    async fn ask_client(&self, method: String, params: Option<Value>, cx: Context) -> Result<Value, ErrorObject>;
    /// Sends the caller a notification.
    async fn notify_client(&self, method: String, params: Option<Value>, cx: Context) -> Result<(), ErrorObject>;
}

/// What this side answers when the calculator calls back.
#[rpc]
pub trait Host {
    /// Doubles `x`.
    fn double(&self, x: i64) -> i64;
    /// Records a message.
    #[rpc(notification)]
    fn note(&self, text: String);
}

#[derive(Clone)]
struct HostImpl {
    notes: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Host for HostImpl {
    fn double(&self, x: i64) -> i64 {
        x * 2
    }
    fn note(&self, text: String) {
        let _ = self.notes.send(text);
    }
}

async fn exercise(client: &CalculatorClient, notes: &mut tokio::sync::mpsc::UnboundedReceiver<String>) {
    assert_eq!(client.subtract(42, 23).await.unwrap(), 19);
    assert_eq!(client.sum(vec![1, 2, 4]).await.unwrap(), 7);
    assert_eq!(client.greet("Ada".into(), None).await.unwrap(), "Hello, Ada!");
    client.notify_hello(1).await.unwrap();
    match client.fail(-32001, "nope".into(), Some(json!({"why": 1}))).await {
        Err(ClientError::Server(error)) => {
            assert_eq!((error.code(), error.message()), (-32001, "nope"));
            assert_eq!(error.data().map(|d| d.get()), Some(r#"{"why":1}"#));
        }
        other => panic!("expected the calculator's error, got {other:?}"),
    }
    // The calculator calls us back; we answer with our `Host` service.
    assert_eq!(client.ask_client("double".into(), Some(json!([21]))).await.unwrap(), json!(42));
    client.notify_client("note".into(), Some(json!(["hi"]))).await.unwrap();
    assert_eq!(notes.recv().await.as_deref(), Some("hi"));
    // 200 calls in flight at once.
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { (i, client.subtract(i, 1).await) })
        })
        .collect();
    for call in calls {
        let (i, result) = call.await.unwrap();
        assert_eq!(result.unwrap(), i - 1);
    }
}

fn host() -> (HostImpl, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (notes, rx) = tokio::sync::mpsc::unbounded_channel();
    (HostImpl { notes }, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_process_in_both_framings() {
    for (flag, framing) in [("ndjson", Framing::NewlineDelimited), ("content-length", Framing::ContentLength)] {
        let (host, mut notes) = host();
        let mut command = tokio::process::Command::new(calculator());
        command.args(["--framing", flag]);
        let (peer, mut child) = Peer::builder()
            .framing(framing)
            .router(host.into_rpc())
            .timeout(Duration::from_secs(60))
            .spawn_child(&mut command)
            .unwrap();
        let client = CalculatorClient::new(peer);
        exercise(&client, &mut notes).await;
        // Dropping the last handle closes the child's stdin; it exits cleanly.
        drop(client);
        let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await.unwrap().unwrap();
        assert!(status.success(), "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_fails_pending_calls() {
    let mut command = tokio::process::Command::new(calculator());
    let (peer, mut child) = Peer::builder().spawn_child(&mut command).unwrap();
    let client = CalculatorClient::new(peer.clone());
    assert_eq!(client.subtract(2, 1).await.unwrap(), 1);
    let pending = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call::<u64, _>("sleep", [600_000]).await }
    });
    child.kill().await.unwrap();
    let result = tokio::time::timeout(Duration::from_secs(60), pending).await.unwrap().unwrap();
    assert!(matches!(result, Err(ClientError::Closed | ClientError::Transport(_))), "{result:?}");
}

/// The calculator's contract, served in this process for the TCP and
/// in-process transports.
struct Calc;

impl Calculator for Calc {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn notify_hello(&self, _value: i64) {}
    fn greet(&self, name: String, greeting: Option<String>) -> String {
        format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
    }
    fn fail(&self, code: i64, message: String, data: Option<Value>) -> Result<(), ErrorObject> {
        let error = ErrorObject::new(code, message);
        Err(match data {
            Some(data) => error.with_data(&data),
            None => error,
        })
    }
    async fn ask_client(&self, method: String, params: Option<Value>, cx: Context) -> Result<Value, ErrorObject> {
        let peer = cx.peer().expect("a connection");
        peer.call(&method, params).await.map_err(|err| ErrorObject::internal_error(err.to_string()))
    }
    async fn notify_client(&self, method: String, params: Option<Value>, cx: Context) -> Result<(), ErrorObject> {
        let peer = cx.peer().expect("a connection");
        peer.notify(&method, params).await.map_err(|err| ErrorObject::internal_error(err.to_string()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_in_both_framings() {
    for framing in [Framing::NewlineDelimited, Framing::ContentLength] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server::new(Calc.into_rpc()).framing(framing);
        tokio::spawn(server.serve(listener));
        let (host, mut notes) = host();
        let peer = Peer::builder()
            .framing(framing)
            .router(host.into_rpc())
            .connect(rpc_runtime::transport::tcp::Tcp::new(addr))
            .await
            .unwrap();
        exercise(&CalculatorClient::new(peer), &mut notes).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_in_both_framings() {
    for framing in [Framing::NewlineDelimited, Framing::ContentLength] {
        let (host, mut notes) = host();
        let peer = Peer::builder()
            .framing(framing)
            .router(host.into_rpc())
            .connect(Server::new(Calc.into_rpc()))
            .await
            .unwrap();
        exercise(&CalculatorClient::new(peer), &mut notes).await;
    }
}
