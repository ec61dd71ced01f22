//! Metrics and traces: with the `metrics` feature every server reports
//! calls, errors, latency, calls in flight, connections and subscriptions
//! through the `metrics` facade, here to a Prometheus recorder; and every
//! call is a `tracing` span (`rpc.call`, with OpenTelemetry's JSON-RPC
//! field names) that a subscriber at debug level for `rpc_runtime` prints
//! to stderr. The example makes a few calls in process, one of them
//! failing, then prints the metrics as Prometheus would scrape them.
//!
//! ```text
//! cargo run --example metrics_tracing
//! cargo run --example metrics_tracing --no-default-features --features metrics
//! ```

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use rpc_runtime::dispatch::metrics::{describe, CALL_DURATION, DURATION_BUCKETS};
use rpc_runtime::{rpc, ErrorObject, Peer, Server};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// A calculator.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    /// Divides `dividend` by `divisor`; an error for a zero divisor.
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, ErrorObject>;
}

struct Calc;

impl Calculator for Calc {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }

    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, ErrorObject> {
        dividend.checked_div(divisor).ok_or_else(|| ErrorObject::new(-32010, "Division by zero"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // 1. The recorder, before the server is built: the server registers
    //    each method's series with the recorder installed then. Buckets
    //    make the latency a histogram (else Prometheus' exporter renders
    //    a summary); no HTTP listener here, `render()` gives the text.
    let prometheus = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(CALL_DURATION.to_owned()), DURATION_BUCKETS)?
        .install_recorder()?;
    describe(); // units and help texts

    // 2. Traces: the runtime's spans and events at debug level, nothing
    //    else; one line per call when its span closes.
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_span_events(FmtSpan::CLOSE))
        .with(Targets::new().with_target("rpc_runtime", LevelFilter::DEBUG))
        .init();

    // 3. The server, and calls to it.
    let server = Server::new(Calc.into_rpc());
    let calc = CalculatorClient::new(Peer::builder().connect(server).await?);
    println!("subtract(42, 23) -> {}", calc.subtract(42, 23).await?);
    println!("subtract(1, 2) -> {}", calc.subtract(1, 2).await?);
    println!("divide(7, 2) -> {}", calc.divide(7, 2).await?);
    match calc.divide(1, 0).await {
        Ok(quotient) => println!("divide(1, 0) -> {quotient}?"),
        Err(error) => println!("divide(1, 0) -> {error}"),
    }

    // 4. What a Prometheus scrape of `/metrics` would read.
    println!("\n{}", prometheus.render());
    Ok(())
}
