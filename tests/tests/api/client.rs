//! The generated typed client over an in-process connection: round trips in
//! both framings, typed application errors, batches, timeouts,
//! cancellation, closed connections and many concurrent calls.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rpc_runtime::serde_json::{self, Value};
use rpc_runtime::{
    peer::FromErrorObject,
    rpc,
    wire::{INVALID_PARAMS, METHOD_NOT_FOUND, REQUEST_CANCELLED},
    Cancellation, ClientError, Context, ErrorObject, Framing, Peer, Server,
};
use tokio::sync::mpsc;

/// The application error of `withdraw`, carried in the error object.
#[derive(Debug, PartialEq)]
pub enum BankError {
    /// Not enough money: `missing` more would be needed.
    Insufficient { missing: u64 },
    /// The account is frozen.
    Frozen,
}

impl From<BankError> for ErrorObject {
    fn from(err: BankError) -> Self {
        match err {
            BankError::Insufficient { missing } => ErrorObject::new(1001, "insufficient funds").with_data(&missing),
            BankError::Frozen => ErrorObject::new(1002, "account frozen"),
        }
    }
}

impl FromErrorObject for BankError {
    fn from_error_object(error: &ErrorObject) -> Option<Self> {
        match error.code() {
            1001 => Some(BankError::Insufficient { missing: error.data_as()?.ok()? }),
            1002 => Some(BankError::Frozen),
            _ => None,
        }
    }
}

/// The service under test.
#[rpc]
pub trait Bank {
    /// Adds two numbers.
    fn add(&self, a: i64, b: i64) -> i64;

    /// Subtracts, by position only.
    #[rpc(param_structure = "by-position")]
    fn sub(&self, a: i64, b: i64) -> i64;

    /// Greets, with an optional greeting.
    fn greet(&self, name: String, greeting: Option<String>) -> String;

    /// Sums the whole params.
    #[rpc(whole_params)]
    fn total(&self, numbers: Vec<i64>) -> i64;

    /// Withdraws from a balance of 100.
    fn withdraw(&self, amount: u64) -> Result<u64, BankError>;

    /// Always fails with a plain error object.
    fn refuse(&self) -> Result<(), ErrorObject>;

    /// Halves an even number; returns a `Result` alias.
    fn halve(&self, n: i64) -> rpc_runtime::wire::RpcResult<i64>;

    /// Counts the entries of a map (its keys cannot be JSON keys).
    fn count(&self, map: BTreeMap<(i64, i64), i64>) -> usize;

    /// Records `value`.
    #[rpc(notification)]
    fn poke(&self, value: i64);

    /// What `poke` recorded so far.
    fn pokes(&self) -> Vec<i64>;

    /// Waits until the caller cancels, then reports that it saw it.
    async fn wait_for_cancel(&self, cx: Context) -> String;

    /// Answers after `ms` milliseconds.
    async fn slow(&self, ms: u64) -> u64;
}

#[derive(Clone, Default)]
struct BankImpl {
    pokes: Arc<Mutex<Vec<i64>>>,
    started: Option<mpsc::UnboundedSender<()>>,
    cancelled: Option<mpsc::UnboundedSender<bool>>,
}

impl Bank for BankImpl {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    fn sub(&self, a: i64, b: i64) -> i64 {
        a - b
    }
    fn greet(&self, name: String, greeting: Option<String>) -> String {
        format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
    }
    fn total(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn withdraw(&self, amount: u64) -> Result<u64, BankError> {
        match amount {
            0 => Err(BankError::Frozen),
            a if a > 100 => Err(BankError::Insufficient { missing: a - 100 }),
            a => Ok(100 - a),
        }
    }
    fn refuse(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(-32050, "refused"))
    }
    fn halve(&self, n: i64) -> rpc_runtime::wire::RpcResult<i64> {
        if n % 2 == 0 {
            Ok(n / 2)
        } else {
            Err(ErrorObject::invalid_params(format!("{n} is odd")))
        }
    }
    fn count(&self, map: BTreeMap<(i64, i64), i64>) -> usize {
        map.len()
    }
    fn poke(&self, value: i64) {
        self.pokes.lock().unwrap().push(value);
    }
    fn pokes(&self) -> Vec<i64> {
        self.pokes.lock().unwrap().clone()
    }
    async fn wait_for_cancel(&self, cx: Context) -> String {
        if let Some(tx) = &self.started {
            let _ = tx.send(());
        }
        cx.cancelled().await;
        if let Some(tx) = &self.cancelled {
            let _ = tx.send(cx.is_cancelled());
        }
        "stopped early".to_owned()
    }
    async fn slow(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
}

/// The transports the peer tests run over: the same peer logic over a
/// byte stream in either framing and over the in-memory message transport.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// A byte stream (`tokio::io::duplex`) with this framing.
    Stream(Framing),
    /// The in-memory message transport (a `Server` given to `PeerBuilder::connect`).
    Memory,
}

