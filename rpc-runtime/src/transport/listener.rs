//! The one way to serve: [`Server::serve`] takes anything that yields
//! connections (a [`Listener`]) and returns a future, which
//! [`Serve::with_graceful_shutdown`] turns into one that drains when a
//! signal completes. The one way to connect: [`PeerBuilder::connect`]
//! takes anything a [`Connect`] can reach.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use super::hook::{ConnectionInfo, admit};
use super::server::{Server, until_shutdown};
use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
use crate::peer::{Controls, MessageSink, MessageSource, Peer, PeerBuilder};

/// Anything that yields connections for a [`Server`]: a
/// [`tokio::net::TcpListener`], [`Stdio`](super::stdio::Stdio), one byte
/// stream ([`Stream`](super::stream::Stream)), one message transport
/// ([`Transport`]), an HTTP listener, a NATS subject. Pass it to
/// [`Server::serve`].
///
/// A transport can live outside this crate: implement `run` to accept
/// connections until [`Shutdown::started`] completes, serving each with
/// [`Server::serve_connection`] (which runs the connection hook, the limits
/// and the drain), and return once every connection is closed.
///
/// ```
/// use std::io;
/// use rpc_runtime::transport::{Listener, Shutdown};
/// use rpc_runtime::{ConnectionInfo, Peer, Router, Server, transport::memory::memory_pair};
///
/// /// Connections handed over a channel (a custom message transport: here,
/// /// in-memory pairs).
/// struct Channel(tokio::sync::mpsc::Receiver<(rpc_runtime::transport::memory::MemorySource, rpc_runtime::transport::memory::MemorySink)>);
///
/// impl Listener for Channel {
///     async fn run(mut self, server: Server, shutdown: Shutdown) -> io::Result<()> {
///         let mut connections = tokio::task::JoinSet::new();
///         loop {
///             let (source, sink) = tokio::select! {
///                 () = shutdown.started() => break,
///                 next = self.0.recv() => match next {
///                     Some(pair) => pair,
///                     None => break,
///                 },
///             };
///             let (server, shutdown) = (server.clone(), shutdown.clone());
///             connections.spawn(async move {
///                 let info = ConnectionInfo::new("channel");
///                 server.serve_connection(source, sink, info, &shutdown).await
///             });
///         }
///         while connections.join_next().await.is_some() {}
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> io::Result<()> {
/// let (tx, rx) = tokio::sync::mpsc::channel(1);
/// let serving = tokio::spawn(Server::new(Router::new()).serve(Channel(rx)));
/// let (ours, theirs) = memory_pair();
/// tx.send(theirs).await.unwrap();
/// drop(tx);
/// let peer = Peer::builder().connect(rpc_runtime::transport::Transport::new(ours.0, ours.1)).await?;
/// let error = peer.call::<i64, _>("missing", ()).await.unwrap_err();
/// assert_eq!(error.server_error().map(|e| e.code()), Some(rpc_runtime::wire::METHOD_NOT_FOUND));
/// drop(peer);
/// serving.await.unwrap()?;
/// # Ok(()) }
/// ```
pub trait Listener: Send + 'static {
    /// Serves every connection this yields with `server` until it yields
    /// no more or `shutdown` starts; then lets every connection drain
    /// (pass `shutdown` to [`Server::serve_connection`]) and returns once
    /// all are closed.
    fn run(self, server: Server, shutdown: Shutdown) -> impl Future<Output = io::Result<()>> + Send;
}

/// Graceful shutdown, as a [`Listener`] sees it: raised once when the
/// signal given to [`Serve::with_graceful_shutdown`] completes (never
/// without one). A listener stops accepting then; each connection served
/// with [`Server::serve_connection`] stops reading, lets its running
/// requests finish and be answered, and closes.
#[derive(Clone, Default)]
pub struct Shutdown {
    pub(crate) drain: Arc<Signal>,
}

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shutdown").field("started", &self.is_started()).finish()
    }
}

