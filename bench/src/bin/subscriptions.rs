//! Subscription benchmark: one subscriber receives `--items` quotes from
//! `items(count)` as fast as the server sends them; each server runs in its
//! own process on loopback:
//!
//! - **ours**: `rpc_runtime::Server` over TCP (newline-delimited), the
//!   method sending with `SubscriptionSink::send`;
//! - **jsonrpsee**: jsonrpsee 0.26's server over WebSocket, the method
//!   sending with `SubscriptionSink::send` and `SubscriptionMessage::new`.
//!
//! The subscriber is a bare client of the transport (it counts messages and
//! checks the first and last item), so that the server is what is
//! measured. Reports items/s, the server's CPU time per item (from
//! `/proc/<pid>/stat`) and items per server CPU second, per run and the
//! median of the runs' ratios.
//!
//! ```text
//! cargo run --release --bin subscriptions -- [--items 1000000] [--runs 5] [--targets ours,jsonrpsee]
//! ```

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use rpc_bench::feed::{jsonrpsee_feed, ours, Quote};
use rpc_bench::process::ServerProcess;
use rpc_bench::stats::median;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Ours,
    Jsonrpsee,
}

impl Target {
    const ALL: [Target; 2] = [Target::Ours, Target::Jsonrpsee];

    fn name(self) -> &'static str {
        match self {
            Target::Ours => "ours",
            Target::Jsonrpsee => "jsonrpsee",
        }
    }

    fn transport(self) -> &'static str {
        match self {
            Target::Ours => "TCP (ndjson)",
            Target::Jsonrpsee => "WebSocket",
        }
    }

    fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }
}

struct Options {
    items: u64,
    runs: usize,
    targets: Vec<Target>,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options { items: 1_000_000, runs: 5, targets: Target::ALL.to_vec() };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--items" => options.items = value()?.parse().map_err(|e| format!("--items: {e}"))?,
            "--runs" => options.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
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
            eprintln!("subscriptions: {err}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let servers: Vec<(Target, ServerProcess)> =
        options.targets.iter().map(|&target| (target, start_server(target))).collect();
    // Warm up each server once, then alternate the targets run by run, so
    // that they see the same machine.
    for (target, server) in &servers {
        runtime.block_on(subscribe(*target, server.addr, options.items.min(100_000)));
    }
    let mut results: Vec<(Target, Vec<Measurement>)> = options.targets.iter().map(|&t| (t, Vec::new())).collect();
    for run in 0..options.runs {
        for (index, (target, server)) in servers.iter().enumerate() {
            eprintln!("subscriptions: run {} of {}: {} ...", run + 1, options.runs, target.name());
            let cpu_before = server.cpu_time();
            let elapsed = runtime.block_on(subscribe(*target, server.addr, options.items));
            let server_cpu = server.cpu_time().saturating_sub(cpu_before);
            results[index].1.push(Measurement { items: options.items, elapsed, server_cpu });
        }
    }
    report(&results, &options);
}

/// Child mode: serve on an ephemeral loopback port, print it, and exit when
/// stdin closes.
fn serve_child(target: Target) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async move {
        let stdin_closed = tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new()));
        match target {
            Target::Ours => {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
                println!("{}", listener.local_addr().expect("local address"));
                let server = rpc_runtime::Server::new(ours::router());
                tokio::select! {
                    result = server.serve(listener) => result.expect("server failed"),
                    _ = stdin_closed => {}
                }
            }
            Target::Jsonrpsee => {
                let server = jsonrpsee::server::Server::builder().build("127.0.0.1:0").await.expect("bind loopback");
                println!("{}", server.local_addr().expect("local address"));
                let handle = server.start(jsonrpsee_feed::module());
                let _ = stdin_closed.await;
                let _ = handle.stop();
            }
        }
    });
}

/// Subscribes to `count` items and reads them all; returns the time from
/// the subscribe call's answer to the last item.
async fn subscribe(target: Target, addr: SocketAddr, count: u64) -> Duration {
    match target {
        Target::Ours => subscribe_tcp(addr, count).await,
        Target::Jsonrpsee => subscribe_ws(addr, count).await,
    }
}

#[derive(Deserialize)]
struct Notification {
    params: Params,
}

#[derive(Deserialize)]
struct Params {
    result: Option<Item>,
}

#[derive(Deserialize)]
struct Item {
    seq: u64,
}

/// Checks that an item notification carries item `seq`.
fn check(message: &[u8], seq: u64) {
    let notification: Notification =
        serde_json::from_slice(message).unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(message)));
    let item = notification.params.result.expect("an item");
    assert_eq!(item.seq, seq, "item {seq} in order");
    let _ = Quote::nth(seq);
}

