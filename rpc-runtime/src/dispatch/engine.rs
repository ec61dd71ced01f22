//! The engine: takes one message (a request, a notification or a batch),
//! has each request checked (`dispatch::validate`), calls its method
//! through the router and whatever wraps the call, and writes the answers
//! (`wire::response`), or hands back what waits (`dispatch::pending`). It
//! knows nothing about any particular service or transport.

use std::sync::Arc;

use crate::dispatch::context::Context;
use crate::dispatch::dialect::{Dialect, SharedDialect};
use crate::dispatch::limits::Limits;
use crate::dispatch::middleware::{MethodCall, MethodResponse, MethodService, Stack};
use crate::dispatch::pending::{BatchEntry, OwnedId, PendingResponse, PendingShape, SilentCancel};
use crate::dispatch::router::{Called, MethodFuture, Router};
use crate::dispatch::validate::{Call, classify_top_level, id_of_broken, not_a_request, validate};
use crate::wire::error::{ErrorObject, INVALID_REQUEST};
use crate::wire::message::{self, Envelope};
use crate::wire::response::{METHOD_NOT_FOUND_HEAD, NULL_ID, RESULT_HEAD, write_error, write_response_tail};

mod incoming;
mod wrapped;

pub(crate) use incoming::{Incoming, Takes};

/// Decodes messages, dispatches them to a [`Router`] and encodes responses.
///
/// Transports feed it one message at a time; see [`crate::Server`] for the
/// stream-based ones.
#[derive(Clone)]
pub struct Engine {
    router: Arc<Router>,
    limits: Limits,
    /// The layers around every call; `None` keeps the direct path.
    layers: Option<Stack>,
    dialect: Option<Arc<dyn Dialect>>,
    /// Every method's series, registered once with the recorder current
    /// when the engine is built (see the `metrics` module).
    #[cfg(feature = "metrics")]
    metrics: Arc<crate::dispatch::metrics::Series>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("router", &self.router)
            .field("limits", &self.limits)
            .field("layered", &self.layers.is_some())
            .field("dialect", &self.dialect.is_some())
            .finish()
    }
}

impl Engine {
    /// An engine for `router` with the given limits.
    pub fn new(router: Router, limits: Limits) -> Self {
        Engine {
            #[cfg(feature = "metrics")]
            metrics: Arc::new(crate::dispatch::metrics::Series::of(&router)),
            router: Arc::new(router),
            limits,
            layers: None,
            dialect: None,
        }
    }

    /// The same engine with `layer` around every call, outside any layer
    /// added before (the last added sees a call first); see
    /// [`Server::layer`](crate::Server::layer).
    #[must_use = "a builder does nothing until used"]
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: tower_layer::Layer<MethodService>,
        L::Service: tower_service::Service<MethodCall, Response = MethodResponse> + Clone + Send + 'static,
        <L::Service as tower_service::Service<MethodCall>>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        <L::Service as tower_service::Service<MethodCall>>::Future: Send + 'static,
    {
        let layers = Stack::wrap(self.layers.as_ref(), &self.router, layer);
        Engine { layers: Some(layers), ..self }
    }

    /// The same engine holding requests to the rules of `dialect` too
    /// (replacing any set before): ids and batches it refuses are answered
    /// with its error and not run. See [`Dialect`].
    ///
    /// Its [`cancellation`](Dialect::cancellation) is a connection's
    /// business: set the dialect on a [`Server`](crate::Server) to have it
    /// applied too.
    #[must_use = "a builder does nothing until used"]
    pub fn with_dialect(self, dialect: impl Dialect) -> Self {
        self.with_shared_dialect(Some(SharedDialect::new(dialect)))
    }

    /// The same engine with `dialect`, or none.
    pub(crate) fn with_shared_dialect(self, dialect: Option<SharedDialect>) -> Self {
        Engine { dialect: dialect.map(|shared| shared.0), ..self }
    }

