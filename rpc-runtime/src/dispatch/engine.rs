//! Everything JSON-RPC 2.0 says about messages: single vs batch,
//! notification vs request, -32700/-32600 decisions, id echo, limits and
//! panic isolation. It knows nothing about any particular service.

use std::borrow::Cow;
use std::future::Future;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;
use serde_json::value::RawValue;

use crate::dispatch::context::Context;
use crate::dispatch::dialect::{Dialect, SharedDialect};
use crate::dispatch::inflight;
use crate::dispatch::middleware::{MethodCall, MethodResponse, MethodService, Stack};
use crate::dispatch::order;
#[cfg(not(feature = "metrics"))]
use crate::dispatch::router::call_method;
use crate::dispatch::router::{Called, MethodFuture, MethodResult, Router, panicked, written_result};
use crate::dispatch::signal::Signal;
use crate::wire::error::{ErrorObject, INVALID_REQUEST, REQUEST_CANCELLED};

/// Limits that protect a server from oversized or abusive input.
///
/// Start from the defaults and change what you need:
///
/// ```
/// use rpc_runtime::Limits;
///
/// let limits = Limits::default().max_message_size(64 * 1024).max_batch_len(10);
/// assert_eq!((limits.max_message_size, limits.max_batch_len), (64 * 1024, 10));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted message, in bytes (default 10 MiB). A larger frame is
    /// skipped and answered with -32600; the connection stays usable.
    pub max_message_size: usize,
    /// Most entries accepted in one batch (default 1,000).
    pub max_batch_len: usize,
    /// Most `async` requests running at once on one connection (default
    /// 1,024), counting each waiting entry of a batch. A request beyond that
    /// (or a batch whose entries do not all fit) is answered with -32000 at
    /// once.
    pub max_concurrent_requests: usize,
    /// Most bytes of answers and outgoing calls queued on one connection
    /// and not yet written (default 4 MiB). Past it, tasks with more to
    /// send wait, and the connection stops reading new requests until the
    /// other side reads: a peer that never reads costs at most this much
    /// (plus the message being answered). A single larger message is still
    /// sent, alone.
    pub max_queued_bytes: usize,
    /// Most subscriptions open at once on one connection (default 1,024).
    /// A subscribe call beyond it is answered with -32000 and opens nothing.
    pub max_subscriptions: usize,
    /// Most items of one subscription waiting to be written (default
    /// 1,024), on either side. A server's `SubscriptionSink::send` waits for room;
    /// `SubscriptionSink::try_send` finding no room ends the subscription with
    /// [`SUBSCRIPTION_LAGGED`](crate::wire::SUBSCRIPTION_LAGGED) (the slow-reader
    /// policy). On a client, a stream whose items are not read ends with
    /// [`ClientError::Lagged`](crate::ClientError::Lagged) and unsubscribes.
    pub subscription_buffer: usize,
}

impl Limits {
    /// These limits with the largest accepted message, in bytes set to `max_message_size` (see the field).
    pub const fn max_message_size(mut self, max_message_size: usize) -> Self {
        self.max_message_size = max_message_size;
        self
    }

    /// These limits with the most entries accepted in one batch set to `max_batch_len` (see the field).
    pub const fn max_batch_len(mut self, max_batch_len: usize) -> Self {
        self.max_batch_len = max_batch_len;
        self
    }

    /// These limits with the most `async` requests running at once on one connection set to `max_concurrent_requests` (see the field).
    pub const fn max_concurrent_requests(mut self, max_concurrent_requests: usize) -> Self {
        self.max_concurrent_requests = max_concurrent_requests;
        self
    }

    /// These limits with the most bytes of answers and outgoing calls queued on one connection set to `max_queued_bytes` (see the field).
    pub const fn max_queued_bytes(mut self, max_queued_bytes: usize) -> Self {
        self.max_queued_bytes = max_queued_bytes;
        self
    }

    /// These limits with the most subscriptions open at once on one connection set to `max_subscriptions` (see the field).
    pub const fn max_subscriptions(mut self, max_subscriptions: usize) -> Self {
        self.max_subscriptions = max_subscriptions;
        self
    }

