//! One trace across hops: a front service that takes `subtract` over HTTP
//! and asks the calculator for it over NATS. With `--otlp URL` both
//! export their spans, and a caller's request shows up as one trace: the
//! caller's span, this service's `rpc.call` under it, the calculator's
//! `rpc.call` under that.
//!
//! ```text
//! nats-server -p 4222 &
//! cargo run --example calculator -- --nats nats://127.0.0.1:4222 --subject svc.calculator --otlp http://127.0.0.1:4318 &
//! cargo run --example traced_relay -- --http 127.0.0.1:8080 --nats nats://127.0.0.1:4222 --subject svc.calculator --otlp http://127.0.0.1:4318
//! curl -s http://127.0.0.1:8080/ -H 'content-type: application/json' \
//!   -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}'
//! ```
//!
//! Nothing here handles trace context: with rpc-runtime's `otel` feature,
//! the server makes each call's span the child of the `traceparent` it
//! came with, and the NATS client sends the current span's context in the
//! message headers. All the program does is install the exporter
//! (`examples::init_logging_and_traces`).
//!
//! It prints `listening on http://ADDR` once it serves, and exits on
//! Ctrl-C or SIGTERM after sending its last spans.

use std::time::Duration;

use rpc_runtime::transport::nats::{async_nats, NatsConnect};
use rpc_runtime::{rpc, ErrorObject, Peer, Server};

/// The calculator's `subtract`, as a client sees it.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
}

/// What this service offers over HTTP.
#[rpc]
pub trait Front {
    /// Subtracts `subtrahend` from `minuend`, by asking the calculator.
    async fn subtract(&self, minuend: i64, subtrahend: i64) -> Result<i64, ErrorObject>;
}

struct Relay {
    calculator: CalculatorClient,
}

impl Front for Relay {
    async fn subtract(&self, minuend: i64, subtrahend: i64) -> Result<i64, ErrorObject> {
        // Inside this call's span: the request published to NATS carries
        // its trace context.
        self.calculator.subtract(minuend, subtrahend).await.map_err(|err| match err.server_error() {
            Some(error) => error.clone(),
            None => ErrorObject::internal_error(format!("the calculator could not be asked: {err}")),
        })
    }
}

struct Options {
    http: String,
    nats: String,
    subject: String,
    otlp: Option<String>,
}

const USAGE: &str =
    "usage: traced_relay --http ADDR --nats URL [--subject SUBJECT] [--otlp URL] (SUBJECT: svc.calculator by default)";

fn parse_args() -> Result<Options, String> {
    let (mut http, mut nats, mut subject, mut otlp) = (None, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "--http" => &mut http,
            "--nats" => &mut nats,
            "--subject" => &mut subject,
            "--otlp" => &mut otlp,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        };
        *value = Some(args.next().ok_or_else(|| format!("{arg} needs a value; {USAGE}"))?);
    }
    Ok(Options {
        http: http.ok_or_else(|| format!("--http is required; {USAGE}"))?,
        nats: nats.ok_or_else(|| format!("--nats is required; {USAGE}"))?,
        subject: subject.unwrap_or_else(|| "svc.calculator".to_owned()),
        otlp,
    })
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
    let telemetry = examples::init_logging_and_traces(options.otlp.as_deref(), "traced_relay");
    let result = run(options).await;
    telemetry.shutdown().await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("traced_relay: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let nats = async_nats::connect(&options.nats).await?;
    let peer =
        Peer::builder().timeout(Duration::from_secs(10)).connect(NatsConnect::new(nats, &options.subject)).await?;
    let relay = Relay { calculator: CalculatorClient::new(peer) };
    let listener = tokio::net::TcpListener::bind(&options.http).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let http = rpc_runtime::transport::http::Http::default().listener(listener);
    Server::new(relay.into_rpc()).serve(http).with_graceful_shutdown(stopped()).await?;
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
