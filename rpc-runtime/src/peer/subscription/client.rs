//! The calling side: [`Subscription`], a typed stream of one
//! subscription's items, and the connection's table that routes incoming
//! item notifications to it (consulted before notifications go to the
//! engine, and only for the notification methods of subscriptions made on
//! this connection).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};

use super::NotificationParams;
use crate::peer::client::ClientError;
use crate::peer::client::{CallState, Decoder, encode_any_params};
use crate::peer::state::{Closed, ConnectionState, Reply, Waiter};
use crate::peer::{Peer, json_string, lock, preview, request_bytes, within};
use crate::wire::ErrorObject;

/// How a subscription ended, for its stream to report after its items.
pub(in crate::peer) enum Ending {
    /// The server ended it normally (`"end": true`).
    Done,
    /// The server ended it with this error.
    Failed(ErrorObject),
    /// The server's last notification had an `error` that is no error object.
    Invalid(serde_json::Error),
    /// This side did not read its items: this many were waiting.
    Lagged(usize),
    /// The connection closed.
    Closed(Closed),
    /// Making it again on a new connection failed.
    Again(ClientError),
}

/// What a subscription's stream receives: an item, or word that the
/// subscription was made again on a new connection.
pub(in crate::peer) enum Item {
    Value(Box<RawValue>),
    Resubscribed,
}

/// What it takes to make a subscription again on a new connection: the
/// subscribe call's method and params.
pub(in crate::peer) struct Again {
    method: Box<str>,
    params: Option<Box<RawValue>>,
}

/// A subscription's current id: the server's answer to the last subscribe
/// call, shared by its feed (which sets it) and its stream (which
/// unsubscribes with it).
pub(in crate::peer) type CurrentId = Arc<Mutex<Box<RawValue>>>;

/// Where the items and the end of a subscription made on this connection
/// go: the sending halves of its [`Subscription`]'s channels, kept in the
/// table by subscription id.
pub(in crate::peer) struct SubscriptionFeed {
    items: mpsc::Sender<Item>,
    end: oneshot::Sender<Ending>,
    /// The method of its notifications.
    notification: &'static str,
    unsubscribe: &'static str,
    id: CurrentId,
    again: Arc<Again>,
}

impl SubscriptionFeed {
    /// Ends the stream, making it again having failed with `err`.
    pub(in crate::peer) fn end_with(self, err: ClientError) {
        self.finish(Ending::Again(err));
    }

    /// Ends the stream: its remaining items, then `ending`.
    fn finish(self, ending: Ending) {
        let SubscriptionFeed { items, end, .. } = self;
        // The ending first: the stream reads it once the items are done,
        // which they are when `items` is dropped.
        let _ = end.send(ending);
        drop(items);
    }
}

/// The subscriptions a connection made, by id.
pub(in crate::peer) struct Subscribed {
    table: Mutex<HashMap<Box<str>, SubscriptionFeed>>,
    /// The notification methods of every subscription ever made here: such
    /// notifications are taken off the stream, not given to the engine.
    methods: Mutex<Vec<&'static str>>,
    watching: AtomicBool,
    /// Items a stream may hold unread.
    capacity: usize,
}

/// The table's key for a subscription id (raw JSON): its text, but for a
/// string with escapes, which is compared by value.
fn key(id: &RawValue) -> Cow<'_, str> {
    let text = id.get().trim();
    if text.starts_with('"')
        && text.contains('\\')
        && let Ok(value) = serde_json::from_str::<String>(text)
    {
        return Cow::Owned(json_string(&value));
    }
    Cow::Borrowed(text)
}

impl Subscribed {
    pub(in crate::peer) fn new(capacity: usize) -> Self {
        Subscribed {
            table: Mutex::default(),
            methods: Mutex::default(),
            watching: AtomicBool::new(false),
            capacity: capacity.clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
        }
    }

    /// Takes notifications `method` off the stream from now on.
    fn watch(&self, method: &'static str) {
        let mut methods = lock(&self.methods);
        if !methods.contains(&method) {
            methods.push(method);
        }
        self.watching.store(true, Ordering::Release);
    }

