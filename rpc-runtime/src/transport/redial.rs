//! A byte stream that is opened again when it is lost: the two halves of
//! a reconnecting TCP client (plain, or TLS with the `tls` feature) or
//! Unix socket client, framed as every byte stream is, with either
//! [`Framing`].
//!
//! Apart from `stream` because a stream that comes back must know which
//! calls went out on the connection that was lost: the sending half notes
//! the ids of the calls in each burst it hands to a connection, the
//! receiving half strikes them off as their answers come, and when the
//! connection is lost it answers the rest with an error at once (they may
//! or may not have run), says so ([`Received::Reconnecting`]), and opens
//! a new one. What is queued and not yet handed over waits for it.

use std::collections::{HashSet, VecDeque};
use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use super::reconnect::{Backoff, Reconnect, lost_call_error};
use super::replies::{error_reply, request_ids, response_ids};
use super::stream::received;
use crate::peer::{MessageSink, MessageSource, Peer, PeerBuilder, Received};
use crate::sync::lock;
use crate::wire::{BorrowedFrame, FrameReader, Framing};

/// What a reconnecting stream runs over, as its messages name it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Medium {
    /// For people, in the error answers of lost calls ("the TCP
    /// connection was lost").
    pub(crate) name: &'static str,
    /// The transport, as [`Received::Reconnecting`] and the `data` of
    /// those answers name it (`"tcp"`).
    pub(crate) transport: &'static str,
}

/// TCP, with or without TLS.
pub(crate) const TCP: Medium = Medium { name: "TCP", transport: "tcp" };

/// A sending buffer grown past this for a large burst is given back once
/// it is written.
const KEEP_CAPACITY: usize = 256 * 1024;

/// Opens a new connection (for reconnecting): its reading and writing
/// halves.
pub(crate) type Reopen<R, W> = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<(R, W)>> + Send>> + Send + Sync>;

/// What both halves share.
struct Link<W> {
    medium: Medium,
    slot: Mutex<Slot<W>>,
    /// Ids of the calls handed to the current connection and not answered
    /// yet: failed when it is lost.
    outstanding: Mutex<HashSet<Box<str>>>,
    /// Raised when a new connection replaced a lost one.
    reconnected: Notify,
    /// No new connection will come: closing, or the attempts ran out, or
    /// the receiving half is gone.
    ended: AtomicBool,
}

/// The current connection's writing half (`None` once it is lost, until
/// a new one replaces it), and which connection it is.
struct Slot<W> {
    writer: Option<W>,
    generation: u64,
}

impl<W> Link<W> {
    /// Both halves' link over a first connection that writes to `writer`.
    fn new(writer: W, medium: Medium) -> Arc<Self> {
        Arc::new(Link {
            medium,
            slot: Mutex::new(Slot { writer: Some(writer), generation: 0 }),
            outstanding: Mutex::new(HashSet::new()),
            reconnected: Notify::new(),
            ended: AtomicBool::new(false),
        })
    }

    fn slot(&self) -> MutexGuard<'_, Slot<W>> {
        lock(&self.slot)
    }

    fn outstanding(&self) -> MutexGuard<'_, HashSet<Box<str>>> {
        lock(&self.outstanding)
    }

    /// Whether a lost connection is to be replaced.
    fn reconnects(&self) -> bool {
        !self.ended.load(Ordering::Relaxed)
    }

    /// No connection will replace a lost one: a sender waiting for one
    /// stops waiting.
    fn end(&self) {
        self.ended.store(true, Ordering::Relaxed);
        self.reconnected.notify_waiters();
    }
}

/// The receiving half: frames from the current connection, and what a
/// lost one leaves to say.
pub(crate) struct RedialSource<R, W> {
    reader: FrameReader<R>,
    /// Everything but the reader, so that a frame borrowed from the reader
    /// can be returned while the rest is updated.
    state: SourceState<R, W>,
}

struct SourceState<R, W> {
    link: Arc<Link<W>>,
    reopen: Reopen<R, W>,
    policy: Reconnect,
    framing: Framing,
    max_message_size: usize,
    /// Error answers for calls lost with a connection, delivered first.
    lost: VecDeque<Vec<u8>>,
    /// The answer of `lost` being delivered.
    current: Vec<u8>,
    /// The connection was lost: `recv` says so once `lost` is delivered.
    announce: bool,
    /// Reconnecting: `recv` goes on with it once the above are delivered.
    backoff: Option<Backoff>,
}

