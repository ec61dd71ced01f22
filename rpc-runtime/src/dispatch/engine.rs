//! The engine: takes one message (a request, a notification or a batch),
//! has each request checked (`dispatch::validate`), calls its method
//! through the router and whatever wraps the call, and writes the answers
//! (`wire::response`), or hands back what waits (`dispatch::pending`). It
//! knows nothing about any particular service or transport.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde_json::value::RawValue;

use crate::dispatch::context::Context;
use crate::dispatch::dialect::{Dialect, SharedDialect};
use crate::dispatch::inflight;
use crate::dispatch::limits::Limits;
use crate::dispatch::middleware::{MethodCall, MethodResponse, MethodService, Stack};
use crate::dispatch::order;
use crate::dispatch::pending::{BatchEntry, OwnedId, PendingResponse, PendingShape, Quiet};
use crate::dispatch::router::{Called, MethodFuture, Router, panicked, written_result};
use crate::dispatch::validate::{Call, classify_top_level, id_of_broken, not_a_request, validate};
use crate::wire::error::{ErrorObject, INVALID_REQUEST, REQUEST_CANCELLED};
use crate::wire::message::{self, Envelope, Message, method_name};
use crate::wire::response::{METHOD_NOT_FOUND_HEAD, NULL_ID, RESULT_HEAD, write_error, write_response_tail};

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

/// What a connection takes off its incoming stream for itself, for
/// [`Engine::process_incoming`].
#[derive(Clone, Copy)]
pub(crate) struct Takes<'c> {
    /// Which notifications (by method name) it claims; `None` when none.
    pub(crate) claims: Option<&'c dyn Fn(&str) -> bool>,
    /// Whether responses may come: it made calls.
    pub(crate) responses: bool,
}

/// What [`Engine::process_incoming`] made of a message.
///
/// With an explicit tag: the connection's check for the usual outcome
/// (`Handled(None)`) is then two compares, not a decode of a niche in
/// `Claimed`'s string and a jump table.
#[repr(u8)]
pub(crate) enum Incoming<'m> {
    /// A request or notification, handled as [`Engine::process`] does.
    Handled(Option<PendingResponse>),
    /// A response (no `method`; a `result` or an `error`), for the
    /// outgoing call with its id.
    Response { id: Option<&'m RawValue>, result: Option<&'m RawValue>, error: Option<&'m RawValue> },
    /// A notification (no `id`) of a method the connection claims (its
    /// cancellation method, or the method of a subscription's items) and
    /// the router does not serve, with its params.
    Claimed { method: Cow<'m, str>, params: Option<&'m RawValue> },
    /// A batch, or a message that does not decode as an object: nothing was
    /// done, the caller routes it the general way.
    Other,
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

    /// [`Engine::process`] for a connection that also receives responses
    /// and notifications meant for itself (`takes`): a single message is
    /// decoded once, and either dispatched or handed back as a response or
    /// a claimed notification, so that the common case (a request) costs
    /// no separate look at the message.
    ///
    /// A connection that expects no responses (it made no call) has the
    /// message decoded as a request (four members, not six); one without a
    /// `method` is then decoded again with a response's members, so a
    /// stray response is still taken off the stream, never answered.
    pub(crate) fn process_incoming<'m>(
        &self,
        message: &'m [u8],
        cx: &Context,
        out: &mut Vec<u8>,
        takes: &Takes<'_>,
    ) -> Incoming<'m> {
        let Some(text) = message::text(message) else { return Incoming::Other };
        if message::is_batch(text) {
            return Incoming::Other;
        }
        let request = if takes.responses {
            let Ok(message) = serde_json::from_str::<Message<'m>>(text) else { return Incoming::Other };
            if message.is_response() {
                return Incoming::Response { id: message.id, result: message.result, error: message.error };
            }
            message.into_request(text)
        } else {
            let Ok(mut request) = serde_json::from_str::<Envelope<'m>>(text) else { return Incoming::Other };
            if request.method.is_none() {
                return self.process_incoming(message, cx, out, &Takes { responses: true, ..*takes });
            }
            request.text = text;
            request
        };
        if let (Some(claims), None) = (takes.claims, request.id)
            && let Some(method) = request.method.and_then(|member| method_name(member, text))
            && claims(&method)
            && self.router.spec(&method).is_none()
        {
            return Incoming::Claimed { method, params: request.params };
        }
        Incoming::Handled(self.dispatch_single(&request, cx, out))
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
            Dispatched::Pending { id, method, future, quiet } => {
                Some(PendingResponse { shape: PendingShape::Single { id, method, future, quiet }, body: Vec::new() })
            }
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
                Dispatched::Pending { id, method, future, quiet } => {
                    out.truncate(mark);
                    if !any_pending && mark > start {
                        // Every answer so far, without the opening `[`.
                        results.push(BatchEntry::Done(Some(1..mark - start)));
                    }
                    any_pending = true;
                    BatchEntry::Pending { id, method, future, quiet }
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
            quiet: None,
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
        let span = super::span::call(method, call.id, cx);
        let entered = span.enter();
        #[cfg(feature = "metrics")]
        let metered = self.metrics.start(method);
        let start = out.len();
        out.extend_from_slice(RESULT_HEAD);
        let (called, quiet) = if wrapped {
            self.call_wrapped(method, call.params, call.id, cx, out)
        } else {
            (self.router.call(method, self.router.find(method), call.params, call.id.is_none(), cx, out), None)
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
            quiet,
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
    quiet: Quiet,
    #[cfg(feature = "metrics")]
    metered: super::metrics::Metered<'a>,
}

impl Unwritten<'_> {
    /// Answers `called` (no such method, a failure) into `out`, or hands
    /// its future on. Out of line: the usual call is written in place.
    #[inline(never)]
    fn finish(self, called: Called, out: &mut Vec<u8>) -> Dispatched {
        let Unwritten { method, id, span, quiet, .. } = self;
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
                return Dispatched::Pending { id: id.map(Into::into), method: method.into(), future, quiet };
            }
        }
        Dispatched::Written
    }
}

