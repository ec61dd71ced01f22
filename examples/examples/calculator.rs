//! The demo and the conformance fixture: tests and outside checks drive
//! every example of the JSON-RPC 2.0 specification and every transport
//! flag below through it, so each method and flag is a contract. To learn
//! one concept at a time, see `examples/README.md`.
//!
//! The conformance example: every method of the JSON-RPC 2.0
//! specification's examples, plus a few that exercise the engine.
//!
//! ```text
//! cargo run --example calculator -- [--framing ndjson|content-length] [--tcp ADDR] [--unix PATH] [--http ADDR] [--ws ADDR] [--allow-origin ORIGIN]... [--tls-cert PEM --tls-key PEM]
//! cargo run --example calculator -- --catalog
//! cargo run --example calculator -- --mcp
//! cargo run --example calculator -- --mcp --http ADDR
//! cargo run --example calculator -- --nats URL --subject SUBJECT [--queue GROUP]
//! cargo run --example calculator -- [any of the above] --metrics ADDR
//! cargo run --example calculator -- [any of the above] --otlp URL
//! ```
//!
//! Serves over stdio by default; with `--tcp ADDR` it listens there instead
//! and prints `listening on ADDR` to stderr; with `--unix PATH` (Unix) on a
//! Unix domain socket at PATH, in the same framing, printing
//! `listening on unix:PATH` (a stale socket there is replaced, and the
//! socket is removed on exit). `--http ADDR` serves JSON-RPC
//! over HTTP `POST` there (printing `listening on http://ADDR`), `--ws ADDR`
//! over WebSocket (printing `listening on ws://ADDR`; plain `POST` works on
//! that port too); any of the three may be given together. `--allow-origin
//! ORIGIN` (repeatable, such as `--allow-origin http://localhost:3000`)
//! lets web pages from that origin call it over HTTP (CORS preflights and
//! answers) and open WebSockets; pages from other origins stay refused
//! (403). `--tls-cert PEM --tls-key PEM` (a certificate chain and its
//! private key, PEM files) serve TLS on every listener: HTTPS on `--http`
//! (printing `listening on https://ADDR`), WSS on `--ws` (`wss://ADDR`),
//! TLS on `--tcp` (`tls://ADDR`); a plain-text request there is not
//! served. With `--nats URL --subject
//! SUBJECT` it connects to that NATS server and serves the subject in queue
//! group GROUP (default: the subject), so several of them share the calls;
//! it prints `serving NATS subject SUBJECT in queue group GROUP` to stderr
//! once subscribed, and on SIGTERM or Ctrl-C it leaves the queue group,
//! answers what it received and exits. Logs go to stderr
//! (`RPC_LOG=debug` for more). With `--catalog` it prints its OpenRPC
//! document (pretty JSON) to stdout and exits. With `--mcp` it is a Model
//! Context Protocol server instead: each method is a tool of the same name
//! whose arguments are its params by name (over stdio, or `--tcp ADDR`;
//! with `--http ADDR` over MCP's Streamable HTTP, printing
//! `listening on http://ADDR`).
//! Network connections (TCP, HTTP, WebSocket) whose writes make no
//! progress for 30 s are closed (`--write-timeout MS` sets it); the end of
//! a network connection's input cancels its running requests, unless
//! `--half-close MS` gives them that long to finish and be answered
//! (stdio always lets them finish).
//! With `--metrics ADDR` (beside any of the above) it serves its metrics
//! (`rpc_runtime::dispatch::metrics`: calls, errors, latency, in flight,
//! connections, subscriptions) in Prometheus' text format at
//! `http://ADDR/metrics`, printing `metrics on http://ADDR/metrics`.
//! With `--otlp URL` (beside any of the above; an OpenTelemetry
//! collector's OTLP/HTTP address such as `http://127.0.0.1:4318`) each
//! call's span is exported there as service `calculator`, in the trace of
//! its caller when the call carried W3C Trace Context (HTTP or NATS
//! headers, the WebSocket upgrade, MCP's `params._meta`); the last spans
//! are sent before it exits.
//! On SIGINT or SIGTERM it
//! shuts down gracefully: stops reading, answers the requests already
//! received, and exits with status 0.
//!
//! Logging never holds up requests: lines are queued for a writer thread
//! and dropped when stderr does not keep up, and repeated panics are
//! counted rather than each printed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::serde_json::value::RawValue;
use rpc_runtime::serde_json::{Map, Value};
use rpc_runtime::transport::http::Http;
use rpc_runtime::transport::stdio::Stdio;
use rpc_runtime::transport::tls::{ServerTls, TlsListener};
use rpc_runtime::{
    mcp::McpServer,
    rpc,
    wire::{INTERNAL_ERROR, INVALID_PARAMS},
    ClientError, Context, ErrorObject, Framing, RpcError, Server, SubscriptionSink,
};

