//! The transports and what bounds them: HTTP/1.1 and HTTP/2, WebSocket,
//! TLS, NATS, Unix sockets, faults, memory, connections, metrics, spans
//! and shutdown.

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
pub mod tcp_reconnect;
pub mod tls;
pub mod trace_context;
#[cfg(unix)]
pub mod unix;
pub mod ws;
