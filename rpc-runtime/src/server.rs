//! Serving a [`Router`] over byte streams: stdio, TCP, or any
//! `AsyncRead`/`AsyncWrite` pair.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::{mpsc, Semaphore};

use crate::context::Context;
use crate::engine::{Engine, Limits};
use crate::error::{ErrorObject, INVALID_REQUEST, SERVER_OVERLOADED};
use crate::framing::{Frame, FrameReader, Framing};
use crate::router::Router;

/// Responses waiting for the writer before the reader stops reading.
const OUTBOX: usize = 1024;
/// Responses written before a flush, at most.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

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
}

impl Server {
    /// A server for `router` with default limits and newline-delimited framing.
    pub fn new(router: Router) -> Self {
        Server { engine: Engine::new(router, Limits::default()), framing: Framing::default() }
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
                let cx = Context { peer_addr: Some(peer) };
                if let Err(err) = server.serve_stream(reader, writer, cx).await {
                    tracing::debug!(%peer, error = %err, "connection ended with an error");
                }
            });
        }
    }

    /// Serves one connection until `reader` ends. Requests run concurrently;
    /// on end of input, requests still running finish and their responses
    /// are written before this returns.
    pub async fn serve_stream<R, W>(&self, reader: R, writer: W, cx: Context) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let limits = self.engine.limits().clone();
        let mut frames = FrameReader::new(reader, self.framing, limits.max_message_size);
        let (outbox, inbox) = mpsc::channel::<Vec<u8>>(OUTBOX);
        let writer_task = tokio::spawn(write_loop(writer, inbox, self.framing));
        // Semaphore::new panics above MAX_PERMITS: treat larger as "no limit".
        let slots = Arc::new(Semaphore::new(limits.max_concurrent_requests.min(Semaphore::MAX_PERMITS)));
        let read_result = loop {
            let frame = match frames.next_frame().await {
                Ok(Some(frame)) => frame,
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            };
            let mut out = Vec::new();
            match frame {
                Frame::Message(message) => {
                    if let Some(pending) = self.engine.process(&message, &cx, &mut out) {
                        // Every waiting entry of a batch takes a slot, so that
                        // batching cannot get around the limit.
                        let wanted = u32::try_from(pending.calls()).ok();
                        match wanted.map(|n| slots.clone().try_acquire_many_owned(n)) {
                            Some(Ok(slot)) => {
                                let outbox = outbox.clone();
                                tokio::spawn(async move {
                                    let response = pending.run().await;
                                    drop(slot);
                                    if !response.is_empty() {
                                        let _ = outbox.send(response).await;
                                    }
                                });
                            }
                            _ => {
                                tracing::warn!(
                                    calls = pending.calls(),
                                    limit = limits.max_concurrent_requests,
                                    "refused: too many requests running on this connection"
                                );
                                out = pending.reject(&overloaded(limits.max_concurrent_requests));
                            }
                        }
                    }
                }
                Frame::TooLarge { size } => {
                    let size = size.map_or_else(|| "more than".to_owned(), |s| s.to_string());
                    let message = format!(
                        "Invalid Request: message of {size} bytes exceeds the limit of {} bytes",
                        limits.max_message_size
                    );
                    tracing::warn!("{message}");
                    out = error_response(&ErrorObject::new(INVALID_REQUEST, message));
                }
                Frame::Malformed(reason) => {
                    out =
                        error_response(&ErrorObject::new(crate::error::PARSE_ERROR, format!("Parse error: {reason}")));
                }
            }
            if !out.is_empty() && outbox.send(out).await.is_err() {
                break Ok(()); // the writer is gone: nobody can hear us
            }
        };
        drop(outbox);
        let write_result =
            writer_task.await.unwrap_or_else(|err| Err(io::Error::other(format!("writer task failed: {err}"))));
        read_result.and(write_result)
    }
}

fn overloaded(limit: usize) -> ErrorObject {
    ErrorObject::new(
        SERVER_OVERLOADED,
        format!("Server overloaded: at most {limit} requests may run at once on this connection (max_concurrent_requests); retry later"),
    )
}

fn error_response(error: &ErrorObject) -> Vec<u8> {
    let mut out = b"{\"jsonrpc\":\"2.0\",\"error\":".to_vec();
    let _ = serde_json::to_writer(&mut out, error);
    out.extend_from_slice(b",\"id\":null}");
    out
}

/// Writes responses as they come, coalescing whatever is queued into one
/// write and one flush. Ends when every sender is gone.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut inbox: mpsc::Receiver<Vec<u8>>,
    framing: Framing,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(WRITE_BATCH_BYTES);
    while let Some(message) = inbox.recv().await {
        buf.clear();
        framing.encode(&message, &mut buf);
        while buf.len() < WRITE_BATCH_BYTES {
            match inbox.try_recv() {
                Ok(message) => framing.encode(&message, &mut buf),
                Err(_) => break,
            }
        }
        writer.write_all(&buf).await?;
        writer.flush().await?;
    }
    writer.shutdown().await.or_else(|err| match err.kind() {
        io::ErrorKind::NotConnected | io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(err),
    })
}
