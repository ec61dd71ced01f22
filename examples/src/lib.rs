//! Runnable examples: `cargo run --example calculator`. This library holds
//! what the examples share.

/// Sends logs to stderr (stdout carries only protocol messages). The level
/// comes from `RPC_LOG` (`error`, `warn`, `info`, `debug`, `trace`;
/// default `warn`).
pub fn init_logging() {
    let level = std::env::var("RPC_LOG")
        .ok()
        .and_then(|level| level.parse().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_max_level(level).init();
}
