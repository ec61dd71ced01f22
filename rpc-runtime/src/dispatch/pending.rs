//! The part of an answer that waits: [`PendingResponse`] holds the
//! futures of `async` calls (one, or a batch's) and writes their answers
//! when they end, or turns them away when a limit is hit.

use std::future::Future;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use crate::dispatch::router::{MethodFuture, panicked};
use crate::dispatch::signal::Signal;
use crate::wire::error::ErrorObject;
use crate::wire::response::{push_piece, write_error, write_response};

/// The id of a request as it appeared on the wire, or `None` for a
/// notification (which is never answered).
pub(crate) type OwnedId = Option<Box<str>>;

/// The part of a message's answer that waits on `async` methods.
///
/// Run it (typically on its own task) with [`PendingResponse::run`], or turn
/// it away with [`PendingResponse::reject`] when a limit is hit.
pub struct PendingResponse {
    pub(crate) shape: PendingShape,
    /// For a batch, the responses already written, back to back; its done
    /// entries point into it.
    pub(crate) body: Vec<u8>,
}

impl std::fmt::Debug for PendingResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.shape {
            PendingShape::Single { method, .. } => f.debug_struct("PendingResponse").field("method", method).finish(),
            PendingShape::Batch(entries) => {
                let pending = entries.iter().filter(|entry| matches!(entry, BatchEntry::Pending { .. })).count();
                f.debug_struct("PendingResponse").field("batch", &entries.len()).field("pending", &pending).finish()
            }
        }
    }
}

pub(crate) enum PendingShape {
    Single { id: OwnedId, method: Box<str>, future: MethodFuture, silent_cancel: SilentCancel },
    Batch(Vec<BatchEntry>),
}

/// A request's cancellation signal, on a connection that does not answer
/// cancelled requests (MCP); empty elsewhere. Once raised, the request's
/// answer is not sent.
#[derive(Default)]
pub(crate) struct SilentCancel(pub(crate) Option<Arc<Signal>>);

impl SilentCancel {
    /// Whether the request was cancelled and its answer is left unsent.
    fn silences(&self) -> bool {
        self.0.as_ref().is_some_and(|signal| signal.is_raised())
    }
}

pub(crate) enum BatchEntry {
    /// Where the response is in the pending response's `body`, or nothing
    /// for a notification.
    Done(Option<Range<usize>>),
    Pending {
        id: OwnedId,
        method: Box<str>,
        future: MethodFuture,
        silent_cancel: SilentCancel,
    },
}

impl PendingResponse {
    /// How many `async` method calls this waits on: one for a single
    /// request, the number of waiting entries for a batch. Each counts
    /// against [`Limits::max_concurrent_requests`](crate::Limits::max_concurrent_requests).
    pub fn calls(&self) -> usize {
        match &self.shape {
            PendingShape::Single { .. } => 1,
            PendingShape::Batch(entries) => {
                entries.iter().filter(|entry| matches!(entry, BatchEntry::Pending { .. })).count()
            }
        }
    }

    /// Waits for every `async` method and returns the complete answer
    /// (empty when nothing is to be sent). A method that panics is answered
    /// with -32603; the others are unaffected.
    pub async fn run(self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.shape {
            PendingShape::Single { id, method, future, silent_cancel } => {
                let result = CatchUnwind(future).await.unwrap_or_else(|panic| Err(panicked(&method, &*panic)));
                if let Some(id) = id.filter(|_| !silent_cancel.silences()) {
                    write_response(&mut out, &id, &result);
                }
            }
            PendingShape::Batch(entries) => {
                // Spawn so that the batch's entries run concurrently (and in
                // parallel on a multi-threaded runtime).
                let mut tasks = Vec::with_capacity(entries.len());
                for entry in entries {
                    tasks.push(match entry {
                        BatchEntry::Done(piece) => Err(piece),
                        BatchEntry::Pending { id, method, future, silent_cancel } => {
                            Ok((id, method, silent_cancel, tokio::spawn(future)))
                        }
                    });
                }
                for task in tasks {
                    match task {
                        Err(piece) => push_piece(&mut out, piece.map(|range| &self.body[range])),
                        Ok((id, method, silent_cancel, handle)) => {
                            let result = match handle.await {
                                Ok(result) => result,
                                Err(err) if err.is_panic() => Err(panicked(&method, &*err.into_panic())),
                                Err(_) => Err(ErrorObject::internal_error("Internal error: the request was aborted")),
                            };
                            if let Some(id) = id.filter(|_| !silent_cancel.silences()) {
                                let mut piece = Vec::new();
                                write_response(&mut piece, &id, &result);
                                push_piece(&mut out, Some(&piece));
                            }
                        }
                    }
                }
                if !out.is_empty() {
                    out.push(b']');
                }
            }
        }
        out
    }

    /// Answers every waiting request with `error` instead of running it
    /// (used when the connection's concurrency limit is reached). Entries
    /// that were already answered keep their answers.
    pub fn reject(self, error: &ErrorObject) -> Vec<u8> {
        let mut out = Vec::new();
        match self.shape {
            PendingShape::Single { id, .. } => {
                if let Some(id) = id {
                    write_error(&mut out, &id, error);
                }
            }
            PendingShape::Batch(entries) => {
                for entry in entries {
                    match entry {
                        BatchEntry::Done(piece) => push_piece(&mut out, piece.map(|range| &self.body[range])),
                        BatchEntry::Pending { id: Some(id), .. } => {
                            let mut piece = Vec::new();
                            write_error(&mut piece, &id, error);
                            push_piece(&mut out, Some(&piece));
                        }
                        BatchEntry::Pending { id: None, .. } => {}
                    }
                }
                if !out.is_empty() {
                    out.push(b']');
                }
            }
        }
        out
    }
}

/// Polls a future, turning a panic into an `Err` with its payload: the
/// one unwinding boundary around a future (a method's, a subscription's).
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let future = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *future).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