    /// These limits with the most items of one subscription waiting to be written set to `subscription_buffer` (see the field).
    pub const fn subscription_buffer(mut self, subscription_buffer: usize) -> Self {
        self.subscription_buffer = subscription_buffer;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_size: 10 * 1024 * 1024,
            max_batch_len: 1_000,
            max_concurrent_requests: 1_024,
            max_queued_bytes: 4 * 1024 * 1024,
            max_subscriptions: 1_024,
            subscription_buffer: 1_024,
        }
    }
}

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

/// The id of a request as it appeared on the wire, or `None` for a
/// notification (which is never answered).
type OwnedId = Option<Box<str>>;

const NULL_ID: &str = "null";

/// The part of a message's answer that waits on `async` methods.
///
/// Run it (typically on its own task) with [`PendingResponse::run`], or turn
/// it away with [`PendingResponse::reject`] when a limit is hit.
pub struct PendingResponse {
    shape: PendingShape,
    /// For a batch, the responses already written, back to back; its done
    /// entries point into it.
    body: Vec<u8>,
}

impl std::fmt::Debug for PendingResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.shape {
            PendingShape::Single { method, .. } => f.debug_struct("PendingResponse").field("method", method).finish(),
            PendingShape::Batch(entries) => {
                let pending = entries.iter().filter(|entry| matches!(entry, BatchEntry::Pending { .. })).count();
                f.debug_struct("PendingResponse").field("batch", &entries.len()).field("pending", &pending).finish()
            }
        }
    }
}

enum PendingShape {
    Single { id: OwnedId, method: Box<str>, future: MethodFuture, quiet: Quiet },
    Batch(Vec<BatchEntry>),
}

/// Raised when a request was cancelled on a connection that does not
/// answer cancelled requests (MCP); then it is not answered.
type Quiet = Option<Arc<Signal>>;

/// Whether the answer to a request that ended with `quiet` is left unsent.
fn silenced(quiet: &Quiet) -> bool {
    quiet.as_ref().is_some_and(|signal| signal.is_raised())
}

enum BatchEntry {
    /// Where the response is in the pending response's `body`, or nothing
    /// for a notification.
    Done(Option<Range<usize>>),
    Pending {
        id: OwnedId,
        method: Box<str>,
        future: MethodFuture,
        quiet: Quiet,
    },
}

/// A request's members, as the engine reads them: a message with other
/// members (a response's `result` or `error`) is no request, and they are
/// skipped unread.
#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(default, deserialize_with = "version_member")]
    pub(crate) jsonrpc: Option<Version>,
    #[serde(borrow, default, deserialize_with = "method_member")]
    pub(crate) method: Option<MethodMember<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    /// The request object's text, set once decoded: read again only to
    /// say what is wrong with its `jsonrpc` member.
    #[serde(skip)]
    pub(crate) text: &'a str,
}

/// A single message's members with a response's too: `result` and `error`
/// only matter to a connection, which takes responses off the stream (see
/// [`Engine::process_incoming`]).
#[derive(Deserialize)]
pub(crate) struct Message<'a> {
    #[serde(default, deserialize_with = "version_member")]
    pub(crate) jsonrpc: Option<Version>,
    #[serde(borrow, default, deserialize_with = "method_member")]
    pub(crate) method: Option<MethodMember<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) error: Option<&'a RawValue>,
}

impl<'a> Message<'a> {
    /// Response-shaped: no `method`, a `result` or an `error`. One without
    /// an `id` is still taken off the stream (and dropped), not answered.
    pub(crate) fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    /// The method name, unescaped, if it is a string (`text` is the
    /// message this was decoded from).
    pub(crate) fn method_name(&self, text: &'a str) -> Option<Cow<'a, str>> {
        self.method.and_then(|member| method_name(member, text))
    }

    /// The members the engine reads.
    pub(crate) fn into_request(self, text: &'a str) -> Envelope<'a> {
        Envelope { jsonrpc: self.jsonrpc, method: self.method, params: self.params, id: self.id, text }
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

/// The `jsonrpc` member as written, read again only to say why it is wrong.
#[derive(Deserialize)]
struct VersionOnly<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
}

/// Used when the envelope as a whole does not decode, to still echo the id.
#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// A request's `method` member as serde reads a string, in the one pass
/// over the envelope: no raw value to take apart after, and nothing to
/// drop (a name with escapes is decoded again, from the message, only
/// then; see [`method_name`]).
#[derive(Clone, Copy)]
pub(crate) enum MethodMember<'a> {
    /// A string written without escapes: the text between its quotes.
    Plain(&'a str),
    /// A string with escapes.
    Escaped,
    /// Any other JSON value.
    NotString,
}

impl<'de> Deserialize<'de> for MethodMember<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MethodVisitor)
    }
}

