//! [`HttpService`], the HTTP handler: one request through the checks
//! (Host, method, Origin, content type, size), the connection hook, then
//! the engine; as a tower service (for axum), and for the standalone
//! server without a boxed future.
//!
//! This file is the order of the checks, which is what the status-code
//! table of the module docs promises; the checks themselves are in
//! `origin` (Host, Origin) and `body` (content type, reading), and the
//! error answers in `responses`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use tokio::sync::OwnedSemaphorePermit;

use super::body::{BodyError, is_json, read_body};
use super::config::Http;
use super::responses::{method_not_allowed, refusal, status_response, too_large};
use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
use crate::transport::hook::{Admission, ConnectionInfo, Hook, HookFuture, Refused, based};
use crate::transport::server::Server;

/// Bytes reserved for an answer beyond its request's length (the
/// envelope around a short result).
const ANSWER_HEADROOM: usize = 64;
/// At most this much of a request's length is reserved for its answer up
/// front (a long batch of notifications has no answer at all).
const MAX_ANSWER_RESERVE: usize = 64 * 1024;

/// The addresses of the connection a request came in on. The standalone
/// server (an [`HttpListener`](super::HttpListener)) knows them (the
/// connection hook reads them from [`ConnectionInfo::peer_addr`] and
/// [`ConnectionInfo::local_addr`]; they are not added to the request's
/// extensions); inside another server (axum), insert them into the
/// request's extensions yourself (from axum's `ConnectInfo`) to give the
/// connection hook and the Host check the peer and local addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpAddrs {
    /// The client's address.
    pub peer: SocketAddr,
    /// The address the request arrived on.
    pub local: SocketAddr,
}

impl HttpAddrs {
    /// A connection from `peer` that arrived on `local`.
    pub fn new(peer: SocketAddr, local: SocketAddr) -> Self {
        HttpAddrs { peer, local }
    }
}

/// An accepted connection's place in the standalone server: its permit
/// under `max_connections` and the server's drain signal. The server adds
/// it to each request, so that a connection upgraded to WebSocket keeps
/// counting against the limit and drains with the server.
#[derive(Clone)]
pub(crate) struct ConnectionSlot {
    pub(crate) drain: Arc<Signal>,
    /// Held, never read: the connection counts against the limit while
    /// a clone lives.
    pub(crate) _permit: Arc<OwnedSemaphorePermit>,
}

/// The HTTP (and, with the `ws` feature, WebSocket) face of a [`Server`]:
/// a `tower::Service` for `http::Request`s, so it mounts as a route in an
/// axum app. Made by [`Http::service`]; to serve HTTP standalone, serve an
/// [`HttpListener`](super::HttpListener) instead.
///
/// In axum: `Router::new().route_service("/rpc", Http::default().service(&server))`.
///
/// What it answers (HTTP/1.1 with keep-alive, or HTTP/2: the same):
///
/// | request | answer |
/// |---|---|
/// | `POST`, JSON body | 200 with the JSON-RPC response; 204 with no body when the message held only notifications. Every JSON-RPC failure (parse error, unknown method, handler error) is an error object in a 200 |
/// | another method | 405, with `Allow: POST` |
/// | a `Content-Type` that is not JSON (or none) | 415 |
/// | a body over the limit | 413, from `Content-Length` before reading, or as soon as the limit is passed |
/// | a body not sent within the body timeout | 408 |
/// | a `Host` not allowed, an `Origin` not allowed | 403 |
/// | refused by the connection hook | 401 ([`Refused::unauthorized`](crate::Refused::unauthorized)) or 403 |
///
/// The connection hook ([`Server::on_connect`]) runs for every request,
/// with [`ConnectionInfo`] of transport `"http"` (`"ws"` for a WebSocket upgrade) carrying the request's
/// `http::request::Parts` (headers, URI) as a part: it is the place for
/// authentication, and the context it returns is what handlers see.
///
/// The security defaults are [`Http`]'s.
#[derive(Clone)]
pub struct HttpService {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService").field("server", &self.inner.server).field("config", &self.inner.config).finish()
    }
}

/// What every clone of one service shares: the server and the settings.
/// The checks of `origin` are methods of it too, so that the WebSocket
/// upgrade and MCP's endpoint run the same ones.
pub(crate) struct Inner {
    pub(crate) server: Server,
    pub(crate) config: Http,
    /// The OAuth resource server applied to this service's methods.
    #[cfg(feature = "oauth")]
    pub(crate) guard: Option<super::oauth::Guard>,
}