    /// Whether any subscription was ever made here (one load: the
    /// connection's fast path asks this for every notification).
    #[inline]
    pub(in crate::peer) fn watching(&self) -> bool {
        self.watching.load(Ordering::Acquire)
    }

    /// Whether notifications `method` carry items of subscriptions made here.
    pub(in crate::peer) fn claims(&self, method: &str) -> bool {
        self.watching() && lock(&self.methods).contains(&method)
    }

    fn remove(&self, id: &RawValue) -> Option<SubscriptionFeed> {
        lock(&self.table).remove(&*key(id))
    }

    /// The answer to a subscribe call: on success the subscription is
    /// entered in the table before the caller hears of it (and before the
    /// connection reads on), so that its first items find it. A caller
    /// that gave up meanwhile gets an unsubscribe sent for it.
    pub(in crate::peer) fn answered(
        &self,
        shared: &ConnectionState,
        reply: oneshot::Sender<Reply>,
        feed: SubscriptionFeed,
        answer: Reply,
    ) {
        let id = match answer {
            Ok(id) => id,
            Err(err) => {
                let _ = reply.send(Err(err));
                return;
            }
        };
        let unsubscribe = feed.unsubscribe;
        if reply.is_closed() {
            tracing::debug!(id = preview(id.get()), "unsubscribing: the caller gave up before the answer came");
            shared.unsubscribe_detached(unsubscribe, &id);
            return;
        }
        self.enter(&id, feed);
        if let Err(Ok(id)) = reply.send(Ok(id)) {
            self.remove(&id);
            shared.unsubscribe_detached(unsubscribe, &id);
        }
    }

    /// Enters `feed` in the table under `id`, the server's answer, which
    /// its stream then unsubscribes with.
    fn enter(&self, id: &RawValue, feed: SubscriptionFeed) {
        *lock(&feed.id) = id.to_owned();
        lock(&self.table).insert(key(id).into(), feed);
    }

    /// The answer to a subscribe call made again on a new connection (see
    /// [`Subscribed::resubscribe_all`]): the subscription is back in the
    /// table under its new id, or its stream ends with the failure. One
    /// whose stream was dropped meanwhile is unsubscribed.
    pub(in crate::peer) fn answered_again(&self, shared: &ConnectionState, feed: SubscriptionFeed, answer: Reply) {
        match answer {
            Ok(id) if feed.items.is_closed() => shared.unsubscribe_detached(feed.unsubscribe, &id),
            Ok(id) => {
                tracing::debug!(method = &*feed.again.method, id = preview(id.get()), "subscribed again");
                self.enter(&id, feed);
            }
            Err(err) => {
                tracing::debug!(method = &*feed.again.method, error = %err, "subscribing again failed");
                feed.end_with(err);
            }
        }
    }