    /// The same router with other limits.
    #[must_use = "a builder does nothing until used"]
    pub fn with_limits(self, limits: Limits) -> Self {
        Engine { limits, ..self }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The router this engine dispatches to.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// Handles one message. Everything that can be answered now is written
    /// to `out` (left empty when there is nothing to send); what waits on
    /// `async` methods comes back as a [`PendingResponse`], in which case
    /// `out` is left empty and the pending part carries the whole answer.
    ///
    /// A UTF-8 byte-order mark before the JSON is skipped (RFC 8259 allows
    /// a parser to ignore it; some Windows tools write one).
    pub fn process(&self, message: &[u8], cx: &Context, out: &mut Vec<u8>) -> Option<PendingResponse> {
        let Some(text) = message::text(message) else {
            tracing::debug!("message is not UTF-8");
            write_error(out, NULL_ID, &ErrorObject::parse_error());
            return None;
        };
        if message::is_batch(text) { self.process_batch(text, cx, out) } else { self.process_single(text, cx, out) }
    }

    /// Handles one message and waits for every `async` method it calls.
    /// Returns the response bytes, empty when nothing is to be sent.
    pub async fn handle(&self, message: &[u8], cx: &Context) -> Vec<u8> {
        let mut out = Vec::new();
        match self.process(message, cx, &mut out) {
            Some(pending) => pending.run().await,
            None => out,
        }
    }

    fn process_single(&self, text: &str, cx: &Context, out: &mut Vec<u8>) -> Option<PendingResponse> {
        // Borrowed where it was decoded (moved out of the `Result`, its
        // members were copied).
        match &mut serde_json::from_str::<Envelope<'_>>(text) {
            Ok(envelope) => {
                envelope.text = text;
                self.dispatch_single(envelope, cx, out)
            }
            Err(err) => {
                let (id, error) = classify_top_level(text, err);
                write_error(out, id, &error);
                None
            }
        }
    }

    fn dispatch_single(&self, envelope: &Envelope<'_>, cx: &Context, out: &mut Vec<u8>) -> Option<PendingResponse> {
        match self.dispatch(envelope, cx, out) {
            Dispatched::Written => None,
            Dispatched::Pending { id, method, future, silent_cancel } => Some(PendingResponse {
                shape: PendingShape::Single { id, method, future, silent_cancel },
                body: Vec::new(),
            }),
        }
    }

