//! The `tracing` span of each call, named with OpenTelemetry's semantic
//! conventions for JSON-RPC, and of each batch.
//!
//! A call's span (`rpc.call`, at `DEBUG`) carries:
//!
//! - `rpc.system = "jsonrpc"`, `rpc.method`;
//! - `rpc.jsonrpc.request_id`: the id as text (a string id unquoted,
//!   `null` as the empty string), absent for a notification;
//! - `rpc.jsonrpc.error_code` and `rpc.jsonrpc.error_message`, recorded
//!   when the call fails;
//! - `network.transport`: the transport's name as the connection hook
//!   sees it ([`ConnectionInfo::transport`](crate::transport::hook::ConnectionInfo::transport):
//!   `tcp`, `http`, `ws`, `stdio`, `nats`, ...), and `network.peer.address`
//!   and `network.peer.port` when the transport has a remote address.
//!
//! A batch is one span (`rpc.batch`, with the same system, transport and
//! peer fields and `rpc.jsonrpc.batch_len`) with each call's span inside.
//!
//! With the `otel` feature, a call's span is the child of the caller's
//! span where the call carried W3C Trace Context (see [`crate::otel`]):
//! MCP's `params._meta` first, then what the transport carried. Its span
//! also has `otel.kind = "server"` and `otel.name` = the method, which
//! tracing-opentelemetry makes the exported span's kind and name, and
//! `otel.status_code = "ERROR"` when the call fails. An outgoing call of a
//! [`Peer`](crate::Peer) is then a span too (`rpc.client`, at `DEBUG`, of
//! kind client, target `rpc_runtime::peer`), whose context its request
//! carries.
//!
//! With no subscriber interested, making a span is the callsite's level
//! and interest check and an empty [`Span`]: no field is computed, nothing
//! is allocated; futures are wrapped only when their span is enabled.

use std::borrow::Cow;

use serde_json::value::RawValue;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::dispatch::context::Context;
use crate::dispatch::pending::CatchUnwind;
use crate::dispatch::router::{MethodFuture, panicked};
use crate::wire::error::ErrorObject;

/// The span of one call of `method`, whose id is `id` (raw JSON; `None`
/// for a notification) and params `params`, inside the current span (or,
/// with `otel`, the caller's).
#[inline]
pub(crate) fn call(method: &str, id: Option<&str>, params: Option<&RawValue>, cx: &Context) -> Span {
    let span = new_call(method, id, cx);
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        adopt_caller(&span, params, cx);
    }
    #[cfg(not(feature = "otel"))]
    let _ = params;
    span
}

/// Makes `span` the child of the caller's span, where the call carried it.
#[cfg(feature = "otel")]
#[inline(never)]
fn adopt_caller(span: &Span, params: Option<&RawValue>, cx: &Context) {
    match params.and_then(crate::otel::TraceContext::from_meta) {
        Some(parent) => parent.adopt(span),
        // What the transport carried, unless the call is already inside a
        // span (its batch's, which took it).
        None => {
            if let Some(parent) = cx.trace.as_ref().filter(|_| tracing::Span::current().is_none()) {
                parent.adopt(span);
            }
        }
    }
}

/// `rpc.call`'s span with its fields, and `otel` (more fields) after them.
macro_rules! call_span {
    ($method:expr, $id:expr, $cx:expr, $($otel:tt)*) => {{
        let (method, id, cx): (&str, Option<&str>, &Context) = ($method, $id, $cx);
        // The fields are computed only when the span is enabled (the peer's
        // address too: read before the macro, it was copied on every call).
        tracing::debug_span!(
            "rpc.call",
            rpc.system = "jsonrpc",
            rpc.method = method,
            rpc.jsonrpc.request_id = id.map(request_id).as_deref(),
            rpc.jsonrpc.error_code = Empty,
            rpc.jsonrpc.error_message = Empty,
            network.transport = cx.transport,
            network.peer.address = cx.peer_addr.map(|addr| tracing::field::display(addr.ip())),
            network.peer.port = cx.peer_addr.map(|addr| addr.port()),
            $($otel)*
        )
    }};
}

#[inline]
fn new_call(method: &str, id: Option<&str>, cx: &Context) -> Span {
    // With `otel`, a server span named after the method, for
    // tracing-opentelemetry; without, the fields as they always were.
    #[cfg(feature = "otel")]
    return call_span!(method, id, cx, otel.kind = "server", otel.name = method, otel.status_code = Empty);
    #[cfg(not(feature = "otel"))]
    call_span!(method, id, cx,)
}

/// Whether a call's span may be enabled: `false` when no subscriber takes
/// `DEBUG`, and [`call`] would make an empty span.
#[cfg_attr(feature = "metrics", allow(dead_code))]
#[inline]
pub(crate) fn enabled() -> bool {
    tracing::level_enabled!(tracing::Level::DEBUG)
}

/// The span of a batch of `len` entries, inside the current span.
#[inline]
pub(crate) fn batch(len: usize, cx: &Context) -> Span {
    let span = tracing::debug_span!(
        "rpc.batch",
        rpc.system = "jsonrpc",
        rpc.jsonrpc.batch_len = len,
        network.transport = cx.transport,
        network.peer.address = cx.peer_addr.map(|addr| tracing::field::display(addr.ip())),
        network.peer.port = cx.peer_addr.map(|addr| addr.port()),
    );
    // The batch continues the caller's trace; its calls are inside it.
    #[cfg(feature = "otel")]
    if let Some(parent) = cx.trace.as_ref().filter(|_| !span.is_disabled()) {
        parent.adopt(&span);
    }
    span
}

/// Records on `span` that its call failed with `error`.
#[inline]
pub(crate) fn failed(span: &Span, error: &ErrorObject) {
    if !span.is_disabled() {
        record_error(span, error);
    }
}

#[cold]
fn record_error(span: &Span, error: &ErrorObject) {
    span.record("rpc.jsonrpc.error_code", error.code());
    span.record("rpc.jsonrpc.error_message", error.message());
    // An error status for OpenTelemetry (the field exists with `otel`).
    #[cfg(feature = "otel")]
    span.record("otel.status_code", "ERROR");
}

/// The id as OpenTelemetry wants it: a string's value, a number's text,
/// and the empty string for `null`.
#[cold]
fn request_id(raw: &str) -> Cow<'_, str> {
    match raw.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<Cow<'_, str>>(raw).unwrap_or(Cow::Borrowed(raw)),
        Some(b'n') => Cow::Borrowed(""),
        _ => Cow::Borrowed(raw),
    }
}

/// `future`, the rest of the call of `method` whose span is `span`: run
/// inside that span, its failure (a panic too, as -32603) recorded on it.
/// Left as it is when the span is disabled.
#[inline]
pub(crate) fn instrument(future: MethodFuture, span: Span, method: &str) -> MethodFuture {
    if span.is_disabled() {
        return future;
    }
    instrumented(future, span, method.into())
}

#[cold]
fn instrumented(future: MethodFuture, span: Span, method: Box<str>) -> MethodFuture {
    let inside = span.clone();
    Box::pin(
        async move {
            let result = CatchUnwind(future).await.unwrap_or_else(|panic| Err(panicked(&method, &*panic)));
            if let Err(error) = &result {
                record_error(&span, error);
            }
            result
        }
        .instrument(inside),
    )
}
