//! The standalone HTTP server: accepts TCP connections (at most
//! `max_connections`), serves HTTP/1.1 with keep-alive on each, and shuts
//! down gracefully.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;

use super::service::{HttpAddrs, HttpService, Serving};
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
        let inner = self.inner();
        let limits =
            Listening { max_connections: inner.server.max_connections, header_timeout: inner.config.header_timeout };
        serve_listener(listener, shutdown, limits, move |request| {
            let answer = self.respond(request);
            async move { answer.await.unwrap_or_else(|never| match never {}) }
        })
        .await
    }
}

/// The connection limit and header timeout of a standalone HTTP listener.
#[derive(Clone, Copy)]
pub(crate) struct Listening {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
}

/// Serves every connection accepted on `listener` with `respond` until
/// `shutdown` completes, then shuts down gracefully (see
/// [`HttpService::serve_listener_with_shutdown`]); shared by every HTTP
/// endpoint that serves standalone.
pub(crate) async fn serve_listener<F, A, B>(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    limits: Listening,
    respond: F,
) -> io::Result<()>
where
    F: Fn(Request<Incoming>) -> A + Clone + Send + Sync + 'static,
    A: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let drain = Arc::new(Signal::default());
    let limit = limits.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(limit));
    until_shutdown(accept_loop(&listener, &drain, &slots, limits.header_timeout, &respond), shutdown, &drain).await;
    drop(listener);
    let _all_closed = slots.acquire_many(limit as u32).await;
    Ok(())
}

async fn accept_loop<F, A, B>(
    listener: &TcpListener,
    drain: &Arc<Signal>,
    slots: &Arc<Semaphore>,
    header_timeout: Duration,
    respond: &F,
) where
    F: Fn(Request<Incoming>) -> A + Clone + Send + Sync + 'static,
    A: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    while let Some((stream, peer)) = crate::transport::tcp::accept(listener, drain).await {
        let _ = stream.set_nodelay(true);
        let Ok(slot) = Arc::clone(slots).try_acquire_owned() else {
            tracing::debug!(%peer, "refused an HTTP connection: at the connection limit");
            tokio::spawn(refuse_overloaded(stream));
            continue;
        };
        let Ok(local) = stream.local_addr() else { continue };
        let serving = Serving { drain: Arc::clone(drain), _slot: Arc::new(slot) };
        let connection = serve_connection(stream, HttpAddrs { peer, local }, serving, header_timeout, respond.clone());
        tokio::spawn(connection);
    }
}

async fn serve_connection<F, A, B>(
    stream: TcpStream,
    addrs: HttpAddrs,
    serving: Serving,
    header_timeout: Duration,
    respond: F,
) where
    F: Fn(Request<Incoming>) -> A + Clone + Send + Sync + 'static,
    A: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let drain = Arc::clone(&serving.drain);
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        request.extensions_mut().insert(addrs);
        request.extensions_mut().insert(serving.clone());
        let answer = respond(request);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
    let mut connection = pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = drain.raised() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(err) = result {
        tracing::debug!(peer = %addrs.peer, error = %err, "HTTP connection ended with an error");
    }
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
