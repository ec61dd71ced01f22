//! The state of one connection that its task, every
//! [`Peer`](crate::peer::Peer) handle on it and its subscriptions share:
//! the outbox and its byte budget, the calls of ours waiting for answers,
//! the stop signal handlers see, and the subscriptions made and served.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use super::client::ClientError;
use super::outbox::Outbox;
use super::subscription::client::{Subscribed, SubscriptionFeed};
use super::subscription::server::ServedSubscriptions;
use super::{PeerOptions, preview, request_bytes};
use crate::dispatch::inflight::Link;
use crate::dispatch::limits::Limits;
use crate::dispatch::signal::Signal;
use crate::sync::lock;

/// Why the connection stopped taking calls.
#[derive(Clone, Debug)]
pub(super) enum Closed {
    /// The other side hung up, or this side closed it.
    Clean,
    /// Reading or writing failed.
    Failed(Arc<io::Error>),
}

impl Closed {
    pub(super) fn error<E>(&self) -> ClientError<E> {
        match self {
            Closed::Clean => ClientError::Closed,
            Closed::Failed(err) => ClientError::Transport(Arc::clone(err)),
        }
    }
}

/// What an outgoing call receives: the result's raw JSON, or why not.
pub(crate) type Reply = Result<Box<RawValue>, ClientError>;

/// A message for the connection task to send.
pub(super) struct Outgoing {
    pub(super) bytes: Vec<u8>,
    /// Told once the bytes were handed to the transport and flushed.
    pub(super) written: Option<oneshot::Sender<()>>,
    /// Its share of the connection's byte budget, given back once written.
    _budget: Option<OwnedSemaphorePermit>,
    /// For a subscription's item: its place in the subscription's buffer,
    /// given back once written.
    _room: Option<OwnedSemaphorePermit>,
    /// The span it was sent in, for transports that carry W3C Trace
    /// Context with each message.
    #[cfg(feature = "otel")]
    pub(super) trace: Option<crate::otel::TraceContext>,
}

impl Outgoing {
    /// A message outside the byte budget (small, and at most one per call
    /// or subscription: a cancellation, an unsubscribe, a last notification).
    fn unbudgeted(bytes: Vec<u8>) -> Self {
        Outgoing {
            bytes,
            written: None,
            _budget: None,
            _room: None,
            #[cfg(feature = "otel")]
            trace: None,
        }
    }
}

/// An outgoing call waiting for its answer.
pub(super) enum Waiter {
    /// A call: its answer goes to the caller.
    Call(oneshot::Sender<Reply>),
    /// A subscribe call: on success its subscription is registered (before
    /// any later message is read, so that no item is missed), then the
    /// answer goes to the caller.
    Subscribe(oneshot::Sender<Reply>, SubscriptionFeed),
    /// A subscription's subscribe call made again on a new connection (a
    /// reconnecting client): on success it is back in the table under its
    /// new id; on failure its stream ends with the error.
    Again(SubscriptionFeed),
    /// A call whose answer nobody waits for (an unsubscribe sent on drop).
    Detached,
}

impl Waiter {
    /// Fails the call with `err`.
    pub(super) fn fail(self, err: ClientError) {
        match self {
            Waiter::Call(reply) | Waiter::Subscribe(reply, _) => {
                let _ = reply.send(Err(err));
            }
            Waiter::Again(feed) => feed.end_with(err),
            Waiter::Detached => {}
        }
    }
}

/// The calls of ours waiting for answers, and whether more may be made.
pub(super) struct Calls {
    pub(super) pending: HashMap<u64, Waiter>,
    pub(super) closed: Option<Closed>,
}

/// The state of one connection, shared by its task, every
/// [`Peer`](crate::peer::Peer) handle on it (the field `shared` of each)
/// and its subscriptions.
pub(super) struct ConnectionState {
    /// Messages for the connection task. Unbounded in count: what bounds it
    /// is `budget`, in bytes.
    pub(super) outbox: Outbox<Outgoing>,
    /// Bytes queued in `outbox` and not yet written, at most
    /// [`Limits::max_queued_bytes`]: a sender waits for room, so a peer
    /// that stops reading holds at most that much of our answers.
    pub(super) budget: Arc<Semaphore>,
    pub(super) budget_bytes: usize,
    pub(super) next_id: AtomicU64,
    pub(super) calls: Mutex<Calls>,
    pub(super) options: PeerOptions,
    /// What dispatch sees of the connection: the stop signal (raised by
    /// close(), the last handle dropped, the other side gone, writing
    /// failed; running handlers see it as cancellation) and the running
    /// requests that may be cancelled.
    pub(super) link: Arc<Link>,
    /// Raised once the connection takes no more calls.
    pub(super) closed: Signal,
    /// Subscriptions this side serves (made by the other side's calls).
    pub(super) serving: ServedSubscriptions,
    /// Subscriptions this side made, whose items it receives.
    pub(super) subscribed: Subscribed,
}