async fn subscribe_tcp(addr: SocketAddr, count: u64) -> Duration {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (reader, mut writer) = stream.into_split();
    let mut reader = AsyncBufReader::with_capacity(256 * 1024, reader);
    let request = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"items\",\"params\":[{count}],\"id\":1}}\n");
    writer.write_all(request.as_bytes()).await.expect("subscribe");
    let mut line = Vec::with_capacity(256);
    reader.read_until(b'\n', &mut line).await.expect("the answer");
    assert!(line.starts_with(br#"{"jsonrpc":"2.0","result":"#), "{}", String::from_utf8_lossy(&line));
    let started = Instant::now();
    for seq in 0..count {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).await.expect("an item");
        assert!(n > 0, "the server closed the connection");
        if seq == 0 || seq == count - 1 {
            check(&line, seq);
        }
    }
    let elapsed = started.elapsed();
    line.clear();
    reader.read_until(b'\n', &mut line).await.expect("the end");
    assert!(line.windows(10).any(|w| w == br#""end":true"#), "{}", String::from_utf8_lossy(&line));
    elapsed
}

async fn subscribe_ws(addr: SocketAddr, count: u64) -> Duration {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}")).await.expect("connect");
    let request = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"items\",\"params\":[{count}],\"id\":1}}");
    ws.send(Message::text(request)).await.expect("subscribe");
    let answer = ws.next().await.expect("the answer").expect("a frame");
    assert!(answer.to_text().unwrap_or("").contains("\"result\""), "{answer:?}");
    let started = Instant::now();
    let mut seq = 0;
    while seq < count {
        let Message::Text(text) = ws.next().await.expect("an item").expect("a frame") else { continue };
        if seq == 0 || seq == count - 1 {
            check(text.as_bytes(), seq);
        }
        seq += 1;
    }
    let elapsed = started.elapsed();
    let _ = ws.close(None).await;
    elapsed
}

struct Measurement {
    items: u64,
    elapsed: Duration,
    server_cpu: Duration,
}

impl Measurement {
    fn rate(&self) -> f64 {
        self.items as f64 / self.elapsed.as_secs_f64()
    }
    fn cpu_per_item(&self) -> Duration {
        self.server_cpu.div_f64(self.items.max(1) as f64)
    }
    fn items_per_cpu_second(&self) -> f64 {
        self.items as f64 / self.server_cpu.as_secs_f64().max(1e-9)
    }
}

/// Starts this binary serving `target` in a process of its own.
fn start_server(target: Target) -> ServerProcess {
    let mut command = Command::new(std::env::current_exe().expect("own executable"));
    command.args(["serve", target.name()]);
    ServerProcess::start(command)
}

fn report(results: &[(Target, Vec<Measurement>)], options: &Options) {
    println!("one subscriber, {} items per run, {} runs", options.items, options.runs);
    println!();
    println!(
        "| target | transport | items/s (median) | server CPU/item (median) | items per server CPU second (median) |"
    );
    println!("| --- | --- | ---: | ---: | ---: |");
    for (target, runs) in results {
        println!(
            "| {} | {} | {:.0} | {:.2} us | {:.0} |",
            target.name(),
            target.transport(),
            median(&runs.iter().map(Measurement::rate).collect::<Vec<_>>()),
            median(&runs.iter().map(|m| m.cpu_per_item().as_secs_f64() * 1e6).collect::<Vec<_>>()),
            median(&runs.iter().map(Measurement::items_per_cpu_second).collect::<Vec<_>>()),
        );
    }
    let ours = results.iter().find(|(t, _)| *t == Target::Ours);
    let theirs = results.iter().find(|(t, _)| *t == Target::Jsonrpsee);
    if let (Some((_, ours)), Some((_, theirs))) = (ours, theirs) {
        let per_run =
            |f: fn(&Measurement) -> f64| -> Vec<f64> { ours.iter().zip(theirs).map(|(a, b)| f(a) / f(b)).collect() };
        let rate = per_run(Measurement::rate);
        let per_cpu = per_run(Measurement::items_per_cpu_second);
        println!();
        println!(
            "ours / jsonrpsee, per run: items/s {:?}, items per server CPU second {:?}",
            rate.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>(),
            per_cpu.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>()
        );
        println!(
            "ours / jsonrpsee, median: items/s {:.2}x, items per server CPU second {:.2}x",
            median(&rate),
            median(&per_cpu)
        );
    }
}
