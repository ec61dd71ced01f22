//! The dispatch layer's handle on a connection: whether anybody can still
//! receive answers, and the incoming requests that may be cancelled while
//! they run. The peer layer owns one per connection and raises its
//! signals; dispatch only reads them, so imports still point down.

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::dispatch::dialect::Cancellation;
use crate::dispatch::order::Gate;
use crate::dispatch::pending::SilentCancel;
use crate::dispatch::router::MethodFuture;
use crate::dispatch::signal::Signal;
use crate::wire::{ErrorObject, REQUEST_CANCELLED, lexical};

/// What a request's [`Context`](crate::Context) knows of its connection.
#[derive(Default)]
pub(crate) struct Link {
    /// Raised once nobody can receive answers on the connection (closed,
    /// last handle dropped, the other side gone, writing failed); running
    /// handlers see it as cancellation.
    pub(crate) stop: Signal,
    /// Running requests by normalized id, when the connection understands
    /// cancellation notifications.
    inflight: Option<Mutex<HashMap<Arc<str>, Arc<Signal>>>>,
    /// Whether a cancelled request is still answered (-32800, as LSP
    /// requires) or not at all (as MCP asks).
    answer_cancelled: bool,
    /// Its calls arrive concurrently (see [`Link::concurrent`]).
    concurrent: bool,
    /// State of the protocol spoken on top of JSON-RPC on this connection
    /// (an MCP session), created by that protocol on first use; dispatch
    /// only keeps it for the connection's lifetime.
    protocol: OnceLock<Arc<dyn Any + Send + Sync>>,
    /// The order of its calls, made on the first call to a router with
    /// `#[rpc(exclusive)]` methods.
    gate: OnceLock<Gate>,
}

use crate::sync::lock;

impl Link {
    /// A link whose incoming requests may be cancelled as `cancellation`
    /// says (tracked by id when it names a notification).
    pub(crate) fn new(cancellation: Cancellation) -> Self {
        Link {
            stop: Signal::default(),
            inflight: cancellation.method().is_some().then(Mutex::default),
            answer_cancelled: cancellation.answers_cancelled(),
            concurrent: false,
            protocol: OnceLock::new(),
            gate: OnceLock::new(),
        }
    }

    /// A link whose calls arrive and run concurrently (an MCP session over
    /// HTTP: each `POST` on a task of its own), so that a cancellation may
    /// come while any of them runs: each is in the table from its start.
    #[cfg_attr(not(all(feature = "mcp", feature = "http")), allow(dead_code))]
    pub(crate) fn concurrent(cancellation: Cancellation) -> Self {
        Link { concurrent: true, ..Link::new(cancellation) }
    }

    /// The order of the connection's calls (see `dispatch::order`).
    pub(crate) fn gate(&self) -> &Gate {
        self.gate.get_or_init(Gate::default)
    }

    /// The connection's protocol state of type `T`, made by `init` on first
    /// use. `None` if another type already holds the slot.
    pub(crate) fn protocol_state<T: Send + Sync + 'static>(&self, init: impl FnOnce() -> T) -> Option<Arc<T>> {
        let state = self.protocol.get_or_init(|| Arc::new(init()));
        Arc::clone(state).downcast().ok()
    }

    /// Whether incoming requests are registered for cancellation.
    #[inline]
    pub(crate) fn tracks_requests(&self) -> bool {
        self.inflight.is_some()
    }

    /// Prepares the incoming request `id` (raw JSON) for cancellation: its
    /// signal, and the guard that puts it in the table of running requests
    /// once it waits ([`track`]). On a connection that reads one message
    /// at a time, a call that ends before it returns is never in the table:
    /// nothing can cancel it while it runs, as the connection reads nothing
    /// meanwhile. On a [concurrent](Link::concurrent) one it is in the
    /// table from the start.
    pub(crate) fn track(self: &Arc<Self>, id: &str) -> Option<(Arc<Signal>, InflightGuard)> {
        self.inflight.as_ref()?;
        let key: Arc<str> = Arc::from(&*id_key(id)?);
        let signal = Arc::new(Signal::default());
        let mut guard = InflightGuard { link: Arc::clone(self), key, signal: Arc::clone(&signal), registered: false };
        if self.concurrent {
            guard.register();
        }
        Some((signal, guard))
    }

    /// Cancels the running request whose id is `id` (raw JSON); `false`
    /// when no such request is running.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        let Some(inflight) = &self.inflight else { return false };
        let Some(key) = id_key(id) else { return false };
        match lock(inflight).get(&*key) {
            Some(signal) => {
                signal.raise();
                true
            }
            None => false,
        }
    }
}

/// Keeps an incoming request registered for cancellation while it runs.
pub(crate) struct InflightGuard {
    link: Arc<Link>,
    key: Arc<str>,
    signal: Arc<Signal>,
    /// It is in the table.
    registered: bool,
}

