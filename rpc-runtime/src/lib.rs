//! JSON-RPC 2.0 services from one Rust trait.
//!
//! Put [`rpc`] on a trait, implement it, and serve it:
//!
//! ```no_run
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
//! Server::new(Calc.into_rpc()).serve(rpc_runtime::transport::stdio::Stdio).await
//! # }
//! ```
//!
//! The same trait yields a typed client, `CalculatorClient`, that calls
//! such a service over any connection ([`Peer`]): a child process, TCP, or
//! in-process. Connections are symmetric: a handler that takes a
//! [`Context`] can notify and call back its caller.
//!
//! The crate is organised as the data flows, one layer per folder, and a
//! lower layer never uses a higher one:
//!
//! - the wire: [`Framing`] turns bytes into messages and back, and
//!   [`ErrorObject`] is the JSON-RPC error; [`MethodSpec`] describes a
//!   method for both dispatch and the catalog;
//! - the catalog: [`Catalog`], an OpenRPC document of a trait's methods,
//!   served as `rpc.discover`;
//! - dispatch: the [`Engine`] applies the JSON-RPC 2.0 rules, the [`Router`]
//!   finds the method, the code `#[rpc]` generates decodes the [`Params`]
//!   and calls your method with its [`Context`];
//! - the peer: one connection in both directions ([`Peer`]) over any
//!   message transport ([`MessageSource`] and [`MessageSink`]): incoming
//!   requests to the engine, incoming responses to the calls waiting for
//!   them, cancellation, timeouts and backpressure; typed clients and
//!   [`Batch`]es sit on it;
//! - transports: byte streams with a framing (stdio, TCP, child processes,
//!   any `AsyncRead`/`AsyncWrite`), the in-memory pair ([`memory_pair`]),
//!   and the [`Server`] with its connection hook ([`Server::on_connect`]),
//!   connection limit, idle timeout and graceful shutdown.
//!
//! # Features
//!
//! The core above is always there. Transports with big dependencies are
//! cargo features, all off by default (the documentation marks what each
//! one enables):
//!
//! - `http`: the HTTP server (settings `transport::http::Http`, making
//!   `HttpService`, a tower service that mounts in axum, or an
//!   `HttpListener` of its own) and the HTTP client
//!   (`HttpConnect`), on hyper;
//! - `cors`: CORS for the HTTP server, when configured (`Http::cors`,
//!   on tower-http); turns on `http`;
//! - `ws`: WebSocket, served on the HTTP server's port by upgrade, and the
//!   WebSocket client (`WsConnect`), on tungstenite; turns on
//!   `http`;
//! - `nats`: serve a router on a NATS subject in a queue group
//!   (`nats::NatsListener`) and call it (`nats::NatsConnect`), on
//!   async-nats;
//! - `mcp`: serve a router as a Model Context Protocol server (`McpServer`),
//!   with `http` also over Streamable HTTP (`mcp::McpHttp`).

#![forbid(unsafe_code)]
// docs.rs (see Cargo.toml) builds with `--cfg docsrs` on nightly, where
// `doc_cfg` marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod catalog;
pub mod dispatch;
mod log;
#[cfg(feature = "mcp")]
pub mod mcp;
mod peer;
mod spec;
pub mod transport;
mod wire;

