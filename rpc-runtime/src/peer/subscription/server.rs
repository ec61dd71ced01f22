//! The serving side: the [`SubscriptionSink`] a subscription method sends its items
//! through, the [`PendingSubscription`] of a method that answers the subscribe call
//! itself, and the connection's table of open subscriptions.
//!
//! A subscribe call to a method taking a [`SubscriptionSink`] is answered with the
//! subscription's id at once, but its method first runs up to its first
//! `.await` (its setup, such as subscribing to a broadcast channel, is done
//! before the client can learn the id and cause an event); items it sends
//! before the answer is queued wait for it, so that none overtakes it. The
//! rest runs as a task of its own. A method taking a [`PendingSubscription`] runs
//! as the call's future until it accepts (the answer is the id), rejects
//! (the answer is its error) or returns; the rest of it then runs as a
//! task of its own, and [`PendingSubscription::accept`] gives the [`SubscriptionSink`] once
//! the answer is queued.
//!
//! The subscription lasts as long as its method runs. It ends when the
//! method returns (the client gets a last notification), when the client
//! unsubscribes, when its reader falls behind a [`SubscriptionSink::try_send`], or when
//! the connection closes or its input ends; the method sees the last three
//! through [`SubscriptionSink::closed`] and the errors of [`SubscriptionSink::send`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::pending::CatchUnwind;
use crate::dispatch::router::{IntoErrorObject, panicked};
use crate::dispatch::signal::Signal;
use crate::peer::{Shared, json_string};
use crate::spec::MethodSpec;
use crate::sync::lock;
use crate::wire::{
    ErrorObject, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_OVERLOADED, SUBSCRIPTION_LAGGED,
};

/// Why an item could not be sent through a [`SubscriptionSink`]; all but
/// [`SendError::Encode`] mean the subscription has ended.
///
/// It converts into an [`ErrorObject`], so a method returning
/// `Result<(), ErrorObject>` (or an error type made from one) can use `?`
/// on [`SubscriptionSink::send`]: once the subscription has ended, what the method
/// returns is not sent anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// The client unsubscribed.
    Unsubscribed,
    /// The connection closed, or its input ended: nobody can unsubscribe
    /// any more, so every subscription on it ends.
    Closed,
    /// The client read too slowly: `capacity` items were waiting when
    /// [`SubscriptionSink::try_send`] had another. The client was sent a last
    /// notification with error [`SUBSCRIPTION_LAGGED`].
    Lagged {
        /// The subscription's buffer, in items
        /// ([`Limits::subscription_buffer`](crate::Limits)).
        capacity: usize,
    },
    /// The subscription's method returned, which ends the subscription (an
    /// item sent later, from a task the method started, goes nowhere).
    Ended,
    /// The item failed to serialize (a map with non-string keys, say); it
    /// was not sent, and the subscription goes on.
    Encode(String),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Unsubscribed => f.write_str("the client unsubscribed"),
            SendError::Closed => f.write_str("the connection closed"),
            SendError::Lagged { capacity } => {
                write!(f, "the client read too slowly ({capacity} items were waiting); the subscription ended")
            }
            SendError::Ended => f.write_str("the subscription's method has returned"),
            SendError::Encode(err) => write!(f, "the item failed to serialize: {err}"),
        }
    }
}

impl std::error::Error for SendError {}

impl From<SendError> for ErrorObject {
    fn from(err: SendError) -> Self {
        ErrorObject::new(INTERNAL_ERROR, format!("Internal error: {err}"))
    }
}

/// What a subscription method may return: `()`, or `Result<(), E>` with
/// `E: Into<ErrorObject>` ([`IntoErrorObject`]; an `Err` ends the subscription with that error).
pub trait IntoSubscriptionEnd {
    /// `Err` with the error object the subscription ends with.
    fn into_end(self) -> Result<(), ErrorObject>;
}

impl IntoSubscriptionEnd for () {
    fn into_end(self) -> Result<(), ErrorObject> {
        Ok(())
    }
}

impl<E: IntoErrorObject> IntoSubscriptionEnd for Result<(), E> {
    fn into_end(self) -> Result<(), ErrorObject> {
        self.map_err(IntoErrorObject::into_error_object)
    }
}

/// What a subscription method's future gave, as the error object (if
/// any) it ends with. Used by generated code, where the call is spanned at
/// the method's return type so that an error type without the conversion
/// is reported there.
pub fn subscription_end<R: IntoSubscriptionEnd>(end: R) -> Result<(), ErrorObject> {
    end.into_end()
}

