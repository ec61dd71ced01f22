//! Byte streams as message transports: a [`FrameReader`] splits the input
//! into messages, a [`StreamSink`] frames the output. Stdio, TCP, child
//! processes and any `AsyncRead`/`AsyncWrite` pair use them.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::listener::{Connect, Listener, Shutdown};
use super::server::{ConnectionInfo, Server};
use crate::dispatch::context::Context;
use crate::peer::{Controls, MessageSink, MessageSource, Peer, PeerBuilder, Received};
use crate::wire::{BorrowedFrame, FrameReader, Framing};

/// A write buffer that grew past this for one large burst is given back
/// once written, so an idle connection does not keep its peak.
const KEEP_CAPACITY: usize = 256 * 1024;

/// A frame read off a byte stream, as the connection takes it.
pub(super) fn received(frame: BorrowedFrame<'_>) -> Received<'_> {
    match frame {
        BorrowedFrame::Message(message) => Received::Message(message),
        BorrowedFrame::TooLarge { size } => Received::TooLarge { size },
        BorrowedFrame::Malformed(reason) => Received::Malformed(reason),
    }
}

impl<R: AsyncRead + Unpin + Send> MessageSource for FrameReader<R> {
    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        Ok(self.next_borrowed().await?.map(received))
    }

    #[inline]
    fn recv_ready(&mut self) -> Option<Received<'_>> {
        self.next_buffered().map(received)
    }
}

/// The sending half of a byte stream: messages framed with a [`Framing`]
/// into one buffer, written with one `write_all` and one flush per burst.
pub struct StreamSink<W> {
    writer: W,
    framing: Framing,
    /// Framed messages waiting to be written.
    buf: Vec<u8>,
    /// How much of `buf` is written already (a flush may be dropped
    /// midway and resumed).
    written: usize,
    /// Bytes handed to the writer since its last completed flush. A writer
    /// may hold them in a buffer of its own until flushed (tokio's stdout
    /// passes them to std's, which keeps whatever follows the last line
    /// break), so they still count as queued: a flush dropped after the
    /// writes but before the writer's flush is done must be polled again,
    /// or a `Content-Length` body could sit unsent.
    unflushed: usize,
    /// With headers first (`Content-Length`), a message is written here,
    /// then framed into `buf`; newline-delimited messages are written into
    /// `buf` directly and ended in place.
    scratch: Vec<u8>,
    /// Newline-delimited: `buf[checked..]` holds lines not yet checked for
    /// raw line breaks, ending at the offsets in `ends`. They are checked
    /// together before they are written: one pass per burst instead of
    /// one per message.
    checked: usize,
    /// Where each unchecked line's `\n` is.
    ends: Vec<usize>,
}

impl<W> std::fmt::Debug for StreamSink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamSink")
            .field("framing", &self.framing)
            .field("buffered", &(self.buf.len() - self.written))
            .finish_non_exhaustive()
    }
}

impl<W: AsyncWrite + Unpin + Send> StreamSink<W> {
    /// A sink that frames messages with `framing` onto `writer`.
    pub fn new(writer: W, framing: Framing) -> Self {
        StreamSink {
            writer,
            framing,
            buf: Vec::new(),
            written: 0,
            unflushed: 0,
            scratch: Vec::new(),
            checked: 0,
            ends: Vec::new(),
        }
    }

    /// Makes the unchecked lines valid frames: usually none of them has a
    /// raw line break, which two vectorised passes over all of them show
    /// (no `\r`, and as many `\n` as lines); otherwise each is ended as
    /// [`Framing::encode`] would have.
    fn check_lines(&mut self) {
        let unchecked = &self.buf[self.checked..];
        if !only_line_ends(unchecked, self.ends.len()) {
            let mut start = self.checked;
            for &end in &self.ends {
                Framing::blank_line_breaks(&mut self.buf[start..end]);
                start = end + 1;
            }
        }
        self.checked = self.buf.len();
        self.ends.clear();
        if self.ends.capacity() > KEEP_CAPACITY / 64 {
            self.ends.shrink_to(KEEP_CAPACITY / 64);
        }
    }
}

