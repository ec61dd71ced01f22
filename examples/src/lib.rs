//! Runnable examples: `cargo run --example calculator`. This library holds
//! what the examples share.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The guard of the log writer: keep it alive until the program ends
/// (dropping it writes out the lines still queued).
#[cfg(feature = "logging")]
pub type LogGuard = tracing_appender::non_blocking::WorkerGuard;

/// Most log lines queued for stderr; beyond that, new lines are dropped.
#[cfg(feature = "logging")]
const QUEUED_LOG_LINES: usize = 16 * 1024;

/// Sends logs to stderr (stdout carries only protocol messages). The level
/// comes from `RPC_LOG` (`error`, `warn`, `info`, `debug`, `trace`;
/// default `warn`). From `debug` on, each call's span is written as one
/// line when it closes, with its fields (`rpc.method`,
/// `rpc.jsonrpc.request_id`, `rpc.jsonrpc.error_code`, the transport and
/// peer address, ...) and how long it took.
///
/// Lines are written by a thread of their own, through a bounded queue
/// that drops lines when full (tracing-appender's lossy non-blocking
/// writer): a stderr that is slow, or a pipe nobody reads, then costs log
/// lines instead of stalling the requests of every client.
#[cfg(feature = "logging")]
#[must_use = "dropping the guard stops the log writer"]
pub fn init_logging() -> LogGuard {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let (stderr, guard) = stderr_layer();
    tracing_subscriber::registry().with(stderr).init();
    guard
}

/// [`init_logging`] for an MCP server: the same lines on stderr, and each
/// MCP call's `tracing` events sent to the client that asked for logs
/// (`rpc_runtime::mcp::McpLogLayer`), at the level it asked for (down to
/// `debug`, whatever `RPC_LOG` says for stderr).
#[cfg(all(feature = "logging", feature = "mcp"))]
#[must_use = "dropping the guard stops the log writer"]
pub fn init_mcp_logging() -> LogGuard {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;

    let (stderr, guard) = stderr_layer();
    tracing_subscriber::registry()
        .with(stderr)
        .with(rpc_runtime::mcp::McpLogLayer::new().with_filter(tracing_subscriber::filter::LevelFilter::DEBUG))
        .init();
    guard
}

/// What [`init_logging_and_traces`] set up: the log writer, and the
/// tracer provider that exports spans. Call [`Telemetry::shutdown`] on the
/// way out, so that the last spans are sent.
#[cfg(feature = "otel")]
#[must_use = "dropping it stops the log writer; call `shutdown` to send the last spans"]
#[derive(Debug)]
pub struct Telemetry {
    log: LogGuard,
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

#[cfg(feature = "otel")]
impl Telemetry {
    /// Sends the spans not exported yet (waiting for the collector at
    /// most the exporter's timeout), then stops the log writer.
    pub async fn shutdown(self) {
        let Telemetry { log, provider } = self;
        if let Some(provider) = provider {
            // The provider's shutdown blocks until the batch is sent by a
            // task of this runtime: off the runtime's threads.
            let done = tokio::task::spawn_blocking(move || provider.shutdown()).await;
            if let Ok(Err(err)) = done {
                tracing::warn!(error = %err, "sending the last spans failed");
            }
        }
        drop(log);
    }
}

/// [`init_logging`], and with `otlp` (an OpenTelemetry collector's
/// OTLP/HTTP address, such as `http://127.0.0.1:4318`; `/v1/traces` is
/// added unless it is there) every call's span exported there too, as
/// `service`'s. With rpc-runtime's `otel` feature a call's span continues
/// its caller's trace (W3C `traceparent`), and the calls it makes carry
/// it on, so that one request through several services is one trace.
///
/// Spans go in batches (`OTEL_BSP_SCHEDULE_DELAY`, default 5 s), on a
/// task of the tokio runtime this is called in; stderr's lines are as
/// [`init_logging`] writes them. An exporter that cannot be made (a URL
/// that is not one) is a usage error: the program says so and exits 2.
#[cfg(feature = "otel")]
pub fn init_logging_and_traces(otlp: Option<&str>, service: &'static str) -> Telemetry {
    match telemetry(otlp, service) {
        Ok(telemetry) => telemetry,
        Err(message) => {
            eprintln!("{service}: {message}");
            std::process::exit(2);
        }
    }
}

#[cfg(feature = "otel")]
fn telemetry(otlp: Option<&str>, service: &'static str) -> Result<Telemetry, String> {
    use opentelemetry_otlp::WithExportConfig;
    use rpc_runtime::otel::opentelemetry::trace::TracerProvider;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;

    let Some(url) = otlp else {
        return Ok(Telemetry { log: init_logging(), provider: None });
    };
    let endpoint = match url.ends_with("/v1/traces") {
        true => url.to_owned(),
        false => format!("{}/v1/traces", url.trim_end_matches('/')),
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .build()
        .map_err(|err| format!("--otlp {url}: {err}"))?;
    let batches = opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
        exporter,
        opentelemetry_sdk::runtime::Tokio,
    )
    .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(batches)
        .with_resource(opentelemetry_sdk::Resource::builder().with_service_name(service).build())
        .build();
    let (stderr, log) = stderr_layer();
    // Calls' spans are at `debug`: exported whatever stderr's level.
    let traces = rpc_runtime::otel::tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(service))
        .with_filter(tracing_subscriber::filter::LevelFilter::DEBUG);
    tracing_subscriber::registry().with(stderr).with(traces).init();
    Ok(Telemetry { log, provider: Some(provider) })
}

