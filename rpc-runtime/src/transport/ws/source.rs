//! [`WsSource`], the receiving half of a WebSocket transport: text frames
//! in as JSON-RPC messages, everything else (pings, close frames, binary
//! frames, a message over the limit, a silent or lost connection) turned
//! into what the peer's connection loop expects.
//!
//! Its own file because reading is where the transport bounds what a peer
//! can make it hold (the pongs owed) and where a lost connection is
//! noticed; reconnecting is in `reconnect`, pings in `keepalive`.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

use super::keepalive::Keepalive;
use super::reconnect::Reopen;
use super::socket::{Shared, into_io, ready_then_send};
use crate::peer::{MessageSource, Received};
use crate::transport::reconnect::{Backoff, Reconnect};
use crate::transport::replies::response_ids;

/// Bytes a pong frame adds to the output beyond its payload (the server's
/// unmasked header of a control frame; a client's masked one adds 4 more).
const PONG_OVERHEAD: usize = 6;

/// The receiving half of a WebSocket transport: text frames as messages.
pub struct WsSource<S> {
    pub(super) shared: Arc<Shared<S>>,
    current: Bytes,
    pub(super) keepalive: Option<Keepalive>,
    /// Error answers for calls lost with a connection, delivered first.
    pub(super) lost: VecDeque<Vec<u8>>,
    /// A frame [`MessageSource::recv_ready`] read that is not a text
    /// message; `recv` takes it first.
    stashed: Option<Frame>,
    /// How to reconnect (reconnecting client only).
    pub(super) reopen: Option<(Reopen<S>, Reconnect)>,
    /// Reconnecting after a lost connection: `recv` goes on with it once
    /// `lost` is delivered.
    pub(super) backoff: Option<Backoff>,
    /// The connection was lost: `recv` says so ([`Received::Reconnecting`])
    /// once `lost` is delivered, before reconnecting.
    pub(super) announce: bool,
}

impl<S> WsSource<S> {
    /// The receiving half over `shared`, pinging with `keepalive` (if
    /// any) and reconnecting with `reopen` (a reconnecting client).
    pub(super) fn new(
        shared: Arc<Shared<S>>,
        keepalive: Option<Keepalive>,
        reopen: Option<(Reopen<S>, Reconnect)>,
    ) -> Self {
        WsSource {
            shared,
            current: Bytes::new(),
            keepalive,
            lost: VecDeque::new(),
            stashed: None,
            reopen,
            backoff: None,
            announce: false,
        }
    }
}

impl<S> std::fmt::Debug for WsSource<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSource")
            .field("keepalive", &self.keepalive.is_some())
            .field("reconnect", &self.reopen.as_ref().map(|(_, reconnect)| reconnect))
            .field("reconnecting", &self.backoff)
            .finish_non_exhaustive()
    }
}

