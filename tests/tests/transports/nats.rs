//! The NATS transport against a real `nats-server` (started on a free
//! loopback port; skipped with a message when the binary is missing,
//! mandatory under `RPC_REQUIRE_INTEROP=1`): calls, notifications,
//! batches, errors, timeouts and the connection hook with the generated
//! client; the calculator example as three replicas in one queue group
//! (load sharing, a rolling restart, a replica killed); no responders; the
//! broker's `max_payload`.

use crate::client_support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpc_runtime::transport::nats::async_nats::{self, HeaderMap};
use rpc_runtime::transport::nats::{NO_RESPONDERS, REFUSED};
use rpc_runtime::{
    rpc,
    wire::{INTERNAL_ERROR, INVALID_REQUEST},
    ClientError, Context, Peer, Refused, RpcError, Server,
};
use tests::nats::NatsServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// The tests that start three replicas and load them share two cores with
/// the broker: one at a time.
static LOADED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Errors of the test service.
#[derive(Debug, PartialEq, RpcError)]
pub enum SvcError {
    #[rpc(code = -32010, message = "Division by zero")]
    DivisionByZero,
}

/// The service served in-process for the client-side tests.
#[rpc]
pub trait Svc {
    /// `minuend - subtrahend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    /// Records `value` (a notification).
    #[rpc(notification)]
    fn record(&self, value: i64);
    /// Divides, or fails with a typed error.
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, SvcError>;
    /// Answers `ms` after that many milliseconds.
    async fn sleep(&self, ms: u64) -> u64;
    /// `n` times `x`.
    fn repeat(&self, n: usize) -> String;
    /// The user the connection hook attached, if any.
    fn whoami(&self, cx: Context) -> Option<String>;
}

struct SvcImpl {
    recorded: mpsc::UnboundedSender<i64>,
}

impl Svc for SvcImpl {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }
    fn record(&self, value: i64) {
        let _ = self.recorded.send(value);
    }
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, SvcError> {
        dividend.checked_div(divisor).ok_or(SvcError::DivisionByZero)
    }
    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
    fn repeat(&self, n: usize) -> String {
        "x".repeat(n)
    }
    fn whoami(&self, cx: Context) -> Option<String> {
        cx.extension::<User>().map(|user| user.0.clone())
    }
}

struct User(String);

async fn connect(server: &NatsServer) -> async_nats::Client {
    async_nats::connect(server.url()).await.expect("connecting to nats-server")
}

/// Serves the test service on `subject` in the background; returns what
/// `record` receives.
async fn serve_svc(
    broker: &NatsServer,
    subject: &str,
    configure: impl FnOnce(Server) -> Server,
) -> mpsc::UnboundedReceiver<i64> {
    let (recorded, received) = mpsc::unbounded_channel();
    let server = configure(Server::new(SvcImpl { recorded }.into_rpc()));
    let client = connect(broker).await;
    let subject = subject.to_owned();
    tokio::spawn(async move {
        server.serve(rpc_runtime::transport::nats::NatsListener::new(client, subject.clone(), subject)).await
    });
    // The subscription reaches the broker right after; give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    received
}

async fn svc_client(broker: &NatsServer, subject: &str) -> SvcClient {
    let peer = Peer::builder()
        .timeout(Duration::from_secs(10))
        .connect(rpc_runtime::transport::nats::NatsConnect::new(connect(broker).await, subject))
        .await
        .expect("connect over NATS");
    SvcClient::new(peer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_notifications_batches_errors_and_timeouts() {
    let Some(broker) = NatsServer::start("calls_notifications_batches_errors_and_timeouts") else { return };
    let mut recorded = serve_svc(&broker, "svc.basic", |server| server).await;
    let svc = svc_client(&broker, "svc.basic").await;

    assert_eq!(svc.subtract(42, 23).await.unwrap(), 19);
    assert_eq!(svc.sleep(10).await.unwrap(), 10);

    // A typed error, and a protocol error.
    assert_eq!(svc.divide(1, 0).await.unwrap_err().app_error(), Some(&SvcError::DivisionByZero));
    let peer = svc_peer(&broker, "svc.basic").await;
    let unknown = peer.call::<i64, _>("nope", [1]).await.unwrap_err();
    assert_eq!(unknown.server_error().map(|e| e.code()), Some(rpc_runtime::wire::METHOD_NOT_FOUND));

    // A notification arrives and is never answered.
    svc.record(7).await.unwrap();
    assert_eq!(tokio::time::timeout(Duration::from_secs(5), recorded.recv()).await.unwrap(), Some(7));

    // A typed batch: one message out, one back.
    let mut batch = svc.batch();
    let difference = batch.subtract(5, 3);
    let quotient = batch.divide(1, 0);
    let slow = batch.sleep(20);
    batch.record(8);
    batch.send().await.unwrap();
    assert_eq!(difference.await.unwrap(), 2);
    assert_eq!(quotient.await.unwrap_err().app_error(), Some(&SvcError::DivisionByZero));
    assert_eq!(slow.await.unwrap(), 20);
    assert_eq!(tokio::time::timeout(Duration::from_secs(5), recorded.recv()).await.unwrap(), Some(8));

    // Timeouts: the call fails with the client's limit, the next works.
    let started = Instant::now();
    let err = svc.with_timeout(Duration::from_millis(200)).sleep(3_000).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout(limit) if limit == Duration::from_millis(200)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(svc.subtract(1, 1).await.unwrap(), 0);

    // Many calls at once from one peer, answered out of order.
    let calls: Vec<_> = (0..200).map(|i| svc.subtract(i, 1)).collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap(), i as i64 - 1);
    }
}

