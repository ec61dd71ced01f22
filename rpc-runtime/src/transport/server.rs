//! The server: a router, its limits and framing, the connection hook and
//! the connection-level controls, ready to serve any number of connections
//! over any transport.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use super::deadline::DEFAULT_WRITE_TIMEOUT;
use super::hook::{Hook, HookFuture, admit};
use crate::dispatch::context::Context;
use crate::dispatch::dialect::Dialect;
use crate::dispatch::engine::Engine;
use crate::dispatch::limits::Limits;
use crate::dispatch::router::Router;
use crate::dispatch::signal::Signal;
use crate::peer::{AtEof, Cancellation, Connection, Controls, MessageSink, MessageSource, PeerOptions};
use crate::wire::Framing;

pub use super::hook::{ConnectionInfo, Refused};

/// Connections served at once by default (see [`Server::max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// A JSON-RPC server: a router, limits and a framing, ready to serve any
/// number of connections.
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Framing, Server, transport::stdio::Stdio};
/// Server::new(router).framing(Framing::ContentLength).serve(Stdio).await
/// # }
/// ```
///
/// Every connection, whatever its transport, first goes through the
/// connection hook ([`Server::on_connect`]), which may attach per-connection
/// data (an authenticated identity, a session) that handlers read with
/// [`Context::extension`], or refuse the connection.
#[derive(Clone)]
pub struct Server {
    pub(crate) engine: Engine,
    pub(crate) framing: Framing,
    pub(crate) peer: PeerOptions,
    pub(crate) hook: Option<Hook>,
    pub(crate) max_connections: usize,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) write_timeout: Option<Duration>,
    pub(crate) half_close: Option<Duration>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("engine", &self.engine)
            .field("framing", &self.framing)
            .field("peer", &self.peer)
            .field("hook", &self.hook.is_some())
            .field("max_connections", &self.max_connections)
            .field("idle_timeout", &self.idle_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("half_close", &self.half_close)
            .finish()
    }
}

impl Server {
    /// A server for `router` with default limits and newline-delimited framing.
    pub fn new(router: Router) -> Self {
        Server {
            engine: Engine::new(router, Limits::default()),
            framing: Framing::default(),
            peer: PeerOptions::default(),
            hook: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: None,
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
            half_close: None,
        }
    }

    /// How cancellation notifications are understood on every connection,
    /// and sent for calls back to the client that are abandoned (none by
    /// default; see [`Cancellation`]).
    #[must_use = "a builder does nothing until used"]
    pub fn cancellation(self, cancellation: Cancellation) -> Self {
        Server { peer: PeerOptions { cancellation, ..self.peer }, ..self }
    }

    /// Holds every connection, on every transport, to the rules of a
    /// protocol built on JSON-RPC 2.0 (see [`Dialect`]): the ids and
    /// batches it refuses, and its way of cancelling a request when it has
    /// one (which replaces [`Server::cancellation`]; a later call of that
    /// overrides it again). Replaces any dialect set before.
    #[must_use = "a builder does nothing until used"]
    pub fn dialect(self, dialect: impl Dialect) -> Self {
        let cancellation = dialect.cancellation().unwrap_or(self.peer.cancellation);
        Server { engine: self.engine.with_dialect(dialect), peer: PeerOptions { cancellation, ..self.peer }, ..self }
    }

    /// The default timeout of calls that handlers make back to their
    /// client (none by default).
    #[must_use = "a builder does nothing until used"]
    pub fn call_timeout(self, timeout: Duration) -> Self {
        Server { peer: PeerOptions { timeout: Some(timeout), ..self.peer }, ..self }
    }

    /// Replaces the limits.
    #[must_use = "a builder does nothing until used"]
    pub fn limits(self, limits: Limits) -> Self {
        Server { engine: self.engine.with_limits(limits), ..self }
    }

