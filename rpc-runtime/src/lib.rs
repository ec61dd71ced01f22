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
mod dispatch;
mod log;
#[cfg(feature = "mcp")]
pub mod mcp;
mod peer;
mod spec;
pub mod transport;
mod wire;

pub use catalog::{
    Catalog, Components, ContentDescriptor, Draft, ErrorDescriptor, ErrorInfo, Info, MethodInfo, MethodObject, OpenRpc,
    ParamInfo, RpcError, SchemaFn, ServiceInfo, SubscriptionInfo, SubscriptionObject, ToolInfo, DISCOVER_METHOD,
    OPENRPC_VERSION,
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

/// Support for code generated by `#[rpc]`. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::catalog::{
        no_errors, result_schema_of, schema_of, unknown_schema_of, Catalog, ErrorInfo, ErrorsOf, MethodInfo, ParamInfo,
        ResultSchema, RpcError, SchemaOf, ServiceInfo, ToolInfo, ViaJsonSchema, ViaNoJsonSchema, ViaNoRpcError,
        ViaRpcError,
    };
    pub use crate::dispatch::context::Context;
    pub use crate::dispatch::params::Params;
    pub use crate::dispatch::router::{IntoMethodResult, MethodFuture, MethodOutcome, Router};
    pub use crate::peer::client::support::{
        decoder, encode_param, encode_params, param, AppError, ClientCore, ParamMode, ResultTypes, ViaFromErrorObject,
        ViaServerError,
    };
    pub use crate::peer::client::FromErrorObject;
    pub use crate::peer::client::{Batch, BatchReply, Call, ClientError, Notification};
    pub use crate::peer::subscription::client::Subscribe;
    pub use crate::peer::subscription::server::{
        pending_subscription, register_unsubscribe, subscription, subscription_end, PendingSink, Sink,
        UNSUBSCRIBE_PARAMS,
    };
    pub use crate::peer::Peer;
    pub use crate::spec::{MethodSpec, ParamSpec, ParamStructure};
    pub use crate::wire::ErrorObject;
    pub use serde::de::DeserializeOwned;
    pub use serde::Serialize;
    pub use serde_json;

    use std::future::Future;

    use crate::catalog::SchemaFn;

    /// A [`MethodSpec`], written positionally (keeps the expansion short).
    pub const fn spec(
        name: &'static str,
        params: &'static [ParamSpec],
        structure: ParamStructure,
        allow_extra: bool,
        whole: bool,
        notification: bool,
    ) -> MethodSpec {
        MethodSpec { name, params, structure, allow_extra, whole, notification, requires: None }
    }

    /// A [`ParamSpec`], written positionally.
    pub const fn param_spec(name: &'static str, ty: &'static str, optional: bool) -> ParamSpec {
        ParamSpec { name, ty, optional }
    }

    /// A [`MethodInfo`], written positionally.
    #[allow(clippy::too_many_arguments)]
    pub const fn method_info(
        spec: &'static MethodSpec,
        summary: Option<&'static str>,
        description: Option<&'static str>,
        params: &'static [ParamInfo],
        result: Option<SchemaFn>,
        deprecated: bool,
        errors: &'static [ErrorInfo],
        error_type: fn() -> &'static [ErrorInfo],
    ) -> MethodInfo {
        MethodInfo {
            spec,
            summary,
            description,
            params,
            result,
            deprecated,
            errors,
            error_type,
            alias_of: None,
            tool: ToolInfo::DEFAULT,
            subscription: None,
        }
    }

    /// `method` with what `#[rpc(mcp(...))]` says about its MCP tool.
    pub const fn with_tool(method: MethodInfo, tool: ToolInfo) -> MethodInfo {
        MethodInfo { tool, ..method }
    }

    /// The spec of an unsubscribe method: one param, the subscription id.
    pub const fn unsubscribe_spec(name: &'static str) -> MethodSpec {
        spec(name, &UNSUBSCRIBE_PARAMS, ParamStructure::Either, false, false, false)
    }

    /// The [`MethodInfo`] of a subscribe method: `method`'s, with its items'
    /// schema, their notification method and the unsubscribe method.
    pub const fn subscription_info(
        method: MethodInfo,
        item: SchemaFn,
        notification: &'static str,
        unsubscribe: &'static str,
    ) -> MethodInfo {
        let subscription = crate::catalog::SubscriptionInfo { item, notification, unsubscribe };
        MethodInfo { subscription: Some(subscription), ..method }
    }

    /// The [`MethodInfo`] of unsubscribe method `spec`, which ends the
    /// subscriptions of the methods named in `summary`.
    pub const fn unsubscribe_info(spec: &'static MethodSpec, summary: &'static str) -> MethodInfo {
        const PARAMS: &[ParamInfo] = &[ParamInfo {
            description: Some("The id the subscribe call answered with."),
            schema: crate::catalog::schema_of::<u64>,
        }];
        method_info(spec, Some(summary), None, PARAMS, Some(crate::catalog::schema_of::<bool>), false, &[], no_errors)
    }

    /// The [`MethodInfo`] of an alias: `method`'s, under the alias's spec,
    /// pointing to `method`'s name.
    pub const fn alias_info(spec: &'static MethodSpec, method: MethodInfo) -> MethodInfo {
        MethodInfo { spec, alias_of: Some(method.spec.name), ..method }
    }

    /// The data of an error object, decoded as `T` (`null` when absent).
    pub fn error_data<T: DeserializeOwned>(error: &ErrorObject) -> Option<T> {
        let text = error.data().map_or("null", |raw| raw.get());
        serde_json::from_str(text).ok()
    }

    /// Member `name` of an error object's data, decoded as `T` (`null`
    /// when absent, so that an `Option` field may be left out).
    pub fn error_field<T: DeserializeOwned>(error: &ErrorObject, name: &str) -> Option<T> {
        let data: serde_json::Map<String, serde_json::Value> = error_data(error)?;
        T::deserialize(data.get(name).unwrap_or(&serde_json::Value::Null)).ok()
    }

    /// A [`ParamInfo`], written positionally.
    pub const fn param_info(description: Option<&'static str>, schema: SchemaFn) -> ParamInfo {
        ParamInfo { description, schema }
    }

    /// The outcome of a plain method returning `T`.
    #[inline]
    pub fn ready<T: Serialize>(value: T) -> Result<MethodOutcome, ErrorObject> {
        Ok(MethodOutcome::Ready(crate::dispatch::router::encode(&value)))
    }

    /// The outcome of a plain method returning `Result<T, E>`.
    #[inline]
    pub fn ready_result<R: IntoMethodResult>(value: R) -> Result<MethodOutcome, ErrorObject> {
        Ok(MethodOutcome::Ready(value.into_method_result()))
    }

    /// The outcome of an `async` method returning `T`.
    #[inline]
    pub fn pending<F, T>(future: F) -> Result<MethodOutcome, ErrorObject>
    where
        F: Future<Output = T> + Send + 'static,
        T: Serialize,
    {
        Ok(MethodOutcome::Pending(Box::pin(async move { crate::dispatch::router::encode(&future.await) })))
    }

    /// The outcome of an `async` method returning `Result<T, E>`.
    #[inline]
    pub fn pending_result<F, R>(future: F) -> Result<MethodOutcome, ErrorObject>
    where
        F: Future<Output = R> + Send + 'static,
        R: IntoMethodResult,
    {
        Ok(MethodOutcome::Pending(Box::pin(async move { future.await.into_method_result() })))
    }

    /// Registers a generated method; names within one trait are unique
    /// (checked at compile time), so this cannot fail.
    pub fn register<F>(router: &mut Router, spec: &'static MethodSpec, handler: F)
    where
        F: Fn(Params<'_>, &Context) -> Result<MethodOutcome, ErrorObject> + Send + Sync + 'static,
    {
        if let Err(err) = router.register(spec, handler) {
            unreachable!("#[rpc] checked method names at compile time: {err}");
        }
    }

    /// What a direct handler returns: `None` when the result was written
    /// into the response buffer, or the future of an `async` method.
    pub type Direct = Result<Option<MethodFuture>, ErrorObject>;

    /// Writes the result of a plain method returning `T` into `out`.
    #[inline]
    pub fn ready_into<T: Serialize>(out: &mut Vec<u8>, value: T) -> Direct {
        crate::dispatch::router::encode_into(out, &value).map(|()| None)
    }

    /// Writes the result of a plain method returning `Result<T, E>` into `out`.
    #[inline]
    pub fn ready_result_into<R: IntoMethodResult>(out: &mut Vec<u8>, value: R) -> Direct {
        value.encode_into(out).map(|()| None)
    }

    /// The future of an `async` method returning `T`, for a direct handler.
    #[inline]
    pub fn pending_into<F, T>(future: F) -> Direct
    where
        F: Future<Output = T> + Send + 'static,
        T: Serialize,
    {
        Ok(Some(Box::pin(async move { crate::dispatch::router::encode(&future.await) })))
    }

    /// The future of an `async` method returning `Result<T, E>`, for a
    /// direct handler.
    #[inline]
    pub fn pending_result_into<F, R>(future: F) -> Direct
    where
        F: Future<Output = R> + Send + 'static,
        R: IntoMethodResult,
    {
        Ok(Some(Box::pin(async move { future.await.into_method_result() })))
    }

    /// A generated method: a plain function of the service, so that the
    /// only generic code per method is its own body.
    pub type MethodFn<S> = fn(&std::sync::Arc<S>, Params<'_>, &Context, &mut Vec<u8>) -> Direct;

    /// Registers a generated method under its older names too
    /// (`#[rpc(alias = "...")]`); cannot fail (see [`register`]).
    pub fn register_aliased<S: Send + Sync + 'static>(
        router: &mut Router,
        spec: &'static MethodSpec,
        aliases: &'static [MethodSpec],
        service: &std::sync::Arc<S>,
        handler: MethodFn<S>,
    ) {
        register_method(router, spec, service, handler);
        for alias in aliases {
            register_method(router, alias, service, handler);
        }
    }

    /// Registers a generated method of `service`; the wrapper around
    /// `handler` is one type per service, not one per method. Cannot fail
    /// (see [`register`]).
    pub fn register_method<S: Send + Sync + 'static>(
        router: &mut Router,
        spec: &'static MethodSpec,
        service: &std::sync::Arc<S>,
        handler: MethodFn<S>,
    ) {
        let service = std::sync::Arc::clone(service);
        register_direct(router, spec, move |params, cx, out| handler(&service, params, cx, out));
    }

    /// Registers a generated method whose ready results are encoded straight
    /// into the response buffer; cannot fail (see [`register`]).
    pub fn register_direct<F>(router: &mut Router, spec: &'static MethodSpec, handler: F)
    where
        F: Fn(Params<'_>, &Context, &mut Vec<u8>) -> Direct + Send + Sync + 'static,
    {
        if let Err(err) = router.register_direct(spec, handler) {
            unreachable!("#[rpc] checked method names at compile time: {err}");
        }
    }
}
