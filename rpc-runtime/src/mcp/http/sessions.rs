//! The sessions of the handshake revisions over Streamable HTTP: one per
//! `Mcp-Session-Id`, each with the MCP handshake state and the running
//! requests that `notifications/cancelled` may cancel; bounded in number
//! and ended after a time without requests. With a session store, this
//! table holds each session's part local to this process (its running
//! calls, its `GET` stream), and the store says which sessions exist.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::dispatch::dialect::Cancellation;
use crate::dispatch::inflight::Link;
use crate::mcp::session::Session;

/// One session of the handshake revisions over Streamable HTTP: what its
/// `Mcp-Session-Id` names (its MCP handshake state is in `link`).
pub(crate) struct HttpSession {
    /// Its requests' connection handle: holds the MCP session state,
    /// tracks running requests for `notifications/cancelled`, and its stop
    /// signal cancels them all when the session ends.
    pub(crate) link: Arc<Link>,
    last_used: Mutex<Instant>,
    /// Requests running now: a busy session does not expire.
    active: AtomicUsize,
    /// Places for calls running at once (`Limits::max_concurrent_requests`).
    /// Calls outlive the HTTP requests that started them (a client may go
    /// away and come back for the session), so the session, not the
    /// connection, bounds them.
    pub(crate) calls: Arc<Semaphore>,
    /// How many places `calls` has.
    pub(crate) max_calls: usize,
    /// Who opened it, when an OAuth token said (its subject): requests
    /// for the session from anyone else are answered as for an unknown
    /// session, as MCP asks servers to bind sessions to their users.
    owner: Option<Box<str>>,
}

impl HttpSession {
    /// The MCP handshake state of the session.
    pub(crate) fn state(&self) -> Option<Arc<Session>> {
        self.link.protocol_state(Session::default)
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
    }

    fn idle_for(&self, now: Instant) -> Option<Duration> {
        if self.active.load(Ordering::Acquire) > 0 {
            return None;
        }
        let last = *self.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Some(now.saturating_duration_since(last))
    }
}

/// A session in use by one request: counts as activity until dropped.
pub(crate) struct InUse(pub(crate) Arc<HttpSession>);

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.touch();
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Every session of one endpoint.
pub(crate) struct Sessions {
    by_id: Mutex<HashMap<String, Arc<HttpSession>>>,
    pub(crate) max: usize,
    pub(crate) idle_timeout: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle_timeout: Duration) -> Self {
        Sessions { by_id: Mutex::default(), max, idle_timeout }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.by_id.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new session, whose calls may run `max_calls` at once, and its
    /// id; `None` when [`Sessions::max`] sessions are open (after ending
    /// the idle ones) or no random id can be made.
    pub(crate) fn open(&self, max_calls: usize, owner: Option<&str>) -> Option<(String, InUse)> {
        let id = new_id()?;
        let session = new_session(max_calls, owner);
        let mut by_id = self.lock();
        if by_id.len() >= self.max {
            self.end_idle(&mut by_id);
            if by_id.len() >= self.max {
                return None;
            }
        }
        by_id.insert(id.clone(), Arc::clone(&session));
        Some((id, InUse(session)))
    }

    /// The local part of session `id` of `owner`, which a session store
    /// says exists: the one this endpoint holds, else a new one (to
    /// restore from the store's record). `None` when [`Sessions::max`]
    /// sessions are held here (after ending the idle ones).
    pub(crate) fn adopt(&self, id: &str, max_calls: usize, owner: Option<&str>) -> Option<InUse> {
        let mut by_id = self.lock();
        // However long it was idle here (other replicas may have served
        // it meanwhile): the store, not this table, says it exists.
        if let Some(session) = by_id.get(id).filter(|session| session.owner.as_deref() == owner) {
            session.active.fetch_add(1, Ordering::AcqRel);
            return Some(InUse(Arc::clone(session)));
        }
        if let Some(stale) = by_id.remove(id) {
            stale.link.stop.raise();
        }
        if by_id.len() >= self.max {
            self.end_idle(&mut by_id);
            if by_id.len() >= self.max {
                return None;
            }
        }
        let session = new_session(max_calls, owner);
        by_id.insert(id.to_owned(), Arc::clone(&session));
        Some(InUse(session))
    }

    /// Ends the local part of session `id`, whoever owns it: a session
    /// store says the session no longer exists.
    pub(crate) fn discard(&self, id: &str) {
        if let Some(session) = self.lock().remove(id) {
            session.link.stop.raise();
        }
    }

    /// The session `id` of `owner`, in use until the guard drops; `None`
    /// if unknown, ended, expired (an expired one is ended now) or
    /// another's.
    pub(crate) fn get(&self, id: &str, owner: Option<&str>) -> Option<InUse> {
        let mut by_id = self.lock();
        let session = by_id.get(id).filter(|session| session.owner.as_deref() == owner)?;
        if session.idle_for(Instant::now()).is_some_and(|idle| idle > self.idle_timeout) {
            if let Some(session) = by_id.remove(id) {
                session.link.stop.raise();
            }
            return None;
        }
        session.active.fetch_add(1, Ordering::AcqRel);
        Some(InUse(Arc::clone(session)))
    }

    /// Ends session `id` of `owner`: its running requests are cancelled.
    /// `false` if there was none (or it is another's).
    pub(crate) fn end(&self, id: &str, owner: Option<&str>) -> bool {
        let mut by_id = self.lock();
        if by_id.get(id).is_none_or(|session| session.owner.as_deref() != owner) {
            return false;
        }
        let Some(session) = by_id.remove(id) else { return false };
        session.link.stop.raise();
        true
    }

    /// How many sessions are open (expired ones included until noticed).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn end_idle(&self, by_id: &mut HashMap<String, Arc<HttpSession>>) {
        let now = Instant::now();
        by_id.retain(|_, session| {
            let expired = session.idle_for(now).is_some_and(|idle| idle > self.idle_timeout);
            if expired {
                session.link.stop.raise();
            }
            !expired
        });
    }
}