async fn svc_peer(broker: &NatsServer, subject: &str) -> Peer {
    Peer::builder()
        .timeout(Duration::from_secs(10))
        .connect(rpc_runtime::transport::nats::NatsConnect::new(connect(broker).await, subject))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_is_never_answered_even_with_a_reply_subject() {
    let Some(broker) = NatsServer::start("a_notification_is_never_answered_even_with_a_reply_subject") else {
        return;
    };
    let mut recorded = serve_svc(&broker, "svc.quiet", |server| server).await;
    let client = connect(&broker).await;
    let raw = |payload: &'static [u8]| {
        async_nats::client::Request::new().payload(payload.into()).timeout(Some(Duration::from_millis(300)))
    };
    // A request sent by hand is answered on its reply subject...
    let request = br#"{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":"a"}"#;
    let answer = client.send_request("svc.quiet", raw(request)).await.expect("an answer");
    assert_eq!(&answer.payload[..], br#"{"jsonrpc":"2.0","result":3,"id":"a"}"#);
    // ... a notification, or a batch of them, is not, reply subject or not.
    let notification = br#"{"jsonrpc":"2.0","method":"record","params":{"value":3}}"#;
    let batch = br#"[{"jsonrpc":"2.0","method":"record","params":{"value":4}}]"#;
    for (payload, value) in [(&notification[..], 3), (&batch[..], 4)] {
        let answered = client.send_request("svc.quiet", raw(payload)).await;
        assert!(
            matches!(&answered, Err(err) if err.kind() == async_nats::client::RequestErrorKind::TimedOut),
            "a notification was answered: {answered:?}"
        );
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), recorded.recv()).await.unwrap(), Some(value));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_sees_each_message_headers() {
    let Some(broker) = NatsServer::start("the_hook_sees_each_message_headers") else { return };
    let check = |info: &rpc_runtime::ConnectionInfo, cx: Context| {
        assert_eq!(info.transport(), "nats");
        assert!(info.part::<async_nats::Subject>().is_some_and(|subject| subject.starts_with("svc.auth")));
        let token = info.part::<HeaderMap>().and_then(|headers| headers.get("Authorization")).map(|v| v.to_string());
        match token.as_deref() {
            Some("Bearer ada") => Ok(cx.with_extension(User("ada".to_owned()))),
            Some(_) => Err(Refused::forbidden("unknown token")),
            None => Err(Refused::unauthorized("no token")),
        }
    };
    serve_svc(&broker, "svc.auth", |server| server.on_connect(check)).await;
    // The same check, as a hook that waits (it runs on a task of its own).
    serve_svc(&broker, "svc.auth2", |server| {
        server.on_connect_async(move |info, cx| {
            let outcome = check(info, cx);
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                outcome
            }
        })
    })
    .await;

    for subject in ["svc.auth", "svc.auth2"] {
        let mut headers = HeaderMap::new();
        headers.insert("Authorization", "Bearer ada");
        let peer = Peer::builder()
            .timeout(Duration::from_secs(10))
            .connect(rpc_runtime::transport::nats::NatsConnect::new(connect(&broker).await, subject).headers(headers));
        let ada = SvcClient::new(peer.await.unwrap());
        assert_eq!(ada.whoami().await.unwrap().as_deref(), Some("ada"));
        let mut batch = ada.batch();
        let (a, b) = (batch.whoami(), batch.subtract(3, 1));
        batch.send().await.unwrap();
        assert_eq!((a.await.unwrap().as_deref(), b.await.unwrap()), (Some("ada"), 2));

        let anonymous = svc_client(&broker, subject).await;
        let err = anonymous.whoami().await.unwrap_err();
        let error = err.server_error().expect("an error object");
        assert_eq!((error.code(), error.message()), (REFUSED, "Unauthorized"));

        let mut headers = HeaderMap::new();
        headers.insert("Authorization", "Bearer eve");
        let peer = Peer::builder()
            .connect(rpc_runtime::transport::nats::NatsConnect::new(connect(&broker).await, subject).headers(headers))
            .await
            .unwrap();
        let eve = SvcClient::new(peer).with_timeout(Duration::from_secs(10));
        let mut batch = eve.batch();
        let (a, b) = (batch.whoami(), batch.subtract(3, 1));
        batch.send().await.unwrap();
        for err in [a.await.unwrap_err().server_error().cloned(), b.await.unwrap_err().server_error().cloned()] {
            let error = err.expect("an error object");
            assert_eq!((error.code(), error.message()), (REFUSED, "Forbidden"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_responders_fails_fast() {
    let Some(broker) = NatsServer::start("no_responders_fails_fast") else { return };
    let svc = svc_client(&broker, "svc.nobody").await;
    let started = Instant::now();
    let err = svc.subtract(1, 2).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    let error = err.server_error().unwrap_or_else(|| panic!("not a server error: {err:?}"));
    assert_eq!(error.code(), NO_RESPONDERS);
    assert!(error.message().contains("No responders") && error.message().contains("svc.nobody"), "{error}");
    // Made by the client from the broker's status: shown as it is, not as
    // a server's answer.
    assert!(err.to_string().starts_with("No responders"), "{err}");

    let mut batch = svc.batch();
    let (a, b) = (batch.subtract(1, 2), batch.sleep(1));
    batch.send().await.unwrap();
    assert_eq!(a.await.unwrap_err().server_error().map(|e| e.code()), Some(NO_RESPONDERS));
    assert_eq!(b.await.unwrap_err().server_error().map(|e| e.code()), Some(NO_RESPONDERS));
    // Notifications are plain publishes: nobody listening is not an error.
    svc.record(1).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_max_payload_bounds_requests_and_answers() {
    let Some(broker) =
        NatsServer::start_with("the_broker_max_payload_bounds_requests_and_answers", "max_payload: 4096")
    else {
        return;
    };
    serve_svc(&broker, "svc.small", |server| server).await;
    let svc = svc_client(&broker, "svc.small").await;
    assert_eq!(svc.repeat(100).await.unwrap().len(), 100);

    // An answer over the limit becomes an error for its id.
    let err = svc.repeat(10_000).await.unwrap_err();
    let error = err.server_error().unwrap_or_else(|| panic!("not a server error: {err:?}"));
    assert_eq!(error.code(), INTERNAL_ERROR);
    assert!(error.message().contains("max_payload of 4096 bytes"), "{error}");
    // In a batch, each call gets it.
    let mut batch = svc.batch();
    let (a, b) = (batch.repeat(3_000), batch.repeat(3_000));
    batch.send().await.unwrap();
    assert_eq!(a.await.unwrap_err().server_error().map(|e| e.code()), Some(INTERNAL_ERROR));
    assert_eq!(b.await.unwrap_err().server_error().map(|e| e.code()), Some(INTERNAL_ERROR));

    // One call and 999 invalid entries: the answer's 999 errors with id
    // null cannot all be replaced, but the call still gets its -32603.
    let client = connect(&broker).await;
    let mut flood = String::from(r#"[{"jsonrpc":"2.0","method":"repeat","params":[10],"id":77}"#);
    flood.push_str(&",1".repeat(999));
    flood.push(']');
    let request = async_nats::client::Request::new().payload(flood.into()).timeout(Some(Duration::from_secs(5)));
    let answer = client.send_request("svc.small", request).await.expect("an answer");
    let answer: serde_json::Value = serde_json::from_slice(&answer.payload).expect("JSON");
    let entries = answer.as_array().unwrap_or_else(|| panic!("a batch answer: {answer}"));
    assert_eq!(entries.len(), 1, "{answer}");
    assert_eq!(entries[0]["id"], 77, "{answer}");
    assert_eq!(entries[0]["error"]["code"], INTERNAL_ERROR, "{answer}");

    // A request over the limit is not sent, and says why.
    let peer = svc_peer(&broker, "svc.small").await;
    let err = peer.call::<String, _>("repeat", ["y".repeat(5_000)]).await.unwrap_err();
    let error = err.server_error().unwrap_or_else(|| panic!("not a server error: {err:?}"));
    assert_eq!(error.code(), INVALID_REQUEST);
    assert!(error.message().contains("max_payload of 4096 bytes"), "{error}");
    // The connection carries on.
    assert_eq!(svc.subtract(2, 1).await.unwrap(), 1);
}

/// The calculator's methods the replica tests call.
#[rpc]
pub trait Calculator {
    /// `minuend - subtrahend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    /// Answers `ms` after that many milliseconds.
    async fn sleep(&self, ms: u64) -> u64;
}

/// One calculator process serving a subject over NATS.
struct Replica {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
}

impl Replica {
    async fn start(broker: &NatsServer, subject: &str) -> Replica {
        let mut child = Command::new(client_support::calculator())
            .args(["--nats", broker.url(), "--subject", subject])
            .env("RPC_LOG", "info")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the calculator starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, mut lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let _ = tx.send(line);
            }
        });
        let ready = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.recv().await {
                if line.starts_with("serving NATS subject") {
                    return true;
                }
            }
            false
        });
        assert!(ready.await.unwrap_or(false), "the calculator did not start serving");
        // Its subscription reaches the broker right after.
        tokio::time::sleep(Duration::from_millis(300)).await;
        Replica { child, lines }
    }

    /// SIGTERM: drains and exits; returns how many messages it received.
    async fn stop(mut self) -> u64 {
        let pid = self.child.id().expect("running").to_string();
        let status = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await;
        let exit = exit.expect("the replica drains within 20 s").expect("wait");
        assert!(exit.success(), "the replica exited with {exit}");
        let mut received = None;
        // Its log up to the end (the reader stops at end of file).
        while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(5), self.lines.recv()).await {
            if line.contains("drained") {
                eprintln!("{line}");
                let count = line.split("received=").nth(1).and_then(|rest| rest.split(' ').next());
                received = count.and_then(|n| n.parse().ok());
            }
        }
        received.expect("the replica reported how many messages it received")
    }

    /// SIGKILL: gone at once, with whatever it held.
    async fn kill(mut self) {
        self.child.kill().await.expect("kill");
    }
}

