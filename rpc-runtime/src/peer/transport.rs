//! What a connection needs of its medium: whole messages in, whole
//! messages out. Byte streams with a [`Framing`](crate::Framing), the
//! in-memory pair, WebSocket frames, HTTP exchanges and NATS deliveries
//! implement these two traits, so that the peer logic is written once for
//! all of them.

use std::future::Future;
use std::io;

/// One unit received from a transport.
#[derive(Debug, PartialEq, Eq)]
pub enum Received<'a> {
    /// One complete message: the bytes of one JSON value (or of something
    /// that claims to be one), borrowed from the transport until the next
    /// receive.
    Message(&'a [u8]),
    /// A message longer than the transport's limit; it was skipped. Answered
    /// with -32600, and the connection stays usable.
    TooLarge {
        /// Its size in bytes, when the transport knows it.
        size: Option<usize>,
    },
    /// Input that could not be split into messages (a bad header, say); the
    /// transport has skipped ahead. Answered with -32700.
    Malformed(String),
    /// The connection was lost and the transport is making a new one (a
    /// reconnecting client, over `transport`): what the other side held
    /// for the old one is gone. Each subscription this side made yields
    /// [`ClientError::Resubscribed`](crate::ClientError::Resubscribed) and
    /// is made again on the new connection, instead of waiting for items
    /// that would never come.
    Reconnecting {
        /// The transport's name (`"ws"`, `"tcp"`), for the logs.
        transport: &'static str,
    },
}

/// The receiving half of a message transport.
pub trait MessageSource: Send {
    /// Waits for the next message; `Ok(None)` once the other side has
    /// finished sending (end of input). An error means the medium failed
    /// (for example a connection reset): the connection ends.
    ///
    /// The connection keeps polling one `recv` future until it completes,
    /// so implementations need not be cancel-safe, except that dropping the
    /// future ends the connection.
    fn recv(&mut self) -> impl Future<Output = io::Result<Option<Received<'_>>>> + Send;

    /// The next message if one is already at hand, without waiting (a line
    /// already buffered, say). `None` says nothing about what `recv` will
    /// return. Transports that cannot tell keep the default.
    fn recv_ready(&mut self) -> Option<Received<'_>> {
        None
    }
}

/// The sending half of a message transport.
///
/// Outgoing messages are written in place into [`MessageSink::buffer`] and
/// ended with [`MessageSink::commit`], then handed to the medium together
/// by [`MessageSink::flush`]: a burst of answers costs one write.
pub trait MessageSink: Send {
    /// The buffer the next outgoing message is appended to. The caller
    /// notes its length, appends zero or one message, and calls
    /// [`MessageSink::commit`] with that length.
    fn buffer(&mut self) -> &mut Vec<u8>;

    /// Ends the message appended to [`MessageSink::buffer`] since it was
    /// `start` bytes long. Nothing was appended: nothing is sent.
    fn commit(&mut self, start: usize);

    /// Queues a whole message.
    fn send(&mut self, message: &[u8]) {
        let buffer = self.buffer();
        let start = buffer.len();
        buffer.extend_from_slice(message);
        self.commit(start);
    }

    /// The span the next message was sent in (feature `otel`), for
    /// transports that carry W3C Trace Context with each message (HTTP
    /// and NATS headers); the default ignores it. Called before the
    /// message is appended, only when the span has a trace context.
    #[cfg(feature = "otel")]
    fn trace_next(&mut self, trace: &crate::otel::TraceContext) {
        let _ = trace;
    }

    /// Bytes queued and not yet flushed.
    fn queued(&self) -> usize;

    /// Hands everything queued to the medium and waits until it took it.
    ///
    /// Must be cancel-safe: the connection drops a pending flush to read
    /// or queue more, then flushes again; nothing queued may be lost or
    /// written twice (keep the progress in `self`, not in the future).
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;

    /// Flushes, then closes the sending side (the other side sees the end
    /// of input). Called once, last.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}
