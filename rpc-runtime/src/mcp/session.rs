//! Which era a request belongs to, and the state of a handshake session.
//!
//! MCP has two eras that clients use today. In the handshake one
//! (2024-11-05 through 2025-11-25) `initialize` negotiates a revision for
//! the rest of the connection (stdio) or session (HTTP). In the modern one
//! (2026-07-28) every request carries its revision, the client's
//! capabilities and identity in `params._meta`, and nothing is remembered
//! between requests. A server speaking both decides per request: one with
//! the modern `_meta` is served statelessly, any other one belongs to the
//! handshake session, which must have been initialized.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::logging::LogLevel;
use super::revision::Revision;
use crate::dispatch::Dialect;
use crate::dispatch::context::Context;
use crate::dispatch::dialect::Cancellation;
use crate::wire::message::present;
use crate::wire::{ErrorObject, INVALID_PARAMS, INVALID_REQUEST};

/// The `_meta` key with the revision of a modern request.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key with the client's capabilities (required on modern requests).
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key with the server's identity on modern results.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// MCP's "the request's protocol version is not supported" (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The handshake state of one connection (stdio) or session (HTTP).
#[derive(Default)]
pub(crate) struct Session {
    state: Mutex<State>,
    /// Whether the changes the application announces are forwarded to
    /// this session from this process (started by `initialize`, or for a
    /// session restored from a session store, by its first call here).
    forwarding: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct State {
    /// Set by `initialize`.
    revision: Option<Revision>,
    /// Set by `notifications/initialized` (nothing waits on it: requests
    /// are served from the `initialize` answer on, as MCP hosts pipeline).
    initialized: bool,
    /// The client's capabilities, as `initialize` gave them.
    capabilities: Option<serde_json::Value>,
    /// The same when they say the client can be asked for input (what
    /// each call that may ask copies), else `None`.
    input_capabilities: Option<serde_json::Value>,
    /// The URIs of `resources/subscribe`.
    subscriptions: HashSet<String>,
    /// `logging/setLevel`'s level.
    log_level: Option<LogLevel>,
    /// How many times what a session store keeps of it changed (the
    /// members above), or the generation of the record it was restored
    /// from (Streamable HTTP with a session store).
    generation: u64,
    /// Where notifications unrelated to a request go over Streamable
    /// HTTP: the session's `GET` stream, while one is open.
    #[cfg(feature = "http")]
    standalone: Option<tokio::sync::mpsc::Sender<Vec<u8>>>,
    /// Requests sent to the client on calls' event streams (Streamable
    /// HTTP), waiting for the responses it `POST`s, by id.
    #[cfg(feature = "http")]
    outgoing: std::collections::HashMap<u64, Waiting>,
    #[cfg(feature = "http")]
    next_id: u64,
}

/// The client's answer to a request of the server's: a result or an error.
#[cfg(feature = "http")]
pub(crate) type ClientAnswer = Result<Box<RawValue>, ErrorObject>;

/// Where the answer to a request to the client goes.
#[cfg(feature = "http")]
type Waiting = tokio::sync::oneshot::Sender<ClientAnswer>;

/// The most requests to the client one session may have unanswered.
#[cfg(feature = "http")]
const MAX_OUTGOING: usize = 64;

/// The most resources one session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

impl Session {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The revision `initialize` negotiated, if it ran.
    pub(crate) fn revision(&self) -> Option<Revision> {
        self.lock().revision
    }

    /// Records the revision `initialize` negotiated; an error if the session
    /// was initialized already.
    pub(crate) fn start(&self, revision: Revision) -> Result<(), ErrorObject> {
        let mut state = self.lock();
        if let Some(current) = state.revision {
            return Err(ErrorObject::new(
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the session is already initialized (protocol {current}); `initialize` is sent once"
                ),
            ));
        }
        state.revision = Some(revision);
        state.generation += 1;
        Ok(())
    }

    /// Whether changes should start being forwarded to the session now:
    /// `true` once, for an initialized session.
    pub(crate) fn start_forwarding(&self) -> bool {
        use std::sync::atomic::Ordering;
        // Asked before every call of a Streamable HTTP session: once
        // forwarding, the answer takes no lock.
        !self.forwarding.load(Ordering::Acquire)
            && self.revision().is_some()
            && !self.forwarding.swap(true, Ordering::AcqRel)
    }

    /// Records `notifications/initialized`.
    pub(crate) fn mark_initialized(&self) {
        let mut state = self.lock();
        if !state.initialized {
            state.initialized = true;
            state.generation += 1;
        }
    }

    /// Records the client's capabilities (from `initialize`).
    pub(crate) fn set_capabilities(&self, capabilities: serde_json::Value) {
        let mut state = self.lock();
        state.input_capabilities = askable(&capabilities).then(|| capabilities.clone());
        state.capabilities = Some(capabilities);
        state.generation += 1;
    }

    /// A new request to the client: its id, and where its answer comes;
    /// `None` past [`MAX_OUTGOING`] unanswered ones.
    #[cfg(feature = "http")]
    pub(crate) fn outgoing(&self) -> Option<(u64, tokio::sync::oneshot::Receiver<ClientAnswer>)> {
        let mut state = self.lock();
        state.outgoing.retain(|_, waiting| !waiting.is_closed());
        if state.outgoing.len() >= MAX_OUTGOING {
            return None;
        }
        state.next_id += 1;
        let id = state.next_id;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        state.outgoing.insert(id, sender);
        Some((id, receiver))
    }

    /// Gives up on the request `id` to the client.
    #[cfg(feature = "http")]
    pub(crate) fn forget(&self, id: u64) {
        self.lock().outgoing.remove(&id);
    }

    /// The client's response to request `id`; `false` when no request of
    /// that id waits.
    #[cfg(feature = "http")]
    pub(crate) fn answer(&self, id: u64, answer: ClientAnswer) -> bool {
        let waiting = self.lock().outgoing.remove(&id);
        waiting.is_some_and(|waiting| waiting.send(answer).is_ok())
    }

    /// Subscribes to `uri`; an error past [`MAX_SUBSCRIPTIONS`].
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), ErrorObject> {
        let mut state = self.lock();
        if state.subscriptions.len() >= MAX_SUBSCRIPTIONS && !state.subscriptions.contains(&uri) {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                format!(
                    "Invalid params: this session subscribes to {MAX_SUBSCRIPTIONS} resources already (the most it may); unsubscribe from some first"
                ),
            ));
        }
        if state.subscriptions.insert(uri) {
            state.generation += 1;
        }
        Ok(())
    }

    /// Ends the subscription to `uri`; whether there was one.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut state = self.lock();
        let removed = state.subscriptions.remove(uri);
        if removed {
            state.generation += 1;
        }
        removed
    }

    /// Whether the session subscribed to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.lock().subscriptions.contains(uri)
    }

    /// The URIs the session subscribed to.
    pub(crate) fn subscribed(&self) -> Vec<String> {
        self.lock().subscriptions.iter().cloned().collect()
    }

    /// Whether the session's calls should be answered as event streams
    /// (over Streamable HTTP): it asked for logs, or declared that it can
    /// be asked for input (elicitation, sampling).
    #[cfg(feature = "http")]
    pub(crate) fn streams_calls(&self) -> bool {
        let state = self.lock();
        state.log_level.is_some() || state.capabilities.as_ref().is_some_and(askable)
    }

    /// Sets the level of `logging/setLevel`.
    pub(crate) fn set_log_level(&self, level: LogLevel) {
        let mut state = self.lock();
        if state.log_level != Some(level) {
            state.log_level = Some(level);
            state.generation += 1;
        }
    }

    /// How many times what a session store keeps changed (see
    /// [`Session::record`]).
    #[cfg(feature = "http")]
    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// What a session store keeps of the session, owned by `owner`.
    #[cfg(feature = "http")]
    pub(crate) fn record(&self, owner: Option<&str>) -> super::http::SessionRecord {
        let state = self.lock();
        let mut subscriptions: Vec<String> = state.subscriptions.iter().cloned().collect();
        subscriptions.sort_unstable();
        super::http::SessionRecord {
            protocol_version: state.revision.map(|revision| revision.as_str().to_owned()),
            initialized: state.initialized,
            capabilities: state.capabilities.clone(),
            log_level: state.log_level.map(|level| level.as_str().to_owned()),
            subscriptions,
            owner: owner.map(str::to_owned),
            generation: state.generation,
        }
    }

    /// Takes what `record` says when it is newer than what the session
    /// has (another replica changed it); what lives only here (the `GET`
    /// stream, requests for input) stays. A revision this server does not
    /// speak, or a level it does not know, reads as none.
    #[cfg(feature = "http")]
    pub(crate) fn restore(&self, record: &super::http::SessionRecord) {
        let mut state = self.lock();
        if record.generation <= state.generation {
            return;
        }
        state.revision = record.protocol_version.as_deref().and_then(Revision::parse).filter(|r| !r.is_modern());
        state.initialized = record.initialized;
        state.input_capabilities = record.capabilities.as_ref().filter(|caps| askable(caps)).cloned();
        state.capabilities = record.capabilities.clone();
        state.log_level = record.log_level.as_deref().and_then(LogLevel::parse);
        state.subscriptions = record.subscriptions.iter().take(MAX_SUBSCRIPTIONS).cloned().collect();
        state.generation = record.generation;
    }

    /// Makes `stream` the session's `GET` stream (replacing one before,
    /// which ends).
    #[cfg(feature = "http")]
    pub(crate) fn attach_stream(&self, stream: tokio::sync::mpsc::Sender<Vec<u8>>) {
        self.lock().standalone = Some(stream);
    }

    /// Sends `message` on the session's `GET` stream; `false` when there is
    /// none open, or the client does not keep up (it is dropped then).
    pub(crate) fn send_standalone(&self, message: Vec<u8>) -> bool {
        #[cfg(feature = "http")]
        {
            let mut state = self.lock();
            if let Some(stream) = &state.standalone {
                match stream.try_send(message) {
                    Ok(()) => return true,
                    Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => state.standalone = None,
                    Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {}
                }
            }
        }
        #[cfg(not(feature = "http"))]
        drop(message);
        false
    }
}