/// The visitor methods of a member that is expected to be a string, for
/// every other JSON value: each is read past (its contents ignored) and
/// is `$other`.
macro_rules! not_a_string {
    ($other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($other)
        }
    };
}

struct MethodVisitor;

impl<'de> Visitor<'de> for MethodVisitor {
    type Value = MethodMember<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a method name")
    }
    fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Self::Value, E> {
        Ok(MethodMember::Plain(name))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(MethodMember::Escaped)
    }
    not_a_string!(MethodMember::NotString);
}

/// A present `method` member, `null` included (absent is `None`).
fn method_member<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<MethodMember<'de>>, D::Error> {
    MethodMember::deserialize(deserializer).map(Some)
}

/// The name a `method` member (of the request object `text`) holds, if it
/// is a string: a name with escapes is decoded again from `text`.
pub(crate) fn method_name<'a>(member: MethodMember<'a>, text: &'a str) -> Option<Cow<'a, str>> {
    match member {
        MethodMember::Plain(name) => Some(Cow::Borrowed(name)),
        MethodMember::Escaped => unescaped_method(text),
        MethodMember::NotString => None,
    }
}

/// The `method` of request object `text`, read again as a string.
#[cold]
#[inline(never)]
fn unescaped_method(text: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct MethodOnly<'a> {
        #[serde(borrow)]
        method: Cow<'a, str>,
    }
    serde_json::from_str::<MethodOnly<'_>>(text).ok().map(|only| only.method)
}

/// A request's `jsonrpc` member: whether it is `"2.0"` (escaped or not);
/// what it is otherwise is read again from the message (see [`Why::Version`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version(bool);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(VersionVisitor)
    }
}

struct VersionVisitor;

impl<'de> Visitor<'de> for VersionVisitor {
    type Value = Version;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"2.0\"")
    }
    fn visit_str<E>(self, version: &str) -> Result<Self::Value, E> {
        Ok(Version(version == "2.0"))
    }
    not_a_string!(Version(false));
}

/// A present `jsonrpc` member, `null` included (absent is `None`).
fn version_member<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Version>, D::Error> {
    Version::deserialize(deserializer).map(Some)
}