impl HttpService {
    /// The service of `server` with `config` (see [`Http::service`]).
    pub(super) fn new(server: Server, config: Http) -> Self {
        #[cfg(feature = "oauth")]
        let guard = config.oauth.as_ref().map(|resource| resource.guard(server.engine.router().required_permissions()));
        HttpService {
            inner: Arc::new(Inner {
                server,
                config,
                #[cfg(feature = "oauth")]
                guard,
            }),
        }
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    /// Answers one request (CORS first, when configured).
    pub(crate) fn respond<B>(&self, request: Request<B>) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let bare = BareService(Arc::clone(&self.inner));
        #[cfg(feature = "cors")]
        if let Some(layer) = &self.inner.config.cors {
            use tower_layer::Layer;
            use tower_service::Service;
            return Box::pin(layer.layer(bare).call(request));
        }
        bare.answer(request)
    }

    /// Answers one request of a connection the standalone server accepted
    /// (CORS first, when configured), without a boxed future.
    pub(crate) async fn respond_accepted<B>(
        &self,
        request: Request<B>,
        addrs: HttpAddrs,
        slot: &ConnectionSlot,
    ) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        #[cfg(feature = "cors")]
        if self.inner.config.cors.is_some() {
            let mut request = request;
            request.extensions_mut().insert(addrs);
            request.extensions_mut().insert(slot.clone());
            return self.respond(request).await.unwrap_or_else(|never| match never {});
        }
        self.inner.answer(request, Some(addrs), Some(slot)).await
    }
}

/// The future of one answer.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send>>;

impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.respond(request)
    }
}

/// The service without CORS: what [`HttpService`] answers with, directly
/// or as the inner service of the CORS layer when one is configured (a
/// layer cannot wrap the `HttpService` itself, which would apply CORS
/// again).
#[derive(Clone)]
struct BareService(Arc<Inner>);

impl BareService {
    /// Answers `request`, taking the connection's addresses from its
    /// extensions.
    fn answer<B>(self, request: Request<B>) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let BareService(inner) = self;
        Box::pin(async move { Ok(inner.respond(request).await) })
    }
}

/// The CORS layer's view of [`BareService`].
#[cfg(feature = "cors")]
impl<B> tower_service::Service<Request<B>> for BareService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.clone().answer(request)
    }
}

impl Inner {
    /// Answers one request that carries its connection's addresses (and,
    /// from the standalone server, its [`ConnectionSlot`]) as extensions.
    async fn respond<B>(self: Arc<Self>, request: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let addrs = request.extensions().get::<HttpAddrs>().copied();
        let slot = request.extensions().get::<ConnectionSlot>().cloned();
        self.answer(request, addrs, slot.as_ref()).await
    }

