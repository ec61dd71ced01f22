//! The conformance example: every method of the JSON-RPC 2.0
//! specification's examples, plus a few that exercise the engine.
//!
//! ```text
//! cargo run --example calculator -- [--framing ndjson|content-length] [--tcp ADDR]
//! cargo run --example calculator -- --catalog
//! ```
//!
//! Serves over stdio by default; with `--tcp ADDR` it listens there instead
//! and prints `listening on ADDR` to stderr. Logs go to stderr
//! (`RPC_LOG=debug` for more). With `--catalog` it prints its OpenRPC
//! document (pretty JSON) to stdout and exits. On SIGINT or SIGTERM it
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
use rpc_runtime::{rpc, ClientError, Context, ErrorObject, Framing, RpcError, Server, INTERNAL_ERROR, INVALID_PARAMS};

/// The calculator of the JSON-RPC 2.0 specification's examples.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
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
    fn panic(&self);

    /// Answers `ms` after waiting that many milliseconds, without blocking
    /// other requests.
    async fn sleep(&self, ms: u64) -> u64;

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
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;

    /// Waits up to `ms` milliseconds, less if the request is cancelled
    /// (its connection is gone); answers how many milliseconds it waited.
    async fn wait(&self, ms: u64, cx: Context) -> u64;

    /// How many `wait` calls are running now, on every connection.
    fn waiting(&self) -> u64;
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
    Overflow { dividend: i64, divisor: i64 },
}

/// Params for a call back to the client: JSON-RPC allows only an array or
/// an object, so the schema and the decoder both reject anything else.
#[derive(Serialize, Deserialize, JsonSchema)]
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

    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
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
    catalog: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options { framing: Framing::NewlineDelimited, tcp: None, catalog: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--framing" => options.framing = args.next().ok_or("--framing needs a value")?.parse()?,
            "--tcp" => options.tcp = Some(args.next().ok_or("--tcp needs an address such as 127.0.0.1:4000")?),
            "--catalog" => options.catalog = true,
            "-h" | "--help" => {
                return Err("usage: calculator [--framing ndjson|content-length] [--tcp ADDR] | --catalog".to_owned());
            }
            other => return Err(format!("unknown argument `{other}`; try --help")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let log = examples::init_logging();
    examples::quiet_repeated_panics();
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return std::process::ExitCode::from(2);
        }
    };
    if options.catalog {
        println!("{}", CalculatorCatalog::catalog().to_json_pretty());
        return std::process::ExitCode::SUCCESS;
    }
    let server = Server::new(Calc.into_rpc()).framing(options.framing);
    // SIGINT or SIGTERM: stop reading, answer what is running, exit 0.
    let result = match options.tcp {
        None => server.serve_stdio_with_shutdown(shutdown_signal()).await,
        Some(addr) => match tokio::net::TcpListener::bind(&addr).await {
            Ok(listener) => {
                eprintln!("listening on {}", listener.local_addr().map_or(addr, |a| a.to_string()));
                server.serve_listener_with_shutdown(listener, shutdown_signal()).await
            }
            Err(err) => Err(err),
        },
    };
    let code = match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("calculator: {err}");
            1
        }
    };
    // Exit here rather than return: after a shutdown signal, the thread
    // blocked reading stdin would keep the runtime from dropping. The log
    // writer is flushed first.
    drop(log);
    std::process::exit(code)
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    // Through the non-blocking log: a stderr nobody reads must not hold
    // up the shutdown.
    tokio::select! {
        () = interrupt => tracing::warn!("calculator: interrupted; finishing running requests"),
        () = terminate => tracing::warn!("calculator: terminated; finishing running requests"),
    }
}
