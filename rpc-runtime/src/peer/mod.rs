#![doc = include_str!("../../docs/peer.md")]

mod batch;
mod builder;
pub(crate) mod client;
mod connection;
mod error;
mod outbox;
mod routing;
mod signal_watch;
mod state;
pub(crate) mod subscription;
pub(crate) mod transport;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::dispatch::context::Context;
pub(crate) use crate::dispatch::dialect::Cancellation;
use crate::sync::lock;
pub use builder::PeerBuilder;
use client::{Batch, ClientError};
pub use client::{BatchReply, FromErrorObject, Notify};
pub(crate) use connection::{AtEof, Connection, Controls};
#[cfg(feature = "http")]
pub(crate) use signal_watch::SignalWatch;
use state::{Closed, ConnectionState, Reply, Waiter};
pub use subscription::client::Subscribe;
pub use subscription::server::{IntoSubscriptionEnd, PendingSubscription, SendError};
pub use transport::{MessageSink, MessageSource, Received};

/// Settings shared by both ends of a connection.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PeerOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancellation: Cancellation,
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
    shared: Arc<ConnectionState>,
    /// Present on handles given to users; the last one closes the
    /// connection when dropped. Handles inside contexts do not keep it open.
    _life: Option<Arc<Lifeline>>,
}

struct Lifeline(Arc<ConnectionState>);

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
    shared: &'a ConnectionState,
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
        self.call_with(method, |id| request_bytes(method, params, Some(id)), timeout).await
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
        self.call_with(method, move |id| request_bytes(method, params.as_deref(), Some(id)), timeout).await
    }

    /// One outgoing call of `method` (with `otel`, inside a client span
    /// whose context the request carries where its transport can).
    async fn call_with(
        &self,
        method: &str,
        request: impl FnOnce(u64) -> Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, ClientError> {
        #[cfg(feature = "otel")]
        {
            let span = outgoing_span(method);
            if !span.is_disabled() {
                let result = tracing::Instrument::instrument(self.exchange(request, timeout), span.clone()).await;
                if let Err(err) = &result {
                    outgoing_failed(&span, err);
                }
                return result;
            }
        }
        #[cfg(not(feature = "otel"))]
        let _ = method;
        self.exchange(request, timeout).await
    }

    /// One outgoing call: registers an id, queues `request(id)`, waits for
    /// the answer, all within `timeout` (or the connection's default).
    async fn exchange(
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

impl Context {
    /// The connection this request came in on, to notify or call the
    /// caller back (for example with a generated client:
    /// `MyClient::new(cx.peer()?.clone())`). `None` outside a connection
    /// (for example with [`Engine::handle`] called directly).
    ///
    /// [`Engine::handle`]: crate::dispatch::engine::Engine::handle
    pub fn peer(&self) -> Option<&Peer> {
        self.peer.as_deref()?.downcast_ref()
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

/// The span of an outgoing call of `method` (feature `otel`): at `debug`,
/// a client span named after the method for tracing-opentelemetry, with
/// the JSON-RPC fields a server's `rpc.call` has.
#[cfg(feature = "otel")]
fn outgoing_span(method: &str) -> tracing::Span {
    tracing::debug_span!(
        "rpc.client",
        rpc.system = "jsonrpc",
        rpc.method = method,
        rpc.jsonrpc.error_code = tracing::field::Empty,
        rpc.jsonrpc.error_message = tracing::field::Empty,
        otel.kind = "client",
        otel.name = method,
        otel.status_code = tracing::field::Empty,
    )
}

/// Records on an outgoing call's span that it failed with `err`.
#[cfg(feature = "otel")]
#[cold]
fn outgoing_failed(span: &tracing::Span, err: &ClientError) {
    if let Some(code) = err.code() {
        span.record("rpc.jsonrpc.error_code", code);
    }
    match err.server_error() {
        Some(error) => span.record("rpc.jsonrpc.error_message", error.message()),
        None => span.record("rpc.jsonrpc.error_message", tracing::field::display(err)),
    };
    span.record("otel.status_code", "ERROR");
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