/// States of an [`Open`] subscription (`why` ended).
const OPEN: u8 = 0;
const UNSUBSCRIBED: u8 = 1;
const CLOSED: u8 = 2;
const LAGGED: u8 = 3;
const ENDED: u8 = 4;

/// One open subscription, shared by its [`SubscriptionSink`] and the table.
struct Open {
    id: u64,
    /// The unsubscribe method that may end it.
    unsubscribe: &'static str,
    /// `{"jsonrpc":"2.0","method":..,"params":{"subscription":<id>,`: what
    /// each of its notifications starts with.
    head: Box<[u8]>,
    /// Items queued and not yet written: one permit each.
    room: Arc<Semaphore>,
    capacity: usize,
    /// Raised when it ends, for whatever reason (`why`).
    ended: Signal,
    why: AtomicU8,
    /// The size of the last item, to size the next one's buffer.
    hint: AtomicUsize,
    /// Raised once the subscribe call's answer is queued: items go out
    /// only then.
    answered: Signal,
    /// What was sent before the answer was queued: items of
    /// [`SubscriptionSink::try_send`] with their room, and the last notification if
    /// the subscription lagged already.
    held: Mutex<Vec<(Vec<u8>, Option<OwnedSemaphorePermit>)>>,
    /// Counted as open until it ends.
    #[cfg(feature = "metrics")]
    counted: crate::dispatch::metrics::OpenSubscription,
}

impl Open {
    /// Ends the subscription for `why`; `false` if it had ended already
    /// (the first reason stays).
    fn end(&self, why: u8) -> bool {
        let first = self.why.compare_exchange(OPEN, why, Ordering::AcqRel, Ordering::Acquire).is_ok();
        if first {
            self.room.close();
            self.ended.raise();
            #[cfg(feature = "metrics")]
            self.counted.close();
        }
        first
    }

    /// Why it ended, if it has.
    fn error(&self) -> Option<SendError> {
        match self.why.load(Ordering::Acquire) {
            OPEN => None,
            UNSUBSCRIBED => Some(SendError::Unsubscribed),
            LAGGED => Some(SendError::Lagged { capacity: self.capacity }),
            ENDED => Some(SendError::Ended),
            _ => Some(SendError::Closed),
        }
    }

    /// The last notification: `"end": true`, or the error it ended with.
    fn last(&self, error: Option<&ErrorObject>) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.head.len() + 64);
        bytes.extend_from_slice(&self.head);
        match error {
            None => bytes.extend_from_slice(b"\"end\":true"),
            Some(error) => {
                bytes.extend_from_slice(b"\"error\":");
                // An error object always serializes: code, string, raw JSON.
                let _ = serde_json::to_writer(&mut bytes, error);
            }
        }
        bytes.extend_from_slice(b"}}");
        bytes
    }
}

/// A subscription method's future, its end as an error object.
type Run = Pin<Box<dyn Future<Output = Result<(), ErrorObject>> + Send>>;

/// A subscription whose answer is on its way: what to do once it is
/// queued.
pub(in crate::peer) struct Start {
    open: Arc<Open>,
    method: &'static str,
    /// The method of a [`SubscriptionSink`], to start; `None` for a [`PendingSubscription`],
    /// whose method runs already: its answer being queued is what
    /// [`PendingSubscription::accept`] waits for.
    run: Option<Run>,
}

/// The subscriptions a connection serves.
pub(in crate::peer) struct Serving {
    next_id: AtomicU64,
    table: Mutex<Table>,
    /// Answered, not started yet (see [`Serving::take_starting`]).
    starting: Mutex<Vec<Start>>,
    has_starting: AtomicBool,
    max: usize,
    buffer: usize,
}

#[derive(Default)]
struct Table {
    open: HashMap<u64, Arc<Open>>,
    /// The connection closed: nothing more opens.
    closed: bool,
}

impl Serving {
    /// At most `max` open at once, each with room for `buffer` items.
    pub(in crate::peer) fn new(max: usize, buffer: usize) -> Self {
        Serving {
            next_id: AtomicU64::new(1),
            table: Mutex::default(),
            starting: Mutex::default(),
            has_starting: AtomicBool::new(false),
            max,
            buffer: buffer.clamp(1, Semaphore::MAX_PERMITS),
        }
    }