/// The calculator of the JSON-RPC 2.0 specification's examples.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    #[rpc(mcp(title = "Subtract", read_only, idempotent, open_world = false))]
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;

    /// Adds up any number of integers, given as positional params.
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;

    /// Accepts any positional list and does nothing with it.
    #[rpc(notification, whole_params)]
    fn update(&self, values: Vec<Value>);

    /// Says hello to the server log.
    #[rpc(notification)]
    fn notify_hello(&self, value: i64);

    /// Logs the sum of a list of integers.
    #[rpc(notification, whole_params)]
    fn notify_sum(&self, numbers: Vec<i64>);

    /// Returns `["hello", 5]`.
    fn get_data(&self) -> (String, i64);

    /// Returns its argument, byte for byte.
    fn echo(&self, value: Box<RawValue>) -> Box<RawValue>;

    /// Greets `name`, with `greeting` or "Hello".
    fn greet(&self, name: String, greeting: Option<String>) -> String;

    /// Always fails with exactly this code, message and data.
    fn fail(&self, code: i64, message: String, data: Option<Box<RawValue>>) -> Result<(), ErrorObject>;

    /// Its handler panics (the server answers -32603 and carries on).
    #[rpc(mcp(hidden))]
    fn panic(&self);

    /// Answers `ms` after waiting that many milliseconds, without blocking
    /// other requests.
    async fn sleep(&self, ms: u64, cx: Context) -> u64;

    /// Calls the caller back: sends it request `method` with `params` (an
    /// array, an object, or nothing) on the same connection and answers
    /// with the caller's result, or with the caller's error object.
    async fn ask_client(
        &self,
        method: String,
        params: Option<CallbackParams>,
        cx: Context,
    ) -> Result<Value, ErrorObject>;

    /// Sends the caller notification `method` with `params`, then answers
    /// `null` (so the notification always arrives before the answer).
    async fn notify_client(
        &self,
        method: String,
        params: Option<CallbackParams>,
        cx: Context,
    ) -> Result<(), ErrorObject>;

    /// Divides `dividend` by `divisor`, rounding toward zero. Fails with
    /// the errors of [`CalcError`] (listed in the catalog from its derive).
    #[rpc(mcp(title = "Divide", read_only, idempotent, open_world = false))]
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;

    /// Subscribes to `count` ticks, one every `interval_ms` milliseconds.
    ///
    /// The answer is the subscription id. Each tick arrives as a
    /// notification `subscription` with params `{"subscription": id,
    /// "result": {"index": n}}`, `n` from 1 to `count` (the first at once);
    /// then the subscription ends (`{"subscription": id, "end": true}`).
    /// `unsubscribe_ticks` ends it early.
    #[rpc(unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, count: u64, interval_ms: u64, sink: SubscriptionSink<Tick>) -> Result<(), ErrorObject>;

    /// Waits up to `ms` milliseconds, less if the request is cancelled
    /// (its connection is gone); answers how many milliseconds it waited.
    async fn wait(&self, ms: u64, cx: Context) -> u64;

    /// How many `wait` calls are running now, on every connection.
    fn waiting(&self) -> u64;
}

/// One item of [`Calculator::ticks`].
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Tick {
    /// Counts from 1.
    pub index: u64,
}

/// The code of [`CalcError::DivisionByZero`]; a constant, as codes often are.
pub const DIVISION_BY_ZERO: i64 = -32010;

