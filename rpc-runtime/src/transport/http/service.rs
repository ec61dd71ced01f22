//! The HTTP handler: checks (Host, method, Origin, content type, size),
//! the connection hook, then one message through the engine.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::OwnedSemaphorePermit;

use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
use crate::transport::hook::{ConnectionInfo, Refused, admit};
use crate::transport::server::Server;

/// Default time a client has to send a request's headers (and, between
/// requests on a kept-alive connection, to start the next one).
const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a client has to send a request's body once its headers
/// arrived.
const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of requests an HTTP/2 connection may have in progress
/// at once (its concurrent streams).
pub const DEFAULT_MAX_CONCURRENT_STREAMS: u32 = 100;

/// Bytes reserved for an answer beyond its request's length (the
/// envelope around a short result).
const ANSWER_HEADROOM: usize = 64;
/// At most this much of a request's length is reserved for its answer up
/// front (a long batch of notifications has no answer at all).
const MAX_ANSWER_RESERVE: usize = 64 * 1024;

/// The addresses of the connection a request came in on. The standalone
/// server (an [`HttpListener`]) adds them to every request's
/// extensions; inside another server (axum), insert them yourself (from
/// axum's `ConnectInfo`) to give the connection hook and the Host check
/// the peer and local addresses.
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

/// What the standalone server adds to requests so that upgraded
/// WebSocket connections drain with it and count against its limit.
#[derive(Clone)]
pub(crate) struct Serving {
    pub(crate) drain: Arc<Signal>,
    /// Held, never read: the connection counts against the limit while
    /// a clone lives.
    pub(crate) _slot: Arc<OwnedSemaphorePermit>,
}

/// Which `Host` headers are served (DNS rebinding protection).
#[derive(Clone, Debug)]
enum HostCheck {
    /// Loopback names only when the server is local: bound to a loopback
    /// address (or, when that is not known, called from one); any host
    /// otherwise.
    Auto,
    /// Any host.
    Any,
    /// These hosts (`name` matches any port, `name:port` that port only),
    /// plus the loopback names when the server is local.
    Only(Vec<String>),
}

/// The settings of the HTTP transport (and, with the `ws` feature, of
/// WebSocket upgrades on it): a builder, `Default` for the defaults below.
/// Make a listener with [`Http::bind`] or [`Http::listener`] for
/// [`Server::serve`], or the tower service to mount in axum with
/// [`Http::service`].
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Server, transport::http::Http};
/// let listener = Http::default().allowed_origins(["https://app.example.com"]).bind("127.0.0.1:8080").await?;
/// println!("serving on {}", listener.local_addr()?);
/// Server::new(router).serve(listener).await
/// # }
/// ```
///
/// Security defaults: a server bound to a loopback address serves only
/// the loopback host names (`localhost`, `127.0.0.1`, `[::1]`), against
/// DNS rebinding; an `Origin` header (sent by browsers) must be the
/// request's own origin or an allowed one; CORS is off until
/// configured; bodies are limited to the engine's `max_message_size`;
/// headers must arrive within 10 s and bodies within 30 s.
#[derive(Clone, Debug)]
pub struct Http {
    hosts: HostCheck,
    origins: Vec<String>,
    any_origin: bool,
    max_body: Option<usize>,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_concurrent_streams: u32,
    #[cfg(feature = "ws")]
    pub(crate) ws: crate::transport::ws::WsServerOptions,
    #[cfg(feature = "cors")]
    pub(crate) cors: Option<tower_http::cors::CorsLayer>,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<crate::transport::tls::ServerTls>,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            hosts: HostCheck::Auto,
            origins: Vec::new(),
            any_origin: false,
            max_body: None,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            #[cfg(feature = "ws")]
            ws: Default::default(),
            #[cfg(feature = "cors")]
            cors: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

/// The HTTP (and, with the `ws` feature, WebSocket) face of a [`Server`]:
/// a `tower::Service` for `http::Request`s, so it mounts as a route in an
/// axum app. Made by [`Http::service`]; to serve HTTP standalone, serve an
/// [`HttpListener`] instead.
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
/// | refused by the connection hook | 401 ([`Refused::unauthorized`]) or 403 |
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

pub(crate) struct Inner {
    pub(crate) server: Server,
    pub(crate) config: Http,
}

impl Http {
    /// The tower service of `server` with these settings, to mount in
    /// axum or any hyper-based server (see [`HttpService`]).
    pub fn service(&self, server: &Server) -> HttpService {
        HttpService { inner: Arc::new(Inner { server: server.clone(), config: self.clone() }) }
    }