impl ConnectionState {
    /// Fails every pending call and refuses new ones.
    pub(super) fn close(&self, reason: Closed) {
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

    pub(super) fn closed_error<E>(&self) -> ClientError<E> {
        lock(&self.calls).closed.as_ref().map_or(ClientError::Closed, Closed::error)
    }

    /// Queues `bytes` for the connection task once they fit in the byte
    /// budget; `written` is told after they were flushed.
    pub(super) async fn send(&self, bytes: Vec<u8>, written: Option<oneshot::Sender<()>>) -> Result<(), ClientError> {
        self.queue(bytes, written, None).await
    }

    /// The share of the byte budget a message of `len` bytes takes: a
    /// message larger than the whole budget takes all of it.
    fn share(&self, len: usize) -> u32 {
        len.clamp(1, self.budget_bytes).min(u32::MAX as usize) as u32
    }

    /// Queues a subscription's item once it fits in the byte budget; it
    /// keeps `room` (its place in the subscription's buffer) until written.
    pub(super) async fn send_item(&self, bytes: Vec<u8>, room: OwnedSemaphorePermit) -> Result<(), ClientError> {
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
        // Taken before waiting: the caller's span is the current one here.
        #[cfg(feature = "otel")]
        let trace = if room.is_none() { crate::otel::TraceContext::current() } else { None };
        let share = self.share(bytes.len());
        let permit = Arc::clone(&self.budget).acquire_many_owned(share).await.map_err(|_| self.closed_error())?;
        let outgoing = Outgoing {
            bytes,
            written,
            _budget: Some(permit),
            _room: room,
            #[cfg(feature = "otel")]
            trace,
        };
        self.outbox.send(outgoing).map_err(|_| self.closed_error())
    }

    /// [`ConnectionState::send_item`] without waiting: `Ok(false)` when
    /// the byte budget has no room (the other side is not reading).
    pub(super) fn try_send_item(&self, bytes: Vec<u8>, room: OwnedSemaphorePermit) -> Result<bool, ClientError> {
        let share = self.share(bytes.len());
        let permit = match Arc::clone(&self.budget).try_acquire_many_owned(share) {
            Ok(permit) => permit,
            Err(tokio::sync::TryAcquireError::NoPermits) => return Ok(false),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(self.closed_error()),
        };
        let outgoing = Outgoing {
            bytes,
            written: None,
            _budget: Some(permit),
            _room: Some(room),
            #[cfg(feature = "otel")]
            trace: None,
        };
        self.outbox.send(outgoing).map(|()| true).map_err(|_| self.closed_error())
    }

    /// Queues a message outside the byte budget, for code that cannot wait
    /// (a drop); `false` when the connection is gone.
    pub(super) fn push(&self, bytes: Vec<u8>) -> bool {
        self.outbox.send(Outgoing::unbudgeted(bytes)).is_ok()
    }

    /// Registers a call whose answer goes to `waiter`; fails if the
    /// connection is closed.
    pub(super) fn register(&self, waiter: Waiter) -> Result<u64, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut calls = lock(&self.calls);
        if let Some(closed) = &calls.closed {
            return Err(closed.error());
        }
        calls.pending.insert(id, waiter);
        Ok(id)
    }

    /// Hands a response to the call waiting for it.
    pub(super) fn deliver(&self, id: &RawValue, reply: Reply) {
        let waiting = id.get().parse::<u64>().ok().and_then(|id| lock(&self.calls).pending.remove(&id));
        match waiting {
            Some(Waiter::Call(tx)) => {
                let _ = tx.send(reply);
            }
            Some(Waiter::Subscribe(tx, feed)) => self.subscribed.answered(self, tx, feed, reply),
            Some(Waiter::Again(feed)) => self.subscribed.answered_again(self, feed, reply),
            Some(Waiter::Detached) => {}
            None => tracing::debug!(id = preview(id.get()), "dropped a response whose id matches no pending call"),
        }
    }

    /// Runs when a call gives up (dropped or timed out) before its answer.
    pub(super) fn abandon(&self, id: u64, sent: bool, reason: &str) {
        let was_pending = {
            let mut calls = lock(&self.calls);
            match calls.pending.get(&id) {
                // Its answer is still wanted, to end the subscription it
                // opens (see `Subscribed::answered`).
                Some(Waiter::Subscribe(..) | Waiter::Again(..)) if sent => false,
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
    pub(super) fn unsubscribe_detached(&self, method: &str, subscription: &RawValue) {
        let Ok(id) = self.register(Waiter::Detached) else { return };
        let params = format!("[{}]", subscription.get());
        let params = RawValue::from_string(params).ok();
        if !self.push(request_bytes(method, params.as_deref(), Some(id))) {
            lock(&self.calls).pending.remove(&id);
        }
    }
}

impl ConnectionState {
    pub(super) fn new(options: PeerOptions, limits: &Limits) -> Arc<Self> {
        let budget_bytes = limits.max_queued_bytes.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Arc::new(ConnectionState {
            outbox: Outbox::new(),
            budget: Arc::new(Semaphore::new(budget_bytes)),
            budget_bytes,
            next_id: AtomicU64::new(1),
            calls: Mutex::new(Calls { pending: HashMap::new(), closed: None }),
            options,
            link: Arc::new(Link::new(options.cancellation)),
            closed: Signal::default(),
            serving: ServedSubscriptions::new(limits.max_subscriptions, limits.subscription_buffer),
            subscribed: Subscribed::new(limits.subscription_buffer),
        })
    }

    /// Whether this connection ever made a call (ids start at 1), so that
    /// responses may come in.
    pub(super) fn made_calls(&self) -> bool {
        self.next_id.load(Ordering::Relaxed) > 1
    }

    /// Whether calls of ours are waiting for answers, or subscriptions are
    /// open either way.
    pub(super) fn has_pending_calls(&self) -> bool {
        !lock(&self.calls).pending.is_empty() || !self.serving.is_empty() || !self.subscribed.is_empty()
    }
}
