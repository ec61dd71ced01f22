//! Stream load benchmark: each server target runs in its own process on
//! loopback TCP, and this process drives it with many connections, each
//! with a burst of pipelined requests in flight. Reports requests/s, p50 and
//! p99 latency and the server's CPU time per request (read from
//! `/proc/<pid>/stat` of the child), and the ratios of each target to the
//! hand-written baseline of its transport.
//!
//! ```text
//! cargo run --release --bin load -- [--connections 16] [--depth 32] [--seconds 5] [--targets ours,handwritten]
//! cargo run --release --bin load -- --rounds 11 --seconds 3 --targets ours,handwritten
//! cargo run --release --bin load -- --targets ours-nats,handwritten-nats
//! cargo run --release --bin load -- --targets ours-http,hyper-http,jsonrpsee-http [--batch 10]
//! cargo run --release --bin load -- --targets ours-http,ours-http-hook,hyper-http
//! cargo run --release --bin load -- --targets ours-http,ours-h2c,jsonrpsee-h2c [--batch 10]
//! cargo run --release --bin load -- --targets ours-ws,ours,jsonrpsee-ws
//! cargo run --release --bin load -- --targets ours-https,ours-http,hyper-http [--batch 10]
//! ```
//!
//! `--rounds N` starts every target's server once and measures them in
//! turn, N times (`--seconds` each, the order reversed every other round),
//! and adds each CPU ratio's median over the rounds and its range: the
//! server CPU of targets measured one after the other moved by more than
//! the gap between them on this VM. Run under `taskset -c 1` with
//! `LOAD_SERVER_WRAPPER="taskset -c 0"`, so that the load and the server
//! do not share a core.
//!
//! The NATS targets need `nats-server` on `PATH`: this process starts one
//! on a free loopback port; the server under test subscribes to a subject
//! in a queue group, and each load "connection" is a NATS client with
//! `depth` requests (request/reply with an inbox) in flight.
//!
//! HTTP: each connection is an HTTP/1.1 keep-alive connection with ONE
//! request in flight (sent, answered, the next one sent: no pipelining);
//! `--depth` does not apply, `--batch N` sends a batch of N calls per HTTP
//! request (a batch counts as one request in the report). The baseline is
//! a bare hyper 1 server calling the hand-written handler. `ours-http-hook`
//! is `ours-http` with a pass-through connection hook, which runs for every
//! request: its difference from `ours-http` is what the hook costs.
//!
//! h2c (HTTP/2 with prior knowledge, on the same servers' ports): each
//! connection is one HTTP/2 connection of hyper's client with ONE stream
//! in flight, as the HTTP/1.1 driver has one request in flight, so that
//! the two compare per request; `--batch` applies alike. Other versions
//! of HTTP (HTTP/2 over TLS) are further targets of their own
//! transport, driven the same way.
//!
//! HTTPS (`ours-https`): the same as HTTP inside TLS (rustls, TLS 1.3,
//! through rpc-runtime's `tls` feature on both sides), each connection
//! kept alive, so the handshake is paid once per connection and the
//! numbers are those of requests on an established TLS connection. The
//! certificate is made for the run (rcgen) and handed to the server in
//! its environment.
//!
//! WebSocket: each connection pipelines `depth` requests as text frames,
//! like the NDJSON driver; compared with our TCP NDJSON transport (`ours`)
//! and jsonrpsee's WS server. The client is hand-written on the socket
//! (`--ws-client raw`, the default, like the NDJSON and HTTP drivers) or
//! tokio-tungstenite's (`--ws-client tungstenite`), which costs more per
//! message, so servers see smaller bursts per wake-up.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpc_bench::process::ServerProcess;
use rpc_bench::{handwritten, ours, servers::serve_handwritten};
use rpc_runtime::transport::nats::async_nats;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::{TcpListener, TcpStream};

/// How requests travel; a load driver exists per transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    /// Newline-delimited JSON over TCP.
    Ndjson,
    /// Request/reply on a NATS subject, through a local `nats-server`.
    Nats,
    /// HTTP/1.1 POST, keep-alive, one request in flight per connection.
    Http,
    /// The same, each request with `Authorization: Bearer` [`BENCH_TOKEN`].
    HttpBearer,
    /// HTTP/2 POST with prior knowledge (h2c), one stream in flight per
    /// connection.
    H2c,
    /// The same, inside TLS.
    Https,
    /// WebSocket text frames, pipelined.
    Ws,
}