    /// A notification `method` with `params`: an item, or the end, of one
    /// of the subscriptions made here.
    pub(in crate::peer) fn deliver(&self, shared: &ConnectionState, method: &str, params: Option<&RawValue>) {
        let Some(params) = params.and_then(|params| serde_json::from_str::<NotificationParams<'_>>(params.get()).ok())
        else {
            tracing::debug!(method, "dropped a subscription notification without `subscription` in its params");
            return;
        };
        let id = params.subscription;
        let mut table = lock(&self.table);
        let key = key(id);
        let Some(feed) = table.get(&*key).filter(|feed| feed.notification == method) else {
            // An item sent before the server saw our unsubscribe, say.
            tracing::debug!(method, subscription = preview(id.get()), "dropped an item of an unknown subscription");
            return;
        };
        let ending = match (params.result, params.error) {
            (Some(item), _) => match feed.items.try_send(Item::Value(item.to_owned())) {
                Ok(()) => return,
                Err(TrySendError::Full(_)) => {
                    tracing::debug!(subscription = preview(id.get()), "unsubscribing: its items are not read");
                    Some(Ending::Lagged(self.capacity))
                }
                // The stream was dropped.
                Err(TrySendError::Closed(_)) => None,
            },
            (None, Some(error)) => Some(match serde_json::from_str::<ErrorObject>(error.get()) {
                Ok(error) => Ending::Failed(error),
                Err(err) => Ending::Invalid(err),
            }),
            (None, None) => Some(Ending::Done),
        };
        let feed = table.remove(&*key);
        drop(table);
        let Some(feed) = feed else { return };
        let unsubscribe = feed.unsubscribe;
        let ended_by_server = matches!(ending, Some(Ending::Done | Ending::Failed(_) | Ending::Invalid(_)));
        match ending {
            Some(ending) => feed.finish(ending),
            None => drop(feed),
        }
        if !ended_by_server {
            shared.unsubscribe_detached(unsubscribe, id);
        }
    }

    /// The connection every subscription was made on is gone, and the
    /// transport is making a new one (a reconnecting client): each stream
    /// is told ([`ClientError::Resubscribed`], next in line after the items
    /// it has) and its subscribe call is made again, on a task of its own,
    /// sent once the new connection is up. A stream that has not read its
    /// items ends as lagged; one that was dropped is forgotten.
    pub(in crate::peer) fn resubscribe_all(&self, shared: &Arc<ConnectionState>) {
        let feeds = std::mem::take(&mut *lock(&self.table));
        for feed in feeds.into_values() {
            match feed.items.try_send(Item::Resubscribed) {
                Ok(()) => {
                    let shared = Arc::clone(shared);
                    tokio::spawn(async move { resubscribe(&shared, feed).await });
                }
                Err(TrySendError::Full(_)) => feed.finish(Ending::Lagged(self.capacity)),
                Err(TrySendError::Closed(_)) => {}
            }
        }
    }

    /// Ends every stream: the connection closed.
    pub(in crate::peer) fn close_all(&self, reason: &Closed) {
        let feeds = std::mem::take(&mut *lock(&self.table));
        for feed in feeds.into_values() {
            feed.finish(Ending::Closed(reason.clone()));
        }
    }

    /// Whether no subscription made here is open.
    pub(in crate::peer) fn is_empty(&self) -> bool {
        lock(&self.table).is_empty()
    }
}

/// Makes `feed`'s subscription again (see [`Subscribed::resubscribe_all`]):
/// sends its subscribe call, whose answer puts it back in the table under
/// its new id (`Subscribed::answered_again`); a failure ends its stream.
async fn resubscribe(shared: &ConnectionState, feed: SubscriptionFeed) {
    let again = Arc::clone(&feed.again);
    let Ok(id) = shared.register(Waiter::Again(feed)) else { return };
    let mut unsent = Unsent { shared, id, sent: false };
    // Queued behind the reconnection: the writer waits for the new
    // connection before it writes.
    if shared.send(request_bytes(&again.method, again.params.as_deref(), Some(id)), None).await.is_ok() {
        unsent.sent = true;
    }
}

/// A subscription as the subscribe call opened it, before typing.
pub(in crate::peer) struct Opened {
    id: CurrentId,
    items: mpsc::Receiver<Item>,
    end: oneshot::Receiver<Ending>,
    peer: Peer,
    unsubscribe: &'static str,
}

/// Forgets a subscribe call that was never sent.
struct Unsent<'a> {
    shared: &'a ConnectionState,
    id: u64,
    sent: bool,
}

impl Drop for Unsent<'_> {
    fn drop(&mut self) {
        if !self.sent {
            lock(&self.shared.calls).pending.remove(&self.id);
        }
    }
}

impl Peer {
    /// Calls subscribe method `method` and opens the subscription it
    /// answers with; its items are notifications `notification`.
    pub(in crate::peer) async fn open_subscription(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Option<Duration>,
        notification: &'static str,
        unsubscribe: &'static str,
    ) -> Result<Opened, ClientError> {
        let shared = &*self.shared;
        let (items_tx, items) = mpsc::channel(shared.subscribed.capacity);
        let (end_tx, end) = oneshot::channel();
        let (reply_tx, reply) = oneshot::channel();
        shared.subscribed.watch(notification);
        let current: CurrentId = Arc::new(Mutex::new(RawValue::NULL.to_owned()));
        let again = Arc::new(Again { method: method.into(), params: params.map(ToOwned::to_owned) });
        let feed = SubscriptionFeed {
            items: items_tx,
            end: end_tx,
            notification,
            unsubscribe,
            id: Arc::clone(&current),
            again,
        };
        let id = shared.register(Waiter::Subscribe(reply_tx, feed))?;
        let mut unsent = Unsent { shared, id, sent: false };
        // Should the caller give up after sending, the call stays pending:
        // its answer then unsubscribes (see `Subscribed::answered`).
        let limit = timeout.or(shared.options.timeout);
        let deadline = limit.map(|limit| (tokio::time::Instant::now() + limit, limit));
        within(deadline, shared.send(request_bytes(method, params, Some(id)), None)).await??;
        unsent.sent = true;
        within(deadline, reply).await?.unwrap_or_else(|_| Err(shared.closed_error()))?;
        Ok(Opened { id: current, items, end, peer: self.clone(), unsubscribe })
    }

