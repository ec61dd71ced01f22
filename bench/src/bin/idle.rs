//! Memory per idle TCP connection. Each NDJSON server runs in a process of
//! its own (`idle serve <target> <max-connections>`, on an ephemeral
//! loopback port); this process opens `--connections` connections to it
//! and leaves them idle, and reports the growth of the server's resident
//! set (`VmRSS` of `/proc/<pid>/status`, read before and after) divided
//! by the number of connections, ours next to the hand-written server's.
//!
//! ```text
//! cargo build --release --bin idle
//! target/release/idle [--connections 2000] [--rounds 3] [--targets ours,handwritten]
//! ```
//!
//! Two kinds of idle connection are measured, each in a fresh server
//! process: **connected** (accepted, nothing sent yet) and **after a
//! call** (each sent one request and read its answer, then nothing more).
//! Before the "before" reading, a warm-up opens, uses and closes a few
//! connections, so that what every server allocates once (worker threads'
//! allocator arenas, the first task) is not counted per connection. A
//! reading is taken once the server has accepted every connection (its
//! open file descriptors say so) and its RSS has stopped moving.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use rpc_bench::process::ServerProcess;
use rpc_bench::stats::median;
use rpc_bench::{ours, servers};
use tokio::net::TcpListener;

/// The request of an "after a call" connection, and the result it expects.
const REQUEST: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"add\",\"params\":[40,2],\"id\":1}\n";
const EXPECTED: &str = "\"result\":42";

/// Connections opened, used and closed before the first reading.
const WARM_UP: usize = 64;

/// How an idle connection got idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idle {
    /// Opened, nothing sent.
    Connected,
    /// One request sent and answered.
    AfterCall,
}

impl Idle {
    fn name(self) -> &'static str {
        match self {
            Idle::Connected => "connected",
            Idle::AfterCall => "after a call",
        }
    }
}

struct Options {
    connections: usize,
    rounds: usize,
    targets: Vec<String>,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options =
        Options { connections: 2000, rounds: 3, targets: vec!["ours".to_owned(), "handwritten".to_owned()] };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--connections" => options.connections = value()?.parse().map_err(|e| format!("--connections: {e}"))?,
            "--rounds" => options.rounds = value()?.parse().map_err(|e| format!("--rounds: {e}"))?,
            "--targets" => options.targets = value()?.split(',').map(str::to_owned).collect(),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if let Some(unknown) = options.targets.iter().find(|t| !matches!(t.as_str(), "ours" | "handwritten")) {
        return Err(format!("unknown target `{unknown}`: expected ours or handwritten"));
    }
    if options.connections == 0 || options.rounds == 0 {
        return Err("--connections and --rounds must be at least 1".to_owned());
    }
    Ok(options)
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("serve") {
        args.next();
        let target = args.next().expect("serve needs a target");
        let max = args.next().and_then(|n| n.parse().ok()).expect("serve needs the connection limit");
        serve_child(&target, max);
        return;
    }
    let options = match parse_options(args) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("idle: {err}");
            std::process::exit(2);
        }
    };
    let modes = [Idle::Connected, Idle::AfterCall];
    // bytes per connection, by target then mode, one entry per round
    let mut results: Vec<Vec<Vec<f64>>> = Vec::new();
    for target in &options.targets {
        let mut by_mode = Vec::new();
        for mode in modes {
            let mut rounds = Vec::new();
            for round in 1..=options.rounds {
                let per_connection = measure(target, mode, options.connections);
                eprintln!("idle: {target}, {}, round {round}: {:.0} bytes per connection", mode.name(), per_connection);
                rounds.push(per_connection);
            }
            by_mode.push(rounds);
        }
        results.push(by_mode);
    }
    report(&options, &modes, &results);
}

