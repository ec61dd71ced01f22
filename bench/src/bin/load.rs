//! Stream load benchmark: each server target runs in its own process on
//! loopback TCP, and this process drives it with many connections, each
//! with a burst of pipelined requests in flight. Reports requests/s, p50 and
//! p99 latency and the server's CPU time per request (read from
//! `/proc/<pid>/stat` of the child), and the ratios of each target to the
//! hand-written baseline of its transport.
//!
//! ```text
//! cargo run --release --bin load -- [--connections 16] [--depth 32] [--seconds 5] [--targets ours,handwritten]
//! ```
//!
//! Adding a transport (HTTP) means a [`Transport`] variant with its driver
//! in [`drive_connection`], and [`Target`] variants for the servers that
//! speak it (ours over HTTP, jsonrpsee's HTTP server, bare hyper); the
//! measuring loop and the report stay as they are.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpc_bench::{handwritten, ours};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::{TcpListener, TcpStream};

/// How requests travel; a load driver exists per transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    /// Newline-delimited JSON over TCP.
    Ndjson,
}

/// A server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// `rpc_runtime::Server` with ndjson framing.
    Ours,
    /// A hand-written tokio NDJSON server calling the hand-written handler.
    Handwritten,
}

impl Target {
    const ALL: [Target; 2] = [Target::Ours, Target::Handwritten];

    fn name(self) -> &'static str {
        match self {
            Target::Ours => "ours",
            Target::Handwritten => "handwritten",
        }
    }

    fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    fn transport(self) -> Transport {
        match self {
            Target::Ours | Target::Handwritten => Transport::Ndjson,
        }
    }

    /// The target every other one of the same transport is compared with.
    fn is_baseline(self) -> bool {
        self == Target::Handwritten
    }

    async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        match self {
            Target::Ours => rpc_runtime::Server::new(ours::router()).serve_listener(listener).await,
            Target::Handwritten => serve_handwritten(listener).await,
        }
    }
}

/// The hand-written NDJSON server, as lean as a server can be: one task per
/// connection that owns the socket (no split halves), reads into one
/// buffer, answers every complete line already read into a reused buffer
/// with the hand-written handler, and writes once no complete line is left.
async fn serve_handwritten(listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let mut input = Vec::with_capacity(64 * 1024);
            let mut out = Vec::with_capacity(64 * 1024);
            loop {
                let mut start = 0;
                while let Some(offset) = memchr::memchr(b'\n', &input[start..]) {
                    let line = input[start..start + offset].trim_ascii();
                    start += offset + 1;
                    if line.is_empty() {
                        continue;
                    }
                    let before = out.len();
                    handwritten::handle(line, &mut out);
                    if out.len() > before {
                        out.push(b'\n');
                    }
                }
                if !out.is_empty() {
                    if stream.write_all(&out).await.is_err() {
                        return;
                    }
                    out.clear();
                }
                input.drain(..start);
                input.reserve(64 * 1024);
                match stream.read_buf(&mut input).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        });
    }
}

struct Options {
    connections: usize,
    depth: usize,
    seconds: f64,
    targets: Vec<Target>,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options { connections: 16, depth: 32, seconds: 5.0, targets: Target::ALL.to_vec() };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--connections" => options.connections = value()?.parse().map_err(|e| format!("--connections: {e}"))?,
            "--depth" => options.depth = value()?.parse().map_err(|e| format!("--depth: {e}"))?,
            "--seconds" => options.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--targets" => {
                options.targets = value()?
                    .split(',')
                    .map(|name| Target::parse(name).ok_or_else(|| format!("unknown target `{name}`")))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(options)
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("serve") {
        args.next();
        let target = args.next().and_then(|name| Target::parse(&name)).expect("serve needs a known target name");
        serve_child(target);
        return;
    }
    let options = match parse_options(args) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("load: {err}");
            std::process::exit(2);
        }
    };
    let mut results = Vec::new();
    for &target in &options.targets {
        eprintln!("load: measuring {} for {:.1}s ...", target.name(), options.seconds);
        results.push((target, measure(target, &options)));
    }
    report(&results, &options);
}

/// Child mode: serve on an ephemeral loopback port, print it, and exit when
/// stdin closes (the parent ending or killing us).
fn serve_child(target: Target) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        println!("{}", listener.local_addr().expect("local address"));
        tokio::select! {
            result = target.serve(listener) => result.expect("server failed"),
            _ = tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new())) => {}
        }
    });
}

struct Measurement {
    requests: u64,
    elapsed: Duration,
    server_cpu: Duration,
    /// Sorted latencies.
    latencies: Vec<Duration>,
}

impl Measurement {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies.get(index).copied().unwrap_or_default()
    }
    fn cpu_per_request(&self) -> Duration {
        self.server_cpu.div_f64(self.requests.max(1) as f64)
    }
}

struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    fn start(target: Target) -> ServerProcess {
        let exe = std::env::current_exe().expect("own executable");
        // LOAD_SERVER_WRAPPER runs the server under a profiler, e.g.
        // "valgrind --tool=callgrind" (its CPU time then means little).
        let wrapper = std::env::var("LOAD_SERVER_WRAPPER").unwrap_or_default();
        let mut command = wrapper.split_whitespace();
        let mut child = match command.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(command).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        let mut child = child
            .args(["serve", target.name()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start server process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout")).read_line(&mut line).expect("read address");
        let addr = line.trim().parse().unwrap_or_else(|_| panic!("server printed `{line}`, not an address"));
        ServerProcess { child, addr }
    }

    /// User + system CPU time of the server process so far.
    fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).expect("read /proc stat");
        // Fields after the parenthesised command name; utime and stime are
        // fields 14 and 15 of the whole line.
        let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
        Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // asks it to exit
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

fn measure(target: Target, options: &Options) -> Measurement {
    let server = ServerProcess::start(target);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    // Warm up (connections, allocator, caches), then measure.
    runtime.block_on(run_load(target.transport(), server.addr, options, Duration::from_millis(500)));
    let cpu_before = server.cpu_time();
    let started = Instant::now();
    let mut latencies =
        runtime.block_on(run_load(target.transport(), server.addr, options, Duration::from_secs_f64(options.seconds)));
    let elapsed = started.elapsed();
    let server_cpu = server.cpu_time().saturating_sub(cpu_before);
    latencies.sort_unstable();
    Measurement { requests: latencies.len() as u64, elapsed, server_cpu, latencies }
}

/// Runs all connections for `duration`; returns every request's latency.
async fn run_load(transport: Transport, addr: SocketAddr, options: &Options, duration: Duration) -> Vec<Duration> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..options.connections {
        let stop = stop.clone();
        let depth = options.depth;
        tasks.push(tokio::spawn(async move { drive_connection(transport, addr, depth, &stop).await }));
    }
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("load connection panicked"));
    }
    latencies
}

async fn drive_connection(transport: Transport, addr: SocketAddr, depth: usize, stop: &AtomicBool) -> Vec<Duration> {
    match transport {
        Transport::Ndjson => drive_ndjson(addr, depth, stop).await,
    }
}

#[derive(Deserialize)]
struct Response {
    id: u64,
    result: Option<i64>,
}

/// One connection: write `depth` requests in one go, read their `depth`
/// responses (in any order), record each one's latency, repeat.
async fn drive_ndjson(addr: SocketAddr, depth: usize, stop: &AtomicBool) -> Vec<Duration> {
    let stream = TcpStream::connect(addr).await.expect("connect to server");
    stream.set_nodelay(true).expect("nodelay");
    let (reader, mut writer) = stream.into_split();
    let mut reader = AsyncBufReader::new(reader);
    let mut latencies = Vec::new();
    let mut burst = Vec::new();
    let mut line = Vec::new();
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        burst.clear();
        let first_id = next_id;
        for _ in 0..depth {
            burst.extend_from_slice(
                format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{next_id},1],"id":{next_id}}}"#).as_bytes(),
            );
            burst.push(b'\n');
            next_id += 1;
        }
        let sent = Instant::now();
        writer.write_all(&burst).await.expect("write requests");
        for _ in 0..depth {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).await.expect("read response");
            assert!(n > 0, "server closed the connection");
            let response: Response = serde_json::from_slice(&line).expect("response is JSON");
            assert!(
                (first_id..next_id).contains(&response.id) && response.result == Some(response.id as i64 + 1),
                "wrong answer: {}",
                String::from_utf8_lossy(&line)
            );
            latencies.push(sent.elapsed());
        }
    }
    latencies
}

fn report(results: &[(Target, Measurement)], options: &Options) {
    println!(
        "{} connections x {} pipelined requests, {:.1}s per target",
        options.connections, options.depth, options.seconds
    );
    println!();
    println!("| target | transport | requests/s | p50 | p99 | server CPU/request |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for (target, m) in results {
        println!(
            "| {} | {:?} | {:.0} | {:.0} us | {:.0} us | {:.2} us |",
            target.name(),
            target.transport(),
            m.rate(),
            m.percentile(0.5).as_secs_f64() * 1e6,
            m.percentile(0.99).as_secs_f64() * 1e6,
            m.cpu_per_request().as_secs_f64() * 1e6
        );
    }
    for (target, m) in results.iter().filter(|(t, _)| !t.is_baseline()) {
        let Some((base_target, base)) =
            results.iter().find(|(t, _)| t.is_baseline() && t.transport() == target.transport())
        else {
            continue;
        };
        println!();
        println!(
            "{} / {}: requests/s {:.2}x, p50 {:.2}x, p99 {:.2}x, server CPU/request {:.2}x",
            target.name(),
            base_target.name(),
            m.rate() / base.rate(),
            m.percentile(0.5).as_secs_f64() / base.percentile(0.5).as_secs_f64(),
            m.percentile(0.99).as_secs_f64() / base.percentile(0.99).as_secs_f64(),
            m.cpu_per_request().as_secs_f64() / base.cpu_per_request().as_secs_f64()
        );
    }
}