/// Whether client `capabilities` say it can be asked for input.
pub(crate) fn askable(capabilities: &serde_json::Value) -> bool {
    capabilities.get("elicitation").is_some() || capabilities.get("sampling").is_some()
}

/// The session of the connection (or, over HTTP, of the `Mcp-Session-Id`)
/// a request came in on: one the transport put in the context, else the
/// connection's own; `None` outside a connection.
pub(crate) fn session_of(cx: &Context) -> Option<Arc<Session>> {
    if let Some(session) = cx.extension::<Arc<Session>>() {
        return Some(Arc::clone(session));
    }
    cx.connection_state(Session::default)
}

/// What MCP puts in a request's `params._meta`.
#[derive(Deserialize, Default)]
pub(crate) struct Meta<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion", deserialize_with = "present")]
    version: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "io.modelcontextprotocol/clientCapabilities", deserialize_with = "present")]
    pub(crate) capabilities: Option<&'a RawValue>,
    /// The caller asks for progress notifications with this token.
    #[serde(borrow, default, rename = "progressToken")]
    pub(crate) progress_token: Option<&'a RawValue>,
    /// The level of the logs this request's calls send (2026-07-28).
    #[serde(borrow, default, rename = "io.modelcontextprotocol/logLevel", deserialize_with = "present")]
    pub(crate) log_level: Option<&'a RawValue>,
    /// `_meta` was an object at all.
    #[serde(skip)]
    object: bool,
}