    fn process_batch(&self, text: &str, cx: &Context, out: &mut Vec<u8>) -> Option<PendingResponse> {
        let (entries, len) = match message::read_batch(text, self.limits.max_batch_len) {
            Ok(batch) => batch,
            Err(err) => {
                tracing::debug!(error = %err, "batch is not valid JSON");
                write_error(out, NULL_ID, &ErrorObject::parse_error());
                return None;
            }
        };
        if len == 0 {
            write_error(out, NULL_ID, &ErrorObject::invalid_request());
            return None;
        }
        if let Some(Err(error)) = self.dialect.as_ref().map(|dialect| dialect.check_batch(cx)) {
            write_error(out, NULL_ID, &error);
            return None;
        }
        if len > self.limits.max_batch_len {
            let error = ErrorObject::new(
                INVALID_REQUEST,
                format!("Invalid Request: batch of {len} requests exceeds the limit of {}", self.limits.max_batch_len),
            );
            write_error(out, NULL_ID, &error);
            return None;
        }
        // Each entry's span is a child of the batch's (the entries that wait
        // on `async` methods keep it open until they end).
        let span = super::span::batch(len, cx);
        let _entered = span.enter();
        // Responses are written straight into `out` as `[a,b,...`; should
        // an entry wait on an `async` method, what was written becomes the
        // pending answer's body instead.
        let start = out.len();
        // Filled only once an entry waits: the entries answered before it
        // are then one piece (they are back to back in `out`).
        let mut results = Vec::new();
        let mut any_pending = false;
        for entry in entries.iter() {
            let mark = out.len();
            out.push(if mark == start { b'[' } else { b',' });
            let piece_start = out.len();
            let dispatched = match serde_json::from_str::<Envelope<'_>>(entry.get()) {
                // serde also reads a struct from an array of its members:
                // an entry that is not an object is no request, said bare
                // as in the specification's examples.
                Ok(_) if !entry.get().starts_with('{') => {
                    write_error(out, NULL_ID, &ErrorObject::invalid_request());
                    Dispatched::Written
                }
                Ok(mut envelope) => {
                    envelope.text = entry.get();
                    self.dispatch(&envelope, cx, out)
                }
                Err(err) => {
                    write_error(out, id_of_broken(entry.get()), &not_a_request(entry.get(), &err));
                    Dispatched::Written
                }
            };
            let result = match dispatched {
                Dispatched::Written if out.len() == piece_start => {
                    out.truncate(mark);
                    BatchEntry::Done(None)
                }
                Dispatched::Written => BatchEntry::Done(Some(piece_start - start..out.len() - start)),
                Dispatched::Pending { id, method, future, silent_cancel } => {
                    out.truncate(mark);
                    if !any_pending && mark > start {
                        // Every answer so far, without the opening `[`.
                        results.push(BatchEntry::Done(Some(1..mark - start)));
                    }
                    any_pending = true;
                    BatchEntry::Pending { id, method, future, silent_cancel }
                }
            };
            if any_pending && !matches!(result, BatchEntry::Done(None)) {
                results.push(result);
            }
        }
        if any_pending {
            let body = out.split_off(start);
            return Some(PendingResponse { shape: PendingShape::Batch(results), body });
        }
        if out.len() > start {
            out.push(b']');
        }
        None
    }

    /// Runs one request, appending its response (if any) to `out`.
    ///
    /// Every request is checked the same way (see `dispatch::validate`);
    /// what differs is only what is around its call. With nothing around
    /// it (no layers, no cancellation tracking, no ordering, and no
    /// subscriber taking `DEBUG` spans), the call is made directly;
    /// otherwise inside its span and through what wraps it.
    fn dispatch(&self, request: &Envelope<'_>, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        let Some(call) = validate(request, self.dialect.as_deref(), out) else { return Dispatched::Written };
        if let Some(dialect) = self.dialect.as_deref()
            && let Err(error) = dialect.check_call(&call.method, call.params, call.id.is_none(), cx)
        {
            refused(out, call.id, &error, &call.method);
            return Dispatched::Written;
        }
        let wrapped = self.layers.is_some() || self.ordered_on(cx) || cx.tracks(call.id);
        if wrapped || super::span::enabled() {
            return self.call_observed(&call, wrapped, cx, out);
        }
        self.call_direct(&call, cx, out)
    }

    /// The call of a valid request with nothing around it but metrics.
    #[inline(always)]
    fn call_direct(&self, call: &Call<'_>, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        let method = &*call.method;
        let found = self.router.find(method);
        #[cfg(feature = "metrics")]
        let metered = self.metrics.start(method);
        // The result is encoded in place, right after the response's head.
        let start = out.len();
        out.extend_from_slice(RESULT_HEAD);
        let called = self.router.call(method, found, call.params, call.id.is_none(), cx, out);
        #[cfg(feature = "metrics")]
        metered.ready(&called);
        if let Called::Written = called {
            close_result(out, start, call.id);
            return Dispatched::Written;
        }
        out.truncate(start);
        let unwritten = Unwritten {
            method,
            id: call.id,
            span: tracing::Span::none(),
            silent_cancel: SilentCancel::default(),
            #[cfg(feature = "metrics")]
            metered,
        };
        unwritten.finish(called, out)
    }

    /// The call of a valid request inside its span, and through its
    /// layers, cancellation tracking or ordering when `wrapped`.
    #[cold]
    #[inline(never)]
    fn call_observed(&self, call: &Call<'_>, wrapped: bool, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        let method = &*call.method;
        let span = super::span::call(method, call.id, call.params, cx);
        let entered = span.enter();
        #[cfg(feature = "metrics")]
        let metered = self.metrics.start(method);
        let start = out.len();
        out.extend_from_slice(RESULT_HEAD);
        let (called, silent_cancel) = if wrapped {
            self.call_wrapped(method, call.params, call.id, cx, out)
        } else {
            (
                self.router.call(method, self.router.find(method), call.params, call.id.is_none(), cx, out),
                SilentCancel::default(),
            )
        };
        #[cfg(feature = "metrics")]
        metered.ready(&called);
        if let Called::Written = called {
            close_result(out, start, call.id);
            return Dispatched::Written;
        }
        out.truncate(start);
        drop(entered);
        let unwritten = Unwritten {
            method,
            id: call.id,
            span,
            silent_cancel,
            #[cfg(feature = "metrics")]
            metered,
        };
        unwritten.finish(called, out)
    }
}