    /// Answers one request. `addrs` and `slot` are the connection's (the
    /// standalone server's requests do not carry them as extensions: the
    /// connection hook reads the addresses from its `ConnectionInfo`).
    async fn answer<B>(
        self: &Arc<Self>,
        request: Request<B>,
        addrs: Option<HttpAddrs>,
        slot: Option<&ConnectionSlot>,
    ) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let heads = Heads::of_request(&request);
        if let Some(refusal) = self.check_host_of(&heads, request.uri(), request.version(), addrs) {
            return refusal;
        }
        #[cfg(feature = "oauth")]
        if let Some(metadata) = self.metadata(&request) {
            return metadata;
        }
        #[cfg(feature = "ws")]
        if crate::transport::ws::is_upgrade(&request) {
            if let Some(refusal) = self.check_origin(heads.origin, heads.own_host()) {
                return refusal;
            }
            return crate::transport::ws::upgrade(Arc::clone(self), request, addrs, slot.cloned()).await;
        }
        #[cfg(not(feature = "ws"))]
        let _ = slot;
        if request.method() != Method::POST {
            return method_not_allowed(request.method());
        }
        let max_body = match self.check_post(&heads) {
            Ok(max_body) => max_body,
            Err(refusal) => return refusal,
        };
        let (cx, body) = match self.admit_and_read(request, addrs, max_body).await {
            Ok(read) => read,
            Err(refusal) => return refusal,
        };
        let engine = &self.server.engine;
        // Most answers are shorter than their request plus an envelope:
        // one allocation, no regrowth.
        let mut out = Vec::with_capacity(body.len().min(MAX_ANSWER_RESERVE) + ANSWER_HEADROOM);
        let out = match engine.process(&body, &cx, &mut out) {
            Some(pending) => pending.run().await,
            None => out,
        };
        if out.is_empty() {
            return Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::default())
                .unwrap_or_else(|_| Response::new(Full::default()));
        }
        #[cfg(feature = "oauth")]
        let challenge = self.scope_challenge(&out);
        let mut response = Response::new(Full::new(Bytes::from(out)));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        #[cfg(feature = "oauth")]
        if let Some(challenge) = challenge {
            *response.status_mut() = StatusCode::FORBIDDEN;
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }

    /// With OAuth: the RFC 9728 metadata, for a `GET` of its path.
    #[cfg(feature = "oauth")]
    pub(crate) fn metadata<B>(&self, request: &Request<B>) -> Option<Response<Full<Bytes>>> {
        let guard = self.guard.as_ref()?;
        if request.method() != Method::GET {
            return None;
        }
        guard.metadata_for(request.uri().path())
    }

    /// With OAuth: the `WWW-Authenticate` of a 403 when `out` is a single
    /// permission error (the token lacks a scope the method requires).
    #[cfg(feature = "oauth")]
    pub(crate) fn scope_challenge(&self, out: &[u8]) -> Option<HeaderValue> {
        let guard = self.guard.as_ref()?;
        let scopes = super::oauth::denied_scopes(out)?;
        Some(guard.insufficient_scope(&scopes))
    }

    /// Whether requests go through admission (OAuth or the connection
    /// hook) rather than getting a plain context.
    fn admits(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.guard.is_some() {
            return true;
        }
        self.server.hook.is_some()
    }

    /// What every JSON `POST` passes before its message is handled, here
    /// and in other endpoints on the same settings (MCP's Streamable
    /// HTTP): the Origin check (403), a JSON content type (415), the body
    /// limit (413, from `Content-Length` or while reading), the connection
    /// hook (401/403), the body timeout (408). Gives the context the hook
    /// made and the body.
    #[cfg(feature = "mcp")]
    pub(crate) async fn read_post<B>(
        &self,
        request: Request<B>,
        addrs: Option<HttpAddrs>,
    ) -> Result<(Context, Bytes), Response<Full<Bytes>>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let max_body = self.check_post(&Heads::of_request(&request))?;
        self.admit_and_read(request, addrs, max_body).await
    }

    /// The checks of a `POST` made on its headers alone: Origin (403), a
    /// JSON content type (415), a declared length within the body limit
    /// (413). Gives the body limit.
    // The refusal is the answer itself, built only on the cold path.
    #[allow(clippy::result_large_err)]
    fn check_post(&self, heads: &Heads<'_>) -> Result<usize, Response<Full<Bytes>>> {
        if let Some(refusal) = self.check_origin(heads.origin, heads.own_host()) {
            return Err(refusal);
        }
        if !is_json(heads.content_type) {
            return Err(status_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: send the JSON-RPC message with `Content-Type: application/json`",
            ));
        }
        let max_body = self.max_body();
        let declared =
            heads.content_length.and_then(|value| value.to_str().ok()).and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > max_body as u64) {
            return Err(too_large(max_body));
        }
        Ok(max_body)
    }

    /// The largest body accepted.
    pub(crate) fn max_body(&self) -> usize {
        self.config.max_body.unwrap_or(self.server.engine.limits().max_message_size)
    }

    /// The rest of a `POST`'s checks: the connection hook (401/403), then
    /// the body, within `max_body` (413) and the body timeout (408).
    async fn admit_and_read<B>(
        &self,
        request: Request<B>,
        addrs: Option<HttpAddrs>,
        max_body: usize,
    ) -> Result<(Context, Bytes), Response<Full<Bytes>>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        #[cfg(feature = "otel")]
        let trace = crate::otel::TraceContext::from_headers(request.headers());
        // Without a hook nothing reads the request's parts: they are
        // dropped where they are instead of moved into the hook's future.
        let (cx, body) = if !self.admits() {
            (plain_context("http", addrs, request.extensions()), request.into_body())
        } else {
            let (parts, body) = request.into_parts();
            // Decided at once (a synchronous hook, a token seen before):
            // no future to make and move.
            let cx = match self.admission("http", parts, addrs) {
                Start::Done(admitted) => admitted?,
                start => self.admitted(start, "http", addrs).await?,
            };
            (cx, body)
        };
        #[cfg(feature = "otel")]
        let cx = cx.with_trace(trace);
        match read_body(body, max_body, self.config.body_timeout).await {
            Ok(body) => Ok((cx, body)),
            Err(BodyError::TooLarge) => Err(too_large(max_body)),
            Err(BodyError::Failed(err)) => {
                tracing::debug!(error = %err, "reading an HTTP body failed");
                Err(status_response(StatusCode::BAD_REQUEST, "Bad Request: the body could not be read"))
            }
            Err(BodyError::TimedOut) => Err(status_response(
                StatusCode::REQUEST_TIMEOUT,
                &format!("Request Timeout: the body did not arrive within {:?}", self.config.body_timeout),
            )),
        }
    }

    /// Admission of one request that came over `transport` (`"http"`, or
    /// `"ws"` for an upgrade): the bearer token (with OAuth), then the
    /// connection hook; the context handlers see, or the 401/403 answer.
    /// What needs no waiting (a synchronous hook, no OAuth) is done
    /// before the future is made, so that the future holds no request head.
    #[cfg(any(feature = "ws", feature = "mcp"))]
    pub(crate) fn admit(
        &self,
        transport: &'static str,
        parts: http::request::Parts,
        addrs: Option<HttpAddrs>,
    ) -> impl Future<Output = Result<Context, Response<Full<Bytes>>>> + Send + '_ {
        #[cfg(feature = "otel")]
        let trace = crate::otel::TraceContext::from_headers(&parts.headers);
        let start = self.admission(transport, parts, addrs);
        let admitted = self.admitted(start, transport, addrs);
        #[cfg(feature = "otel")]
        let admitted = async move { admitted.await.map(|cx| cx.with_trace(trace)) };
        admitted
    }

    /// What admission decides at once, or what it goes on with.
    #[cfg_attr(not(feature = "oauth"), allow(unused_labels))]
    fn admission(&self, transport: &'static str, parts: http::request::Parts, addrs: Option<HttpAddrs>) -> Start {
        'start: {
            #[cfg(feature = "oauth")]
            if let Some(guard) = &self.guard {
                use super::oauth::{Challenge, Lookup};
                // A token seen before is a lookup: no waiting.
                let kept = match guard.lookup(&parts.headers) {
                    Lookup::Missing => break 'start Start::Done(Err(guard.unauthorized(Challenge::Missing))),
                    Lookup::Kept(kept) => kept,
                    Lookup::Verify => break 'start Start::OAuth(Box::new(parts)),
                };
                let cx = super::oauth::with_kept(plain_context(transport, addrs, &parts.extensions), &kept);
                match &self.server.hook {
                    None => break 'start Start::Done(Ok(cx)),
                    Some(hook) => break 'start self.start_hook(hook, transport, parts, addrs, cx),
                }
            }
            match &self.server.hook {
                None => Start::Done(Ok(plain_context(transport, addrs, &parts.extensions))),
                Some(hook) => self.start_hook(hook, transport, parts, addrs, Context::new()),
            }
        }
    }

    /// The end of admission, once `start` was decided.
    async fn admitted(
        &self,
        start: Start,
        transport: &'static str,
        addrs: Option<HttpAddrs>,
    ) -> Result<Context, Response<Full<Bytes>>> {
        let _ = (transport, addrs);
        match start {
            Start::Done(admitted) => admitted,
            Start::Hook(admitted, peer) => admitted.await.map_err(|refused| self.refused_from(peer, &refused)),
            #[cfg(feature = "oauth")]
            Start::OAuth(parts) => self.admit_oauth(transport, *parts, addrs).await,
        }
    }

    /// Runs the synchronous part of the connection hook: its answer, or
    /// the future of it.
    #[inline]
    fn start_hook(
        &self,
        hook: &Hook,
        transport: &'static str,
        parts: http::request::Parts,
        addrs: Option<HttpAddrs>,
        cx: Context,
    ) -> Start {
        #[cfg(feature = "tls")]
        let certs = parts.extensions.get::<crate::transport::tls::PeerCertificates>().cloned();
        #[allow(unused_mut)]
        let mut info =
            ConnectionInfo::of_request(transport, addrs.map(|addrs| addrs.peer), addrs.map(|addrs| addrs.local), parts);
        #[cfg(feature = "tls")]
        let cx = match certs {
            Some(certs) => {
                info.add_part(certs.clone());
                cx.with_extension(certs)
            }
            None => cx,
        };
        match hook.start(&info, based(&info, cx)) {
            Admission::Now(admitted) => Start::Done(admitted.map_err(|refused| self.refused(&info, &refused))),
            Admission::Later(admitted) => Start::Hook(admitted, info.peer_addr()),
        }
    }

    /// With OAuth: the token, then the hook (if any) on the context the
    /// token's grant made.
    #[cfg(feature = "oauth")]
    async fn admit_oauth(
        &self,
        transport: &'static str,
        parts: http::request::Parts,
        addrs: Option<HttpAddrs>,
    ) -> Result<Context, Response<Full<Bytes>>> {
        let Some(guard) = &self.guard else {
            return Ok(plain_context(transport, addrs, &parts.extensions));
        };
        let cx = plain_context(transport, addrs, &parts.extensions);
        let cx = guard.admit(&parts.headers, cx).await.map_err(|challenge| guard.unauthorized(challenge))?;
        let Some(hook) = &self.server.hook else {
            return Ok(cx);
        };
        match self.start_hook(hook, transport, parts, addrs, cx) {
            Start::Done(admitted) => admitted,
            Start::Hook(admitted, peer) => admitted.await.map_err(|refused| self.refused_from(peer, &refused)),
            Start::OAuth(_) => unreachable!("a hook's start is never a token to verify"),
        }
    }

    /// The answer to a request the connection hook refused.
    fn refused(&self, info: &ConnectionInfo, refused: &Refused) -> Response<Full<Bytes>> {
        self.refused_from(info.peer_addr(), refused)
    }

    #[cold]
    fn refused_from(&self, peer: Option<std::net::SocketAddr>, refused: &Refused) -> Response<Full<Bytes>> {
        tracing::debug!(?peer, %refused, "HTTP request refused by the connection hook");
        #[allow(unused_mut)]
        let mut response = refusal(refused);
        #[cfg(feature = "oauth")]
        if let Some(guard) = &self.guard
            && refused.is_unauthorized()
        {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, guard.hook_challenge().clone());
        }
        response
    }
}