impl<'a> Meta<'a> {
    /// Reads `params._meta`; anything but an object reads as nothing.
    pub(crate) fn read(meta: Option<&'a RawValue>) -> Meta<'a> {
        match meta.map(|raw| serde_json::from_str::<Meta<'a>>(raw.get())) {
            Some(Ok(meta)) => Meta { object: true, ..meta },
            _ => Meta::default(),
        }
    }

    /// Whether the request is a modern one (it names its revision).
    pub(crate) fn is_modern(&self) -> bool {
        self.version.is_some()
    }

    /// The revision a modern request names, as raw JSON (any type); read
    /// by Streamable HTTP to check its protocol-version header against it.
    #[cfg(feature = "http")]
    pub(crate) fn requested_version(&self) -> Option<&'a RawValue> {
        self.version
    }

    /// The revision of a modern request, checked as 2026-07-28 says: the
    /// required keys present (-32602), the version a string (-32602) and
    /// one this server speaks (-32022, naming the ones it does).
    pub(crate) fn modern_revision(&self) -> Result<Revision, ErrorObject> {
        if !self.object {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                format!(
                    "Invalid params: `params._meta` must be an object with `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}` (protocol 2026-07-28), or the session must be initialized with `initialize` first"
                ),
            ));
        }
        let missing = absent([(self.version, PROTOCOL_VERSION_KEY), (self.capabilities, CLIENT_CAPABILITIES_KEY)]);
        if !missing.is_empty() {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                format!("Invalid params: `params._meta` is missing the required key(s): {}", missing.join(", ")),
            ));
        }
        if !self.capabilities.is_some_and(|raw| raw.get().starts_with('{')) {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                format!("Invalid params: `_meta.{CLIENT_CAPABILITIES_KEY}` must be an object"),
            ));
        }
        let requested = self.version.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        let Some(requested) = requested else {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                format!("Invalid params: `_meta.{PROTOCOL_VERSION_KEY}` must be a string such as \"2026-07-28\""),
            ));
        };
        match Revision::parse(&requested).filter(|revision| revision.is_modern()) {
            Some(revision) => Ok(revision),
            None => Err(unsupported_version(&requested)),
        }
    }

    /// The revision a request is served under: its own when it is a
    /// modern one, else the one its session negotiated; an error when the
    /// request is modern but unacceptable, or belongs to no initialized
    /// session.
    pub(crate) fn revision(&self, cx: &Context) -> Result<Revision, ErrorObject> {
        if self.is_modern() {
            return self.modern_revision();
        }
        match session_of(cx).and_then(|session| session.revision()) {
            Some(revision) => Ok(revision),
            None => Err(not_initialized()),
        }
    }
}

