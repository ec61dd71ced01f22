//! One WebSocket, shared by the two halves of a transport: tungstenite's
//! settings for it, the state both halves read (the socket itself, the
//! pongs owed, the calls in flight of a reconnecting client), and `build`,
//! which makes the pair. Server and client both start here.
//!
//! The halves share the one tungstenite stream, behind a mutex: reading
//! also writes (tungstenite queues the pongs and close replies it owes),
//! and a reconnecting client swaps in a new stream for both halves at
//! once.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::Sink;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::keepalive::Keepalive;
use super::reconnect::Reopen;
use super::sink::WsSink;
use super::source::WsSource;
use crate::transport::reconnect::Reconnect;

/// Bytes tungstenite asks of the socket per read. It zeroes this much of
/// its read buffer before every read, including the read that finds
/// nothing more after a burst, so the size is paid for on every burst of
/// pipelined messages: small, but large enough that a large message takes
/// few reads.
const READ_BUFFER_SIZE: usize = 4 * 1024;
/// Bytes tungstenite gathers before it writes; the sink flushes after
/// every burst anyway.
const WRITE_BUFFER_SIZE: usize = 64 * 1024;

/// tungstenite's settings for a connection whose messages are at most
/// `max_message_size` and whose unsent output is bounded by `budget`
/// (`Limits::max_queued_bytes`).
///
/// The sink hands tungstenite a message only when its buffer is written
/// out, and the source stops reading while the pongs owed pass `budget`;
/// `max_write_buffer_size` is the backstop under both: one message, the
/// write buffer and the pongs' budget. Past it tungstenite refuses a
/// message (the connection ends) and drops pongs.
pub(super) fn config(max_message_size: usize, budget: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
        .read_buffer_size(READ_BUFFER_SIZE)
        .write_buffer_size(WRITE_BUFFER_SIZE)
        .max_write_buffer_size(max_message_size.saturating_add(budget).saturating_add(2 * WRITE_BUFFER_SIZE))
}

/// What both halves of one WebSocket transport share.
pub(super) struct Shared<S> {
    /// `None` while a reconnecting client reconnects.
    ws: Mutex<Option<WebSocketStream<S>>>,
    /// Bytes of pongs tungstenite owes the other side since its output was
    /// last written out (an upper bound: it may merge them).
    pub(super) pongs_owed: AtomicUsize,
    /// `Limits::max_queued_bytes`: reading stops while the pongs owed
    /// reach it.
    pub(super) budget: usize,
    /// Raised when a new connection replaced a lost one.
    pub(super) reconnected: Notify,
    /// Reconnecting client only: ids of calls sent on the current
    /// connection and not answered yet, failed when it is lost.
    outstanding: Option<Mutex<HashSet<Box<str>>>>,
    pub(super) closing: std::sync::atomic::AtomicBool,
    pub(super) max_message_size: usize,
}

impl<S> Shared<S> {
    pub(super) fn ws(&self) -> MutexGuard<'_, Option<WebSocketStream<S>>> {
        self.ws.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a lost connection is to be replaced: a reconnecting client
    /// that is not closing.
    pub(super) fn reconnects(&self) -> bool {
        self.outstanding.is_some() && !self.closing.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The calls in flight, on a reconnecting client.
    pub(super) fn outstanding(&self) -> Option<MutexGuard<'_, HashSet<Box<str>>>> {
        Some(self.outstanding.as_ref()?.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// The two halves of a transport over `ws`: pings every `ping_interval`
/// (if any), messages of at most `max_message_size`, `budget` of pongs
/// owed, and, for a reconnecting client, how to reopen it.
pub(super) fn build<S>(
    ws: WebSocketStream<S>,
    ping_interval: Option<Duration>,
    max_message_size: usize,
    budget: usize,
    reopen: Option<(Reopen<S>, Reconnect)>,
) -> (WsSource<S>, WsSink<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let shared = Arc::new(Shared {
        ws: Mutex::new(Some(ws)),
        reconnected: Notify::new(),
        outstanding: reopen.as_ref().map(|_| Mutex::new(HashSet::new())),
        closing: false.into(),
        max_message_size,
        pongs_owed: AtomicUsize::new(0),
        budget,
    });
    let source = WsSource::new(Arc::clone(&shared), ping_interval.map(Keepalive::new), reopen);
    let sink = WsSink::new(shared);
    (source, sink)
}

/// Sends `message` and flushes.
pub(super) fn ready_then_send<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    cx: &mut TaskContext<'_>,
    message: Message,
) -> Poll<Result<(), WsError>> {
    match Pin::new(&mut *ws).poll_ready(cx) {
        Poll::Ready(Ok(())) => {}
        other => return other,
    }
    Pin::new(&mut *ws).start_send(message)?;
    Pin::new(&mut *ws).poll_flush(cx)
}

/// tungstenite's error as the `io::Error` the peer's loop takes.
pub(super) fn into_io(err: WsError) -> io::Error {
    match err {
        WsError::Io(err) => err,
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            io::Error::new(io::ErrorKind::NotConnected, "the WebSocket connection is closed")
        }
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}