    /// Binds `addr` for [`Server::serve`] with these settings (port 0: an
    /// address the system picks; read it with [`HttpListener::local_addr`]).
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<HttpListener> {
        Ok(self.listener(TcpListener::bind(addr).await?))
    }

    /// Serves HTTP on `listener` with these settings, for [`Server::serve`].
    pub fn listener(self, listener: TcpListener) -> HttpListener {
        HttpListener { http: self, listener }
    }

    fn with_config(mut self, change: impl FnOnce(&mut Http)) -> Self {
        change(&mut self);
        self
    }

    /// Serves requests whose `Host` is one of `hosts` (`example.com`
    /// matches any port, `example.com:8080` only that one). On a local
    /// server the loopback names stay allowed.
    pub fn allowed_hosts<I, S>(self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let hosts = hosts.into_iter().map(|host| host.into().to_ascii_lowercase()).collect();
        self.with_config(|config| config.hosts = HostCheck::Only(hosts))
    }

    /// Serves any `Host`, even on a loopback address (turns DNS rebinding
    /// protection off).
    pub fn allow_any_host(self) -> Self {
        self.with_config(|config| config.hosts = HostCheck::Any)
    }

    /// Accepts requests (and WebSocket upgrades) from web pages of these
    /// origins (`https://app.example.com`), besides same-origin ones.
    pub fn allowed_origins<I, S>(self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origins = origins.into_iter().map(|origin| origin.into().to_ascii_lowercase()).collect();
        self.with_config(|config| config.origins = origins)
    }

    /// Accepts any `Origin` (turns the cross-site check off).
    pub fn allow_any_origin(self) -> Self {
        self.with_config(|config| config.any_origin = true)
    }

    /// The largest body accepted, in bytes (default: the engine's
    /// `max_message_size`, 10 MiB).
    pub fn max_body(self, bytes: usize) -> Self {
        self.with_config(|config| config.max_body = Some(bytes))
    }

    /// How long a client may take to send a request's headers, and to
    /// start the next request on a kept-alive connection (default 10 s);
    /// past it the connection is closed. Keeps slow clients from holding
    /// connections. On HTTP/1.1 it is hyper's `header_read_timeout`; an
    /// HTTP/2 connection has it to open its first stream, and again
    /// whenever none is open (then it is told `GOAWAY` and closed).
    /// (Mounted in another server, such as axum's, that server's own
    /// settings apply.)
    pub fn header_timeout(self, timeout: Duration) -> Self {
        self.with_config(|config| config.header_timeout = timeout)
    }

    /// How long a client may take to send a body once its headers
    /// arrived (default 30 s); past it the answer is 408.
    pub fn body_timeout(self, timeout: Duration) -> Self {
        self.with_config(|config| config.body_timeout = timeout)
    }

    /// How many requests one HTTP/2 connection may have in progress at
    /// once (default [`DEFAULT_MAX_CONCURRENT_STREAMS`], 100): the
    /// server announces it (`SETTINGS_MAX_CONCURRENT_STREAMS`), and a
    /// client that opens more streams has them refused (`REFUSED_STREAM`,
    /// safe to retry). An HTTP/1.1 connection has one request in progress
    /// at a time. At least 1. (Mounted in another server, such as axum's,
    /// that server's own settings apply.)
    pub fn max_concurrent_streams(self, max: u32) -> Self {
        self.with_config(|config| config.max_concurrent_streams = max.max(1))
    }

