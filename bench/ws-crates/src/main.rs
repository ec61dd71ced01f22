//! Picks the WebSocket crate for rpc-runtime by measurement: one server per
//! crate (same JSON-RPC-shaped echo work), one load client (raw pre-masked
//! frames over std TCP, the same for every server), a ping flood, and a
//! driver that reads the server's CPU time and memory from /proc and runs
//! it under callgrind. See README.md for the commands and the results.
//!
//! Subcommands:
//!   serve <server> [--exit-after N]      print "LISTEN addr", serve; exit after N connections ended
//!   load <addr> [--conns 16] [--depth 32] [--bursts 2000]
//!   flood <addr> [--secs 3]
//!   bench <server> [--bursts 2000]       native run: msgs/s, CPU/msg, ping-flood RSS
//!   callgrind <server> <bursts1> <bursts2>   instructions/msg by differencing two runs
//!   syscalls <server> <bursts>           system calls per 32 answers (one burst), under strace -c

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream as StdTcp;
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

const SERVERS: &[&str] = &[
    "tungstenite",
    "tungstenite-tuned",
    "tokio-websockets",
    "tokio-websockets-interleaved",
    "fastwebsockets",
    "fastwebsockets-batched",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: usize| -> usize {
        args.iter().position(|a| a == name).map(|i| args[i + 1].parse().expect("number")).unwrap_or(default)
    };
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1], flag("--exit-after", 0)),
        Some("load") => {
            let r = load(&args[1], flag("--conns", 16), flag("--depth", 32), flag("--bursts", 2000));
            println!("{r:?}");
        }
        Some("flood") => println!("{:?}", flood(&args[1], flag("--secs", 3) as u64)),
        Some("bench") => bench(&args[1], flag("--bursts", 2000)),
        Some("syscalls") => syscalls(&args[1], args[2].parse().unwrap()),
        Some("callgrind") => callgrind(&args[1], args[2].parse().unwrap(), args[3].parse().unwrap()),
        _ => {
            eprintln!("usage: see src/main.rs; servers: {SERVERS:?}");
            std::process::exit(2);
        }
    }
}

// ---------------------------------------------------------------------------
// The application work, identical for every crate: read the id out of a
// JSON-RPC request and answer with a small JSON result built into a String
// (so every crate gets text that is UTF-8 by construction).

fn answer(req: &[u8]) -> String {
    let id = request_id(req);
    let mut out = String::with_capacity(64);
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id);
    out.push_str(r#","result":{"len":"#);
    out.push_str(itoa(req.len()).as_str());
    out.push_str("}}");
    out
}

fn request_id(req: &[u8]) -> &str {
    const KEY: &[u8] = br#""id":"#;
    let start = req.windows(KEY.len()).position(|w| w == KEY).map_or(0, |p| p + KEY.len());
    let len = req[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&req[start..start + len]).unwrap_or("null")
}

fn itoa(n: usize) -> String {
    n.to_string()
}

fn request_text(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"subtract","params":{{"minuend":42,"subtrahend":23}}}}"#)
}

// ---------------------------------------------------------------------------
// Servers.

