//! [`PendingSubscription`]: a subscription whose method answers the
//! subscribe call itself, after setup that may await, by accepting or
//! rejecting it; and [`pending_subscription`], the call's future that waits
//! for that decision.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::server::{IntoSubscriptionEnd, Open, Run, SendError, Start, State, finish, open};
use super::sink::SubscriptionSink;
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::signal::Signal;
use crate::peer::state::ConnectionState;
use crate::sync::lock;
use crate::wire::{ErrorObject, INTERNAL_ERROR};

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
    shared: Arc<ConnectionState>,
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
            None => Ok(SubscriptionSink::new(open, shared)),
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
        if self.open.end(State::Ended) {
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
    shared: Arc<ConnectionState>,
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
struct Unanswered(Option<(Arc<ConnectionState>, Arc<Open>)>);

impl Unanswered {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some((shared, open)) = self.0.take()
            && open.end(State::Ended)
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
