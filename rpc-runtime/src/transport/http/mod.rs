#![doc = include_str!("../../../docs/transport-http.md")]

mod client;
mod serve;
mod service;

pub use client::{HttpConnect, HttpSink, HttpSource};
#[cfg(feature = "mcp")]
pub(crate) use serve::{serve_listener, Endpoint};
#[cfg(feature = "mcp")]
pub(crate) use service::own_host;
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::Serving;
#[cfg(any(feature = "ws", feature = "mcp"))]
pub(crate) use service::{status_response, Inner};
pub use service::{Http, HttpAddrs, HttpListener, HttpService, DEFAULT_MAX_CONCURRENT_STREAMS};