/// How admission of a request goes on after what could be done at once.
enum Start {
    /// Decided.
    Done(Result<Context, Response<Full<Bytes>>>),
    /// The hook's future, and the peer's address for the log of a refusal.
    Hook(HookFuture, Option<SocketAddr>),
    /// A bearer token to verify, then the hook (boxed: rare, and the
    /// common variants stay small to move).
    #[cfg(feature = "oauth")]
    OAuth(Box<http::request::Parts>),
}

/// The context of a request when there is no connection hook (with the
/// client's TLS certificates, when its request `extensions` carry them).
fn plain_context(transport: &'static str, addrs: Option<HttpAddrs>, extensions: &http::Extensions) -> Context {
    let mut cx = Context::new().with_transport(transport);
    if let Some(addrs) = addrs {
        cx = cx.with_peer_addr(addrs.peer);
    }
    #[cfg(feature = "tls")]
    if let Some(certs) = extensions.get::<crate::transport::tls::PeerCertificates>() {
        cx = cx.with_extension(certs.clone());
    }
    #[cfg(not(feature = "tls"))]
    let _ = extensions;
    cx
}

/// The request headers the checks read (the first value of each), found
/// in one pass over the headers instead of one hash lookup each.
#[derive(Default)]
pub(super) struct Heads<'a> {
    pub(super) host: Option<&'a HeaderValue>,
    /// How many `Host` headers there are (two or more is a 400).
    pub(super) hosts: usize,
    pub(super) origin: Option<&'a HeaderValue>,
    pub(super) content_type: Option<&'a HeaderValue>,
    pub(super) content_length: Option<&'a HeaderValue>,
    /// The request target's authority, when it has one (HTTP/2's
    /// `:authority`, an absolute-form target).
    pub(super) authority: Option<&'a str>,
}

impl<'a> Heads<'a> {
    /// The heads of `request`, with its target's authority.
    pub(super) fn of_request<B>(request: &'a Request<B>) -> Self {
        Heads { authority: request.uri().authority().map(http::uri::Authority::as_str), ..Heads::of(request.headers()) }
    }

    /// The host the request is for, as [`own_host`](super::origin::own_host)
    /// reads it.
    pub(super) fn own_host(&self) -> Option<&'a str> {
        self.authority.or_else(|| self.host.and_then(|value| value.to_str().ok()))
    }

    pub(super) fn of(headers: &'a http::HeaderMap) -> Self {
        let mut heads = Heads::default();
        for (name, value) in headers {
            let slot = if *name == header::HOST {
                heads.hosts += 1;
                &mut heads.host
            } else if *name == header::CONTENT_TYPE {
                &mut heads.content_type
            } else if *name == header::CONTENT_LENGTH {
                &mut heads.content_length
            } else if *name == header::ORIGIN {
                &mut heads.origin
            } else {
                continue;
            };
            slot.get_or_insert(value);
        }
        heads
    }
}
