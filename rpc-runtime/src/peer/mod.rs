//! A symmetric connection: either side serves a [`Router`] and calls the
//! other side, over one framed duplex stream.
//!
//! One reader routes each incoming message: requests and notifications go
//! through the [`Engine`] (so every rule of the specification still holds),
//! responses go to the outgoing call waiting for their id. One writer task
//! owns the stream's write half; everything else queues messages for it.

pub(crate) mod client;

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::dispatch::context::Context;
use crate::dispatch::engine::{write_error, Engine, Envelope, Incoming, Limits};
use crate::dispatch::router::{MethodFuture, Router};
use crate::dispatch::signal::Signal;
use crate::peer::client::{Batch, ClientError};
use crate::transport::server::Server;
use crate::wire::error::{ErrorObject, INVALID_REQUEST, PARSE_ERROR, REQUEST_CANCELLED, SERVER_OVERLOADED};
use crate::wire::framing::{BorrowedFrame, FrameReader, Framing};

/// Messages waiting for the writer before senders wait.
const OUTBOX: usize = 1024;
/// Messages written before a flush, at most.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// How a cancelled call is announced to the other side, and which incoming
/// notification cancels a running handler.
///
/// The same setting governs both directions of a connection:
///
/// - outgoing: when a call times out or its future is dropped before the
///   answer came, this notification is sent for its id;
/// - incoming: this notification raises the cancellation of the running
///   request with that id, which its handler sees through
///   [`Context::is_cancelled`] / [`Context::cancelled`]. Cancellation is
///   cooperative: the handler decides when to stop. A cancelled request is
///   still answered (the specification wants every request answered), with
///   -32800 `Request cancelled` whatever the handler returned.
///
/// If the local router itself has a method with the notification's name,
/// the router handles it instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cancellation {
    /// No cancellation notifications are sent or understood (the default).
    #[default]
    None,
    /// LSP style: `$/cancelRequest` with params `{"id": <id>}`.
    Lsp,
    /// MCP style: `notifications/cancelled` with params
    /// `{"requestId": <id>, "reason": "..."}`.
    Mcp,
}

impl Cancellation {
    /// The notification's method name, if any.
    pub fn method(self) -> Option<&'static str> {
        match self {
            Cancellation::None => None,
            Cancellation::Lsp => Some("$/cancelRequest"),
            Cancellation::Mcp => Some("notifications/cancelled"),
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            Cancellation::Mcp => "requestId",
            _ => "id",
        }
    }

    /// The notification that cancels outgoing call `id`.
    fn notification(self, id: u64, reason: &str) -> Option<Vec<u8>> {
        let method = self.method()?;
        let params = match self {
            Cancellation::Mcp => format!("{{\"requestId\":{id},\"reason\":{}}}", json_string(reason)),
            _ => format!("{{\"id\":{id}}}"),
        };
        Some(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{params}}}").into_bytes())
    }
}

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

struct Outgoing {
    bytes: Vec<u8>,
    /// Told once the bytes were handed to the transport and flushed.
    written: Option<oneshot::Sender<()>>,
    /// `bytes` are already framed (several responses back to back).
    framed: bool,
}

struct Calls {
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    closed: Option<Closed>,
}

struct Shared {
    outbox: mpsc::Sender<Outgoing>,
    next_id: AtomicU64,
    calls: Mutex<Calls>,
    /// Requests this side is running, by normalized id, for cancellation.
    inflight: Mutex<HashMap<String, Arc<Signal>>>,
    options: PeerOptions,
    /// Asks the reader to stop (close(), last handle dropped, writer died);
    /// running handlers see it as cancellation ([`Context::cancelled`]).
    stop: Signal,
    /// Raised once the connection takes no more calls.
    closed: Signal,
    /// Tells the writer to finish what is queued and shut the stream down.
    shutdown: Signal,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent even if a holder panicked.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    /// Fails every pending call and refuses new ones.
    fn close(&self, reason: Closed) {
        let (pending, reason) = {
            let mut calls = lock(&self.calls);
            // The first reason stays.
            let reason = calls.closed.get_or_insert(reason).clone();
            (std::mem::take(&mut calls.pending), reason)
        };
        for (_, reply) in pending {
            let _ = reply.send(Err(reason.error()));
        }
        self.closed.raise();
    }

