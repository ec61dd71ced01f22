//! Faults, end to end: clients that go away mid-request (a reset, issue
//! 14 finding 2) or half-close, a server that dies mid-call, a frame cut
//! short by the end of input, and handlers that never return. The server
//! is measured from outside where it matters (open file descriptors from
//! `/proc/<pid>/fd`, running handlers through the calculator's `waiting`).

use crate::common;
use crate::measure;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{result, Conn, Wire};
use measure::{open_fds, procfs, within, Stderr, TcpCalculator};
use rpc_runtime::{rpc, wire::SERVER_OVERLOADED, Cancellation, ClientError, Context, Framing, Limits, Peer, Server};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How long "promptly" is: far longer than anything here takes, far
/// shorter than the handlers' own waits (an hour).
const PROMPTLY: Duration = Duration::from_secs(3);

fn req(method: &str, params: &str, id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":{id}}}"#)
}

/// A client connection that can be reset: one socket, not split (a split
/// write half sends a FIN when dropped, which would make the reset a
/// half-close first).
async fn send_then_keep(addr: SocketAddr, wire: Wire, message: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(&wire.encode(message.as_bytes())).await.expect("send");
    stream
}

/// Closes `stream` with a reset (`SO_LINGER` 0): the other side's next
/// read fails at once.
fn reset(stream: TcpStream) {
    stream.set_zero_linger().expect("SO_LINGER 0");
    drop(stream);
}

/// The calculator's count of running `wait` calls, asked on `probe`.
async fn waiting(probe: &mut Conn) -> u64 {
    let answer: Value = serde_json::from_str(&probe.call(req("waiting", "[]", 0)).await).unwrap();
    answer["result"].as_u64().unwrap_or_else(|| panic!("waiting: {answer}"))
}

/// The calculator over TCP with at most 64 open descriptors, a probe
/// connection that was answered, and the descriptors open then.
async fn calculator_with_64_descriptors() -> (TcpCalculator, Conn, usize) {
    let server = TcpCalculator::spawn_with_fd_limit(Wire::Ndjson.arg(), 64, Stderr::Collected).await;
    let mut probe = common::connect(server.addr, Wire::Ndjson).await;
    assert_eq!(probe.call(req("subtract", "[2,1]", 1)).await, result("1", "1"));
    let baseline = open_fds(server.pid());
    (server, probe, baseline)
}