impl Shutdown {
    /// Completes once graceful shutdown has started.
    pub async fn started(&self) {
        self.drain.raised().await;
    }

    /// Whether graceful shutdown has started.
    pub fn is_started(&self) -> bool {
        self.drain.is_raised()
    }
}

/// A listener's serving, as it runs.
type Running = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// Serving a [`Listener`] with a server: the future [`Server::serve`]
/// returns (`.await` it, or spawn it). It ends when the listener yields
/// no more connections (stdio or one stream: when it closes; a TCP
/// listener: never), with the listener's error if it fails.
#[must_use = "a server does nothing until `.await`ed or spawned"]
pub struct Serve {
    shutdown: Shutdown,
    running: Running,
}

impl fmt::Debug for Serve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve").field("shutdown", &self.shutdown).finish_non_exhaustive()
    }
}

impl Serve {
    /// The same, until `signal` completes (for example
    /// `async { tokio::signal::ctrl_c().await.ok(); }`, with tokio's
    /// `signal` feature); then shuts down gracefully: stops accepting,
    /// stops reading on every connection, lets the requests already
    /// received finish and be answered, closes each connection, and ends
    /// once all are closed.
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let Serve { shutdown, running } = self;
        WithGracefulShutdown {
            running: Box::pin(async move { until_shutdown(running, signal, &shutdown.drain).await }),
        }
    }
}

impl Future for Serve {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.running.as_mut().poll(cx)
    }
}

/// Serving with graceful shutdown: the future
/// [`Serve::with_graceful_shutdown`] returns (`.await` it, or spawn it).
#[must_use = "a server does nothing until `.await`ed or spawned"]
pub struct WithGracefulShutdown {
    running: Running,
}

impl fmt::Debug for WithGracefulShutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown").finish_non_exhaustive()
    }
}

impl Future for WithGracefulShutdown {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.running.as_mut().poll(cx)
    }
}

impl Server {
    /// Serves every connection `listener` yields, each through the
    /// connection hook ([`Server::on_connect`]), with this server's limits
    /// and controls. Returns a future; add
    /// [`with_graceful_shutdown`](Serve::with_graceful_shutdown) to stop
    /// on a signal.
    ///
    /// ```no_run
    /// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
    /// use rpc_runtime::Server;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// # drop(stop);
    /// Server::new(router)
    ///     .serve(listener)
    ///     .with_graceful_shutdown(async { stopped.await.ok(); })
    ///     .await
    /// # }
    /// ```
    pub fn serve<L: Listener>(&self, listener: L) -> Serve {
        // Nothing runs until the future is polled; the shutdown is raised
        // by `with_graceful_shutdown`, if ever.
        let shutdown = Shutdown::default();
        let running = Box::pin(listener.run(self.clone(), shutdown.clone()));
        Serve { shutdown, running }
    }

    /// Serves one connection over any message transport, for a
    /// [`Listener`]: the connection hook first (a refused connection is
    /// closed without being served, and this returns an error of kind
    /// [`io::ErrorKind::PermissionDenied`]), then requests until `source`
    /// ends or `shutdown` starts; running requests finish and are answered
    /// before this returns.
    pub async fn serve_connection<S, K>(
        &self,
        source: S,
        sink: K,
        info: ConnectionInfo,
        shutdown: &Shutdown,
    ) -> io::Result<()>
    where
        S: MessageSource,
        K: MessageSink,
    {
        let controls = Controls { drain: Some(Arc::clone(&shutdown.drain)), ..Controls::default() };
        self.run_connection(source, sink, &info, Context::new(), controls).await
    }
}

/// One connection over any message transport (a [`MessageSource`] and a
/// [`MessageSink`]): served with [`Server::serve`], or connected to with
/// [`PeerBuilder::connect`]. The connection hook sees `info` (by default
/// a connection of transport `"transport"`).
pub struct Transport<S, K> {
    source: S,
    sink: K,
    info: ConnectionInfo,
}