    /// Answers CORS preflights and adds CORS headers for web pages of
    /// `origins` (which are also allowed by the Origin check), for
    /// `POST` with `Content-Type` and `Authorization` headers. Off by
    /// default. Needs the `cors` feature.
    #[cfg(feature = "cors")]
    pub fn cors<I, S>(self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origins: Vec<String> = origins.into_iter().map(|origin| origin.into().to_ascii_lowercase()).collect();
        let values: Vec<HeaderValue> = origins.iter().filter_map(|origin| HeaderValue::from_str(origin).ok()).collect();
        let layer = tower_http::cors::CorsLayer::new()
            .allow_origin(values)
            .allow_methods([Method::POST])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION]);
        self.with_config(|config| {
            config.origins.extend(origins);
            config.cors = Some(layer);
        })
    }

    /// Serves HTTPS (and, with the `ws` feature, WSS) with `tls` on the
    /// listeners made with these settings ([`Http::bind`],
    /// [`Http::listener`], MCP's Streamable HTTP listener): a connection
    /// is served only once its TLS handshake is done, within the
    /// [header timeout](Http::header_timeout); a plain-text request is
    /// not served. ALPN offers what the listener serves (`http/1.1`)
    /// unless `tls` names protocols of its own. A client certificate (see
    /// [`ServerTls::client_auth`](crate::transport::tls::ServerTls::client_auth))
    /// reaches the connection hook as a
    /// [`PeerCertificates`](crate::transport::tls::PeerCertificates) part.
    /// (Mounted in another server with [`Http::service`], TLS is that
    /// server's.) Needs the `tls` feature.
    #[cfg(feature = "tls")]
    pub fn tls(self, tls: crate::transport::tls::ServerTls) -> Self {
        let tls = tls.with_default_alpn(super::serve::ALPN);
        self.with_config(|config| config.tls = Some(tls))
    }

    /// The same settings with other WebSocket settings.
    #[cfg(feature = "ws")]
    pub(crate) fn with_ws(self, change: impl FnOnce(&mut crate::transport::ws::WsServerOptions)) -> Self {
        self.with_config(|config| change(&mut config.ws))
    }

    /// The CORS layer [`Http::cors`] configured, if any.
    #[cfg(all(feature = "cors", feature = "mcp"))]
    pub(crate) fn cors_layer(&self) -> Option<&tower_http::cors::CorsLayer> {
        self.cors.as_ref()
    }
}

/// A TCP listener serving HTTP with [`Http`] settings: pass it to
/// [`Server::serve`] (HTTPS with [`Http::tls`]). It serves HTTP/1.1 and,
/// with the `http2` feature, HTTP/2 on the same port (h2c with prior
/// knowledge: a connection that opens with HTTP/2's preface; over TLS,
/// `h2` chosen by ALPN), each request answered as [`HttpService`] says. At
/// most the server's `max_connections` are open at once (a WebSocket or
/// HTTP/2 connection counts as one, and so does a TLS connection from its
/// accept on); one more is answered 503. A connection that sends no
/// request within the header timeout is closed, and so is an HTTP/2
/// connection left with no request in progress for that long (as a
/// kept-alive HTTP/1.1 one is; HTTP/2 is told with `GOAWAY`). On graceful
/// shutdown it stops accepting, lets each request in progress finish and
/// be answered, closes idle keep-alive connections (HTTP/2: `GOAWAY`, then
/// closes once its streams are answered) and WebSocket connections (after
/// answering what runs on them), and returns once all are closed.
#[derive(Debug)]
pub struct HttpListener {
    pub(crate) http: Http,
    pub(crate) listener: TcpListener,
}

impl HttpListener {
    /// The local address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }
}

impl HttpService {
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
        #[cfg(feature = "cors")]
        if let Some(layer) = &self.inner.config.cors {
            use tower_layer::Layer;
            use tower_service::Service;
            let mut cors = layer.layer(Core(Arc::clone(&self.inner)));
            let future = cors.call(request);
            return Box::pin(future);
        }
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { Ok(inner.respond(request).await) })
    }
}

impl HttpService {
    /// Answers one request of a connection the standalone server accepted
    /// (CORS first, when configured), without a boxed future.
    pub(crate) async fn respond_accepted<B>(
        &self,
        request: Request<B>,
        addrs: HttpAddrs,
        serving: &Serving,
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
            request.extensions_mut().insert(serving.clone());
            return self.respond(request).await.unwrap_or_else(|never| match never {});
        }
        self.inner.answer(request, Some(addrs), Some(serving), true).await
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

/// The service without CORS, for the CORS layer to wrap.
#[cfg(feature = "cors")]
#[derive(Clone)]
struct Core(Arc<Inner>);

#[cfg(feature = "cors")]
impl<B> tower_service::Service<Request<B>> for Core
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
        let inner = Arc::clone(&self.0);
        Box::pin(async move { Ok(inner.respond(request).await) })
    }
}

impl Inner {
    /// Answers one request that carries its connection's addresses (and,
    /// from the standalone server, its [`Serving`]) as extensions.
    async fn respond<B>(self: Arc<Self>, request: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let addrs = request.extensions().get::<HttpAddrs>().copied();
        let serving = request.extensions().get::<Serving>().cloned();
        self.answer(request, addrs, serving.as_ref(), false).await
    }

