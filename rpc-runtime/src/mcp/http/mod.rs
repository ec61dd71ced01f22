//! MCP over Streamable HTTP: one endpoint that speaks both eras, as a
//! `tower::Service` (mountable in axum) and a standalone listener. See
//! [`McpHttpService`].
//!
//! The HTTP checks (Host, Origin, content type, body limit, timeouts, the
//! connection hook) are the HTTP transport's own ([`HttpService`]); this
//! module adds what MCP puts on top: sessions for the handshake revisions,
//! the request metadata headers of 2026-07-28, and answers as JSON or as an
//! event stream.

mod body;
mod request;
mod serve;
mod sessions;
mod store;
mod stream;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Body;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

pub use body::McpBody;
pub use request::HEADER_MISMATCH;
pub use serve::{McpHttp, McpHttpListener};
pub use store::{MemoryStore, SessionRecord, SessionStore, SessionStoreFuture};

use super::outlet::RequestStream;
use super::revision::Revision;
use super::session::UNSUPPORTED_PROTOCOL_VERSION;
use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
#[cfg(feature = "cors")]
use crate::transport::http::Http;
use crate::transport::http::{HttpAddrs, HttpService, Inner, status_response};
use crate::transport::server::Server;
use crate::wire::response::write_error;
use crate::wire::{ErrorObject, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};
use body::CancelOnDrop;
use request::{Headers, Kind, Message, SESSION_ID};
use sessions::{HttpSession, InUse, Sessions};

/// Sessions open at once by default (handshake revisions; see
/// [`McpHttp::max_sessions`]).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// How long a session may go without requests by default before it ends
/// (see [`McpHttp::session_idle_timeout`]).
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// MCP's "a capability the request needs was not declared" (2026-07-28).
const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// Notifications about one request that may wait for the client to read
/// them before newer ones are dropped.
const EVENT_BACKLOG: usize = 64;

/// An MCP server's Streamable HTTP endpoint: a `tower::Service` for
/// `http::Request`s (mount it in axum with
/// `Router::new().route_service("/mcp", service)`), made by
/// [`McpHttp::service`]; standalone, serve an [`McpHttpListener`].
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::mcp::{McpHttp, McpServer};
/// let server = McpServer::new(router).name("calculator").into_server();
/// let service = McpHttp::default().service(&server); // for axum
/// server.serve(McpHttp::default().bind("127.0.0.1:8080").await?).await
/// # }
/// ```
///
/// Both eras of MCP on one endpoint, chosen per request:
///
/// | request | answer |
/// |---|---|
/// | `POST` of a request | 200 with `application/json`, or `text/event-stream` when the request asked for progress (`_meta.progressToken`) or logs (2026-07-28's `_meta.io.modelcontextprotocol/logLevel`, or a session's `logging/setLevel`), is `subscriptions/listen`, or the client accepts only event streams: its notifications, then its response |
/// | `POST` of a notification or response | 202, no body |
/// | `POST` of `initialize` without `Mcp-Session-Id` | a new session: its id in the `Mcp-Session-Id` header of the answer (2024-11-05 through 2025-11-25) |
/// | `POST` without `Mcp-Session-Id` (not `initialize`, not 2026-07-28) | 400 |
/// | `POST` or `DELETE` with an unknown, ended or expired `Mcp-Session-Id` | 404 (start again with `initialize`) |
/// | `POST` of `initialize` when [`max_sessions`](McpHttp::max_sessions) are open | 503 with `Retry-After` |
/// | `MCP-Protocol-Version` that this server does not speak | 400 (absent: taken as 2025-03-26, the session's negotiated revision applies) |
/// | 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` missing or not matching the body | 400 with `-32020` (`HeaderMismatch`) |
/// | 2026-07-28: an error answer | 404 for `-32601`, 400 for `-32602`, `-32022`, `-32021`, `-32600`, `-32700`, 200 otherwise |
/// | `DELETE` with `Mcp-Session-Id` | 204: the session ends, its running calls are cancelled |
/// | `GET` with `Mcp-Session-Id` (handshake revisions) | the session's event stream: list changes, updates of subscribed resources, logs of calls answered as JSON; a new one replaces the old, it ends with the session |
/// | `GET` without a session, or of 2026-07-28; any other method | 405, `Allow: GET, POST, DELETE` |
/// | `Accept` naming neither JSON nor event streams | 406 |
/// | a bad `Host` or `Origin`, a body too large or too slow, a content type not JSON, refused by the connection hook | as [`HttpService`]: 403, 413, 408, 415, 401/403 |
///
/// Cancellation: in a session, `notifications/cancelled` cancels the named
/// call (a closed connection does not, as the handshake revisions say); a
/// 2026-07-28 call is cancelled when the client closes its response
/// (handlers see [`Context::cancelled`]). Ending a session cancels its
/// running calls. A cancelled request is never answered, as MCP says: its
/// event stream ends after the progress sent so far, and a POST waiting
/// for a JSON answer gets 202 with no body. (The TypeScript SDK's own
/// server sends nothing either, but keeps the POST open until the client
/// goes away; ending it frees the connection, and that SDK's client takes
/// both without a complaint.)
///
/// Sessions are bounded: at most [`DEFAULT_MAX_SESSIONS`] at once, and a
/// session with no request for [`DEFAULT_SESSION_IDLE_TIMEOUT`] ends (a
/// session with a call running does not). Session ids are 128 random bits
/// from the operating system. The connection hook runs for every request,
/// so authenticate each one: a session id is not a credential.
#[derive(Clone)]
pub struct McpHttpService {
    http: HttpService,
    sessions: Arc<Sessions>,
    /// Where sessions are kept for every replica, when set
    /// ([`McpHttp::session_store`]); else `sessions` is all there is.
    store: Option<Arc<dyn SessionStore>>,
    /// The HTTP settings' CORS layer widened to MCP's methods and headers.
    #[cfg(feature = "cors")]
    cors: Option<tower_http::cors::CorsLayer>,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService").field("http", &self.http).finish_non_exhaustive()
    }
}