/// A server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// `rpc_runtime::Server` with ndjson framing.
    Ours,
    /// A hand-written tokio NDJSON server calling the hand-written handler.
    Handwritten,
    /// a `rpc_runtime::transport::nats::NatsListener` on a subject in a queue group.
    OursNats,
    /// A hand-written async-nats request/reply loop calling the
    /// hand-written handler.
    HandwrittenNats,
    /// `rpc_runtime::transport::http::HttpListener` (HTTP/1.1).
    OursHttp,
    /// The same with a pass-through connection hook (`Server::on_connect`
    /// answering `Ok(cx)`): what the hook itself costs per request.
    OursHttpHook,
    /// `ours-http` with each request carrying the bearer token that
    /// `ours-http-oauth` checks (which `ours-http` ignores): the floor
    /// that `ours-http-oauth` is measured against, since a token's bytes
    /// cost hyper's parser the same either way.
    OursHttpToken,
    /// `ours-http` as an OAuth resource server (`Http::oauth`), every
    /// request with the same bearer token: after the first request its
    /// grant is a lookup, as for any verifier (a JWT's too).
    OursHttpOauth,
    /// A bare hyper 1 HTTP/1.1 server calling the hand-written handler.
    HyperHttp,
    /// jsonrpsee 0.26's server, over HTTP.
    JsonrpseeHttp,
    /// `rpc_runtime::transport::http::HttpListener`, HTTP/2 (h2c).
    OursH2c,
    /// jsonrpsee 0.26's server, over HTTP/2 (h2c: hyper's auto builder).
    JsonrpseeH2c,
    /// `rpc_runtime::transport::http::HttpListener` with `Http::tls` (HTTPS, HTTP/1.1).
    OursHttps,
    /// `rpc_runtime::transport::http::HttpListener`, WebSocket upgrades.
    OursWs,
    /// jsonrpsee 0.26's server, over WebSocket.
    JsonrpseeWs,
}

/// Where the HTTPS target's server finds its certificate and key (PEM).
const TLS_CERT_ENV: &str = "LOAD_TLS_CERT";
const TLS_KEY_ENV: &str = "LOAD_TLS_KEY";

/// The HTTPS target's certificates, made once per run: a CA, and what it
/// signed for 127.0.0.1 (PEM).
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

fn pki() -> &'static Pki {
    static PKI: std::sync::OnceLock<Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(|| {
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_cert = ca.self_signed(&ca_key).expect("a CA certificate");
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let key = rcgen::KeyPair::generate().expect("a server key");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("server parameters");
        let cert = params.signed_by(&key, &issuer).expect("a server certificate");
        Pki { ca: ca_cert.pem(), cert: cert.pem(), key: key.serialize_pem() }
    })
}

/// A TLS connection to the HTTPS target at `addr`, trusting the run's CA.
async fn connect_tls(addr: SocketAddr) -> tokio_rustls::client::TlsStream<TcpStream> {
    use rpc_runtime::transport::tls::{rustls::pki_types::ServerName, CaBundle, ClientTls};
    let roots = CaBundle::from_pem(pki().ca.as_bytes()).expect("the run's CA");
    let connector = tokio_rustls::TlsConnector::from(ClientTls::new(&roots).config().clone());
    let stream = TcpStream::connect(addr).await.expect("connect to server");
    stream.set_nodelay(true).expect("nodelay");
    connector.connect(ServerName::IpAddress(addr.ip().into()), stream).await.expect("TLS handshake")
}

/// The subject (and queue group) the NATS targets serve.
const NATS_SUBJECT: &str = "bench.add";

/// The bearer token of `ours-http-oauth`: as long as a typical RS256 JWT
/// access token (header, claims, a 2048-bit signature).
const BENCH_TOKEN: &str = concat!(
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlbmNoLWtleS0xIiwidHlwIjoiYXQrand0In0.",
    "eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJzdWIiOiJiZW5jaC11c2VyIiwiYXVkIjoiaHR0cDovLzEyNy4wLjAuMS8iLC",
    "JleHAiOjQxMDI0NDQ4MDAsImlhdCI6MTc2NDcyMDAwMCwic2NvcGUiOiJiZW5jaDpjYWxsIiwiY2xpZW50X2lkIjoiYmVuY2gifQ.",
    "WmJ2c3R1dnd4eXphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5emFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6YWJjZGVmZ2hpamtsbW5vcHFy",
    "c3R1dnd4eXphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5emFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6YWJjZGVmZ2hpamtsbW5vcHFyc3R1",
    "dnd4eXphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5emFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4",
    "eXphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5emFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6YWJjZGVmZ2hp",
);

impl Target {
    const ALL: [Target; 15] = [
        Target::Ours,
        Target::Handwritten,
        Target::OursNats,
        Target::HandwrittenNats,
        Target::OursHttp,
        Target::OursHttpHook,
        Target::OursHttpToken,
        Target::OursHttpOauth,
        Target::HyperHttp,
        Target::JsonrpseeHttp,
        Target::OursH2c,
        Target::JsonrpseeH2c,
        Target::OursHttps,
        Target::OursWs,
        Target::JsonrpseeWs,
    ];
    /// Measured when `--targets` is not given.
    const DEFAULT: [Target; 4] = [Target::Ours, Target::Handwritten, Target::OursNats, Target::HandwrittenNats];

