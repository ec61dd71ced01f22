#![doc = include_str!("../../docs/peer.md")]

pub(crate) mod client;
mod connection;
mod outbox;
pub(crate) mod subscription;
pub(crate) mod transport;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::Instant;

use crate::dispatch::context::Context;
pub(crate) use crate::dispatch::dialect::Cancellation;
use crate::dispatch::dialect::SharedDialect;
use crate::dispatch::engine::Engine;
use crate::dispatch::inflight::Link;
use crate::dispatch::limits::Limits;
use crate::dispatch::router::Router;
use crate::dispatch::signal::Signal;
use client::{Batch, ClientError};
pub use client::{BatchReply, FromErrorObject, Notify};
#[cfg(feature = "http")]
pub(crate) use connection::Watch as SignalWatch;
pub(crate) use connection::{AtEof, Connection, Controls};
use outbox::Outbox;
pub use subscription::client::Subscribe;
use subscription::client::{Entry, Subscribed};
use subscription::server::Serving;
pub use subscription::server::{IntoSubscriptionEnd, PendingSubscription, SendError};
pub use transport::{MessageSink, MessageSource, Received};

/// Settings shared by both ends of a connection.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PeerOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancellation: Cancellation,
}

/// Why the connection stopped taking calls.
#[derive(Clone, Debug)]
enum Closed {
    /// The other side hung up, or this side closed it.
    Clean,
    /// Reading or writing failed.
    Failed(Arc<io::Error>),
}

impl Closed {
    fn error<E>(&self) -> ClientError<E> {
        match self {
            Closed::Clean => ClientError::Closed,
            Closed::Failed(err) => ClientError::Transport(Arc::clone(err)),
        }
    }
}

/// What an outgoing call receives: the result's raw JSON, or why not.
pub(crate) type Reply = Result<Box<RawValue>, ClientError>;

/// A message for the connection task to send.
struct Outgoing {
    bytes: Vec<u8>,
    /// Told once the bytes were handed to the transport and flushed.
    written: Option<oneshot::Sender<()>>,
    /// Its share of the connection's byte budget, given back once written.
    _budget: Option<OwnedSemaphorePermit>,
    /// For a subscription's item: its place in the subscription's buffer,
    /// given back once written.
    _room: Option<OwnedSemaphorePermit>,
}

impl Outgoing {
    /// A message outside the byte budget (small, and at most one per call
    /// or subscription: a cancellation, an unsubscribe, a last notification).
    fn unbudgeted(bytes: Vec<u8>) -> Self {
        Outgoing { bytes, written: None, _budget: None, _room: None }
    }
}

/// An outgoing call waiting for its answer.
enum Waiter {
    /// A call: its answer goes to the caller.
    Call(oneshot::Sender<Reply>),
    /// A subscribe call: on success its subscription is registered (before
    /// any later message is read, so that no item is missed), then the
    /// answer goes to the caller.
    Subscribe(oneshot::Sender<Reply>, Entry),
    /// A call whose answer nobody waits for (an unsubscribe sent on drop).
    Detached,
}

impl Waiter {
    /// Fails the call with `err`.
    fn fail(self, err: ClientError) {
        match self {
            Waiter::Call(reply) | Waiter::Subscribe(reply, _) => {
                let _ = reply.send(Err(err));
            }
            Waiter::Detached => {}
        }
    }
}

struct Calls {
    pending: HashMap<u64, Waiter>,
    closed: Option<Closed>,
}

struct Shared {
    /// Messages for the connection task. Unbounded in count: what bounds it
    /// is `budget`, in bytes.
    outbox: Outbox<Outgoing>,
    /// Bytes queued in `outbox` and not yet written, at most
    /// [`Limits::max_queued_bytes`]: a sender waits for room, so a peer
    /// that stops reading holds at most that much of our answers.
    budget: Arc<Semaphore>,
    budget_bytes: usize,
    next_id: AtomicU64,
    calls: Mutex<Calls>,
    options: PeerOptions,
    /// What dispatch sees of the connection: the stop signal (raised by
    /// close(), the last handle dropped, the other side gone, writing
    /// failed; running handlers see it as cancellation) and the running
    /// requests that may be cancelled.
    link: Arc<Link>,
    /// Raised once the connection takes no more calls.
    closed: Signal,
    /// Subscriptions this side serves (made by the other side's calls).
    serving: Serving,
    /// Subscriptions this side made, whose items it receives.
    subscribed: Subscribed,
}