impl McpHttpService {
    /// The Streamable HTTP endpoint of `server` (a server made by
    /// [`McpServer::into_server`](super::McpServer::into_server)) with
    /// `settings`.
    pub(crate) fn new(server: &Server, settings: &McpHttp) -> Self {
        McpHttpService {
            #[cfg(feature = "cors")]
            cors: mcp_cors(&settings.http),
            http: settings.http.service(server),
            sessions: Arc::new(Sessions::new(settings.max_sessions, settings.session_idle_timeout)),
            store: settings.store.as_ref().map(|store| Arc::clone(&store.0)),
        }
    }

    /// The session `id` of `owner`, in use until the guard drops. With a
    /// session store, the store says whether it exists and what it holds,
    /// and its local part here is made (or brought up to date) from that.
    async fn session(&self, id: &str, owner: Option<&str>) -> Result<InUse, Unusable> {
        let Some(store) = &self.store else {
            return self.sessions.get(id, owner).ok_or(Unusable::NotFound);
        };
        let record = match store.load(id).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                // Ended (by another replica) or expired: so is its part here.
                self.sessions.discard(id);
                return Err(Unusable::NotFound);
            }
            Err(err) => return Err(Unusable::StoreFailed(err)),
        };
        if record.owner() != owner {
            return Err(Unusable::NotFound);
        }
        let max_calls = self.http.inner().server.engine.limits().max_concurrent_requests;
        let in_use = self.sessions.adopt(id, max_calls, owner).ok_or(Unusable::Full)?;
        if let Some(state) = in_use.0.state() {
            state.restore(&record);
        }
        Ok(in_use)
    }

    /// Writes session `id` back to the store when it changed since
    /// `generation` (`logging/setLevel`, `resources/subscribe`, ...), so
    /// that the other replicas serve its next requests as it now is.
    async fn save(&self, id: &str, session: &HttpSession, generation: u64, owner: Option<&str>) {
        let (Some(store), Some(state)) = (&self.store, session.state()) else { return };
        if state.generation() == generation {
            return;
        }
        match store.update(id, &state.record(owner)).await {
            Ok(true) => {}
            Ok(false) => tracing::debug!("an MCP session ended while a request changed it"),
            // Once per interval: every request may fail so while the store is down.
            Err(err) => {
                crate::log::warn_throttled!(error = %err, "the MCP session store could not keep a session's change")
            }
        }
    }

    /// Answers one request.
    async fn respond<B>(self, request: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let inner = Arc::clone(self.http.inner());
        let addrs = request.extensions().get::<HttpAddrs>().copied();
        if let Some(refusal) = inner.check_host(&request, addrs) {
            return refusal.map(McpBody::from);
        }
        #[cfg(feature = "oauth")]
        if let Some(metadata) = inner.metadata(&request) {
            return metadata.map(McpBody::from);
        }
        let method = request.method().clone();
        match method {
            Method::POST => self.post(&inner, request, addrs).await,
            Method::GET => self.get(&inner, request, addrs).await,
            Method::DELETE => self.delete(&inner, request, addrs).await,
            method => not_allowed(&method),
        }
    }

    async fn post<B>(&self, inner: &Inner, request: Request<B>, addrs: Option<HttpAddrs>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let headers = Headers::read(request.headers());
        if !headers.accepts_json && !headers.accepts_events {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: MCP answers with application/json or text/event-stream; list both in Accept",
            );
        }
        let drain = request.extensions().get::<serve::Drain>().map(|drain| Arc::clone(&drain.0));
        let (mut cx, body) = match inner.read_post(request, addrs).await {
            Ok(read) => read,
            Err(refusal) => return refusal.map(McpBody::from),
        };
        cx.drain = drain;
        let Some(message) = Message::read(&body) else {
            // Not a message the model reads (not JSON, a member given twice,
            // a method that is not a string): the engine says what is wrong.
            let out = inner.server.engine.handle(&body, &cx).await;
            return json(StatusCode::BAD_REQUEST, out);
        };
        let modern_header =
            matches!(&headers.version, Some(Ok(version)) if Revision::parse(version).is_some_and(Revision::is_modern));
        if message.meta.is_modern() || modern_header {
            self.post_modern(inner, &headers, &message, &body, cx).await
        } else {
            self.post_in_session(inner, &headers, &message, &body, cx).await
        }
    }

    /// A 2026-07-28 request: no session (an `Mcp-Session-Id` is ignored),
    /// the metadata headers must match the body, closing the answer
    /// cancels the call.
    async fn post_modern(
        &self,
        inner: &Inner,
        headers: &Headers,
        message: &Message<'_>,
        body: &Bytes,
        mut cx: Context,
    ) -> Response<McpBody> {
        // A body without the per-request `_meta` is refused by the engine
        // (-32602) before headers matter, as the revision orders its checks.
        if message.meta.is_modern()
            && let Some(error) = headers.mismatch(message)
        {
            return json_error(StatusCode::BAD_REQUEST, message.id, &error);
        }
        let cancel = Arc::new(Signal::default());
        cx.cancel = Some(Arc::clone(&cancel));
        cx.request_key =
            message.id.and_then(|id| crate::dispatch::inflight::id_key(id.get())).map(|key| Arc::from(&*key));
        let answer = Answer {
            headers,
            message,
            modern: true,
            closed: Some(CancelOnDrop(cancel)),
            in_use: None,
            session_streams: false,
        };
        answer.run(inner, body, cx).await
    }

    /// A request of the handshake revisions: `initialize` opens a session,
    /// anything else belongs to the one its `Mcp-Session-Id` names.
    async fn post_in_session(
        &self,
        inner: &Inner,
        headers: &Headers,
        message: &Message<'_>,
        body: &Bytes,
        mut cx: Context,
    ) -> Response<McpBody> {
        if let Some(version) = &headers.version {
            let known = matches!(version, Ok(version) if Revision::parse(version).is_some());
            if !known {
                let shown = version.as_deref().unwrap_or("(not visible ASCII)");
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    format!(
                        "Bad Request: unsupported MCP-Protocol-Version `{shown}`; this server speaks {}",
                        supported()
                    ),
                );
                return json_error(StatusCode::BAD_REQUEST, message.id, &error);
            }
        }
        let initialize = message.kind == Kind::Request && message.method.as_deref() == Some("initialize");
        let (in_use, new_id) = match &headers.session_id {
            Some(id) => match self.session(id, sessions::owner_of(&cx)).await {
                Ok(in_use) => (in_use, None),
                Err(unusable) => return unusable.response(message.id),
            },
            None if initialize => {
                match self.sessions.open(inner.server.engine.limits().max_concurrent_requests, sessions::owner_of(&cx))
                {
                    Some((id, in_use)) => (in_use, Some(id)),
                    None => {
                        let mut response = plain(
                            StatusCode::SERVICE_UNAVAILABLE,
                            &format!(
                                "Service Unavailable: {} MCP sessions are open (max_sessions); retry later",
                                self.sessions.max
                            ),
                        );
                        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                        return response;
                    }
                }
            }
            None => {
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    "Bad Request: missing Mcp-Session-Id header; send `initialize` first and give the session id it answers with on every later request",
                );
                return json_error(StatusCode::BAD_REQUEST, message.id, &error);
            }
        };
        match message.kind {
            // The answer to a request for input the server sent on a
            // call's event stream: the call waits for it.
            Kind::Response => {
                if let Some(session) = in_use.0.state() {
                    stream::answer_input(&session, body);
                }
                return accepted();
            }
            Kind::Notification if message.method.as_deref() == Some("notifications/cancelled") => {
                if let Some(id) = message.cancelled
                    && in_use.0.link.cancel(id.get())
                {
                    tracing::debug!(id = id.get(), "MCP call cancelled by the client");
                }
                return accepted();
            }
            _ => {}
        }
        cx.link = Some(Arc::clone(&in_use.0.link));
        let opened = Arc::clone(&in_use.0);
        // With a session store: where the session stood, to tell whether
        // this request changed it (and it must be written back).
        let generation = self.store.as_ref().and(opened.state()).map_or(0, |state| state.generation());
        // A session that asked for logs (or may be asked for input) gets
        // its calls' answers as streams, where those messages go first.
        let session_streams = message.may_send_more() && in_use.0.state().is_some_and(|state| state.streams_calls());
        // A new session that fails its `initialize` is ended as its owner;
        // a stored one is written back with it.
        let owner =
            (new_id.is_some() || self.store.is_some()).then(|| sessions::owner_of(&cx).map(str::to_owned)).flatten();
        let answer = Answer { headers, message, modern: false, closed: None, in_use: Some(in_use), session_streams };
        let mut response = answer.run(inner, body, cx).await;
        let Some(id) = new_id else {
            if let Some(id) = &headers.session_id {
                self.save(id, &opened, generation, owner.as_deref()).await;
            }
            return response;
        };
        let initialized = opened.state().and_then(|session| session.revision()).is_some();
        let value = match HeaderValue::from_str(&id) {
            Ok(value) if initialized => value,
            _ => {
                self.sessions.end(&id, owner.as_deref());
                return response;
            }
        };
        if let (Some(store), Some(state)) = (&self.store, opened.state()) {
            let kept = store.create(&id, &state.record(owner.as_deref())).await;
            if !matches!(kept, Ok(true)) {
                self.sessions.end(&id, owner.as_deref());
                return match kept {
                    Err(err) => Unusable::StoreFailed(err).response(message.id),
                    _ => Unusable::StoreFull.response(message.id),
                };
            }
        }
        response.headers_mut().insert(SESSION_ID, value);
        response
    }
}