    /// Opens a subscription of `method` whose items are notifications
    /// `notification`, ended early by `unsubscribe`; -32000 past the limit.
    fn open(
        &self,
        #[cfg_attr(not(feature = "metrics"), allow(unused_variables))] method: &'static str,
        notification: &str,
        unsubscribe: &'static str,
    ) -> Result<Arc<Open>, ErrorObject> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let head = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":{},\"params\":{{\"subscription\":{id},",
            json_string(notification)
        );
        let open = Arc::new(Open {
            id,
            unsubscribe,
            head: head.into_bytes().into_boxed_slice(),
            room: Arc::new(Semaphore::new(self.buffer)),
            capacity: self.buffer,
            ended: Signal::default(),
            why: AtomicU8::new(OPEN),
            hint: AtomicUsize::new(32),
            answered: Signal::default(),
            held: Mutex::default(),
            #[cfg(feature = "metrics")]
            counted: crate::dispatch::metrics::OpenSubscription::new(method),
        });
        let mut table = lock(&self.table);
        if table.closed {
            return Err(ErrorObject::new(INVALID_REQUEST, "the connection is closing: no subscription can open"));
        }
        if table.open.len() >= self.max {
            return Err(too_many(self.max));
        }
        table.open.insert(id, Arc::clone(&open));
        Ok(open)
    }

    fn remove(&self, id: u64) {
        lock(&self.table).open.remove(&id);
    }

    /// Holds `start` until its answer is queued (see [`Serving::take_starting`]).
    fn defer(&self, start: Start) {
        lock(&self.starting).push(start);
        self.has_starting.store(true, Ordering::Release);
    }

    /// Whether subscriptions answered since the last
    /// [`Serving::take_starting`] wait to start (one load).
    #[inline]
    pub(in crate::peer) fn has_starting(&self) -> bool {
        self.has_starting.load(Ordering::Acquire)
    }

    /// The subscriptions answered since the last call, to start once their
    /// answers are queued: at once, or after the rest of their batch.
    /// Costs one load when there are none.
    #[inline]
    pub(in crate::peer) fn take_starting(&self) -> Vec<Start> {
        if !self.has_starting.load(Ordering::Acquire) {
            return Vec::new();
        }
        self.has_starting.store(false, Ordering::Release);
        std::mem::take(&mut *lock(&self.starting))
    }

    /// Ends subscription `id` (raw JSON) if `method` is its unsubscribe
    /// method; `false` when there is no such subscription (unknown, ended,
    /// or made by a method that `method` does not end).
    pub(in crate::peer) fn unsubscribe(&self, id: u64, method: &str) -> bool {
        let open = {
            let mut table = lock(&self.table);
            match table.open.get(&id) {
                Some(open) if open.unsubscribe == method => table.open.remove(&id),
                _ => None,
            }
        };
        open.is_some_and(|open| open.end(UNSUBSCRIBED))
    }

    /// Ends every subscription: the connection closed.
    pub(in crate::peer) fn close_all(&self) {
        let open = {
            let mut table = lock(&self.table);
            table.closed = true;
            std::mem::take(&mut table.open)
        };
        for open in open.into_values() {
            open.end(CLOSED);
        }
        let starting = std::mem::take(&mut *lock(&self.starting));
        for start in starting {
            start.open.end(CLOSED);
        }
    }

    /// Whether no subscription is open.
    pub(in crate::peer) fn is_empty(&self) -> bool {
        lock(&self.table).open.is_empty()
    }
}

/// Starts the methods of subscriptions whose answers are queued, each on a
/// task of its own.
pub(in crate::peer) fn start(shared: &Arc<Shared>, starts: Vec<Start>) {
    for Start { open, method, run } in starts {
        match run {
            Some(run) => {
                tokio::spawn(self::run(Arc::clone(shared), open, method, run));
            }
            // Whatever the pending method decided is in the answer now.
            None => {
                open.answered.raise();
            }
        }
    }
}

/// Runs a subscription's method; when it returns, ends the subscription
/// and tells the client (unless it had ended already).
async fn run(shared: Arc<Shared>, open: Arc<Open>, method: &'static str, run: Run) {
    // The answer is queued: what the method sent during its setup goes
    // out first, in order, then everything else directly.
    let held = {
        let mut held = lock(&open.held);
        open.answered.raise();
        std::mem::take(&mut *held)
    };
    for (bytes, room) in held {
        let sent = match room {
            Some(room) => shared.send_item(bytes, room).await,
            None => shared.send(bytes, None).await,
        };
        if sent.is_err() {
            break;
        }
    }
    finish(&shared, &open, method, run).await;
}