use crate::sync::lock;

impl Shared {
    /// Fails every pending call and refuses new ones.
    fn close(&self, reason: Closed) {
        let (pending, reason) = {
            let mut calls = lock(&self.calls);
            // The first reason stays.
            let reason = calls.closed.get_or_insert(reason).clone();
            (std::mem::take(&mut calls.pending), reason)
        };
        for (_, waiter) in pending {
            waiter.fail(reason.error());
        }
        self.serving.close_all();
        self.subscribed.close_all(&reason);
        self.closed.raise();
    }

    fn closed_error<E>(&self) -> ClientError<E> {
        lock(&self.calls).closed.as_ref().map_or(ClientError::Closed, Closed::error)
    }

    /// Queues `bytes` for the connection task once they fit in the byte
    /// budget; `written` is told after they were flushed.
    async fn send(&self, bytes: Vec<u8>, written: Option<oneshot::Sender<()>>) -> Result<(), ClientError> {
        self.queue(bytes, written, None).await
    }

    /// The share of the byte budget a message of `len` bytes takes: a
    /// message larger than the whole budget takes all of it.
    fn share(&self, len: usize) -> u32 {
        len.clamp(1, self.budget_bytes).min(u32::MAX as usize) as u32
    }

    /// Queues a subscription's item once it fits in the byte budget; it
    /// keeps `room` (its place in the subscription's buffer) until written.
    async fn send_item(&self, bytes: Vec<u8>, room: OwnedSemaphorePermit) -> Result<(), ClientError> {
        self.queue(bytes, None, Some(room)).await
    }

    /// Takes `bytes`' share of the byte budget, then hands them to the
    /// connection task with what it tells or holds until they are written.
    async fn queue(
        &self,
        bytes: Vec<u8>,
        written: Option<oneshot::Sender<()>>,
        room: Option<OwnedSemaphorePermit>,
    ) -> Result<(), ClientError> {
        let share = self.share(bytes.len());
        let permit = Arc::clone(&self.budget).acquire_many_owned(share).await.map_err(|_| self.closed_error())?;
        let outgoing = Outgoing { bytes, written, _budget: Some(permit), _room: room };
        self.outbox.send(outgoing).map_err(|_| self.closed_error())
    }

    /// [`Shared::send_item`] without waiting: `Ok(false)` when the byte
    /// budget has no room (the other side is not reading).
    fn try_send_item(&self, bytes: Vec<u8>, room: OwnedSemaphorePermit) -> Result<bool, ClientError> {
        let share = self.share(bytes.len());
        let permit = match Arc::clone(&self.budget).try_acquire_many_owned(share) {
            Ok(permit) => permit,
            Err(tokio::sync::TryAcquireError::NoPermits) => return Ok(false),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(self.closed_error()),
        };
        let outgoing = Outgoing { bytes, written: None, _budget: Some(permit), _room: Some(room) };
        self.outbox.send(outgoing).map(|()| true).map_err(|_| self.closed_error())
    }

    /// Queues a message outside the byte budget, for code that cannot wait
    /// (a drop); `false` when the connection is gone.
    fn push(&self, bytes: Vec<u8>) -> bool {
        self.outbox.send(Outgoing::unbudgeted(bytes)).is_ok()
    }