    /// Calls subscribe method `method` and returns the subscription's
    /// items as a stream of `T`: each notification `notification` whose
    /// params are `{"subscription": id, "result": item}` for the id it
    /// answered with. `unsubscribe` is the method that ends it (called
    /// with `[id]`, when the stream is dropped or
    /// [`Subscription::unsubscribe`] is called). `params` as for
    /// [`Peer::call`]. The typed client that `#[rpc]` generates does this
    /// for each subscription method; this is for other servers:
    ///
    /// ```no_run
    /// # async fn run(peer: rpc_runtime::Peer) -> Result<(), rpc_runtime::ClientError> {
    /// let mut heads = peer
    ///     .subscribe::<serde_json::Value, _>("eth_subscribe", ["newHeads"], "eth_subscription", "eth_unsubscribe")
    ///     .await?;
    /// while let Some(head) = heads.next().await {
    ///     println!("{}", head?);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn subscribe<T, P>(
        &self,
        method: &str,
        params: P,
        notification: &'static str,
        unsubscribe: &'static str,
    ) -> Result<Subscription<T>, ClientError>
    where
        T: DeserializeOwned,
        P: Serialize,
    {
        let params = encode_any_params(&params).map_err(ClientError::Encode)?;
        let opened = self.open_subscription(method, params.as_deref(), None, notification, unsubscribe).await?;
        Ok(Subscription::new(opened, |text| serde_json::from_str(text), ClientError::Server))
    }
}

/// One subscription's items, in order: a [`Stream`](futures_core::Stream)
/// of `Result<T, ClientError<E>>`, also readable with
/// [`Subscription::next`]. Dropping it unsubscribes.
///
/// The stream ends (`None`) when the server ends the subscription; before
/// that it yields one `Err` when the subscription ended otherwise: the
/// server's error (`E` when it decodes as the method's own error type),
/// [`ClientError::Lagged`] when its items were not read fast enough
/// ([`Limits::subscription_buffer`](crate::Limits) were waiting; it was
/// unsubscribed), or [`ClientError::Closed`] /
/// [`ClientError::Transport`] when the connection closed. An item that does
/// not decode as `T` is an `Err(ClientError::Decode(..))`, and the stream
/// goes on; so does [`ClientError::Resubscribed`], when a reconnecting
/// client made the subscription again on a new connection (items may have
/// been missed).
///
/// ```no_run
/// # use rpc_runtime::{ClientError, Subscription};
/// # async fn run(mut ticks: Subscription<u64>) -> Result<(), ClientError> {
/// while let Some(tick) = ticks.next().await {
///     println!("tick {}", tick?);
/// }
/// # Ok(()) }
/// ```
#[must_use = "a subscription's items arrive in its stream; dropping it unsubscribes"]
pub struct Subscription<T, E = ErrorObject> {
    opened: Opened,
    decode: Decoder<T>,
    convert: fn(ErrorObject) -> ClientError<E>,
    /// The stream has ended (its feed is out of the table).
    finished: bool,
}

impl<T, E> Subscription<T, E> {
    pub(in crate::peer) fn new(opened: Opened, decode: Decoder<T>, convert: fn(ErrorObject) -> ClientError<E>) -> Self {
        Subscription { opened, decode, convert, finished: false }
    }