    /// Adds a tower [`Layer`](tower_layer::Layer) around every call on
    /// every connection and transport: tower's `TimeoutLayer`,
    /// `ConcurrencyLimitLayer`, `RateLimitLayer`, `LoadShedLayer`, or a
    /// layer of one's own (see [`MethodCall`](crate::dispatch::MethodCall)). Each
    /// call of a batch goes through the layers on its own. The last added
    /// is outermost, as with axum's `Router::layer`; to add several in
    /// reading order, add one `tower::ServiceBuilder`.
    ///
    /// A layer's service must be `Clone + Send`; each call runs on a clone,
    /// after waiting for [`poll_ready`](tower_service::Service::poll_ready).
    /// (tower's `RateLimit` counts per instance and is not `Clone`: put a
    /// `BufferLayer` in front of it, so that every call shares one.)
    /// Its errors become JSON-RPC errors as
    /// [`MethodService::new`](crate::dispatch::MethodService::new) says. Without any
    /// layer, calls take the direct path and pay nothing. For example,
    /// with `tower` as a dependency:
    /// `server.layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)))`.
    #[must_use = "a builder does nothing until used"]
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: tower_layer::Layer<crate::dispatch::MethodService>,
        L::Service: tower_service::Service<crate::dispatch::MethodCall, Response = crate::dispatch::MethodResponse>
            + Clone
            + Send
            + 'static,
        <L::Service as tower_service::Service<crate::dispatch::MethodCall>>::Error:
            Into<Box<dyn std::error::Error + Send + Sync>>,
        <L::Service as tower_service::Service<crate::dispatch::MethodCall>>::Future: Send + 'static,
    {
        Server { engine: self.engine.layer(layer), ..self }
    }

    /// Sets the framing used on byte streams (stdio, TCP, a
    /// [`Stream`](crate::transport::stream::Stream)).
    #[must_use = "a builder does nothing until used"]
    pub fn framing(self, framing: Framing) -> Self {
        Server { framing, ..self }
    }

    /// At most `max` connections served at once by a listener (default
    /// [`DEFAULT_MAX_CONNECTIONS`]). A connection beyond it is refused:
    /// accepted, sent one JSON-RPC error (-32000, `id` null) saying so, and
    /// closed, so that the client learns why instead of hanging.
    #[must_use = "a builder does nothing until used"]
    pub fn max_connections(self, max: usize) -> Self {
        Server { max_connections: max.max(1), ..self }
    }

    /// Closes a connection once nothing happened on it for `timeout`: no
    /// message either way, no request running, no call back waiting (none
    /// by default).
    #[must_use = "a builder does nothing until used"]
    pub fn idle_timeout(self, timeout: Duration) -> Self {
        Server { idle_timeout: Some(timeout), ..self }
    }

    /// Closes a network connection (TCP, HTTP, WebSocket) once a write to
    /// it has made no progress for `timeout` (default 30 s; `None`: never):
    /// a peer that stops reading does not keep its socket, its place under
    /// [`Server::max_connections`] and the answers queued for it forever.
    /// Its running requests are cancelled, as when the peer is gone.
    #[must_use = "a builder does nothing until used"]
    pub fn write_timeout(self, timeout: Option<Duration>) -> Self {
        Server { write_timeout: timeout, ..self }
    }

    /// Lets a network client half-close (TCP, WebSocket): after the end
    /// of its input, the requests it sent get up to `grace` to finish and
    /// be answered, then are cancelled.
    ///
    /// By default (as hyper does for HTTP), the end of a network
    /// connection's input ends the connection at once: answers already
    /// made are written, running requests are cancelled, and the socket and
    /// its place under [`Server::max_connections`] are given back. A client
    /// that sends a long call and goes away holds nothing. Stdio and
    /// a [`Stream`](crate::transport::stream::Stream) always let running requests finish at the
    /// end of input, so that `echo '{...}' | server` gets its answer.
    #[must_use = "a builder does nothing until used"]
    pub fn half_close(self, grace: Duration) -> Self {
        Server { half_close: Some(grace), ..self }
    }

    /// What the end of input means on a network connection of this server.
    pub(crate) fn network_eof(&self) -> AtEof {
        match self.half_close {
            Some(grace) => AtEof::Grace(grace),
            None => AtEof::Cancel,
        }
    }

