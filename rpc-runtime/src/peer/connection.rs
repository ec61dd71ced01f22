//! The task behind every connection: one loop that reads messages, answers
//! what it can at once into the transport's buffer, takes responses off
//! for the calls waiting on them, and writes, in bursts, whatever other
//! tasks queued (answers of `async` methods, calls and notifications).
//!
//! One task, not a reader and a writer: a pipelined burst of requests is
//! read, answered and written with no hand-over between tasks, and a peer
//! that stops reading stops us reading too (our answers cannot pile up).
//!
//! What the connection takes off the stream for itself (responses to its
//! calls, claimed notifications) beyond what the engine hands back is
//! sorted out in `routing.rs`.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot};
use tokio::time::Instant;

use super::signal_watch::{SignalWatch, raised};
use super::state::{Closed, ConnectionState, Outgoing};
use super::transport::{MessageSink, MessageSource, Received};
use super::{Peer, PeerOptions, subscription};
use crate::dispatch::context::Context;
use crate::dispatch::engine::{Engine, Incoming, Takes};
use crate::dispatch::pending::PendingResponse;
use crate::dispatch::signal::Signal;
use crate::wire::response::write_error;
use crate::wire::{ErrorObject, INVALID_REQUEST, PARSE_ERROR};

/// Answers are handed to the transport once this much is queued, even if
/// more input is at hand.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Connection-level controls a server sets; a client connection has none.
#[derive(Clone, Default)]
pub(crate) struct Controls {
    /// Close the connection after this long with no message in either
    /// direction and nothing running.
    pub(crate) idle_timeout: Option<Duration>,
    /// Raised to stop reading and close once running requests are
    /// answered (graceful shutdown).
    pub(crate) drain: Option<Arc<Signal>>,
    /// What the end of input means for requests still running.
    pub(crate) at_eof: AtEof,
}

/// What the end of input (the other side finished sending) means for the
/// requests still running on a connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AtEof {
    /// They finish and are answered, then the connection closes: stdio
    /// and child processes (`echo '{...}' | server` gets its answer), and
    /// clients.
    #[default]
    Finish,
    /// The connection ends at once: answers already made are written,
    /// running requests are cancelled. Network connections by default, as
    /// hyper does: a client that sends a long call and goes away must not
    /// hold its socket and its place until the call ends.
    Cancel,
    /// They get this long to finish and be answered (a half-close), then
    /// are cancelled.
    Grace(Duration),
}

/// One connection: the shared state plus what only its task needs.
pub(crate) struct Connection {
    pub(super) shared: Arc<ConnectionState>,
    pub(super) engine: Engine,
    cx: Context,
    inbox: Inbox,
    controls: Controls,
    /// Told once each queued message was flushed.
    acks: Vec<oneshot::Sender<()>>,
    /// The method of the cancellation notifications this connection takes
    /// for itself, if any (fixed for its life: read once, not per message).
    cancel: Option<&'static str>,
}

/// Why reading stopped.
enum End {
    /// The other side finished sending (it may still read).
    Eof,
    /// Asked to stop: closed, last handle dropped, or the run dropped.
    Stopped,
    /// Graceful shutdown.
    Drained,
    /// Nothing happened for the idle timeout.
    Idle,
    /// The medium failed while reading (the other side is gone).
    ReadFailed(io::Error),
    /// Writing failed (the other side is gone).
    WriteFailed(io::Error),
}

/// What waiting for input produced.
enum Wait<'a> {
    Received(Received<'a>),
    End(End),
}

/// The receiving side of the connection's outbox: closed when dropped, so
/// that later sends fail (the connection is gone) and queued messages give
/// back their share of the byte budget.
struct Inbox(Arc<ConnectionState>);

impl Inbox {
    /// The next message other tasks queued; never completes while there
    /// is none.
    async fn recv(&self) -> Outgoing {
        poll_fn(|cx| self.0.outbox.poll_recv(cx)).await
    }

    fn try_recv(&self) -> Option<Outgoing> {
        self.0.outbox.try_recv()
    }

    fn is_empty(&self) -> bool {
        self.0.outbox.is_empty()
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.0.outbox.close();
    }
}