/// A new session, in use, whose calls may run `max_calls` at once.
fn new_session(max_calls: usize, owner: Option<&str>) -> Arc<HttpSession> {
    let max_calls = max_calls.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    Arc::new(HttpSession {
        link: Arc::new(Link::concurrent(Cancellation::Mcp)),
        last_used: Mutex::new(Instant::now()),
        active: AtomicUsize::new(1),
        calls: Arc::new(Semaphore::new(max_calls)),
        max_calls,
        owner: owner.map(Into::into),
    })
}

/// Who a request's context says is calling, to bind sessions to: the
/// subject of its OAuth token, if any.
pub(crate) fn owner_of(cx: &crate::dispatch::context::Context) -> Option<&str> {
    #[cfg(feature = "oauth")]
    return cx.extension::<crate::transport::http::oauth::Grant>().and_then(|grant| grant.subject_id());
    #[cfg(not(feature = "oauth"))]
    {
        let _ = cx;
        None
    }
}

/// 128 random bits from the operating system, as 32 hex digits: session
/// ids must not be guessable (they are the only thing naming a session).
fn new_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    if let Err(err) = getrandom::fill(&mut bytes) {
        tracing::warn!(error = %err, "no random bytes for an MCP session id");
        return None;
    }
    let mut id = String::with_capacity(32);
    for byte in bytes {
        let _ = write!(id, "{byte:02x}");
    }
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_bounded_and_idle_ones_expire() {
        let sessions = Sessions::new(2, Duration::from_millis(50));
        let (first, in_use) = sessions.open(8, None).expect("a first session");
        drop(in_use);
        let (second, _busy) = sessions.open(8, None).expect("a second session");
        assert_ne!(first, second);
        assert_eq!(first.len(), 32);
        assert!(sessions.open(8, None).is_none(), "at the limit");
        std::thread::sleep(Duration::from_millis(80));
        // The idle one makes room; the busy one stays.
        let (_third, _) = sessions.open(8, None).expect("room after the idle session expired");
        assert!(sessions.get(&first, None).is_none());
        assert!(sessions.get(&second, None).is_some());
        assert!(sessions.end(&second, None));
        assert!(!sessions.end(&second, None));
        assert_eq!(sessions.len(), 1);
    }

    #[test]
    fn a_stored_session_is_rebuilt_here_and_takes_newer_records_only() {
        use crate::mcp::revision::Revision;
        let elsewhere = Session::default();
        elsewhere.start(Revision::V2025_06_18).unwrap();
        elsewhere.set_capabilities(serde_json::json!({"elicitation": {}}));
        elsewhere.set_log_level(crate::mcp::logging::LogLevel::Debug);
        elsewhere.subscribe("notes://1".into()).unwrap();
        let record = elsewhere.record(Some("alice"));
        assert_eq!(record.protocol_version(), Some("2025-06-18"));

        let sessions = Sessions::new(1, Duration::from_secs(60));
        let here = sessions.adopt("id", 4, Some("alice")).expect("room");
        let state = here.0.state().unwrap();
        state.restore(&record);
        assert_eq!(state.revision(), Some(Revision::V2025_06_18));
        assert!(state.streams_calls() && state.is_subscribed("notes://1"));
        assert_eq!(state.record(Some("alice")), record, "the same record back");
        // An older record (a replica behind) changes nothing.
        state.unsubscribe("notes://1");
        state.restore(&record);
        assert!(!state.is_subscribed("notes://1"));
        // The same local part for the same owner; none for another id when full.
        drop(here);
        assert!(Arc::ptr_eq(
            &sessions.adopt("id", 4, Some("alice")).unwrap().0,
            &sessions.get("id", Some("alice")).unwrap().0
        ));
        assert!(sessions.adopt("other", 4, None).is_none(), "full, and the one held is not idle");
        sessions.discard("id");
        assert_eq!(sessions.len(), 0);
    }
}