    fn closed_error<E>(&self) -> ClientError<E> {
        lock(&self.calls).closed.as_ref().map_or(ClientError::Closed, Closed::error)
    }

    async fn send(&self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.outbox.send(Outgoing { bytes, written: None, framed: false }).await.map_err(|_| self.closed_error())
    }

    /// Queues responses that are framed already.
    async fn send_framed(&self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.outbox.send(Outgoing { bytes, written: None, framed: true }).await.map_err(|_| self.closed_error())
    }

    /// Registers a call whose answer goes to `reply`; fails if the
    /// connection is closed.
    fn register(&self, reply: oneshot::Sender<Reply>) -> Result<u64, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut calls = lock(&self.calls);
        if let Some(closed) = &calls.closed {
            return Err(closed.error());
        }
        calls.pending.insert(id, reply);
        Ok(id)
    }

    /// Hands a response to the call waiting for it.
    fn deliver(&self, id: &RawValue, reply: Reply) {
        let waiting = id.get().parse::<u64>().ok().and_then(|id| lock(&self.calls).pending.remove(&id));
        match waiting {
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => tracing::warn!(id = preview(id.get()), "dropped a response whose id matches no pending call"),
        }
    }

    /// Runs when a call gives up (dropped or timed out) before its answer.
    fn abandon(&self, id: u64, sent: bool, reason: &str) {
        let was_pending = lock(&self.calls).pending.remove(&id).is_some();
        if !(was_pending && sent) {
            return;
        }
        if let Some(bytes) = self.options.cancellation.notification(id, reason) {
            // Drop cannot wait: queue it now, or give up with a log line
            // if the writer is that far behind.
            if let Err(err) = self.outbox.try_send(Outgoing { bytes, written: None, framed: false }) {
                tracing::debug!(id, error = %err, "could not queue a cancellation notification");
            }
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
        self.0.stop.raise();
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
        let params = crate::peer::client::encode_any_params(&params).map_err(ClientError::Encode)?;
        let raw = self.call_raw(method, params.as_deref(), None).await?;
        serde_json::from_str(raw.get()).map_err(ClientError::Decode)
    }

    /// Sends notification `method`; returns once it was written to the
    /// transport. There is never an answer. `params` as for [`Peer::call`].
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), ClientError> {
        let params = crate::peer::client::encode_any_params(&params).map_err(ClientError::Encode)?;
        self.notify_raw(method, params.as_deref()).await
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
        let shared = &*self.shared;
        let (tx, reply) = oneshot::channel();
        let id = shared.register(tx)?;
        let mut guard = CallGuard { shared, id, sent: false, done: false, reason: "the caller gave up" };
        // The limit covers the whole call: waiting for room in the outbox
        // (the other side may have stopped reading) and for the answer.
        let limit = timeout.or(shared.options.timeout);
        let deadline = limit.map(|limit| (Instant::now() + limit, limit));
        within(deadline, shared.send(request_bytes(method, params, Some(id)))).await??;
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
    /// was written to the transport.
    /// Waits at most the connection's default timeout, if any (see
    /// [`PeerBuilder::timeout`]); past it the result is
    /// [`ClientError::Timeout`] and the notification may or may not be
    /// written later.
    pub async fn notify_raw(&self, method: &str, params: Option<&RawValue>) -> Result<(), ClientError> {
        self.write_and_wait(request_bytes(method, params, None), self.shared.options.timeout).await
    }

    /// Queues `bytes` and waits until the writer flushed them, at most
    /// `timeout` in all (waiting for room in the outbox included).
    pub(crate) async fn write_and_wait(&self, bytes: Vec<u8>, timeout: Option<Duration>) -> Result<(), ClientError> {
        let deadline = timeout.map(|limit| (Instant::now() + limit, limit));
        let shared = &*self.shared;
        within(deadline, async {
            let (tx, rx) = oneshot::channel();
            let outgoing = Outgoing { bytes, written: Some(tx), framed: false };
            shared.outbox.send(outgoing).await.map_err(|_| shared.closed_error())?;
            rx.await.map_err(|_| shared.closed_error())
        })
        .await?
    }

    /// Registers one call of a batch (sent later by [`Batch::send`]).
    pub(crate) fn register_call(&self, reply: oneshot::Sender<Reply>) -> Result<u64, ClientError> {
        self.shared.register(reply)
    }

    /// Removes a call registered by [`Peer::register_call`] and fails it
    /// with `err`.
    pub(crate) fn fail_call(&self, id: u64, err: ClientError) {
        if let Some(reply) = lock(&self.shared.calls).pending.remove(&id) {
            let _ = reply.send(Err(err));
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
        self.shared.stop.raise();
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

    /// Raised once nobody can receive answers on this connection (closed,
    /// last handle dropped, writing failed); never on end of input.
    pub(crate) fn stopped(&self) -> &Signal {
        &self.shared.stop
    }

    /// Whether incoming requests are registered for cancellation (see
    /// [`Peer::track_request`]).
    #[inline]
    pub(crate) fn tracks_requests(&self) -> bool {
        self.shared.options.cancellation != Cancellation::None
    }

    /// Registers an incoming request for cancellation, if enabled.
    pub(crate) fn track_request(&self, id: &str) -> Option<(Arc<Signal>, InflightGuard)> {
        self.shared.options.cancellation.method()?;
        let key = id_key(id)?;
        let signal = Arc::new(Signal::default());
        lock(&self.shared.inflight).insert(key.clone(), Arc::clone(&signal));
        let guard = InflightGuard { shared: Arc::clone(&self.shared), key, signal: Arc::clone(&signal) };
        Some((signal, guard))
    }
}

/// Keeps an incoming request registered for cancellation while it runs.
pub(crate) struct InflightGuard {
    shared: Arc<Shared>,
    key: String,
    signal: Arc<Signal>,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        let mut inflight = lock(&self.shared.inflight);
        if inflight.get(&self.key).is_some_and(|current| Arc::ptr_eq(current, &self.signal)) {
            inflight.remove(&self.key);
        }
    }
}

/// Wraps a running request so that it stays cancellable until it ends, and
/// is answered with -32800 if it was cancelled.
pub(crate) fn track(future: MethodFuture, guard: Option<InflightGuard>) -> MethodFuture {
    let Some(guard) = guard else { return future };
    Box::pin(async move {
        let result = future.await;
        if guard.signal.is_raised() {
            Err(ErrorObject::new(REQUEST_CANCELLED, "Request cancelled"))
        } else {
            result
        }
    })
}

/// The key of an id in the table of running requests. Strings compare by
/// value (`"a"` and `"\u0061"` are one id); numbers by their text, so that
/// integers beyond 64 bits stay apart (`1` and `1.0` differ too); a tag
/// keeps `"1"` apart from `1`.
fn id_key(raw: &str) -> Option<String> {
    let text = raw.trim();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(text).ok().map(|id| format!("s:{id}")),
        b'-' | b'0'..=b'9' => serde_json::from_str::<serde::de::IgnoredAny>(text).ok().map(|_| format!("n:{text}")),
        _ => serde_json::from_str::<serde_json::Value>(text).ok().map(|value| format!("v:{value}")),
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
///     .connect_tcp("127.0.0.1:4000")
///     .await?;
/// let answer: i64 = peer.call("subtract", [42, 23]).await.expect("a call");
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct PeerBuilder {
    router: Router,
    limits: Limits,
    framing: Framing,
    options: PeerOptions,
    cx: Context,
}

impl PeerBuilder {
    /// Sets the framing (default newline-delimited).
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Serves `router` on this side: the other side may call its methods
    /// (server-to-client requests, in LSP terms). Without it, incoming
    /// requests are answered with -32601.
    pub fn serve(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// Limits for incoming messages (see [`Limits`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The default timeout of every outgoing call (none by default). A
    /// typed client can override it per call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// How cancellation is announced and understood (none by default).
    pub fn cancellation(mut self, cancellation: Cancellation) -> Self {
        self.options.cancellation = cancellation;
        self
    }

    /// Per-connection data for handlers on this side (see
    /// [`Context::extension`]).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.cx = self.cx.with_extension(value);
        self
    }

    /// Starts the connection over `reader`/`writer` on background tasks
    /// (call it inside a tokio runtime).
    pub fn connect<R, W>(self, reader: R, writer: W) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let engine = Engine::new(self.router, self.limits);
        let connection = Connection::new(engine, self.framing, self.options, writer, self.cx);
        let peer = Peer { shared: Arc::clone(&connection.shared), _life: None };
        tokio::spawn(async move {
            if let Err(err) = connection.run(reader).await {
                tracing::debug!(error = %err, "connection ended with an error");
            }
        });
        Peer { _life: Some(Arc::new(Lifeline(Arc::clone(&peer.shared)))), ..peer }
    }

    /// Connects to a TCP server.
    pub async fn connect_tcp(self, addr: impl ToSocketAddrs) -> io::Result<Peer> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let addr = stream.peer_addr().ok();
        let (reader, writer) = stream.into_split();
        let builder = match addr {
            Some(addr) => PeerBuilder { cx: self.cx.with_peer_addr(addr), ..self },
            None => self,
        };
        Ok(builder.connect(reader, writer))
    }

    /// Spawns `command` as a child process and talks to it over its stdin
    /// and stdout, as LSP and MCP hosts do. Its stderr is inherited. The
    /// child is killed when the returned [`Child`] is dropped; closing the
    /// connection closes its stdin, which a well-behaved server takes as
    /// the signal to exit.
    pub fn spawn_child(self, command: &mut Command) -> io::Result<(Peer, Child)> {
        command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn()?;
        let missing = |what| io::Error::other(format!("the child's {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        Ok((self.connect(stdout, stdin), child))
    }

    /// Wires this side straight to `server` in this process, over an
    /// in-memory stream (for tests and plugins). The server uses this
    /// builder's framing; everything else (callbacks, cancellation,
    /// batches) works as over any other transport.
    pub fn in_process(self, server: Server) -> Peer {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let server = server.framing(self.framing);
        let (their_reader, their_writer) = tokio::io::split(theirs);
        tokio::spawn(async move {
            if let Err(err) = server.serve_stream(their_reader, their_writer, Context::default()).await {
                tracing::debug!(error = %err, "in-process server ended with an error");
            }
        });
        let (reader, writer) = tokio::io::split(ours);
        self.connect(reader, writer)
    }
}

/// One connection: the shared state plus what only the reader needs.
pub(crate) struct Connection {
    shared: Arc<Shared>,
    engine: Engine,
    framing: Framing,
    writer: JoinHandle<io::Result<()>>,
    cx: Context,
}

/// Raises `shutdown` if the reader is dropped early, so the writer task
/// never outlives a cancelled `serve_stream`.
struct ShutdownOnDrop(Arc<Shared>);

impl Drop for ShutdownOnDrop {
    fn drop(&mut self) {
        self.0.close(Closed::Clean);
        // Handlers still running (a dropped `serve_stream`) can no longer
        // be answered: let them see it.
        self.0.stop.raise();
        self.0.shutdown.raise();
    }
}

impl Connection {
    /// Starts the writer task; the reader runs in [`Connection::run`].
    pub(crate) fn new<W>(engine: Engine, framing: Framing, options: PeerOptions, writer: W, cx: Context) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outbox, inbox) = mpsc::channel(OUTBOX);
        let shared = Arc::new(Shared {
            outbox,
            next_id: AtomicU64::new(1),
            calls: Mutex::new(Calls { pending: HashMap::new(), closed: None }),
            inflight: Mutex::new(HashMap::new()),
            options,
            stop: Signal::default(),
            closed: Signal::default(),
            shutdown: Signal::default(),
        });
        let writer = tokio::spawn(write_loop(writer, inbox, framing, Arc::clone(&shared)));
        let cx = Context { peer: Some(Peer { shared: Arc::clone(&shared), _life: None }), ..cx };
        Connection { shared, engine, framing, writer, cx }
    }

    /// Reads until the other side hangs up (or the connection is closed),
    /// then lets running requests finish, writes their responses and shuts
    /// the stream down.
    pub(crate) async fn run<R: AsyncRead + Unpin>(self, reader: R) -> io::Result<()> {
        let shared = &self.shared;
        let _shutdown = ShutdownOnDrop(Arc::clone(shared));
        let limits = self.engine.limits().clone();
        let mut frames = FrameReader::new(reader, self.framing, limits.max_message_size);
        let permits = limits.max_concurrent_requests.min(u32::MAX as usize).min(Semaphore::MAX_PERMITS);
        let slots = Arc::new(Semaphore::new(permits));
        // Answers ready at once are framed into `ready` and handed to the
        // writer together when no further frame is already buffered (or 64
        // KiB piled up), so a burst of pipelined requests costs one channel
        // send and one write; `out` is reused from message to message.
        let mut ready = Vec::new();
        let mut out = Vec::new();
        let in_place = self.framing == Framing::NewlineDelimited;
        let read_result = loop {
            // A complete line already buffered is taken without going
            // through the reader's future (unless asked to stop).
            let buffered = if shared.stop.is_raised() { None } else { frames.next_buffered() };
            let frame = if let Some(frame) = buffered {
                Ok(Some(frame))
            } else {
                let mut next = pin!(frames.next_borrowed());
                // With answers waiting, poll the reader once: a frame that is
                // already buffered is taken at once (unless asked to stop);
                // only when it would wait are the answers handed over.
                let polled = if ready.is_empty() || shared.stop.is_raised() {
                    Poll::Pending
                } else {
                    poll_fn(|task| Poll::Ready(next.as_mut().poll(task))).await
                };
                match polled {
                    Poll::Ready(frame) => frame,
                    Poll::Pending => {
                        if !ready.is_empty() && shared.send_framed(take_burst(&mut ready)).await.is_err() {
                            break Ok(()); // the writer is gone: nobody can hear us
                        }
                        tokio::select! {
                            biased;
                            () = shared.stop.raised() => break Ok(()),
                            frame = next => frame,
                        }
                    }
                }
            };
            let frame = match frame {
                Ok(Some(frame)) => frame,
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            };
            out.clear();
            // With newline framing, ready answers are written straight into
            // `ready` and finished into a line there; with headers, which
            // go first, they go through `out`.
            let mark = ready.len();
            let answers = if in_place { &mut ready } else { &mut out };
            match frame {
                BorrowedFrame::Message(message) => {
                    let cancel = shared.options.cancellation.method();
                    let pending = match self.engine.process_incoming(message, &self.cx, answers, cancel) {
                        Incoming::Handled(pending) => pending,
                        Incoming::Response { id, result, error } => {
                            self.deliver(id, result, error);
                            continue;
                        }
                        Incoming::Cancel(params) => {
                            self.cancel_incoming(params);
                            continue;
                        }
                        Incoming::Other => {
                            let Some(message) = self.route(message) else { continue };
                            self.engine.process(&message, &self.cx, answers)
                        }
                    };
                    if let Some(pending) = pending {
                        // Every waiting entry of a batch takes a slot, so that
                        // batching cannot get around the limit.
                        let wanted = u32::try_from(pending.calls()).ok();
                        match wanted.map(|n| Arc::clone(&slots).try_acquire_many_owned(n)) {
                            Some(Ok(slot)) => {
                                let shared = Arc::clone(shared);
                                tokio::spawn(async move {
                                    let response = pending.run().await;
                                    if !response.is_empty() {
                                        let _ = shared.send(response).await;
                                    }
                                    // Only now: the end-of-input drain waits for
                                    // every slot, then stops the writer, so the
                                    // response must be queued before.
                                    drop(slot);
                                });
                            }
                            _ => {
                                tracing::warn!(
                                    calls = pending.calls(),
                                    limit = limits.max_concurrent_requests,
                                    "refused: too many requests running on this connection"
                                );
                                out = pending.reject(&overloaded(limits.max_concurrent_requests));
                            }
                        }
                    }
                }
                BorrowedFrame::TooLarge { size } => {
                    let size = size.map_or_else(|| "more than".to_owned(), |s| s.to_string());
                    let message = format!(
                        "Invalid Request: message of {size} bytes exceeds the limit of {} bytes",
                        limits.max_message_size
                    );
                    tracing::warn!("{message}");
                    out = error_response(&ErrorObject::new(INVALID_REQUEST, message));
                }
                BorrowedFrame::Malformed(reason) => {
                    out = error_response(&ErrorObject::new(PARSE_ERROR, format!("Parse error: {reason}")));
                }
            }
            if ready.len() > mark {
                Framing::end_line(&mut ready, mark);
            }
            if !out.is_empty() {
                self.framing.encode(&out, &mut ready);
                if ready.len() >= WRITE_BATCH_BYTES && shared.send_framed(take_burst(&mut ready)).await.is_err() {
                    break Ok(()); // the writer is gone: nobody can hear us
                }
            }
        };
        if !ready.is_empty() {
            let _ = shared.send_framed(ready).await;
        }
        // Nothing more can be answered: fail outgoing calls now, so that a
        // handler waiting on one finishes promptly.
        shared.close(match &read_result {
            Ok(()) => Closed::Clean,
            Err(err) => Closed::Failed(Arc::new(io::Error::new(err.kind(), err.to_string()))),
        });
        let _all_done = slots.acquire_many(permits as u32).await;
        shared.shutdown.raise();
        let write_result =
            self.writer.await.unwrap_or_else(|err| Err(io::Error::other(format!("writer task failed: {err}"))));
        read_result.and(write_result)
    }

    /// Takes responses (to our calls) and cancellation notifications off
    /// the incoming stream; returns what is left for the engine, if
    /// anything. The general way, for what [`Engine::process_incoming`]
    /// leaves (batches, and messages that do not decode as one object).
    fn route<'m>(&self, message: &'m [u8]) -> Option<Cow<'m, [u8]>> {
        let cancel_method = self.shared.options.cancellation.method();
        let (maybe_response, maybe_cancel) = probe_keys(message, cancel_method);
        let engine = Some(Cow::Borrowed(message));
        if !maybe_response && !maybe_cancel {
            return engine;
        }
        let Ok(text) = std::str::from_utf8(message) else { return engine };
        if text.trim_start().starts_with('[') {
            return if maybe_response {
                self.route_batch(text).map_or(engine, |rest| rest.map(Cow::Owned))
            } else {
                engine
            };
        }
        let Ok(probe) = serde_json::from_str::<Envelope<'_>>(text) else { return engine };
        if probe.is_response() {
            self.deliver(probe.id, probe.result, probe.error);
            return None;
        }
        match (cancel_method, probe.method_name()) {
            (Some(cancel), Some(method))
                if probe.id.is_none() && method == cancel && self.engine.router().spec(cancel).is_none() =>
            {
                self.cancel_incoming(probe.params);
                None
            }
            _ => engine,
        }
    }

    /// Delivers the responses of a batch (answers to a batch of ours, or
    /// mixed with requests by a peer that both answers and asks). `None`
    /// when there are none (the batch goes to the engine as it is);
    /// otherwise what is left for the engine: the other entries as a batch
    /// (answered as an array, even of one), or nothing.
    fn route_batch(&self, text: &str) -> Option<Option<Vec<u8>>> {
        let entries = serde_json::from_str::<Vec<&RawValue>>(text).ok()?;
        let mut rest = Vec::new();
        let mut delivered = false;
        for entry in entries {
            match serde_json::from_str::<Envelope<'_>>(entry.get()).ok().filter(Envelope::is_response) {
                Some(probe) => {
                    self.deliver(probe.id, probe.result, probe.error);
                    delivered = true;
                }
                None => {
                    rest.push(if rest.is_empty() { b'[' } else { b',' });
                    rest.extend_from_slice(entry.get().as_bytes());
                }
            }
        }
        if !delivered {
            return None;
        }
        if rest.is_empty() {
            return Some(None);
        }
        rest.push(b']');
        Some(Some(rest))
    }

    /// Hands a response (its `id`, `result` and `error` members) to the
    /// call waiting for it.
    fn deliver(&self, id: Option<&RawValue>, result: Option<&RawValue>, error: Option<&RawValue>) {
        let Some(id) = id else {
            // Answering it would start an exchange of errors about errors.
            tracing::warn!("dropped a response without an `id`");
            return;
        };
        let reply = match (result, error) {
            (Some(result), None) => Ok(result.to_owned()),
            (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                Ok(error) => Err(ClientError::Server(error)),
                Err(err) => Err(ClientError::Decode(err)),
            },
            _ => {
                // Neither may be trusted, but the call must not hang.
                tracing::warn!(id = preview(id.get()), "a response has both `result` and `error`");
                Err(ClientError::Decode(serde::de::Error::custom(
                    "invalid response: it has both `result` and `error` (JSON-RPC 2.0 allows exactly one)",
                )))
            }
        };
        if id.get() == "null" {
            // The other side could not read one of our messages.
            tracing::warn!(response = ?reply.as_ref().err(), "the other side answered a message it could not read");
            return;
        }
        self.shared.deliver(id, reply);
    }

    fn cancel_incoming(&self, params: Option<&RawValue>) {
        let field = self.shared.options.cancellation.id_field();
        let id = params
            .and_then(|params| serde_json::from_str::<HashMap<&str, &RawValue>>(params.get()).ok())
            .and_then(|params| params.get(field).and_then(|id| id_key(id.get())));
        let Some(key) = id else {
            tracing::debug!("cancellation notification without a usable `{field}`");
            return;
        };
        match lock(&self.shared.inflight).get(&key) {
            Some(signal) => {
                signal.raise();
                tracing::debug!(id = preview(&key), "request cancelled by the caller");
            }
            None => tracing::debug!(id = preview(&key), "cancellation for a request that is not running"),
        }
    }
}