/// Why the session a request names cannot serve it.
enum Unusable {
    /// Unknown, ended, expired or another's: 404.
    NotFound,
    /// This replica holds [`McpHttp::max_sessions`] sessions: 503.
    Full,
    /// The session store keeps all the sessions it may: 503.
    StoreFull,
    /// The session store failed: 503.
    StoreFailed(std::io::Error),
}

impl Unusable {
    /// The answer to a request (of `id`, when known) naming the session.
    fn response(self, id: Option<&RawValue>) -> Response<McpBody> {
        let reason = match self {
            Unusable::NotFound => {
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    "Not Found: no such session (unknown, ended or expired); start a new one with `initialize` without Mcp-Session-Id",
                );
                return json_error(StatusCode::NOT_FOUND, id, &error);
            }
            Unusable::Full => {
                "Service Unavailable: this server holds as many MCP sessions as it may (max_sessions); retry later"
            }
            Unusable::StoreFull => "Service Unavailable: the MCP session store is full; retry later",
            Unusable::StoreFailed(err) => {
                crate::log::warn_throttled!(error = %err, "the MCP session store failed");
                "Service Unavailable: the MCP session store did not answer; retry later"
            }
        };
        let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, reason);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }
}

/// One message on its way through the engine, and how to answer it.
struct Answer<'a> {
    headers: &'a Headers,
    message: &'a Message<'a>,
    /// 2026-07-28: error answers get their HTTP status.
    modern: bool,
    /// Cancels the call when the answer is dropped unfinished (2026-07-28).
    closed: Option<CancelOnDrop>,
    /// The session, busy until the call ends.
    in_use: Option<InUse>,
    /// The session wants its calls answered as event streams.
    session_streams: bool,
}