/// Runs the rest of a subscription's method; when it returns, ends the
/// subscription and tells the client (unless it had ended already, or was
/// never accepted: a rejected or dropped [`PendingSubscription`] ended it).
async fn finish(shared: &Shared, open: &Open, method: &'static str, run: Run) {
    let error = match CatchUnwind(run).await {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(error),
        Err(panic) => Some(panicked(method, &*panic)),
    };
    if !open.answered.is_raised() {
        // A pending subscription's method may return without awaiting
        // `accept` to its end: its last notification follows the answer.
        tokio::select! {
            biased;
            () = open.ended.raised() => {}
            () = open.answered.raised() => {}
        }
    }
    if open.end(ENDED) {
        shared.serving.remove(open.id);
        let _ = shared.send(open.last(error.as_ref()), None).await;
    } else if let Some(error) = error {
        tracing::debug!(method, %error, "a subscription's method failed after the subscription ended");
    }
}

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
/// [`PendingSubscription`] instead, and accepts when it is done.
///
/// Each subscription has room for [`Limits::subscription_buffer`](crate::Limits)
/// items not yet written to the transport. [`SubscriptionSink::send`] waits for room
/// (the method runs at the pace its reader reads); [`SubscriptionSink::try_send`] never
/// waits, and finding no room ends the subscription (the slow-reader
/// policy: the client gets an error notification, and memory does not
/// grow).
pub struct SubscriptionSink<T> {
    open: Arc<Open>,
    shared: Arc<Shared>,
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
        if open.end(LAGGED) {
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
    let sink = SubscriptionSink { open: Arc::clone(&open), shared: Arc::clone(&shared), _item: PhantomData };
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

/// The untyped first half of [`subscription`].
fn open(
    params: &Params<'_>,
    cx: &Context,
    notification: &'static str,
    unsubscribe: &'static str,
) -> Result<(Arc<Open>, Arc<Shared>), ErrorObject> {
    if params.is_notification() {
        // Nobody would learn the id, or be able to unsubscribe.
        return Err(ErrorObject::invalid_request().with_data(&format!(
            "`{}` opens a subscription: call it as a request (with an id), whose answer is the subscription id",
            params.method()
        )));
    }
    let Some(peer) = cx.peer() else {
        // The caller's choice of transport, not a fault of the server:
        // -32601 ("not available"), as geth answers `eth_subscribe` over
        // HTTP, with the reason in the message.
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!(
                "Notifications not supported: `{}` opens a subscription, whose items arrive as notifications, and this request came over a transport that carries none to the caller (such as HTTP POST, one answer per request); subscribe over WebSocket, TCP or stdio",
                params.method()
            ),
        ));
    };
    let shared = Arc::clone(&peer.shared);
    let open = shared.serving.open(params.method(), notification, unsubscribe)?;
    Ok((open, shared))
}

/// A subscription not answered yet, handed to its method: the method does
/// its setup, however long it awaits, then answers the subscribe call with
/// [`PendingSubscription::accept`] (the id, and a [`SubscriptionSink`] to send items through)
/// or [`PendingSubscription::reject`] (an error object). It has no way to send an
/// item: items exist only once the client holds the id.
///
/// A method declares it by taking a `PendingSubscription<Item>` parameter in place
/// of a `SubscriptionSink<Item>` (injected likewise; the catalog and the client are
/// the same for both):
///
/// ```
/// use rpc_runtime::{rpc, ErrorObject, peer::PendingSubscription};
/// use tokio::sync::broadcast;
///
/// #[rpc]
/// pub trait Prices {
///     /// Every new price of `symbol`.
///     #[rpc(unsubscribe = "unsubscribe_prices")]
///     async fn prices(&self, symbol: String, pending: PendingSubscription<f64>) -> Result<(), ErrorObject>;
/// }
///
/// struct Exchange {
///     feed: broadcast::Sender<(String, f64)>,
/// }
///
/// impl Prices for Exchange {
///     async fn prices(&self, symbol: String, pending: PendingSubscription<f64>) -> Result<(), ErrorObject> {
///         // Setup that awaits (a query, a remote subscription); the
///         // client has no id yet, so it cannot miss what follows.
///         let mut feed = self.feed.subscribe();
///         let known = lookup(&symbol).await;
///         if !known {
///             // The subscribe call is answered with this error object.
///             pending.reject(ErrorObject::invalid_params(format!("unknown symbol `{symbol}`"))).await;
///             return Ok(());
///         }
///         // Answers with the id now; fails if the connection went away.
///         let sink = pending.accept().await?;
///         while let Ok((name, price)) = feed.recv().await {
///             if name == symbol {
///                 sink.send(price).await?;
///             }
///         }
///         Ok(())
///     }
/// }
///
/// async fn lookup(symbol: &str) -> bool {
///     symbol.len() <= 5
/// }
/// ```
///
/// A method that returns without deciding (or drops its `PendingSubscription`) has
/// its call answered with its own error, or with -32603 saying the
/// subscription was never accepted. A method that goes on after
/// [`PendingSubscription::reject`] runs to its end unseen: there is no
/// subscription to end. Until the answer the method holds one of the
/// connection's [`Limits::max_concurrent_requests`](crate::Limits) like
/// any `async` method, and counts against `max_subscriptions`.
pub struct PendingSubscription<T> {
    open: Arc<Open>,
    shared: Arc<Shared>,
    decision: Arc<Decision>,
    /// Set by `accept` just before it drops `self`.
    accepted: bool,
    _item: PhantomData<fn(T)>,
}

