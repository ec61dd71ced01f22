//! The one way the runtime takes a lock.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, poisoned or not: every map and state the runtime guards
/// stays consistent even if a holder panicked (a panic is caught around
/// each user call, never in the middle of an update of ours).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