    /// Sets the connection hook: it runs once per connection, before
    /// anything is read, with what is known of it ([`ConnectionInfo`]) and
    /// its context; it returns the context handlers will see (attach
    /// extensions with [`Context::with_extension`]) or refuses the
    /// connection, which is then closed without being served.
    ///
    /// ```no_run
    /// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
    /// use rpc_runtime::{Refused, Server};
    ///
    /// struct Client(std::net::SocketAddr);
    ///
    /// Server::new(router)
    ///     .on_connect(|info, cx| match info.peer_addr() {
    ///         Some(addr) if addr.ip().is_loopback() => Ok(cx.with_extension(Client(addr))),
    ///         _ => Err(Refused::forbidden("only local clients")),
    ///     })
    ///     .serve(tokio::net::TcpListener::bind("127.0.0.1:4000").await?)
    ///     .await
    /// # }
    /// ```
    #[must_use = "a builder does nothing until used"]
    pub fn on_connect<F>(self, hook: F) -> Self
    where
        F: Fn(&ConnectionInfo, Context) -> Result<Context, Refused> + Send + Sync + 'static,
    {
        let hook = Hook::Ready(Arc::new(hook));
        Server { hook: Some(hook), ..self }
    }

    /// [`Server::on_connect`] for a hook that must wait (a token looked up
    /// in a database, say). The future owns what it needs of the
    /// [`ConnectionInfo`] (clone it in).
    #[must_use = "a builder does nothing until used"]
    pub fn on_connect_async<F, Fut>(self, hook: F) -> Self
    where
        F: Fn(&ConnectionInfo, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Context, Refused>> + Send + 'static,
    {
        let hook = Hook::Waiting(Arc::new(move |info, cx| -> HookFuture { Box::pin(hook(info, cx)) }));
        Server { hook: Some(hook), ..self }
    }

    /// The message engine, for transports that bring their own framing.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The one way every connection is served: the hook, then the peer.
    pub(crate) async fn run_connection<S, K>(
        &self,
        source: S,
        mut sink: K,
        info: &ConnectionInfo,
        base: Context,
        controls: Controls,
    ) -> io::Result<()>
    where
        S: MessageSource,
        K: MessageSink,
    {
        let cx = match admit(self.hook.as_ref(), info, base).await {
            Ok(cx) => cx,
            Err(refused) => {
                tracing::debug!(transport = info.transport(), peer = ?info.peer_addr(), %refused, "connection refused");
                drop(source);
                let _ = sink.close().await;
                return Err(io::Error::new(io::ErrorKind::PermissionDenied, refused));
            }
        };
        self.run_admitted(source, sink, info.transport(), cx, controls).await
    }

    /// A connection of `transport` the hook has admitted (`cx` is what it
    /// returned).
    pub(crate) async fn run_admitted<S, K>(
        &self,
        source: S,
        sink: K,
        #[cfg_attr(not(feature = "metrics"), allow(unused_variables))] transport: &'static str,
        cx: Context,
        controls: Controls,
    ) -> io::Result<()>
    where
        S: MessageSource,
        K: MessageSink,
    {
        let controls = Controls { idle_timeout: controls.idle_timeout.or(self.idle_timeout), ..controls };
        #[cfg(feature = "metrics")]
        let _open = crate::dispatch::metrics::OpenConnection::new(transport);
        let (connection, _peer) = Connection::new(self.engine.clone(), self.peer, cx, controls);
        connection.run(source, sink).await
    }
}

/// Runs `serve` until it ends; when `shutdown` completes first, raises
/// `drain` (stop reading, answer what runs, close) and waits for `serve`.
pub(crate) async fn until_shutdown<F>(serve: F, shutdown: impl Future<Output = ()>, drain: &Signal) -> F::Output
where
    F: Future,
{
    let mut serve = pin!(serve);
    tokio::select! {
        output = &mut serve => return output,
        () = shutdown => drain.raise(),
    };
    serve.await
}