    fn name(self) -> &'static str {
        match self {
            Target::Ours => "ours",
            Target::Handwritten => "handwritten",
            Target::OursNats => "ours-nats",
            Target::HandwrittenNats => "handwritten-nats",
            Target::OursHttp => "ours-http",
            Target::OursHttpHook => "ours-http-hook",
            Target::OursHttpToken => "ours-http-token",
            Target::OursHttpOauth => "ours-http-oauth",
            Target::HyperHttp => "hyper-http",
            Target::JsonrpseeHttp => "jsonrpsee-http",
            Target::OursH2c => "ours-h2c",
            Target::JsonrpseeH2c => "jsonrpsee-h2c",
            Target::OursHttps => "ours-https",
            Target::OursWs => "ours-ws",
            Target::JsonrpseeWs => "jsonrpsee-ws",
        }
    }

    fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    fn transport(self) -> Transport {
        match self {
            Target::Ours | Target::Handwritten => Transport::Ndjson,
            Target::OursNats | Target::HandwrittenNats => Transport::Nats,
            Target::OursHttp | Target::OursHttpHook | Target::HyperHttp | Target::JsonrpseeHttp => Transport::Http,
            Target::OursHttpToken | Target::OursHttpOauth => Transport::HttpBearer,
            Target::OursH2c | Target::JsonrpseeH2c => Transport::H2c,
            Target::OursHttps => Transport::Https,
            Target::OursWs | Target::JsonrpseeWs => Transport::Ws,
        }
    }

    /// The target every other one of the same transport is compared with
    /// (WebSocket has none; its comparisons are in [`COMPARISONS`]).
    fn is_baseline(self) -> bool {
        matches!(self, Target::Handwritten | Target::HandwrittenNats | Target::HyperHttp)
    }

    async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        match self {
            Target::Ours => rpc_runtime::Server::new(ours::router()).serve(listener).await,
            Target::Handwritten => serve_handwritten(listener).await,
            Target::OursHttp | Target::OursHttpToken | Target::OursH2c | Target::OursWs => {
                let listener = rpc_runtime::transport::http::Http::default().listener(listener);
                rpc_runtime::Server::new(ours::router()).serve(listener).await
            }
            Target::OursHttpHook => {
                let listener = rpc_runtime::transport::http::Http::default().listener(listener);
                rpc_runtime::Server::new(ours::router()).on_connect(|_info, cx| Ok(cx)).serve(listener).await
            }
            Target::OursHttpOauth => {
                use rpc_runtime::transport::http::oauth::{Grant, InvalidToken, ResourceServer};
                let verifier = |token: &str| match token == BENCH_TOKEN {
                    true => Ok(Grant::new(["bench:call"])),
                    false => Err(InvalidToken::new("not the bench's token")),
                };
                let resource = ResourceServer::new("http://127.0.0.1/", verifier).expect("a URL");
                let listener = rpc_runtime::transport::http::Http::default().oauth(resource).listener(listener);
                rpc_runtime::Server::new(ours::router()).serve(listener).await
            }
            Target::OursHttps => {
                let (cert, key) = (std::env::var(TLS_CERT_ENV), std::env::var(TLS_KEY_ENV));
                let (cert, key) = (cert.expect("the certificate in the environment"), key.expect("its key"));
                let tls = rpc_runtime::transport::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes())?;
                let listener = rpc_runtime::transport::http::Http::default().tls(tls).listener(listener);
                rpc_runtime::Server::new(ours::router()).serve(listener).await
            }
            Target::HyperHttp => serve_hyper(listener).await,
            Target::JsonrpseeHttp | Target::JsonrpseeH2c | Target::JsonrpseeWs => {
                let server = jsonrpsee::server::Server::builder().build_from_tcp(listener.into_std()?)?;
                server.start(rpc_bench::jsonrpsee_impl::module()).stopped().await;
                Ok(())
            }
            Target::OursNats | Target::HandwrittenNats => unreachable!("NATS targets serve a subject"),
        }
    }

    /// Serves [`NATS_SUBJECT`] through the broker at `url`; `ready` is
    /// called once subscribed.
    async fn serve_nats(self, url: &str, ready: impl FnOnce()) -> std::io::Result<()> {
        let client = async_nats::connect(url).await.map_err(std::io::Error::other)?;
        match self {
            Target::OursNats => {
                // the NATS listener subscribes first thing; the flush below makes
                // sure the subscription left before we say we are ready.
                let server = rpc_runtime::Server::new(ours::router());
                let listener =
                    rpc_runtime::transport::nats::NatsListener::new(client.clone(), NATS_SUBJECT, NATS_SUBJECT);
                let serve = server.serve(listener);
                tokio::pin!(serve);
                tokio::select! {
                    result = &mut serve => return result,
                    () = tokio::time::sleep(Duration::from_millis(200)) => ready(),
                }
                serve.await
            }
            Target::HandwrittenNats => {
                let mut requests = client
                    .queue_subscribe(NATS_SUBJECT, NATS_SUBJECT.to_owned())
                    .await
                    .map_err(std::io::Error::other)?;
                client.flush().await.map_err(std::io::Error::other)?;
                tokio::time::sleep(Duration::from_millis(200)).await;
                ready();
                serve_handwritten_nats(&client, &mut requests).await;
                Ok(())
            }
            _ => unreachable!("TCP targets serve a listener"),
        }
    }
}

