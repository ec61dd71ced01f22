//! JSON-RPC 2.0 services from one Rust trait.
//!
//! Put [`rpc`] on a trait, implement it, and serve it:
//!
//! ```no_run
//! use rpc_runtime::transport::stdio::Stdio;
//! use rpc_runtime::{rpc, Server};
//!
//! /// A tiny calculator.
//! #[rpc]
//! pub trait Calculator {
//!     /// Subtracts `subtrahend` from `minuend`.
//!     fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
//! }
//!
//! struct Calc;
//! impl Calculator for Calc {
//!     fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
//!         minuend - subtrahend
//!     }
//! }
//!
//! # async fn run() -> std::io::Result<()> {
//! Server::new(Calc.into_rpc()).serve(Stdio).await
//! # }
//! ```
//!
//! The same trait yields a typed client, `CalculatorClient`, that calls
//! such a service over any connection ([`Peer`]): a child process, TCP,
//! HTTP, WebSocket, NATS or in-process. Connections are symmetric: a
//! handler that takes a [`Context`] can notify and call back its caller.
//!
//! The root holds what nearly every user writes. Everything else lives in
//! the module of its layer, as the data flows (a lower layer never uses a
//! higher one):
//!
//! - [`wire`]: [`Framing`] turns bytes into messages and back,
//!   [`ErrorObject`] is the JSON-RPC error, and the error codes;
//! - [`catalog`]: [`Catalog`], an OpenRPC document of a trait's methods,
//!   served as `rpc.discover`, and [`catalog::compat`], what changed
//!   between two of them;
//! - [`dispatch`]: the [`Engine`](dispatch::Engine) applies the JSON-RPC
//!   2.0 rules, the [`Router`] finds the method, the code `#[rpc]`
//!   generates decodes the [`Params`](dispatch::Params) and calls your
//!   method with its [`Context`]; tower layers wrap every call
//!   ([`Server::layer`]), and a [`Dialect`](dispatch::Dialect) narrows the
//!   rules for a protocol built on JSON-RPC (MCP is one);
//! - [`peer`]: one connection in both directions ([`Peer`]) over any
//!   message transport: incoming requests to the engine, incoming
//!   responses to the calls waiting for them, cancellation, timeouts and
//!   backpressure; typed clients, [`Batch`]es and [`Subscription`]s sit on
//!   it;
//! - [`transport`]: the [`Server`] serves any
//!   [`Listener`](transport::Listener) (a TCP listener, stdio, an HTTP
//!   listener, a NATS subject, one byte stream or message transport) with
//!   its connection hook ([`Server::on_connect`]), limits and graceful
//!   shutdown; [`PeerBuilder::connect`] reaches any
//!   [`Connect`](transport::Connect) target;
//! - `mcp` (feature `mcp`): any router as a Model Context Protocol server.
//!
//! Every key of `#[rpc]` and `#[derive(RpcError)]` is in [`attributes`],
//! each with a tested example.
//!
//! # Features
//!
//! The core above is always there. Transports with big dependencies are
//! cargo features, all off by default (the documentation marks what each
//! one enables):
//!
//! - `http`: the HTTP server (settings `transport::http::Http`, making a
//!   tower service that mounts in axum, or a listener of its own) and the
//!   HTTP client (`transport::http::HttpConnect`), on hyper;
//! - `http2`: HTTP/2 beside HTTP/1.1 on the HTTP server's port (h2c
//!   with prior knowledge), and in the HTTP client
//!   (`HttpConnect::http2_prior_knowledge`), on hyper's HTTP/2 (the h2
//!   crate); turns on `http`;
//! - `cors`: CORS for the HTTP server, when configured (`Http::cors`, on
//!   tower-http); turns on `http`;
//! - `ws`: WebSocket, served on the HTTP server's port by upgrade, and the
//!   WebSocket client (`transport::ws::WsConnect`), on tungstenite; turns
//!   on `http`;
//! - `nats`: serve a router on a NATS subject in a queue group
//!   (`transport::nats::NatsListener`) and call it
//!   (`transport::nats::NatsConnect`), on async-nats;
//! - `mcp`: serve a router as a Model Context Protocol server
//!   (`mcp::McpServer`), with `http` also over Streamable HTTP
//!   (`mcp::McpHttp`);
//! - `metrics`: calls, errors, latency, calls in flight, open connections
//!   and subscriptions reported through the `metrics` facade to whatever
//!   recorder the application installs (the series are listed in
//!   `dispatch::metrics`);
//! - `tls`: TLS with rustls (no OpenSSL), see below.
//!
//! # TLS
//!
//! With the `tls` feature, `transport::tls` holds a server's TLS settings
//! (`ServerTls`: a PEM certificate chain and key, optionally requiring or
//! accepting client certificates against a PEM CA bundle) and a client's
//! (`ClientTls`: the CAs it trusts, optionally its own certificate).
//! `Http::tls(server_tls)` makes the standalone HTTP listener serve HTTPS,
//! and WSS on the same port (MCP's Streamable HTTP listener too);
//! `TlsListener` serves framed TCP inside TLS. Clients: `https://` URLs
//! with `HttpConnect::tls`, `wss://` with `WsConnect::tls`, and
//! `Tcp::new(addr).tls(client_tls, "server.name")`. The handshake runs on
//! the connection's task within a timeout; a plain-text request on a TLS
//! port is not served. A client certificate's chain reaches the connection
//! hook (`ConnectionInfo::part::<PeerCertificates>()`) and handlers
//! (`Context::extension::<PeerCertificates>()`). `rustls` is re-exported
//! there for configurations of one's own.