impl<R, W> std::fmt::Debug for RedialSource<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedialSource")
            .field("reconnect", &self.state.policy)
            .field("reconnecting", &self.state.backoff)
            .finish_non_exhaustive()
    }
}

impl<R, W> Drop for RedialSource<R, W> {
    fn drop(&mut self) {
        // Nobody is left to reconnect.
        self.state.link.end();
    }
}

impl<R, W> SourceState<R, W> {
    /// Whether something is to be said before reading again.
    fn holds_back(&self) -> bool {
        !self.lost.is_empty() || self.announce
    }

    /// The next thing to say about a lost connection: an error answer,
    /// then that it is being replaced.
    fn next_held(&mut self) -> Option<Received<'_>> {
        if let Some(reply) = self.lost.pop_front() {
            self.current = reply;
            return Some(Received::Message(&self.current));
        }
        let transport = self.link.medium.transport;
        std::mem::take(&mut self.announce).then_some(Received::Reconnecting { transport })
    }

    /// `message` came: the calls it answers are no longer outstanding.
    fn answered(&self, message: &[u8]) {
        if self.link.outstanding().is_empty() {
            return;
        }
        let ids = response_ids(message);
        let mut outstanding = self.link.outstanding();
        for id in ids {
            outstanding.remove(&id);
        }
    }

    /// The connection is gone for `why`: every call sent on it gets an
    /// error answer, and a [`Backoff`] starts, which `recv` resumes once
    /// those answers are delivered.
    fn lost(&mut self, why: &io::Error) {
        let Medium { name, transport } = self.link.medium;
        tracing::debug!(error = %why, transport, "connection lost; reconnecting");
        self.backoff = Some(Backoff::new(self.policy));
        let lost: Vec<Box<str>> = {
            let mut slot = self.link.slot();
            slot.writer = None;
            self.link.outstanding().drain().collect()
        };
        let error = lost_call_error(name, transport, why);
        self.lost.extend(lost.iter().map(|id| error_reply(id, &error)));
        self.announce = true;
    }

    /// Opens a new connection as the [`Backoff`] says; once the attempts
    /// run out, the last error (nothing will replace the connection).
    async fn reconnect(&mut self) -> io::Result<R> {
        let Some(backoff) = &mut self.backoff else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "not reconnecting"));
        };
        let reopen = Arc::clone(&self.reopen);
        let reopened = backoff.reopen(self.link.medium.transport, || reopen()).await;
        self.backoff = None;
        match reopened {
            Ok((reader, writer)) => {
                {
                    let mut slot = self.link.slot();
                    slot.writer = Some(writer);
                    slot.generation += 1;
                }
                self.link.reconnected.notify_waiters();
                Ok(reader)
            }
            Err(err) => {
                self.link.end();
                Err(err)
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send, W: Send> MessageSource for RedialSource<R, W> {
    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        if self.state.holds_back() {
            return Ok(self.state.next_held());
        }
        if self.state.backoff.is_some() {
            let reader = self.state.reconnect().await?;
            // What the lost connection left half read goes with it.
            self.reader = FrameReader::new(reader, self.state.framing, self.state.max_message_size);
        }
        let failed = match self.reader.next_borrowed().await {
            Ok(Some(frame)) => {
                if let BorrowedFrame::Message(message) = &frame {
                    self.state.answered(message);
                }
                return Ok(Some(received(frame)));
            }
            Ok(None) => None,
            Err(err) => Some(err),
        };
        if !self.state.link.reconnects() {
            return failed.map_or(Ok(None), Err);
        }
        let why = failed
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::ConnectionAborted, "the server closed the connection"));
        self.state.lost(&why);
        Ok(self.state.next_held())
    }

    fn recv_ready(&mut self) -> Option<Received<'_>> {
        // While reconnecting there is no connection to read: `recv` first
        // delivers the failures, then reconnects.
        if self.state.holds_back() || self.state.backoff.is_some() {
            return None;
        }
        let frame = self.reader.next_buffered()?;
        if let BorrowedFrame::Message(message) = &frame {
            self.state.answered(message);
        }
        Some(received(frame))
    }
}

/// The sending half: messages framed into a queue, handed to the current
/// connection a burst at a time.
pub(crate) struct RedialSink<W> {
    link: Arc<Link<W>>,
    framing: Framing,
    /// Where the next message is written, before it is framed.
    scratch: Vec<u8>,
    /// Framed messages not handed to any connection yet, and the ids of
    /// the calls among them: they go to whichever connection is up next.
    queue: Vec<u8>,
    queue_ids: Vec<Box<str>>,
    /// The burst handed to connection `generation`, `written` bytes of it
    /// written so far; kept until flushed.
    burst: Vec<u8>,
    written: usize,
    generation: u64,
}