/// The hand-written NATS server: for each message, the hand-written
/// handler into a fresh buffer, published on the reply subject.
async fn serve_handwritten_nats(client: &async_nats::Client, requests: &mut async_nats::Subscriber) {
    use futures_util::StreamExt;
    while let Some(message) = requests.next().await {
        let mut out = Vec::with_capacity(64);
        handwritten::handle(&message.payload, &mut out);
        if let (Some(reply), false) = (message.reply, out.is_empty()) {
            if client.publish(reply, out.into()).await.is_err() {
                return;
            }
        }
    }
}

/// The bare hyper baseline: hyper 1's HTTP/1.1 connection (keep-alive) per
/// accepted socket, a service that collects the body, calls the
/// hand-written handler and answers it with `Content-Type:
/// application/json`. No Host/Origin checks, no limits, no hooks.
async fn serve_hyper(listener: TcpListener) -> std::io::Result<()> {
    use http_body_util::{BodyExt, Full};
    use hyper::header::{HeaderValue, CONTENT_TYPE};
    use hyper::{body::Incoming, Request, Response};
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(|request: Request<Incoming>| async move {
                let body = request.into_body().collect().await?.to_bytes();
                let mut out = Vec::with_capacity(64);
                handwritten::handle(&body, &mut out);
                let mut response = Response::new(Full::new(bytes::Bytes::from(out)));
                response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                Ok::<_, hyper::Error>(response)
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
        });
    }
}

/// Which client drives the WebSocket targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WsClient {
    /// A hand-written client on the socket (like the HTTP and NDJSON
    /// drivers): its own cost stays small next to the server's.
    Raw,
    /// tokio-tungstenite's client.
    Tungstenite,
}

struct Options {
    connections: usize,
    depth: usize,
    /// Calls per HTTP request (1: a single call, N > 1: a batch of N).
    batch: usize,
    seconds: f64,
    targets: Vec<Target>,
    ws_client: WsClient,
    /// With more than one, every target is measured this many times, in
    /// turn (the order reversed every round), `seconds` each, from servers
    /// started once; the CPU ratios are then the median of the rounds'.
    rounds: usize,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        connections: 16,
        depth: 32,
        batch: 1,
        seconds: 5.0,
        targets: Target::DEFAULT.to_vec(),
        ws_client: WsClient::Raw,
        rounds: 1,
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--connections" => options.connections = value()?.parse().map_err(|e| format!("--connections: {e}"))?,
            "--depth" => options.depth = value()?.parse().map_err(|e| format!("--depth: {e}"))?,
            "--batch" => options.batch = value()?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--ws-client" => {
                options.ws_client = match value()?.as_str() {
                    "raw" => WsClient::Raw,
                    "tungstenite" => WsClient::Tungstenite,
                    other => return Err(format!("--ws-client: `{other}` is not raw or tungstenite")),
                }
            }
            "--seconds" => options.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--rounds" => options.rounds = value()?.parse().map_err(|e| format!("--rounds: {e}"))?,
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
        serve_child(target, args.next());
        return;
    }
    let options = match parse_options(args) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("load: {err}");
            std::process::exit(2);
        }
    };
    let broker = options.targets.iter().any(|t| t.transport() == Transport::Nats).then(Broker::start);
    if options.rounds > 1 {
        let (results, rounds) = measure_rounds(&options, broker.as_ref());
        report(&results, &options);
        report_rounds(&results, &rounds);
        return;
    }
    let mut results = Vec::new();
    for &target in &options.targets {
        eprintln!("load: measuring {} for {:.1}s ...", target.name(), options.seconds);
        results.push((target, measure(target, &options, broker.as_ref())));
    }
    report(&results, &options);
}