    /// Answers one request. `addrs` and `serving` are the connection's;
    /// with `extend`, the standalone server's request does not carry them
    /// as extensions yet, and gets them only where user code can see them
    /// (the connection hook, given the request's parts).
    async fn answer<B>(
        self: &Arc<Self>,
        mut request: Request<B>,
        addrs: Option<HttpAddrs>,
        serving: Option<&Serving>,
        extend: bool,
    ) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if extend && self.server.hook.is_some() {
            if let Some(addrs) = addrs {
                request.extensions_mut().insert(addrs);
            }
            if let Some(serving) = serving {
                request.extensions_mut().insert(serving.clone());
            }
        }
        let heads = Heads::of_request(&request);
        if let Some(refusal) = self.check_host_of(&heads, request.uri(), request.version(), addrs) {
            return refusal;
        }
        #[cfg(feature = "ws")]
        if crate::transport::ws::is_upgrade(&request) {
            if let Some(refusal) = self.check_origin(heads.origin, heads.own_host()) {
                return refusal;
            }
            return crate::transport::ws::upgrade(Arc::clone(self), request, addrs, serving.cloned()).await;
        }
        #[cfg(not(feature = "ws"))]
        let _ = serving;
        if request.method() != Method::POST {
            let mut response = status_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &format!("Method Not Allowed: JSON-RPC over HTTP takes POST, not {}", request.method()),
            );
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
            return response;
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
        let mut response = Response::new(Full::new(Bytes::from(out)));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
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
        // Without a hook nothing reads the request's parts: they are
        // dropped where they are instead of moved into the hook's future.
        let (cx, body) = if self.server.hook.is_none() {
            (plain_context("http", addrs, request.extensions()), request.into_body())
        } else {
            let (parts, body) = request.into_parts();
            (self.admit("http", parts, addrs).await?, body)
        };
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

    /// The connection hook, for one request that came over `transport`
    /// (`"http"`, or `"ws"` for an upgrade): the context handlers see, or
    /// the 401/403 answer.
    pub(crate) async fn admit(
        &self,
        transport: &'static str,
        parts: http::request::Parts,
        addrs: Option<HttpAddrs>,
    ) -> Result<Context, Response<Full<Bytes>>> {
        let Some(hook) = &self.server.hook else {
            return Ok(plain_context(transport, addrs, &parts.extensions));
        };
        let mut info = ConnectionInfo::new(transport);
        if let Some(addrs) = addrs {
            info = info.with_peer_addr(addrs.peer).with_local_addr(addrs.local);
        }
        #[cfg(feature = "tls")]
        let (info, cx) = crate::transport::tls::with_certificates(
            info,
            Context::new(),
            parts.extensions.get::<crate::transport::tls::PeerCertificates>().cloned(),
        );
        #[cfg(not(feature = "tls"))]
        let cx = Context::new();
        let info = info.with_part(parts);
        admit(Some(hook), &info, cx).await.map_err(|refused| {
            tracing::debug!(peer = ?info.peer_addr(), %refused, "HTTP request refused by the connection hook");
            refusal(&refused)
        })
    }

    /// [`Inner::check_host_of`], reading the headers of `request`: for
    /// MCP's Streamable HTTP endpoint, which checks the host before it
    /// hands a request on (the HTTP service reads the headers once for all
    /// its checks).
    #[cfg(feature = "mcp")]
    pub(crate) fn check_host<B>(
        &self,
        request: &Request<B>,
        addrs: Option<HttpAddrs>,
    ) -> Option<Response<Full<Bytes>>> {
        self.check_host_of(&Heads::of(request.headers()), request.uri(), request.version(), addrs)
    }