/// What one poll for a frame produced.
pub(super) enum Frame {
    Message(Message),
    /// The connection ended or failed (or there is none).
    Gone(Option<WsError>),
    /// Nothing heard for a whole keep-alive interval after a ping.
    Silent(Duration),
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// The next frame; with `keepalive`, also sends the pings that are due
    /// and notices a silent other side (only when about to wait: a frame
    /// at hand resets nothing that a later wait would not see).
    fn poll_frame(&mut self, cx: &mut TaskContext<'_>, keepalive: bool) -> Poll<Frame> {
        let mut guard = self.shared.ws();
        let Some(ws) = guard.as_mut() else { return Poll::Ready(Frame::Gone(None)) };
        if let Some(keepalive) = self.keepalive.as_mut().filter(|_| keepalive)
            && let Some(frame) = keepalive.poll(ws, cx)
        {
            return Poll::Ready(frame);
        }
        // A peer that pings and does not read makes tungstenite queue a
        // pong per ping. Once they reach the budget, reading waits until
        // they are written (as answers do, see `Connection::wait`).
        if self.shared.pongs_owed.load(Ordering::Relaxed) >= self.shared.budget {
            match Pin::new(&mut *ws).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.shared.pongs_owed.store(0, Ordering::Relaxed),
                Poll::Ready(Err(err)) => return Poll::Ready(Frame::Gone(Some(err))),
                Poll::Pending => return Poll::Pending,
            }
        }
        match Pin::new(&mut *ws).poll_next(cx) {
            Poll::Ready(Some(Ok(message))) => {
                if let Some(keepalive) = &mut self.keepalive {
                    keepalive.heard();
                }
                if let Message::Ping(payload) = &message {
                    self.shared.pongs_owed.fetch_add(payload.len() + PONG_OVERHEAD, Ordering::Relaxed);
                }
                Poll::Ready(Frame::Message(message))
            }
            Poll::Ready(Some(Err(err))) => Poll::Ready(Frame::Gone(Some(err))),
            Poll::Ready(None) => Poll::Ready(Frame::Gone(None)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Sends a close frame with `code` and `reason` (best effort).
    async fn close_with(&self, code: CloseCode, reason: String) {
        let frame = CloseFrame { code, reason: reason.into() };
        let _ = poll_fn(|cx| {
            let mut guard = self.shared.ws();
            let Some(ws) = guard.as_mut() else { return Poll::Ready(Ok(())) };
            ready_then_send(ws, cx, Message::Close(Some(frame.clone())))
        })
        .await;
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// A text frame received: the message (and, reconnecting client, the
    /// calls it answers are no longer outstanding).
    fn text(&mut self, text: Utf8Bytes) -> Received<'_> {
        if let Some(mut outstanding) = self.shared.outstanding().filter(|ids| !ids.is_empty()) {
            for id in response_ids(text.as_bytes()) {
                outstanding.remove(&id);
            }
        }
        self.current = Bytes::from(text);
        Received::Message(&self.current)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> MessageSource for WsSource<S> {
    /// A text frame already read (or readable without waiting), so that a
    /// burst of pipelined requests is answered with one write. Polled with
    /// a no-op waker: `recv` polls (and registers) again before waiting.
    fn recv_ready(&mut self) -> Option<Received<'_>> {
        // While reconnecting there is no connection to read: `recv` first
        // delivers the failures in `lost`, then reconnects.
        if !self.lost.is_empty() || self.announce || self.stashed.is_some() || self.backoff.is_some() {
            return None;
        }
        match self.poll_frame(&mut TaskContext::from_waker(std::task::Waker::noop()), false) {
            Poll::Ready(Frame::Message(Message::Text(text))) => Some(self.text(text)),
            Poll::Ready(frame) => {
                self.stashed = Some(frame);
                None
            }
            Poll::Pending => None,
        }
    }

    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        loop {
            if let Some(reply) = self.lost.pop_front() {
                self.current = Bytes::from(reply);
                return Ok(Some(Received::Message(&self.current)));
            }
            if std::mem::take(&mut self.announce) {
                return Ok(Some(Received::Reconnecting { transport: "ws" }));
            }
            if self.backoff.is_some() {
                self.reconnect().await?;
            }
            let frame = match self.stashed.take() {
                Some(frame) => frame,
                None => poll_fn(|cx| self.poll_frame(cx, true)).await,
            };
            let why = match frame {
                Frame::Message(Message::Text(text)) => return Ok(Some(self.text(text))),
                Frame::Message(Message::Binary(_)) => {
                    return Ok(Some(Received::Malformed(
                        "binary WebSocket frames are not accepted: send each JSON-RPC message as a text frame".into(),
                    )));
                }
                Frame::Message(_) => continue,
                Frame::Silent(interval) => io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no answer to a WebSocket ping within {interval:?}"),
                ),
                Frame::Gone(Some(WsError::Capacity(err))) => {
                    let reason = format!("message too big: the limit is {} bytes", self.shared.max_message_size);
                    tracing::debug!(error = %err, "closing a WebSocket connection: {reason}");
                    self.close_with(CloseCode::Size, reason).await;
                    return Ok(None);
                }
                Frame::Gone(Some(WsError::ConnectionClosed | WsError::AlreadyClosed)) | Frame::Gone(None) => {
                    if !self.shared.reconnects() {
                        return Ok(None);
                    }
                    io::Error::new(io::ErrorKind::ConnectionAborted, "the server closed the connection")
                }
                Frame::Gone(Some(err)) => into_io(err),
            };
            self.lost(why)?;
        }
    }
}
