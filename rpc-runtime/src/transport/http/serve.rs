//! The standalone HTTP server, [`HttpListener`]: accepts TCP connections (at most
//! `max_connections`), with the `tls` feature makes the TLS handshake on
//! each when configured (on the connection's task, within the header
//! timeout), serves HTTP/1.1 with keep-alive, or HTTP/2 (h2c with prior
//! knowledge, or `h2` chosen by ALPN over TLS), on each with hyper (every
//! request, every byte: hyper's parsers, its header-read timeout, its
//! buffer and stream limits), and shuts down gracefully.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::Version;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
#[cfg(not(feature = "http2"))]
use hyper::server::conn::http1;
#[cfg(feature = "http2")]
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::{TokioIo, TokioTimer};
#[cfg(feature = "http2")]
use hyper_util::server::conn::auto;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

use super::config::Http;
use super::responses::status_response;
use super::service::{ConnectionSlot, HttpAddrs, HttpService};
use crate::dispatch::signal::Signal;
use crate::peer::SignalWatch;
use crate::transport::deadline::WriteDeadline;
use crate::transport::listener::{Listener, Shutdown};
use crate::transport::server::Server;

/// How long a connection refused for the connection limit has to send its
/// request and take its 503 before it is closed anyway.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// The protocols a TLS listener offers by ALPN: those the builder serves
/// (see [`Http::tls`](super::Http::tls)).
#[cfg(all(feature = "tls", feature = "http2"))]
pub(super) const ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];
/// The protocols a TLS listener offers by ALPN: those the builder serves
/// (see [`Http::tls`](super::Http::tls)).
#[cfg(all(feature = "tls", not(feature = "http2")))]
pub(super) const ALPN: &[&[u8]] = &[b"http/1.1"];

/// What TLS told of a connection's client: its certificates, which each
/// of its requests carries as an extension.
#[derive(Default)]
struct Client {
    #[cfg(feature = "tls")]
    certificates: Option<crate::transport::tls::PeerCertificates>,
}

impl Client {
    /// `request`, carrying what is known of the client as extensions, for
    /// the connection hook and the context.
    fn mark(&self, request: Request<Incoming>) -> Request<Incoming> {
        #[cfg(feature = "tls")]
        if let Some(certs) = &self.certificates {
            let mut request = request;
            request.extensions_mut().insert(certs.clone());
            return request;
        }
        request
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

impl Listener for HttpListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let service = self.http.service(&server);
        serve_listener(service, self.listener, &shutdown).await
    }
}

/// What a standalone HTTP listener serves: the JSON-RPC service, or
/// another endpoint on the same HTTP settings (MCP's Streamable HTTP).
pub(crate) trait Endpoint: Clone + Send + Sync + 'static {
    /// The body of its answers.
    type Body: Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + Unpin + 'static;

    /// The HTTP settings the listener applies (connection limit, header
    /// timeout, write timeout).
    fn http(&self) -> &HttpService;

    /// Whether connections must be able to upgrade (to WebSocket).
    fn upgrades(&self) -> bool {
        false
    }

    /// Answers one request of a connection the listener accepted.
    fn respond(
        &self,
        request: Request<Incoming>,
        addrs: HttpAddrs,
        slot: &ConnectionSlot,
    ) -> impl Future<Output = Response<Self::Body>> + Send;
}

impl Endpoint for HttpService {
    type Body = Full<Bytes>;

    fn http(&self) -> &HttpService {
        self
    }

    fn upgrades(&self) -> bool {
        #[cfg(feature = "ws")]
        return self.inner().config.ws.enabled;
        #[cfg(not(feature = "ws"))]
        false
    }

    fn respond(
        &self,
        request: Request<Incoming>,
        addrs: HttpAddrs,
        slot: &ConnectionSlot,
    ) -> impl Future<Output = Response<Full<Bytes>>> + Send {
        self.respond_accepted(request, addrs, slot)
    }
}

/// Serves every connection accepted on `listener` with `endpoint` until
/// `shutdown` starts, then shuts down gracefully (see [`HttpListener`]).
pub(crate) async fn serve_listener<E: Endpoint>(
    endpoint: E,
    listener: TcpListener,
    shutdown: &Shutdown,
) -> io::Result<()> {
    let drain = &shutdown.drain;
    let limit = endpoint.http().inner().server.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(limit));
    accept_loop(&endpoint, &listener, drain, &slots).await;
    drop(listener);
    let _all_closed = slots.acquire_many(limit as u32).await;
    Ok(())
}