/// Ends a success response whose result was written after `start`, where
/// its head is; a notification's is taken back (it is never answered).
#[inline(always)]
fn close_result(out: &mut Vec<u8>, start: usize, id: Option<&str>) {
    match id {
        Some(id) => write_response_tail(out, id),
        None => out.truncate(start),
    }
}

/// A call whose answer was not written in place: what is needed to say
/// why, or to wait for its future.
struct Unwritten<'a> {
    method: &'a str,
    id: Option<&'a str>,
    span: tracing::Span,
    silent_cancel: SilentCancel,
    #[cfg(feature = "metrics")]
    metered: super::metrics::Metered<'a>,
}

impl Unwritten<'_> {
    /// Answers `called` (no such method, a failure) into `out`, or hands
    /// its future on. Out of line: the usual call is written in place.
    #[inline(never)]
    fn finish(self, called: Called, out: &mut Vec<u8>) -> Dispatched {
        let Unwritten { method, id, span, silent_cancel, .. } = self;
        match called {
            Called::NotFound => not_found(out, id, &span),
            Called::Failed(err) => {
                let _entered = span.enter();
                failed(out, id, &err, &span, method);
            }
            Called::Written => {}
            Called::Pending(future) => {
                let future = super::span::instrument(future, span, method);
                #[cfg(feature = "metrics")]
                let future = self.metered.pending(future);
                return Dispatched::Pending { id: id.map(Into::into), method: method.into(), future, silent_cancel };
            }
        }
        Dispatched::Written
    }
}

/// What became of a request: answered into the buffer, or waiting.
enum Dispatched {
    /// The response, if there is one, was appended to the buffer.
    Written,
    Pending {
        id: OwnedId,
        method: Box<str>,
        future: MethodFuture,
        silent_cancel: SilentCancel,
    },
}

/// Answers a call that failed with `error` (nothing for a notification,
/// which is logged), and records it on the call's span. Out of line: the
/// usual call succeeds, and its path keeps fewer values live.
#[inline(never)]
fn failed(out: &mut Vec<u8>, id: Option<&str>, error: &ErrorObject, span: &tracing::Span, method: &str) {
    super::span::failed(span, error);
    match id {
        Some(id) => write_error(out, id, error),
        None => tracing::debug!(method, error = %error, "notification failed"),
    }
}

/// Answers a call its dialect refused (nothing for a notification, which
/// is logged at debug level).
#[cold]
#[inline(never)]
fn refused(out: &mut Vec<u8>, id: Option<&str>, error: &ErrorObject, method: &str) {
    match id {
        Some(id) => write_error(out, id, error),
        None => tracing::debug!(method, error = %error, "notification refused by the protocol's rules, dropped"),
    }
}

/// Answers a call of a method there is none of (nothing for a
/// notification), and records it on the call's span.
#[inline]
fn not_found(out: &mut Vec<u8>, id: Option<&str>, span: &tracing::Span) {
    if !span.is_disabled() {
        super::span::failed(span, &ErrorObject::method_not_found());
    }
    if let Some(id) = id {
        // What `write_error` writes for `method_not_found()`, whole.
        out.extend_from_slice(METHOD_NOT_FOUND_HEAD);
        out.extend_from_slice(id.as_bytes());
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests;