impl<W> std::fmt::Debug for RedialSink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedialSink")
            .field("framing", &self.framing)
            .field("queued", &(self.queue.len() + self.burst.len()))
            .finish_non_exhaustive()
    }
}

impl<W> RedialSink<W> {
    /// The sending half over `link`, with nothing queued.
    fn new(link: Arc<Link<W>>, framing: Framing) -> Self {
        RedialSink {
            link,
            framing,
            scratch: Vec::new(),
            queue: Vec::new(),
            queue_ids: Vec::new(),
            burst: Vec::new(),
            written: 0,
            generation: 0,
        }
    }
}

impl<W: AsyncWrite + Unpin + Send> RedialSink<W> {
    /// The burst under way went with its connection (and its calls were
    /// failed with it): it is not resumed on another.
    fn drop_burst(&mut self) {
        self.burst.clear();
        self.written = 0;
    }

    /// Writes the burst under way, then the queue as the next burst, and
    /// flushes; an error when there is no connection to write to.
    fn poll_write(&mut self, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        if self.queue.is_empty() && self.burst.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let link = Arc::clone(&self.link);
        let mut slot = link.slot();
        if slot.generation != self.generation {
            self.drop_burst();
            self.generation = slot.generation;
        }
        let Some(writer) = slot.writer.as_mut() else {
            self.drop_burst();
            let lost = format!("the {} connection is lost", self.link.medium.name);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::NotConnected, lost)));
        };
        let failed = loop {
            if self.written < self.burst.len() {
                match Pin::new(&mut *writer).poll_write(cx, &self.burst[self.written..]) {
                    Poll::Ready(Ok(0)) => break io::Error::from(io::ErrorKind::WriteZero),
                    Poll::Ready(Ok(n)) => self.written += n,
                    Poll::Ready(Err(err)) => break err,
                    Poll::Pending => return Poll::Pending,
                }
            } else if !self.queue.is_empty() {
                // From here on the calls of the queue are in flight on this
                // connection, and fail with it.
                self.link.outstanding().extend(self.queue_ids.drain(..));
                self.drop_burst();
                std::mem::swap(&mut self.burst, &mut self.queue);
            } else {
                match Pin::new(&mut *writer).poll_flush(cx) {
                    Poll::Ready(Ok(())) => {
                        self.drop_burst();
                        if self.burst.capacity() > KEEP_CAPACITY {
                            self.burst = Vec::new();
                        }
                        return Poll::Ready(Ok(()));
                    }
                    Poll::Ready(Err(err)) => break err,
                    Poll::Pending => return Poll::Pending,
                }
            }
        };
        // Lost: the receiving half notices too (a write fails only on a
        // connection whose reads fail or end), and reconnects.
        slot.writer = None;
        self.drop_burst();
        Poll::Ready(Err(failed))
    }
}