impl Answer<'_> {
    async fn run(self, inner: &Inner, body: &Bytes, cx: Context) -> Response<McpBody> {
        let request = self.message.kind == Kind::Request;
        let stream = request
            && self.headers.accepts_events
            && (self.message.wants_stream() || self.session_streams || !self.headers.accepts_json);
        let (events, receiver) = match stream {
            true => {
                let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
                (Some(sender), Some(receiver))
            }
            false => (None, None),
        };
        let cx = match &events {
            Some(sender) => cx.with_extension(RequestStream(sender.clone())),
            None => cx,
        };
        let mut out = Vec::new();
        let pending = inner.server.engine.process(body, &cx, &mut out);
        drop(cx);
        // A call the token's scopes do not allow is refused before it
        // runs: 403 with the scopes it needs, whatever the answer's form.
        #[cfg(feature = "oauth")]
        if pending.is_none()
            && let Some(challenge) = inner.scope_challenge(&out)
        {
            let mut response = json(StatusCode::FORBIDDEN, out);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
            return response;
        }
        let status_from_error = self.modern && request;
        let (in_use, closed) = (self.in_use, self.closed);
        // A session's calls hold its places until they end, however the
        // HTTP requests that started them went.
        let (pending, place) = match (pending, &in_use) {
            (Some(pending), Some(session)) => {
                let wanted = u32::try_from(pending.calls()).unwrap_or(u32::MAX);
                match Arc::clone(&session.0.calls).try_acquire_many_owned(wanted) {
                    Ok(place) => (Some(pending), Some(place)),
                    Err(_) => {
                        let limit = session.0.max_calls;
                        tracing::debug!(
                            calls = pending.calls(),
                            limit,
                            "MCP call refused: too many running in its session"
                        );
                        drop(in_use);
                        let out = pending.reject(&ErrorObject::overloaded(limit, "in one MCP session"));
                        return json_or_accepted(out, status_from_error);
                    }
                }
            }
            (pending, _) => (pending, None),
        };
        match (pending, events, receiver) {
            (None, events, receiver) => {
                drop(in_use);
                match (events, receiver) {
                    (Some(events), Some(receiver)) if !out.is_empty() => {
                        let _ = events.try_send(out);
                        event_stream(receiver, closed)
                    }
                    _ => json_or_accepted(out, status_from_error),
                }
            }
            (Some(pending), Some(events), Some(receiver)) => {
                tokio::spawn(async move {
                    let out = pending.run().await;
                    drop((in_use, place));
                    if !out.is_empty() {
                        // Fails only when the client closed the stream.
                        let _ = events.send(out).await;
                    }
                });
                event_stream(receiver, closed)
            }
            (Some(pending), _, _) => {
                // The call runs on a task of its own: a client that goes
                // away mid-call drops this future, which (2026-07-28)
                // cancels the call through `closed` but never aborts it.
                let (done, answer) = oneshot::channel();
                tokio::spawn(async move {
                    let out = pending.run().await;
                    drop((in_use, place));
                    let _ = done.send(out);
                });
                let _closed = closed;
                let out = answer.await.unwrap_or_default();
                json_or_accepted(out, status_from_error)
            }
        }
    }
}

