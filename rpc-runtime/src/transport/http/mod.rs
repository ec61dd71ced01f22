#![doc = include_str!("../../../docs/transport-http.md")]

// One job per file: the settings (`config`), the request pipeline
// (`service`), the Host and Origin checks (`origin`), reading a body
// (`body`), the error answers (`responses`), the standalone server
// (`serve`) and the client (`client`).
mod body;
mod client;
mod config;
#[cfg(feature = "oauth")]
pub mod oauth;
mod origin;
mod responses;
mod serve;
mod service;

pub use client::{HttpConnect, HttpSink, HttpSource};
pub use config::{DEFAULT_MAX_CONCURRENT_STREAMS, Http};
#[cfg(feature = "mcp")]
pub(crate) use origin::own_host;
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use responses::status_response;
pub use serve::HttpListener;
#[cfg(feature = "mcp")]
pub(crate) use serve::{Endpoint, serve_listener};
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::ConnectionSlot;
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::Inner;
pub use service::{HttpAddrs, HttpService};