async fn accept_loop<E: Endpoint>(endpoint: &E, listener: &TcpListener, drain: &Arc<Signal>, slots: &Arc<Semaphore>) {
    while let Some((stream, peer)) = crate::transport::tcp::accept(listener, drain).await {
        let _ = stream.set_nodelay(true);
        let Ok(permit) = Arc::clone(slots).try_acquire_owned() else {
            tracing::debug!(%peer, "refused an HTTP connection: at the connection limit");
            tokio::spawn(refuse_overloaded(endpoint.http().clone(), stream, peer));
            continue;
        };
        let Ok(local) = stream.local_addr() else { continue };
        let slot = ConnectionSlot { drain: Arc::clone(drain), _permit: Arc::new(permit) };
        tokio::spawn(serve_connection(endpoint.clone(), stream, HttpAddrs { peer, local }, slot));
    }
}

/// hyper's HTTP/1.1 settings, on `$builder` (hyper's HTTP/1.1 builder, or
/// the HTTP/1.1 part of its auto builder: the same methods).
macro_rules! http1_settings {
    ($builder:expr, $config:expr) => {
        // `writev(false)`: hyper copies each answer's body after its head
        // and writes both with one `write`, instead of queueing the body
        // as a second buffer for `writev`. JSON-RPC answers are mostly
        // small, and copying one costs less than queueing it (a large
        // answer pays one more copy of itself).
        $builder
            .timer(TokioTimer::new())
            .header_read_timeout($config.header_timeout)
            .max_buf_size(MAX_BUF_SIZE)
            .keep_alive(true)
            .writev(false)
    };
}

/// hyper's settings for every connection of `http`: one port serves
/// HTTP/1.1 and HTTP/2 (h2c with prior knowledge: hyper's auto builder
/// reads the first bytes and serves HTTP/2 when they are its preface).
#[cfg(feature = "http2")]
fn builder(http: &HttpService) -> auto::Builder<TokioExecutor> {
    let config = &http.inner().config;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    http1_settings!(builder.http1(), config);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(config.max_concurrent_streams)
        .max_header_list_size(MAX_BUF_SIZE as u32)
        .max_pending_accept_reset_streams(MAX_PENDING_ACCEPT_RESET_STREAMS)
        .max_local_error_reset_streams(MAX_LOCAL_ERROR_RESET_STREAMS);
    builder
}

/// hyper's HTTP/1.1 settings for every connection of `http`.
#[cfg(not(feature = "http2"))]
fn builder(http: &HttpService) -> http1::Builder {
    let mut builder = http1::Builder::new();
    http1_settings!(builder, http.inner().config);
    builder
}

/// hyper's read buffer, at most: an HTTP/1.1 request head must fit in it
/// (431 otherwise), and a body is read through it in pieces of at most
/// this. It is also the largest header list an HTTP/2 request may have
/// (`SETTINGS_MAX_HEADER_LIST_SIZE`; a larger one is refused).
const MAX_BUF_SIZE: usize = 64 * 1024;

/// HTTP/2 streams a client may open and reset before the server accepted
/// them, at once, before the connection is closed (`GOAWAY`): against the
/// "rapid reset" attack (CVE-2023-44487). The h2 crate's default, named.
#[cfg(feature = "http2")]
const MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 20;

/// HTTP/2 streams the server may reset because of the client's protocol
/// errors, over a connection's life, before it closes the connection:
/// against clients that make streams fail on purpose so that the server
/// does work for nothing ("MadeYouReset"). hyper's default, named.
#[cfg(feature = "http2")]
const MAX_LOCAL_ERROR_RESET_STREAMS: usize = 1024;

/// Serves one accepted connection: the TLS handshake first when
/// configured (a failure closes it, logged at debug), then HTTP.
async fn serve_connection<E: Endpoint>(endpoint: E, stream: TcpStream, addrs: HttpAddrs, slot: ConnectionSlot) {
    #[cfg(feature = "metrics")]
    let _open = crate::dispatch::metrics::OpenConnection::new("http");
    // The write timeout sits under hyper (and under TLS, and the WebSocket
    // crate after an upgrade): a client that stops reading is let go.
    let stream = WriteDeadline::new(stream, endpoint.http().inner().server.write_timeout);
    #[cfg(feature = "tls")]
    if let Some(tls) = &endpoint.http().inner().config.tls {
        let timeout = endpoint.http().inner().config.header_timeout;
        let Some((stream, certs)) =
            crate::transport::tls::handshake(&tls.acceptor(), stream, timeout, addrs.peer).await
        else {
            return;
        };
        return serve_http(endpoint, stream, addrs, slot, Client { certificates: certs }).await;
    }
    serve_http(endpoint, stream, addrs, slot, Client::default()).await;
}