    /// 400 unless the request names one valid host (RFC 9112 §3.2), 403
    /// unless that host is allowed (see [`HostCheck`]); `None` when it is.
    ///
    /// The host is the target's authority when the request has one (an
    /// absolute-form target, HTTP/2's `:authority`: RFC 9112 §3.2.2 says
    /// the `Host` header is then ignored), else the one `Host` header. Two
    /// `Host` headers, a `Host` that is not `host[:port]` (userinfo, a
    /// port that is not digits, text after an IPv6 literal), or an
    /// HTTP/1.1 request without any host are refused before anything else
    /// reads them, so no malformed value can pass for a loopback name.
    ///
    /// `heads` are the headers of the request, already read.
    fn check_host_of(
        &self,
        heads: &Heads<'_>,
        uri: &http::Uri,
        version: http::Version,
        addrs: Option<HttpAddrs>,
    ) -> Option<Response<Full<Bytes>>> {
        let host = match request_host(heads, uri, version) {
            Ok(host) => host,
            Err(why) => {
                tracing::debug!(why, "refused an HTTP request with a bad Host");
                return Some(status_response(StatusCode::BAD_REQUEST, &format!("Bad Request: {why}")));
            }
        };
        if self.host_allowed(host, addrs) {
            return None;
        }
        tracing::debug!(host = ?host, "refused an HTTP request for a host that is not allowed");
        Some(status_response(
            StatusCode::FORBIDDEN,
            "Forbidden: this Host is not served (DNS rebinding protection); the server can allow it with allowed_hosts",
        ))
    }

    /// Whether a request for `host` (its `Host` header, or its URI's
    /// authority) is served (see [`HostCheck`]).
    pub(crate) fn host_allowed(&self, host: Option<&str>, addrs: Option<HttpAddrs>) -> bool {
        let local = match addrs {
            Some(addrs) => addrs.local.ip().is_loopback(),
            None => false,
        };
        let extra: &[String] = match &self.config.hosts {
            HostCheck::Any => return true,
            HostCheck::Auto if !local => return true,
            HostCheck::Auto => &[],
            HostCheck::Only(hosts) => hosts,
        };
        // `extra` is lower case: comparing without regard to ASCII case is
        // comparing the lower-cased host, without allocating it.
        host.is_some_and(|host| {
            let name = host_name(host);
            (local && is_loopback_name(name))
                || extra.iter().any(|allowed| allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(name))
        })
    }

    /// 403 when an `Origin` is given and is neither the request's own (its
    /// `host`, see [`own_host`]) nor an allowed one; `None` otherwise.
    pub(crate) fn check_origin(
        &self,
        origin: Option<&HeaderValue>,
        host: Option<&str>,
    ) -> Option<Response<Full<Bytes>>> {
        let origin = origin.map(|value| value.to_str().ok());
        if self.origin_allowed(origin, host) {
            return None;
        }
        let origin = origin.flatten().unwrap_or("").to_ascii_lowercase();
        tracing::debug!(origin, "refused an HTTP request from an origin that is not allowed");
        Some(status_response(
            StatusCode::FORBIDDEN,
            "Forbidden: requests from this Origin are not allowed; the server can allow it with allowed_origins or cors",
        ))
    }

    /// Whether a request with this `Origin` (none; or one, as text when
    /// it is visible ASCII) for `host` is allowed.
    pub(crate) fn origin_allowed(&self, origin: Option<Option<&str>>, host: Option<&str>) -> bool {
        if self.config.any_origin {
            return true;
        }
        let Some(origin) = origin else { return true };
        let origin = origin.unwrap_or("");
        let same_origin = host.is_some_and(|host| {
            let authority = origin.split_once("://").map_or("", |(_, authority)| authority);
            authority.eq_ignore_ascii_case(host)
        });
        // The allowed origins are lower case (see `allowed_origins`).
        same_origin || self.config.origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin))
    }
}

/// The request headers the checks read (the first value of each), found
/// in one pass over the headers instead of one hash lookup each.
#[derive(Default)]
struct Heads<'a> {
    host: Option<&'a HeaderValue>,
    /// How many `Host` headers there are (two or more is a 400).
    hosts: usize,
    origin: Option<&'a HeaderValue>,
    content_type: Option<&'a HeaderValue>,
    content_length: Option<&'a HeaderValue>,
    /// The request target's authority, when it has one (HTTP/2's
    /// `:authority`, an absolute-form target).
    authority: Option<&'a str>,
}

impl<'a> Heads<'a> {
    /// The heads of `request`, with its target's authority.
    fn of_request<B>(request: &'a Request<B>) -> Self {
        Heads { authority: request.uri().authority().map(http::uri::Authority::as_str), ..Heads::of(request.headers()) }
    }

