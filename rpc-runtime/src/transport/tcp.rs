//! TCP: a listener serving every connection it accepts (with the
//! connection limit, the hook and graceful shutdown), and the client's
//! connect, reconnecting or not (the reconnecting halves are in `redial`).

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;

use super::deadline::WriteDeadline;
use super::listener::{Connect, Listener, Shutdown};
use super::reconnect::Reconnect;
use super::redial::Reopen;
use super::server::{ConnectionInfo, Server};
use super::stream::StreamSink;
use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
use crate::log::{INTERVAL, Throttle};
use crate::peer::{Controls, Peer, PeerBuilder};
use crate::wire::response::write_error;
use crate::wire::{ErrorObject, FrameReader, SERVER_OVERLOADED};

/// How long a connection refused for the connection limit has to take its
/// error message before it is closed anyway.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// A TCP listener serves every connection it accepts, each on its own
/// task, framed with the server's [`Framing`](crate::Framing). At most
/// [`Server::max_connections`] are served at once (one more is sent a
/// -32000 error and closed); each goes through the connection hook
/// ([`Server::on_connect`]) first, with the server's write timeout and
/// half-close settings. On graceful shutdown it stops accepting, stops
/// reading on every connection, lets the requests already received
/// finish and be answered, closes each connection, and returns once all
/// are closed.
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
/// rpc_runtime::Server::new(router).serve(listener).await
/// # }
/// ```
impl Listener for TcpListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let limit = server.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
        let slots = Arc::new(Semaphore::new(limit));
        server.accept_loop(&self, &shutdown.drain, &slots, limit).await;
        drop(self);
        // Every connection holds a slot until it is closed.
        let _all_closed = slots.acquire_many(limit as u32).await;
        Ok(())
    }
}

impl Server {
    /// Accepts until `drain` is raised.
    async fn accept_loop(&self, listener: &TcpListener, drain: &Arc<Signal>, slots: &Arc<Semaphore>, limit: usize) {
        while let Some((stream, peer)) = accept(listener, drain).await {
            let _ = stream.set_nodelay(true);
            let Ok(slot) = Arc::clone(slots).try_acquire_owned() else {
                tracing::debug!(%peer, limit, "refused a connection: at the connection limit");
                tokio::spawn(refuse_overloaded(stream, self.framing, limit));
                continue;
            };
            let server = self.clone();
            let controls = Controls { idle_timeout: None, drain: Some(Arc::clone(drain)), at_eof: self.network_eof() };
            let write_timeout = self.write_timeout;
            tokio::spawn(async move {
                let mut info = ConnectionInfo::new("tcp").with_peer_addr(peer);
                if let Ok(local) = stream.local_addr() {
                    info = info.with_local_addr(local);
                }
                let (reader, writer) = stream.into_split();
                let source = FrameReader::new(reader, server.framing, server.engine.limits().max_message_size);
                let sink = StreamSink::new(WriteDeadline::new(writer, write_timeout), server.framing);
                if let Err(err) = server.run_connection(source, sink, &info, Context::new(), controls).await {
                    tracing::debug!(%peer, error = %err, "connection ended with an error");
                }
                drop(slot);
            });
        }
    }
}

/// Tells a client over the connection limit why it is turned away, then
/// closes the connection.
pub(crate) async fn refuse_overloaded<S: AsyncWrite + Unpin>(
    mut stream: S,
    framing: crate::wire::Framing,
    limit: usize,
) {
    let error = ErrorObject::new(
        SERVER_OVERLOADED,
        format!("Server overloaded: at most {limit} connections are served at once (max_connections); retry later"),
    );
    let mut message = Vec::new();
    write_error(&mut message, "null", &error);
    let mut framed = Vec::new();
    framing.encode(&message, &mut framed);
    let _ = tokio::time::timeout(REFUSAL_WRITE_TIMEOUT, async {
        stream.write_all(&framed).await?;
        stream.shutdown().await
    })
    .await;
}

/// The next connection on `listener`, or `None` once `drain` is raised
/// (see [`accept_with`]).
pub(crate) async fn accept(listener: &TcpListener, drain: &Signal) -> Option<(TcpStream, SocketAddr)> {
    accept_with(|| listener.accept(), drain).await
}

/// The next connection `accept` makes, or `None` once `drain` is raised.
/// A failed accept (out of file descriptors, say) is transient: it must not
/// stop the server, nor fill the logs (one line per [`INTERVAL`] for the
/// whole process, with a count); accepting resumes after a short pause.
pub(crate) async fn accept_with<S, A, F>(mut accept: impl FnMut() -> F, drain: &Signal) -> Option<(S, A)>
where
    F: std::future::Future<Output = io::Result<(S, A)>>,
{
    static FAILURES: Throttle = Throttle::new(INTERVAL);
    loop {
        let accepted = tokio::select! {
            biased;
            () = drain.raised() => return None,
            accepted = accept() => accepted,
        };
        match accepted {
            Ok(accepted) => return Some(accepted),
            Err(err) => {
                if let Some(seen) = FAILURES.hit() {
                    tracing::warn!(
                        error = %err,
                        failures = seen.total,
                        unlogged = seen.unlogged,
                        "accepting connections failed; retrying"
                    );
                }
                tokio::select! {
                    () = drain.raised() => return None,
                    () = tokio::time::sleep(Duration::from_millis(50)) => {}
                }
            }
        }
    }
}