impl InflightGuard {
    /// The request's key (see [`id_key`]).
    pub(crate) fn key(&self) -> &Arc<str> {
        &self.key
    }

    /// Puts the request in the table: cancellable by its id until the
    /// guard is dropped.
    pub(crate) fn register(&mut self) {
        if let (Some(inflight), false) = (&self.link.inflight, self.registered) {
            lock(inflight).insert(Arc::clone(&self.key), Arc::clone(&self.signal));
            self.registered = true;
        }
    }
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        if let (Some(inflight), true) = (&self.link.inflight, self.registered) {
            let mut inflight = lock(inflight);
            // Another request may have taken the id since (a client that
            // reuses ids): its registration stays.
            if let Some(current) = inflight.remove(&self.key)
                && !Arc::ptr_eq(&current, &self.signal)
            {
                inflight.insert(Arc::clone(&self.key), current);
            }
        }
    }
}

/// Wraps a running request so that it stays cancellable until it ends, and
/// is answered with -32800 if it was cancelled. On a connection whose
/// cancelled requests are not answered (MCP), also returns the signal that
/// says, once the request ends, that it is not to be answered.
pub(crate) fn track(future: MethodFuture, guard: Option<InflightGuard>) -> (MethodFuture, SilentCancel) {
    let Some(mut guard) = guard else { return (future, SilentCancel::default()) };
    guard.register();
    let silent_cancel = SilentCancel((!guard.link.answer_cancelled).then(|| Arc::clone(&guard.signal)));
    let future = Box::pin(async move {
        let result = future.await;
        if guard.signal.is_raised() { Err(ErrorObject::new(REQUEST_CANCELLED, "Request cancelled")) } else { result }
    });
    (future, silent_cancel)
}

/// The id (raw JSON) of key `key`, made by [`id_key`] (which is JSON).
#[allow(dead_code)]
pub(crate) fn id_of_key(key: &str) -> Option<Box<serde_json::value::RawValue>> {
    serde_json::value::RawValue::from_string(key.to_owned()).ok()
}

/// The key of an id in the table of running requests: the id's JSON, in
/// one form per value. Strings compare by value (`"a"` and `"\u0061"` are
/// one id: escapes are written the way `serde_json` writes them); numbers
/// by their text, so that integers beyond 64 bits stay apart (`1` and
/// `1.0` differ too); `"1"` is not `1`. As written when it is already in
/// that form (a number, a string without escapes), without a copy.
pub(crate) fn id_key(raw: &str) -> Option<Cow<'_, str>> {
    let text = raw.trim();
    match text.as_bytes().first()? {
        b'"' => match lexical::plain_string(text) {
            Some(_) => Some(Cow::Borrowed(text)),
            None => {
                serde_json::from_str::<String>(text).ok().and_then(|id| serde_json::to_string(&id).ok()).map(Cow::Owned)
            }
        },
        b'-' | b'0'..=b'9' => lexical::is_number(text).then_some(Cow::Borrowed(text)),
        _ => serde_json::from_str::<serde_json::Value>(text).ok().map(|value| Cow::Owned(value.to_string())),
    }
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
        assert_eq!(id_key("\"\\u00e9\""), id_key("\"é\""));
        assert_eq!(id_key("\"a\\\"b\"").as_deref(), Some("\"a\\\"b\""));
        for id in ["7", "\"listen-1\"", "-12345678901234567890123"] {
            assert_eq!(id_of_key(&id_key(id).unwrap()).unwrap().get(), id);
        }
    }

    #[test]
    fn integer_ids_beyond_64_bits_do_not_collide() {
        assert_ne!(id_key("12345678901234567890123"), id_key("12345678901234567890124"));
        assert_ne!(id_key("1"), id_key("1.0"));
    }

    #[test]
    fn a_tracked_request_is_cancelled_by_its_id_until_it_ends() {
        let link = Arc::new(Link::new(Cancellation::Lsp));
        let (signal, mut guard) = link.track("\"a\"").unwrap();
        assert!(!link.cancel("\"a\""), "registered only once it waits");
        guard.register();
        assert!(link.cancel("\"\\u0061\""));
        assert!(signal.is_raised());
        drop(guard);
        assert!(!link.cancel("\"a\""));
        assert!(Arc::new(Link::new(Cancellation::None)).track("1").is_none());

        // Where calls run concurrently, a running call is cancellable at once.
        let link = Arc::new(Link::concurrent(Cancellation::Mcp));
        let (signal, guard) = link.track("7").unwrap();
        assert!(link.cancel("7"));
        assert!(signal.is_raised());
        drop(guard);
        assert!(!link.cancel("7"));
    }
}
