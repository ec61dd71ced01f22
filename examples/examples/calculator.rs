//! The conformance example: every method of the JSON-RPC 2.0
//! specification's examples, plus a few that exercise the engine.
//!
//! ```text
//! cargo run --example calculator -- [--framing ndjson|content-length] [--tcp ADDR]
//! cargo run --example calculator -- --catalog
//! cargo run --example calculator -- --nats URL --subject SUBJECT [--queue GROUP]
//! ```
//!
//! Serves over stdio by default; with `--tcp ADDR` it listens there instead
//! and prints `listening on ADDR` to stderr. With `--nats URL --subject
//! SUBJECT` it connects to that NATS server and serves the subject in queue
//! group GROUP (default: the subject), so several of them share the calls;
//! it prints `serving NATS subject SUBJECT in queue group GROUP` to stderr
//! once subscribed, and on SIGTERM or Ctrl-C it leaves the queue group,
//! answers what it received and exits. Logs go to stderr
//! (`RPC_LOG=debug` for more). With `--catalog` it prints its OpenRPC
//! document (pretty JSON) to stdout and exits.

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
    nats: Option<String>,
    subject: Option<String>,
    queue: Option<String>,
}

const USAGE: &str = "usage: calculator [--framing ndjson|content-length] [--tcp ADDR] | --catalog | --nats URL --subject SUBJECT [--queue GROUP]";

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        framing: Framing::NewlineDelimited,
        tcp: None,
        catalog: false,
        nats: None,
        subject: None,
        queue: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--framing" => options.framing = args.next().ok_or("--framing needs a value")?.parse()?,
            "--tcp" => options.tcp = Some(args.next().ok_or("--tcp needs an address such as 127.0.0.1:4000")?),
            "--catalog" => options.catalog = true,
            "--nats" => options.nats = Some(args.next().ok_or("--nats needs a URL such as nats://127.0.0.1:4222")?),
            "--subject" => {
                options.subject = Some(args.next().ok_or("--subject needs a NATS subject such as svc.calculator")?)
            }
            "--queue" => options.queue = Some(args.next().ok_or("--queue needs a queue group name")?),
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
    Ok(options)
}

/// Serves `subject` on the NATS server at `url` until SIGTERM or Ctrl-C,
/// then drains.
async fn serve_nats(server: Server, url: &str, subject: String, queue: Option<String>) -> std::io::Result<()> {
    let client = rpc_runtime::nats::async_nats::connect(url).await.map_err(std::io::Error::other)?;
    let queue = queue.unwrap_or_else(|| subject.clone());
    eprintln!("serving NATS subject {subject} in queue group {queue}");
    server.serve_nats_with_shutdown(client, subject, queue, stop_signal()).await
}

/// Completes on SIGTERM (a rolling restart) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    examples::init_logging();
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
    let result = match (options.tcp, options.nats, options.subject) {
        (_, Some(url), Some(subject)) => serve_nats(server, &url, subject, options.queue).await,
        (None, _, _) => server.serve_stdio().await,
        (Some(addr), _, _) => match tokio::net::TcpListener::bind(&addr).await {
            Ok(listener) => {
                eprintln!("listening on {}", listener.local_addr().map_or(addr, |a| a.to_string()));
                server.serve_listener(listener).await
            }
            Err(err) => Err(err),
        },
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("calculator: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