/// What a pending subscription's method decided, read by the future that
/// answers the subscribe call.
#[derive(Default)]
struct Decision {
    made: Mutex<Option<Decided>>,
    /// Raised once `made` is set: a method may decide from another task.
    signal: Signal,
}

enum Decided {
    Accepted,
    Rejected(ErrorObject),
    /// The [`PendingSubscription`] was dropped undecided.
    Dropped,
}

impl Decision {
    /// Records the first decision; later ones are ignored.
    fn decide(&self, decided: Decided) {
        let mut made = lock(&self.made);
        if made.is_none() {
            *made = Some(decided);
            drop(made);
            self.signal.raise();
        }
    }

    fn take(&self) -> Option<Decided> {
        lock(&self.made).take()
    }
}

impl<T> fmt::Debug for PendingSubscription<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingSubscription")
            .field("subscription", &self.open.id)
            .field("ended", &self.open.error())
            .finish()
    }
}

impl<T> PendingSubscription<T> {
    /// Answers the subscribe call with the subscription's id and returns,
    /// once that answer is queued (ahead of every item), the [`SubscriptionSink`] for
    /// the items. Fails if the subscription ended first: the connection
    /// closed, or the client unsubscribed by guessing the id.
    pub async fn accept(mut self) -> Result<SubscriptionSink<T>, SendError> {
        let open = Arc::clone(&self.open);
        let shared = Arc::clone(&self.shared);
        self.decision.decide(Decided::Accepted);
        // Its drop leaves the subscription open.
        self.accepted = true;
        drop(self);
        tokio::select! {
            biased;
            () = open.ended.raised() => {}
            () = open.answered.raised() => {}
        }
        match open.error() {
            Some(err) => Err(err),
            None => Ok(SubscriptionSink { open, shared, _item: PhantomData }),
        }
    }

    /// Answers the subscribe call with `error` instead of an id: no
    /// subscription opens, and no item is ever sent.
    pub async fn reject(self, error: impl Into<ErrorObject>) {
        self.decision.decide(Decided::Rejected(error.into()));
    }

    /// Whether the subscription has ended before being accepted (the
    /// connection closed): setup can stop early.
    pub fn is_closed(&self) -> bool {
        self.open.error().is_some()
    }
}

impl<T> Drop for PendingSubscription<T> {
    fn drop(&mut self) {
        if self.accepted {
            return;
        }
        self.decision.decide(Decided::Dropped);
        if self.open.end(ENDED) {
            // Never opened for the client: no last notification.
            self.shared.serving.remove(self.open.id);
        }
    }
}

/// Opens a subscription for the request whose params are `params`, and
/// runs `handler` with a [`PendingSubscription`]: the call is answered when the
/// handler accepts or rejects it, or returns. What `#[rpc]` generates for
/// a method with a `PendingSubscription` parameter.
pub fn pending_subscription<T, F, Fut>(
    params: &Params<'_>,
    cx: &Context,
    notification: &'static str,
    unsubscribe: &'static str,
    handler: F,
) -> Result<Option<crate::dispatch::router::MethodFuture>, ErrorObject>
where
    T: Serialize,
    F: FnOnce(PendingSubscription<T>) -> Fut,
    Fut: Future + Send + 'static,
    Fut::Output: IntoSubscriptionEnd,
{
    let (open, shared) = open(params, cx, notification, unsubscribe)?;
    let decision = Arc::new(Decision::default());
    let pending = PendingSubscription {
        open: Arc::clone(&open),
        shared: Arc::clone(&shared),
        decision: Arc::clone(&decision),
        accepted: false,
        _item: PhantomData,
    };
    let future = handler(pending);
    let run: Run = Box::pin(async move { future.await.into_end() });
    let method = params.method();
    // Once the answer (whichever it is) is queued, `accept` may return.
    shared.serving.defer(Start { open: Arc::clone(&open), method, run: None });
    Ok(Some(Box::pin(answer(shared, open, method, decision, run))))
}