/// `--rounds N`: every target's server started once, then each measured
/// in turn, N times (the order reversed every other round, so that no
/// target always follows the same one): targets measured minutes apart
/// on this VM differed by more than the gap between them. Returns each
/// target's rounds summed, and every round's measurements.
fn measure_rounds(options: &Options, broker: Option<&Broker>) -> (Vec<(Target, Measurement)>, Vec<Vec<Measurement>>) {
    let servers: Vec<ServerProcess> = options
        .targets
        .iter()
        .map(|&target| start_server(target, broker.filter(|_| target.transport() == Transport::Nats)))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let mut rounds = Vec::with_capacity(options.rounds);
    for round in 0..options.rounds {
        eprintln!("load: round {} of {} ...", round + 1, options.rounds);
        let mut order: Vec<usize> = (0..servers.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut measured: Vec<Option<Measurement>> = (0..servers.len()).map(|_| None).collect();
        for at in order {
            let warm_up = Duration::from_millis(200);
            measured[at] = Some(measure_window(&runtime, options.targets[at], &servers[at], options, warm_up));
        }
        rounds.push(measured.into_iter().map(|m| m.expect("every target measured")).collect::<Vec<_>>());
    }
    let totals = options
        .targets
        .iter()
        .enumerate()
        .map(|(at, &target)| {
            let mut latencies: Vec<Duration> =
                rounds.iter().flat_map(|round: &Vec<Measurement>| round[at].latencies.iter().copied()).collect();
            latencies.sort_unstable();
            let total = Measurement {
                requests: rounds.iter().map(|round| round[at].requests).sum(),
                elapsed: rounds.iter().map(|round| round[at].elapsed).sum(),
                server_cpu: rounds.iter().map(|round| round[at].server_cpu).sum(),
                latencies,
            };
            (target, total)
        })
        .collect();
    (totals, rounds)
}

/// The server CPU per request of each target against its baseline, round
/// by round: the median and the range of the rounds' ratios.
fn report_rounds(results: &[(Target, Measurement)], rounds: &[Vec<Measurement>]) {
    for (i, base) in compared(results) {
        let mut ratios: Vec<f64> = rounds
            .iter()
            .map(|round| round[i].cpu_per_request().as_secs_f64() / round[base].cpu_per_request().as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!();
        println!(
            "{} / {}: server CPU/request, median of {} rounds {:.2}x (range {:.2}x-{:.2}x)",
            results[i].0.name(),
            results[base].0.name(),
            ratios.len(),
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}

/// Child mode: serve on an ephemeral loopback port (or, for a NATS
/// target, on the subject through the broker at `url`), print the address
/// (or the broker's), and exit when stdin closes (the parent ending or
/// killing us).
fn serve_child(target: Target, url: Option<String>) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async move {
        if target.transport() == Transport::Nats {
            let url = url.expect("a NATS target needs the broker's URL");
            let addr = url.trim_start_matches("nats://").to_owned();
            tokio::select! {
                result = target.serve_nats(&url, || println!("{addr}")) => result.expect("server failed"),
                _ = tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new())) => {}
            }
            return;
        }
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

/// A `nats-server` on a free loopback port, for the NATS targets.
struct Broker {
    child: Child,
    addr: SocketAddr,
}

impl Broker {
    fn start() -> Broker {
        let mut child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", "-1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nats-server on PATH (apt-get install nats-server)");
        let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let addr = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| line.split("Listening for client connections on ").nth(1).map(|a| a.trim().to_owned()))
            .expect("nats-server reports its port");
        // Keep draining its log so that it never blocks.
        std::thread::spawn(move || lines.for_each(drop));
        Broker { child, addr: addr.parse().expect("an address") }
    }

    fn url(&self) -> String {
        format!("nats://{}", self.addr)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server process for `target` (under `LOAD_SERVER_WRAPPER`,
/// if set).
fn start_server(target: Target, broker: Option<&Broker>) -> ServerProcess {
    let exe = std::env::current_exe().expect("own executable");
    // LOAD_SERVER_WRAPPER runs the server under a profiler, e.g.
    // "valgrind --tool=callgrind" (its CPU time then means little).
    let wrapper = std::env::var("LOAD_SERVER_WRAPPER").unwrap_or_default();
    let mut command = wrapper.split_whitespace();
    let mut server = match command.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(command).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    server.args(["serve", target.name()]);
    if target == Target::OursHttps {
        server.env(TLS_CERT_ENV, &pki().cert).env(TLS_KEY_ENV, &pki().key);
    }
    if let Some(broker) = broker {
        server.arg(broker.url());
    }
    ServerProcess::start(server)
}

fn measure(target: Target, options: &Options, broker: Option<&Broker>) -> Measurement {
    let server = start_server(target, broker.filter(|_| target.transport() == Transport::Nats));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let mut measurement = measure_window(&runtime, target, &server, options, Duration::from_millis(500));
    measurement.latencies.sort_unstable();
    measurement
}

/// Loads `server` for `warm_up` (connections, allocator, caches), then
/// for `options.seconds`, measured (latencies unsorted).
fn measure_window(
    runtime: &tokio::runtime::Runtime,
    target: Target,
    server: &ServerProcess,
    options: &Options,
    warm_up: Duration,
) -> Measurement {
    runtime.block_on(run_load(target.transport(), server.addr, options, warm_up));
    let cpu_before = server.cpu_time();
    let started = Instant::now();
    let latencies =
        runtime.block_on(run_load(target.transport(), server.addr, options, Duration::from_secs_f64(options.seconds)));
    let (elapsed, server_cpu) = (started.elapsed(), server.cpu_time().saturating_sub(cpu_before));
    Measurement { requests: latencies.len() as u64, elapsed, server_cpu, latencies }
}

/// Runs all connections for `duration`; returns every request's latency.
async fn run_load(transport: Transport, addr: SocketAddr, options: &Options, duration: Duration) -> Vec<Duration> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..options.connections {
        let stop = stop.clone();
        let (depth, batch, ws_client) = (options.depth, options.batch.max(1), options.ws_client);
        tasks
            .push(tokio::spawn(async move { drive_connection(transport, addr, depth, batch, ws_client, &stop).await }));
    }
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("load connection panicked"));
    }
    latencies
}

async fn drive_connection(
    transport: Transport,
    addr: SocketAddr,
    depth: usize,
    batch: usize,
    ws_client: WsClient,
    stop: &Arc<AtomicBool>,
) -> Vec<Duration> {
    match (transport, ws_client) {
        (Transport::Ndjson, _) => drive_ndjson(addr, depth, stop).await,
        (Transport::Nats, _) => drive_nats(addr, depth, stop).await,
        (Transport::H2c, _) => drive_h2c(addr, batch, stop).await,
        (Transport::Http, _) => {
            let stream = TcpStream::connect(addr).await.expect("connect to server");
            stream.set_nodelay(true).expect("nodelay");
            drive_http(stream, addr, batch, None, stop).await
        }
        (Transport::HttpBearer, _) => {
            let stream = TcpStream::connect(addr).await.expect("connect to server");
            stream.set_nodelay(true).expect("nodelay");
            drive_http(stream, addr, batch, Some(BENCH_TOKEN), stop).await
        }
        (Transport::Https, _) => drive_http(connect_tls(addr).await, addr, batch, None, stop).await,
        (Transport::Ws, WsClient::Raw) => drive_ws_raw(addr, depth, stop).await,
        (Transport::Ws, WsClient::Tungstenite) => drive_ws(addr, depth, stop).await,
    }
}

/// Checks one answer to a call `add [id, 1]` with an id in `ids`.
fn check_answer(response: &Response, ids: &std::ops::Range<u64>, raw: &[u8]) {
    assert!(
        ids.contains(&response.id) && response.result == Some(response.id as i64 + 1),
        "wrong answer: {}",
        String::from_utf8_lossy(raw)
    );
}

/// One HTTP/1.1 keep-alive connection, one request in flight: POST a call
/// (or a batch of `batch` calls), read the whole response (by its
/// Content-Length), check it, repeat. The client is hand-written on the
/// socket (`stream`: TCP, or TLS over it) so that its own cost stays small
/// next to the server's.
async fn drive_http<S>(
    mut stream: S,
    addr: SocketAddr,
    batch: usize,
    token: Option<&str>,
    stop: &AtomicBool,
) -> Vec<Duration>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut latencies = Vec::new();
    let mut body = Vec::new();
    let mut request = Vec::new();
    let mut input: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let first_id = next_id;
        http_body(&mut body, batch, &mut next_id);
        request.clear();
        let authorization = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
        request.extend_from_slice(
            format!(
                "POST / HTTP/1.1\r\nHost: {addr}\r\n{authorization}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        request.extend_from_slice(&body);
        let sent = Instant::now();
        stream.write_all(&request).await.expect("write request");
        let (head_end, length) = loop {
            if let Some(end) = memchr::memmem::find(&input, b"\r\n\r\n") {
                let head = std::str::from_utf8(&input[..end]).expect("ASCII head");
                assert!(head.starts_with("HTTP/1.1 200"), "not a 200: {head}");
                let length = head
                    .split("\r\n")
                    .filter_map(|line| line.split_once(':'))
                    .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                    .map(|(_, value)| value.trim().parse::<usize>().expect("a length"))
                    .unwrap_or_else(|| panic!("no Content-Length: {head}"));
                if input.len() >= end + 4 + length {
                    break (end + 4, length);
                }
            }
            input.reserve(16 * 1024);
            let n = stream.read_buf(&mut input).await.expect("read response");
            assert!(n > 0, "server closed the connection");
        };
        check_http_answer(&input[head_end..head_end + length], batch, &(first_id..next_id));
        input.drain(..head_end + length);
        latencies.push(sent.elapsed());
    }
    latencies
}

/// The body of one HTTP request: a call `add [id, 1]`, or a batch of
/// `batch` of them, with ids from `next_id` on (advanced past them).
fn http_body(body: &mut Vec<u8>, batch: usize, next_id: &mut u64) {
    body.clear();
    for i in 0..batch {
        body.push(if batch == 1 {
            b' '
        } else if i == 0 {
            b'['
        } else {
            b','
        });
        body.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{0},1],"id":{0}}}"#, *next_id).as_bytes(),
        );
        *next_id += 1;
    }
    if batch > 1 {
        body.push(b']');
    }
}