/// Waits (promptly) until the calculator runs no `wait` call.
async fn until_no_waits(probe: &mut Conn, when: &str) {
    let deadline = Instant::now() + PROMPTLY;
    loop {
        let running = waiting(probe).await;
        if running == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{when}: {running} waits still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Finding 2: 1,030 one-shot clients that each sent `sleep(3600000)` and
/// went away used up the server's 1,024 file descriptors: each connection
/// stayed open until its handler ended, and new clients got no answer.
/// Here the server has 64 descriptors and 120 clients come and go in
/// rounds, each sending an hour-long `wait` (which watches for
/// cancellation) or `sleep` (which does not) and resetting the
/// connection. Every reset frees its socket at once, every `wait` is
/// cancelled, and the server goes on answering.
#[tokio::test(flavor = "multi_thread")]
async fn reset_connections_free_their_sockets_and_cancel_their_handlers() {
    if !procfs("reset_connections_free_their_sockets_and_cancel_their_handlers") {
        return;
    }
    let wire = Wire::Ndjson;
    let (server, mut probe, baseline) = calculator_with_64_descriptors().await;
    let pid = server.pid();
    for round in 0..4 {
        let mut clients = Vec::new();
        for i in 0..30 {
            let method = if i % 2 == 0 { "wait" } else { "sleep" };
            clients.push(send_then_keep(server.addr, wire, &req(method, "[3600000]", i)).await);
        }
        // Every `wait` is running, and every connection holds a socket.
        assert!(within(PROMPTLY, || open_fds(pid) >= baseline + 30).await, "round {round}: {} fds", open_fds(pid));
        let deadline = Instant::now() + PROMPTLY;
        while waiting(&mut probe).await < 15 {
            assert!(Instant::now() < deadline, "round {round}: the waits did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for client in clients {
            reset(client);
        }
        let freed = within(PROMPTLY, || open_fds(pid) <= baseline).await;
        assert!(freed, "round {round}: {} fds open after the resets, {baseline} before", open_fds(pid));
        until_no_waits(&mut probe, &format!("round {round}, after the resets")).await;
    }
    // 120 clients came and went on 64 descriptors: a new one is served.
    let mut fresh = common::connect(server.addr, wire).await;
    assert_eq!(fresh.call(req("subtract", "[5,3]", 2)).await, result("2", "2"));
    assert!(!server.stderr().contains("accepting connections failed"), "{}", server.stderr());
}

/// A server that opts into half-close (`--half-close MS`, that is
/// `Server::half_close`): end of input alone (a FIN) lets the requests
/// already sent run to the end and be answered before the server closes
/// its side.
#[tokio::test(flavor = "multi_thread")]
async fn a_half_closed_connection_still_gets_every_answer_when_the_server_allows_half_close() {
    for wire in Wire::BOTH {
        let server = TcpCalculator::spawn_with_args(wire.arg(), &["--half-close", "5000"], Stderr::Collected).await;
        let mut conn = common::connect(server.addr, wire).await;
        conn.send(req("wait", "[300]", 1)).await;
        conn.send(req("sleep", "[200]", 2)).await;
        conn.send(req("subtract", "[5,3]", 3)).await;
        conn.close().await;
        let mut answers = conn.rest().await;
        let mut expected = [result("300", "1"), result("200", "2"), result("2", "3")];
        answers.sort();
        expected.sort();
        assert_eq!(answers, expected, "{wire:?}");
    }
    // Past the grace, what still runs is cancelled and the connection closes.
    let server = TcpCalculator::spawn_with_args("ndjson", &["--half-close", "200"], Stderr::Collected).await;
    let mut conn = common::connect(server.addr, Wire::Ndjson).await;
    conn.send(req("sleep", "[3600000]", 1)).await;
    conn.send(req("subtract", "[5,3]", 2)).await;
    conn.close().await;
    let started = Instant::now();
    let answers = tokio::time::timeout(PROMPTLY, conn.rest()).await.expect("closed after the grace");
    assert_eq!(answers, [result("2", "2")]);
    assert!(started.elapsed() >= Duration::from_millis(150), "{:?}", started.elapsed());
}

/// Issue 19: a TCP client that sent an hour-long call and closed its
/// connection (a FIN, not a reset) used to keep its socket and its place
/// under `max_connections` for the hour. By default (as hyper does for
/// HTTP) the end of input now ends a network connection at once: answers
/// already made are written, running calls are cancelled. 60 such clients
/// on a server of 64 descriptors, then 60 more: every socket is given
/// back at once and every `wait` cancelled.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_closes_with_a_long_call_running_frees_its_socket_and_cancels_the_call() {
    if !procfs("a_client_that_closes_with_a_long_call_running_frees_its_socket_and_cancels_the_call") {
        return;
    }
    let wire = Wire::Ndjson;
    let (server, mut probe, baseline) = calculator_with_64_descriptors().await;
    let pid = server.pid();
    for round in 0..2 {
        let mut answered = Vec::new();
        for i in 0..30 {
            let method = if i % 2 == 0 { "wait" } else { "sleep" };
            let mut conn = common::connect(server.addr, wire).await;
            conn.send(req(method, "[3600000]", i)).await;
            conn.send(req("subtract", "[5,3]", 100 + i)).await;
            // Half-close, and read what comes: the ready answer, then the end.
            conn.close().await;
            answered.push(tokio::spawn(async move { conn.rest().await }));
        }
        for (i, answers) in answered.into_iter().enumerate() {
            let answers = tokio::time::timeout(PROMPTLY, answers).await.expect("closed promptly").unwrap();
            assert_eq!(answers, [result("2", &(100 + i).to_string())], "round {round}, client {i}");
        }
        let freed = within(PROMPTLY, || open_fds(pid) <= baseline).await;
        assert!(freed, "round {round}: {} fds open after the clients left, {baseline} before", open_fds(pid));
        until_no_waits(&mut probe, &format!("round {round}, after the clients left")).await;
    }
    let mut fresh = common::connect(server.addr, wire).await;
    assert_eq!(fresh.call(req("subtract", "[5,3]", 2)).await, result("2", "2"));
}

/// Issue 19: a client that never reads kept its connection forever (there
/// was no write timeout). Its answers stop being made at the byte limit,
/// and once the server's writes make no progress for the write timeout
/// (`--write-timeout 300` here; 30 s by default) the connection is closed:
/// its socket and its place are given back, for TCP, HTTP and WebSocket.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_reads_is_let_go_after_the_write_timeout() {
    if !procfs("a_client_that_never_reads_is_let_go_after_the_write_timeout") {
        return;
    }
    let args = ["--write-timeout", "300", "--http", "127.0.0.1:0"];
    let server = TcpCalculator::spawn_with_args("ndjson", &args, Stderr::Collected).await;
    let http = server.http.expect("serving HTTP");
    let pid = server.pid();
    let mut probe = common::connect(server.addr, Wire::Ndjson).await;
    assert_eq!(probe.call(req("subtract", "[2,1]", 1)).await, result("1", "1"));
    let baseline = open_fds(pid);
    let big = format!(r#"{{"jsonrpc":"2.0","method":"echo","params":["{}"],"id":1}}"#, "x".repeat(1 << 20));
    // TCP: 1 MiB answers, never read.
    let tcp_flood = Wire::Ndjson.encode(big.as_bytes()).repeat(32);
    // HTTP: the same call pipelined, never read.
    let post = format!(
        "POST / HTTP/1.1\r\nHost: {http}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{big}",
        big.len()
    );
    let http_flood = post.repeat(32).into_bytes();
    let mut held = Vec::new();
    for (addr, flood) in [(server.addr, tcp_flood), (http, http_flood)] {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (reader, mut writer) = stream.into_split();
        let sent = tokio::spawn(async move {
            let _ = writer.write_all(&flood).await;
            writer
        });
        held.push((reader, sent));
    }
    // Both connections are open and stuck, then closed by the server.
    assert!(within(PROMPTLY, || open_fds(pid) >= baseline + 2).await, "{} fds", open_fds(pid));
    let freed = within(Duration::from_secs(10), || open_fds(pid) <= baseline).await;
    assert!(freed, "{} fds open, {baseline} before the clients that never read", open_fds(pid));
    assert_eq!(probe.call(req("subtract", "[5,3]", 2)).await, result("2", "2"));
    drop(held);
}

/// Finding 5: a server killed mid-call must never leave its client's
/// calls hanging: every pending call fails at once with `Closed` or
/// `Transport`, over a child process's pipes (both framings) and TCP.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_dying_mid_call_fails_the_pending_calls_promptly() {
    // A child process over its stdin/stdout, in both framings
    // (Content-Length first: it once lost an answer, see stream.rs).
    for (flag, framing) in [("content-length", Framing::ContentLength), ("ndjson", Framing::NewlineDelimited)] {
        let mut command = tokio::process::Command::new(common::calculator_path());
        command.args(["--framing", flag]).stderr(std::process::Stdio::null());
        let (peer, mut child) = Peer::builder().framing(framing).spawn_child(&mut command).unwrap();
        let pending = start_hour_long_calls(&peer).await;
        child.kill().await.unwrap();
        expect_prompt_failures(pending, flag).await;
    }
    // A TCP server.
    let mut server = TcpCalculator::spawn("ndjson", &[], Stderr::Collected).await;
    let peer = Peer::builder().connect(rpc_runtime::transport::tcp::Tcp::new(server.addr)).await.unwrap();
    let pending = start_hour_long_calls(&peer).await;
    server.kill().await;
    expect_prompt_failures(pending, "tcp").await;
}

type PendingCall = tokio::task::JoinHandle<Result<u64, ClientError>>;

/// Five hour-long calls in flight, and the server known to run them.
async fn start_hour_long_calls(peer: &Peer) -> Vec<PendingCall> {
    let mut pending = Vec::new();
    for method in ["sleep", "sleep", "wait", "wait", "sleep"] {
        let peer = peer.clone();
        pending.push(tokio::spawn(async move { peer.call::<u64, _>(method, [3_600_000]).await }));
    }
    let deadline = Instant::now() + PROMPTLY;
    loop {
        let running = tokio::time::timeout(PROMPTLY, peer.call::<u64, _>("waiting", ())).await;
        if running.expect("`waiting` is answered").expect("`waiting` succeeds") >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the waits did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pending
}

async fn expect_prompt_failures(pending: Vec<PendingCall>, transport: &str) {
    let started = Instant::now();
    for call in pending {
        let outcome = tokio::time::timeout(PROMPTLY, call).await;
        let outcome = outcome.unwrap_or_else(|_| panic!("{transport}: a call still hangs after the server died"));
        let outcome = outcome.expect("the call's task");
        assert!(matches!(outcome, Err(ClientError::Closed | ClientError::Transport(_))), "{transport}: {outcome:?}");
    }
    assert!(started.elapsed() < PROMPTLY, "{transport}: {:?}", started.elapsed());
}

/// Finding 5: a frame cut short by the end of input, in both framings,
/// over stdio and TCP. What came before is answered; the cut frame is
/// answered -32700 if the framing can tell it was meant as a message (a
/// last line without its newline), or dropped (a body or header cut
/// short, noted in the log); then the server closes its side cleanly.
#[tokio::test(flavor = "multi_thread")]
async fn a_frame_cut_short_by_the_end_of_input_ends_the_connection_cleanly() {
    let whole = req("subtract", "[5,3]", 1);
    let cut = &whole[..whole.len() / 2];
    for wire in Wire::BOTH {
        let cases: Vec<(&str, Vec<u8>, Vec<String>)> = match wire {
            Wire::Ndjson => vec![("a line without its end", cut.as_bytes().to_vec(), vec![common::parse_error()])],
            Wire::ContentLength => vec![
                ("a body cut short", format!("Content-Length: {}\r\n\r\n{cut}", whole.len()).into_bytes(), vec![]),
                ("a header block cut short", format!("Content-Length: {}\r\n", whole.len()).into_bytes(), vec![]),
                ("a header line cut short", b"Content-Le".to_vec(), vec![]),
            ],
        };
        for (what, tail, expected_tail) in cases {
            let mut expected = vec![result("2", "1")];
            expected.extend(expected_tail);
            // Over stdio: the calculator answers, closes stdout and exits 0.
            let mut calc = common::Calculator::spawn(wire);
            calc.conn.send(&whole).await;
            calc.conn.send_raw(&tail).await;
            let exit = calc.finish().await;
            assert_eq!(exit.rest, expected, "stdio, {wire:?}, {what}");
            assert!(exit.status.success(), "stdio, {wire:?}, {what}: {}\n{}", exit.status, exit.stderr);
            // Over TCP: the same answers, then the server closes its side.
            let server = TcpCalculator::spawn(wire.arg(), &[], Stderr::Collected).await;
            let mut conn = common::connect(server.addr, wire).await;
            conn.send(&whole).await;
            conn.send_raw(&tail).await;
            conn.close().await;
            assert_eq!(conn.rest().await, expected, "tcp, {wire:?}, {what}");
        }
    }
}

/// Handlers that never return on their own.
#[rpc]
trait Stuck {
    /// Returns only when its request is cancelled.
    async fn hang(&self, cx: Context) -> u64;
    /// Never returns, whatever happens.
    async fn forever(&self) -> u64;
    /// Returns at once (but as a task, so it needs a slot).
    async fn quick(&self) -> u64;
}

struct StuckService;

impl Stuck for StuckService {
    async fn hang(&self, cx: Context) -> u64 {
        cx.cancelled().await;
        0
    }
    async fn forever(&self) -> u64 {
        std::future::pending().await
    }
    async fn quick(&self) -> u64 {
        1
    }
}

/// Serves [`Stuck`] on a fresh local port with one request slot per
/// connection and `max_connections` connections.
async fn serve_stuck(max_connections: usize) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits::default().max_concurrent_requests(1);
    let server = Server::new(StuckService.into_rpc())
        .limits(limits)
        .cancellation(Cancellation::Lsp)
        .max_connections(max_connections);
    tokio::spawn(server.serve(listener));
    addr
}

/// Finding 5: a handler that never returns holds its request slot; the
/// client's timeout sends a cancellation, the handler sees it and ends,
/// and the slot is free for the next request
/// (`max_concurrent_requests` = 1 here).
#[tokio::test(flavor = "multi_thread")]
async fn a_timed_out_call_is_cancelled_and_its_slot_reused() {
    let addr = serve_stuck(8).await;
    let peer = Peer::builder()
        .cancellation(Cancellation::Lsp)
        .connect(rpc_runtime::transport::tcp::Tcp::new(addr))
        .await
        .unwrap();
    let client = StuckClient::new(peer.clone());
    let start_hang = || {
        let client = client.with_timeout(Duration::from_millis(500));
        tokio::spawn(async move { client.hang().await })
    };
    let mut hang = start_hang();
    // While it runs, its slot is taken: another request is refused.
    let deadline = Instant::now() + PROMPTLY;
    loop {
        match client.quick().await {
            Err(ClientError::Server(error)) if error.code() == SERVER_OVERLOADED => break,
            Ok(1) => {}
            other => panic!("{other:?}"),
        }
        if hang.is_finished() {
            // `quick` reached the server first and `hang` was refused.
            let refused = hang.await.unwrap();
            assert!(
                matches!(&refused, Err(ClientError::Server(error)) if error.code() == SERVER_OVERLOADED),
                "{refused:?}"
            );
            hang = start_hang();
        }
        assert!(Instant::now() < deadline, "the slot was never taken");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let outcome = tokio::time::timeout(PROMPTLY, hang).await.expect("the client's timeout fires").unwrap();
    assert!(matches!(outcome, Err(ClientError::Timeout(_))), "{outcome:?}");
    // The cancellation reached the handler, which gave its slot back.
    let deadline = Instant::now() + PROMPTLY;
    loop {
        match client.quick().await {
            Ok(answer) => {
                assert_eq!(answer, 1);
                break;
            }
            Err(ClientError::Server(error)) if error.code() == SERVER_OVERLOADED => {
                assert!(Instant::now() < deadline, "the slot was never given back");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    // A handler that ignores cancellation keeps its slot: the client
    // still gets its timeout, and other requests a clear refusal.
    let outcome = client.with_timeout(Duration::from_millis(200)).forever().await;
    assert!(matches!(outcome, Err(ClientError::Timeout(_))), "{outcome:?}");
    let refused = client.quick().await;
    assert!(matches!(&refused, Err(ClientError::Server(error)) if error.code() == SERVER_OVERLOADED), "{refused:?}");
}

/// A connection whose handler never returns, even when cancelled, still
/// gives back its place under `max_connections` once the client resets
/// it: the connection ends at once, whatever its handlers do.
#[tokio::test(flavor = "multi_thread")]
async fn a_reset_connection_gives_back_its_place_even_if_its_handler_never_returns() {
    let addr = serve_stuck(1).await;
    let wire = Wire::Ndjson;
    let stuck = send_then_keep(addr, wire, &req("forever", "[]", 1)).await;
    // The one place is taken: a second client is told so and closed.
    let deadline = Instant::now() + PROMPTLY;
    loop {
        let mut second = common::connect(addr, wire).await;
        second.send(req("quick", "[]", 2)).await;
        let answer: Value = serde_json::from_str(&second.recv().await).unwrap();
        if answer["error"]["code"] == SERVER_OVERLOADED && answer["id"].is_null() {
            assert!(answer["error"]["message"].as_str().unwrap().contains("max_connections"), "{answer}");
            break;
        }
        assert!(Instant::now() < deadline, "the first connection never took the place: {answer}");
    }
    reset(stuck);
    let deadline = Instant::now() + PROMPTLY;
    loop {
        let mut third = common::connect(addr, wire).await;
        third.send(req("quick", "[]", 3)).await;
        let answer = third.recv().await;
        if answer == result("1", "3") {
            break;
        }
        assert!(Instant::now() < deadline, "the place was never given back: {answer}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
