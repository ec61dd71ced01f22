//! One trace through every hop: W3C Trace Context on calls in and out
//! (feature `otel`).
//!
//! Each call already has a `tracing` span named with OpenTelemetry's
//! conventions ([`rpc.call`](crate::guide::production#one-span-per-call)). With this
//! feature, that span continues the caller's trace instead of starting a
//! new one (a server span named after the method, MCP's `tools/call` and
//! `prompts/get` with their tool or prompt as in `tools/call add`, an
//! error when the call fails), and each call a [`Peer`](crate::Peer) makes is a client span
//! (`rpc.client`) whose context the request carries:
//!
//! | | read from (server) | written to (client) |
//! | --- | --- | --- |
//! | HTTP/1.1, HTTP/2 | the request's `traceparent`/`tracestate` headers | each `POST`'s headers |
//! | WebSocket | the upgrade request's headers (for every call on the connection) | the upgrade request's headers, from the span current when connecting |
//! | NATS | each message's headers | each message's headers |
//! | any call's params (MCP's place for it) | `params._meta.traceparent`/`tracestate`, per call, before the transport's | — |
//!
//! A value that is not a valid [`traceparent`](https://www.w3.org/TR/trace-context/#traceparent-header)
//! (version `ff`, upper-case hex, an all-zero id, a wrong length) is
//! ignored, as the W3C recommendation asks, and so is the `tracestate` that
//! came with it; an invalid `tracestate` alone is dropped and the parent
//! kept.
//!
//! The runtime uses OpenTelemetry's API only. What turns spans into
//! exported traces is the application's: an `opentelemetry_sdk` tracer
//! provider with an exporter (OTLP...), and
//! [`tracing_opentelemetry::layer`] in its subscriber. Without that layer
//! nothing is written, and what a caller sent is parsed but changes
//! nothing; with the feature off, a call's span costs what it did before.
//!
//! ```
//! use rpc_runtime::otel::TraceContext;
//!
//! let parent = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("congo=t61rcWkgMzE"))
//!     .expect("a valid traceparent");
//! assert_eq!(parent.span_context().trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
//! assert!(parent.span_context().is_sampled() && parent.span_context().is_remote());
//! assert_eq!(parent.tracestate(), Some("congo=t61rcWkgMzE"));
//!
//! // Refused: an upper-case id, version ff, an all-zero span id.
//! assert!(TraceContext::parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None).is_none());
//! assert!(TraceContext::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).is_none());
//! assert!(TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None).is_none());
//! ```
//!
//! Setting it up in a binary: OpenTelemetry's SDK with an exporter (here
//! OTLP over HTTP; `opentelemetry_sdk` and `opentelemetry-otlp` are the
//! application's dependencies, not the runtime's), and its tracer as a
//! layer of the subscriber. Calls' spans are at `debug`:
//!
//! ```no_run
//! # #[cfg(all(feature = "otel", feature = "http"))]
//! # async fn run(router: rpc_runtime::Router) -> Result<(), Box<dyn std::error::Error>> {
//! use opentelemetry_otlp::WithExportConfig;
//! use rpc_runtime::otel::opentelemetry::trace::TracerProvider;
//! use tracing_subscriber::prelude::*;
//!
//! let exporter = opentelemetry_otlp::SpanExporter::builder()
//!     .with_http()
//!     .with_endpoint("http://127.0.0.1:4318/v1/traces")
//!     .build()?;
//! let batches = opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
//!     exporter,
//!     opentelemetry_sdk::runtime::Tokio,
//! )
//! .build();
//! let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
//!     .with_span_processor(batches)
//!     .with_resource(opentelemetry_sdk::Resource::builder().with_service_name("notes").build())
//!     .build();
//! tracing_subscriber::registry()
//!     .with(
//!         rpc_runtime::otel::tracing_opentelemetry::layer()
//!             .with_tracer(provider.tracer("notes"))
//!             .with_filter(tracing_subscriber::filter::LevelFilter::DEBUG),
//!     )
//!     .init();
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! rpc_runtime::Server::new(router).serve(rpc_runtime::transport::http::Http::default().listener(listener)).await?;
//! // On the way out, send what is left (it blocks: off the runtime's threads).
//! tokio::task::spawn_blocking(move || provider.shutdown()).await??;
//! # Ok(()) }
//! ```
//!
//! The `calculator` example does exactly this with `--otlp URL`.

use std::str::FromStr;