    /// Registers a call whose answer goes to `waiter`; fails if the
    /// connection is closed.
    fn register(&self, waiter: Waiter) -> Result<u64, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut calls = lock(&self.calls);
        if let Some(closed) = &calls.closed {
            return Err(closed.error());
        }
        calls.pending.insert(id, waiter);
        Ok(id)
    }

    /// Hands a response to the call waiting for it.
    fn deliver(&self, id: &RawValue, reply: Reply) {
        let waiting = id.get().parse::<u64>().ok().and_then(|id| lock(&self.calls).pending.remove(&id));
        match waiting {
            Some(Waiter::Call(tx)) => {
                let _ = tx.send(reply);
            }
            Some(Waiter::Subscribe(tx, entry)) => self.subscribed.answered(self, tx, entry, reply),
            Some(Waiter::Detached) => {}
            None => tracing::debug!(id = preview(id.get()), "dropped a response whose id matches no pending call"),
        }
    }

    /// Runs when a call gives up (dropped or timed out) before its answer.
    fn abandon(&self, id: u64, sent: bool, reason: &str) {
        let was_pending = {
            let mut calls = lock(&self.calls);
            match calls.pending.get(&id) {
                // Its answer is still wanted, to end the subscription it
                // opens (see `Subscribed::answered`).
                Some(Waiter::Subscribe(..)) if sent => false,
                Some(_) => calls.pending.remove(&id).is_some(),
                None => false,
            }
        };
        if !(was_pending && sent) {
            return;
        }
        if let Some(bytes) = self.options.cancellation.notification(id, reason) {
            // Drop cannot wait: queued outside the byte budget (it is small,
            // and there is at most one per call).
            if !self.push(bytes) {
                tracing::debug!(id, "could not queue a cancellation notification: the connection is closed");
            }
        }
    }

    /// Sends request `method` with params `[subscription]` and forgets its
    /// answer: an unsubscribe that nobody waits for (from a drop, or for
    /// a subscription nobody reads).
    fn unsubscribe_detached(&self, method: &str, subscription: &RawValue) {
        let Ok(id) = self.register(Waiter::Detached) else { return };
        let params = format!("[{}]", subscription.get());
        let params = RawValue::from_string(params).ok();
        if !self.push(request_bytes(method, params.as_deref(), Some(id))) {
            lock(&self.calls).pending.remove(&id);
        }
    }
}

/// A handle on a connection: call and notify the other side. Cheap to
/// clone; all clones share the connection.
///
/// Get one from [`Peer::builder`] (as a client), or inside a handler from
/// [`Context::peer`] (to call back the side that called you). Typed calls
/// go through the client that `#[rpc]` generates (`MyServiceClient::new(peer)`);
/// [`Peer::call`] and [`Peer::notify`] are the untyped equivalents.
///
/// Each call gets an id unique on this connection; any number of calls
/// from any number of tasks may be in flight at once, and their responses
/// are matched by id in whatever order they arrive. When the connection
/// closes, every pending call fails at once with [`ClientError::Closed`]
/// (or [`ClientError::Transport`] if the stream failed).
///
/// The connection lives while the other side keeps it open and, for a
/// peer from [`PeerBuilder`], while a handle to it exists: dropping the last
/// handle closes it.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
    /// Present on handles given to users; the last one closes the
    /// connection when dropped. Handles inside contexts do not keep it open.
    _life: Option<Arc<Lifeline>>,
}

struct Lifeline(Arc<Shared>);

impl Drop for Lifeline {
    fn drop(&mut self) {
        self.0.link.stop.raise();
    }
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("closed", &self.is_closed()).finish()
    }
}

/// Removes a call from the pending table unless it completed.
struct CallGuard<'a> {
    shared: &'a Shared,
    id: u64,
    sent: bool,
    done: bool,
    reason: &'static str,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.shared.abandon(self.id, self.sent, self.reason);
        }
    }
}

impl Peer {
    /// A builder for a connection: framing, the service this side answers,
    /// timeouts, cancellation, per-connection data, then a transport.
    pub fn builder() -> PeerBuilder {
        PeerBuilder::default()
    }

    /// Calls `method` on the other side and decodes its result as `R`.
    ///
    /// `params` must serialize to an array (by position), an object (by
    /// name), or `()`/`None` (no params); anything else, or a value that
    /// fails to serialize, is [`ClientError::Encode`].
    ///
    /// ```no_run
    /// # async fn run(peer: rpc_runtime::Peer) -> Result<(), rpc_runtime::ClientError> {
    /// let difference: i64 = peer.call("subtract", [42, 23]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call<R, P>(&self, method: &str, params: P) -> Result<R, ClientError>
    where
        R: serde::de::DeserializeOwned,
        P: Serialize,
    {
        let encoded = crate::peer::client::encode_any_params(&params).map_err(ClientError::Encode)?;
        // Not kept while waiting: only the request's bytes are needed, and
        // only until they are queued (see `call_owned`).
        drop(params);
        let raw = self.call_owned(method, encoded, None).await?;
        serde_json::from_str(raw.get()).map_err(ClientError::Decode)
    }

