//! TCP: a listener serving every connection it accepts (with the
//! connection limit, the hook and graceful shutdown), and the client's
//! connect.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;

use super::deadline::WriteDeadline;
use super::listener::{Connect, Listener, Shutdown};
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
/// `("localhost", 4000)`, a `SocketAddr`), for [`PeerBuilder::connect`].
#[derive(Clone, Debug)]
pub struct Tcp<A> {
    pub(crate) addr: A,
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Tcp<A> {
    /// The TCP server at `addr`.
    pub fn new(addr: A) -> Self {
        Tcp { addr }
    }
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Connect for Tcp<A> {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        TcpStream::connect(self.addr).await?.connect(builder).await
    }
}

/// A TCP connection already made: the peer's address is put in its
/// [`Context`].
impl Connect for TcpStream {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let _ = self.set_nodelay(true);
        let addr = self.peer_addr().ok();
        let (reader, writer) = self.into_split();
        let builder = match addr {
            Some(addr) => PeerBuilder { cx: builder.cx.with_peer_addr(addr), ..builder },
            None => builder,
        };
        Ok(builder.start_stream(reader, writer))
    }
}