/// Whether the only line breaks of `bytes` are the `lines` ends of its
/// lines: no `\r`, and exactly `lines` times `\n`. memchr, because its
/// count and search use the widest vectors the machine has, where a
/// byte-wise loop is vectorised only for the baseline target.
fn only_line_ends(bytes: &[u8], lines: usize) -> bool {
    memchr::memchr_iter(b'\n', bytes).count() == lines && memchr::memchr(b'\r', bytes).is_none()
}

impl<W: AsyncWrite + Unpin + Send> MessageSink for StreamSink<W> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        match self.framing {
            Framing::NewlineDelimited => &mut self.buf,
            Framing::ContentLength => &mut self.scratch,
        }
    }

    #[inline]
    fn commit(&mut self, start: usize) {
        match self.framing {
            Framing::NewlineDelimited => {
                if self.buf.len() > start {
                    self.ends.push(self.buf.len());
                    self.buf.push(b'\n');
                }
            }
            Framing::ContentLength => {
                if self.scratch.len() > start {
                    self.framing.encode(&self.scratch[start..], &mut self.buf);
                }
                self.scratch.truncate(start);
                if self.scratch.capacity() > KEEP_CAPACITY {
                    self.scratch.shrink_to(KEEP_CAPACITY);
                }
            }
        }
    }

    fn send(&mut self, message: &[u8]) {
        match self.framing {
            Framing::NewlineDelimited => {
                // Even an empty message is a line here, as `encode` frames it.
                self.buf.extend_from_slice(message);
                self.ends.push(self.buf.len());
                self.buf.push(b'\n');
            }
            Framing::ContentLength => self.framing.encode(message, &mut self.buf),
        }
    }

    fn queued(&self) -> usize {
        self.buf.len() - self.written + self.unflushed
    }

    async fn flush(&mut self) -> io::Result<()> {
        if !self.ends.is_empty() {
            self.check_lines();
        }
        // Progress is kept in `self` after every write, so a dropped flush
        // resumes where it stopped.
        while self.written < self.buf.len() {
            match self.writer.write(&self.buf[self.written..]).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => self.written += n,
            }
        }
        if !self.buf.is_empty() {
            self.unflushed += self.buf.len();
            self.buf.clear();
            self.written = 0;
            self.checked = 0;
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf.shrink_to(KEEP_CAPACITY);
            }
        }
        self.writer.flush().await?;
        self.unflushed = 0;
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        self.flush().await?;
        self.writer.shutdown().await
    }
}

/// One connection over a byte stream (a reader and a writer, framed with
/// the server's or the peer builder's [`Framing`]): served with
/// [`Server::serve`] (ending when `reader` ends, after the requests still
/// running are answered), or connected to with [`PeerBuilder::connect`].
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Server, transport::stream::Stream};
/// let (_client, ours) = tokio::io::duplex(64 * 1024);
/// let (reader, writer) = tokio::io::split(ours);
/// Server::new(router).serve(Stream::new(reader, writer)).await
/// # }
/// ```
pub struct Stream<R, W> {
    reader: R,
    writer: W,
    cx: Context,
}

impl<R, W> std::fmt::Debug for Stream<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").finish_non_exhaustive()
    }
}

impl<R, W> Stream<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// One connection reading from `reader` and writing to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Stream { reader, writer, cx: Context::new() }
    }

    /// When served: `cx` (with its extensions) is the base of every
    /// request's context; the connection hook sees a connection of
    /// transport `"stream"`.
    #[must_use = "a builder does nothing until used"]
    pub fn context(self, cx: Context) -> Self {
        Stream { cx, ..self }
    }
}

impl<R, W> Listener for Stream<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let source = FrameReader::new(self.reader, server.framing, server.engine.limits().max_message_size);
        let sink = StreamSink::new(self.writer, server.framing);
        let controls = Controls { drain: Some(Arc::clone(&shutdown.drain)), ..Controls::default() };
        server.run_connection(source, sink, &ConnectionInfo::new("stream"), self.cx, controls).await
    }
}