/// 202 when there is nothing to say (a notification, a response, or a
/// request cancelled by `notifications/cancelled`, which MCP says is not
/// answered), else the JSON answer (with the status its error calls for,
/// when `status_from_error`).
fn json_or_accepted(out: Vec<u8>, status_from_error: bool) -> Response<McpBody> {
    if out.is_empty() {
        return accepted();
    }
    let status = if status_from_error { status_of(&out) } else { StatusCode::OK };
    json(status, out)
}

/// The HTTP status of a 2026-07-28 answer: 404 for an unknown method, 400
/// for the errors the revision names, else 200.
fn status_of(out: &[u8]) -> StatusCode {
    #[derive(Deserialize)]
    struct Reply {
        error: Option<Code>,
    }
    #[derive(Deserialize)]
    struct Code {
        code: i64,
    }
    let Ok(Reply { error: Some(Code { code }) }) = serde_json::from_slice::<Reply>(out) else {
        return StatusCode::OK;
    };
    match code {
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        PARSE_ERROR
        | INVALID_REQUEST
        | INVALID_PARAMS
        | HEADER_MISMATCH
        | MISSING_REQUIRED_CLIENT_CAPABILITY
        | UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The revisions this server speaks, for error messages.
fn supported() -> String {
    let names: Vec<&str> = Revision::LEGACY.iter().chain(&Revision::MODERN).map(|revision| revision.as_str()).collect();
    names.join(", ")
}

fn json(status: StatusCode, out: Vec<u8>) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(out));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An error answer with a JSON-RPC error object (`id` null when not known).
fn json_error(status: StatusCode, id: Option<&RawValue>, error: &ErrorObject) -> Response<McpBody> {
    let mut out = Vec::new();
    write_error(&mut out, id.map_or("null", RawValue::get), error);
    json(status, out)
}

fn event_stream(receiver: mpsc::Receiver<Vec<u8>>, closed: Option<CancelOnDrop>) -> Response<McpBody> {
    let mut response = Response::new(McpBody::events(receiver, closed));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies such as nginx pass events on at once instead of buffering.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn accepted() -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

fn plain(status: StatusCode, reason: &str) -> Response<McpBody> {
    status_response(status, reason).map(McpBody::from)
}

fn not_allowed(method: &Method) -> Response<McpBody> {
    let mut response = plain(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!(
            "Method Not Allowed: the MCP endpoint takes POST, GET (a session's event stream, with its Mcp-Session-Id) and DELETE (to end a session), not {method} without a session"
        ),
    );
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}

/// The future of one answer.
pub type McpResponseFuture = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = McpResponseFuture;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        #[cfg(feature = "cors")]
        if let Some(layer) = &self.cors {
            use tower_layer::Layer;
            return Box::pin(layer.layer(WithoutCors(self.clone())).call(request));
        }
        WithoutCors(self.clone()).call(request)
    }
}

/// The endpoint without CORS (what the CORS layer wraps, when configured).
#[derive(Clone)]
struct WithoutCors(McpHttpService);

impl<B> tower_service::Service<Request<B>> for WithoutCors
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = McpResponseFuture;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move { Ok(service.respond(request).await) })
    }
}

/// `http`'s CORS layer (see [`Http::cors`]) for MCP: its origins,
/// with MCP's methods and headers.
#[cfg(feature = "cors")]
fn mcp_cors(http: &Http) -> Option<tower_http::cors::CorsLayer> {
    let headers = [
        header::CONTENT_TYPE,
        header::ACCEPT,
        header::AUTHORIZATION,
        header::HeaderName::from_static(SESSION_ID),
        header::HeaderName::from_static(request::PROTOCOL_VERSION),
        header::HeaderName::from_static(request::METHOD),
        header::HeaderName::from_static(request::NAME),
        header::HeaderName::from_static("last-event-id"),
    ];
    let layer = http.cors_layer()?.clone();
    Some(
        layer
            .allow_methods([Method::POST, Method::DELETE])
            .allow_headers(headers)
            .expose_headers([header::HeaderName::from_static(SESSION_ID)]),
    )
}