    /// Sends notification `method`; returns once it is queued for the
    /// writer, in order with every message sent before it (it waits only
    /// while the connection's outgoing byte budget is full, that is while
    /// the other side is not reading). There is never an answer. `params`
    /// as for [`Peer::call`].
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), ClientError> {
        let bytes = {
            let encoded = crate::peer::client::encode_any_params(&params).map_err(ClientError::Encode)?;
            request_bytes(method, encoded.as_deref(), None)
        };
        // Waiting for room may take long (the other side may not read):
        // hold only the bytes.
        drop(params);
        self.queue(bytes, self.shared.options.timeout).await
    }

    /// Calls `method` with `params` given as raw JSON (an array or object),
    /// waiting at most `timeout` (or the connection's default when `None`).
    /// Returns the result as raw JSON.
    pub async fn call_raw(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, ClientError> {
        self.call_with(|id| request_bytes(method, params, Some(id)), timeout).await
    }

    /// [`Peer::call_raw`] with params it owns, dropped as soon as the
    /// request's bytes are made: a call may wait long (for room in the
    /// outbox, for the answer), and its params need not be held meanwhile.
    pub(crate) async fn call_owned(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, ClientError> {
        self.call_with(move |id| request_bytes(method, params.as_deref(), Some(id)), timeout).await
    }

    /// One outgoing call: registers an id, queues `request(id)`, waits for
    /// the answer, all within `timeout` (or the connection's default).
    async fn call_with(
        &self,
        request: impl FnOnce(u64) -> Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, ClientError> {
        let shared = &*self.shared;
        let (tx, reply) = oneshot::channel();
        let id = shared.register(Waiter::Call(tx))?;
        let mut guard = CallGuard { shared, id, sent: false, done: false, reason: "the caller gave up" };
        // The limit covers the whole call: waiting for room in the outbox
        // (the other side may have stopped reading) and for the answer.
        let limit = timeout.or(shared.options.timeout);
        let deadline = limit.map(|limit| (Instant::now() + limit, limit));
        within(deadline, shared.send(request(id), None)).await??;
        guard.sent = true;
        let reply = match within(deadline, reply).await {
            Ok(reply) => reply,
            Err(timed_out) => {
                guard.reason = "timed out";
                return Err(timed_out);
            }
        };
        guard.done = true;
        // A dropped sender means the connection closed under us.
        reply.unwrap_or_else(|_| Err(shared.closed_error()))
    }

    /// Sends notification `method` with raw JSON params; returns once it
    /// is queued for the writer (see [`Peer::notify`]).
    /// Waits for room at most the connection's default timeout, if any
    /// (see [`PeerBuilder::timeout`]); past it the result is
    /// [`ClientError::Timeout`] and nothing is sent.
    pub async fn notify_raw(&self, method: &str, params: Option<&RawValue>) -> Result<(), ClientError> {
        self.queue(request_bytes(method, params, None), self.shared.options.timeout).await
    }

    /// [`Peer::notify_raw`] that returns once the notification was written
    /// (flushed to the transport), not once queued: for MCP's progress,
    /// which clients (the TypeScript SDK) drop when the response to its
    /// request is read in the same chunk, before the notification's handler
    /// ran.
    #[cfg(feature = "mcp")]
    pub(crate) async fn notify_raw_written(&self, method: &str, params: Option<&RawValue>) -> Result<(), ClientError> {
        self.write_and_wait(request_bytes(method, params, None), self.shared.options.timeout).await
    }

    /// Queues `bytes` for the writer once they fit in the byte budget,
    /// waiting for room at most `timeout`. A queued message is written
    /// before the connection ends, unless the other side is gone.
    pub(crate) async fn queue(&self, bytes: Vec<u8>, timeout: Option<Duration>) -> Result<(), ClientError> {
        let deadline = timeout.map(|limit| (Instant::now() + limit, limit));
        within(deadline, self.shared.send(bytes, None)).await?
    }

    /// Queues `bytes` and waits until the writer flushed them, at most
    /// `timeout` in all (waiting for room in the outbox included).
    pub(crate) async fn write_and_wait(&self, bytes: Vec<u8>, timeout: Option<Duration>) -> Result<(), ClientError> {
        let deadline = timeout.map(|limit| (Instant::now() + limit, limit));
        let shared = &*self.shared;
        within(deadline, async {
            let (tx, rx) = oneshot::channel();
            shared.send(bytes, Some(tx)).await?;
            rx.await.map_err(|_| shared.closed_error())
        })
        .await?
    }

    /// Registers one call of a batch (sent later by [`Batch::send`]).
    pub(crate) fn register_call(&self, reply: oneshot::Sender<Reply>) -> Result<u64, ClientError> {
        self.shared.register(Waiter::Call(reply))
    }

    /// Removes a call registered by [`Peer::register_call`] and fails it
    /// with `err`.
    pub(crate) fn fail_call(&self, id: u64, err: ClientError) {
        let waiter = lock(&self.shared.calls).pending.remove(&id);
        if let Some(waiter) = waiter {
            waiter.fail(err);
        }
    }

    /// Removes a call registered by [`Peer::register_call`] that was not sent.
    pub(crate) fn forget_call(&self, id: u64) {
        lock(&self.shared.calls).pending.remove(&id);
    }

    /// A batch: several calls and notifications sent as one JSON-RPC batch.
    /// See [`Batch`].
    pub fn batch(&self) -> Batch {
        Batch::new(self.clone(), None)
    }

    /// Gives up on call `id` (sent): forgets it and announces the
    /// cancellation if configured.
    pub(crate) fn abandon_call(&self, id: u64, reason: &str) {
        self.shared.abandon(id, true, reason);
    }

    /// Closes the connection: pending calls fail with
    /// [`ClientError::Closed`], no more calls are taken, and the stream is
    /// shut down once queued messages are written.
    pub fn close(&self) {
        self.shared.close(Closed::Clean);
        self.shared.link.stop.raise();
    }

    /// Whether the connection has stopped taking calls.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_raised()
    }

    /// Completes when the connection stops taking calls.
    pub async fn closed(&self) {
        self.shared.closed.raised().await
    }

    /// The connection-wide default timeout for calls, if any.
    pub fn default_timeout(&self) -> Option<Duration> {
        self.shared.options.timeout
    }
}

/// Runs `future` until `deadline` (an instant and the limit it came
/// from); past it, [`ClientError::Timeout`] with that limit.
async fn within<F: std::future::Future>(
    deadline: Option<(Instant, Duration)>,
    future: F,
) -> Result<F::Output, ClientError> {
    match deadline {
        None => Ok(future.await),
        Some((at, limit)) => tokio::time::timeout_at(at, future).await.map_err(|_| ClientError::Timeout(limit)),
    }
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// `{"jsonrpc":"2.0","method":..,"params":..,"id":..}`; no id for a
/// notification.
pub(crate) fn request_bytes(method: &str, params: Option<&RawValue>, id: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + method.len() + params.map_or(0, |p| p.get().len()));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    out.extend_from_slice(json_string(method).as_bytes());
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params.get().as_bytes());
    }
    if let Some(id) = id {
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(id.to_string().as_bytes());
    }
    out.push(b'}');
    out
}

