//! Serving a [`Router`] over byte streams: stdio, TCP, or any
//! `AsyncRead`/`AsyncWrite` pair.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};

use crate::dispatch::context::Context;
use crate::dispatch::engine::{Engine, Limits};
use crate::dispatch::router::Router;
use crate::peer::{Cancellation, Connection, PeerOptions};
use crate::wire::framing::Framing;

/// A JSON-RPC server: a router, limits and a framing, ready to serve any
/// number of connections.
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Framing, Server};
/// Server::new(router).framing(Framing::ContentLength).serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct Server {
    engine: Engine,
    framing: Framing,
    peer: PeerOptions,
}

impl Server {
    /// A server for `router` with default limits and newline-delimited framing.
    pub fn new(router: Router) -> Self {
        Server {
            engine: Engine::new(router, Limits::default()),
            framing: Framing::default(),
            peer: PeerOptions::default(),
        }
    }

    /// How cancellation notifications are understood on every connection,
    /// and sent for calls back to the client that are abandoned (none by
    /// default; see [`Cancellation`]).
    pub fn cancellation(self, cancellation: Cancellation) -> Self {
        Server { peer: PeerOptions { cancellation, ..self.peer }, ..self }
    }

    /// The default timeout of calls that handlers make back to their
    /// client (none by default).
    pub fn call_timeout(self, timeout: Duration) -> Self {
        Server { peer: PeerOptions { timeout: Some(timeout), ..self.peer }, ..self }
    }

    /// Replaces the limits.
    pub fn limits(self, limits: Limits) -> Self {
        Server { engine: self.engine.with_limits(limits), ..self }
    }

    /// Sets the framing used on streams.
    pub fn framing(self, framing: Framing) -> Self {
        Server { framing, ..self }
    }

    /// The message engine, for transports that bring their own framing.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Serves over this process's stdin and stdout until stdin ends. Only
    /// protocol messages are written to stdout.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.serve_stream(tokio::io::stdin(), tokio::io::stdout(), Context::default()).await
    }

    /// Binds `addr` and serves every TCP connection on it, forever.
    pub async fn serve_tcp(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_listener(listener).await
    }

    /// Serves every connection accepted on `listener`, each on its own task.
    pub async fn serve_listener(&self, listener: TcpListener) -> io::Result<()> {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Running out of file descriptors and the like is
                    // transient; a failed accept must not stop the server.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let server = self.clone();
            tokio::spawn(async move {
                let (reader, writer) = stream.into_split();
                let cx = Context::new().with_peer_addr(peer);
                if let Err(err) = server.serve_stream(reader, writer, cx).await {
                    tracing::debug!(%peer, error = %err, "connection ended with an error");
                }
            });
        }
    }

    /// Serves one connection until `reader` ends. Requests run concurrently;
    /// on end of input, requests still running finish and their responses
    /// are written before this returns.
    ///
    /// The connection is a full [`Peer`](crate::Peer): a handler reaches it
    /// through its [`Context`] to notify or call the client back, and `cx`
    /// (with its extensions) is the base of every request's context.
    pub async fn serve_stream<R, W>(&self, reader: R, writer: W, cx: Context) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Connection::new(self.engine.clone(), self.framing, self.peer, writer, cx).run(reader).await
    }
}