/// Serves HTTP on one connection's `io` (TCP, or TLS over it).
async fn serve_http<E, I>(endpoint: E, io: I, addrs: HttpAddrs, slot: ConnectionSlot, client: Client)
where
    E: Endpoint,
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let drain = Arc::clone(&slot.drain);
    let builder = builder(endpoint.http());
    let header_timeout = endpoint.http().inner().config.header_timeout;
    let upgrades = endpoint.upgrades();
    let streams = Arc::new(Streams::default());
    // One handle per connection; each request clones it once.
    let accepted = Arc::new(Accepted { endpoint, addrs, slot, streams: Arc::clone(&streams), client });
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        // Called on the connection's task, so the connection sees the
        // stream open as soon as it is.
        let open = accepted.streams.open(request.version());
        let accepted = Arc::clone(&accepted);
        async move {
            let request = accepted.client.mark(request);
            let response = accepted.endpoint.respond(request, accepted.addrs, &accepted.slot).await;
            Ok::<_, Infallible>(response.map(|body| Tracked { body, _open: open }))
        }
    });
    let io = TokioIo::new(io);
    let watch = ConnectionWatch { drain: &drain, streams: &streams, header_timeout };
    // Upgrades only when WebSocket is served: the plain connection is a
    // little cheaper per request.
    #[cfg(feature = "http2")]
    let result = match upgrades {
        true => {
            let connection = builder.serve_connection_with_upgrades(io, service);
            watch.serve(connection, auto::UpgradeableConnection::graceful_shutdown).await
        }
        false => watch.serve(builder.serve_connection(io, service), auto::Connection::graceful_shutdown).await,
    };
    #[cfg(not(feature = "http2"))]
    let result = match upgrades {
        true => {
            let connection = builder.serve_connection(io, service).with_upgrades();
            watch.serve(connection, http1::UpgradeableConnection::graceful_shutdown).await
        }
        false => watch.serve(builder.serve_connection(io, service), http1::Connection::graceful_shutdown).await,
    };
    match result {
        Ok(()) => {}
        Err(Ended::NoRequest) => {
            tracing::debug!(peer = %addrs.peer, "closed an HTTP connection: no request within header_timeout");
        }
        Err(Ended::Failed(err)) => match err.downcast_ref::<hyper::Error>() {
            Some(err) if err.is_timeout() => {
                tracing::debug!(peer = %addrs.peer, "closed an HTTP connection: no request head within header_timeout");
            }
            _ => tracing::debug!(peer = %addrs.peer, error = %err, "HTTP connection ended with an error"),
        },
    }
}

/// What the standalone server knows of an accepted connection, shared by
/// its requests.
struct Accepted<E> {
    endpoint: E,
    addrs: HttpAddrs,
    slot: ConnectionSlot,
    streams: Arc<Streams>,
    client: Client,
}

/// What a connection's requests tell the task that serves it: which HTTP
/// it speaks, and how many HTTP/2 streams are open (their answers not
/// yet sent whole).
#[derive(Default)]
struct Streams {
    /// A request came in HTTP/1: hyper's header timeout watches the
    /// connection from then on.
    http1: AtomicBool,
    /// A request came in HTTP/2.
    http2: AtomicBool,
    /// HTTP/2 streams open.
    open: AtomicUsize,
    /// Woken when the last open stream ends (on the task that sent it).
    idle: Notify,
}

impl Streams {
    /// Counts a request of `version` in: an HTTP/2 stream stays open
    /// while the guard lives.
    fn open(self: &Arc<Self>, version: Version) -> Option<OpenStream> {
        if version != Version::HTTP_2 {
            if !self.http1.load(Ordering::Relaxed) {
                self.http1.store(true, Ordering::Relaxed);
            }
            return None;
        }
        self.http2.store(true, Ordering::Relaxed);
        self.open.fetch_add(1, Ordering::AcqRel);
        Some(OpenStream(Arc::clone(self)))
    }
}

/// An open HTTP/2 stream, counted until its answer is sent whole (or the
/// stream is reset).
struct OpenStream(Arc<Streams>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_one();
        }
    }
}