    /// The subscription id the server answered with (the last answer's,
    /// when the subscription was made again on a new connection).
    pub fn id(&self) -> Box<RawValue> {
        lock(&self.opened.id).clone()
    }

    /// The next item; `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<T, ClientError<E>>> {
        std::future::poll_fn(|cx| self.poll_item(cx)).await
    }

    /// Ends the subscription and waits for the server's answer: `true` if
    /// it was open there. Without a round trip, `false`, when it had ended
    /// already. Items still unread are dropped.
    pub async fn unsubscribe(mut self) -> Result<bool, ClientError> {
        self.finished = true;
        let peer = self.opened.peer.clone();
        let id = self.id();
        if peer.shared.subscribed.remove(&id).is_none() {
            return Ok(false);
        }
        peer.call(self.opened.unsubscribe, [&*id]).await
    }

    fn poll_item(&mut self, cx: &mut TaskContext<'_>) -> Poll<Option<Result<T, ClientError<E>>>> {
        if self.finished {
            return Poll::Ready(None);
        }
        let raw = match self.opened.items.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(raw) => raw,
        };
        match raw {
            Some(Item::Value(raw)) => return Poll::Ready(Some((self.decode)(raw.get()).map_err(ClientError::Decode))),
            Some(Item::Resubscribed) => return Poll::Ready(Some(Err(ClientError::Resubscribed))),
            None => {}
        }
        self.finished = true;
        let ending = match self.opened.end.try_recv() {
            Ok(Ending::Done) => return Poll::Ready(None),
            Ok(Ending::Failed(error)) => (self.convert)(error),
            Ok(Ending::Invalid(err)) => ClientError::Decode(err),
            Ok(Ending::Lagged(capacity)) => ClientError::Lagged(capacity),
            Ok(Ending::Closed(closed)) => closed.error(),
            Ok(Ending::Again(err)) => ClientError::typed(err, self.convert),
            Err(_) => ClientError::Closed,
        };
        Poll::Ready(Some(Err(ending)))
    }
}

impl<T, E> futures_core::Stream for Subscription<T, E> {
    type Item = Result<T, ClientError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_item(cx)
    }
}

impl<T, E> Drop for Subscription<T, E> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let shared = &self.opened.peer.shared;
        let id = lock(&self.opened.id);
        if let Some(feed) = shared.subscribed.remove(&id) {
            drop(feed);
            shared.unsubscribe_detached(self.opened.unsubscribe, &id);
        }
    }
}

impl<T, E> fmt::Debug for Subscription<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").field("id", &self.id().get()).field("ended", &self.finished).finish()
    }
}

/// A subscribe call of a generated client (`client.method(..)` for a
/// method with a `SubscriptionSink` parameter): await it for the [`Subscription`].
/// Sent when first polled, like a [`Call`](crate::Call), and waits at most
/// the client's timeout for the answer (the items have none).
#[must_use = "a subscribe call does nothing until it is awaited"]
pub struct Subscribe<T, E = ErrorObject> {
    pub(in crate::peer) state: CallState<Result<Opened, ClientError>>,
    pub(in crate::peer) decode: Decoder<T>,
    pub(in crate::peer) convert: fn(ErrorObject) -> ClientError<E>,
}

impl<T, E> Future for Subscribe<T, E> {
    type Output = Result<Subscription<T, E>, ClientError<E>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        this.state.poll_outcome(cx).map(|outcome| match outcome.and_then(|opened| opened) {
            Ok(opened) => Ok(Subscription::new(opened, this.decode, this.convert)),
            Err(err) => Err(ClientError::typed(err, this.convert)),
        })
    }
}

impl<T, E> fmt::Debug for Subscribe<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscribe").finish_non_exhaustive()
    }
}

/// The request future of a generated client's subscribe call.
pub(in crate::peer) fn start_subscribe(
    peer: Peer,
    method: &'static str,
    params: Option<Box<RawValue>>,
    timeout: Option<Duration>,
    notification: &'static str,
    unsubscribe: &'static str,
) -> Pin<Box<dyn Future<Output = Result<Opened, ClientError>> + Send>> {
    Box::pin(async move { peer.open_subscription(method, params.as_deref(), timeout, notification, unsubscribe).await })
}
