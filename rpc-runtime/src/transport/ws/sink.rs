//! [`WsSink`], the sending half of a WebSocket transport: each JSON-RPC
//! message the peer writes becomes one text frame, handed to tungstenite
//! only as fast as it writes them out, and the close handshake.
//!
//! Its own file because writing is where the output is bounded (the
//! queue stays here, counted, until tungstenite is ready) and where a
//! message must cost no allocation of its own.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use super::socket::{Shared, into_io, ready_then_send};
use crate::peer::MessageSink;
use crate::transport::replies::request_ids;

/// A sink buffer grown past this for a large message is given back once
/// it is empty again.
const KEEP_CAPACITY: usize = 256 * 1024;

/// How long a closing side waits for the other's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The sending half of a WebSocket transport: each message one text frame.
///
/// Messages are written back to back into `scratch`; a flush moves the
/// burst into `staged` (one copy, into a buffer reused from burst to
/// burst) and hands tungstenite each message as a slice of it, checked
/// for UTF-8 on the way: a message costs no allocation of its own.
pub struct WsSink<S> {
    shared: Arc<Shared<S>>,
    /// Committed messages not staged yet (the first `committed` bytes),
    /// then whatever is being written.
    scratch: Vec<u8>,
    committed: usize,
    /// Messages waiting for tungstenite, back to back.
    staged: BytesMut,
    /// The length of every message queued, staged ones first.
    lengths: VecDeque<usize>,
    queued: usize,
}

impl<S> std::fmt::Debug for WsSink<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSink").field("queued", &self.lengths.len()).finish_non_exhaustive()
    }
}

impl<S> WsSink<S> {
    /// The sending half over `shared`, with nothing queued.
    pub(super) fn new(shared: Arc<Shared<S>>) -> Self {
        WsSink {
            shared,
            scratch: Vec::new(),
            committed: 0,
            staged: BytesMut::new(),
            lengths: VecDeque::new(),
            queued: 0,
        }
    }

    /// Moves the committed messages from `scratch` to `staged`, where each
    /// becomes a slice of one shared buffer (no allocation per message).
    fn stage(&mut self) {
        if self.committed == 0 {
            return;
        }
        self.staged.extend_from_slice(&self.scratch[..self.committed]);
        self.scratch.drain(..self.committed);
        self.committed = 0;
        if self.scratch.is_empty() && self.scratch.capacity() > KEEP_CAPACITY {
            self.scratch = Vec::new();
        }
    }
}

/// A staged message as the text tungstenite sends. The engine writes JSON,
/// so this is one UTF-8 check; a message that is not UTF-8 is sent with
/// replacement characters.
fn text_of(message: Bytes) -> Utf8Bytes {
    Utf8Bytes::try_from(message.clone())
        .unwrap_or_else(|_| Utf8Bytes::from(String::from_utf8_lossy(&message).into_owned()))
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSink<S> {
    /// Hands every queued message to tungstenite and flushes it. A message
    /// is handed over only when tungstenite is ready (its buffer written
    /// out), so what it holds stays within its write buffer and one
    /// message; the rest stays queued here, counted by `queued`.
    fn poll_write(&mut self, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let shared = Arc::clone(&self.shared);
        let mut guard = shared.ws();
        let Some(ws) = guard.as_mut() else {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::NotConnected, "the WebSocket connection is lost")));
        };
        self.stage();
        let failed = loop {
            let Some(&length) = self.lengths.front() else {
                match Pin::new(&mut *ws).poll_flush(cx) {
                    Poll::Ready(Ok(())) => {
                        shared.pongs_owed.store(0, Ordering::Relaxed);
                        if self.staged.is_empty() && self.staged.capacity() > KEEP_CAPACITY {
                            self.staged = BytesMut::new();
                        }
                        return Poll::Ready(Ok(()));
                    }
                    Poll::Ready(Err(err)) => break err,
                    Poll::Pending => return Poll::Pending,
                }
            };
            match Pin::new(&mut *ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(err)) => break err,
                Poll::Pending => return Poll::Pending,
            }
            if let Some(mut outstanding) = self.shared.outstanding() {
                outstanding.extend(request_ids(&self.staged[..length]));
            }
            self.lengths.pop_front();
            self.queued -= length;
            let message = self.staged.split_to(length).freeze();
            if let Err(err) = Pin::new(&mut *ws).start_send(Message::Text(text_of(message))) {
                break err;
            }
        };
        if self.shared.reconnects() {
            // The receiving half notices and reconnects.
            guard.take();
            cx.waker().wake_by_ref();
        }
        Poll::Ready(Err(into_io(failed)))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> MessageSink for WsSink<S> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if start > self.committed {
            // Written but never committed: not a message.
            self.scratch.drain(self.committed..start.min(self.scratch.len()));
        }
        let length = self.scratch.len().saturating_sub(self.committed);
        if length > 0 {
            self.lengths.push_back(length);
            self.committed = self.scratch.len();
            self.queued += length;
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }

    async fn flush(&mut self) -> io::Result<()> {
        loop {
            // Registered before looking, so a reconnection in between is
            // not missed.
            let shared = Arc::clone(&self.shared);
            let reconnected = shared.reconnected.notified();
            match poll_fn(|cx| self.poll_write(cx)).await {
                Ok(()) => return Ok(()),
                Err(_) if self.shared.reconnects() => reconnected.await,
                Err(err) => return Err(err),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.shared.closing.store(true, std::sync::atomic::Ordering::Relaxed);
        let flushed = poll_fn(|cx| self.poll_write(cx)).await;
        let closing = Message::Close(Some(CloseFrame { code: CloseCode::Normal, reason: "".into() }));
        let sent = poll_fn(|cx| {
            let mut guard = self.shared.ws();
            let Some(ws) = guard.as_mut() else { return Poll::Ready(Ok(())) };
            ready_then_send(ws, cx, closing.clone())
        })
        .await;
        if sent.is_ok() {
            // The close handshake: wait (briefly) for the other side's
            // close frame, or for it to hang up.
            let _ = tokio::time::timeout(
                CLOSE_WAIT,
                poll_fn(|cx| {
                    let mut guard = self.shared.ws();
                    let Some(ws) = guard.as_mut() else { return Poll::Ready(()) };
                    loop {
                        match Pin::new(&mut *ws).poll_next(cx) {
                            Poll::Ready(Some(Ok(_))) => continue,
                            Poll::Ready(_) => return Poll::Ready(()),
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                }),
            )
            .await;
        }
        flushed
    }
}