impl Engine {
    /// The call of a request registered for cancellation, ordered on its
    /// connection, or through layers, with a context of its own. A call
    /// that waits keeps the registration's guard in its future (see
    /// `inflight::track`), which comes back with the signal that silences
    /// its answer; any other call is over, and the guard is dropped here.
    #[inline(never)]
    fn call_wrapped(
        &self,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&str>,
        cx: &Context,
        out: &mut Vec<u8>,
    ) -> (Called, Quiet) {
        let (cx, guard) = cx.for_request(id);
        let mut ticket = None;
        if let (true, Some(link)) = (self.router.ordered(), &cx.link)
            && let Some(found) = self.router.find(method)
        {
            let admission = link.gate().admit(found.spec.exclusive);
            if !admission.now() {
                let future = self.deferred(method, params, id, cx.into_owned(), admission);
                let (future, quiet) = inflight::track(future, guard);
                return (Called::Pending(future), quiet);
            }
            ticket = Some(admission.ticket);
        }
        let called = call_through(&self.router, self.layers.as_ref(), method, params, id, cx, out);
        // On an ordered connection an `async` call is first polled here,
        // on the reader: one that finishes without waiting (an edit that
        // only queues a notification) is answered now and gives its place
        // back at once, so the calls after it need not wait on a task. A
        // call that waits holds its place until it ends.
        let called = match (called, ticket) {
            (Called::Pending(future), Some(ticket)) => match poll_once(future, method, out) {
                Called::Pending(future) => Called::Pending(Box::pin(async move {
                    let result = future.await;
                    drop(ticket);
                    result
                })),
                done => done,
            },
            (called, _) => called,
        };
        match called {
            Called::Pending(future) => {
                let (future, quiet) = inflight::track(future, guard);
                (Called::Pending(future), quiet)
            }
            called => (called, None),
        }
    }
}