/// Closes the connection if its task is dropped early, so that callers and
/// running handlers are not left waiting.
struct CloseOnDrop(Arc<ConnectionState>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close(Closed::Clean);
        self.0.link.stop.raise();
        self.0.budget.close();
    }
}

impl Connection {
    /// A connection and a handle on it (one that does not keep it open).
    pub(crate) fn new(engine: Engine, options: PeerOptions, cx: Context, controls: Controls) -> (Self, Peer) {
        let shared = ConnectionState::new(options, engine.limits());
        let inbox = Inbox(Arc::clone(&shared));
        let peer = Peer { shared: Arc::clone(&shared), _life: None };
        let cx = Context {
            link: Some(Arc::clone(&shared.link)),
            peer: Some(Arc::new(peer.clone())),
            drain: controls.drain.clone().or(cx.drain),
            ..cx
        };
        let cancel = options.cancellation.method();
        (Connection { shared, engine, cx, inbox, controls, acks: Vec::new(), cancel }, peer)
    }

    /// Runs the connection until the other side hangs up, it is closed,
    /// or the server drains it. After the end of input, requests still
    /// running finish and are answered before the sending side is closed;
    /// when the other side is gone (a reset, a failed write), running
    /// handlers are cancelled and the transport is released at once.
    ///
    /// The other side going away is the normal end of a connection: a reset
    /// or a broken pipe is not reported as an error.
    pub(crate) async fn run<S: MessageSource, K: MessageSink>(mut self, mut source: S, mut sink: K) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let _close = CloseOnDrop(Arc::clone(&shared));
        let limits = self.engine.limits().clone();
        let permits = limits.max_concurrent_requests.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let slots = Arc::new(Semaphore::new(permits));
        let drain = self.controls.drain.clone();
        let stop_raised = pin!(raised(Some(&shared.link.stop)));
        let mut stop = SignalWatch::new(Some(&shared.link.stop), stop_raised);
        let drain_raised = pin!(raised(drain.as_deref()));
        let mut drained = SignalWatch::new(drain.as_deref(), drain_raised);
        let end = loop {
            // The messages already at hand are answered at once; then the
            // answers so far are written while we wait for input.
            self.answer_buffered(&mut source, &mut sink, &slots, permits);
            match self.wait(&mut source, &mut sink, &slots, permits, (&mut stop, &mut drained)).await {
                Wait::Received(received) => {
                    let claim = |method: &str| self.claims(method);
                    let takes = self.takes(&claim);
                    self.answer(received, &mut sink, &slots, permits, &takes);
                }
                Wait::End(end) => break end,
            }
        };
        drop(source);
        self.finish(end, sink, &slots, permits).await
    }

    /// Answers the messages already at hand, until there is none, the
    /// connection is asked to stop, or a burst of answers is due to be
    /// written. Not `async`: a pipelined burst is answered in this one
    /// loop, its state in registers rather than in the connection's future.
    ///
    /// Which notifications the connection takes for itself is asked once
    /// per burst: a subscription starts being watched before its call is
    /// queued, and this task writes the call only between bursts, so no
    /// item of it can be in a burst read before the watch began.
    fn answer_buffered<S: MessageSource, K: MessageSink>(
        &self,
        source: &mut S,
        sink: &mut K,
        slots: &Arc<Semaphore>,
        permits: usize,
    ) {
        let claim = |method: &str| self.claims(method);
        let takes = self.takes(&claim);
        while !self.shared.link.stop.is_raised() && sink.queued() < WRITE_BATCH_BYTES {
            let Some(received) = source.recv_ready() else { return };
            self.answer(received, sink, slots, permits, &takes);
        }
    }

    /// What the connection takes off the stream for itself, for the engine
    /// ([`Engine::process_incoming`]): the notifications `claim` says,
    /// when it may claim any, and responses, once it made a call.
    pub(super) fn takes<'c>(&self, claim: &'c dyn Fn(&str) -> bool) -> Takes<'c> {
        Takes { claims: self.claiming().then_some(claim), responses: self.shared.made_calls() }
    }

    /// Whether notifications `method` are the connection's own:
    /// cancellations, and the items of subscriptions it made.
    pub(super) fn claims(&self, method: &str) -> bool {
        Some(method) == self.cancel || self.shared.subscribed.claims(method)
    }

    /// Whether the connection may claim any notification at all (when not,
    /// the engine need not ask [`Connection::claims`]).
    fn claiming(&self) -> bool {
        self.cancel.is_some() || self.shared.subscribed.watching()
    }

    /// Writes what is queued, and meanwhile takes what other tasks queue
    /// and waits for the next message; or for the reason to stop reading.
    ///
    /// Reading goes on while a write waits (a peer reading our answers
    /// slowly can still send us the responses to our calls), until the
    /// unsent bytes reach [`Limits::max_queued_bytes`](crate::Limits):
    /// then only writing goes on, so a peer that never reads holds at most
    /// that much of our answers.
    ///
    /// `stop` and `drain` watch the connection's stop signal and the
    /// server's drain.
    async fn wait<'s, S: MessageSource, K: MessageSink, F: Future<Output = ()>>(
        &mut self,
        source: &'s mut S,
        sink: &mut K,
        slots: &Semaphore,
        permits: usize,
        (stop, drain): (&mut SignalWatch<'_, F>, &mut SignalWatch<'_, F>),
    ) -> Wait<'s> {
        let budget = self.shared.budget_bytes;
        // The usual case first: the medium takes the whole burst at once,
        // without a round of the select below. A write that cannot finish
        // now is dropped (flushes are cancel-safe) and resumed there.
        if sink.queued() > 0 {
            let mut flush = pin!(sink.flush());
            match poll_fn(|cx| Poll::Ready(flush.as_mut().poll(cx))).await {
                Poll::Ready(Ok(())) => self.written(),
                Poll::Ready(Err(err)) => return Wait::End(End::WriteFailed(err)),
                Poll::Pending => {}
            }
        }
        let mut next = pin!(source.recv());
        // Read the clock only for an idle timeout.
        let mut last_activity = self.controls.idle_timeout.map(|_| Instant::now());
        loop {
            let queued = sink.queued();
            let room = queued < budget;
            // Idle: nothing running either way, nothing to write.
            let idle_at = self
                .controls
                .idle_timeout
                .zip(last_activity)
                .filter(|_| queued == 0 && slots.available_permits() == permits && !self.shared.has_pending_calls())
                .map(|(timeout, last_activity)| last_activity + timeout);
            tokio::select! {
                biased;
                () = poll_fn(|cx| stop.poll_raised(cx)) => return Wait::End(End::Stopped),
                () = poll_fn(|cx| drain.poll_raised(cx)) => return Wait::End(End::Drained),
                flushed = sink.flush(), if queued > 0 => match flushed {
                    Ok(()) => self.written(),
                    Err(err) => return Wait::End(End::WriteFailed(err)),
                },
                outgoing = self.inbox.recv(), if room => {
                    if last_activity.is_some() {
                        last_activity = Some(Instant::now());
                    }
                    self.queue(outgoing, sink);
                    while sink.queued() < WRITE_BATCH_BYTES {
                        match self.inbox.try_recv() {
                            Some(outgoing) => self.queue(outgoing, sink),
                            None => break,
                        }
                    }
                }
                received = &mut next, if room => return match received {
                    Ok(Some(received)) => Wait::Received(received),
                    Ok(None) => Wait::End(End::Eof),
                    Err(err) => Wait::End(End::ReadFailed(err)),
                },
                () = sleep_until(idle_at), if idle_at.is_some() => return Wait::End(End::Idle),
            }
        }
    }

    /// Everything queued so far was written: tell whoever waits for it.
    fn written(&mut self) {
        for ack in self.acks.drain(..) {
            let _ = ack.send(());
        }
    }

    /// Answers one received unit: what can be answered at once is written
    /// into the sink; `async` work is spawned and answers through the outbox.
    /// `takes` says what the connection takes for itself (see
    /// [`Connection::takes`]).
    #[inline]
    fn answer<K: MessageSink>(
        &self,
        received: Received<'_>,
        sink: &mut K,
        slots: &Arc<Semaphore>,
        permits: usize,
        takes: &Takes<'_>,
    ) {
        let Received::Message(message) = received else { return self.refuse(received, sink) };
        let buffer = sink.buffer();
        let mark = buffer.len();
        let pending = match self.engine.process_incoming(message, &self.cx, buffer, takes) {
            // First: the usual outcome (answered, nothing left to run)
            // then moves nothing out of the engine's result.
            Incoming::Handled(None) => None,
            Incoming::Handled(pending) => pending,
            other => self.answer_other(other, message, buffer),
        };
        sink.commit(mark);
        // Subscriptions answered just now start once their answers are
        // queued, so that no item overtakes its subscription's id.
        if pending.is_some() || self.shared.serving.has_starting() {
            self.start_pending(pending, sink, slots, permits);
        }
    }

    /// What the engine left to the connection: a response to one of its
    /// calls, a notification it claims, or a message to route the general
    /// way (a batch, say).
    #[cold]
    fn answer_other(&self, incoming: Incoming<'_>, message: &[u8], buffer: &mut Vec<u8>) -> Option<PendingResponse> {
        match incoming {
            Incoming::Handled(pending) => pending,
            Incoming::Response { id, result, error } => {
                self.deliver(id, result, error);
                None
            }
            Incoming::Claimed { method, params } => {
                self.claimed(&method, params);
                None
            }
            Incoming::Other => match self.route(message) {
                Some(message) => self.engine.process(&message, &self.cx, buffer),
                None => None,
            },
        }
    }

    /// Answers a unit that is not a message (too large, malformed).
    #[cold]
    fn refuse<K: MessageSink>(&self, received: Received<'_>, sink: &mut K) {
        match received {
            Received::Message(_) => {}
            Received::TooLarge { size } => {
                let size = size.map_or_else(|| "more than".to_owned(), |s| s.to_string());
                let message = format!(
                    "Invalid Request: message of {size} bytes exceeds the limit of {} bytes",
                    self.engine.limits().max_message_size
                );
                tracing::debug!("{message}");
                send_error(sink, &ErrorObject::new(INVALID_REQUEST, message));
            }
            Received::Malformed(reason) => {
                send_error(sink, &ErrorObject::new(PARSE_ERROR, format!("Parse error: {reason}")));
            }
            Received::Reconnecting { transport } => {
                tracing::debug!(transport, "the connection was lost; subscribing again once it is re-made");
                self.shared.subscribed.resubscribe_all(&self.shared);
            }
        }
    }

    /// Runs what an answered message left to do: its `async` work (on a
    /// task of its own, within the connection's limit of requests in
    /// flight) and the subscriptions it opened.
    fn start_pending<K: MessageSink>(
        &self,
        pending: Option<PendingResponse>,
        sink: &mut K,
        slots: &Arc<Semaphore>,
        permits: usize,
    ) {
        let starting = self.shared.serving.take_starting();
        let Some(pending) = pending else {
            if !starting.is_empty() {
                subscription::server::start(&self.shared, starting);
            }
            return;
        };
        // Every waiting entry of a batch takes a slot, so that batching
        // cannot get around the limit.
        let wanted = u32::try_from(pending.calls()).ok();
        match wanted.map(|n| Arc::clone(slots).try_acquire_many_owned(n)) {
            Some(Ok(slot)) => {
                let shared = Arc::clone(&self.shared);
                tokio::spawn(async move {
                    let response = pending.run().await;
                    if !response.is_empty() {
                        let _ = shared.send(response, None).await;
                    }
                    if !starting.is_empty() {
                        subscription::server::start(&shared, starting);
                    }
                    // Only now: the end of the connection waits for every
                    // slot, so the response must be queued before.
                    drop(slot);
                });
            }
            _ => {
                tracing::debug!(calls = pending.calls(), limit = permits, "refused: too many requests running");
                let rejected = pending.reject(&ErrorObject::overloaded(permits, "on this connection"));
                if !rejected.is_empty() {
                    sink.send(&rejected);
                }
                if !starting.is_empty() {
                    subscription::server::start(&self.shared, starting);
                }
            }
        }
    }

    fn queue<K: MessageSink>(&mut self, outgoing: Outgoing, sink: &mut K) {
        #[cfg(feature = "otel")]
        if let Some(trace) = &outgoing.trace {
            sink.trace_next(trace);
        }
        sink.send(&outgoing.bytes);
        self.acks.extend(outgoing.written);
        // The budget share is given back when `outgoing` drops: the bytes
        // are in the sink now, which the next flush empties.
    }

    /// Ends the connection: fails outgoing calls, lets running requests
    /// finish and be answered (unless the other side is gone), closes the
    /// sending side.
    async fn finish<K: MessageSink>(
        mut self,
        end: End,
        mut sink: K,
        slots: &Arc<Semaphore>,
        permits: usize,
    ) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let eof = matches!(end, End::Eof);
        let (closed, result) = match end {
            End::Eof | End::Drained | End::Stopped => (Closed::Clean, Ok(())),
            End::Idle => {
                tracing::debug!("closing an idle connection");
                (Closed::Clean, Ok(()))
            }
            End::ReadFailed(err) | End::WriteFailed(err) => {
                let closed = Closed::Failed(Arc::new(io::Error::new(err.kind(), err.to_string())));
                (closed, if gone(&err) { Ok(()) } else { Err(err) })
            }
        };
        let failed = matches!(closed, Closed::Failed(_));
        // Nothing more can be answered: fail outgoing calls now, so that a
        // handler waiting on one finishes promptly.
        shared.close(closed);
        if eof && self.controls.at_eof == AtEof::Cancel {
            // What was answered already goes out; what runs is cancelled
            // and its answer dropped.
            shared.link.stop.raise();
            shared.budget.close();
            return match sink.close().await {
                Err(err) if !gone(&err) => Err(err),
                _ => Ok(()),
            };
        }
        if failed {
            // Nobody can hear us: cancel what runs, release the transport.
            shared.link.stop.raise();
            shared.budget.close();
            drop(sink);
            return result;
        }
        // What was queued before the end but not flushed yet: flushed and
        // reported now. A handler waiting for its message to be written
        // (`write_and_wait`: a notification sent before it goes on) would
        // otherwise wait until the connection closes, which waits for it.
        let mut writable = true;
        if !self.acks.is_empty() {
            writable = sink.flush().await.is_ok();
            if writable {
                self.written();
            } else {
                shared.link.stop.raise();
            }
        }
        let mut all_done = pin!(slots.acquire_many(permits as u32));
        let grace = match self.controls.at_eof {
            AtEof::Grace(grace) if eof => Some(Instant::now() + grace),
            _ => None,
        };
        loop {
            tokio::select! {
                biased;
                _ = &mut all_done => break,
                () = sleep_until(grace) => {
                    tracing::debug!("cancelling the requests still running after the half-close grace");
                    shared.link.stop.raise();
                    break;
                }
                outgoing = self.inbox.recv() => {
                    if writable {
                        self.queue(outgoing, &mut sink);
                        if self.inbox.is_empty() {
                            writable = sink.flush().await.is_ok();
                            if writable {
                                self.written();
                            }
                        }
                    }
                    if !writable {
                        shared.link.stop.raise();
                    }
                }
            }
        }
        shared.budget.close();
        while let Some(outgoing) = self.inbox.try_recv() {
            if writable {
                self.queue(outgoing, &mut sink);
            }
        }
        if !writable {
            return result;
        }
        match sink.close().await {
            Ok(()) => {
                self.written();
                result
            }
            Err(err) if gone(&err) => result,
            Err(err) => result.and(Err(err)),
        }
    }
}

/// Completes at `deadline`; never without one.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Whether `err` means the other side went away: the normal end of a
/// connection, not a failure to report.
fn gone(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::UnexpectedEof
    )
}

/// Queues an error answer to a message whose id could not be read.
fn send_error<K: MessageSink>(sink: &mut K, error: &ErrorObject) {
    let buffer = sink.buffer();
    let mark = buffer.len();
    write_error(buffer, "null", error);
    sink.commit(mark);
}