impl<W: AsyncWrite + Unpin + Send> MessageSink for RedialSink<W> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if self.scratch.len() > start {
            let message = &self.scratch[start..];
            self.queue_ids.extend(request_ids(message));
            self.framing.encode(message, &mut self.queue);
        }
        self.scratch.truncate(start);
        if self.scratch.capacity() > KEEP_CAPACITY {
            self.scratch.shrink_to(KEEP_CAPACITY);
        }
    }

    fn send(&mut self, message: &[u8]) {
        self.queue_ids.extend(request_ids(message));
        self.framing.encode(message, &mut self.queue);
    }

    fn queued(&self) -> usize {
        self.queue.len() + self.burst.len()
    }

    async fn flush(&mut self) -> io::Result<()> {
        loop {
            // Registered before looking, so a reconnection in between is
            // not missed.
            let link = Arc::clone(&self.link);
            let reconnected = link.reconnected.notified();
            match poll_fn(|cx| self.poll_write(cx)).await {
                Ok(()) => return Ok(()),
                Err(_) if link.reconnects() => reconnected.await,
                Err(err) => return Err(err),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.link.end();
        let flushed = poll_fn(|cx| self.poll_write(cx)).await;
        let shut = poll_fn(|cx| match self.link.slot().writer.as_mut() {
            Some(writer) => Pin::new(writer).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        })
        .await;
        flushed.and(shut)
    }
}

impl PeerBuilder {
    /// Starts the connection over `halves` of `medium` with this builder's
    /// framing, on a background task, opening a new connection with
    /// `reopen` as `policy` says whenever one is lost.
    pub(crate) fn start_redialing<R, W>(
        self,
        medium: Medium,
        halves: (R, W),
        reopen: Reopen<R, W>,
        policy: Reconnect,
    ) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (reader, writer) = halves;
        let link = Link::new(writer, medium);
        let max_message_size = self.limits.max_message_size;
        let source = RedialSource {
            reader: FrameReader::new(reader, self.framing, max_message_size),
            state: SourceState {
                link: Arc::clone(&link),
                reopen,
                policy,
                framing: self.framing,
                max_message_size,
                lost: VecDeque::new(),
                current: Vec::new(),
                announce: false,
                backoff: None,
            },
        };
        let sink = RedialSink::new(link, self.framing);
        self.start(source, sink)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, DuplexStream};

    use super::*;

    fn request(id: u32) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","method":"m","params":["{}"],"id":{id}}}"#, "x".repeat(64)).into_bytes()
    }

    /// Replaces a lost connection as the receiving half does.
    fn reconnected(link: &Link<DuplexStream>, writer: DuplexStream) {
        let mut slot = link.slot();
        slot.writer = Some(writer);
        slot.generation += 1;
    }

    /// A burst half written when its connection was
    /// lost must not be resumed midway on the next connection (the server
    /// would read the tail of a message); its calls are failed by the
    /// receiving half instead. What was queued after it goes out whole.
    #[tokio::test]
    async fn a_burst_cut_off_with_its_connection_is_not_resumed_on_the_next() {
        for framing in [Framing::NewlineDelimited, Framing::ContentLength] {
            // A connection that takes 16 bytes, then nothing more.
            let (first, _first_far) = tokio::io::duplex(16);
            let link = Link::new(first, TCP);
            let mut sink = RedialSink::new(Arc::clone(&link), framing);
            sink.send(&request(1));
            {
                let mut flush = std::pin::pin!(sink.flush());
                let first = poll_fn(|cx| Poll::Ready(flush.as_mut().poll(cx))).await;
                assert!(first.is_pending(), "{framing:?}");
            }
            assert_eq!(link.outstanding().iter().collect::<Vec<_>>(), [&Box::from("1")], "in flight once handed over");

            // Lost (the receiving half fails call 1), then a call is made.
            link.slot().writer = None;
            link.outstanding().clear();
            sink.send(&request(2));
            let (second, mut second_far) = tokio::io::duplex(64 * 1024);
            reconnected(&link, second);
            sink.flush().await.unwrap();
            sink.close().await.unwrap();

            let mut received = Vec::new();
            second_far.read_to_end(&mut received).await.unwrap();
            let mut expected = Vec::new();
            framing.encode(&request(2), &mut expected);
            assert_eq!(String::from_utf8_lossy(&received), String::from_utf8_lossy(&expected), "{framing:?}");
            assert_eq!(link.outstanding().iter().collect::<Vec<_>>(), [&Box::from("2")], "{framing:?}");
        }
    }

    /// Calls queued while there is no connection wait for the next one,
    /// and give up once none will come.
    #[tokio::test]
    async fn a_flush_waits_for_the_new_connection_and_gives_up_when_none_will_come() {
        let (first, _first_far) = tokio::io::duplex(1024);
        let link = Link::new(first, TCP);
        link.slot().writer = None;
        let mut sink = RedialSink::new(Arc::clone(&link), Framing::NewlineDelimited);
        sink.send(&request(3));
        let (second, mut second_far) = tokio::io::duplex(1024);
        let waiting = async {
            sink.flush().await.unwrap();
            sink
        };
        let reconnect = async {
            tokio::task::yield_now().await;
            reconnected(&link, second);
            link.reconnected.notify_waiters();
        };
        let (mut sink, ()) = tokio::join!(waiting, reconnect);
        let mut line = vec![0; request(3).len() + 1];
        second_far.read_exact(&mut line).await.unwrap();
        assert_eq!(&line[..line.len() - 1], &request(3)[..]);

        link.slot().writer = None;
        sink.send(&request(4));
        let flushing = async { sink.flush().await };
        let (flushed, ()) = tokio::join!(flushing, async {
            tokio::task::yield_now().await;
            link.end();
        });
        assert_eq!(flushed.unwrap_err().kind(), io::ErrorKind::NotConnected);
    }
}