/// Keeps `"id": null` (present) apart from a missing id.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(deserializer).map(Some)
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
    pub fn with_dialect(self, dialect: impl Dialect) -> Self {
        self.with_shared_dialect(Some(SharedDialect::new(dialect)))
    }

    /// The same engine with `dialect`, or none.
    pub(crate) fn with_shared_dialect(self, dialect: Option<SharedDialect>) -> Self {
        Engine { dialect: dialect.map(|shared| shared.0), ..self }
    }

    /// The same router with other limits.
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
        let Ok(text) = std::str::from_utf8(without_bom(message)) else {
            tracing::debug!("message is not UTF-8");
            write_error(out, NULL_ID, &ErrorObject::parse_error());
            return None;
        };
        let first = text.bytes().find(|b| !b.is_ascii_whitespace());
        if first == Some(b'[') { self.process_batch(text, cx, out) } else { self.process_single(text, cx, out) }
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
        let Ok(text) = std::str::from_utf8(without_bom(message)) else { return Incoming::Other };
        if text.bytes().find(|b| !b.is_ascii_whitespace()) == Some(b'[') {
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
        let (entries, len) = match read_batch(text, self.limits.max_batch_len) {
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
                Ok(_) if !entry.get().starts_with('{') => Dispatched::invalid(out, None, None),
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

    /// Runs one request, appending its response (if any) to `out`. The
    /// envelope is borrowed: moved, its six members were copied on each call.
    ///
    /// The usual request (a valid id or none, `"2.0"`, a method name
    /// without escapes that is in the table, params absent or structured)
    /// to an engine with nothing around its calls (no layers, dialect,
    /// cancellation or metrics) and with `DEBUG` tracing off is served
    /// here, by a function small enough to keep its values in registers:
    /// it does what [`Engine::dispatch_general`] does for such a request,
    /// with the features that would only have been checked left out
    /// (their span would have been empty). Everything else, and any
    /// request that does not qualify, goes there.
    #[cfg(not(feature = "metrics"))]
    fn dispatch(&self, envelope: &Envelope<'_>, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        let id = match envelope.id {
            None => None,
            Some(raw) if is_valid_id(raw) => Some(raw.get()),
            Some(_) => return self.dispatch_general(envelope, cx, out),
        };
        let (Some(Version(true)), Some(MethodMember::Plain(method))) = (envelope.jsonrpc, envelope.method) else {
            return self.dispatch_general(envelope, cx, out);
        };
        let structured =
            envelope.params.is_none_or(|params| matches!(params.get().as_bytes().first(), Some(b'[' | b'{')));
        let bare = self.layers.is_none() && self.dialect.is_none() && !self.router.ordered();
        if !(structured && bare) || cx.tracks(id) || super::span::enabled() {
            return self.dispatch_general(envelope, cx, out);
        }
        let Some(found) = self.router.find(method) else {
            if self.router.serves_unlisted(method) {
                return self.dispatch_general(envelope, cx, out);
            }
            not_found(out, id, &tracing::Span::none());
            return Dispatched::Written;
        };
        let start = out.len();
        out.extend_from_slice(RESULT_HEAD);
        match call_method(found, method, envelope.params, id.is_none(), cx, out) {
            Ok(()) => {
                match id {
                    Some(id) => write_response_tail(out, id),
                    None => out.truncate(start),
                }
                Dispatched::Written
            }
            Err(called) => {
                out.truncate(start);
                let unwritten = Unwritten { method, id, span: tracing::Span::none(), quiet: None };
                unwritten.finish(Some(called), out)
            }
        }
    }

    /// [`Engine::dispatch`] with metrics: every request is counted, the
    /// usual one too.
    #[cfg(feature = "metrics")]
    fn dispatch(&self, envelope: &Envelope<'_>, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        self.dispatch_general(envelope, cx, out)
    }

    /// [`Engine::dispatch`] of any request: checks and answers every
    /// malformed one, and runs the call through what is around it.
    ///
    /// Cold to the optimizer (not to a server with tracing on): without
    /// it, each of the fast path's branches here counted as an even
    /// chance, the fast path's own call as rare, and the call's unwinding
    /// boundary was left out of line.
    #[cfg_attr(not(feature = "metrics"), cold, inline(never))]
    #[cfg_attr(feature = "metrics", inline)]
    fn dispatch_general(&self, envelope: &Envelope<'_>, cx: &Context, out: &mut Vec<u8>) -> Dispatched {
        // An id of the wrong type cannot be echoed: the answer carries null.
        let id = match envelope.id {
            None => None,
            Some(raw) if is_valid_id(raw) => Some(raw.get()),
            Some(_) => return Dispatched::invalid(out, None, Some(Why::IdType)),
        };
        if let (Some(dialect), Some(raw), Some(echo)) = (&self.dialect, envelope.id, id)
            && let Err(error) = dialect.check_id(raw)
        {
            write_error(out, echo, &error);
            return Dispatched::Written;
        }
        let Some(method) = envelope.method else {
            // Neither `jsonrpc` nor `method` (the specification's
            // `{"foo": "boo"}`): nothing of a request, answered bare.
            let why = envelope.jsonrpc.map(|_| Why::NoMethod);
            return Dispatched::invalid(out, id, why);
        };
        let version_ok = envelope.jsonrpc == Some(Version(true));
        if !version_ok {
            return Dispatched::invalid(out, id, Some(Why::Version(envelope.text)));
        }
        // The specification's own examples answer a `method` that is not a
        // string and `params` that are not structured with the bare error
        // object: so do we, byte for byte. Every other cause is in `data`.
        let method = match method {
            MethodMember::Plain(name) => Cow::Borrowed(name),
            escaped => match method_name(escaped, envelope.text) {
                Some(name) => name,
                None => return Dispatched::invalid(out, id, None),
            },
        };
        let method = &*method;
        let found = self.router.find(method);
        if let Some(params) = envelope.params
            && !matches!(params.get().as_bytes().first(), Some(b'[' | b'{'))
        {
            return Dispatched::invalid(out, id, None);
        }
        let span = super::span::call(method, id, cx);
        let entered = span.enter();
        #[cfg(feature = "metrics")]
        let metered = self.metrics.start(method);
        // The registration for cancellation, if any, stays inside
        // `call_tracked_or_layered`: the plain path carries no guard to drop.
        let plain = self.layers.is_none() && !cx.tracks(id) && !self.ordered_on(cx);
        if plain && found.is_none() && !self.router.serves_unlisted(method) {
            #[cfg(feature = "metrics")]
            metered.ready(None);
            not_found(out, id, &span);
            return Dispatched::Written;
        }
        // The result is encoded in place, right after the response's head.
        let start = out.len();
        out.extend_from_slice(RESULT_HEAD);
        let mut quiet = None;
        let mut called = None;
        let written = if plain {
            self.router.call_found(method, found, envelope.params, id.is_none(), cx, out, &mut called)
        } else {
            let (layered, silenced_by) = self.call_tracked_or_layered(method, envelope.params, id, cx, out);
            quiet = silenced_by;
            called = layered;
            matches!(called, Some(Called::Written))
        };
        #[cfg(feature = "metrics")]
        metered.ready(if written { Some(&Called::Written) } else { called.as_ref() });
        // The usual outcome finished here; the others out of line, so
        // that this path does not keep an error's or a future's words.
        if written {
            match id {
                Some(id) => write_response_tail(out, id),
                None => out.truncate(start),
            }
            return Dispatched::Written;
        }
        out.truncate(start);
        drop(entered);
        Unwritten {
            method,
            id,
            span,
            quiet,
            #[cfg(feature = "metrics")]
            metered,
        }
        .finish(called, out)
    }
}