    /// The host the request is for, as [`own_host`] reads it.
    fn own_host(&self) -> Option<&'a str> {
        self.authority.or_else(|| self.host.and_then(|value| value.to_str().ok()))
    }

    fn of(headers: &'a http::HeaderMap) -> Self {
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

/// The host `request` is for, which a same-origin `Origin` names: its
/// target's authority when it has one (HTTP/2 sends `:authority`, not
/// `Host`), else its `Host` header.
#[cfg(feature = "mcp")]
pub(crate) fn own_host<B>(request: &Request<B>) -> Option<&str> {
    Heads::of_request(request).own_host()
}

/// The context of a request when there is no connection hook (with the
/// client's TLS certificates, when its request `extensions` carry them).
pub(super) fn plain_context(
    transport: &'static str,
    addrs: Option<HttpAddrs>,
    extensions: &http::Extensions,
) -> Context {
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

/// The host a request is for (see [`Inner::check_host_of`]), or why it
/// names none that can be served.
fn request_host<'a>(
    heads: &Heads<'a>,
    uri: &'a http::Uri,
    version: http::Version,
) -> Result<Option<&'a str>, &'static str> {
    if heads.hosts > 1 {
        return Err("more than one Host header (RFC 9112 section 3.2)");
    }
    if let Some(authority) = uri.authority() {
        let authority = authority.as_str();
        if !is_authority(authority) {
            return Err("the request target's authority is not host[:port]");
        }
        return Ok(Some(authority));
    }
    match heads.host {
        Some(value) => match value.to_str() {
            Ok(host) if is_authority(host) => Ok(Some(host)),
            _ => Err("the Host header is not host[:port] (RFC 9112 section 3.2)"),
        },
        None if version == http::Version::HTTP_11 => Err("an HTTP/1.1 request needs a Host header"),
        None => Ok(None),
    }
}

/// Whether `text` is `host[:port]` as RFC 3986 writes an authority
/// without userinfo: an IP literal in brackets or a name of unreserved,
/// percent-encoded and sub-delimiter characters (an IPv4 address is such a
/// name), then an optional port of at most five digits.
fn is_authority(text: &str) -> bool {
    let (host_ok, port) = match text.strip_prefix('[') {
        Some(literal) => {
            let Some((inside, after)) = literal.split_once(']') else { return false };
            let port = match after {
                "" => "",
                _ => match after.strip_prefix(':') {
                    Some(port) => port,
                    None => return false,
                },
            };
            let address = inside.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            (!inside.is_empty() && address, port)
        }
        None => {
            let (host, port) = text.rsplit_once(':').unwrap_or((text, ""));
            (!host.is_empty() && host.bytes().all(is_name_byte), port)
        }
    };
    host_ok && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
}

/// A byte of a host name (RFC 3986 `reg-name`: unreserved,
/// percent-encoded or a sub-delimiter).
fn is_name_byte(b: u8) -> bool {
    matches!(b, b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'%' | b'!' | b'$' | b'&' | b'\''..=b',' | b';' | b'=')
}

/// `host` of `host:port`, `[::1]` of `[::1]:port`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    // A short reverse scan (host names are short; memrchr costs more).
    host.bytes().rposition(|byte| byte == b':').map_or(host, |colon| &host[..colon])
}

/// Whether `name` (in any ASCII case) names this machine: `localhost`, a
/// `.localhost` name, or a loopback address.
fn is_loopback_name(name: &str) -> bool {
    if name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost") || ends_with_ignore_case(name, ".localhost") {
        return true;
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `application/json`, with parameters (`; charset=utf-8`) or as a
/// `+json` suffix, in any ASCII case.
fn is_json(value: Option<&HeaderValue>) -> bool {
    is_json_str(value.and_then(|value| value.to_str().ok()))
}

/// [`is_json`] of a value already read as text.
fn is_json_str(value: Option<&str>) -> bool {
    let Some(value) = value else {
        return false;
    };
    if value == "application/json" {
        return true;
    }
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || (starts_with_ignore_case(essence, "application/") && ends_with_ignore_case(essence, "+json"))
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes().get(..prefix.len()).is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()))
}

fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    let text = text.as_bytes();
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Why a body could not be read whole.
enum BodyError {
    /// Longer than the limit.
    TooLarge,
    /// The body failed (the client went away mid-body, say).
    Failed(Box<dyn std::error::Error + Send + Sync>),
    /// Not all there within the body timeout.
    TimedOut,
}

