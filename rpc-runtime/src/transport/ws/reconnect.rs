//! Reconnecting a WebSocket client: the [`Reconnect`] policy, and what a
//! lost connection does to the receiving half (fail the calls in flight at
//! once, then open a new connection with backoff, resume).
//!
//! Apart from the source's reading because only a client with
//! [`WsConnect::reconnect`](super::WsConnect::reconnect) ever runs it, and
//! its backoff and failure rules are a policy of their own.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;

use super::source::WsSource;
use crate::transport::replies::error_reply;
use crate::wire::{ErrorObject, TRANSPORT_ERROR};

/// A future that opens a new WebSocket connection (for reconnecting).
pub(super) type Reopen<S> =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<WebSocketStream<S>>> + Send>> + Send + Sync>;

/// How a WebSocket client reconnects after losing its connection: after
/// `initial`, doubling up to `max` between attempts, at most `attempts`
/// times (forever when `None`). With `jitter` (the default), each wait is
/// drawn between half its value and all of it, so that clients a server
/// restart cut off together do not all come back at the same instant.
///
/// ```
/// # use std::time::Duration;
/// let reconnect = rpc_runtime::transport::ws::Reconnect::default().initial(Duration::from_millis(20)).attempts(Some(50));
/// assert_eq!((reconnect.max, reconnect.attempts, reconnect.jitter), (Duration::from_secs(5), Some(50), true));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Reconnect {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    /// Attempts before giving up (the connection then closes); `None`:
    /// never give up.
    pub attempts: Option<u32>,
    /// Each wait drawn between half its value and all of it (`true` by
    /// default); `false`: exactly `initial`, doubling.
    pub jitter: bool,
}

impl Reconnect {
    /// The same policy, first waiting `initial`.
    #[must_use = "a builder does nothing until used"]
    pub fn initial(self, initial: Duration) -> Self {
        Reconnect { initial, ..self }
    }

    /// The same policy, waiting at most `max` between attempts.
    #[must_use = "a builder does nothing until used"]
    pub fn max(self, max: Duration) -> Self {
        Reconnect { max, ..self }
    }

    /// The same policy, giving up after `attempts` (never when `None`).
    #[must_use = "a builder does nothing until used"]
    pub fn attempts(self, attempts: Option<u32>) -> Self {
        Reconnect { attempts, ..self }
    }

    /// The same policy, with or without jitter.
    #[must_use = "a builder does nothing until used"]
    pub fn jitter(self, jitter: bool) -> Self {
        Reconnect { jitter, ..self }
    }
}

/// `delay` as it is waited: without `jitter` as it is, with it drawn
/// between half of it and all of it (std's randomly keyed hasher, fed the
/// attempt and the time, is the randomness: nothing here needs more).
fn wait(delay: Duration, jitter: bool, attempt: u32) -> Duration {
    use std::hash::BuildHasher;
    if !jitter {
        return delay;
    }
    let random = std::hash::RandomState::new().hash_one((attempt, std::time::SystemTime::now()));
    let half = delay / 2;
    let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    half + Duration::from_nanos(random % nanos.saturating_add(1))
}

impl Default for Reconnect {
    /// 100 ms, doubling up to 5 s, forever, with jitter.
    fn default() -> Self {
        Reconnect { initial: Duration::from_millis(100), max: Duration::from_secs(5), attempts: None, jitter: true }
    }
}

/// How far a reconnecting client got in replacing a lost connection.
///
/// It is kept in the source, between two calls of `recv`, so that the
/// failures of the calls in flight are delivered before reconnecting
/// starts: a server that never comes back must not hold them up.
#[derive(Debug)]
pub(super) struct Backoff {
    /// Attempts made so far.
    attempts: u32,
    /// The wait after the next failed attempt.
    delay: Duration,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// The connection is gone: on a reconnecting client, queues an error
    /// answer for every call sent on it and starts a [`Backoff`], which
    /// `recv` resumes once those answers are delivered; otherwise, `why`.
    pub(super) fn lost(&mut self, why: io::Error) -> io::Result<()> {
        let Some((_, reconnect)) = self.reopen.as_ref().filter(|_| self.shared.reconnects()) else {
            return Err(why);
        };
        tracing::debug!(error = %why, "WebSocket connection lost; reconnecting");
        self.backoff = Some(Backoff { attempts: 0, delay: reconnect.initial });
        self.shared.ws().take();
        let lost: Vec<Box<str>> = self.shared.outstanding().map(|mut ids| ids.drain().collect()).unwrap_or_default();
        let error = ErrorObject::new(
            TRANSPORT_ERROR,
            format!(
                "the WebSocket connection was lost ({why}) before the answer came; the call may or may not have run, and the client is reconnecting"
            ),
        )
        .with_data(&serde_json::json!({"transport": "ws"}));
        self.lost.extend(lost.iter().map(|id| error_reply(id, &error)));
        self.announce = true;
        Ok(())
    }

    /// Goes on with the [`Backoff`] (if any) until a new connection
    /// replaces the lost one, or fails once the attempts run out.
    pub(super) async fn reconnect(&mut self) -> io::Result<()> {
        let Some((reopen, reconnect)) = self.reopen.clone() else { return Ok(()) };
        while let Some(backoff) = &mut self.backoff {
            backoff.attempts += 1;
            let attempt = backoff.attempts;
            let delay = backoff.delay;
            backoff.delay = (delay * 2).min(reconnect.max);
            match reopen().await {
                Ok(ws) => {
                    self.backoff = None;
                    *self.shared.ws() = Some(ws);
                    self.shared.pongs_owed.store(0, Ordering::Relaxed);
                    if let Some(keepalive) = &mut self.keepalive {
                        keepalive.restart();
                    }
                    self.shared.reconnected.notify_waiters();
                    tracing::debug!(attempt, "WebSocket reconnected");
                }
                Err(err) if reconnect.attempts.is_some_and(|max| attempt >= max) => {
                    self.backoff = None;
                    return Err(io::Error::new(err.kind(), format!("reconnecting failed {attempt} times: {err}")));
                }
                Err(err) => {
                    let delay = wait(delay, reconnect.jitter, attempt);
                    tracing::debug!(attempt, error = %err, ?delay, "WebSocket reconnect failed; retrying");
                    tokio::time::sleep(delay).await;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_draws_each_wait_between_half_and_all_of_it() {
        let delay = Duration::from_millis(400);
        let waits: Vec<Duration> = (1..=64).map(|attempt| wait(delay, true, attempt)).collect();
        assert!(waits.iter().all(|wait| (delay / 2..=delay).contains(wait)), "{waits:?}");
        let mut distinct = waits.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 32, "spread out, not one value: {waits:?}");
        assert_eq!(wait(delay, false, 1), delay);
        assert_eq!(wait(Duration::ZERO, true, 1), Duration::ZERO);
    }
}
