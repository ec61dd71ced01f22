//! Where the sessions of the handshake revisions are kept, so that any
//! replica behind a load balancer can serve any session: the record of
//! what a session negotiated and asked for ([`SessionRecord`]), the trait
//! a shared store implements ([`SessionStore`]), and a bounded store in
//! memory ([`MemoryStore`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT};

/// What a session of the handshake revisions holds that another replica
/// needs to serve it: the revision `initialize` negotiated, whether the
/// client sent `notifications/initialized`, the client's capabilities, the
/// level of `logging/setLevel`, the URIs of `resources/subscribe`, and who
/// opened it (the subject of its OAuth token, if any).
///
/// A [`SessionStore`] keeps it as it is: it serializes with serde (as a
/// JSON object, say, with `serde_json`), and later versions of this crate
/// read what earlier ones wrote (missing members take their defaults).
/// What lives only in the process that has it (running calls, open event
/// streams, requests for input waiting for the client) is not in it.
///
/// ```
/// use rpc_runtime::mcp::SessionRecord;
///
/// let record: SessionRecord = serde_json::from_str(r#"{"protocolVersion":"2025-11-25"}"#)?;
/// assert_eq!(record.protocol_version(), Some("2025-11-25"));
/// let stored = serde_json::to_string(&record)?;
/// assert_eq!(serde_json::from_str::<SessionRecord>(&stored)?, record);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionRecord {
    /// The negotiated revision (`"2025-11-25"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) protocol_version: Option<String>,
    pub(crate) initialized: bool,
    /// The client's capabilities, as `initialize` gave them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) capabilities: Option<serde_json::Value>,
    /// `logging/setLevel`'s level (`"debug"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) log_level: Option<String>,
    /// The URIs of `resources/subscribe`, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) subscriptions: Vec<String>,
    /// Who opened it (an OAuth subject): nobody else may use it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    /// How many times the session changed: a replica takes a record only
    /// when it is newer than what it has.
    pub(crate) generation: u64,
}

impl SessionRecord {
    /// The revision `initialize` negotiated (`None` before it ran).
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Who opened the session, when an OAuth token said (its subject).
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }
}

/// The future a [`SessionStore`] method returns.
pub type SessionStoreFuture<'a, T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send + 'a>>;

/// Where the [`SessionRecord`]s of a Streamable HTTP endpoint are kept, by
/// session id (`Mcp-Session-Id`): give the same store to every replica
/// with [`McpHttp::session_store`](super::McpHttp::session_store), and a
/// client's requests may reach any of them.
///
/// The store is the authority on which sessions exist: every request that
/// names a session loads its record (a replica rebuilds what it needs
/// locally from it), a session that changed (`notifications/initialized`,
/// `logging/setLevel`, `resources/subscribe`) is written back before its
/// answer goes out, and `DELETE` removes it. Bounds and expiry are the
/// store's: a store that is full refuses [`create`](SessionStore::create)
/// (the client's `initialize` is answered 503), and a record the store
/// dropped (expired) makes its session's next request 404, on every
/// replica. [`MemoryStore`] is one, for replicas in one process; for
/// replicas on several machines, implement it on a shared database (a
/// Redis `SET`/`GET` with an expiry, say), with errors as [`io::Error`]s
/// (the request is answered 503 then).
///
/// ```
/// use rpc_runtime::mcp::{SessionRecord, SessionStore, SessionStoreFuture};
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// /// Records as JSON text, as a key-value database would keep them.
/// #[derive(Default)]
/// struct JsonStore(Mutex<HashMap<String, String>>);
///
/// impl SessionStore for JsonStore {
///     fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
///         Box::pin(async move {
///             let text = serde_json::to_string(record)?;
///             Ok(self.0.lock().unwrap().insert(id.to_owned(), text).is_none())
///         })
///     }
///     fn load<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, Option<SessionRecord>> {
///         Box::pin(async move {
///             let text = self.0.lock().unwrap().get(id).cloned();
///             Ok(text.map(|text| serde_json::from_str(&text)).transpose()?)
///         })
///     }
///     fn update<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
///         Box::pin(async move {
///             let text = serde_json::to_string(record)?;
///             Ok(self.0.lock().unwrap().get_mut(id).map(|old| *old = text).is_some())
///         })
///     }
///     fn remove<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool> {
///         Box::pin(async move { Ok(self.0.lock().unwrap().remove(id).is_some()) })
///     }
/// }
///
/// let settings = rpc_runtime::mcp::McpHttp::default().session_store(JsonStore::default());
/// ```
pub trait SessionStore: Send + Sync + 'static {
    /// Keeps `record` as the new session `id` (a fresh id of 128 random
    /// bits); `Ok(false)` when the store is full.
    fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool>;

    /// The record of session `id`; `None` when there is none (never made,
    /// removed, expired). A store that expires idle records counts a load
    /// as use: every request of a session loads it.
    fn load<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, Option<SessionRecord>>;

    /// Replaces the record of session `id`; `Ok(false)`, and nothing kept,
    /// when there is none (it was removed or expired meanwhile).
    fn update<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool>;

    /// Removes session `id`; whether there was one.
    fn remove<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool>;
}