/// Checks the answer to a call or batch of `batch` calls with ids in `ids`.
fn check_http_answer(answer: &[u8], batch: usize, ids: &std::ops::Range<u64>) {
    if batch == 1 {
        check_answer(&serde_json::from_slice(answer).expect("response is JSON"), ids, answer);
    } else {
        let responses: Vec<Response> = serde_json::from_slice(answer).expect("response is a JSON array");
        assert_eq!(responses.len(), batch, "a batch answer of the wrong length");
        responses.iter().for_each(|response| check_answer(response, ids, answer));
    }
}

/// One HTTP/2 connection (h2c, prior knowledge) of hyper's client, one
/// stream in flight: POST a call (or a batch of `batch` calls), read the
/// whole answer, check it, repeat.
async fn drive_h2c(addr: SocketAddr, batch: usize, stop: &AtomicBool) -> Vec<Duration> {
    use http_body_util::{BodyExt, Full};
    let stream = TcpStream::connect(addr).await.expect("connect to server");
    stream.set_nodelay(true).expect("nodelay");
    let (executor, io) = (hyper_util::rt::TokioExecutor::new(), hyper_util::rt::TokioIo::new(stream));
    let (mut sender, connection) = hyper::client::conn::http2::handshake(executor, io).await.expect("HTTP/2 handshake");
    tokio::spawn(connection);
    let uri: hyper::Uri = format!("http://{addr}/").parse().expect("a URI");
    let mut latencies = Vec::new();
    let mut body = Vec::new();
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let first_id = next_id;
        http_body(&mut body, batch, &mut next_id);
        let request = hyper::Request::post(uri.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(bytes::Bytes::copy_from_slice(&body)))
            .expect("a request");
        let sent = Instant::now();
        let response = sender.send_request(request).await.expect("an answer");
        assert_eq!(response.status(), 200, "not a 200");
        let answer = response.into_body().collect().await.expect("the answer's body").to_bytes();
        check_http_answer(&answer, batch, &(first_id..next_id));
        latencies.push(sent.elapsed());
    }
    latencies
}