const WIRES: [Wire; 3] = [Wire::Stream(Framing::NewlineDelimited), Wire::Stream(Framing::ContentLength), Wire::Memory];

async fn connect(wire: Wire, bank: BankImpl, cancellation: Cancellation) -> BankClient {
    let server = Server::new(bank.into_rpc()).cancellation(cancellation);
    let builder = Peer::builder().cancellation(cancellation);
    let peer = match wire {
        Wire::Memory => builder.connect(server).await.unwrap(),
        Wire::Stream(framing) => {
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let server = server.framing(framing);
            tokio::spawn(async move {
                let (reader, writer) = tokio::io::split(theirs);
                server.serve(rpc_runtime::transport::stream::Stream::new(reader, writer)).await
            });
            let (reader, writer) = tokio::io::split(ours);
            builder.framing(framing).connect(rpc_runtime::transport::stream::Stream::new(reader, writer)).await.unwrap()
        }
    };
    BankClient::new(peer)
}

/// Waits for something the test knows will happen; the limit only turns a
/// bug into a failure instead of a hang.
async fn eventually<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future).await.expect("the event never happened")
}

/// The other side of a connection, driven by hand: it reads what our peer
/// writes, line by line, and writes raw bytes back.
struct HandDriven {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl HandDriven {
    /// The next message our peer wrote.
    async fn next_message(&mut self) -> Value {
        let line = eventually(self.lines.next_line()).await.unwrap().expect("our side wrote a message");
        serde_json::from_str(&line).unwrap()
    }