impl<S, K> fmt::Debug for Transport<S, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").field("info", &self.info).finish_non_exhaustive()
    }
}

impl<S: MessageSource, K: MessageSink> Transport<S, K> {
    /// One connection over `source` and `sink`.
    pub fn new(source: S, sink: K) -> Self {
        Transport { source, sink, info: ConnectionInfo::new("transport") }
    }

    /// The same, with what the connection hook learns of it.
    #[must_use = "a builder does nothing until used"]
    pub fn info(self, info: ConnectionInfo) -> Self {
        Transport { info, ..self }
    }
}

impl<S: MessageSource + 'static, K: MessageSink + 'static> Listener for Transport<S, K> {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        server.serve_connection(self.source, self.sink, self.info, &shutdown).await
    }
}

impl<S: MessageSource + 'static, K: MessageSink + 'static> Connect for Transport<S, K> {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        Ok(builder.start(self.source, self.sink))
    }
}

/// Anything a [`PeerBuilder`] can connect to: a TCP address
/// ([`Tcp`](super::tcp::Tcp)) or stream, a byte stream
/// ([`Stream`](super::stream::Stream)), a message transport
/// ([`Transport`]), a [`Server`] in this process, an HTTP or WebSocket
/// endpoint, a NATS subject. Pass it to [`PeerBuilder::connect`].
///
/// A transport outside this crate implements it by making its
/// [`MessageSource`] and [`MessageSink`] and connecting to a [`Transport`]
/// of them:
///
/// ```
/// use std::io;
/// use rpc_runtime::transport::{Connect, Transport};
/// use rpc_runtime::{Peer, PeerBuilder, Router, Server, transport::memory::memory_pair};
///
/// /// A server of this process, reached over an in-memory pair.
/// struct Local(Server);
///
/// impl Connect for Local {
///     async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
///         let (ours, theirs) = memory_pair();
///         tokio::spawn(self.0.serve(Transport::new(theirs.0, theirs.1)));
///         builder.connect(Transport::new(ours.0, ours.1)).await
///     }
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> io::Result<()> {
/// let peer = Peer::builder().connect(Local(Server::new(Router::new()))).await?;
/// # Ok(()) }
/// ```
pub trait Connect: Send {
    /// Starts a connection with `builder`'s settings (on a background task;
    /// call it inside a tokio runtime).
    fn connect(self, builder: PeerBuilder) -> impl Future<Output = io::Result<Peer>> + Send;
}

impl PeerBuilder {
    /// Connects to `target` (see [`Connect`]) with this builder's settings.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use rpc_runtime::{Peer, transport::tcp::Tcp};
    /// let peer = Peer::builder().connect(Tcp::new("127.0.0.1:4000")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(self, target: impl Connect) -> io::Result<Peer> {
        target.connect(self).await
    }
}

/// In process: the server is served over an in-memory pair (the hook sees
/// a connection of transport `"memory"`); everything else (callbacks,
/// cancellation, batches) works as over any other transport. The hook runs
/// before `connect` returns: a refusal is `connect`'s error (of kind
/// [`io::ErrorKind::PermissionDenied`]), and connections are admitted in
/// the order they were made.
impl Connect for Server {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let info = ConnectionInfo::new("memory");
        let cx = admit(self.hook.as_ref(), &info, Context::new())
            .await
            .map_err(|refused| io::Error::new(io::ErrorKind::PermissionDenied, refused))?;
        let (ours, theirs) = super::memory::memory_pair();
        tokio::spawn(async move {
            let (source, sink) = theirs;
            if let Err(err) = self.run_admitted(source, sink, info.transport(), cx, Controls::default()).await {
                tracing::debug!(error = %err, "in-process server ended with an error");
            }
        });
        Ok(builder.start(ours.0, ours.1))
    }
}