/// One WebSocket connection: send `depth` requests as text frames in one
/// go, read their `depth` answers (in any order), repeat.
async fn drive_ws(addr: SocketAddr, depth: usize, stop: &AtomicBool) -> Vec<Duration> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/")).await.expect("WebSocket handshake");
    let (mut writer, mut reader) = ws.split();
    let mut latencies = Vec::new();
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let first_id = next_id;
        let sent = Instant::now();
        for _ in 0..depth {
            let request = format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{next_id},1],"id":{next_id}}}"#);
            writer.feed(Message::text(request)).await.expect("send request");
            next_id += 1;
        }
        writer.flush().await.expect("send requests");
        let ids = first_id..next_id;
        let mut answered = 0;
        while answered < depth {
            match reader.next().await {
                Some(Ok(Message::Text(text))) => {
                    check_answer(
                        &serde_json::from_str(text.as_str()).expect("response is JSON"),
                        &ids,
                        text.as_bytes(),
                    );
                    latencies.push(sent.elapsed());
                    answered += 1;
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("the server answered {other:?}"),
            }
        }
    }
    latencies
}

/// One WebSocket connection driven by hand on the socket, as the NDJSON
/// driver does over TCP: the handshake, then `depth` masked text frames
/// written in one go, their `depth` answers read (in any order), repeat.
/// Pings are answered; the server's frames are not masked.
async fn drive_ws_raw(addr: SocketAddr, depth: usize, stop: &AtomicBool) -> Vec<Duration> {
    const KEY: [u8; 4] = [0x5a, 0x13, 0xc7, 0x2e];
    let mut stream = TcpStream::connect(addr).await.expect("connect to server");
    stream.set_nodelay(true).expect("nodelay");
    let handshake = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    stream.write_all(handshake.as_bytes()).await.expect("send the handshake");
    let mut input: Vec<u8> = Vec::with_capacity(64 * 1024);
    let head_end = loop {
        if let Some(end) = memchr::memmem::find(&input, b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read_buf(&mut input).await.expect("read the handshake answer");
        assert!(n > 0, "server closed the connection during the handshake");
    };
    assert!(input.starts_with(b"HTTP/1.1 101"), "not upgraded: {}", String::from_utf8_lossy(&input[..head_end]));
    input.drain(..head_end);
    let mut latencies = Vec::new();
    let mut burst = Vec::new();
    let mut next_id = 0u64;
    let masked_frame = |out: &mut Vec<u8>, opcode: u8, payload: &[u8]| {
        out.push(0x80 | opcode);
        if payload.len() < 126 {
            out.push(0x80 | payload.len() as u8);
        } else {
            out.push(0x80 | 126);
            out.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        out.extend_from_slice(&KEY);
        out.extend(payload.iter().zip(KEY.iter().cycle()).map(|(byte, key)| byte ^ key));
    };
    while !stop.load(Ordering::Relaxed) {
        burst.clear();
        let first_id = next_id;
        for _ in 0..depth {
            let request = format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{next_id},1],"id":{next_id}}}"#);
            masked_frame(&mut burst, 0x1, request.as_bytes());
            next_id += 1;
        }
        let sent = Instant::now();
        stream.write_all(&burst).await.expect("write requests");
        let ids = first_id..next_id;
        let mut answered = 0;
        let mut start = 0;
        while answered < depth {
            // One whole frame at `start`, or read more.
            let frame = input.get(start..).and_then(|rest| {
                let (first, second) = (*rest.first()?, *rest.get(1)?);
                let (length, header) = match second & 0x7F {
                    126 => (u16::from_be_bytes([*rest.get(2)?, *rest.get(3)?]) as usize, 4),
                    127 => panic!("an answer over 64 KiB"),
                    short => (short as usize, 2),
                };
                (rest.len() >= header + length).then_some((first, header, length))
            });
            let Some((first, header, length)) = frame else {
                input.drain(..start);
                start = 0;
                input.reserve(64 * 1024);
                let n = stream.read_buf(&mut input).await.expect("read answers");
                assert!(n > 0, "server closed the connection");
                continue;
            };
            let payload = start + header..start + header + length;
            start = payload.end;
            match first {
                0x81 => {
                    let answer = &input[payload];
                    check_answer(&serde_json::from_slice(answer).expect("response is JSON"), &ids, answer);
                    latencies.push(sent.elapsed());
                    answered += 1;
                }
                0x89 => {
                    let mut pong = Vec::new();
                    masked_frame(&mut pong, 0xA, &input[payload]);
                    stream.write_all(&pong).await.expect("answer a ping");
                }
                other => panic!("the server sent a frame starting {other:#x}"),
            }
        }
        input.drain(..start);
    }
    latencies
}

