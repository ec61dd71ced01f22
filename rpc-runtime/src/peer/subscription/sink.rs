//! [`SubscriptionSink`]: the sending end a subscription method gets, and
//! [`subscription`], which opens the subscription, runs the method's setup
//! before the answer is written and starts the rest once it is queued.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context as TaskContext, Poll};

use serde::Serialize;
use tokio::sync::TryAcquireError;

use super::server::{IntoSubscriptionEnd, Open, Run, SendError, Start, State, open};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::router::panicked;
use crate::peer::state::ConnectionState;
use crate::sync::lock;
use crate::wire::{ErrorObject, SUBSCRIPTION_LAGGED};

/// The sending end of one subscription, handed to its method: each item
/// goes to the client as a notification `{"subscription": id, "result":
/// item}`.
///
/// A method declares a subscription by taking a `SubscriptionSink<Item>` parameter
/// (injected, like [`Context`]); the subscription lasts while the method
/// runs:
///
/// ```
/// use rpc_runtime::{rpc, ErrorObject, SubscriptionSink};
///
/// #[rpc]
/// pub trait Clock {
///     /// Sends `count` ticks, then ends.
///     #[rpc(unsubscribe = "unsubscribe_ticks")]
///     async fn ticks(&self, count: u64, sink: SubscriptionSink<u64>) -> Result<(), ErrorObject>;
/// }
///
/// struct MyClock;
///
/// impl Clock for MyClock {
///     async fn ticks(&self, count: u64, sink: SubscriptionSink<u64>) -> Result<(), ErrorObject> {
///         for tick in 1..=count {
///             sink.send(tick).await?; // fails once the client unsubscribed or left
///         }
///         Ok(())
///     }
/// }
/// ```
///
/// The method's setup comes before the client learns the id: the method
/// runs up to its first `.await` while its call is being answered, and the
/// answer (the id) is written only then. Do the setup there, such as
/// `let mut events = bus.subscribe();` on a `tokio::sync::broadcast`
/// channel, and no event the client causes once it has the id can be
/// missed. Items sent during the setup go out right after the answer.
/// Setup that has to await (a query, a remote subscription) takes a
/// [`PendingSubscription`](crate::peer::PendingSubscription) instead, and
/// accepts when it is done.
///
/// Each subscription has room for [`Limits::subscription_buffer`](crate::Limits)
/// items not yet written to the transport. [`SubscriptionSink::send`] waits for room
/// (the method runs at the pace its reader reads); [`SubscriptionSink::try_send`] never
/// waits, and finding no room ends the subscription (the slow-reader
/// policy: the client gets an error notification, and memory does not
/// grow).
pub struct SubscriptionSink<T> {
    open: Arc<Open>,
    shared: Arc<ConnectionState>,
    _item: PhantomData<fn(T)>,
}

impl<T> fmt::Debug for SubscriptionSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriptionSink")
            .field("subscription", &self.open.id)
            .field("ended", &self.open.error())
            .finish()
    }
}

impl<T: Serialize> SubscriptionSink<T> {
    /// Sends `item`, waiting while the subscription's buffer is full (the
    /// client reads slowly) or the connection's outgoing bytes are at their
    /// limit. Fails once the subscription has ended; nothing is sent then.
    pub async fn send(&self, item: T) -> Result<(), SendError> {
        let bytes = self.encode(item)?;
        let open = &self.open;
        if !open.answered.is_raised() {
            // Sent during setup: after the subscribe call's answer.
            tokio::select! {
                biased;
                () = open.ended.raised() => return Err(self.ended()),
                () = open.answered.raised() => {}
            }
        }
        let room = Arc::clone(&open.room).acquire_owned().await.map_err(|_| self.ended())?;
        tokio::select! {
            biased;
            sent = self.shared.send_item(bytes, room) => sent.map_err(|_| SendError::Closed),
            () = open.ended.raised() => Err(self.ended()),
        }
    }