/// The calculator's own errors, declared once: code and message per
/// variant, fields as the error's `data`.
#[derive(Debug, PartialEq, RpcError)]
pub enum CalcError {
    /// `divisor` was zero.
    #[rpc(code = DIVISION_BY_ZERO, message = "Division by zero")]
    DivisionByZero,
    /// The quotient does not fit in an `i64` (`i64::MIN / -1`).
    #[rpc(code = -32011, message = "Overflow")]
    Overflow {
        /// The number divided.
        dividend: i64,
        /// The number it was divided by.
        divisor: i64,
    },
}

/// Params for a call back to the client: JSON-RPC allows only an array or
/// an object, so the schema and the decoder both reject anything else.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde", untagged)]
#[schemars(crate = "rpc_runtime::schemars")]
pub enum CallbackParams {
    /// By position.
    Array(Vec<Value>),
    /// By name.
    Object(Map<String, Value>),
}

struct Calc;

impl Calculator for Calc {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend.wrapping_sub(subtrahend)
    }

    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.into_iter().fold(0, i64::wrapping_add)
    }

    fn update(&self, values: Vec<Value>) {
        tracing::info!(count = values.len(), "update");
    }

    fn notify_hello(&self, value: i64) {
        tracing::info!(value, "hello");
    }

    fn notify_sum(&self, numbers: Vec<i64>) {
        tracing::info!(sum = self.sum(numbers), "notify_sum");
    }

    fn get_data(&self) -> (String, i64) {
        ("hello".to_owned(), 5)
    }

    fn echo(&self, value: Box<RawValue>) -> Box<RawValue> {
        value
    }

    fn greet(&self, name: String, greeting: Option<String>) -> String {
        format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
    }

    fn fail(&self, code: i64, message: String, data: Option<Box<RawValue>>) -> Result<(), ErrorObject> {
        let error = ErrorObject::new(code, message);
        Err(match data {
            Some(data) => error.with_raw_data(data),
            None => error,
        })
    }

    fn panic(&self) {
        panic!("the `panic` method always panics");
    }

    async fn sleep(&self, ms: u64, cx: Context) -> u64 {
        // Cancellation is cooperative: stop waiting once the caller gave up
        // (only MCP mode understands cancellation notifications).
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = cx.cancelled() => {}
        }
        ms
    }

    async fn ask_client(
        &self,
        method: String,
        params: Option<CallbackParams>,
        cx: Context,
    ) -> Result<Value, ErrorObject> {
        let peer = cx.peer().ok_or_else(no_connection)?;
        peer.call::<Value, _>(&method, params).await.map_err(callback_failed)
    }

    async fn notify_client(
        &self,
        method: String,
        params: Option<CallbackParams>,
        cx: Context,
    ) -> Result<(), ErrorObject> {
        let peer = cx.peer().ok_or_else(no_connection)?;
        peer.notify(&method, params).await.map_err(callback_failed)
    }

    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError> {
        if divisor == 0 {
            return Err(CalcError::DivisionByZero);
        }
        dividend.checked_div(divisor).ok_or(CalcError::Overflow { dividend, divisor })
    }

    async fn ticks(&self, count: u64, interval_ms: u64, sink: SubscriptionSink<Tick>) -> Result<(), ErrorObject> {
        let interval = Duration::from_millis(interval_ms);
        for index in 1..=count {
            if index > 1 && !interval.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    // Unsubscribed, or the client left: stop at once.
                    _ = sink.closed() => return Ok(()),
                }
            }
            sink.send(Tick { index }).await?;
        }
        Ok(())
    }

    async fn wait(&self, ms: u64, cx: Context) -> u64 {
        let _running = Waiting::start();
        let started = std::time::Instant::now();
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => ms,
            () = cx.cancelled() => {
                let waited = started.elapsed().as_millis().try_into().unwrap_or(u64::MAX);
                tracing::debug!(ms, waited, "wait cancelled");
                waited
            }
        }
    }

    fn waiting(&self) -> u64 {
        WAITING.load(Ordering::Relaxed)
    }
}

/// `wait` calls running now.
static WAITING: AtomicU64 = AtomicU64::new(0);

/// Counts one running `wait` until dropped (also when its future is).
struct Waiting;

impl Waiting {
    fn start() -> Self {
        WAITING.fetch_add(1, Ordering::Relaxed);
        Waiting
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }
}

fn no_connection() -> ErrorObject {
    ErrorObject::internal_error("this request did not come in on a connection that can be called back")
}