/// Whether `message` may be a response (it has a `"result"` or `"error"`
/// string) and whether it may be a cancellation (a string starts with the
/// cancel method's name), in one pass over its quotes. Run on the
/// messages [`Engine::process_incoming`] leaves to [`Connection::route`]
/// (batches, mostly), before any of them is parsed.
fn probe_keys(message: &[u8], cancel_method: Option<&str>) -> (bool, bool) {
    let cancel_method = cancel_method.map(str::as_bytes).filter(|method| !method.is_empty());
    let cancel_first = cancel_method.and_then(|method| method.first().copied());
    let (mut response, mut cancel) = (false, false);
    // A plain loop: messages are short and quotes frequent, so memchr's
    // per-call setup would cost more than it saves. The byte after a quote
    // decides which comparison, if any, is worth making.
    for (quote, _) in message.iter().enumerate().filter(|(_, &byte)| byte == b'"') {
        let rest = &message[quote + 1..];
        match rest.first().copied() {
            Some(b'r') if rest.starts_with(b"result\"") => response = true,
            Some(b'e') if rest.starts_with(b"error\"") => response = true,
            first if first.is_some() && first == cancel_first => {
                cancel |= cancel_method.is_some_and(|method| rest.starts_with(method));
            }
            _ => {}
        }
        if response && (cancel || cancel_method.is_none()) {
            break;
        }
    }
    (response, cancel)
}