fn serve(server: &str, exit_after: usize) {
    assert!(SERVERS.contains(&server), "unknown server {server}; one of {SERVERS:?}");
    let server = server.to_string();
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    rt.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("LISTEN {}", listener.local_addr().unwrap());
        std::io::stdout().flush().unwrap();
        let ended = Arc::new(AtomicUsize::new(0));
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let server = server.clone();
            let ended = ended.clone();
            tokio::spawn(async move {
                let r = match server.as_str() {
                    "tungstenite" => serve_tungstenite(tcp, None).await,
                    "tungstenite-tuned" => serve_tungstenite(tcp, Some(tuned_config())).await,
                    "tokio-websockets" => serve_tokio_websockets(tcp).await,
                    "tokio-websockets-interleaved" => serve_tokio_websockets_interleaved(tcp).await,
                    "fastwebsockets" => serve_fastwebsockets(tcp).await,
                    "fastwebsockets-batched" => serve_fastwebsockets(BatchWrites::new(tcp)).await,
                    _ => unreachable!(),
                };
                if let Err(e) = r {
                    eprintln!("connection ended with error: {e}");
                }
                if ended.fetch_add(1, Ordering::SeqCst) + 1 == exit_after {
                    std::process::exit(0);
                }
            });
        }
    });
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn tuned_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        // Small messages: an 8 KiB read buffer instead of 128 KiB eagerly
        // allocated per connection.
        .read_buffer_size(8 * 1024)
        // Writes reach the socket at this size or at flush.
        .write_buffer_size(8 * 1024)
        // Bounds the write buffer when the peer does not read: writes fail
        // with WriteBufferFull, and pending pongs are replaced instead of
        // accumulating.
        .max_write_buffer_size(64 * 1024)
        .max_message_size(Some(1 << 20))
        .max_frame_size(Some(1 << 20))
}

/// tokio-tungstenite: its own server handshake, then Stream/Sink. Answers are
/// fed (buffered, no flush) while more input is already decoded or readable
/// without waiting, then flushed once.
async fn serve_tungstenite(
    tcp: TcpStream,
    config: Option<tokio_tungstenite::tungstenite::protocol::WebSocketConfig>,
) -> Result<(), BoxError> {
    use tokio_tungstenite::tungstenite::Message;
    let mut ws = tokio_tungstenite::accept_async_with_config(tcp, config).await?;
    while let Some(msg) = ws.next().await {
        let mut next = Some(msg?);
        let mut fed = false;
        while let Some(msg) = next.take() {
            if let Message::Text(text) = msg {
                // `Message::text(String)`: no UTF-8 validation.
                ws.feed(Message::text(answer(text.as_bytes()))).await?;
                fed = true;
            }
            // A Stream's poll_next is resumable, so polling it once without
            // waiting loses nothing.
            match ws.next().now_or_never() {
                Some(Some(msg)) => next = Some(msg?),
                Some(None) => break,
                None => {}
            }
        }
        if fed {
            ws.flush().await?;
        }
    }
    Ok(())
}

/// tokio-websockets: its own server handshake (`ServerBuilder::accept`; on an
/// upgraded hyper connection it would be `ServerBuilder::serve`). Its
/// `poll_next` first tries to write out every queued frame, so feeding an
/// answer and then polling for the next request sends each answer in its own
/// write. To batch, this reads every request that is ready first, then feeds
/// all the answers and flushes once.
async fn serve_tokio_websockets(tcp: TcpStream) -> Result<(), BoxError> {
    use tokio_websockets::{Message, ServerBuilder};
    let (_request, mut ws) = ServerBuilder::new().accept(tcp).await?;
    let mut answers = Vec::with_capacity(64);
    while let Some(msg) = ws.next().await {
        let mut next = Some(msg?);
        let mut ended = false;
        while let Some(msg) = next.take() {
            if let Some(text) = msg.as_text() {
                answers.push(answer(text.as_bytes()));
            }
            match ws.next().now_or_never() {
                Some(Some(msg)) => next = Some(msg?),
                Some(None) => ended = true,
                None => {}
            }
        }
        if !answers.is_empty() {
            for a in answers.drain(..) {
                // `Message::text(String)` marks the payload as valid UTF-8;
                // `Message::text(Bytes)` would not validate at all.
                ws.feed(Message::text(a)).await?;
            }
            ws.flush().await?;
        }
        if ended {
            break;
        }
    }
    Ok(())
}

