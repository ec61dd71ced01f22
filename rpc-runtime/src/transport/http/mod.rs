//! HTTP: the settings ([`Http`]), the server as a `tower::Service`
//! ([`HttpService`], mountable in axum next to other routes), a standalone
//! listener ([`HttpListener`], for [`Server::serve`](crate::Server::serve)), and a
//! request/response client that a [`Peer`](crate::Peer) (and so every
//! generated client) runs over.
//!
//! HTTP is request/response only: each `POST` body is one message (or
//! batch) for the engine, with no calls back to the client (use the
//! WebSocket transport for that; with the `ws` feature the same service
//! accepts WebSocket upgrades).

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