async fn calculator_clients(
    broker: &NatsServer,
    subject: &str,
    count: usize,
    timeout: Duration,
) -> Vec<CalculatorClient> {
    let mut clients = Vec::new();
    for _ in 0..count {
        let peer = Peer::builder()
            .timeout(timeout)
            .connect(rpc_runtime::transport::nats::NatsConnect::new(connect(broker).await, subject))
            .await
            .unwrap();
        clients.push(CalculatorClient::new(peer));
    }
    clients
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_share_ten_thousand_calls() {
    let Some(broker) = NatsServer::start("three_replicas_share_ten_thousand_calls") else { return };
    let _one_at_a_time = LOADED.lock().await;
    let subject = "svc.calculator";
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&broker, subject).await);
    }
    let clients = calculator_clients(&broker, subject, 4, Duration::from_secs(20)).await;
    let (workers_per_client, calls_per_worker) = (25, 100);
    let mut workers = tokio::task::JoinSet::new();
    for (c, client) in clients.iter().enumerate() {
        for w in 0..workers_per_client {
            let client = client.clone();
            workers.spawn(async move {
                for i in 0..calls_per_worker {
                    let n = ((c * workers_per_client + w) * calls_per_worker + i) as i64;
                    assert_eq!(client.subtract(n, 1).await.expect("a call"), n - 1);
                }
            });
        }
    }
    let all = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(done) = workers.join_next().await {
            done.expect("a worker");
        }
    });
    all.await.expect("10,000 calls within 120 s");
    let mut counts = Vec::new();
    for replica in replicas {
        counts.push(replica.stop().await);
    }
    assert_eq!(counts.iter().sum::<u64>(), 10_000, "each call reached exactly one replica: {counts:?}");
    assert!(counts.iter().all(|&n| n >= 1_000), "the calls were spread over all three: {counts:?}");
}