pub use catalog::{
    Catalog, Components, ContentDescriptor, Draft, ErrorDescriptor, ErrorInfo, Info, MethodInfo, MethodObject, OpenRpc,
    ParamInfo, RpcError, SchemaFn, ServiceInfo, StandaloneSchema, SubscriptionInfo, SubscriptionObject, ToolInfo,
    DISCOVER_METHOD, OPENRPC_VERSION,
};
pub use dispatch::context::Context;
pub use dispatch::engine::{Engine, Limits, PendingResponse};
pub use dispatch::middleware::{MethodCall, Middleware, Next};
pub use dispatch::params::Params;
pub use dispatch::permissions::Permissions;
pub use dispatch::router::{
    encode, DuplicateMethod, IntoErrorObject, IntoMethodResult, MethodFuture, MethodOutcome, MethodResult, Router,
};
#[cfg(all(feature = "mcp", feature = "http"))]
pub use mcp::McpHttpService;
#[cfg(feature = "mcp")]
pub use mcp::McpServer;
pub use peer::client::{Batch, BatchReply, Call, ClientError, FromErrorObject, Notification};
pub use peer::subscription::client::{Subscribe, Subscription};
pub use peer::subscription::server::{IntoSubscriptionEnd, PendingSink, Sink, SinkError};
pub use peer::{Cancellation, MessageSink, MessageSource, Peer, PeerBuilder, Received};
pub use rpc_macros::{rpc, RpcError};
pub use spec::{MethodSpec, ParamSpec, ParamStructure, Requirement};
pub use transport::hook::HookFuture;
#[cfg(feature = "http")]
pub use transport::http::{HttpAddrs, HttpConnect, HttpService, HttpSink, HttpSource};
pub use transport::memory::{memory_pair, MemorySink, MemorySource};
pub use transport::server::{ConnectionInfo, Refused, Server, DEFAULT_MAX_CONNECTIONS};
pub use transport::stream::StreamSink;
#[cfg(feature = "ws")]
pub use transport::ws::{Reconnect, WsConnect, WsSink, WsSource};
pub use wire::{
    ErrorObject, Frame, FrameReader, Framing, RpcResult, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    LIMIT_EXCEEDED, METHOD_NOT_FOUND, PARSE_ERROR, PERMISSION_DENIED, REQUEST_CANCELLED, SERVER_OVERLOADED,
    SUBSCRIPTION_LAGGED, TRANSPORT_ERROR,
};

/// Re-exported for the HTTP transport's types: the connection hook finds
/// an HTTP request's `http::request::Parts` (headers, URI) in
/// [`ConnectionInfo::part`].
#[cfg(feature = "http")]
pub use http;

/// The NATS transport (feature `nats`): a [`NatsListener`](nats::NatsListener)
/// serves a router on a subject in a queue group; a
/// [`NatsConnect`](nats::NatsConnect) calls it. The error codes its calls may fail with are here, and the
/// `async-nats` crate it runs on, re-exported so that the versions agree.
#[cfg(feature = "nats")]
pub mod nats {
    pub use crate::transport::nats::{NatsConnect, NatsListener, NO_RESPONDERS, REFUSED};
    /// The NATS client the transport runs on (connect with
    /// `async_nats::connect`; hooks read `async_nats::HeaderMap`).
    pub use async_nats;
}

/// Versioning: what changed between two OpenRPC documents, judged for a
/// caller of the old version talking to the new server.
///
/// [`compare`](crate::compat::compare) takes two documents (this crate's, or any OpenRPC 1.x
/// document in the JSON Schema subset this crate emits) and returns a
/// [`Report`](crate::compat::Report): one [`Change`](crate::compat::Change) per difference, each [`Verdict::Breaking`](crate::compat::Verdict::Breaking),
/// [`Verdict::Compatible`](crate::compat::Verdict::Compatible) or [`Verdict::Info`](crate::compat::Verdict::Info), naming the method and
/// where relevant the param and the place in its schema, with a reason.
///
/// The rules follow how this crate's server decodes params: by position
/// (an array, in declaration order, trailing optional params may be left
/// out, surplus ones refused) and by name (an object, unknown names
/// refused), unless the method allows extra params
/// (`"x-allow-extra-params": true`). Schemas are compared by direction: a
/// param's schema may accept more values than before, a result's (and a
/// subscription item's) may produce fewer. Names of components are not on
/// the wire: `$ref`s are followed, and a component renamed with the same
/// shape is no change.
///
/// For a test that keeps the catalog in the repository and fails on a
/// breaking change, see [`assert_compatible`](crate::compat::assert_compatible).
///
/// ```
/// use rpc_runtime::compat::{compare, Verdict};
/// use rpc_runtime::serde_json::json;
///
/// let old = json!({"openrpc": "1.3.2", "info": {"title": "t", "version": "1"}, "methods": [
///     {"name": "add", "params": [{"name": "a", "required": true, "schema": {"type": "integer"}}],
///      "result": {"name": "result", "schema": {"type": "integer"}}}
/// ]});
/// let mut new = old.clone();
/// new["methods"][0]["params"][0]["schema"] = json!({"type": "string"});
///
/// let report = compare(&old, &new).unwrap();
/// assert!(report.is_breaking());
/// let change = &report.changes()[0];
/// assert_eq!((change.verdict, change.method.as_str(), change.param.as_deref()), (Verdict::Breaking, "add", Some("a")));
/// ```
pub mod compat {
    pub use crate::catalog::compat::*;
}

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

/// Support for code generated by `#[rpc]`, the one place it reaches. Not a
/// public API: nothing here follows semver.
#[doc(hidden)]
pub mod __private;
