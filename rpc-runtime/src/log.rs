//! Bounded logging of events that a remote peer can cause at will
//! (malformed frames, unmatched responses, panicking handlers).
//!
//! A peer that sends a million bad headers must not make the server write
//! a million log lines: at the default level that fills disks, and with a
//! slow or undrained log sink it stalls every other connection. So each
//! such event goes through a [`Throttle`]: its first occurrence is logged
//! at once, with its details; after that at most one line per
//! [`INTERVAL`], which carries the running count and how many occurrences
//! were not logged since the previous line. Nothing runs in the background:
//! a summary is written when the next occurrence comes after the interval.
//!
//! For one call site, [`warn_throttled!`](crate::log::warn_throttled) is
//! the whole API:
//!
//! ```ignore
//! crate::log::warn_throttled!(length, "stream ended inside a message body");
//! // logs: WARN occurrences=1 unlogged=0 length=12 stream ended inside ...
//! ```
//!
//! For events keyed by something the server owns (a method name: panics
//! are counted per method), use a [`KeyedThrottle`]. A per-connection
//! limit is a [`Throttle`] kept in the connection's state.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often, at most, a throttled event is logged after its first
/// occurrence.
pub(crate) const INTERVAL: Duration = Duration::from_secs(10);

/// What a [`Throttle`] allows to be logged now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Occurrences {
    /// Occurrences so far, this one included.
    pub(crate) total: u64,
    /// Occurrences since the last logged one that were not logged.
    pub(crate) unlogged: u64,
}

/// The count of one event and when it was last logged.
#[derive(Debug)]
struct Tally {
    total: u64,
    unlogged: u64,
    last_logged: Option<Instant>,
}

impl Tally {
    const fn new() -> Self {
        Tally { total: 0, unlogged: 0, last_logged: None }
    }

    fn hit(&mut self, now: Instant, interval: Duration) -> Option<Occurrences> {
        self.total = self.total.saturating_add(1);
        let due = self.last_logged.is_none_or(|last| now.saturating_duration_since(last) >= interval);
        if !due {
            self.unlogged = self.unlogged.saturating_add(1);
            return None;
        }
        self.last_logged = Some(now);
        Some(Occurrences { total: self.total, unlogged: std::mem::take(&mut self.unlogged) })
    }
}

/// Decides which occurrences of one event are logged: the first, then at
/// most one per interval. Usable in a `static`.
#[derive(Debug)]
pub(crate) struct Throttle {
    interval: Duration,
    tally: Mutex<Tally>,
}

impl Throttle {
    /// A throttle that logs at most once per `interval` after the first.
    pub(crate) const fn new(interval: Duration) -> Self {
        Throttle { interval, tally: Mutex::new(Tally::new()) }
    }

    /// Counts one occurrence; `Some` when it should be logged.
    pub(crate) fn hit(&self) -> Option<Occurrences> {
        self.hit_at(Instant::now())
    }

    /// [`Throttle::hit`] at a given time (for tests).
    pub(crate) fn hit_at(&self, now: Instant) -> Option<Occurrences> {
        self.tally.lock().unwrap_or_else(PoisonError::into_inner).hit(now, self.interval)
    }
}

/// A [`Throttle`] per key, for up to a fixed number of keys; occurrences
/// of further keys share one extra tally (reported under the key that
/// happens to be logged), so memory stays bounded whatever the keys are.
#[derive(Debug)]
pub(crate) struct KeyedThrottle {
    interval: Duration,
    max_keys: usize,
    tallies: Mutex<Vec<(Box<str>, Tally)>>,
    overflow: Mutex<Tally>,
}

impl KeyedThrottle {
    /// Throttles of `interval` for up to `max_keys` keys.
    pub(crate) const fn new(interval: Duration, max_keys: usize) -> Self {
        KeyedThrottle { interval, max_keys, tallies: Mutex::new(Vec::new()), overflow: Mutex::new(Tally::new()) }
    }

    /// Counts one occurrence for `key`; `Some` when it should be logged.
    pub(crate) fn hit(&self, key: &str) -> Option<Occurrences> {
        self.hit_at(key, Instant::now())
    }

    /// [`KeyedThrottle::hit`] at a given time (for tests).
    pub(crate) fn hit_at(&self, key: &str, now: Instant) -> Option<Occurrences> {
        let mut tallies = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        // Linear: keys are few (method names), and this is the cold path.
        if let Some((_, tally)) = tallies.iter_mut().find(|(name, _)| **name == *key) {
            return tally.hit(now, self.interval);
        }
        if tallies.len() < self.max_keys {
            let mut tally = Tally::new();
            let seen = tally.hit(now, self.interval);
            tallies.push((key.into(), tally));
            return seen;
        }
        drop(tallies);
        self.overflow.lock().unwrap_or_else(PoisonError::into_inner).hit(now, self.interval)
    }
}

/// `tracing::warn!` for an event a remote peer causes, through a
/// [`Throttle`] of its own (one per call site, for the whole process):
/// the line gains the fields `occurrences` and `unlogged`.
macro_rules! warn_throttled {
    ($($arg:tt)+) => {{
        static THROTTLE: $crate::log::Throttle = $crate::log::Throttle::new($crate::log::INTERVAL);
        if let Some(seen) = THROTTLE.hit() {
            ::tracing::warn!(occurrences = seen.total, unlogged = seen.unlogged, $($arg)+);
        }
    }};
}
pub(crate) use warn_throttled;

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_is_logged_then_one_per_interval_with_the_count() {
        let throttle = Throttle::new(10 * SECOND);
        let start = Instant::now();
        assert_eq!(throttle.hit_at(start), Some(Occurrences { total: 1, unlogged: 0 }));
        for i in 1..1_000 {
            assert_eq!(throttle.hit_at(start + i * SECOND / 1_000), None);
        }
        assert_eq!(throttle.hit_at(start + 10 * SECOND), Some(Occurrences { total: 1_001, unlogged: 999 }));
        assert_eq!(throttle.hit_at(start + 11 * SECOND), None);
        assert_eq!(throttle.hit_at(start + 60 * SECOND), Some(Occurrences { total: 1_003, unlogged: 1 }));
    }

    #[test]
    fn keys_are_counted_apart_and_their_number_is_bounded() {
        let throttle = KeyedThrottle::new(10 * SECOND, 2);
        let now = Instant::now();
        assert_eq!(throttle.hit_at("a", now).map(|seen| seen.total), Some(1));
        assert_eq!(throttle.hit_at("b", now).map(|seen| seen.total), Some(1));
        assert_eq!(throttle.hit_at("a", now), None);
        // Beyond two keys, all others share one tally.
        assert_eq!(throttle.hit_at("c", now).map(|seen| seen.total), Some(1));
        assert_eq!(throttle.hit_at("d", now), None);
        assert_eq!(throttle.tallies.lock().unwrap().len(), 2);
        let later = now + 10 * SECOND;
        assert_eq!(throttle.hit_at("a", later), Some(Occurrences { total: 3, unlogged: 1 }));
        assert_eq!(throttle.hit_at("e", later), Some(Occurrences { total: 3, unlogged: 1 }));
    }
}