/// Calls kept going from several clients until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicU64>,
    failures: Arc<Mutex<Vec<(Instant, ClientError)>>>,
    workers: tokio::task::JoinSet<()>,
}

impl Load {
    fn start(clients: &[CalculatorClient], workers_per_client: usize, sleep_ms: u64) -> Load {
        let load = Load {
            stop: Arc::new(AtomicBool::new(false)),
            ok: Arc::new(AtomicU64::new(0)),
            failures: Arc::new(Mutex::new(Vec::new())),
            workers: tokio::task::JoinSet::new(),
        };
        let mut workers = load.workers;
        for client in clients {
            for w in 0..workers_per_client {
                let (client, stop, ok, failures) =
                    (client.clone(), load.stop.clone(), load.ok.clone(), load.failures.clone());
                workers.spawn(async move {
                    let mut n = w as i64;
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let outcome = if sleep_ms > 0 {
                            client.sleep(sleep_ms).await.map(|ms| ms == sleep_ms)
                        } else {
                            client.subtract(n, 1).await.map(|d| d == n - 1)
                        };
                        match outcome {
                            Ok(right) => {
                                assert!(right, "a wrong answer");
                                ok.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(err) => failures.lock().unwrap().push((started, err)),
                        }
                        n += 1;
                    }
                });
            }
        }
        Load { workers, ..load }
    }