/// An answer's body, carrying the count of its HTTP/2 stream until it is
/// sent whole (a stream of server-sent events stays open while it runs).
struct Tracked<B> {
    body: B,
    _open: Option<OpenStream>,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Why [`ConnectionWatch::serve`] ended a connection with an error.
enum Ended {
    /// No request began within the header timeout.
    NoRequest,
    /// hyper's error.
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// The watch over one HTTP connection while hyper serves it: the
/// server's drain, and the header timeout for the time hyper does not
/// watch.
struct ConnectionWatch<'a> {
    drain: &'a Signal,
    streams: &'a Streams,
    header_timeout: Duration,
}

impl ConnectionWatch<'_> {
    /// Serves `connection` to its end; once `drain` is raised, lets the
    /// requests in progress finish and closes it (`graceful_shutdown` is
    /// the connection type's; on HTTP/2 it sends `GOAWAY`).
    ///
    /// Before its first request, a connection has the header timeout to
    /// begin one (hyper watches an HTTP/1.1 head only once it knows the
    /// connection is HTTP/1.1, and HTTP/2 has no such timeout): past it,
    /// it is closed. An HTTP/2 connection with no stream open for the
    /// header timeout is idle, as a kept-alive HTTP/1.1 connection is, and
    /// is shut down gracefully.
    async fn serve<C, F>(&self, connection: C, graceful_shutdown: fn(Pin<&mut C>)) -> Result<(), Ended>
    where
        C: Future<Output = Result<(), F>>,
        F: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut connection = pin!(connection);
        // Polled again only when the task's waker changed: a wake-up (one
        // per request at least) costs an atomic load, not the `Notify`
        // waiter's lock.
        let raised = pin!(self.drain.raised());
        let mut raised = SignalWatch::new(Some(self.drain), raised);
        let mut draining = false;
        let mut idle = pin!(tokio::time::sleep(self.header_timeout));
        let mut armed = true;
        let mut woken = pin!(self.streams.idle.notified());
        poll_fn(|cx| {
            loop {
                if let Poll::Ready(result) = connection.as_mut().poll(cx) {
                    return Poll::Ready(result.map_err(|err| Ended::Failed(err.into())));
                }
                if !draining && raised.poll_raised(cx).is_ready() {
                    draining = true;
                    graceful_shutdown(connection.as_mut());
                    continue;
                }
                if draining || self.streams.http1.load(Ordering::Relaxed) {
                    return Poll::Pending;
                }
                if woken.as_mut().poll(cx).is_ready() {
                    woken.set(self.streams.idle.notified());
                    continue;
                }
                if self.streams.open.load(Ordering::Acquire) > 0 {
                    armed = false;
                    return Poll::Pending;
                }
                if !armed {
                    idle.as_mut().reset(tokio::time::Instant::now() + self.header_timeout);
                    armed = true;
                }
                if idle.as_mut().poll(cx).is_ready() {
                    if !self.streams.http2.load(Ordering::Relaxed) {
                        return Poll::Ready(Err(Ended::NoRequest));
                    }
                    draining = true;
                    graceful_shutdown(connection.as_mut());
                    continue;
                }
                return Poll::Pending;
            }
        })
        .await
    }
}

/// Answers 503 to a connection over the limit (its first request, read
/// and answered by hyper: with `Connection: close` on HTTP/1.1; on
/// HTTP/2, each stream it opens within the refusal timeout; over TLS once
/// the handshake is done), then closes it.
async fn refuse_overloaded(http: HttpService, stream: TcpStream, peer: std::net::SocketAddr) {
    #[cfg(feature = "tls")]
    if let Some(tls) = &http.inner().config.tls {
        let acceptor = tls.acceptor();
        if let Some((stream, _)) = crate::transport::tls::handshake(&acceptor, stream, REFUSAL_TIMEOUT, peer).await {
            answer_overloaded(stream).await;
        }
        return;
    }
    let _ = (http, peer);
    answer_overloaded(stream).await;
}

/// The 503 of [`refuse_overloaded`], on `io`.
async fn answer_overloaded<I: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: I) {
    let service = hyper::service::service_fn(|_: Request<Incoming>| async {
        let mut response = status_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: the server is at its connection limit (max_connections); retry later",
        );
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        Ok::<_, Infallible>(response)
    });
    #[cfg(feature = "http2")]
    let mut builder = auto::Builder::new(TokioExecutor::new());
    #[cfg(feature = "http2")]
    builder.http1().keep_alive(false);
    #[cfg(not(feature = "http2"))]
    let mut builder = http1::Builder::new();
    #[cfg(not(feature = "http2"))]
    builder.keep_alive(false);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, connection).await;
}