/// tokio-websockets with the same loop as tungstenite's (feed an answer, then
/// poll for the next request): shows that its read path writes out what was
/// fed, one write per answer.
async fn serve_tokio_websockets_interleaved(tcp: TcpStream) -> Result<(), BoxError> {
    use tokio_websockets::{Message, ServerBuilder};
    let (_request, mut ws) = ServerBuilder::new().accept(tcp).await?;
    while let Some(msg) = ws.next().await {
        let mut next = Some(msg?);
        let mut fed = false;
        while let Some(msg) = next.take() {
            if let Some(text) = msg.as_text() {
                ws.feed(Message::text(answer(text.as_bytes()))).await?;
                fed = true;
            }
            match ws.next().now_or_never() {
                Some(Some(msg)) => next = Some(msg?),
                Some(None) => break,
                None => {}
            }
        }
        if fed {
            ws.flush().await?;
        }
    }
    Ok(())
}

/// fastwebsockets: the crate's server handshake lives in its `upgrade`
/// feature (hyper); without hyper, its documented server path is
/// `WebSocket::after_handshake(stream, Role::Server)` on a stream whose
/// handshake the application did, which is what this does (the accept key
/// from tungstenite's `derive_accept_key`). `FragmentCollector` because a real
/// server must accept fragmented messages. Each `write_frame` writes to the
/// stream at once (`write_all`); the crate has no "queue without flushing".
async fn serve_fastwebsockets<S>(mut io: S) -> Result<(), BoxError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    use fastwebsockets::{FragmentCollector, Frame, OpCode, Payload, Role, WebSocket};
    handshake_by_hand(&mut io).await?;
    let mut ws = FragmentCollector::new(WebSocket::after_handshake(io, Role::Server));
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Text => {
                let reply = answer(&frame.payload);
                // `Frame::text` never validates; a `Vec<u8>` goes in as is.
                ws.write_frame(Frame::text(Payload::Owned(reply.into_bytes()))).await?;
            }
            OpCode::Close => break,
            _ => {}
        }
    }
    // The close reply was written by read_frame; make sure it left a buffer.
    let mut io = ws.into_inner();
    io.flush().await?;
    Ok(())
}

async fn handshake_by_hand<S: AsyncRead + AsyncWrite + Unpin>(io: &mut S) -> Result<(), BoxError> {
    // Byte at a time so nothing after the head is consumed (the client sends
    // nothing before the 101, so this is only the head).
    let mut head = Vec::with_capacity(512);
    while !head.ends_with(b"\r\n\r\n") {
        let b = io.read_u8().await?;
        head.push(b);
        if head.len() > 8192 {
            return Err("request head too long".into());
        }
    }
    let head = std::str::from_utf8(&head)?;
    let key = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("sec-websocket-key").then(|| value.trim())
        })
        .ok_or("no Sec-WebSocket-Key")?;
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    let resp = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    io.write_all(resp.as_bytes()).await?;
    io.flush().await?;
    Ok(())
}

/// For fastwebsockets, whose `write_frame` goes straight to the stream: a
/// stream adapter that keeps writes in a buffer and writes them out when a
/// read would wait (no more input ready) or the buffer passes 64 KiB (then a
/// write waits for the socket: backpressure). `flush` writes everything.
struct BatchWrites<S> {
    io: S,
    buf: Vec<u8>,
    written: usize,
}

const BATCH_CAP: usize = 64 * 1024;