    fn ok(&self) -> u64 {
        self.ok.load(Ordering::Relaxed)
    }

    /// Stops the load and waits for the calls in flight.
    async fn finish(mut self) -> (u64, Vec<(Instant, ClientError)>) {
        self.stop.store(true, Ordering::Relaxed);
        let drained = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(done) = self.workers.join_next().await {
                done.expect("a worker");
            }
        });
        drained.await.expect("every call ends: none hangs");
        let failures = std::mem::take(&mut *self.failures.lock().unwrap());
        (self.ok(), failures)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_fails_no_call() {
    let Some(broker) = NatsServer::start("a_rolling_restart_under_load_fails_no_call") else { return };
    let _one_at_a_time = LOADED.lock().await;
    let subject = "svc.rolling";
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&broker, subject).await);
    }
    let clients = calculator_clients(&broker, subject, 4, Duration::from_secs(15)).await;
    let load = Load::start(&clients, 16, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    for round in 0..3 {
        let before = load.ok();
        let old = replicas.remove(0);
        let received = old.stop().await;
        assert!(received > 0, "replica {round} received nothing before it was stopped");
        replicas.push(Replica::start(&broker, subject).await);
        assert!(load.ok() > before, "calls kept flowing during restart {round}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (ok, failures) = load.finish().await;
    let failures: Vec<String> = failures.iter().map(|(_, err)| err.to_string()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} calls failed: {:?}",
        failures.len(),
        ok as usize + failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(ok > 1_000, "only {ok} calls");
    for replica in replicas {
        replica.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replica_loses_only_the_calls_it_held() {
    let Some(broker) = NatsServer::start("a_killed_replica_loses_only_the_calls_it_held") else { return };
    let _one_at_a_time = LOADED.lock().await;
    let subject = "svc.killed";
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&broker, subject).await);
    }
    let timeout = Duration::from_secs(2);
    let clients = calculator_clients(&broker, subject, 3, timeout).await;
    // Each call is held 100 ms by the replica that takes it, so that the
    // killed one holds some.
    let load = Load::start(&clients, 10, 100);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed_at = Instant::now();
    replicas.remove(0).kill().await;
    // Well past the timeout of the calls it held.
    tokio::time::sleep(timeout + Duration::from_millis(1_500)).await;
    let ok_after_kill = load.ok();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(load.ok() > ok_after_kill, "new calls flow to the survivors");
    let (ok, failures) = load.finish().await;
    assert!(!failures.is_empty(), "the killed replica held calls; they must have failed");
    assert!(failures.len() <= 30, "more calls failed ({}) than were in flight", failures.len());
    for (started, err) in &failures {
        assert!(matches!(err, ClientError::Timeout(limit) if *limit == timeout), "not a timeout: {err:?}");
        // The broker notices the dead connection at once.
        assert!(*started < killed_at + Duration::from_millis(250), "a call started after the kill failed");
    }
    assert!(ok > 100, "only {ok} calls succeeded");
    for replica in replicas {
        replica.stop().await;
    }
}