impl Shared {
    fn new(options: PeerOptions, limits: &Limits) -> Arc<Self> {
        let budget_bytes = limits.max_queued_bytes.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Arc::new(Shared {
            outbox: Outbox::new(),
            budget: Arc::new(Semaphore::new(budget_bytes)),
            budget_bytes,
            next_id: AtomicU64::new(1),
            calls: Mutex::new(Calls { pending: HashMap::new(), closed: None }),
            options,
            link: Arc::new(Link::new(options.cancellation)),
            closed: Signal::default(),
            serving: Serving::new(limits.max_subscriptions, limits.subscription_buffer),
            subscribed: Subscribed::new(limits.subscription_buffer),
        })
    }

    /// Whether calls of ours are waiting for answers, or subscriptions are
    /// open either way.
    /// Whether this connection ever made a call (ids start at 1), so that
    /// responses may come in.
    fn made_calls(&self) -> bool {
        self.next_id.load(Ordering::Relaxed) > 1
    }

    fn has_pending_calls(&self) -> bool {
        !lock(&self.calls).pending.is_empty() || !self.serving.is_empty() || !self.subscribed.is_empty()
    }
}

impl Context {
    /// The connection this request came in on, to notify or call the
    /// caller back (for example with a generated client:
    /// `MyClient::new(cx.peer()?.clone())`). `None` outside a connection
    /// (for example with [`Engine::handle`] called directly).
    pub fn peer(&self) -> Option<&Peer> {
        self.peer.as_deref()?.downcast_ref()
    }
}