/// Calls `method` on `router`, through `layers` when there are any (which
/// take the context owned).
fn call_through(
    router: &Router,
    layers: Option<&Stack>,
    method: &str,
    params: Option<&RawValue>,
    id: Option<&str>,
    cx: Cow<'_, Context>,
    out: &mut Vec<u8>,
) -> Called {
    match layers {
        None => router.call(method, router.find(method), params, id.is_none(), &cx, out),
        Some(layers) => layers.call(method, params, cx.into_owned(), id, out),
    }
}

/// Polls `future` (method `method`'s) once, with a waker that does
/// nothing: a result is written into `out` (or becomes the failure), and a
/// future that waits is handed back, to be polled again where it will run
/// (its first poll there registers the real waker, so a wake-up in between
/// is not lost). A panic is answered as any method's panic is.
fn poll_once(mut future: MethodFuture, method: &str, out: &mut Vec<u8>) -> Called {
    let mut context = TaskContext::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut context))) {
        Ok(Poll::Pending) => Called::Pending(future),
        Ok(Poll::Ready(Ok(result))) => {
            out.extend_from_slice(result.get().as_bytes());
            Called::Written
        }
        Ok(Poll::Ready(Err(error))) => Called::Failed(error),
        Err(panic) => Called::Failed(panicked(method, &*panic)),
    }
}

impl Engine {
    /// Whether calls on `cx`'s connection are admitted through its order
    /// (a method is `exclusive`, and the call came over a connection).
    #[inline]
    fn ordered_on(&self, cx: &Context) -> bool {
        self.router.ordered() && cx.link.is_some()
    }

    /// A call that must wait for its turn on its connection (see
    /// `dispatch::order`): its params are copied, and it is made, through
    /// the layers like any other, once what it waits for has ended. Until
    /// then its cancellation, or the connection's end, drops it unrun.
    #[cold]
    #[inline(never)]
    fn deferred(
        &self,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&str>,
        cx: Context,
        admission: order::Admission,
    ) -> MethodFuture {
        let router = Arc::clone(&self.router);
        let layers = self.layers.clone();
        let method: Box<str> = method.into();
        let params: Option<Box<RawValue>> = params.map(ToOwned::to_owned);
        let id: Option<Box<str>> = id.map(Into::into);
        Box::pin(async move {
            let order::Admission { ticket, after } = admission;
            tokio::select! {
                biased;
                () = order::wait(&after) => {}
                () = cx.cancelled() => {
                    return Err(ErrorObject::new(REQUEST_CANCELLED, "Request cancelled before it started"));
                }
            }
            let mut out = Vec::new();
            let (params, id) = (params.as_deref(), id.as_deref());
            let called = call_through(&router, layers.as_ref(), &method, params, id, Cow::Owned(cx), &mut out);
            let result = match called {
                Called::Written => written_result(out),
                Called::Failed(error) => Err(error),
                Called::Pending(future) => future.await,
                Called::NotFound => Err(ErrorObject::method_not_found()),
            };
            drop(ticket);
            result
        })
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
        quiet: Quiet,
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
mod tests {
    use super::*;
    use crate::dispatch::params::Params;
    use crate::dispatch::router::MethodOutcome;
    use crate::spec::{MethodSpec, ParamSpec};

    static ADD_PARAMS: [ParamSpec; 2] = [ParamSpec::new("a", "i64"), ParamSpec::new("b", "i64")];
    static ADD: MethodSpec = MethodSpec::new("add", &ADD_PARAMS);
    static BOOM: MethodSpec = MethodSpec::new("boom", &[]);
    static FAIL: MethodSpec = MethodSpec::new("fail", &[]);
    static LATER: MethodSpec = MethodSpec::new("later", &[]);
    static OLD: MethodSpec = MethodSpec::new("old", &ADD_PARAMS);

    /// Methods of every kind and outcome: a direct handler that writes,
    /// fails, panics or waits, and one added with `Router::register`.
    fn every_outcome() -> Engine {
        let mut router = Router::new();
        let add = |params: &Params<'_>, _: &Context, out: &mut Vec<u8>| {
            let (a, b): (i64, i64) = (params.decode(0)?, params.decode(1)?);
            out.extend_from_slice(a.wrapping_add(b).to_string().as_bytes());
            Ok(None)
        };
        router.register_direct(&ADD, Box::new(add)).unwrap();
        router.register_direct(&BOOM, Box::new(|_, _, _| panic!("boom"))).unwrap();
        let fail = |_: &Params<'_>, _: &Context, _: &mut Vec<u8>| Err(ErrorObject::new(-32001, "refused"));
        router.register_direct(&FAIL, Box::new(fail)).unwrap();
        let later = |_: &Params<'_>, _: &Context, _: &mut Vec<u8>| {
            let future: MethodFuture = Box::pin(async { crate::dispatch::router::encode(&"done") });
            Ok(Some(future))
        };
        router.register_direct(&LATER, Box::new(later)).unwrap();
        router
            .register(&OLD, |params, _| {
                let (a, b): (i64, i64) = (params.decode(0)?, params.decode(1)?);
                Ok(MethodOutcome::Ready(crate::dispatch::router::encode(&(a - b))))
            })
            .unwrap();
        Engine::new(router, Limits::default())
    }

