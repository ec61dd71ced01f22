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

use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use serde_json::value::RawValue;

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
}

#[derive(Default)]
struct State {
    /// Set by `initialize`.
    revision: Option<Revision>,
    /// Set by `notifications/initialized` (nothing waits on it: requests
    /// are served from the `initialize` answer on, as MCP hosts pipeline).
    initialized: bool,
}

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
        Ok(())
    }

    /// Records `notifications/initialized`.
    pub(crate) fn mark_initialized(&self) {
        self.lock().initialized = true;
    }
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
    capabilities: Option<&'a RawValue>,
    /// The caller asks for progress notifications with this token.
    #[serde(borrow, default, rename = "progressToken")]
    pub(crate) progress_token: Option<&'a RawValue>,
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