/// The ratios the issue asks for, beyond each target against its
/// transport's baseline: (target, against).
const COMPARISONS: [(Target, Target); 9] = [
    (Target::OursHttp, Target::JsonrpseeHttp),
    (Target::OursHttpHook, Target::OursHttp),
    (Target::OursHttpOauth, Target::OursHttpToken),
    (Target::OursH2c, Target::JsonrpseeH2c),
    (Target::OursH2c, Target::OursHttp),
    (Target::OursHttps, Target::OursHttp),
    (Target::OursHttps, Target::HyperHttp),
    (Target::OursWs, Target::Ours),
    (Target::OursWs, Target::JsonrpseeWs),
];

/// One NATS client with `depth` requests in flight: each of `depth` loops
/// sends a request with an inbox and waits for its answer.
async fn drive_nats(addr: SocketAddr, depth: usize, stop: &Arc<AtomicBool>) -> Vec<Duration> {
    let client = async_nats::connect(format!("nats://{addr}")).await.expect("connect to nats-server");
    let mut loops = Vec::new();
    for lane in 0..depth as u64 {
        let (client, stop) = (client.clone(), Arc::clone(stop));
        loops.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut id = lane;
            while !stop.load(Ordering::Relaxed) {
                let request = format!(r#"{{"jsonrpc":"2.0","method":"add","params":[{id},1],"id":{id}}}"#);
                let sent = Instant::now();
                let answer = client.request(NATS_SUBJECT, request.into()).await.expect("an answer");
                let response: Response = serde_json::from_slice(&answer.payload).expect("response is JSON");
                assert!(response.id == id && response.result == Some(id as i64 + 1), "wrong answer");
                latencies.push(sent.elapsed());
                id += depth as u64;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for lane in loops {
        latencies.extend(lane.await.expect("a load loop"));
    }
    latencies
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
        "{} connections x {} pipelined requests (HTTP: 1 in flight, {} call(s) per request), {:.1}s per target",
        options.connections, options.depth, options.batch, options.seconds
    );
    println!();
    println!("| target | transport | requests | requests/s | p50 | p99 | server CPU/request |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for (target, m) in results {
        println!(
            "| {} | {:?} | {} | {:.0} | {:.0} us | {:.0} us | {:.2} us |",
            target.name(),
            target.transport(),
            m.requests,
            m.rate(),
            m.percentile(0.5).as_secs_f64() * 1e6,
            m.percentile(0.99).as_secs_f64() * 1e6,
            m.cpu_per_request().as_secs_f64() * 1e6
        );
    }
    for (i, base) in compared(results) {
        print_ratio(results[i].0, &results[i].1, results[base].0, &results[base].1);
    }
}

/// The pairs of results the report compares, as (target, against)
/// positions: each target with the baseline of its transport, then
/// [`COMPARISONS`].
fn compared(results: &[(Target, Measurement)]) -> Vec<(usize, usize)> {
    let at = |wanted: Target| results.iter().position(|(t, _)| *t == wanted);
    let mut pairs = Vec::new();
    for (i, (target, _)) in results.iter().enumerate().filter(|(_, (t, _))| !t.is_baseline()) {
        if let Some(base) = results.iter().position(|(t, _)| t.is_baseline() && t.transport() == target.transport()) {
            pairs.push((i, base));
        }
    }
    for (target, against) in COMPARISONS {
        if let (Some(i), Some(base)) = (at(target), at(against)) {
            pairs.push((i, base));
        }
    }
    pairs
}

fn print_ratio(target: Target, m: &Measurement, base_target: Target, base: &Measurement) {
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