/// The caller's own error object comes back as is; anything else says what
/// went wrong with the call back.
fn callback_failed(err: ClientError) -> ErrorObject {
    match err {
        ClientError::Server(error) => error,
        ClientError::Encode(err) => {
            ErrorObject::new(INVALID_PARAMS, format!("invalid params for the call back: {err}"))
        }
        other => ErrorObject::new(INTERNAL_ERROR, format!("calling the client back failed: {other}")),
    }
}

struct Options {
    framing: Framing,
    tcp: Option<String>,
    /// `--unix`: the path of a Unix socket to listen on (Unix only).
    unix: Option<String>,
    http: Option<String>,
    ws: Option<String>,
    catalog: bool,
    mcp: bool,
    nats: Option<String>,
    subject: Option<String>,
    queue: Option<String>,
    write_timeout: Option<Duration>,
    half_close: Option<Duration>,
    /// `--allow-origin`: web origins allowed over HTTP and WebSocket.
    origins: Vec<String>,
    /// `--metrics`: where to serve the metrics in Prometheus' format.
    metrics: Option<String>,
    /// `--tls-cert` and `--tls-key`: PEM files of a certificate chain and
    /// its key, to serve TLS with.
    tls_cert: Option<String>,
    tls_key: Option<String>,
    /// `--otlp`: an OpenTelemetry collector's OTLP/HTTP address, to export
    /// every call's span to.
    otlp: Option<String>,
}

const USAGE: &str = "usage: calculator [--framing ndjson|content-length] [--tcp ADDR] [--unix PATH] [--http ADDR] [--ws ADDR] [--allow-origin ORIGIN]... [--tls-cert PEM --tls-key PEM] [--write-timeout MS] [--half-close MS] | --catalog | --mcp [--tcp ADDR] [--unix PATH] [--http ADDR] [--tls-cert PEM --tls-key PEM] | --nats URL --subject SUBJECT [--queue GROUP]; any server also [--metrics ADDR] (Prometheus text at http://ADDR/metrics) [--otlp URL] (each call's span to an OpenTelemetry collector over OTLP/HTTP, such as http://127.0.0.1:4318)";

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        framing: Framing::NewlineDelimited,
        tcp: None,
        unix: None,
        http: None,
        ws: None,
        catalog: false,
        mcp: false,
        nats: None,
        subject: None,
        queue: None,
        write_timeout: None,
        half_close: None,
        origins: Vec::new(),
        metrics: None,
        tls_cert: None,
        tls_key: None,
        otlp: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--framing" => options.framing = args.next().ok_or("--framing needs a value")?.parse()?,
            "--tcp" => options.tcp = Some(args.next().ok_or("--tcp needs an address such as 127.0.0.1:4000")?),
            "--unix" => {
                if !cfg!(unix) {
                    return Err("--unix serves a Unix domain socket, which this platform does not have".to_owned());
                }
                options.unix = Some(args.next().ok_or("--unix needs a socket path such as /tmp/calculator.sock")?)
            }
            "--http" => options.http = Some(args.next().ok_or("--http needs an address such as 127.0.0.1:8080")?),
            "--ws" => options.ws = Some(args.next().ok_or("--ws needs an address such as 127.0.0.1:8081")?),
            "--catalog" => options.catalog = true,
            "--nats" => options.nats = Some(args.next().ok_or("--nats needs a URL such as nats://127.0.0.1:4222")?),
            "--subject" => {
                options.subject = Some(args.next().ok_or("--subject needs a NATS subject such as svc.calculator")?)
            }
            "--mcp" => options.mcp = true,
            "--queue" => options.queue = Some(args.next().ok_or("--queue needs a queue group name")?),
            "--write-timeout" => options.write_timeout = Some(millis(args.next(), "--write-timeout")?),
            "--half-close" => options.half_close = Some(millis(args.next(), "--half-close")?),
            "--allow-origin" => {
                let origin = args.next().ok_or("--allow-origin needs a web origin such as http://localhost:3000")?;
                options.origins.push(web_origin(&origin)?);
            }
            "--metrics" => {
                options.metrics = Some(args.next().ok_or("--metrics needs an address such as 127.0.0.1:9090")?)
            }
            "--tls-cert" => {
                options.tls_cert = Some(args.next().ok_or("--tls-cert needs a PEM file of a certificate chain")?)
            }
            "--tls-key" => options.tls_key = Some(args.next().ok_or("--tls-key needs a PEM file of a private key")?),
            "--otlp" => {
                options.otlp =
                    Some(args.next().ok_or("--otlp needs an OTLP/HTTP collector URL such as http://127.0.0.1:4318")?)
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`; try --help")),
        }
    }
    if options.nats.is_some() != options.subject.is_some() {
        return Err("--nats and --subject go together: --nats URL --subject SUBJECT".to_owned());
    }
    if options.queue.is_some() && options.nats.is_none() {
        return Err("--queue needs --nats URL --subject SUBJECT".to_owned());
    }
    if !options.origins.is_empty() && options.http.is_none() && options.ws.is_none() {
        return Err("--allow-origin is for web pages: it needs --http ADDR or --ws ADDR".to_owned());
    }
    if options.tls_cert.is_some() != options.tls_key.is_some() {
        return Err("--tls-cert and --tls-key go together: --tls-cert PEM --tls-key PEM".to_owned());
    }
    let listens = options.http.is_some() || options.ws.is_some() || options.tcp.is_some();
    if options.tls_cert.is_some() && (!listens || options.nats.is_some()) {
        return Err("--tls-cert and --tls-key serve TLS on a listener: they need --http ADDR, --ws ADDR or --tcp ADDR (not stdio or NATS)".to_owned());
    }
    Ok(options)
}

/// A flag's value in milliseconds.
fn millis(value: Option<String>, flag: &str) -> Result<Duration, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a number of milliseconds"))?;
    let ms = value.parse::<u64>().map_err(|_| format!("{flag} takes milliseconds, not `{value}`"))?;
    Ok(Duration::from_millis(ms))
}

/// `origin` as browsers send it in `Origin`: `scheme://host[:port]`, no
/// path, no trailing slash.
fn web_origin(origin: &str) -> Result<String, String> {
    let rest = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(['/', '?', '#', ' ']) => Ok(origin.to_owned()),
        _ => Err(format!(
            "--allow-origin {origin:?} is not a web origin: write scheme, host and port as a browser sends them, such as http://localhost:3000 (no path, no trailing slash)"
        )),
    }
}