/// The answer to a pending subscription's call: runs its method until it
/// decides or returns; the rest of the method runs on a task of its own.
async fn answer(
    shared: Arc<Shared>,
    open: Arc<Open>,
    method: &'static str,
    decision: Arc<Decision>,
    mut run: Run,
) -> crate::dispatch::router::MethodResult {
    // Until the answer is given, dropping this future (the call was
    // cancelled, or the method panicked) leaves no subscription behind,
    // even one the method had accepted.
    let unanswered = Unanswered(Some((Arc::clone(&shared), Arc::clone(&open))));
    let returned = tokio::select! {
        biased;
        end = &mut run => Some(end),
        () = decision.signal.raised() => None,
    };
    let decided = decision.take();
    let accepted = matches!(decided, Some(Decided::Accepted));
    let answer = match (decided, returned.as_ref()) {
        (Some(Decided::Accepted), _) => crate::dispatch::router::encode(&open.id),
        (Some(Decided::Rejected(error)), _) => Err(error),
        (_, Some(Err(error))) => Err(error.clone()),
        (_, _) => Err(never_accepted(method)),
    };
    unanswered.disarm();
    match returned {
        // The method ended with its answer; an accepted subscription ends
        // at once, after the answer.
        Some(end) if accepted => {
            tokio::spawn(async move { finish(&shared, &open, method, Box::pin(std::future::ready(end))).await });
        }
        Some(_) => {}
        // Accepted: the subscription lasts while the rest runs. Rejected,
        // or its `PendingSubscription` dropped: no subscription to end, and what
        // the method does next is nobody's to see.
        None => {
            tokio::spawn(async move { finish(&shared, &open, method, run).await });
        }
    }
    answer
}

/// Ends a pending subscription whose call's future was dropped before it
/// answered.
struct Unanswered(Option<(Arc<Shared>, Arc<Open>)>);

impl Unanswered {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some((shared, open)) = self.0.take()
            && open.end(ENDED)
        {
            shared.serving.remove(open.id);
        }
    }
}

/// -32603: a pending subscription's method neither accepted nor rejected
/// it, and returned no error to answer with.
#[cold]
fn never_accepted(method: &str) -> ErrorObject {
    ErrorObject::new(
        INTERNAL_ERROR,
        format!(
            "Internal error: the subscription of `{method}` was never accepted: its method returned, or dropped its PendingSubscription, without calling accept or reject"
        ),
    )
}

/// -32000: the connection has as many subscriptions as it may.
#[cold]
fn too_many(max: usize) -> ErrorObject {
    ErrorObject::new(
        SERVER_OVERLOADED,
        format!(
            "Server overloaded: at most {max} subscriptions may be open at once on this connection (max_subscriptions); unsubscribe from one first"
        ),
    )
}

/// The params of every unsubscribe method: the subscription's id.
pub static UNSUBSCRIBE_PARAMS: [crate::spec::ParamSpec; 1] =
    [crate::spec::ParamSpec { name: "subscription", ty: "subscription id", optional: false }];

/// Serves unsubscribe method `spec`: params `[id]` (or
/// `{"subscription": id}`), answered `true` when that subscription was
/// open and made by a method `spec` ends, else `false`. Ids are what
/// subscribe calls answer with, unsigned integers: anything else is
/// -32602, as the catalog's schema says.
pub fn register_unsubscribe(router: &mut crate::dispatch::router::Router, spec: &'static MethodSpec) {
    let registered = router.register_direct(
        spec,
        Box::new(move |params, cx, out| {
            let id: u64 = params.decode(0)?;
            let closed = cx.peer().is_some_and(|peer| peer.shared.serving.unsubscribe(id, spec.name));
            out.extend_from_slice(if closed { b"true" } else { b"false" });
            Ok(None)
        }),
    );
    if let Err(err) = registered {
        // Several subscriptions of one trait may share an unsubscribe
        // method; #[rpc] registers it once, so this cannot happen.
        unreachable!("#[rpc] registers each unsubscribe method once: {err}");
    }
}
