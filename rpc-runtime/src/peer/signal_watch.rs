//! Waiting on a [`Signal`] from a task that polls many things in a loop
//! for its whole life: the connection task (its stop and drain signals)
//! and the HTTP server's connections (their drain signal).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::dispatch::signal::Signal;

/// A signal a long-lived task waits on (stop, drain). Waiting for a
/// [`Signal`] means registering a waiter with its `Notify`, which takes a
/// lock, and removing it again, which takes another; a task that is woken
/// by every burst of input must not pay that on each wake-up. So the
/// waiter is registered once and stays: a wake-up costs an atomic load,
/// and the waiter is polled again only when the task's waker changed.
pub(crate) struct SignalWatch<'a, F> {
    signal: Option<&'a Signal>,
    /// `raised(signal)`, pinned in the task's future.
    waiting: Pin<&'a mut F>,
    /// The waker the waiter was last polled with.
    registered: Option<Waker>,
}

impl<'a, F: Future<Output = ()>> SignalWatch<'a, F> {
    /// Watches `signal`; `waiting` is `signal.raised()`, pinned.
    pub(crate) fn new(signal: Option<&'a Signal>, waiting: Pin<&'a mut F>) -> Self {
        SignalWatch { signal, waiting, registered: None }
    }

    /// Ready once the signal is raised; never without one.
    pub(crate) fn poll_raised(&mut self, cx: &mut TaskContext<'_>) -> Poll<()> {
        let Some(signal) = self.signal else { return Poll::Pending };
        if signal.is_raised() {
            return Poll::Ready(());
        }
        if self.registered.as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) {
            return Poll::Pending;
        }
        let polled = self.waiting.as_mut().poll(cx);
        self.registered = Some(cx.waker().clone());
        polled
    }
}

/// Completes when `signal` is raised; never without one.
pub(super) async fn raised(signal: Option<&Signal>) {
    match signal {
        Some(signal) => signal.raised().await,
        None => std::future::pending().await,
    }
}
