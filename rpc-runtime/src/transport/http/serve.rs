//! The standalone HTTP server: accepts TCP connections (at most
//! `max_connections`), serves HTTP/1.1 with keep-alive on each (plain JSON
//! POSTs on its own path, see `plain`, everything else with hyper), keeps
//! the header-read timeout (see `watch`), and shuts down gracefully.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::{Body, Incoming};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;

use super::plain::{serve_plain, Plain, Rewind};
use super::service::{HttpAddrs, HttpService, Serving};
use super::watch::{Counted, HeadCounts, Watchdog};
use crate::dispatch::signal::Signal;
use crate::transport::server::{until_shutdown, Server};

/// How long a connection refused for the connection limit has to take its
/// 503 before it is closed anyway.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

impl Server {
    /// Binds `addr` and serves HTTP (and, with the `ws` feature,
    /// WebSocket upgrades) on it, forever, with the defaults of
    /// [`Server::http`]. See [`HttpService`].
    pub async fn serve_http(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        self.http().serve(addr).await
    }

    /// [`Server::serve_http`] until `shutdown` completes, then shuts down
    /// gracefully (see [`HttpService::serve_listener_with_shutdown`]).
    pub async fn serve_http_with_shutdown(
        &self,
        addr: impl ToSocketAddrs,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        self.http().serve_with_shutdown(addr, shutdown).await
    }
}

impl HttpService {
    /// Binds `addr` and serves every connection on it, forever.
    pub async fn serve(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        self.serve_with_shutdown(addr, std::future::pending()).await
    }

    /// Binds `addr` and serves until `shutdown` completes.
    pub async fn serve_with_shutdown(
        self,
        addr: impl ToSocketAddrs,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_listener_with_shutdown(listener, shutdown).await
    }

    /// Serves every connection accepted on `listener` until `shutdown`
    /// completes, then shuts down gracefully: stops accepting, lets each
    /// request in progress finish and be answered, closes idle
    /// keep-alive connections and WebSocket connections (after answering
    /// what runs on them), and returns once all are closed.
    ///
    /// At most the server's `max_connections` are open at once (a
    /// WebSocket connection counts as one); one more is answered 503.
    pub async fn serve_listener_with_shutdown(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        serve_listener(self, listener, shutdown).await
    }
}