/// Builds a connection and starts it over a transport.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use std::time::Duration;
/// use rpc_runtime::{Cancellation, Framing, Peer};
///
/// let peer = Peer::builder()
///     .framing(Framing::ContentLength)
///     .timeout(Duration::from_secs(30))
///     .cancellation(Cancellation::Lsp)
///     .connect(rpc_runtime::transport::tcp::Tcp::new("127.0.0.1:4000"))
///     .await?;
/// let answer: i64 = peer.call("subtract", [42, 23]).await.expect("a call");
/// # Ok(()) }
/// ```
///
/// [`PeerBuilder::connect`] takes any [`Connect`](crate::transport::Connect)
/// target: a TCP address, a byte stream, a message transport, a server in
/// this process, an HTTP or WebSocket endpoint, a NATS subject;
/// [`PeerBuilder::spawn_child`] launches a child process and returns its
/// handle with the peer.
#[derive(Default, Debug)]
pub struct PeerBuilder {
    pub(crate) router: Router,
    pub(crate) limits: Limits,
    pub(crate) framing: crate::wire::Framing,
    pub(crate) options: PeerOptions,
    pub(crate) cx: Context,
    pub(crate) dialect: Option<SharedDialect>,
}

impl PeerBuilder {
    /// Sets the framing used over byte streams (default newline-delimited).
    #[must_use = "a builder does nothing until used"]
    pub fn framing(mut self, framing: crate::wire::Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Serves `router` on this side: the other side may call its methods
    /// (server-to-client requests, in LSP terms). Without it, incoming
    /// requests are answered with -32601.
    #[must_use = "a builder does nothing until used"]
    pub fn router(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// Limits for incoming messages and queued answers (see [`Limits`]).
    #[must_use = "a builder does nothing until used"]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The default timeout of every outgoing call (none by default). A
    /// typed client can override it per call.
    #[must_use = "a builder does nothing until used"]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// How cancellation is announced and understood (none by default).
    #[must_use = "a builder does nothing until used"]
    pub fn cancellation(mut self, cancellation: Cancellation) -> Self {
        self.options.cancellation = cancellation;
        self
    }

    /// Holds the requests this side serves to the rules of a protocol
    /// built on JSON-RPC 2.0 (see [`Dialect`](crate::dispatch::Dialect)),
    /// and takes its way of cancelling a request when it has one (which
    /// replaces [`PeerBuilder::cancellation`]; a later call of that
    /// overrides it again).
    #[must_use = "a builder does nothing until used"]
    pub fn dialect(mut self, dialect: impl crate::dispatch::Dialect) -> Self {
        if let Some(cancellation) = dialect.cancellation() {
            self.options.cancellation = cancellation;
        }
        self.dialect = Some(SharedDialect::new(dialect));
        self
    }

    /// Per-connection data for handlers on this side (see
    /// [`Context::extension`]).
    #[must_use = "a builder does nothing until used"]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.cx = self.cx.with_extension(value);
        self
    }

    /// Starts the connection over any message transport, on a background
    /// task (call it inside a tokio runtime).
    pub(crate) fn start<S, K>(self, source: S, sink: K) -> Peer
    where
        S: MessageSource + 'static,
        K: MessageSink + 'static,
    {
        let engine = Engine::new(self.router, self.limits).with_shared_dialect(self.dialect);
        let (connection, peer) = Connection::new(engine, self.options, self.cx, Controls::default());
        tokio::spawn(async move {
            if let Err(err) = connection.run(source, sink).await {
                tracing::debug!(error = %err, "connection ended with an error");
            }
        });
        let life = Arc::new(Lifeline(Arc::clone(&peer.shared)));
        Peer { _life: Some(life), ..peer }
    }
}

/// At most the first 64 bytes of an id from the other side, for logs: a
/// peer must not be able to fill stderr through its ids.
fn preview(id: &str) -> &str {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    &id[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_encoded_with_escaped_method_names() {
        let raw = serde_json::value::to_raw_value(&[1]).unwrap();
        let bytes = request_bytes("a\"b", Some(&raw), Some(9));
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value, serde_json::json!({"jsonrpc": "2.0", "method": "a\"b", "params": [1], "id": 9}));
        let notification: serde_json::Value = serde_json::from_slice(&request_bytes("n", None, None)).unwrap();
        assert_eq!(notification, serde_json::json!({"jsonrpc": "2.0", "method": "n"}));
    }
}