pub use opentelemetry;
pub use tracing_opentelemetry;

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use serde::Deserialize;
use serde_json::value::RawValue;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The header (and `_meta` key) of the caller's span: version, trace id,
/// span id and flags.
pub const TRACEPARENT: &str = "traceparent";
/// The header (and `_meta` key) of vendors' trace data.
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` carried on (the W3C recommendation asks
/// propagators to carry at least 512 characters; longer ones are dropped,
/// not cut, since a cut list could be misread).
const MAX_TRACESTATE: usize = 1024;

/// A caller's span as W3C Trace Context carries it: the `traceparent`
/// value, checked, and its `tracestate`, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: Box<str>,
    tracestate: Option<Box<str>>,
    span: SpanContext,
}

impl TraceContext {
    /// `traceparent` and `tracestate` as a caller sent them; `None` when
    /// `traceparent` is not valid (then `tracestate` is not looked at).
    /// An invalid or overlong `tracestate` is dropped, the parent kept.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let traceparent = traceparent.trim_matches([' ', '\t']);
        let (trace_id, span_id, flags) = fields(traceparent)?;
        let tracestate = tracestate
            .map(|value| value.trim_matches([' ', '\t']))
            .filter(|value| !value.is_empty() && value.len() <= MAX_TRACESTATE)
            .and_then(|value| TraceState::from_str(value).ok().map(|state| (value, state)));
        let state = tracestate.as_ref().map_or_else(TraceState::default, |(_, state)| state.clone());
        Some(TraceContext {
            traceparent: traceparent[..55].into(),
            tracestate: tracestate.map(|(value, _)| value.into()),
            span: SpanContext::new(trace_id, span_id, flags, true, state),
        })
    }

    /// The context of `span`, as an outgoing call carries it; `None` when
    /// it has none (no OpenTelemetry layer in the subscriber, the span
    /// disabled).
    pub fn of(span: &tracing::Span) -> Option<Self> {
        if span.is_disabled() {
            return None;
        }
        let context = span.context();
        let span = context.span();
        let span = span.span_context();
        span.is_valid().then(|| Self::from_span_context(span.clone()))
    }

    /// The context of the current `tracing` span (see [`TraceContext::of`]).
    pub fn current() -> Option<Self> {
        Self::of(&tracing::Span::current())
    }

    /// The context of `span` as W3C Trace Context writes it.
    pub fn from_span_context(span: SpanContext) -> Self {
        let traceparent =
            format!("00-{}-{}-{:02x}", span.trace_id(), span.span_id(), span.trace_flags().to_u8() & 1).into();
        let tracestate = Some(span.trace_state().header()).filter(|state| !state.is_empty()).map(Into::into);
        TraceContext { traceparent, tracestate, span }
    }

    /// The `traceparent` value (version `00`; a later version's extra
    /// fields are not carried on).
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if the caller sent a valid one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The caller's span, as OpenTelemetry sees it (remote).
    pub fn span_context(&self) -> &SpanContext {
        &self.span
    }

    /// Makes `span` the child of this context's span. Only before `span`
    /// was first entered: tracing-opentelemetry starts the span then.
    pub fn adopt(&self, span: &tracing::Span) {
        let parent = opentelemetry::Context::new().with_remote_span_context(self.span.clone());
        if let Err(err) = span.set_parent(parent) {
            tracing::trace!(error = %err, "a call's span could not take its caller's trace");
        }
    }

    /// The context in HTTP headers (the first `traceparent`; `tracestate`
    /// headers joined, as a list split over lines is one list).
    #[cfg(feature = "http")]
    pub(crate) fn from_headers(headers: &http::HeaderMap) -> Option<Self> {
        let traceparent = headers.get(TRACEPARENT)?.to_str().ok()?;
        let states = headers.get_all(TRACESTATE).iter().filter_map(|value| value.to_str().ok());
        Self::parse_lines(traceparent, states)
    }

    /// Writes the context as HTTP headers.
    #[cfg(feature = "http")]
    pub(crate) fn write_headers(&self, headers: &mut http::HeaderMap) {
        for (name, value) in [(TRACEPARENT, Some(&*self.traceparent)), (TRACESTATE, self.tracestate.as_deref())] {
            if let Some(value) = value.and_then(|value| http::HeaderValue::from_str(value).ok()) {
                headers.insert(name, value);
            }
        }
    }

    /// The context in a NATS message's headers.
    #[cfg(feature = "nats")]
    pub(crate) fn from_nats(headers: &async_nats::HeaderMap) -> Option<Self> {
        let traceparent = headers.get(TRACEPARENT)?.as_str();
        Self::parse_lines(traceparent, headers.get_all(TRACESTATE).map(async_nats::HeaderValue::as_str))
    }

    /// [`TraceContext::parse`] of `tracestate` given as header lines: one
    /// list split over several lines is the lines joined with commas.
    #[cfg(any(feature = "http", feature = "nats"))]
    fn parse_lines<'a>(traceparent: &str, mut states: impl Iterator<Item = &'a str>) -> Option<Self> {
        match (states.next(), states.next()) {
            (None, _) => Self::parse(traceparent, None),
            (Some(one), None) => Self::parse(traceparent, Some(one)),
            (Some(first), Some(second)) => {
                let mut joined = format!("{first},{second}");
                states.for_each(|more| {
                    joined.push(',');
                    joined.push_str(more);
                });
                Self::parse(traceparent, Some(&joined))
            }
        }
    }

    /// Writes the context as NATS message headers.
    #[cfg(feature = "nats")]
    pub(crate) fn write_nats(&self, headers: &mut async_nats::HeaderMap) {
        headers.insert(TRACEPARENT, &*self.traceparent);
        if let Some(state) = &self.tracestate {
            headers.insert(TRACESTATE, &**state);
        }
    }

    /// The context in an MCP call's `params._meta`, if it carries one.
    pub(crate) fn from_meta(params: &RawValue) -> Option<Self> {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(rename = "_meta", borrow, default)]
            meta: Option<Meta<'a>>,
        }
        #[derive(Deserialize)]
        struct Meta<'a> {
            #[serde(borrow, default)]
            traceparent: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default)]
            tracestate: Option<std::borrow::Cow<'a, str>>,
        }
        // Most params have no `_meta`: only those that name it are read twice.
        if !params.get().contains("\"_meta\"") {
            return None;
        }
        let meta = serde_json::from_str::<Params<'_>>(params.get()).ok()?.meta?;
        Self::parse(&meta.traceparent?, meta.tracestate.as_deref())
    }
}

/// The trace id, span id and flags of a valid `traceparent`.
fn fields(value: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
    let bytes = value.as_bytes();
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
    if bytes.len() < 55 || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let version = &value[..2];
    if !is_hex(version) || version == "ff" {
        return None;
    }
    // Version 00 is exactly 55 characters; a later version may add fields
    // after a dash, which a version-00 reader ignores.
    if (version == "00" && bytes.len() != 55) || (bytes.len() > 55 && bytes[55] != b'-') {
        return None;
    }
    let (trace_id, span_id, flags) = (&value[3..35], &value[36..52], &value[53..55]);
    if !is_hex(trace_id) || !is_hex(span_id) || !is_hex(flags) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok().filter(|id| *id != TraceId::INVALID)?;
    let span_id = SpanId::from_hex(span_id).ok().filter(|id| *id != SpanId::INVALID)?;
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some((trace_id, span_id, TraceFlags::new(flags & 1)))
}

/// Lower-case hex digits only (the W3C format allows no upper case).
fn is_hex(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_valid_traceparent_is_read_and_written_back_the_same() {
        let parsed = TraceContext::parse(PARENT, Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).unwrap();
        assert_eq!(parsed.span_context().span_id().to_string(), "b7ad6b7169203331");
        let again = TraceContext::from_span_context(parsed.span_context().clone());
        assert_eq!(again.traceparent(), PARENT);
        assert_eq!(again.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    }

    #[test]
    fn invalid_traceparents_are_ignored() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-011",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333g-01",
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-zz",
        ] {
            assert_eq!(TraceContext::parse(bad, Some("a=b")), None, "{bad:?}");
        }
        // Not ASCII (`_meta` and NATS headers may be any text), with the
        // dashes where they belong: refused, not a slicing panic.
        let wide = format!("00-{}-{}-01", "é".repeat(16), "😀".repeat(4));
        assert_eq!(wide.len(), 55);
        assert_eq!(TraceContext::parse(&wide, None), None);
        assert_eq!(TraceContext::parse(&format!("00-{}", "é".repeat(26)), None), None);
    }

    #[test]
    fn a_later_version_keeps_the_fields_version_00_knows() {
        let later = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03-what-comes-next";
        let parsed = TraceContext::parse(later, None).unwrap();
        assert_eq!(parsed.traceparent(), &later[..55]);
        // Only the sampled bit is defined; others are not carried on.
        assert_eq!(parsed.span_context().trace_flags(), TraceFlags::SAMPLED);
    }

    #[test]
    fn an_invalid_or_overlong_tracestate_is_dropped_and_the_parent_kept() {
        for state in ["not a list member", &"a=b,".repeat(400)] {
            let parsed = TraceContext::parse(PARENT, Some(state)).unwrap();
            assert_eq!(parsed.tracestate(), None);
            assert_eq!(parsed.span_context().trace_state(), &TraceState::default());
        }
    }

    #[test]
    fn meta_is_read_only_where_params_carry_it() {
        let with = RawValue::from_string(format!(
            r#"{{"name":"add","arguments":{{"a":1}},"_meta":{{"traceparent":"{PARENT}","progressToken":7}}}}"#
        ))
        .unwrap();
        assert_eq!(TraceContext::from_meta(&with).unwrap().traceparent(), PARENT);
        let without = RawValue::from_string(r#"{"name":"add","arguments":{"_meta":1}}"#.into()).unwrap();
        assert_eq!(TraceContext::from_meta(&without), None);
        let list = RawValue::from_string("[1,2]".into()).unwrap();
        assert_eq!(TraceContext::from_meta(&list), None);
    }

    #[cfg(feature = "http")]
    #[test]
    fn headers_split_over_lines_are_one_tracestate() {
        let mut headers = http::HeaderMap::new();
        headers.insert(TRACEPARENT, PARENT.parse().unwrap());
        headers.append(TRACESTATE, "rojo=00f067aa0ba902b7".parse().unwrap());
        headers.append(TRACESTATE, "congo=t61rcWkgMzE".parse().unwrap());
        let parsed = TraceContext::from_headers(&headers).unwrap();
        assert_eq!(parsed.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
        let mut written = http::HeaderMap::new();
        parsed.write_headers(&mut written);
        assert_eq!(written.get(TRACEPARENT).unwrap(), PARENT);
    }
}