impl<S: SessionStore + ?Sized> SessionStore for Arc<S> {
    fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
        (**self).create(id, record)
    }

    fn load<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, Option<SessionRecord>> {
        (**self).load(id)
    }

    fn update<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
        (**self).update(id, record)
    }

    fn remove<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool> {
        (**self).remove(id)
    }
}

/// The store of an endpoint, as its settings hold it.
#[derive(Clone)]
pub(crate) struct SharedStore(pub(crate) Arc<dyn SessionStore>);

impl fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionStore")
    }
}

/// A [`SessionStore`] in this process's memory, bounded: at most `max`
/// records, and a record neither loaded nor written for `idle_timeout`
/// is dropped. Share one (in an [`Arc`], or by cloning it: clones are the
/// same store) between the endpoints of one process, as a test of several
/// replicas does, or use it as the model of a store of your own.
///
/// ```
/// use rpc_runtime::mcp::{McpHttp, MemoryStore};
/// use std::time::Duration;
///
/// let store = MemoryStore::new(10_000, Duration::from_secs(30 * 60));
/// let first = McpHttp::default().session_store(store.clone());
/// let second = McpHttp::default().session_store(store);
/// ```
#[derive(Clone)]
pub struct MemoryStore {
    inner: Arc<MemoryInner>,
}

struct MemoryInner {
    records: Mutex<HashMap<String, Kept>>,
    max: usize,
    idle_timeout: Duration,
}

struct Kept {
    record: SessionRecord,
    last_used: Instant,
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("max", &self.inner.max)
            .field("idle_timeout", &self.inner.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// [`DEFAULT_MAX_SESSIONS`] records, dropped after
/// [`DEFAULT_SESSION_IDLE_TIMEOUT`] without use.
impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT)
    }
}

impl MemoryStore {
    /// A store of at most `max` records (at least one), each dropped after
    /// `idle_timeout` without a load or a write.
    pub fn new(max: usize, idle_timeout: Duration) -> Self {
        MemoryStore { inner: Arc::new(MemoryInner { records: Mutex::default(), max: max.max(1), idle_timeout }) }
    }

    /// How many records it keeps (expired ones included until noticed).
    pub fn len(&self) -> usize {
        self.inner.lock().len()
    }

    /// Whether it keeps no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl MemoryInner {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Kept>> {
        self.records.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn create(&self, id: &str, record: &SessionRecord) -> bool {
        let mut records = self.lock();
        let now = Instant::now();
        if records.len() >= self.max {
            records.retain(|_, kept| now.saturating_duration_since(kept.last_used) <= self.idle_timeout);
            if records.len() >= self.max {
                return false;
            }
        }
        records.insert(id.to_owned(), Kept { record: record.clone(), last_used: now });
        true
    }

    /// `with` the record `id`, used now; `None` without one (an expired
    /// one is dropped).
    fn used<T>(&self, id: &str, with: impl FnOnce(&mut SessionRecord) -> T) -> Option<T> {
        let mut records = self.lock();
        let now = Instant::now();
        let kept = records.get_mut(id)?;
        if now.saturating_duration_since(kept.last_used) > self.idle_timeout {
            records.remove(id);
            return None;
        }
        kept.last_used = now;
        Some(with(&mut kept.record))
    }
}

impl SessionStore for MemoryStore {
    fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.inner.create(id, record))))
    }

    fn load<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, Option<SessionRecord>> {
        Box::pin(std::future::ready(Ok(self.inner.used(id, |kept| kept.clone()))))
    }

    fn update<'a>(&'a self, id: &'a str, record: &'a SessionRecord) -> SessionStoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.inner.used(id, |kept| kept.clone_from(record)).is_some())))
    }

    fn remove<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.inner.lock().remove(id).is_some())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now<T>(future: SessionStoreFuture<'_, T>) -> T {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut future = future;
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(result) => result.expect("the memory store does not fail"),
            std::task::Poll::Pending => panic!("the memory store answers at once"),
        }
    }

    #[test]
    fn the_memory_store_is_bounded_and_drops_idle_records() {
        let store = MemoryStore::new(2, Duration::from_millis(50));
        let record = SessionRecord { protocol_version: Some("2025-11-25".into()), ..SessionRecord::default() };
        assert!(now(store.create("a", &record)));
        assert!(now(store.create("b", &record)));
        assert!(!now(store.create("c", &record)), "full");
        std::thread::sleep(Duration::from_millis(30));
        // Loading `b` is use: only `a` goes idle.
        assert_eq!(now(store.load("b")), Some(record.clone()));
        std::thread::sleep(Duration::from_millis(30));
        assert!(now(store.create("c", &record)), "room after the idle record was dropped");
        assert_eq!(now(store.load("a")), None, "expired");
        assert_eq!(store.len(), 2);

        let changed = SessionRecord { log_level: Some("debug".into()), generation: 1, ..record.clone() };
        assert!(now(store.update("b", &changed)));
        assert_eq!(now(store.load("b")), Some(changed));
        assert!(!now(store.update("a", &record)), "an update does not bring a dropped record back");
        assert!(now(store.remove("b")));
        assert!(!now(store.remove("b")));
        assert_eq!(now(store.load("b")), None);

        // Clones are the same store.
        let clone = store.clone();
        assert!(now(clone.remove("c")));
        assert!(store.is_empty());
    }
}
