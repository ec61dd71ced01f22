//! Integration tests: transports (one test binary per area, so that
//! `cargo test --workspace` links a handful of binaries).

#[path = "../client_support/mod.rs"]
mod client_support;
#[path = "../common/mod.rs"]
mod common;
#[path = "../measure/mod.rs"]
mod measure;
#[path = "../web_support/mod.rs"]
mod web_support;

pub mod call_spans;
pub mod client_errors;
pub mod client_transports;
pub mod faults;
pub mod http;
pub mod http2;
pub mod http_wire;
pub mod load;
pub mod log_flood;
pub mod memory;
pub mod metrics;
pub mod nats;
pub mod oauth;
pub mod oauth_jwt;
pub mod server_connections;
pub mod shutdown;
pub mod tls;
pub mod ws;