/// A call whose answer was not written in place, as [`Engine::dispatch`]
/// hands it on: what is needed to say why, or to wait for its future.
struct Unwritten<'a> {
    method: &'a str,
    id: Option<&'a str>,
    span: tracing::Span,
    quiet: Quiet,
    #[cfg(feature = "metrics")]
    metered: super::metrics::Metered<'a>,
}

impl Unwritten<'_> {
    /// Answers `called` (no method, a failure) into `out`, or hands its
    /// future on.
    #[inline(never)]
    fn finish(self, called: Option<Called>, out: &mut Vec<u8>) -> Dispatched {
        let Unwritten { method, id, span, quiet, .. } = self;
        match called {
            None => not_found(out, id, &span),
            Some(Called::Failed(err)) => {
                let _entered = span.enter();
                failed(out, id, &err, &span, method);
            }
            Some(Called::Written) => {}
            Some(Called::Pending(future)) => {
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
    /// The call of a request registered for cancellation, or through
    /// layers, with a context of its own. A call that waits keeps the
    /// registration's guard in its future (see `inflight::track`), which
    /// comes back with the signal that silences its answer; any other
    /// call is over, and the guard is dropped here.
    #[inline(never)]
    fn call_tracked_or_layered(
        &self,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&str>,
        cx: &Context,
        out: &mut Vec<u8>,
    ) -> (Option<Called>, Quiet) {
        let (cx, guard) = cx.for_request(id);
        let mut ticket = None;
        if let (true, Some(link)) = (self.router.ordered(), &cx.link)
            && let Some(found) = self.router.find(method)
        {
            let admission = link.gate().admit(found.spec.exclusive);
            if !admission.now() {
                let future = self.deferred(method, params, id, cx.into_owned(), admission);
                let (future, quiet) = inflight::track(future, guard);
                return (Some(Called::Pending(future)), quiet);
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
            (Some(Called::Pending(future)), Some(ticket)) => Some(match poll_once(future, method, out) {
                Called::Pending(future) => Called::Pending(Box::pin(async move {
                    let result = future.await;
                    drop(ticket);
                    result
                })),
                done => done,
            }),
            (called, _) => called,
        };
        match called {
            Some(Called::Pending(future)) => {
                let (future, quiet) = inflight::track(future, guard);
                (Some(Called::Pending(future)), quiet)
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
) -> Option<Called> {
    match layers {
        None => router.call_into(method, params, id.is_none(), &cx, out),
        Some(layers) => Some(layers.call(method, params, cx.into_owned(), id, out)),
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
                Some(Called::Written) => written_result(out),
                Some(Called::Failed(error)) => Err(error),
                Some(Called::Pending(future)) => future.await,
                None => Err(ErrorObject::method_not_found()),
            };
            drop(ticket);
            result
        })
    }
}

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

impl Dispatched {
    #[cold]
    #[inline(never)]
    fn invalid(out: &mut Vec<u8>, id: Option<&str>, why: Option<Why<'_>>) -> Self {
        let error = match why {
            Some(why) => why.error(),
            None => ErrorObject::invalid_request(),
        };
        write_error(out, id.unwrap_or(NULL_ID), &error);
        Dispatched::Written
    }
}

/// Why a request object is invalid, said in the -32600 error's `data`.
enum Why<'a> {
    /// `"id"` is not a string, a number or null.
    IdType,
    /// `"jsonrpc"` is missing (JSON-RPC 1.0) or not `"2.0"`, in the request
    /// object that is this text.
    Version(&'a str),
    /// No `"method"` member.
    NoMethod,
}

impl Why<'_> {
    #[cold]
    fn error(self) -> ErrorObject {
        let reason = match self {
            Why::IdType => "\"id\" must be a string, a number or null".to_owned(),
            Why::Version(text) => match serde_json::from_str::<VersionOnly<'_>>(text) {
                Ok(VersionOnly { jsonrpc: Some(raw) }) => {
                    format!("\"jsonrpc\" must be \"2.0\", got {}", truncated(raw.get()))
                }
                _ => "\"jsonrpc\" must be \"2.0\"; it is missing (JSON-RPC 1.0 requests are not supported)".to_owned(),
            },
            Why::NoMethod => "\"method\" is missing".to_owned(),
        };
        ErrorObject::invalid_request().with_data(&reason)
    }
}

/// At most 64 bytes of `text` (on a char boundary), for a reason.
fn truncated(text: &str) -> &str {
    let mut end = text.len().min(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// -32600 for an entry that did not decode as a request object: bare for
/// a non-object (as the specification's examples answer), else with the
/// decoder's reason in `data`.
#[cold]
fn not_a_request(text: &str, err: &serde_json::Error) -> ErrorObject {
    if !text.trim_start().starts_with('{') {
        return ErrorObject::invalid_request();
    }
    let mut reason = err.to_string();
    if let Some(at) = reason.rfind(" at line ") {
        reason.truncate(at);
    }
    ErrorObject::invalid_request().with_data(&format!("not a request object: {reason}"))
}

impl PendingResponse {
    /// How many `async` method calls this waits on: one for a single
    /// request, the number of waiting entries for a batch. Each counts
    /// against [`Limits::max_concurrent_requests`].
    pub fn calls(&self) -> usize {
        match &self.shape {
            PendingShape::Single { .. } => 1,
            PendingShape::Batch(entries) => {
                entries.iter().filter(|entry| matches!(entry, BatchEntry::Pending { .. })).count()
            }
        }
    }

    /// Waits for every `async` method and returns the complete answer
    /// (empty when nothing is to be sent). A method that panics is answered
    /// with -32603; the others are unaffected.
    pub async fn run(self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.shape {
            PendingShape::Single { id, method, future, quiet } => {
                let result = CatchUnwind(future).await.unwrap_or_else(|panic| Err(panicked(&method, &*panic)));
                if let Some(id) = id.filter(|_| !silenced(&quiet)) {
                    write_response(&mut out, &id, &result);
                }
            }
            PendingShape::Batch(entries) => {
                // Spawn so that the batch's entries run concurrently (and in
                // parallel on a multi-threaded runtime).
                let mut tasks = Vec::with_capacity(entries.len());
                for entry in entries {
                    tasks.push(match entry {
                        BatchEntry::Done(piece) => Err(piece),
                        BatchEntry::Pending { id, method, future, quiet } => {
                            Ok((id, method, quiet, tokio::spawn(future)))
                        }
                    });
                }
                for task in tasks {
                    match task {
                        Err(piece) => push_piece(&mut out, piece.map(|range| &self.body[range])),
                        Ok((id, method, quiet, handle)) => {
                            let result = match handle.await {
                                Ok(result) => result,
                                Err(err) if err.is_panic() => Err(panicked(&method, &*err.into_panic())),
                                Err(_) => Err(ErrorObject::internal_error("Internal error: the request was aborted")),
                            };
                            if let Some(id) = id.filter(|_| !silenced(&quiet)) {
                                let mut piece = Vec::new();
                                write_response(&mut piece, &id, &result);
                                push_piece(&mut out, Some(&piece));
                            }
                        }
                    }
                }
                if !out.is_empty() {
                    out.push(b']');
                }
            }
        }
        out
    }

    /// Answers every waiting request with `error` instead of running it
    /// (used when the connection's concurrency limit is reached). Entries
    /// that were already answered keep their answers.
    pub fn reject(self, error: &ErrorObject) -> Vec<u8> {
        let mut out = Vec::new();
        match self.shape {
            PendingShape::Single { id, .. } => {
                if let Some(id) = id {
                    write_error(&mut out, &id, error);
                }
            }
            PendingShape::Batch(entries) => {
                for entry in entries {
                    match entry {
                        BatchEntry::Done(piece) => push_piece(&mut out, piece.map(|range| &self.body[range])),
                        BatchEntry::Pending { id: Some(id), .. } => {
                            let mut piece = Vec::new();
                            write_error(&mut piece, &id, error);
                            push_piece(&mut out, Some(&piece));
                        }
                        BatchEntry::Pending { id: None, .. } => {}
                    }
                }
                if !out.is_empty() {
                    out.push(b']');
                }
            }
        }
        out
    }
}

/// `message` without a leading UTF-8 byte-order mark. Skipped here rather
/// than in the framing so that every transport (and both framings, where a
/// `Content-Length` counts the mark as part of the body) agree.
fn without_bom(message: &[u8]) -> &[u8] {
    // A slice pattern: the usual message is told by its first byte
    // (`strip_prefix` compared all three bytes every time).
    match message {
        [0xEF, 0xBB, 0xBF, rest @ ..] => rest,
        _ => message,
    }
}

/// How many entries of a batch are kept on the stack (more go to the heap).
const INLINE_ENTRIES: usize = 16;

/// The entries of a batch: the first [`INLINE_ENTRIES`] inline, so that
/// a usual batch is read without an allocation.
struct BatchEntries<'a> {
    inline: [Option<&'a RawValue>; INLINE_ENTRIES],
    more: Vec<&'a RawValue>,
}

impl<'a> BatchEntries<'a> {
    fn push(&mut self, entry: &'a RawValue, len: usize) {
        match self.inline.get_mut(len) {
            Some(slot) => *slot = Some(entry),
            None => self.more.push(entry),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &'a RawValue> + '_ {
        self.inline.iter().map_while(|entry| *entry).chain(self.more.iter().copied())
    }
}

/// Splits a batch into its entries, keeping at most `max` of them: the rest
/// are only checked and counted, so that a huge batch of tiny entries costs
/// no memory beyond the limit before it is refused. Returns the kept entries
/// and the batch's length.
fn read_batch(text: &str, max: usize) -> Result<(BatchEntries<'_>, usize), serde_json::Error> {
    struct Entries {
        max: usize,
    }
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = (BatchEntries<'de>, usize);
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a batch of requests")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut entries = BatchEntries { inline: [None; INLINE_ENTRIES], more: Vec::new() };
            let mut len = 0;
            while len < self.max {
                match seq.next_element::<&'de RawValue>()? {
                    Some(entry) => {
                        entries.push(entry, len);
                        len += 1;
                    }
                    None => return Ok((entries, len)),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {
                len += 1;
            }
            Ok((entries, len))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let batch = de.deserialize_seq(Entries { max })?;
    de.end()?;
    Ok(batch)
}

/// Decides between -32700 and -32600 for a message that did not decode as
/// a request object, and recovers its id when it can be read.
#[cold]
fn classify_top_level<'a>(text: &'a str, err: &serde_json::Error) -> (&'a str, ErrorObject) {
    let syntax = match err.classify() {
        Category::Eof | Category::Io => true,
        // A type error may come before a syntax error further on; and a
        // string no Rust string can hold (an escaped lone surrogate, which
        // JSON's grammar allows) is a syntax error to serde only where it is
        // read as a string: in `method` or `jsonrpc`, it is an invalid request.
        Category::Data | Category::Syntax => serde_json::from_str::<IgnoredAny>(text).is_err(),
    };
    if syntax {
        tracing::debug!(error = %err, "message is not valid JSON");
        (NULL_ID, ErrorObject::parse_error())
    } else {
        tracing::debug!(error = %err, "message is not a request object");
        (id_of_broken(text), not_a_request(text, err))
    }
}

/// The id of a request object that failed to decode, or `null`.
fn id_of_broken(text: &str) -> &str {
    match serde_json::from_str::<IdOnly<'_>>(text) {
        Ok(IdOnly { id: Some(id) }) if is_valid_id(id) => id.get(),
        _ => NULL_ID,
    }
}

/// String, number or null, as the spec requires.
fn is_valid_id(raw: &RawValue) -> bool {
    // `raw` is valid JSON: its first byte says its type.
    raw.get().as_bytes().first().is_some_and(|&byte| ID_START[usize::from(byte)])
}

/// The bytes a string, a number or null starts with: one load, where the
/// four ranges cost a comparison each.
const ID_START: [bool; 256] = {
    let mut starts = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        starts[byte] = matches!(byte as u8, b'"' | b'-' | b'0'..=b'9' | b'n');
        byte += 1;
    }
    starts
};

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

/// An answer of -32601 `Method not found`, up to its id.
const METHOD_NOT_FOUND_HEAD: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"#;

/// What a success response starts with, up to its result.
const RESULT_HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"result\":";

fn write_response(out: &mut Vec<u8>, id: &str, result: &MethodResult) {
    match result {
        Ok(value) => {
            out.extend_from_slice(RESULT_HEAD);
            out.extend_from_slice(value.get().as_bytes());
            write_response_tail(out, id);
        }
        Err(error) => write_error(out, id, error),
    }
}

/// Closes a success response whose result is already written.
#[inline(always)]
fn write_response_tail(out: &mut Vec<u8>, id: &str) {
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

pub(crate) fn write_error(out: &mut Vec<u8>, id: &str, error: &ErrorObject) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"error\":");
    error.write_json(out);
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// Appends one batch response to `out`, which holds `[a,b,...` so far (or
/// nothing); a notification's `None` adds nothing. The caller closes with `]`
/// when anything was written (an all-notification batch sends nothing).
fn push_piece(out: &mut Vec<u8>, piece: Option<&[u8]>) {
    if let Some(piece) = piece {
        out.push(if out.is_empty() { b'[' } else { b',' });
        out.extend_from_slice(piece);
    }
}

/// Polls a future, turning a panic into an `Err` with its payload.
pub(crate) struct CatchUnwind(pub(crate) MethodFuture);

impl Future for CatchUnwind {
    type Output = Result<MethodResult, Box<dyn std::any::Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let future = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::params::Params;
    use crate::dispatch::router::MethodOutcome;
    use crate::spec::{MethodSpec, ParamSpec};

    #[test]
    fn method_not_found_is_written_as_write_error_writes_it() {
        let mut written = Vec::new();
        write_error(&mut written, "7", &ErrorObject::method_not_found());
        assert_eq!(written, [METHOD_NOT_FOUND_HEAD, b"7}"].concat());
    }

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

    /// The fast path (tracing off) answers every request byte for byte
    /// as the general one does (taken when a subscriber wants `DEBUG`).
    #[test]
    fn the_fast_path_answers_as_the_general_one() {
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
        let fast: Vec<Vec<u8>> = messages.iter().map(|message| answer(&engine, message)).collect();
        let subscriber =
            tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).with_writer(std::io::sink).finish();
        let general: Vec<Vec<u8>> = tracing::subscriber::with_default(subscriber, || {
            assert!(super::super::span::enabled());
            messages.iter().map(|message| answer(&engine, message)).collect()
        });
        for ((message, fast), general) in messages.iter().zip(&fast).zip(&general) {
            assert_eq!(String::from_utf8_lossy(fast), String::from_utf8_lossy(general), "{message}");
        }
        assert_eq!(fast[0], br#"{"jsonrpc":"2.0","result":3,"id":1}"#);
        assert_eq!(fast[6], br#"{"jsonrpc":"2.0","result":3,"id":4}"#, "an escaped name is read");
        assert!(fast[2].is_empty() && fast[9].is_empty() && fast[13].is_empty());
    }

    #[test]
    fn batch_entries_past_the_inline_ones_are_kept_in_order() {
        for len in [0, 1, INLINE_ENTRIES - 1, INLINE_ENTRIES, INLINE_ENTRIES + 1, 3 * INLINE_ENTRIES] {
            let text = format!("[{}]", (0..len).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
            let (entries, count) = read_batch(&text, 1_000).unwrap();
            let read: Vec<String> = entries.iter().map(|entry| entry.get().to_owned()).collect();
            assert_eq!((read, count), ((0..len).map(|i| i.to_string()).collect(), len));
            let (entries, count) = read_batch(&text, 2).unwrap();
            assert_eq!((entries.iter().count(), count), (len.min(2), len));
        }
    }
}