/// Child mode: serves `target` on an ephemeral loopback port, prints the
/// address, exits when stdin closes.
fn serve_child(target: &str, max_connections: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        println!("{}", listener.local_addr().expect("local address"));
        let serve = async {
            match target {
                "ours" => {
                    rpc_runtime::Server::new(ours::router()).max_connections(max_connections).serve(listener).await
                }
                "handwritten" => servers::serve_handwritten(listener).await,
                other => panic!("unknown target `{other}`"),
            }
        };
        tokio::select! {
            result = serve => result.expect("server failed"),
            _ = tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new())) => {}
        }
    });
}

/// One fresh server process of `target`; `connections` connections made
/// idle the `mode` way; the server's RSS growth per connection, in bytes.
fn measure(target: &str, mode: Idle, connections: usize) -> f64 {
    let mut command = Command::new(std::env::current_exe().expect("own executable"));
    command.args(["serve", target, &(connections + WARM_UP).to_string()]);
    let server = ServerProcess::start(command);
    let warm: Vec<TcpStream> = (0..WARM_UP).map(|_| open(server.addr, Idle::AfterCall)).collect();
    drop(warm);
    let base_fds = settled_fds(&server, 0);
    let before = settled_rss(&server);
    let idle: Vec<TcpStream> = (0..connections).map(|_| open(server.addr, mode)).collect();
    settled_fds(&server, base_fds + connections);
    let after = settled_rss(&server);
    drop(idle);
    (after as f64 - before as f64) / connections as f64
}

/// A connection to `addr`, made idle the `mode` way.
fn open(addr: SocketAddr, mode: Idle) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect to the server");
    stream.set_nodelay(true).expect("nodelay");
    if mode == Idle::AfterCall {
        stream.write_all(REQUEST).expect("send the request");
        let mut answer = String::new();
        BufReader::new(&stream).read_line(&mut answer).expect("read the answer");
        assert!(answer.contains(EXPECTED), "unexpected answer: {answer}");
    }
    stream
}

/// Waits until the server's count of open file descriptors is at least
/// `at_least` and has not moved for three readings 50 ms apart; returns
/// it. (The warm-up's connections are closed by the server once it reads
/// their end; new ones count once accepted.)
fn settled_fds(server: &ServerProcess, at_least: usize) -> usize {
    let started = Instant::now();
    let mut last = server.open_fds();
    let mut unchanged = 0;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let fds = server.open_fds();
        unchanged = if fds == last && fds >= at_least { unchanged + 1 } else { 0 };
        if unchanged >= 3 {
            return fds;
        }
        last = fds;
        assert!(started.elapsed() < Duration::from_secs(60), "the server's descriptors never settled ({fds})");
    }
}

/// The server's RSS once three readings 100 ms apart agree (or after 5 s,
/// the last one).
fn settled_rss(server: &ServerProcess) -> u64 {
    let started = Instant::now();
    let mut last = server.rss_bytes();
    let mut unchanged = 0;
    while unchanged < 3 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        let rss = server.rss_bytes();
        unchanged = if rss == last { unchanged + 1 } else { 0 };
        last = rss;
    }
    last
}

fn report(options: &Options, modes: &[Idle], results: &[Vec<Vec<f64>>]) {
    println!(
        "{} idle connections per server process, RSS growth per connection (median of {} rounds; every round in brackets)",
        options.connections, options.rounds
    );
    print!("| server |");
    for mode in modes {
        print!(" {} |", mode.name());
    }
    println!();
    print!("| --- |");
    for _ in modes {
        print!(" ---: |");
    }
    println!();
    for (target, by_mode) in options.targets.iter().zip(results) {
        print!("| {target} |");
        for rounds in by_mode {
            let all: Vec<String> = rounds.iter().map(|b| format!("{:.1}", b / 1024.0)).collect();
            print!(" {:.1} KiB ({}) |", median(rounds) / 1024.0, all.join(", "));
        }
        println!();
    }
    if results.len() >= 2 {
        print!("| {} / {} |", options.targets[0], options.targets[1]);
        for (first, second) in results[0].iter().zip(&results[1]) {
            print!(" {:.2}x |", median(first) / median(second));
        }
        println!();
    }
}