async fn bind(addr: &str, scheme: &str) -> std::io::Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr().map_or_else(|_| addr.to_owned(), |a| a.to_string());
    eprintln!("listening on {scheme}{local}");
    Ok(listener)
}

/// Serving framed TCP on `addr`, inside TLS when `tls` is given.
async fn tcp(server: &Server, addr: &str, tls: Option<&ServerTls>) -> std::io::Result<rpc_runtime::transport::Serve> {
    Ok(match tls {
        None => server.serve(bind(addr, "").await?),
        Some(tls) => server.serve(TlsListener::new(bind(addr, "tls://").await?, tls.clone())),
    })
}

async fn serve_tcp(server: &Server, addr: &str, tls: Option<&ServerTls>, shutdown: Shutdown) -> std::io::Result<()> {
    tcp(server, addr, tls).await?.with_graceful_shutdown(shutdown.wait()).await
}

/// The TLS settings of `--tls-cert` and `--tls-key`, if given.
fn server_tls(options: &Options) -> std::io::Result<Option<ServerTls>> {
    match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => ServerTls::from_pem_files(cert, key).map(Some),
        _ => Ok(None),
    }
}

/// `http`, serving TLS when `tls` is given; and its URL scheme (`plain`,
/// or `secure` with TLS).
fn with_tls(http: Http, tls: Option<&ServerTls>, plain: &'static str, secure: &'static str) -> (Http, &'static str) {
    match tls {
        Some(tls) => (http.tls(tls.clone()), secure),
        None => (http, plain),
    }
}

