//! Declared ordering on a connection: `#[rpc(exclusive)]` methods.
//!
//! An exclusive call starts once every call read before it on its
//! connection has finished, and every call read after it starts once it
//! has finished; the calls between two exclusive ones run as usual
//! (plain `fn`s on the reader, `async fn`s concurrently). It is a
//! readers-writer lock taken in the order the calls were read, without
//! holding up the reader: the connection goes on reading (responses to
//! the server's own calls and cancellations included) while calls wait.
//!
//! The calls since the last exclusive one form an *epoch*: each holds a
//! share of it while it runs, and the next exclusive call waits until
//! every share is gone. An exclusive call raises its *barrier* when it
//! ends; the calls read after it wait for that.

use std::sync::{Arc, Mutex};

use crate::dispatch::signal::Signal;

/// One connection's order: the current epoch and the last exclusive
/// call's barrier. Only the reader admits calls; running calls only drop
/// what they hold.
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Raised when the last exclusive call has ended; `None` once seen
    /// raised, or before any.
    barrier: Option<Arc<Signal>>,
    /// The calls admitted since the last exclusive one.
    epoch: Arc<Epoch>,
}

/// The calls of one epoch: dropped, with the last share, once they have
/// all ended.
#[derive(Default)]
struct Epoch {
    ended: Arc<Signal>,
}

impl Drop for Epoch {
    fn drop(&mut self) {
        self.ended.raise();
    }
}

/// What a call holds while it runs: a share of the epoch it was read in,
/// or, for an exclusive call, its barrier, raised when the call ends
/// (finished, failed, panicked or dropped with its connection).
pub(crate) struct Ticket {
    _share: Option<Arc<Epoch>>,
    _barrier: Option<Barrier>,
}

/// Raises its signal when dropped.
struct Barrier(Arc<Signal>);

impl Drop for Barrier {
    fn drop(&mut self) {
        self.0.raise();
    }
}

/// When a call may start.
pub(crate) struct Admission {
    /// Held while the call runs.
    pub(crate) ticket: Ticket,
    /// What it waits for first; empty when it may start now.
    pub(crate) after: Vec<Arc<Signal>>,
}

impl Admission {
    /// Whether the call may start now, on the reader.
    pub(crate) fn now(&self) -> bool {
        self.after.is_empty()
    }
}

impl Gate {
    /// Admits the next call read on the connection.
    pub(crate) fn admit(&self, exclusive: bool) -> Admission {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if state.barrier.as_ref().is_some_and(|barrier| barrier.is_raised()) {
            state.barrier = None;
        }
        if !exclusive {
            let ticket = Ticket { _share: Some(Arc::clone(&state.epoch)), _barrier: None };
            let after = state.barrier.iter().cloned().collect();
            return Admission { ticket, after };
        }
        let previous = std::mem::take(&mut state.epoch);
        let mut after: Vec<Arc<Signal>> = state.barrier.take().into_iter().collect();
        // Only the reader makes shares, so a count of one (the gate's own)
        // stays one: nothing of that epoch is running.
        if Arc::strong_count(&previous) > 1 {
            after.push(Arc::clone(&previous.ended));
        }
        drop(previous);
        let barrier = Arc::new(Signal::default());
        state.barrier = Some(Arc::clone(&barrier));
        Admission { ticket: Ticket { _share: None, _barrier: Some(Barrier(barrier)) }, after }
    }
}

/// Completes once every signal in `after` is raised.
pub(crate) async fn wait(after: &[Arc<Signal>]) {
    for signal in after {
        signal.raised().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_calls_start_at_once_until_an_exclusive_one() {
        let gate = Gate::default();
        let a = gate.admit(false);
        let b = gate.admit(false);
        assert!(a.now() && b.now());
        // Waits for both, and everything after it waits for it.
        let exclusive = gate.admit(true);
        assert_eq!(exclusive.after.len(), 1);
        let later = gate.admit(false);
        assert_eq!(later.after.len(), 1);
        drop((a, b));
        assert!(exclusive.after[0].is_raised());
        assert!(!later.after[0].is_raised());
        drop(exclusive);
        assert!(later.after[0].is_raised());
        drop(later);
        assert!(gate.admit(false).now());
    }

    #[test]
    fn an_exclusive_call_on_an_idle_connection_starts_at_once() {
        let gate = Gate::default();
        let first = gate.admit(true);
        assert!(first.now());
        // The second waits for the first (running), not for an epoch with
        // nothing in it.
        let second = gate.admit(true);
        assert_eq!(second.after.len(), 1);
        drop(first);
        assert!(second.after[0].is_raised());
    }

    #[test]
    fn a_dropped_exclusive_call_releases_the_calls_after_it() {
        let gate = Gate::default();
        let exclusive = gate.admit(true);
        let later = gate.admit(false);
        let next = gate.admit(true);
        drop(exclusive);
        assert!(later.after.iter().all(|signal| signal.is_raised()));
        assert!(!next.after.iter().all(|signal| signal.is_raised()), "it still waits for `later`");
        drop(later);
        assert!(next.after.iter().all(|signal| signal.is_raised()));
    }
}
