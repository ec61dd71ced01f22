//! Load: many connections, each with many requests in flight, against the
//! calculator over TCP, while other clients flood it with large requests
//! and never read. Every request must be answered exactly once and
//! correctly, and the server's peak memory (from `/proc`) must stay within
//! what the byte limits allow.
//!
//! The default run is small enough for `cargo test` (100 connections x
//! 100 requests, 16 in flight each, 10 flooders); the `#[ignore]`d one is
//! the load test of BENCHMARKS.md:
//!
//! ```text
//! cargo test --release -p tests --test integration transports::load:: -- --ignored --nocapture
//! ```

use crate::common;
use crate::measure;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Wire;
use measure::{peak_rss_kib, procfs, rss_kib, Stderr, TcpCalculator, MIB};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// The shape of one run.
struct Load {
    connections: u64,
    requests_per_connection: u64,
    in_flight: usize,
    flooders: u64,
}

/// What one run measured.
struct Outcome {
    answered: u64,
    elapsed: Duration,
    baseline_kib: u64,
    peak_kib: u64,
}

/// Request `n` of connection `conn`: alternately `subtract` and `echo`,
/// with the answer it must get.
fn request(conn: u64, n: u64) -> (String, Value) {
    let id = conn * 1_000_000 + n;
    if n.is_multiple_of(2) {
        let (a, b) = (id as i64, (n * 7) as i64);
        (format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[{a},{b}],"id":{id}}}"#), Value::from(a - b))
    } else {
        let text = format!("connection {conn} request {n}");
        (format!(r#"{{"jsonrpc":"2.0","method":"echo","params":["{text}"],"id":{id}}}"#), Value::from(text))
    }
}

/// One well-behaved client: keeps `in_flight` requests outstanding until
/// all are sent, and checks that each is answered once, correctly.
async fn client(addr: SocketAddr, conn: u64, requests: u64, in_flight: usize) -> u64 {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (read_half, mut write_half) = stream.into_split();
    let window = Arc::new(Semaphore::new(in_flight));
    let expected: HashMap<u64, Value> = (0..requests).map(|n| (conn * 1_000_000 + n, request(conn, n).1)).collect();
    let writer = tokio::spawn({
        let window = Arc::clone(&window);
        async move {
            for n in 0..requests {
                window.acquire().await.expect("open").forget();
                let (text, _) = request(conn, n);
                write_half.write_all(&Wire::Ndjson.encode(text.as_bytes())).await.expect("send");
            }
            write_half.shutdown().await.expect("half-close");
        }
    });
    let mut reader = BufReader::new(read_half);
    let mut answered: HashMap<u64, Value> = HashMap::new();
    while let Some(frame) = Wire::Ndjson.read_frame(&mut reader).await.expect("read") {
        let answer: Value = serde_json::from_slice(&frame).expect("an answer is JSON");
        let id = answer["id"].as_u64().unwrap_or_else(|| panic!("connection {conn}: {answer}"));
        let result = answer.get("result").cloned().unwrap_or_else(|| panic!("connection {conn}: {answer}"));
        assert!(answered.insert(id, result).is_none(), "connection {conn}: id {id} answered twice");
        window.add_permits(1);
    }
    writer.await.unwrap();
    assert_eq!(answered.len(), expected.len(), "connection {conn}: every request answered");
    assert_eq!(answered, expected, "connection {conn}: every answer correct");
    answered.len() as u64
}

/// A client that sends 256 KiB `echo` requests as fast as it can and
/// never reads; it stops when `stop` is closed.
async fn flooder(addr: SocketAddr, stop: Arc<Semaphore>) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (_never_read, mut write_half) = stream.into_split();
    let payload = "f".repeat(256 << 10);
    let message =
        Wire::Ndjson.encode(format!(r#"{{"jsonrpc":"2.0","method":"echo","params":["{payload}"],"id":0}}"#).as_bytes());
    tokio::select! {
        _ = stop.acquire() => {}
        () = async { while write_half.write_all(&message).await.is_ok() {} } => {}
    }
}

async fn run(load: Load) -> Outcome {
    let server = TcpCalculator::spawn("ndjson", &[], Stderr::Collected).await;
    let mut warm = common::connect(server.addr, Wire::Ndjson).await;
    assert_eq!(
        warm.call(br#"{"jsonrpc":"2.0","method":"subtract","params":[2,1],"id":1}"#).await,
        common::result("1", "1")
    );
    let baseline_kib = rss_kib(server.pid());
    let stop = Arc::new(Semaphore::new(0));
    let floods: Vec<_> = (0..load.flooders).map(|_| tokio::spawn(flooder(server.addr, Arc::clone(&stop)))).collect();
    let started = Instant::now();
    let clients: Vec<_> = (0..load.connections)
        .map(|conn| tokio::spawn(client(server.addr, conn, load.requests_per_connection, load.in_flight)))
        .collect();
    let mut answered = 0;
    for client in clients {
        answered += tokio::time::timeout(Duration::from_secs(300), client)
            .await
            .expect("the clients finish")
            .expect("a client's checks");
    }
    let elapsed = started.elapsed();
    let peak_kib = peak_rss_kib(server.pid());
    stop.close();
    for flood in floods {
        flood.await.unwrap();
    }
    Outcome { answered, elapsed, baseline_kib, peak_kib }
}

/// The server's peak may grow by at most this: each flooder's unsent
/// answers (the 4 MiB limit) plus the request being read and the answer
/// being made, for the 100 clients their small buffers, and room for the
/// allocator and the runtime.
fn allowed_growth_kib(load: &Load) -> u64 {
    load.flooders * (4 * MIB + 2 * MIB) + 64 * MIB
}

async fn run_and_check(load: Load) {
    let total = load.connections * load.requests_per_connection;
    let allowed = allowed_growth_kib(&load);
    let outcome = run(load).await;
    assert_eq!(outcome.answered, total);
    let growth = outcome.peak_kib.saturating_sub(outcome.baseline_kib);
    let report = format!(
        "{total} requests answered once and correctly in {:.2?} ({:.0} requests/s) during the flood; \
         server peak {} MiB over a baseline of {} MiB (allowed {} MiB)",
        outcome.elapsed,
        total as f64 / outcome.elapsed.as_secs_f64(),
        growth / MIB,
        outcome.baseline_kib / MIB,
        allowed / MIB
    );
    assert!(growth < allowed, "{report}");
    eprintln!("{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn many_connections_each_answered_exactly_once_with_bounded_memory_under_a_flood() {
    if !procfs("many_connections_each_answered_exactly_once_with_bounded_memory_under_a_flood") {
        return;
    }
    run_and_check(Load { connections: 100, requests_per_connection: 100, in_flight: 16, flooders: 10 }).await;
}

/// The load test of BENCHMARKS.md: 100 connections x 2,000 requests, 64 in
/// flight on each, 20 flooders.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a load test (a minute in debug builds): run with --release --ignored"]
async fn load_test() {
    if !procfs("load_test") {
        return;
    }
    run_and_check(Load { connections: 100, requests_per_connection: 2_000, in_flight: 64, flooders: 20 }).await;
}