/// Serves every listener asked for at once; returns when one fails.
async fn serve_listeners(
    server: Server,
    options: Options,
    tls: Option<ServerTls>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    // One signal shuts every listener down.
    let until_stopped = move || shutdown.clone().wait();
    let tls = tls.as_ref();
    let mut tasks = tokio::task::JoinSet::new();
    if let Some(addr) = &options.tcp {
        tasks.spawn(tcp(&server, addr, tls).await?.with_graceful_shutdown(until_stopped()));
    }
    #[cfg(unix)]
    if let Some(path) = &options.unix {
        tasks.spawn(serve_unix(server.clone(), path.clone(), until_stopped()));
    }
    if let (Some(addr), true) = (&options.http, options.mcp) {
        // MCP's Streamable HTTP: both eras, sessions for the handshake ones.
        let origins = options.origins.clone();
        let (http, scheme) = with_tls(with_origins(Http::default(), &origins), tls, "http://", "https://");
        let mcp = rpc_runtime::mcp::McpHttp::default().http(http);
        let listener = mcp.listener(bind(addr, scheme).await?);
        tasks.spawn(server.serve(listener).with_graceful_shutdown(until_stopped()));
    } else if let Some(addr) = &options.http {
        let http = with_origins(Http::default().websocket(false), &options.origins);
        let (http, scheme) = with_tls(http, tls, "http://", "https://");
        let listener = http.listener(bind(addr, scheme).await?);
        tasks.spawn(server.serve(listener).with_graceful_shutdown(until_stopped()));
    }
    if let Some(addr) = &options.ws {
        let (http, scheme) = with_tls(with_origins(Http::default(), &options.origins), tls, "ws://", "wss://");
        let listener = http.listener(bind(addr, scheme).await?);
        tasks.spawn(server.serve(listener).with_graceful_shutdown(until_stopped()));
    }
    // Until every listener has shut down (or one fails).
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(err)) => return Err(err),
            Err(err) => return Err(std::io::Error::other(err)),
        }
    }
    Ok(())
}

/// Serves on a Unix socket at `path` until `stop`: a socket left there by
/// an earlier run is replaced (any other file is not), and removed at the
/// end. The hook sees each caller's credentials (logged at debug level).
#[cfg(unix)]
async fn serve_unix(
    server: Server,
    path: String,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_socket()) {
        std::fs::remove_file(&path)?;
    }
    let listener = tokio::net::UnixListener::bind(&path)
        .map_err(|err| std::io::Error::new(err.kind(), format!("--unix {path}: {err}")))?;
    eprintln!("listening on unix:{path}");
    let server = server.on_connect(|info, cx| {
        if let Some(caller) = info.part::<rpc_runtime::transport::unix::PeerCredentials>() {
            tracing::debug!(uid = caller.uid, gid = caller.gid, pid = caller.pid, "Unix socket connection");
        }
        Ok(cx)
    });
    let served = server.serve(listener).with_graceful_shutdown(stop).await;
    let _ = std::fs::remove_file(&path);
    served
}

/// `http` with CORS for `origins` (preflights, answers, WebSocket
/// upgrades from pages of those origins); as it is when there are none.
fn with_origins(http: Http, origins: &[String]) -> Http {
    if origins.is_empty() {
        return http;
    }
    http.cors(origins.iter().cloned())
}

/// Installs a Prometheus recorder for the server's metrics and serves
/// their text at `http://ADDR/metrics` (hyper, HTTP/1.1) on tasks of its
/// own. The exporter crate is the example's: the library only reports
/// through the `metrics` facade.
async fn serve_metrics(addr: &str) -> std::io::Result<()> {
    use http_body_util::Full;
    use hyper::body::Bytes;
    use hyper::{header, Response, StatusCode};
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

    let duration = Matcher::Full(rpc_runtime::dispatch::metrics::CALL_DURATION.to_owned());
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(duration, rpc_runtime::dispatch::metrics::DURATION_BUCKETS)
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(std::io::Error::other)?;
    rpc_runtime::dispatch::metrics::describe();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("metrics on http://{}/metrics", listener.local_addr()?);
    // Histogram samples are folded into their buckets at each scrape; the
    // upkeep does it too when nobody scrapes, so that they do not pile up.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of file descriptors, say: try again a little later.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let handle = handle.clone();
            let page = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let mut response = Response::new(Full::new(Bytes::new()));
                if request.uri().path() == "/metrics" {
                    *response.body_mut() = Full::new(Bytes::from(handle.render()));
                    let text = header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
                    response.headers_mut().insert(header::CONTENT_TYPE, text);
                } else {
                    *response.status_mut() = StatusCode::NOT_FOUND;
                }
                std::future::ready(Ok::<_, std::convert::Infallible>(response))
            });
            let connection =
                hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(stream), page);
            tokio::spawn(connection);
        }
    });
    Ok(())
}