/// Reads `body` whole (at most `max` bytes) within `timeout`. A body
/// usually arrives with its headers, so it is first read without arming
/// a timer; only a body still on its way is read under the timeout.
async fn read_body<B>(body: B, max: usize, timeout: Duration) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut read = pin!(collect_body(body, max));
    if let Poll::Ready(result) = poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
        return result;
    }
    tokio::time::timeout(timeout, read).await.unwrap_or(Err(BodyError::TimedOut))
}

/// The data frames of `body`, joined: a body of one frame (the common
/// case) is that frame's bytes, not copied.
async fn collect_body<B>(body: B, max: usize) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = pin!(body);
    let mut single: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    let mut length = 0usize;
    while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|err| BodyError::Failed(err.into()))?;
        let Ok(mut data) = frame.into_data() else { continue };
        let chunk = data.copy_to_bytes(data.remaining());
        length = length.saturating_add(chunk.len());
        if length > max {
            return Err(BodyError::TooLarge);
        }
        if chunk.is_empty() {
            continue;
        }
        match single.take() {
            None if joined.is_empty() => single = Some(chunk),
            None => joined.extend_from_slice(&chunk),
            Some(first) => {
                joined.reserve(first.len() + chunk.len());
                joined.extend_from_slice(&first);
                joined.extend_from_slice(&chunk);
            }
        }
    }
    Ok(single.unwrap_or_else(|| Bytes::from(joined)))
}

fn too_large(max_body: usize) -> Response<Full<Bytes>> {
    status_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("Payload Too Large: the body exceeds the limit of {max_body} bytes"),
    )
}

/// 401 (with `WWW-Authenticate`) or 403 for a refusal of the hook; the
/// reason stays in the server's logs.
pub(crate) fn refusal(refused: &Refused) -> Response<Full<Bytes>> {
    if refused.is_unauthorized() {
        let mut response =
            status_response(StatusCode::UNAUTHORIZED, "Unauthorized: this service needs credentials it accepts");
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    } else {
        status_response(StatusCode::FORBIDDEN, "Forbidden: this caller may not use this service")
    }
}

/// An HTTP error answer with a plain-text reason.
pub(crate) fn status_response(status: StatusCode, reason: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{reason}\n"))));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_one_authority_without_userinfo() {
        for good in
            ["localhost", "localhost:8080", "127.0.0.1:80", "[::1]", "[::1]:8080", "app.localhost", "a-b.example:"]
        {
            assert!(is_authority(good), "{good}");
        }
        for bad in [
            "localhost:80@evil.com",
            "localhost:evil",
            "[::1].evil.com",
            "localhost:1:2",
            "user@localhost",
            "",
            ":80",
            "[]",
            "[::1",
            "local host",
            "localhost:123456",
        ] {
            assert!(!is_authority(bad), "{bad}");
        }
        let host_of = |hosts: &[&'static str], target: &str| {
            let mut request = Request::builder().uri(target);
            for host in hosts {
                request = request.header(header::HOST, *host);
            }
            let request = request.body(()).unwrap();
            let heads = Heads::of(request.headers());
            request_host(&heads, request.uri(), request.version()).map(|host| host.map(str::to_owned))
        };
        assert_eq!(host_of(&["localhost:1"], "/"), Ok(Some("localhost:1".to_owned())));
        assert!(host_of(&["localhost", "localhost"], "/").is_err());
        assert!(host_of(&[], "/").is_err(), "HTTP/1.1 without Host");
        assert!(host_of(&["localhost:80@evil.com"], "/").is_err());
        // An absolute-form target's authority is the host, whatever the header says.
        assert_eq!(host_of(&["localhost"], "http://evil.example/"), Ok(Some("evil.example".to_owned())));
        assert!(host_of(&["localhost"], "http://localhost@evil.example/").is_err());
    }

    #[test]
    fn hosts_and_content_types_are_read_as_browsers_send_them() {
        assert_eq!(host_name("localhost:8080"), "localhost");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("example.com"), "example.com");
        assert!(is_loopback_name("127.0.0.1") && is_loopback_name("[::1]") && is_loopback_name("app.localhost"));
        assert!(!is_loopback_name("evil.example") && !is_loopback_name("127.0.0.1.nip.io"));
        let json = |text: &'static str| is_json(Some(&HeaderValue::from_static(text)));
        assert!(json("application/json") && json("Application/JSON; charset=utf-8") && json("application/rpc+json"));
        assert!(!json("text/plain") && !json("application/x-www-form-urlencoded") && !is_json(None));
    }
}