/// Takes the answers framed so far, leaving an empty buffer as large as
/// that burst (up to the write batch size), so that the next burst of
/// about the same size is framed without growing its buffer step by step.
fn take_burst(ready: &mut Vec<u8>) -> Vec<u8> {
    let capacity = ready.capacity().min(WRITE_BATCH_BYTES);
    std::mem::replace(ready, Vec::with_capacity(capacity))
}

fn overloaded(limit: usize) -> ErrorObject {
    ErrorObject::new(
        SERVER_OVERLOADED,
        format!("Server overloaded: at most {limit} requests may run at once on this connection (max_concurrent_requests); retry later"),
    )
}

/// An error answer to a message whose id could not be read.
fn error_response(error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::new();
    write_error(&mut out, "null", error);
    out
}

/// Writes messages as they come, coalescing whatever is queued into one
/// write and one flush. Ends when asked to shut down and nothing is left,
/// or when writing fails (which closes the connection).
async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut inbox: mpsc::Receiver<Outgoing>,
    framing: Framing,
    shared: Arc<Shared>,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(WRITE_BATCH_BYTES);
    let mut acks = Vec::new();
    loop {
        let first = tokio::select! {
            biased;
            message = inbox.recv() => message,
            () = shared.shutdown.raised() => inbox.try_recv().ok(),
        };
        let Some(first) = first else { break };
        buf.clear();
        let mut next = Some(first);
        while let Some(message) = next.take() {
            if message.framed {
                buf.extend_from_slice(&message.bytes);
            } else {
                framing.encode(&message.bytes, &mut buf);
            }
            acks.extend(message.written);
            if buf.len() < WRITE_BATCH_BYTES {
                next = inbox.try_recv().ok();
            }
        }
        let written = async {
            writer.write_all(&buf).await?;
            writer.flush().await
        };
        if let Err(err) = written.await {
            tracing::debug!(error = %err, "writing failed; closing the connection");
            shared.close(Closed::Failed(Arc::new(io::Error::new(err.kind(), err.to_string()))));
            shared.stop.raise();
            return Err(err);
        }
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
    }
    writer.shutdown().await.or_else(|err| match err.kind() {
        io::ErrorKind::NotConnected | io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(err),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_compare_by_value() {
        assert_eq!(id_key("\"a\""), id_key("\"\\u0061\""));
        assert_eq!(id_key(" 7 "), id_key("7"));
        assert_ne!(id_key("7"), id_key("\"7\""));
        assert_eq!(id_key("not json"), None);
        assert_eq!(id_key("7x"), None);
    }

    #[test]
    fn integer_ids_beyond_64_bits_do_not_collide() {
        assert_ne!(id_key("12345678901234567890123"), id_key("12345678901234567890124"));
        assert_ne!(id_key("1"), id_key("1.0"));
    }

    #[test]
    fn cancellation_notifications_follow_each_protocol() {
        assert_eq!(Cancellation::None.notification(3, "x"), None);
        let lsp = Cancellation::Lsp.notification(3, "x").unwrap();
        assert_eq!(
            String::from_utf8(lsp).unwrap(),
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#
        );
        let mcp: serde_json::Value =
            serde_json::from_slice(&Cancellation::Mcp.notification(4, "timed \"out\"").unwrap()).unwrap();
        assert_eq!(mcp["method"], "notifications/cancelled");
        assert_eq!(mcp["params"]["requestId"], 4);
        assert_eq!(mcp["params"]["reason"], "timed \"out\"");
    }

    #[test]
    fn requests_are_encoded_with_escaped_method_names() {
        let raw = serde_json::value::to_raw_value(&[1]).unwrap();
        let bytes = request_bytes("a\"b", Some(&raw), Some(9));
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value, serde_json::json!({"jsonrpc": "2.0", "method": "a\"b", "params": [1], "id": 9}));
        let notification: serde_json::Value = serde_json::from_slice(&request_bytes("n", None, None)).unwrap();
        assert_eq!(notification, serde_json::json!({"jsonrpc": "2.0", "method": "n"}));
    }

    #[test]
    fn responses_are_told_from_requests() {
        let probe = |text: &str| serde_json::from_str::<Envelope<'_>>(text).unwrap().is_response();
        assert!(probe(r#"{"jsonrpc":"2.0","result":null,"id":1}"#));
        assert!(probe(r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":1}"#));
        assert!(!probe(r#"{"jsonrpc":"2.0","method":"m","params":{"result":1},"id":1}"#));
        // Without an id it cannot be matched, but it is still a response.
        assert!(probe(r#"{"jsonrpc":"2.0","result":1}"#));
        assert!(!probe(r#"{"jsonrpc":"2.0","method":"m","result":1}"#));
    }
}

#[cfg(test)]
mod probe_tests {
    use super::probe_keys;

    #[test]
    fn responses_and_cancellations_are_spotted_by_their_strings() {
        let cancel = Some("$/cancelRequest");
        let cases: [(&str, (bool, bool)); 6] = [
            (r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}"#, (false, false)),
            (r#"{"jsonrpc":"2.0","result":3,"id":1}"#, (true, false)),
            (r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m"},"id":1}"#, (true, false)),
            (r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4}}"#, (false, true)),
            (r#"{"jsonrpc":"2.0","method":"say","params":["a \"result\" in text"],"id":2}"#, (false, false)),
            (r#"[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","method":"$/cancelRequest"}]"#, (true, true)),
        ];
        for (message, expected) in cases {
            assert_eq!(probe_keys(message.as_bytes(), cancel), expected, "{message}");
        }
        assert_eq!(probe_keys(br#"{"method":"$/cancelRequest"}"#, None), (false, false));
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