/// Serves `subject` on the NATS server at `url` until SIGTERM or Ctrl-C,
/// then drains.
async fn serve_nats(
    server: Server,
    url: &str,
    subject: String,
    queue: Option<String>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    let client = rpc_runtime::transport::nats::async_nats::connect(url).await.map_err(std::io::Error::other)?;
    let queue = queue.unwrap_or_else(|| subject.clone());
    eprintln!("serving NATS subject {subject} in queue group {queue}");
    let listener = rpc_runtime::transport::nats::NatsListener::new(client, subject, queue);
    server.serve(listener).with_graceful_shutdown(shutdown.wait()).await
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return std::process::ExitCode::from(2);
        }
    };
    let telemetry = examples::init_logging_and_traces(options.otlp.as_deref(), "calculator");
    examples::quiet_repeated_panics();
    if options.catalog {
        println!("{}", CalculatorCatalog::catalog().to_json_pretty());
        return std::process::ExitCode::SUCCESS;
    }
    if let Some(addr) = &options.metrics {
        if let Err(err) = serve_metrics(addr).await {
            eprintln!("calculator: --metrics {addr}: {err}");
            return std::process::ExitCode::FAILURE;
        }
    }
    let server = if options.mcp {
        // MCP: every method a tool, both eras of the protocol, newline-delimited.
        McpServer::new(Calc.into_rpc()).name("calculator").into_server()
    } else {
        Server::new(Calc.into_rpc()).framing(options.framing)
    };
    let server = match options.write_timeout {
        Some(timeout) => server.write_timeout(Some(timeout)),
        None => server,
    };
    let server = match options.half_close {
        Some(grace) => server.half_close(grace),
        None => server,
    };
    let tls = match server_tls(&options) {
        Ok(tls) => tls,
        Err(err) => {
            eprintln!("calculator: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    // SIGINT or SIGTERM: stop accepting and reading, answer what is
    // running, exit 0. The handlers are installed before anything is
    // served, so that no signal finds the default action still in place.
    let shutdown = Shutdown::install();
    let result = if let (Some(url), Some(subject)) = (options.nats.clone(), options.subject.clone()) {
        serve_nats(server, &url, subject, options.queue.clone(), shutdown).await
    } else if options.http.is_none() && options.ws.is_none() && options.unix.is_none() {
        match options.tcp {
            None => server.serve(Stdio).with_graceful_shutdown(shutdown.wait()).await,
            Some(addr) => serve_tcp(&server, &addr, tls.as_ref(), shutdown).await,
        }
    } else {
        serve_listeners(server, options, tls, shutdown).await
    };
    let code = match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("calculator: {err}");
            1
        }
    };
    // Exit here rather than return: after a shutdown signal, the thread
    // blocked reading stdin would keep the runtime from dropping. The last
    // spans are sent and the log writer is flushed first.
    telemetry.shutdown().await;
    std::process::exit(code)
}

/// SIGINT (Ctrl-C) or, on Unix, SIGTERM: one shared, already installed
/// signal that any number of servers wait on.
#[derive(Clone)]
struct Shutdown(tokio::sync::watch::Receiver<bool>);

impl Shutdown {
    /// Installs the handlers now (on Unix the streams are registered when
    /// created, not when first polled) and watches them on a task.
    fn install() -> Self {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let interrupt = signal(SignalKind::interrupt());
            let terminate = signal(SignalKind::terminate());
            tokio::spawn(async move {
                let (mut interrupt, mut terminate) = match (interrupt, terminate) {
                    (Ok(interrupt), Ok(terminate)) => (interrupt, terminate),
                    _ => return std::future::pending().await,
                };
                // Through the non-blocking log: a stderr nobody reads must
                // not hold up the shutdown.
                tokio::select! {
                    _ = interrupt.recv() => tracing::warn!("calculator: interrupted; finishing running requests"),
                    _ = terminate.recv() => tracing::warn!("calculator: terminated; finishing running requests"),
                }
                let _ = stop.send(true);
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::warn!("calculator: interrupted; finishing running requests");
                let _ = stop.send(true);
            }
        });
        Shutdown(stopped)
    }

    /// Completes once the signal came.
    async fn wait(mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}
