//! The standalone HTTP server: accepts TCP connections (at most
//! `max_connections`), with the `tls` feature makes the TLS handshake on
//! each when configured (on the connection's task, within the header
//! timeout), serves HTTP/1.1 with keep-alive on each with hyper (every
//! request, every byte: hyper's parser, its header-read timeout, its
//! buffer limit), and shuts down gracefully.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::service::{status_response, HttpAddrs, HttpListener, HttpService, Serving};
use crate::dispatch::signal::Signal;
use crate::transport::deadline::WriteDeadline;
use crate::transport::listener::{Listener, Shutdown};
use crate::transport::server::Server;

/// How long a connection refused for the connection limit has to send its
/// request and take its 503 before it is closed anyway.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// The protocols a TLS listener offers by ALPN: those the builder serves
/// (see [`Http::tls`](super::Http::tls)).
#[cfg(feature = "tls")]
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
    #[cfg(feature = "ws")]
    fn upgrades(&self) -> bool {
        false
    }

    /// Answers one request of a connection the listener accepted.
    fn respond(
        &self,
        request: Request<Incoming>,
        addrs: HttpAddrs,
        serving: &Serving,
    ) -> impl Future<Output = Response<Self::Body>> + Send;
}

impl Endpoint for HttpService {
    type Body = Full<Bytes>;

    fn http(&self) -> &HttpService {
        self
    }

    #[cfg(feature = "ws")]
    fn upgrades(&self) -> bool {
        self.inner().config.ws.enabled
    }

    fn respond(
        &self,
        request: Request<Incoming>,
        addrs: HttpAddrs,
        serving: &Serving,
    ) -> impl Future<Output = Response<Full<Bytes>>> + Send {
        self.respond_accepted(request, addrs, serving)
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
        let Ok(slot) = Arc::clone(slots).try_acquire_owned() else {
            tracing::debug!(%peer, "refused an HTTP connection: at the connection limit");
            tokio::spawn(refuse_overloaded(endpoint.http().clone(), stream, peer));
            continue;
        };
        let Ok(local) = stream.local_addr() else { continue };
        let serving = Serving { drain: Arc::clone(drain), _slot: Arc::new(slot) };
        tokio::spawn(serve_connection(endpoint.clone(), stream, HttpAddrs { peer, local }, serving));
    }
}

/// hyper's HTTP/1.1 settings for every connection of `http`.
fn builder(http: &HttpService) -> http1::Builder {
    let config = &http.inner().config;
    let mut builder = http1::Builder::new();
    // `writev(false)`: hyper copies each answer's body after its head and
    // writes both with one `write`, instead of queueing the body as a
    // second buffer for `writev`. JSON-RPC answers are mostly small, and
    // the copy costs less than the queue (about 490 fewer instructions
    // per small call; a large answer pays one more copy of itself).
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .max_buf_size(MAX_BUF_SIZE)
        .keep_alive(true)
        .writev(false);
    builder
}

/// hyper's read buffer, at most: a request head must fit in it (431
/// otherwise), and a body is read through it in pieces of at most this.
const MAX_BUF_SIZE: usize = 64 * 1024;

/// Serves one accepted connection: the TLS handshake first when
/// configured (a failure closes it, logged at debug), then HTTP.
async fn serve_connection<E: Endpoint>(endpoint: E, stream: TcpStream, addrs: HttpAddrs, serving: Serving) {
    #[cfg(feature = "metrics")]
    let _open = crate::metrics::OpenConnection::new("http");
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
        return serve_http(endpoint, stream, addrs, serving, Client { certificates: certs }).await;
    }
    serve_http(endpoint, stream, addrs, serving, Client::default()).await;
}

/// Serves HTTP on one connection's `io` (TCP, or TLS over it).
async fn serve_http<E, I>(endpoint: E, io: I, addrs: HttpAddrs, serving: Serving, client: Client)
where
    E: Endpoint,
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let drain = Arc::clone(&serving.drain);
    let builder = builder(endpoint.http());
    #[cfg(feature = "ws")]
    let upgrades = endpoint.upgrades();
    // One handle per connection; each request clones it once.
    let accepted = Arc::new(Accepted { endpoint, addrs, serving, client });
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let accepted = Arc::clone(&accepted);
        async move {
            let request = accepted.client.mark(request);
            let response = accepted.endpoint.respond(request, accepted.addrs, &accepted.serving).await;
            Ok::<_, Infallible>(response)
        }
    });
    let io = TokioIo::new(io);
    // Upgrades only when WebSocket is served: the plain connection is a
    // little cheaper per request.
    #[cfg(feature = "ws")]
    let result = if upgrades {
        let connection = builder.serve_connection(io, service).with_upgrades();
        until_drained(connection, http1::UpgradeableConnection::graceful_shutdown, &drain).await
    } else {
        until_drained(builder.serve_connection(io, service), http1::Connection::graceful_shutdown, &drain).await
    };
    #[cfg(not(feature = "ws"))]
    let result =
        until_drained(builder.serve_connection(io, service), http1::Connection::graceful_shutdown, &drain).await;
    if let Err(err) = result {
        if err.is_timeout() {
            tracing::debug!(peer = %addrs.peer, "closed an HTTP connection: no request head within header_timeout");
        } else {
            tracing::debug!(peer = %addrs.peer, error = %err, "HTTP connection ended with an error");
        }
    }
}

/// What the standalone server knows of an accepted connection, shared by
/// its requests.
struct Accepted<E> {
    endpoint: E,
    addrs: HttpAddrs,
    serving: Serving,
    client: Client,
}

/// Serves `connection` to its end; once `drain` is raised, lets the
/// request in progress finish and closes it (`graceful_shutdown` is the
/// connection type's).
async fn until_drained<C: Future<Output = hyper::Result<()>>>(
    connection: C,
    graceful_shutdown: fn(Pin<&mut C>),
    drain: &Signal,
) -> hyper::Result<()> {
    let mut connection = pin!(connection);
    let mut raised = pin!(drain.raised());
    let mut draining = false;
    poll_fn(|cx| loop {
        if let Poll::Ready(result) = connection.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        if !draining && raised.as_mut().poll(cx).is_ready() {
            draining = true;
            graceful_shutdown(connection.as_mut());
            continue;
        }
        return Poll::Pending;
    })
    .await
}

/// Answers 503 to a connection over the limit (its first request, read
/// and answered by hyper, with `Connection: close`; over TLS once the
/// handshake is done), then closes it.
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
    let mut builder = http1::Builder::new();
    builder.keep_alive(false);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, connection).await;
}