    /// Sends `item` without waiting. When the subscription's buffer (or the
    /// connection's outgoing bytes) has no room, the client is reading too
    /// slowly: the subscription ends, the client gets a last notification
    /// with error [`SUBSCRIPTION_LAGGED`], and this returns
    /// [`SendError::Lagged`]. For producers that cannot wait, such as a
    /// broadcast of events.
    pub fn try_send(&self, item: T) -> Result<(), SendError> {
        if let Some(err) = self.open.error() {
            return Err(err);
        }
        let bytes = self.encode(item)?;
        let room = match Arc::clone(&self.open.room).try_acquire_owned() {
            Ok(room) => room,
            Err(TryAcquireError::NoPermits) => return Err(self.lagged()),
            Err(TryAcquireError::Closed) => return Err(self.ended()),
        };
        {
            let mut held = lock(&self.open.held);
            if !self.open.answered.is_raised() {
                // Sent during setup: it goes out right after the answer.
                held.push((bytes, Some(room)));
                return Ok(());
            }
        }
        match self.shared.try_send_item(bytes, room) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.lagged()),
            Err(_) => Err(SendError::Closed),
        }
    }

    /// The item as a notification.
    fn encode(&self, item: T) -> Result<Vec<u8>, SendError> {
        let open = &self.open;
        let hint = open.hint.load(Ordering::Relaxed);
        let mut bytes = Vec::with_capacity(open.head.len() + hint + 12);
        bytes.extend_from_slice(&open.head);
        bytes.extend_from_slice(b"\"result\":");
        let start = bytes.len();
        serde_json::to_writer(&mut bytes, &item).map_err(|err| SendError::Encode(err.to_string()))?;
        open.hint.store(bytes.len() - start, Ordering::Relaxed);
        bytes.extend_from_slice(b"}}");
        Ok(bytes)
    }
}

impl<T> SubscriptionSink<T> {
    /// The sink of `open`, a subscription of the connection `shared`.
    pub(super) fn new(open: Arc<Open>, shared: Arc<ConnectionState>) -> Self {
        SubscriptionSink { open, shared, _item: PhantomData }
    }

    /// The subscription's id, as the client received it.
    pub fn id(&self) -> u64 {
        self.open.id
    }

    /// Whether the subscription has ended (see [`SendError`] for why).
    pub fn is_closed(&self) -> bool {
        self.open.error().is_some()
    }

    /// Completes when the subscription ends: the client unsubscribed, the
    /// connection closed or its input ended, or its reader fell behind.
    /// Use it in a `tokio::select!` to stop waiting for the next item.
    pub async fn closed(&self) -> SendError {
        self.open.ended.raised().await;
        self.ended()
    }

    /// Why the subscription ended.
    fn ended(&self) -> SendError {
        self.open.error().unwrap_or(SendError::Closed)
    }

    /// Ends the subscription because its reader fell behind, telling it so.
    #[cold]
    fn lagged(&self) -> SendError {
        let open = &self.open;
        if open.end(State::Lagged) {
            self.shared.serving.remove(open.id);
            tracing::debug!(
                subscription = open.id,
                capacity = open.capacity,
                "subscription ended: its reader fell behind"
            );
            let error = ErrorObject::new(
                SUBSCRIPTION_LAGGED,
                format!(
                    "Subscription ended: the client read too slowly ({} items were waiting; Limits::subscription_buffer)",
                    open.capacity
                ),
            );
            let last = open.last(Some(&error));
            let mut held = lock(&open.held);
            if open.answered.is_raised() {
                drop(held);
                self.shared.push(last);
            } else {
                // Lagged during setup: after the answer and the items.
                held.push((last, None));
            }
        }
        self.ended()
    }
}

/// Opens a subscription for the request whose params are `params`, runs
/// `handler` with its sink once the answer (the id, written into `out`) is
/// queued. What `#[rpc]` generates for a method with a `SubscriptionSink` parameter.
pub fn subscription<T, F, Fut>(
    params: &Params<'_>,
    cx: &Context,
    out: &mut Vec<u8>,
    notification: &'static str,
    unsubscribe: &'static str,
    handler: F,
) -> Result<Option<crate::dispatch::router::MethodFuture>, ErrorObject>
where
    T: Serialize,
    F: FnOnce(SubscriptionSink<T>) -> Fut,
    Fut: Future + Send + 'static,
    Fut::Output: IntoSubscriptionEnd,
{
    let (open, shared) = open(params, cx, notification, unsubscribe)?;
    let sink = SubscriptionSink::new(Arc::clone(&open), Arc::clone(&shared));
    let future = handler(sink);
    let run = set_up(params.method(), Box::pin(async move { future.await.into_end() }));
    out.extend_from_slice(open.id.to_string().as_bytes());
    shared.serving.defer(Start { open, method: params.method(), run: Some(run) });
    Ok(None)
}

/// The method's setup: it runs now, up to its first `.await`, before its
/// answer is written, so that what it sets up (a receiver of a broadcast
/// channel, a listener) is in place before the client can learn the id.
/// Polled once here with a waker that does nothing; the task that runs the
/// rest polls it again at once, with its own. A method that finishes (or
/// panics) in its setup gives its end as it is.
fn set_up(method: &'static str, mut run: Run) -> Run {
    let mut setup = TaskContext::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(&mut setup))) {
        Ok(Poll::Pending) => run,
        Ok(Poll::Ready(end)) => Box::pin(std::future::ready(end)),
        Err(panic) => {
            let error = panicked(method, &*panic);
            Box::pin(std::future::ready(Err(error)))
        }
    }
}
