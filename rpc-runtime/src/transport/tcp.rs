//! TCP: a listener serving every connection it accepts (with the
//! connection limit, the hook and graceful shutdown), and the client's
//! connect.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;

use super::deadline::WriteDeadline;
use super::server::{until_shutdown, ConnectionInfo, Server};
use super::stream::StreamSink;
use crate::dispatch::context::Context;
use crate::dispatch::engine::write_error;
use crate::dispatch::signal::Signal;
use crate::log::{Throttle, INTERVAL};
use crate::peer::{Controls, Peer, PeerBuilder};
use crate::wire::{ErrorObject, FrameReader, SERVER_OVERLOADED};

/// How long a connection refused for the connection limit has to take its
/// error message before it is closed anyway.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

impl Server {
    /// Binds `addr` and serves every TCP connection on it, forever.
    pub async fn serve_tcp(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        self.serve_tcp_with_shutdown(addr, std::future::pending()).await
    }

    /// Binds `addr` and serves every TCP connection on it until `shutdown`
    /// completes; then shuts down gracefully (see
    /// [`Server::serve_listener_with_shutdown`]).
    pub async fn serve_tcp_with_shutdown(
        &self,
        addr: impl ToSocketAddrs,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_listener_with_shutdown(listener, shutdown).await
    }

    /// Serves every connection accepted on `listener`, each on its own task,
    /// forever.
    pub async fn serve_listener(&self, listener: TcpListener) -> io::Result<()> {
        self.serve_listener_with_shutdown(listener, std::future::pending()).await
    }

    /// Serves every connection accepted on `listener` until `shutdown`
    /// completes (for example `tokio::signal::ctrl_c()`), then shuts down
    /// gracefully: stops accepting, stops reading on every connection, lets
    /// the requests already received finish and be answered, closes each
    /// connection, and returns once all are closed.
    ///
    /// At most [`Server::max_connections`] are served at once; each goes
    /// through the connection hook ([`Server::on_connect`]) first.
    pub async fn serve_listener_with_shutdown(
        &self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> io::Result<()> {
        let drain = Arc::new(Signal::default());
        let limit = self.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
        let slots = Arc::new(Semaphore::new(limit));
        let accept = self.accept_loop(&listener, &drain, &slots, limit);
        until_shutdown(accept, shutdown, &drain).await;
        drop(listener);
        // Every connection holds a slot until it is closed.
        let _all_closed = slots.acquire_many(limit as u32).await;
        Ok(())
    }

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
                if let Err(err) = server.serve_connection(source, sink, &info, Context::new(), controls).await {
                    tracing::debug!(%peer, error = %err, "connection ended with an error");
                }
                drop(slot);
            });
        }
    }
}

/// Tells a client over the connection limit why it is turned away, then
/// closes the connection.
async fn refuse_overloaded(mut stream: TcpStream, framing: crate::wire::Framing, limit: usize) {
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

/// The next connection on `listener`, or `None` once `drain` is raised.
/// A failed accept (out of file descriptors, say) is transient: it must not
/// stop the server, nor fill the logs (one line per [`INTERVAL`] for the
/// whole process, with a count); accepting resumes after a short pause.
pub(crate) async fn accept(listener: &TcpListener, drain: &Signal) -> Option<(TcpStream, SocketAddr)> {
    static FAILURES: Throttle = Throttle::new(INTERVAL);
    loop {
        let accepted = tokio::select! {
            biased;
            () = drain.raised() => return None,
            accepted = listener.accept() => accepted,
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

impl PeerBuilder {
    /// Connects to a TCP server.
    pub async fn connect_tcp(self, addr: impl ToSocketAddrs) -> io::Result<Peer> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let addr = stream.peer_addr().ok();
        let (reader, writer) = stream.into_split();
        let builder = match addr {
            Some(addr) => PeerBuilder { cx: self.cx.with_peer_addr(addr), ..self },
            None => self,
        };
        Ok(builder.connect(reader, writer))
    }
}
