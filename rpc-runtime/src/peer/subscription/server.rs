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
//!
//! This file holds what both kinds share: the open subscription ([`Open`]
//! and its [`State`]), the connection's table, starting and finishing a
//! subscription's method, and the unsubscribe methods. The sink is in
//! `sink.rs`, the pending subscription in `pending.rs`; their public items
//! are re-exported here, the path generated code reaches them by.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use super::pending::{PendingSubscription, pending_subscription};
pub use super::sink::{SubscriptionSink, subscription};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::pending::CatchUnwind;
use crate::dispatch::router::{IntoErrorObject, panicked};
use crate::dispatch::signal::Signal;
use crate::peer::json_string;
use crate::peer::state::ConnectionState;
use crate::spec::MethodSpec;
use crate::sync::lock;
use crate::wire::{ErrorObject, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_OVERLOADED};

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
    /// notification with error
    /// [`SUBSCRIPTION_LAGGED`](crate::wire::SUBSCRIPTION_LAGGED).
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

/// Where an [`Open`] subscription is in its life: open, or why it ended.
/// Stored in an [`AtomicState`], so that the first reason to end it wins
/// without a lock.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Not ended.
    Open = 0,
    /// The client unsubscribed.
    Unsubscribed = 1,
    /// The connection closed, or its input ended.
    Closed = 2,
    /// Its reader fell behind a [`SubscriptionSink::try_send`].
    Lagged = 3,
    /// Its method returned, or a pending subscription was never answered.
    Ended = 4,
}

impl TryFrom<u8> for State {
    type Error = u8;

    fn try_from(state: u8) -> Result<Self, u8> {
        Ok(match state {
            0 => State::Open,
            1 => State::Unsubscribed,
            2 => State::Closed,
            3 => State::Lagged,
            4 => State::Ended,
            other => return Err(other),
        })
    }
}

/// A [`State`] that any task may end, once.
struct AtomicState(AtomicU8);

impl AtomicState {
    fn new() -> Self {
        AtomicState(AtomicU8::new(State::Open as u8))
    }

    fn load(&self) -> State {
        // Only the discriminant of a `State` is ever stored; were anything
        // else read, `Closed` is the end that promises the least.
        State::try_from(self.0.load(Ordering::Acquire)).unwrap_or(State::Closed)
    }