/// A TCP server to connect to, at an address (anything
/// [`tokio::net::lookup_host`] resolves: `"127.0.0.1:4000"`,
/// `("localhost", 4000)`, a `SocketAddr`), for [`PeerBuilder::connect`];
/// with [`Tcp::reconnect`], a client that opens a new connection when it
/// loses one.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use rpc_runtime::{Peer, transport::{Reconnect, tcp::Tcp}};
/// let peer = Peer::builder().connect(Tcp::new("127.0.0.1:4000").reconnect(Reconnect::default())).await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Tcp<A> {
    pub(crate) addr: A,
    /// How to reconnect (a reconnecting client only).
    pub(crate) redial: Option<Redial>,
}

/// Opens a new TCP connection to the same address, resolved again.
pub(crate) type Dial = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<TcpStream>> + Send>> + Send + Sync>;

/// How a reconnecting TCP client opens a new connection, and when.
#[derive(Clone)]
pub(crate) struct Redial {
    pub(crate) dial: Dial,
    pub(crate) policy: Reconnect,
}

impl fmt::Debug for Redial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.policy.fmt(f)
    }
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Tcp<A> {
    /// The TCP server at `addr`.
    pub fn new(addr: A) -> Self {
        Tcp { addr, redial: None }
    }
}

impl<A: ToSocketAddrs + Clone + Send + Sync + 'static> Tcp<A> {
    /// Reconnects when the connection is lost (off by default), as
    /// `policy` says; the address is resolved again each time. The first
    /// connection is not retried: a server that cannot be reached fails
    /// [`PeerBuilder::connect`] at once.
    ///
    /// When the connection ends or fails, calls in flight fail at once
    /// with a [`TRANSPORT_ERROR`](crate::wire::TRANSPORT_ERROR) error
    /// object saying so (`data`: `{"transport": "tcp"}`; they may or may
    /// not have run), which displays as "the TCP connection was lost...";
    /// calls made later wait for the new connection and go through it.
    /// Subscriptions made on the lost connection are made again on the new
    /// one, each stream yielding
    /// [`ClientError::Resubscribed`](crate::ClientError::Resubscribed)
    /// first (items may have been missed). Once `policy`'s attempts run
    /// out, the connection closes and every call fails with
    /// [`ClientError::Transport`](crate::ClientError::Transport) ("...
    /// reconnecting failed N times: ..."). A close by this side ends it for
    /// good. Either [`Framing`](crate::Framing) works, on every new
    /// connection as on the first; with [`Tcp::tls`] after it (feature
    /// `tls`), every new connection makes its TLS handshake again.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use std::time::Duration;
    ///
    /// use rpc_runtime::{Framing, Peer, transport::{Reconnect, tcp::Tcp}};
    ///
    /// let policy = Reconnect::default().max(Duration::from_secs(2)).attempts(Some(30));
    /// let peer = Peer::builder()
    ///     .framing(Framing::ContentLength)
    ///     .connect(Tcp::new("127.0.0.1:4000").reconnect(policy))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use = "a builder does nothing until used"]
    pub fn reconnect(self, policy: Reconnect) -> Self {
        let addr = self.addr.clone();
        let dial: Dial = Arc::new(move || {
            let addr = addr.clone();
            Box::pin(async move {
                let stream = TcpStream::connect(addr).await?;
                let _ = stream.set_nodelay(true);
                Ok(stream)
            })
        });
        Tcp { redial: Some(Redial { dial, policy }), ..self }
    }
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Connect for Tcp<A> {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let Some(Redial { dial, policy }) = self.redial else {
            return TcpStream::connect(self.addr).await?.connect(builder).await;
        };
        let stream = dial().await?;
        let builder = with_peer_addr(builder, &stream);
        let reopen: Reopen<OwnedReadHalf, OwnedWriteHalf> = Arc::new(move || {
            let dial = Arc::clone(&dial);
            Box::pin(async move { Ok(dial().await?.into_split()) })
        });
        Ok(builder.start_redialing(super::redial::TCP, stream.into_split(), reopen, policy))
    }
}

/// `builder` with the address `stream` is connected to in its [`Context`].
pub(crate) fn with_peer_addr(builder: PeerBuilder, stream: &TcpStream) -> PeerBuilder {
    match stream.peer_addr() {
        Ok(addr) => PeerBuilder { cx: builder.cx.with_peer_addr(addr), ..builder },
        Err(_) => builder,
    }
}

/// A TCP connection already made: the peer's address is put in its
/// [`Context`].
impl Connect for TcpStream {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let _ = self.set_nodelay(true);
        let builder = with_peer_addr(builder, &self);
        let (reader, writer) = self.into_split();
        Ok(builder.start_stream(reader, writer))
    }
}