/// What a standalone HTTP listener serves: the JSON-RPC service, or
/// another endpoint on the same HTTP settings (MCP's Streamable HTTP).
pub(crate) trait Endpoint: Clone + Send + Sync + 'static {
    /// The body of its answers.
    type Body: Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + Unpin + 'static;

    /// The HTTP settings the listener applies (connection limit, header
    /// timeout).
    fn http(&self) -> &HttpService;

    /// Whether connections must be able to upgrade (to WebSocket).
    #[cfg(feature = "ws")]
    fn upgrades(&self) -> bool {
        false
    }

    /// The service whose plain JSON `POST`s the listener answers itself
    /// (see `plain`), if any: only when nothing but the checks and the
    /// engine would see them (no connection hook, no CORS).
    fn plain(&self) -> Option<&HttpService> {
        None
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

    fn plain(&self) -> Option<&HttpService> {
        let inner = self.inner();
        #[cfg(feature = "cors")]
        if inner.config.cors.is_some() {
            return None;
        }
        inner.server.hook.is_none().then_some(self)
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
/// `shutdown` completes, then shuts down gracefully (see
/// [`HttpService::serve_listener_with_shutdown`]).
pub(crate) async fn serve_listener<E: Endpoint>(
    endpoint: E,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let drain = Arc::new(Signal::default());
    let limit = endpoint.http().inner().server.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(limit));
    until_shutdown(accept_loop(&endpoint, &listener, &drain, &slots), shutdown, &drain).await;
    drop(listener);
    let _all_closed = slots.acquire_many(limit as u32).await;
    Ok(())
}

async fn accept_loop<E: Endpoint>(endpoint: &E, listener: &TcpListener, drain: &Arc<Signal>, slots: &Arc<Semaphore>) {
    while let Some((stream, peer)) = crate::transport::tcp::accept(listener, drain).await {
        let _ = stream.set_nodelay(true);
        let Ok(slot) = Arc::clone(slots).try_acquire_owned() else {
            tracing::debug!(%peer, "refused an HTTP connection: at the connection limit");
            tokio::spawn(refuse_overloaded(stream));
            continue;
        };
        let Ok(local) = stream.local_addr() else { continue };
        let serving = Serving { drain: Arc::clone(drain), _slot: Arc::new(slot) };
        tokio::spawn(serve_connection(endpoint.clone(), stream, HttpAddrs { peer, local }, serving));
    }
}

async fn serve_connection<E: Endpoint>(endpoint: E, mut stream: TcpStream, addrs: HttpAddrs, serving: Serving) {
    let drain = Arc::clone(&serving.drain);
    let mut watchdog = Watchdog::new(endpoint.http().inner().config.header_timeout);
    #[cfg(feature = "ws")]
    let upgrades = endpoint.upgrades();
    // One handle per connection; each request clones it once, and its
    // answer's body keeps that clone to count the answer done.
    let accepted = Arc::new(Accepted { endpoint, addrs, serving, counts: HeadCounts::default() });
    // Plain JSON POSTs first, without hyper; hyper takes the connection
    // over at the first other request, with what was read of it.
    let mut unread = Vec::new();
    if let Some(service) = accepted.endpoint.plain() {
        match serve_plain(service, &mut stream, addrs, &drain, &accepted.counts, &mut watchdog).await {
            Ok(Plain::HandOver(read)) => unread = read,
            Ok(Plain::Ended(ended)) => return log_end::<io::Error>(addrs, Ok(ended)),
            Err(err) => return log_end(addrs, Err(err)),
        }
    }
    let service = {
        let accepted = Arc::clone(&accepted);
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let accepted = Arc::clone(&accepted);
            accepted.counts.head_read();
            async move {
                let response = accepted.endpoint.respond(request, accepted.addrs, &accepted.serving).await;
                Ok::<_, Infallible>(response.map(|body| Counted::new(body, accepted)))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    // `writev(false)`: hyper copies each answer's body after its head and
    // writes both with one `write`, instead of queueing the body as a
    // second buffer for `writev`. JSON-RPC answers are mostly small, and
    // the copy costs less than the queue (about 490 fewer instructions
    // per small call; a large answer pays one more copy of itself).
    // No `header_read_timeout`: the watchdog keeps it (see `watch`).
    builder.header_read_timeout(None).keep_alive(true).writev(false);
    let io = TokioIo::new(Rewind::new(unread, stream));
    let counts = &accepted.counts;
    // Upgrades only when WebSocket is served: the plain connection is a
    // little cheaper per request.
    use hyper::server::conn::http1::Connection;
    #[cfg(feature = "ws")]
    let result = if upgrades {
        use hyper::server::conn::http1::UpgradeableConnection;
        let connection = builder.serve_connection(io, service).with_upgrades();
        until_drained(connection, UpgradeableConnection::graceful_shutdown, &drain, watchdog, counts).await
    } else {
        until_drained(builder.serve_connection(io, service), Connection::graceful_shutdown, &drain, watchdog, counts)
            .await
    };
    #[cfg(not(feature = "ws"))]
    let result =
        until_drained(builder.serve_connection(io, service), Connection::graceful_shutdown, &drain, watchdog, counts)
            .await;
    log_end(addrs, result);
}

/// Says why a connection ended, unless it simply closed.
fn log_end<E: std::fmt::Display>(addrs: HttpAddrs, ended: Result<Ended, E>) {
    match ended {
        Ok(Ended::Closed) => {}
        Ok(Ended::NoHead) => {
            tracing::debug!(peer = %addrs.peer, "closed an HTTP connection: no request head within header_timeout")
        }
        Err(err) => tracing::debug!(peer = %addrs.peer, error = %err, "HTTP connection ended with an error"),
    }
}

/// What the standalone server knows of an accepted connection, shared by
/// its requests.
struct Accepted<E> {
    endpoint: E,
    addrs: HttpAddrs,
    serving: Serving,
    counts: HeadCounts,
}

impl<E> AsRef<HeadCounts> for Arc<Accepted<E>> {
    fn as_ref(&self) -> &HeadCounts {
        &self.counts
    }
}

/// How a connection ended, when not with an error.
pub(super) enum Ended {
    /// It closed: the client closed it, keep-alive ended, or it was
    /// drained.
    Closed,
    /// It waited for a request's head longer than `header_timeout`.
    NoHead,
}

/// Serves `connection` to its end; once `drain` is raised, lets the
/// request in progress finish and closes it (`graceful_shutdown` is the
/// connection type's). `watchdog` closes it once it waited for a
/// request's head for the header timeout (see `watch`).
async fn until_drained<C: Future<Output = hyper::Result<()>>>(
    connection: C,
    graceful_shutdown: fn(Pin<&mut C>),
    drain: &Signal,
    mut watchdog: Watchdog,
    counts: &HeadCounts,
) -> hyper::Result<Ended> {
    let mut connection = pin!(connection);
    let mut raised = pin!(drain.raised());
    let (mut listening, mut draining) = (false, false);
    poll_fn(|cx| loop {
        if let Poll::Ready(result) = connection.as_mut().poll(cx) {
            return Poll::Ready(result.map(|()| Ended::Closed));
        }
        // Once polled, the drain's waiter stays registered with this task,
        // so later wake-ups only look at the flag (polling the waiter on
        // every request costs more than the rest of this loop).
        if !draining && (!listening || drain.is_raised()) {
            listening = true;
            if raised.as_mut().poll(cx).is_ready() {
                draining = true;
                graceful_shutdown(connection.as_mut());
                continue;
            }
        }
        return watchdog.poll_expired(counts, cx).map(|()| Ok(Ended::NoHead));
    })
    .await
}

/// Answers 503 to a connection over the limit, then closes it.
async fn refuse_overloaded(mut stream: TcpStream) {
    let body = "Service Unavailable: the server is at its connection limit (max_connections); retry later\n";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_WRITE_TIMEOUT, async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}