    /// Moves from [`State::Open`] to `ended`; `false` if it had ended
    /// already (the first reason stays).
    fn end(&self, ended: State) -> bool {
        self.0.compare_exchange(State::Open as u8, ended as u8, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
}

/// One open subscription, shared by its [`SubscriptionSink`] and the table.
pub(super) struct Open {
    pub(super) id: u64,
    /// The unsubscribe method that may end it.
    pub(super) unsubscribe: &'static str,
    /// `{"jsonrpc":"2.0","method":..,"params":{"subscription":<id>,`: what
    /// each of its notifications starts with.
    pub(super) head: Box<[u8]>,
    /// Items queued and not yet written: one permit each.
    pub(super) room: Arc<Semaphore>,
    pub(super) capacity: usize,
    /// Raised when it ends, for whatever reason (`state`).
    pub(super) ended: Signal,
    state: AtomicState,
    /// The size of the last item, to size the next one's buffer.
    pub(super) hint: AtomicUsize,
    /// Raised once the subscribe call's answer is queued: items go out
    /// only then.
    pub(super) answered: Signal,
    /// What was sent before the answer was queued: items of
    /// [`SubscriptionSink::try_send`] with their room, and the last notification if
    /// the subscription lagged already.
    pub(super) held: Mutex<Vec<(Vec<u8>, Option<OwnedSemaphorePermit>)>>,
    /// Counted as open until it ends.
    #[cfg(feature = "metrics")]
    pub(super) counted: crate::dispatch::metrics::OpenSubscription,
}

impl Open {
    /// Ends the subscription for `why`; `false` if it had ended already
    /// (the first reason stays).
    pub(super) fn end(&self, why: State) -> bool {
        let first = self.state.end(why);
        if first {
            self.room.close();
            self.ended.raise();
            #[cfg(feature = "metrics")]
            self.counted.close();
        }
        first
    }

    /// Why it ended, if it has.
    pub(super) fn error(&self) -> Option<SendError> {
        match self.state.load() {
            State::Open => None,
            State::Unsubscribed => Some(SendError::Unsubscribed),
            State::Closed => Some(SendError::Closed),
            State::Lagged => Some(SendError::Lagged { capacity: self.capacity }),
            State::Ended => Some(SendError::Ended),
        }
    }

    /// The last notification: `"end": true`, or the error it ended with.
    pub(super) fn last(&self, error: Option<&ErrorObject>) -> Vec<u8> {
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
pub(super) type Run = Pin<Box<dyn Future<Output = Result<(), ErrorObject>> + Send>>;

/// A subscription whose answer is on its way: what to do once it is
/// queued.
pub(in crate::peer) struct Start {
    pub(super) open: Arc<Open>,
    pub(super) method: &'static str,
    /// The method of a [`SubscriptionSink`], to start; `None` for a [`PendingSubscription`],
    /// whose method runs already: its answer being queued is what
    /// [`PendingSubscription::accept`] waits for.
    pub(super) run: Option<Run>,
}

/// The subscriptions a connection serves.
pub(in crate::peer) struct ServedSubscriptions {
    next_id: AtomicU64,
    table: Mutex<Table>,
    /// Answered, not started yet (see [`ServedSubscriptions::take_starting`]).
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

impl ServedSubscriptions {
    /// At most `max` open at once, each with room for `buffer` items.
    pub(in crate::peer) fn new(max: usize, buffer: usize) -> Self {
        ServedSubscriptions {
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
            state: AtomicState::new(),
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

    pub(super) fn remove(&self, id: u64) {
        lock(&self.table).open.remove(&id);
    }

    /// Holds `start` until its answer is queued (see [`ServedSubscriptions::take_starting`]).
    pub(super) fn defer(&self, start: Start) {
        lock(&self.starting).push(start);
        self.has_starting.store(true, Ordering::Release);
    }

    /// Whether subscriptions answered since the last
    /// [`ServedSubscriptions::take_starting`] wait to start (one load).
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
        open.is_some_and(|open| open.end(State::Unsubscribed))
    }

    /// Ends every subscription: the connection closed.
    pub(in crate::peer) fn close_all(&self) {
        let open = {
            let mut table = lock(&self.table);
            table.closed = true;
            std::mem::take(&mut table.open)
        };
        for open in open.into_values() {
            open.end(State::Closed);
        }
        let starting = std::mem::take(&mut *lock(&self.starting));
        for start in starting {
            start.open.end(State::Closed);
        }
    }

    /// Whether no subscription is open.
    pub(in crate::peer) fn is_empty(&self) -> bool {
        lock(&self.table).open.is_empty()
    }
}

/// Starts the methods of subscriptions whose answers are queued, each on a
/// task of its own.
pub(in crate::peer) fn start(shared: &Arc<ConnectionState>, starts: Vec<Start>) {
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
async fn run(shared: Arc<ConnectionState>, open: Arc<Open>, method: &'static str, run: Run) {
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
pub(super) async fn finish(shared: &ConnectionState, open: &Open, method: &'static str, run: Run) {
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
    if open.end(State::Ended) {
        shared.serving.remove(open.id);
        let _ = shared.send(open.last(error.as_ref()), None).await;
    } else if let Some(error) = error {
        tracing::debug!(method, %error, "a subscription's method failed after the subscription ended");
    }
}

/// The untyped first half of [`subscription`].
pub(super) fn open(
    params: &Params<'_>,
    cx: &Context,
    notification: &'static str,
    unsubscribe: &'static str,
) -> Result<(Arc<Open>, Arc<ConnectionState>), ErrorObject> {
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