#![forbid(unsafe_code)]
// docs.rs (see Cargo.toml) builds with `--cfg docsrs` on nightly, where
// `doc_cfg` marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod catalog;
pub mod dispatch;
mod log;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod peer;
mod spec;
pub mod transport;
pub mod wire;

// The root holds what nearly every user writes; everything else is in the
// module of its layer.
pub use catalog::{Catalog, RpcError};
pub use dispatch::context::Context;
pub use dispatch::dialect::Cancellation;
pub use dispatch::engine::Limits;
pub use dispatch::router::Router;
pub use peer::client::{Batch, Call, ClientError};
pub use peer::subscription::client::Subscription;
pub use peer::subscription::server::SubscriptionSink;
pub use peer::{Peer, PeerBuilder};
pub use rpc_macros::{rpc, RpcError};
pub use transport::server::{ConnectionInfo, Refused, Server};
pub use wire::{ErrorObject, Framing};

/// Re-exported for the HTTP transport's types: the connection hook finds
/// an HTTP request's `http::request::Parts` (headers, URI) in
/// [`ConnectionInfo::part`].
#[cfg(feature = "http")]
pub use http;

/// Re-exported so that generated code needs no direct dependency. Users
/// usually depend on `schemars = "1"` and derive `JsonSchema` directly; a
/// crate without that dependency derives through this re-export with
/// `#[schemars(crate = "rpc_runtime::schemars")]`.
pub use schemars;
/// Re-exported so that users (and generated code) need no direct dependency.
pub use serde;
/// Re-exported so that users (and generated code) need no direct dependency.
pub use serde_json;

/// Every key of `#[rpc]` and `#[derive(RpcError)]`, each with a tested
/// example.
#[doc = include_str!("attributes.md")]
pub mod attributes {}

/// The README's Rust snippets, compiled and run as doc tests
/// (`cargo test -p rpc-runtime --all-features --doc ReadmeDoctests`), so
/// that none drifts from the API. They use every feature.
#[cfg(all(
    doctest,
    feature = "http",
    feature = "http2",
    feature = "ws",
    feature = "mcp",
    feature = "nats",
    feature = "cors",
    feature = "tls",
    feature = "metrics"
))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Support for code generated by `#[rpc]`, the one place it reaches. Not a
/// public API: nothing here follows semver.
#[doc(hidden)]
pub mod __private;