impl<S: AsyncRead + AsyncWrite + Unpin> BatchWrites<S> {
    fn new(io: S) -> Self {
        BatchWrites { io, buf: Vec::with_capacity(8 * 1024), written: 0 }
    }

    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.written < self.buf.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.buf[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.buf.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for BatchWrites<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_read(cx, out) {
            Poll::Pending => {
                // No input ready: now is the time to send what was answered.
                if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
                    return Poll::Ready(Err(e));
                }
                Poll::Pending
            }
            ready => ready,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for BatchWrites<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.buf.len() >= BATCH_CAP {
            ready!(this.poll_drain(cx))?;
        }
        this.buf.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.buf.len() >= BATCH_CAP {
            ready!(this.poll_drain(cx))?;
        }
        let mut n = 0;
        for b in bufs {
            this.buf.extend_from_slice(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

// ---------------------------------------------------------------------------
// Load client: std threads, raw TCP, frames masked by hand, the same bytes
// for every server.

const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

fn client_handshake(addr: &str) -> (StdTcp, Vec<u8>) {
    let mut tcp = StdTcp::connect(addr).expect("connect");
    tcp.set_nodelay(true).unwrap();
    tcp.write_all(
        b"GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    let end = loop {
        let n = tcp.read(&mut chunk).expect("read handshake");
        assert!(n > 0, "EOF during handshake");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "not a 101: {head}");
    // RFC 6455's example key and its accept value.
    assert!(head.contains("s3pplmbitxaq9kygzzhzrbk+xoo="), "wrong accept: {head}");
    (tcp, buf[end..].to_vec())
}

fn push_masked(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    assert!(payload.len() < 126);
    out.push(0x80 | opcode);
    out.push(0x80 | payload.len() as u8);
    out.extend_from_slice(&MASK);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
}

/// Reads one unmasked server frame (payload < 126 bytes) into `frame`.
fn read_frame(tcp: &mut StdTcp, pending: &mut Vec<u8>, frame: &mut Vec<u8>) -> std::io::Result<u8> {
    loop {
        if pending.len() >= 2 {
            let len = (pending[1] & 0x7f) as usize;
            assert!(len < 126 && pending[1] & 0x80 == 0, "unexpected frame header {:x?}", &pending[..2]);
            if pending.len() >= 2 + len {
                let opcode = pending[0];
                frame.clear();
                frame.extend_from_slice(&pending[2..2 + len]);
                pending.drain(..2 + len);
                return Ok(opcode);
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = tcp.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        pending.extend_from_slice(&chunk[..n]);
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct LoadResult {
    requests: u64,
    answers: u64,
    wrong_answers: u64,
    close_acknowledged: u64,
    secs: f64,
}

fn load(addr: &str, conns: usize, depth: usize, bursts: usize) -> LoadResult {
    let start = Instant::now();
    let threads: Vec<_> = (0..conns)
        .map(|c| {
            let addr = addr.to_string();
            std::thread::spawn(move || {
                let mut r = LoadResult::default();
                let (mut tcp, mut pending) = client_handshake(&addr);
                let mut out = Vec::with_capacity(depth * 128);
                let mut frame = Vec::with_capacity(128);
                for b in 0..bursts {
                    out.clear();
                    let first = ((c * bursts + b) * depth) as u64;
                    for i in 0..depth as u64 {
                        push_masked(&mut out, 0x1, request_text(first + i).as_bytes());
                    }
                    tcp.write_all(&out).unwrap();
                    r.requests += depth as u64;
                    for i in 0..depth as u64 {
                        let op = read_frame(&mut tcp, &mut pending, &mut frame).expect("read answer");
                        r.answers += 1;
                        let want = answer(request_text(first + i).as_bytes());
                        if op != 0x81 || frame != want.as_bytes() {
                            r.wrong_answers += 1;
                        }
                    }
                }
                // Close handshake: code 1000, then wait for the server's close.
                out.clear();
                push_masked(&mut out, 0x8, &1000u16.to_be_bytes());
                tcp.write_all(&out).unwrap();
                tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                if let Ok(0x88) = read_frame(&mut tcp, &mut pending, &mut frame) {
                    r.close_acknowledged = 1;
                }
                r
            })
        })
        .collect();
    let mut total = LoadResult::default();
    for t in threads {
        let r = t.join().unwrap();
        total.requests += r.requests;
        total.answers += r.answers;
        total.wrong_answers += r.wrong_answers;
        total.close_acknowledged += r.close_acknowledged;
    }
    total.secs = start.elapsed().as_secs_f64();
    total
}

#[derive(Debug)]
struct FloodResult {
    pings_sent: u64,
    /// How the client's sending ended: "time" (still accepted after the
    /// period), "blocked" (the server stopped reading: TCP backpressure) or
    /// the error (the server closed the connection).
    ended_by: String,
}

/// Sends 125-byte pings as fast as the socket takes them for `secs`, never
/// reading. Returns with the connection still open (the caller measures, then
/// drops it).
fn flood(addr: &str, secs: u64) -> (FloodResult, StdTcp) {
    let (mut tcp, _) = client_handshake(addr);
    let mut burst = Vec::new();
    for _ in 0..64 {
        push_masked(&mut burst, 0x9, &[b'p'; 125]);
    }
    tcp.set_write_timeout(Some(Duration::from_millis(200))).unwrap();
    let start = Instant::now();
    let mut sent_bytes = 0u64;
    let mut blocked_since: Option<Instant> = None;
    let ended_by = loop {
        if start.elapsed() >= Duration::from_secs(secs) {
            break if blocked_since.is_some() { "blocked".to_string() } else { "time".to_string() };
        }
        match tcp.write(&burst) {
            Ok(n) => {
                sent_bytes += n as u64;
                blocked_since = None;
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                blocked_since.get_or_insert_with(Instant::now);
            }
            Err(e) => break format!("error: {e}"),
        }
    };
    (FloodResult { pings_sent: sent_bytes / 131, ended_by }, tcp)
}

// ---------------------------------------------------------------------------
// Driver.

struct Server {
    child: Child,
    addr: String,
}

fn start_server(server: &str, exit_after: usize, prefix: &[String]) -> Server {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = if prefix.is_empty() {
        Command::new(&exe)
    } else {
        let mut c = Command::new(&prefix[0]);
        c.args(&prefix[1..]).arg(&exe);
        c
    };
    cmd.args(["serve", server, "--exit-after", &exit_after.to_string()]);
    cmd.stdout(Stdio::piped()).stderr(if prefix.is_empty() { Stdio::inherit() } else { Stdio::null() });
    let mut child = cmd.spawn().expect("spawn server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("LISTEN ").expect("LISTEN line").to_string();
    Server { child, addr }
}

/// utime + stime of a process, in seconds.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after_comm.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); after_comm starts at field 3.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0 // CLK_TCK is 100 on Linux
}

fn status_kib(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines().find_map(|l| l.strip_prefix(key)?.trim().strip_suffix("kB")?.trim().parse().ok()).unwrap()
}

fn bench(server: &str, bursts: usize) {
    // Throughput and CPU.
    let mut s = start_server(server, 16, &[]);
    let pid = s.child.id();
    let cpu0 = cpu_secs(pid);
    let r = load(&s.addr, 16, 32, bursts);
    let cpu = cpu_secs(pid) - cpu0;
    let _ = s.child.wait();
    let msgs = r.answers as f64;
    println!(
        "{server}: requests {} answers {} wrong {} closes-acked {}/16 | {:.0} msgs/s | server CPU {:.0} ns/msg ({:.2} s)",
        r.requests,
        r.answers,
        r.wrong_answers,
        r.close_acknowledged,
        msgs / r.secs,
        cpu * 1e9 / msgs,
        cpu
    );

    // Ping flood.
    let mut s = start_server(server, 0, &[]);
    let pid = s.child.id();
    // One normal connection first so per-connection setup is in the baseline.
    let _ = load(&s.addr, 1, 32, 10);
    std::thread::sleep(Duration::from_millis(200));
    let rss0 = status_kib(pid, "VmRSS:");
    let (f, tcp) = flood(&s.addr, 3);
    std::thread::sleep(Duration::from_millis(300));
    let rss1 = status_kib(pid, "VmRSS:");
    let hwm = status_kib(pid, "VmHWM:");
    let cpu_flood = cpu_secs(pid);
    drop(tcp);
    std::thread::sleep(Duration::from_millis(300));
    let rss2 = status_kib(pid, "VmRSS:");
    let _ = s.child.kill();
    let _ = s.child.wait();
    println!(
        "{server}: ping flood 3 s: {} pings accepted by the socket, ended by {} | RSS {} KiB -> {} KiB (+{} KiB, peak {} KiB), {} KiB after the client left | server CPU total {:.2} s",
        f.pings_sent,
        f.ended_by,
        rss0,
        rss1,
        rss1 as i64 - rss0 as i64,
        hwm,
        rss2,
        cpu_flood
    );
}

fn callgrind(server: &str, bursts1: usize, bursts2: usize) {
    let mut results = Vec::new();
    for bursts in [bursts1, bursts2] {
        let out = format!("{}/callgrind.{server}.{bursts}.out", std::env::temp_dir().display());
        let prefix: Vec<String> =
            ["valgrind", "--tool=callgrind", &format!("--callgrind-out-file={out}")].map(String::from).to_vec();
        let mut s = start_server(server, 16, &prefix);
        let r = load(&s.addr, 16, 32, bursts);
        let status = s.child.wait().unwrap();
        assert!(status.success(), "server under valgrind: {status}");
        assert_eq!(r.answers, r.requests);
        assert_eq!(r.wrong_answers, 0);
        let text = std::fs::read_to_string(&out).unwrap();
        let total: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
            .expect("callgrind totals")
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let memset = memset_instructions(&out);
        println!(
            "{server}: {bursts} bursts, {} answers, {total} instructions in total, {memset} in memset ({out})",
            r.answers
        );
        results.push((r.answers, total, memset));
    }
    let (m1, i1, z1) = results[0];
    let (m2, i2, z2) = results[1];
    let dm = m2 as f64 - m1 as f64;
    println!(
        "{server}: {:.0} instructions/msg (difference of the two runs over the difference in messages), of which {:.0} in memset",
        (i2 as f64 - i1 as f64) / dm,
        (z2 as f64 - z1 as f64) / dm
    );
}

/// Counts the server's system calls under `strace -f -c` for one load run.
/// (The connection setup adds a few dozen calls in all: noise at 100+ bursts.)
fn syscalls(server: &str, bursts: usize) {
    let out = format!("{}/strace.{server}.out", std::env::temp_dir().display());
    let prefix: Vec<String> = ["strace", "-f", "-c", "-o", &out].map(String::from).to_vec();
    let mut s = start_server(server, 16, &prefix);
    let r = load(&s.addr, 16, 32, bursts);
    s.child.wait().unwrap();
    assert_eq!(r.wrong_answers, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    let per_burst = 32.0 / r.answers as f64;
    let mut line = format!("{server}: system calls per 32 answers:");
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors,] syscall
        if f.len() >= 5 && f[0].parse::<f64>().is_ok() {
            let calls: f64 = f[3].parse().unwrap_or(0.0);
            let errors: f64 = if f.len() == 6 { f[4].parse().unwrap_or(0.0) } else { 0.0 };
            let name = f[f.len() - 1];
            if calls * per_burst >= 0.05 {
                line += &format!(" {name} {:.2}", calls * per_burst);
                if errors * per_burst >= 0.01 {
                    line += &format!(" ({:.2} failed)", errors * per_burst);
                }
            }
        }
    }
    println!("{line}");
}

/// Instructions counted in glibc's memset (callgrind_annotate's flat
/// profile). glibc clears large blocks with `rep stosb`, whose every
/// iteration callgrind counts as one instruction: about one per byte zeroed,
/// far more than the CPU time it takes, so it is reported apart.
fn memset_instructions(callgrind_out: &str) -> u64 {
    let out = Command::new("callgrind_annotate").arg(callgrind_out).output().expect("callgrind_annotate");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("memset") && l.contains("libc"))
        .filter_map(|l| l.split_whitespace().next()?.replace(',', "").parse::<u64>().ok())
        .sum()
}