    fn answer(engine: &Engine, message: &str) -> Vec<u8> {
        let mut out = Vec::new();
        match engine.process(message.as_bytes(), &Context::default(), &mut out) {
            Some(pending) => tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(pending.run()),
            None => out,
        }
    }

    /// A call made directly answers every request byte for byte as one
    /// made inside its span (a subscriber takes `DEBUG`) and one made
    /// through a layer, with every feature set (metrics included).
    #[test]
    fn every_path_of_a_call_answers_alike() {
        let engine = every_outcome();
        // No other test of this crate installs a subscriber.
        assert!(!super::super::span::enabled());
        let messages = [
            r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2},"id":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":[1],"id":null}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":[1,"2"],"id":2}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":7,"id":3}"#,
            r#"{"jsonrpc":"2.0","method":"\u0061dd","params":[1,2],"id":4}"#,
            r#"{"jsonrpc":"2.0","method":"boom","id":5}"#,
            r#"{"jsonrpc":"2.0","method":"fail","id":6}"#,
            r#"{"jsonrpc":"2.0","method":"fail"}"#,
            r#"{"jsonrpc":"2.0","method":"later","id":7}"#,
            r#"{"jsonrpc":"2.0","method":"old","params":[5,2],"id":8}"#,
            r#"{"jsonrpc":"2.0","method":"nope","id":9}"#,
            r#"{"jsonrpc":"2.0","method":"nope"}"#,
            r#"{"jsonrpc":"2.0","method":"rpc.discover","id":10}"#,
            r#"{"jsonrpc":"1.0","method":"add","params":[1,2],"id":11}"#,
            r#"{"method":"add","params":[1,2],"id":12}"#,
            r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":[13]}"#,
            r#"{"jsonrpc":"2.0","method":1,"id":14}"#,
            r#"[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":15},{"jsonrpc":"2.0","method":"later","id":16}]"#,
        ];
        let answers =
            |engine: &Engine| -> Vec<Vec<u8>> { messages.iter().map(|message| answer(engine, message)).collect() };
        let direct = answers(&engine);
        let subscriber =
            tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).with_writer(std::io::sink).finish();
        let observed = tracing::subscriber::with_default(subscriber, || {
            assert!(super::super::span::enabled());
            answers(&engine)
        });
        let layered = answers(&every_outcome().layer(tower_layer::Identity::new()));
        for (path, answers) in [("inside its span", &observed), ("through a layer", &layered)] {
            for ((message, direct), other) in messages.iter().zip(&direct).zip(answers) {
                let (direct, other) = (String::from_utf8_lossy(direct), String::from_utf8_lossy(other));
                assert_eq!(direct, other, "{message}, directly and {path}");
            }
        }
        assert_eq!(direct[0], br#"{"jsonrpc":"2.0","result":3,"id":1}"#);
        assert_eq!(direct[6], br#"{"jsonrpc":"2.0","result":3,"id":4}"#, "an escaped name is read");
        assert!(direct[2].is_empty() && direct[9].is_empty() && direct[13].is_empty());
    }
}