    /// Writes `bytes` to our peer as they are.
    async fn write(&mut self, bytes: impl AsRef<[u8]>) {
        use tokio::io::AsyncWriteExt;
        self.writer.write_all(bytes.as_ref()).await.unwrap();
    }
}

/// A peer (newline framing, no service) and the hand-driven other side.
async fn hand_driven_peer() -> (Peer, HandDriven) {
    use tokio::io::AsyncBufReadExt;
    let (ours, theirs) = tokio::io::duplex(4096);
    let (reader, writer) = tokio::io::split(ours);
    let (their_reader, their_writer) = tokio::io::split(theirs);
    let other = HandDriven { lines: tokio::io::BufReader::new(their_reader).lines(), writer: their_writer };
    (Peer::builder().connect(rpc_runtime::transport::stream::Stream::new(reader, writer)).await.unwrap(), other)
}

/// `add(1, 2)` called on `peer` from another task.
fn spawn_add(peer: &Peer) -> tokio::task::JoinHandle<Result<i64, ClientError>> {
    let peer = peer.clone();
    tokio::spawn(async move { peer.call::<i64, _>("add", [1, 2]).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_round_trips_over_every_transport() {
    for wire in WIRES {
        let client = connect(wire, BankImpl::default(), Cancellation::None).await;
        assert_eq!(client.add(2, 3).await.unwrap(), 5);
        assert_eq!(client.sub(10, 4).await.unwrap(), 6);
        assert_eq!(client.greet("Ada".into(), None).await.unwrap(), "Hello, Ada!");
        assert_eq!(client.greet("Ada".into(), Some("Hi".into())).await.unwrap(), "Hi, Ada!");
        assert_eq!(client.total(vec![1, 2, 3, 4]).await.unwrap(), 10);
        client.poke(7).await.unwrap();
        client.poke(8).await.unwrap();
        // Notifications are handled in order, before the call sent after them.
        assert_eq!(client.pokes().await.unwrap(), vec![7, 8]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_errors_come_back_typed() {
    for wire in WIRES {
        let client = connect(wire, BankImpl::default(), Cancellation::None).await;
        assert_eq!(client.withdraw(30).await.unwrap(), 70);
        match client.withdraw(150).await {
            Err(ClientError::App(BankError::Insufficient { missing })) => assert_eq!(missing, 50),
            other => panic!("expected a typed BankError, got {other:?}"),
        }
        assert!(matches!(client.withdraw(0).await, Err(ClientError::App(BankError::Frozen))));
        // An error object that is not a BankError stays an error object.
        let err = client.peer().call::<u64, _>("withdraw", serde_json::json!({"amount": "lots"})).await.unwrap_err();
        assert_eq!(err.server_error().map(ErrorObject::code), Some(INVALID_PARAMS), "{err}");
        assert_eq!(client.halve(8).await.unwrap(), 4);
        assert_eq!(client.halve(7).await.unwrap_err().server_error().map(ErrorObject::message), Some("7 is odd"));
        match client.refuse().await {
            Err(ClientError::Server(error)) => assert_eq!((error.code(), error.message()), (-32050, "refused")),
            other => panic!("expected the server's error object, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_values_are_errors_not_panics() {
    for wire in WIRES {
        let client = connect(wire, BankImpl::default(), Cancellation::None).await;
        let mut map = BTreeMap::new();
        map.insert((1, 2), 3);
        assert!(matches!(client.count(map).await, Err(ClientError::Encode(_))));
        // A result of the wrong type.
        let err = client.peer().call::<i64, _>("greet", ["Ada"]).await.unwrap_err();
        assert!(matches!(err, ClientError::Decode(_)), "{err}");
        // A scalar is not valid params.
        assert!(matches!(client.peer().call::<i64, _>("add", 5).await, Err(ClientError::Encode(_))));
        let err = client.peer().call::<Value, _>("no_such_method", ()).await.unwrap_err();
        assert_eq!(err.server_error().map(ErrorObject::code), Some(METHOD_NOT_FOUND));
        // The connection is still fine.
        assert_eq!(client.add(1, 1).await.unwrap(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_from_fifty_tasks() {
    for wire in WIRES {
        let client = connect(wire, BankImpl::default(), Cancellation::None).await;
        let mut tasks = Vec::new();
        for task in 0..50i64 {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                let calls = (0..20i64).map(|i| {
                    let client = client.clone();
                    async move { (i, client.add(task * 1000, i).await) }
                });
                let mut answered = 0;
                for (i, result) in futures_join_all(calls).await {
                    assert_eq!(result.unwrap(), task * 1000 + i, "task {task} call {i} got another call's answer");
                    answered += 1;
                }
                answered
            }));
        }
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap();
        }
        assert_eq!(total, 1000);
    }
}

/// Runs futures concurrently (all in flight at once), in order of results.
async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_batch() {
    for wire in WIRES {
        let bank = BankImpl::default();
        let client = connect(wire, bank.clone(), Cancellation::None).await;
        let mut batch = client.batch();
        let sum = batch.add(40, 2);
        let greeting = batch.greet("Ada".into(), Some("Hey".into()));
        batch.poke(5);
        let broke = batch.withdraw(500);
        let slow = batch.slow(1);
        batch.send().await.unwrap();
        // Awaited in another order than sent.
        assert_eq!(slow.await.unwrap(), 1);
        assert!(matches!(broke.await, Err(ClientError::App(BankError::Insufficient { missing: 400 }))));
        assert_eq!(greeting.await.unwrap(), "Hey, Ada!");
        assert_eq!(sum.await.unwrap(), 42);
        assert_eq!(client.pokes().await.unwrap(), vec![5]);

        // Untyped batches work the same way.
        let mut batch = client.peer().batch();
        let a = batch.call::<i64, _>("add", [1, 2]);
        let b = batch.call::<i64, _>("no_such_method", ());
        batch.send().await.unwrap();
        assert_eq!(a.await.unwrap(), 3);
        assert_eq!(b.await.unwrap_err().server_error().map(ErrorObject::code), Some(METHOD_NOT_FOUND));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_cancels_the_handler_lsp_style() {
    for wire in WIRES {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let bank = BankImpl { cancelled: Some(tx), ..BankImpl::default() };
        let client = connect(wire, bank, Cancellation::Lsp).await;
        let err = client.with_timeout(Duration::from_millis(20)).wait_for_cancel().await.unwrap_err();
        assert!(matches!(err, ClientError::Timeout(_)), "{err}");
        // The `$/cancelRequest` that followed reached the handler.
        assert_eq!(eventually(rx.recv()).await, Some(true));
        // The connection carries on.
        assert_eq!(client.add(1, 2).await.unwrap(), 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_call_cancels_the_handler_mcp_style() {
    for wire in WIRES {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (started_tx, mut started) = mpsc::unbounded_channel();
        let bank = BankImpl { cancelled: Some(tx), started: Some(started_tx), ..BankImpl::default() };
        let client = connect(wire, bank, Cancellation::Mcp).await;
        let call = {
            let client = client.clone();
            tokio::spawn(async move { client.wait_for_cancel().await })
        };
        // Give up on the request once it is running.
        assert_eq!(eventually(started.recv()).await, Some(()));
        call.abort();
        assert_eq!(eventually(rx.recv()).await, Some(true));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_is_answered_with_request_cancelled() {
    // Drive the server by hand to see its answer to a cancelled request.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let bank = BankImpl { cancelled: Some(tx), ..BankImpl::default() };
    let server = Server::new(bank.into_rpc()).cancellation(Cancellation::Lsp);
    let (ours, theirs) = tokio::io::duplex(4096);
    let (their_reader, their_writer) = tokio::io::split(theirs);
    tokio::spawn(
        async move { server.serve(rpc_runtime::transport::stream::Stream::new(their_reader, their_writer)).await },
    );
    let (reader, mut writer) = tokio::io::split(ours);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    writer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"wait_for_cancel\",\"id\":\"w1\"}\n").await.unwrap();
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"w1\"}}\n")
        .await
        .unwrap();
    assert_eq!(eventually(rx.recv()).await, Some(true));
    let mut lines = tokio::io::BufReader::new(reader).lines();
    let line = eventually(lines.next_line()).await.unwrap().unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["id"], "w1");
    assert_eq!(response["error"]["code"], REQUEST_CANCELLED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_fails_pending_calls_promptly() {
    // A "server" that reads one request and hangs up without answering.
    let (peer, mut other) = hand_driven_peer().await;
    let client = BankClient::new(peer.clone());
    let call = tokio::spawn(async move { client.slow(60_000).await });
    let request = other.next_message().await;
    assert_eq!(request["method"], "slow", "{request}");
    drop(other);
    let result = eventually(call).await.unwrap();
    assert!(matches!(result, Err(ClientError::Closed)), "{result:?}");
    eventually(peer.closed()).await;
    // New calls fail at once, too.
    assert!(matches!(peer.call::<i64, _>("add", [1, 2]).await, Err(ClientError::Closed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_fails_pending_calls() {
    for wire in WIRES {
        let client = connect(wire, BankImpl::default(), Cancellation::None).await;
        let pending = {
            let client = client.clone();
            tokio::spawn(async move { client.slow(60_000).await })
        };
        assert_eq!(client.add(1, 1).await.unwrap(), 2);
        client.peer().close();
        assert!(matches!(eventually(pending).await.unwrap(), Err(ClientError::Closed)));
        assert!(client.peer().is_closed());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_with_an_unknown_id_is_dropped() {
    let (peer, mut other) = hand_driven_peer().await;
    let call = spawn_add(&peer);
    let id = other.next_message().await["id"].clone();
    // Junk first: unknown ids of every type, a batch of them, a bad error.
    other.write(b"{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":999999}\n").await;
    other.write(b"{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":\"x\"}\n").await;
    other.write(b"[{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":-5}]\n").await;
    other.write(b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"x\"},\"id\":null}\n").await;
    other.write(format!("{{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":{id}}}\n")).await;
    assert_eq!(eventually(call).await.unwrap().unwrap(), 3);
    assert!(!peer.is_closed());
}

/// Generated code names everything by absolute path, and client helpers
/// step aside for trait methods of the same name.
mod hygiene {
    // Shadows that generated code must not pick up.
    #[allow(dead_code)]
    pub struct Result;
    #[allow(dead_code)]
    pub struct Option;
    #[allow(dead_code)]
    pub struct Vec;
    #[allow(dead_code)]
    pub struct String;
    #[allow(dead_code)]
    pub struct Box;

    /// Methods named like the client's own helpers.
    #[::rpc_runtime::rpc]
    pub trait Mailer {
        /// Sends mail.
        fn send(&self, to: ::std::string::String) -> bool;
        /// A new mailbox number.
        #[allow(clippy::new_ret_no_self, clippy::wrong_self_convention)]
        fn new(&self) -> u8;
        /// A batch number.
        fn batch(&self) -> u8;
        /// A peer number.
        fn peer(&self) -> u8;
        /// A timeout.
        fn with_timeout(&self) -> u8;
    }
}

struct MailerImpl;

impl hygiene::Mailer for MailerImpl {
    fn send(&self, to: String) -> bool {
        to.contains('@')
    }
    fn new(&self) -> u8 {
        1
    }
    fn batch(&self) -> u8 {
        2
    }
    fn peer(&self) -> u8 {
        3
    }
    fn with_timeout(&self) -> u8 {
        4
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helpers_step_aside_for_trait_methods() {
    use hygiene::{Mailer, MailerClient};
    let peer = Peer::builder().connect(Server::new(MailerImpl.into_rpc())).await.unwrap();
    let client = MailerClient::rpc_new(peer);
    assert!(client.send("a@b".into()).await.unwrap());
    assert_eq!(client.new().await.unwrap(), 1);
    assert_eq!(client.batch().await.unwrap(), 2);
    assert_eq!(client.peer().await.unwrap(), 3);
    assert_eq!(client.with_timeout().await.unwrap(), 4);
    assert!(!client.rpc_peer().is_closed());
    let client = client.rpc_with_timeout(Duration::from_secs(60));
    let mut batch = client.rpc_batch();
    let sent = batch.send("nobody".into());
    let number = batch.peer();
    batch.rpc_send().await.unwrap();
    assert!(!sent.await.unwrap());
    assert_eq!(number.await.unwrap(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_default_timeout_applies_unless_a_call_overrides_it() {
    let server = Server::new(BankImpl::default().into_rpc());
    let peer = Peer::builder().timeout(Duration::from_millis(20)).connect(server).await.unwrap();
    assert_eq!(peer.default_timeout(), Some(Duration::from_millis(20)));
    let client = BankClient::new(peer);
    assert!(
        matches!(client.slow(60_000).await, Err(ClientError::Timeout(limit)) if limit == Duration::from_millis(20))
    );
    // A longer per-call timeout lets a quick call finish.
    assert_eq!(client.with_timeout(Duration::from_secs(60)).slow(1).await.unwrap(), 1);
    // Untyped calls take a per-call timeout too.
    let params = serde_json::value::to_raw_value(&[60_000]).unwrap();
    let err = client.peer().call_raw("slow", Some(&params), Some(Duration::from_millis(10))).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout(limit) if limit == Duration::from_millis(10)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_reply_times_out_and_cancels_like_a_call() {
    for wire in WIRES {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let bank = BankImpl { cancelled: Some(tx), ..BankImpl::default() };
        let client = connect(wire, bank, Cancellation::Lsp).await.with_timeout(Duration::from_millis(20));
        // A server answers a batch in one message, once every entry is done,
        // so a stuck entry holds up the whole batch until it is cancelled.
        let mut batch = client.batch();
        let stuck = batch.wait_for_cancel();
        batch.poke(1);
        batch.send().await.unwrap();
        assert!(matches!(stuck.await, Err(ClientError::Timeout(_))));
        assert_eq!(eventually(rx.recv()).await, Some(true));
        // The late batch answer (-32800 for an abandoned id) is dropped; the
        // connection carries on.
        assert_eq!(client.with_timeout(Duration::from_secs(60)).pokes().await.unwrap(), vec![1]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_bounds_the_wait_to_send_when_the_other_side_stops_reading() {
    // The other side never reads: the writer blocks, then the outbox fills.
    let (ours, _theirs) = tokio::io::duplex(64);
    let peer = {
        let (reader, writer) = tokio::io::split(ours);
        Peer::builder()
            .timeout(Duration::from_millis(50))
            .connect(rpc_runtime::transport::stream::Stream::new(reader, writer))
            .await
            .unwrap()
    };
    let padding = "x".repeat(4096);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..3000 {
        let (peer, padding) = (peer.clone(), padding.clone());
        calls.spawn(async move { peer.call::<i64, _>("add", [padding]).await });
    }
    let results = eventually(calls.join_all()).await;
    assert!(results.iter().all(|result| matches!(result, Err(ClientError::Timeout(_)))));
    // Notifications return once queued, within the byte budget: sent on,
    // they fill it (and the writer's buffer of as much, 8 MB in all), and
    // then one waits for room and times out; so does a batch.
    let mut queued = 0usize;
    let notified = loop {
        match eventually(peer.notify("log", [&padding])).await {
            Ok(()) => queued += 1,
            refused => break refused,
        }
        assert!(queued < 4_000, "{queued} notifications of 4 KB queued to a peer that does not read");
    };
    assert!(matches!(notified, Err(ClientError::Timeout(_))), "{notified:?}");
    let mut batch = peer.batch();
    let reply = batch.call::<i64, _>("add", [1, 2]);
    let sent = eventually(batch.send()).await;
    assert!(matches!(sent, Err(ClientError::Timeout(_))), "{sent:?}");
    assert!(matches!(eventually(reply).await, Err(ClientError::Timeout(_))));
    assert!(!peer.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_mixing_responses_and_requests_resolves_the_calls_and_answers_the_requests() {
    let (peer, mut other) = hand_driven_peer().await;
    let call = spawn_add(&peer);
    let id = other.next_message().await["id"].clone();
    other
        .write(format!(
            "[{{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":{id}}},{{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"p\"}}]\n"
        ))
        .await;
    assert_eq!(eventually(call).await.unwrap().unwrap(), 3);
    // The request left is still a batch: answered as an array of one.
    let answer = other.next_message().await;
    let entries = answer.as_array().expect("an array");
    assert_eq!(entries.len(), 1, "{answer}");
    assert_eq!(entries[0]["id"], "p");
    assert_eq!(entries[0]["error"]["code"], METHOD_NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_with_both_result_and_error_fails_its_call() {
    let (peer, mut other) = hand_driven_peer().await;
    let call = spawn_add(&peer);
    let id = other.next_message().await["id"].clone();
    other
        .write(format!("{{\"jsonrpc\":\"2.0\",\"result\":3,\"error\":{{\"code\":1,\"message\":\"m\"}},\"id\":{id}}}\n"))
        .await;
    let err = eventually(call).await.unwrap().unwrap_err();
    assert!(matches!(err, ClientError::Decode(_)), "{err:?}");
    assert!(err.to_string().contains("both `result` and `error`"), "{err}");
    assert!(!peer.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_without_an_id_is_dropped_not_answered() {
    let (_peer, mut other) = hand_driven_peer().await;
    other.write(b"{\"jsonrpc\":\"2.0\",\"result\":1}\n").await;
    other.write(b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}\n").await;
    other.write(b"[{\"jsonrpc\":\"2.0\",\"result\":2}]\n").await;
    other.write(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"after\"}\n").await;
    // The first thing written back answers the request that came after.
    let answer = other.next_message().await;
    assert_eq!(answer["id"], "after", "{answer}");
    assert_eq!(answer["error"]["code"], METHOD_NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_sent_when_first_polled_and_outlives_its_client() {
    // A "server" driven by hand, to see the order requests arrive in.
    let (peer, mut other) = hand_driven_peer().await;
    let client = BankClient::new(peer);
    let first = client.add(40, 2);
    let second = client.greet("Ada".to_owned(), None);
    drop(client);
    let second = tokio::spawn(second);
    let greet = other.next_message().await;
    // The call made first was not sent: only polling sends.
    assert_eq!(greet["method"], "greet");
    assert_eq!(greet["params"], serde_json::json!({ "name": "Ada" }));
    let first = tokio::spawn(first);
    let add = other.next_message().await;
    assert_eq!(add["method"], "add");
    assert_eq!(add["params"], serde_json::json!({ "a": 40, "b": 2 }));
    for (request, result) in [(&add, serde_json::json!(42)), (&greet, serde_json::json!("Hello, Ada!"))] {
        let response = serde_json::json!({ "jsonrpc": "2.0", "id": request["id"], "result": result });
        other.write(format!("{response}\n")).await;
    }
    // Both calls complete although their client was dropped before either
    // was sent.
    assert_eq!(eventually(first).await.unwrap().unwrap(), 42);
    assert_eq!(eventually(second).await.unwrap().unwrap(), "Hello, Ada!");
}