impl<R, W> Connect for Stream<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        Ok(builder.start_stream(self.reader, self.writer))
    }
}

impl PeerBuilder {
    /// Starts the connection over `reader`/`writer` with this builder's
    /// framing, on a background task.
    pub(crate) fn start_stream<R, W>(self, reader: R, writer: W) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let source = FrameReader::new(reader, self.framing, self.limits.max_message_size);
        let sink = StreamSink::new(writer, self.framing);
        self.start(source, sink)
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::AsyncWrite;

    use super::*;

    /// A writer that, like tokio's stdout over std's line-buffered one,
    /// keeps what it is given until flushed, and whose first flush is not
    /// done at once.
    #[derive(Default)]
    struct HoldsUntilFlushed {
        held: Vec<u8>,
        delivered: Vec<u8>,
        flushes: usize,
    }

    impl AsyncWrite for HoldsUntilFlushed {
        fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            self.held.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.flushes += 1;
            if self.flushes == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let held = std::mem::take(&mut self.held);
            self.delivered.extend_from_slice(&held);
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Lines are checked for raw line breaks per burst, not per message:
    /// the bytes written are still each message framed on its own, across
    /// flushes dropped midway and messages queued after them.
    #[tokio::test]
    async fn a_burst_is_framed_as_its_messages_one_by_one() {
        let messages: [&[u8]; 7] =
            [br#"{"a":1}"#, b"{\"a\":\r\n[1,\n2]}\n", b"", br#"{"b":"\u000a"}"#, b"\r", &[b'x'; 600], b""];
        let mut expected = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            // `send` frames even an empty message; `commit` sends nothing.
            if i % 2 == 0 || !message.is_empty() {
                Framing::NewlineDelimited.encode(message, &mut expected);
            }
        }
        for split in 0..=messages.len() {
            let mut sink = StreamSink::new(HoldsUntilFlushed::default(), Framing::NewlineDelimited);
            for (i, message) in messages.iter().enumerate() {
                if i == split {
                    let mut flush = std::pin::pin!(sink.flush());
                    let first = std::future::poll_fn(|cx| Poll::Ready(flush.as_mut().poll(cx))).await;
                    assert!(first.is_pending(), "split at {split}");
                }
                if i % 2 == 0 {
                    sink.send(message);
                } else {
                    let start = sink.buffer().len();
                    sink.buffer().extend_from_slice(message);
                    sink.commit(start);
                }
            }
            sink.flush().await.unwrap();
            assert_eq!(sink.writer.delivered, expected, "split at {split}");
        }
    }

    /// Regression: a flush dropped while the writer's own flush was under
    /// way left `queued()` at 0, so the connection never flushed again and
    /// a `Content-Length` body stayed in stdout's line buffer (its header,
    /// ending in a line break, had gone out): the answer never arrived.
    #[tokio::test]
    async fn bytes_written_but_not_flushed_still_count_as_queued() {
        for framing in [Framing::ContentLength, Framing::NewlineDelimited] {
            let mut sink = StreamSink::new(HoldsUntilFlushed::default(), framing);
            sink.send(br#"{"jsonrpc":"2.0","result":0,"id":1}"#);
            let queued = sink.queued();
            // The first flush is dropped at its first Pending (the writer's flush).
            {
                let mut flush = std::pin::pin!(sink.flush());
                let first = std::future::poll_fn(|cx| Poll::Ready(flush.as_mut().poll(cx))).await;
                assert!(first.is_pending(), "{framing:?}");
            }
            assert_eq!(sink.queued(), queued, "{framing:?}: written but not flushed is still queued");
            sink.flush().await.unwrap();
            assert_eq!(sink.queued(), 0);
            let mut expected = Vec::new();
            framing.encode(br#"{"jsonrpc":"2.0","result":0,"id":1}"#, &mut expected);
            assert_eq!(sink.writer.delivered, expected, "{framing:?}");
        }
    }
}
