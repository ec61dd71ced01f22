//! Logs under attack stay bounded and never hold up other clients (issue
//! 14, finding 4, beyond what `hostile_input.rs` covers for panics and a
//! notification flood over stdio): one TCP client sending thousands of
//! unmatched responses, malformed header blocks, junk between frames and
//! panicking calls makes the server write a few lines, not one per event;
//! with stderr a pipe nobody reads and every event logged
//! (`RPC_LOG=debug`), another client is still answered; and accept
//! failures at the descriptor limit are logged once per interval, not 20
//! times a second.

use crate::common;
use crate::measure;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{result, Wire};
use measure::{procfs, Stderr, TcpCalculator};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

fn req(method: &str, params: &str, id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":{id}}}"#)
}

/// What the flooding client sends, `Content-Length` framed: `rounds` x
/// (an unmatched response, a header block with an unreadable length, junk
/// before a valid request), then two batches of 1,000 `panic` calls.
/// Returns the bytes and how many answers they get.
fn flood(rounds: u64) -> (Vec<u8>, usize) {
    let wire = Wire::ContentLength;
    let mut bytes = Vec::new();
    let mut answers = 0;
    for n in 0..rounds {
        bytes.extend(wire.encode(format!(r#"{{"jsonrpc":"2.0","result":{n},"id":{}}}"#, 1_000_000 + n).as_bytes()));
        bytes.extend_from_slice(b"Content-Length: 1x\r\n\r\n");
        bytes.extend_from_slice(b"garbage\r\n");
        bytes.extend(wire.encode(req("subtract", "[2,1]", n).as_bytes()));
        answers += 2;
    }
    for batch in 0..2 {
        let calls: Vec<String> = (0..1_000).map(|i| req("panic", "[]", batch * 1_000 + i)).collect();
        bytes.extend(wire.encode(format!("[{}]", calls.join(",")).as_bytes()));
        answers += 1;
    }
    (bytes, answers)
}

/// Sends the flood on a connection of its own while reading every answer;
/// returns how many answers there were, once the server closed its side.
async fn send_flood(addr: SocketAddr, bytes: Vec<u8>) -> usize {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (read_half, mut write_half) = stream.into_split();
    let writing = tokio::spawn(async move {
        write_half.write_all(&bytes).await.expect("send the flood");
        write_half.shutdown().await.expect("half-close");
    });
    let mut reader = BufReader::new(read_half);
    let mut answers = 0;
    while Wire::ContentLength.read_frame(&mut reader).await.expect("read an answer").is_some() {
        answers += 1;
    }
    writing.await.unwrap();
    answers
}

/// At the default log level, 5,000 rounds of remote-caused trouble (and
/// 2,000 panics) leave a few throttled lines, and every bad frame still
/// gets its answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_bad_input_from_one_client_writes_a_few_log_lines() {
    let server = TcpCalculator::spawn("content-length", &[("RUST_BACKTRACE", "0")], Stderr::Collected).await;
    let (bytes, expected) = flood(5_000);
    let answers = tokio::time::timeout(Duration::from_secs(20), send_flood(server.addr, bytes)).await.unwrap();
    assert_eq!(answers, expected);
    let mut other = common::connect(server.addr, Wire::ContentLength).await;
    assert_eq!(other.call(req("subtract", "[5,3]", 1)).await, result("2", "1"));
    tokio::time::sleep(Duration::from_millis(200)).await; // let the log writer catch up
    let stderr = server.stderr();
    assert!(stderr.contains("malformed message header"), "the first one is logged:\n{stderr}");
    assert!(stderr.contains("skipped malformed input"), "the first one is logged:\n{stderr}");
    assert!(stderr.lines().count() <= 20, "{} lines for {expected} events:\n{stderr}", stderr.lines().count());
    assert!(stderr.len() < 8 * 1024, "{} bytes of stderr:\n{stderr}", stderr.len());
}

/// With every event logged (`RPC_LOG=debug`, so each unmatched response
/// is a line) and stderr a pipe nobody reads, one client's flood must not
/// hold up another client: 3,000 unmatched responses from one client
/// used to stall a different one.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_logged_to_an_undrained_stderr_does_not_stall_another_client() {
    let server = TcpCalculator::spawn("content-length", &[("RPC_LOG", "debug")], Stderr::Undrained).await;
    let (bytes, expected) = flood(10_000);
    let flooding = tokio::spawn(send_flood(server.addr, bytes));
    let mut other = common::connect(server.addr, Wire::ContentLength).await;
    let started = Instant::now();
    for id in 0..50 {
        let answer = tokio::time::timeout(Duration::from_secs(10), other.call(req("subtract", "[5,3]", id))).await;
        assert_eq!(answer.ok(), Some(result("2", &id.to_string())), "the other client stalled");
    }
    let answers = tokio::time::timeout(Duration::from_secs(30), flooding).await.expect("the flood is answered");
    assert_eq!(answers.unwrap(), expected);
    eprintln!("50 calls answered in {:?} during the flood", started.elapsed());
}

/// Accept failures at the descriptor limit (the server has 24 here, and
/// 40 clients hold connections) are retried every 50 ms; they used to log
/// a line each time. Now the first is logged and the rest counted; once
/// descriptors are free again, waiting clients are served.
#[tokio::test(flavor = "multi_thread")]
async fn accept_failures_at_the_descriptor_limit_are_logged_once_per_interval() {
    if !procfs("accept_failures_at_the_descriptor_limit_are_logged_once_per_interval") {
        return;
    }
    let wire = Wire::Ndjson;
    let server = TcpCalculator::spawn_with_fd_limit(wire.arg(), 24, Stderr::Collected).await;
    let mut clients = Vec::new();
    for _ in 0..40 {
        clients.push(TcpStream::connect(server.addr).await.expect("the kernel accepts into the backlog"));
    }
    // A second and a half of failed accepts: about 30 retries.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let stderr = server.stderr();
    let lines = stderr.matches("accepting connections failed").count();
    assert_eq!(lines, 1, "{stderr}");
    drop(clients);
    let mut late = common::connect(server.addr, wire).await;
    assert_eq!(late.call(req("subtract", "[5,3]", 1)).await, result("2", "1"));
}

/// A stderr nobody reads, filled by a flood of log lines, must not hold
/// up a graceful shutdown either: the notes the calculator writes on
/// SIGTERM, and any panic report, go through the non-blocking log (a
/// direct write to the full pipe would block for good).
#[tokio::test(flavor = "multi_thread")]
async fn a_full_undrained_stderr_holds_up_neither_panics_nor_shutdown() {
    // Kept whole: its stderr pipe stays open, unread.
    let mut calc = common::UndrainedCalculator::spawn();
    // Each notification logs a line: far more than the pipe holds.
    let note = r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#.to_owned() + "\n";
    calc.stdin.write_all(note.repeat(20_000).as_bytes()).await.unwrap();
    // A panic at a place that has not panicked before, then a slow request
    // and a quick one; the quick answer shows both others were read.
    for request in [req("panic", "[]", 1), req("sleep", "[300]", 2), req("subtract", "[5,3]", 3)] {
        calc.stdin.write_all(format!("{request}\n").as_bytes()).await.unwrap();
    }
    calc.stdin.flush().await.unwrap();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        answers.push(calc.conn.recv().await);
    }
    assert!(answers[0].contains("-32603"), "{answers:?}");
    assert_eq!(answers[1], result("2", "3"));
    let pid = calc.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert_eq!(calc.conn.recv().await, result("300", "2"), "the running request is answered");
    let status = tokio::time::timeout(Duration::from_secs(10), calc.child.wait()).await.expect("the calculator exits");
    assert!(status.unwrap().success());
}