/// stderr's lines as [`init_logging`] describes them: at `RPC_LOG`'s
/// level, each span's when it closes, through the lossy writer.
#[cfg(feature = "logging")]
fn stderr_layer<S>() -> (impl tracing_subscriber::Layer<S> + Send + Sync, LogGuard)
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer;

    let (writer, guard) = stderr_writer();
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_filter(stderr_level());
    (layer, guard)
}

/// The level of stderr's lines: `RPC_LOG`, default `warn`.
#[cfg(feature = "logging")]
fn stderr_level() -> tracing_subscriber::filter::LevelFilter {
    std::env::var("RPC_LOG")
        .ok()
        .and_then(|level| level.parse().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN)
}

/// stderr behind a bounded queue that drops lines when full.
#[cfg(feature = "logging")]
fn stderr_writer() -> (tracing_appender::non_blocking::NonBlocking, LogGuard) {
    tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUED_LOG_LINES)
        .finish(std::io::stderr())
}

/// Keeps panics from flooding stderr, and from blocking on it: every
/// panic report goes through the non-blocking log (at error level), never
/// straight to stderr, which would block the panicking thread for good
/// once stderr is a pipe nobody reads. The first panic at each place in
/// the code is reported as Rust reports it (thread, place, message, and a
/// backtrace when `RUST_BACKTRACE` asks for one); the ones after it are
/// counted, and logged only at the 2nd, 4th, 8th, ... occurrence. A client
/// that calls a panicking method a million times thus adds about 20
/// lines, not a million (the runtime's own "method handler panicked" line
/// is throttled the same way).
///
/// Call it after [`init_logging`].
pub fn quiet_repeated_panics() {
    static COUNTS: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);
    std::panic::set_hook(Box::new(move |info| {
        let place = info.location().map_or_else(|| "an unknown place".to_owned(), ToString::to_string);
        let count = {
            let mut counts = COUNTS.lock().unwrap_or_else(PoisonError::into_inner);
            let counts = counts.get_or_insert_with(HashMap::new);
            // Places are spots in this program's code: few, and fixed.
            let count = counts.entry(place.clone()).or_insert(0);
            *count += 1;
            *count
        };
        if count == 1 {
            let thread = std::thread::current();
            let thread = thread.name().unwrap_or("<unnamed>");
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("Box<dyn Any>");
            let backtrace = std::backtrace::Backtrace::capture();
            if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
                tracing::error!("thread '{thread}' panicked at {place}:\n{message}\nstack backtrace:\n{backtrace}");
            } else {
                tracing::error!("thread '{thread}' panicked at {place}:\n{message}");
            }
        } else if count.is_power_of_two() {
            tracing::error!(place, panics = count, "panicked again (logged at every power of two)");
        }
    }));
}
