//! Batches of outgoing calls: [`Batch`] gathers calls and notifications
//! and sends them as one JSON-RPC batch; each call's [`BatchReply`] is
//! awaited on its own.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::client::{Decoder, decode, encode_any_params, from_json};
use super::error::ClientError;
use super::state::Reply;
use super::{Peer, request_bytes};
use crate::wire::error::ErrorObject;

/// Several calls and notifications sent as one JSON-RPC batch message.
///
/// Add calls (each returns a [`BatchReply`] to await later), then
/// [`Batch::send`] the whole batch at once; the server may answer the
/// entries in any order, and each reply resolves with its own typed
/// result. Generated clients have a typed batch too
/// (`client.batch()`), with one method per trait method.
///
/// ```no_run
/// # async fn run(peer: rpc_runtime::Peer) -> Result<(), rpc_runtime::ClientError> {
/// let mut batch = peer.batch();
/// let difference = batch.call::<i64, _>("subtract", [42, 23]);
/// let greeting = batch.call::<String, _>("greet", ["Ada"]);
/// batch.notify("notify_hello", [7]);
/// batch.send().await?;
/// assert_eq!(difference.await?, 19);
/// println!("{}", greeting.await?);
/// # Ok(()) }
/// ```
///
/// A server answers a batch with one message once every entry is done, so
/// the replies of a batch arrive together.
///
/// Each reply waits at most the connection's default timeout (or the
/// typed client's, for a batch from `client.batch()`), counted from when
/// it is first awaited. A reply that times out or is dropped before its
/// answer behaves like an abandoned call (its cancellation notification is
/// sent if the connection is configured for one). Replies of a batch that
/// is dropped unsent fail with [`ClientError::Closed`].
pub struct Batch {
    peer: Peer,
    timeout: Option<Duration>,
    entries: Vec<BatchRequest>,
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch").field("timeout", &self.timeout).field("entries", &self.entries.len()).finish()
    }
}

struct BatchRequest {
    method: Box<str>,
    params: Option<Box<RawValue>>,
    /// `None` for a notification.
    reply: Option<(oneshot::Sender<Reply>, Arc<AtomicU64>)>,
}

/// The id of a batch call once sent; 0 before.
const UNSENT: u64 = 0;

impl Batch {
    pub(crate) fn new(peer: Peer, timeout: Option<Duration>) -> Self {
        Batch { timeout: timeout.or(peer.default_timeout()), peer, entries: Vec::new() }
    }

    /// Adds a call of `method`; `params` as for [`Peer::call`].
    pub fn call<R: DeserializeOwned, P: Serialize>(&mut self, method: &str, params: P) -> BatchReply<R> {
        self.push_call(method, encode_any_params(&params), from_json::<R>, ClientError::Server)
    }

    /// Adds a notification of `method`. A notification whose params fail to
    /// serialize is left out (and logged).
    pub fn notify<P: Serialize>(&mut self, method: &str, params: P) {
        self.push_notification(method, encode_any_params(&params))
    }

    /// Number of entries so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was added yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a call whose params were encoded already.
    pub(crate) fn push_call<T, E>(
        &mut self,
        method: &str,
        params: Result<Option<Box<RawValue>>, serde_json::Error>,
        decode: Decoder<T>,
        convert: fn(ErrorObject) -> ClientError<E>,
    ) -> BatchReply<T, E> {
        let (tx, rx) = oneshot::channel();
        let id = Arc::new(AtomicU64::new(UNSENT));
        match params {
            Ok(params) => {
                self.entries.push(BatchRequest { method: method.into(), params, reply: Some((tx, Arc::clone(&id))) })
            }
            Err(err) => {
                let _ = tx.send(Err(ClientError::Encode(err)));
            }
        }
        BatchReply {
            reply: rx,
            decode,
            convert,
            peer: self.peer.clone(),
            id,
            timeout: self.timeout,
            sleep: None,
            done: false,
        }
    }

    pub(crate) fn push_notification(&mut self, method: &str, params: Result<Option<Box<RawValue>>, serde_json::Error>) {
        match params {
            Ok(params) => self.entries.push(BatchRequest { method: method.into(), params, reply: None }),
            Err(err) => {
                tracing::warn!(method, error = %err, "left a notification out of a batch: its params did not encode")
            }
        }
    }

    /// Sends every entry as one batch message and returns once it is
    /// written. An empty batch sends nothing. If the connection is closed,
    /// every reply fails with that error too. Writing waits at most the
    /// batch's timeout (see below); past it, the send and every reply fail
    /// with [`ClientError::Timeout`].
    pub async fn send(self) -> Result<(), ClientError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let mut message = Vec::new();
        let mut registered = Vec::new();
        for (index, entry) in self.entries.into_iter().enumerate() {
            let id = match entry.reply {
                None => None,
                Some((reply, slot)) => match self.peer.register_call(reply) {
                    Ok(id) => {
                        registered.push(id);
                        slot.store(id, Ordering::Release);
                        Some(id)
                    }
                    Err(err) => {
                        registered.iter().for_each(|id| self.peer.forget_call(*id));
                        return Err(err);
                    }
                },
            };
            message.push(if index == 0 { b'[' } else { b',' });
            message.extend_from_slice(&request_bytes(&entry.method, entry.params.as_deref(), id));
        }
        message.push(b']');
        let written = self.peer.write_and_wait(message, self.timeout).await;
        if let Err(err) = &written {
            // A timed-out send fails the replies with the same timeout.
            registered.iter().for_each(|id| match err {
                ClientError::Timeout(limit) => self.peer.fail_call(*id, ClientError::Timeout(*limit)),
                _ => self.peer.forget_call(*id),
            });
        }
        written
    }
}

/// The answer to one call of a [`Batch`]; await it after the batch was sent.
#[must_use = "await the reply to get the call's result"]
pub struct BatchReply<T, E = ErrorObject> {
    reply: oneshot::Receiver<Reply>,
    decode: Decoder<T>,
    convert: fn(ErrorObject) -> ClientError<E>,
    peer: Peer,
    id: Arc<AtomicU64>,
    timeout: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    done: bool,
}

impl<T, E> fmt::Debug for BatchReply<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchReply").field("done", &self.done).finish_non_exhaustive()
    }
}

impl<T, E> Future for BatchReply<T, E> {
    type Output = Result<T, ClientError<E>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(Err(ClientError::Closed));
        }
        let reply = match Pin::new(&mut this.reply).poll(cx) {
            Poll::Ready(reply) => reply.unwrap_or(Err(ClientError::Closed)),
            Poll::Pending => {
                let Some(limit) = this.timeout else { return Poll::Pending };
                let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.abandon("timed out");
                this.done = true;
                return Poll::Ready(Err(ClientError::Timeout(limit)));
            }
        };
        this.done = true;
        Poll::Ready(decode(reply, this.decode, this.convert))
    }
}

impl<T, E> BatchReply<T, E> {
    fn abandon(&self, reason: &str) {
        let id = self.id.load(Ordering::Acquire);
        if id != UNSENT {
            self.peer.abandon_call(id, reason);
        }
    }
}

impl<T, E> Drop for BatchReply<T, E> {
    fn drop(&mut self) {
        if !self.done {
            self.abandon("the caller gave up");
        }
    }
}
