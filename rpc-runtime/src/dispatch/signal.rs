//! A one-shot flag that tasks can wait on: request cancellation and
//! connection shutdown.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Raised at most once; every waiter, present or future, sees it.
#[derive(Default)]
pub(crate) struct Signal {
    raised: AtomicBool,
    notify: Notify,
}

impl Signal {
    /// Raises the flag and wakes every waiter. Returns `false` if it was
    /// already raised.
    pub(crate) fn raise(&self) -> bool {
        let first = !self.raised.swap(true, Ordering::AcqRel);
        self.notify.notify_waiters();
        first
    }

    /// Whether the flag is raised. Inlined: the connection loop that asks
    /// once per message is generic, built in the caller's crate.
    #[inline]
    pub(crate) fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }

    /// Completes once the flag is raised.
    pub(crate) async fn raised(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Register before checking the flag, so a raise in between is
            // not missed.
            notified.as_mut().enable();
            if self.is_raised() {
                return;
            }
            notified.await;
        }
    }
}
