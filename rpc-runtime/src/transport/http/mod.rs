#![doc = include_str!("../../../docs/transport-http.md")]

mod client;
mod serve;
mod service;

pub use client::{HttpConnect, HttpSink, HttpSource};
#[cfg(feature = "mcp")]
pub(crate) use serve::{Endpoint, serve_listener};
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::Serving;
#[cfg(feature = "mcp")]
pub(crate) use service::own_host;
pub use service::{DEFAULT_MAX_CONCURRENT_STREAMS, Http, HttpAddrs, HttpListener, HttpService};
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::{Inner, status_response};