/// Who a call of a user method (a tool, resource or prompt) comes from,
/// read once: its revision and, in a session, the session with its log
/// level and the capabilities that let it be asked for input.
pub(crate) struct Caller {
    pub(crate) revision: Revision,
    pub(crate) session: Option<Arc<Session>>,
    /// `logging/setLevel`'s level (handshake revisions).
    pub(crate) log_level: Option<LogLevel>,
    /// The client's capabilities when they say it can be asked for input
    /// (handshake revisions).
    pub(crate) input_capabilities: Option<serde_json::Value>,
}

impl Meta<'_> {
    /// The [`Caller`] of a request: [`Meta::revision`], and what its
    /// session says, under one lock.
    pub(crate) fn caller(&self, cx: &Context) -> Result<Caller, ErrorObject> {
        if self.is_modern() {
            let revision = self.modern_revision()?;
            return Ok(Caller { revision, session: None, log_level: None, input_capabilities: None });
        }
        let session = session_of(cx);
        let (revision, log_level, input_capabilities) = match &session {
            Some(session) => {
                let state = session.lock();
                (state.revision, state.log_level, state.input_capabilities.clone())
            }
            None => (None, None, None),
        };
        let revision = revision.ok_or_else(not_initialized)?;
        Ok(Caller { revision, session, log_level, input_capabilities })
    }
}

/// -32022 for a modern request with a revision this server does not speak.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    let supported: Vec<&str> = Revision::MODERN.iter().map(|revision| revision.as_str()).collect();
    ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(&serde_json::json!({ "supported": supported, "requested": requested }))
}

/// A request that is neither modern nor part of an initialized session.
fn not_initialized() -> ErrorObject {
    ErrorObject::new(
        INVALID_PARAMS,
        format!(
            "Invalid params: the session is not initialized: send `initialize` first, or (protocol 2026-07-28) give `params._meta` with `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}`"
        ),
    )
}

/// MCP's narrowing of JSON-RPC 2.0: ids are strings or integers, never
/// `null`; batches only on the revisions that have them; a request
/// cancelled with `notifications/cancelled` is not answered.
pub(crate) struct McpRules;

impl Dialect for McpRules {
    fn check_id(&self, id: &RawValue) -> Result<(), ErrorObject> {
        let text = id.get();
        let problem = match text.as_bytes().first() {
            Some(b'n') => "`null` is not allowed",
            Some(b'-' | b'0'..=b'9') if text.contains(['.', 'e', 'E']) => {
                "a fractional or exponent number is not allowed"
            }
            _ => return Ok(()),
        };
        Err(ErrorObject::new(
            INVALID_REQUEST,
            format!(
                "Invalid Request: MCP request ids must be strings or integers; {problem} (the request was not executed)"
            ),
        ))
    }

    fn check_batch(&self, cx: &Context) -> Result<(), ErrorObject> {
        let revision = session_of(cx).and_then(|session| session.revision());
        match revision {
            Some(revision) if revision.allows_batches() => Ok(()),
            Some(revision) => Err(ErrorObject::new(
                INVALID_REQUEST,
                format!("Invalid Request: MCP {revision} has no JSON-RPC batches; send each message on its own"),
            )),
            None => Err(ErrorObject::new(
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are only accepted in sessions initialized with MCP 2024-11-05 or 2025-03-26; send each message on its own",
            )),
        }
    }

    fn cancellation(&self) -> Option<Cancellation> {
        Some(Cancellation::Mcp)
    }
}

/// The keys of `fields` whose value is absent, in order: what an error
/// about missing members lists.
pub(crate) fn absent<const N: usize>(fields: [(Option<&RawValue>, &'static str); N]) -> Vec<&'static str> {
    fields.into_iter().filter(|(value, _)| value.is_none()).map(|(_, key)| key).collect()
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::{MAX_OUTGOING, Session};

    #[test]
    fn requests_to_the_client_are_bounded_per_session() {
        let session = Session::default();
        let mut waiting: Vec<_> = (0..MAX_OUTGOING).map(|_| session.outgoing().expect("room")).collect();
        assert!(session.outgoing().is_none(), "one more than the bound");
        // An answer, or a request given up on, makes room.
        let (id, mut answer) = waiting.pop().unwrap();
        assert!(session.answer(id, Ok(serde_json::value::to_raw_value(&1).unwrap())));
        assert_eq!(answer.try_recv().unwrap().unwrap().get(), "1");
        let (id, _answer) = session.outgoing().expect("room again");
        session.forget(id);
        assert!(!session.answer(id, Ok(serde_json::value::to_raw_value(&1).unwrap())), "forgotten");
        drop(waiting.pop());
        assert!(session.outgoing().is_some(), "a dropped waiter frees its place");
    }
}
