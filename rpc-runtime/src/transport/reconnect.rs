//! Reconnecting clients: the [`Reconnect`] policy that WebSocket, TCP
//! (with or without TLS) and Unix socket clients share, how it is followed ([`Backoff`]: waits doubling, with
//! jitter, until a new connection is made or the attempts run out), and
//! the error answer every call in flight gets when its connection is lost.
//!
//! Apart from each transport because the policy and the promise to a
//! caller are the same whatever the medium: only opening a connection and
//! noticing that one is lost belong to the transport.

use std::future::Future;
use std::io;
use std::time::Duration;

use crate::wire::{ErrorObject, TRANSPORT_ERROR};

/// How a client reconnects after losing its connection: a first attempt
/// at once, then after `initial`, the waits doubling up to `max` between
/// attempts, at most `attempts` attempts in all (forever when `None`).
/// With `jitter` (the default), each wait is drawn between half its value
/// and all of it, so that clients a server restart cut off together do
/// not all come back at the same instant.
///
/// One policy for every transport that reconnects: give it to
/// [`Tcp::reconnect`](crate::transport::tcp::Tcp::reconnect), on Unix to
/// `Unix::reconnect`, or with the `ws` feature to `WsConnect::reconnect`
/// (where it is also `transport::ws::Reconnect`).
///
/// ```
/// # use std::time::Duration;
/// use rpc_runtime::transport::Reconnect;
///
/// let reconnect = Reconnect::default().initial(Duration::from_millis(20)).attempts(Some(50));
/// assert_eq!((reconnect.max, reconnect.attempts, reconnect.jitter), (Duration::from_secs(5), Some(50), true));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Reconnect {
    /// The wait after the first failed attempt.
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
    /// The same policy, waiting `initial` after the first failed attempt.
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

impl Default for Reconnect {
    /// 100 ms, doubling up to 5 s, forever, with jitter.
    fn default() -> Self {
        Reconnect { initial: Duration::from_millis(100), max: Duration::from_secs(5), attempts: None, jitter: true }
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

/// How far a reconnecting client got in replacing a lost connection.
///
/// A transport keeps it in its receiving half between two calls of
/// `recv`, so that the failures of the calls in flight are delivered
/// before reconnecting starts: a server that never comes back must not
/// hold them up.
#[derive(Debug)]
pub(crate) struct Backoff {
    policy: Reconnect,
    /// Attempts made so far.
    attempts: u32,
    /// The wait after the next failed attempt.
    delay: Duration,
}

impl Backoff {
    /// Reconnecting with `policy`, no attempt made yet.
    pub(crate) fn new(policy: Reconnect) -> Self {
        Backoff { policy, attempts: 0, delay: policy.initial }
    }

    /// Opens a connection with `open` until one is made, waiting between
    /// attempts as the policy says; once its attempts run out, the last
    /// error, saying how many were made. `transport` names the medium in
    /// the logs.
    pub(crate) async fn reopen<T, F>(&mut self, transport: &str, mut open: impl FnMut() -> F) -> io::Result<T>
    where
        F: Future<Output = io::Result<T>>,
    {
        loop {
            self.attempts += 1;
            let attempt = self.attempts;
            let delay = self.delay;
            self.delay = (delay * 2).min(self.policy.max);
            match open().await {
                Ok(opened) => {
                    tracing::debug!(transport, attempt, "reconnected");
                    return Ok(opened);
                }
                Err(err) if self.policy.attempts.is_some_and(|max| attempt >= max) => {
                    return Err(io::Error::new(err.kind(), format!("reconnecting failed {attempt} times: {err}")));
                }
                Err(err) => {
                    let delay = wait(delay, self.policy.jitter, attempt);
                    tracing::debug!(transport, attempt, error = %err, ?delay, "reconnecting failed; retrying");
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }
}

/// The answer made up for a call in flight when its `medium` connection
/// (`"WebSocket"`, `"TCP"`) was lost for `why`: the call may or may not
/// have run. `data` names the `transport` (`"ws"`, `"tcp"`), which is how
/// [`ClientError`](crate::ClientError) tells it from a server's -32099.
pub(crate) fn lost_call_error(medium: &str, transport: &str, why: &io::Error) -> ErrorObject {
    ErrorObject::new(
        TRANSPORT_ERROR,
        format!(
            "the {medium} connection was lost ({why}) before the answer came; the call may or may not have run, and the client is reconnecting"
        ),
    )
    .with_data(&serde_json::json!({ "transport": transport }))
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

    /// Waits double from `initial` up to `max`, and the error after the
    /// last attempt says how many were made.
    #[tokio::test(start_paused = true)]
    async fn waits_double_up_to_the_longest_and_the_attempts_run_out() {
        let policy = Reconnect::default()
            .initial(Duration::from_millis(100))
            .max(Duration::from_millis(300))
            .attempts(Some(4))
            .jitter(false);
        let start = tokio::time::Instant::now();
        let mut tried = Vec::new();
        let failed = Backoff::new(policy)
            .reopen("test", || {
                tried.push(start.elapsed());
                std::future::ready(Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)))
            })
            .await
            .unwrap_err();
        let ms = |ms| Duration::from_millis(ms);
        assert_eq!(tried, [ms(0), ms(100), ms(300), ms(600)]);
        assert_eq!(failed.kind(), io::ErrorKind::ConnectionRefused);
        assert!(failed.to_string().starts_with("reconnecting failed 4 times: "), "{failed}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_made_ends_the_backoff() {
        let mut attempts = 0;
        let opened = Backoff::new(Reconnect::default().attempts(Some(3)))
            .reopen("test", || {
                attempts += 1;
                std::future::ready(if attempts < 3 {
                    Err(io::ErrorKind::ConnectionRefused.into())
                } else {
                    Ok(attempts)
                })
            })
            .await;
        assert_eq!(opened.unwrap(), 3);
    }

    #[test]
    fn a_lost_call_says_so_and_names_its_transport() {
        let error = lost_call_error("TCP", "tcp", &io::ErrorKind::ConnectionReset.into());
        assert_eq!(error.code(), TRANSPORT_ERROR);
        assert!(error.message().starts_with("the TCP connection was lost ("), "{}", error.message());
        assert!(error.message().contains("may or may not have run"), "{}", error.message());
        assert_eq!(error.data_as::<serde_json::Value>().unwrap().unwrap(), serde_json::json!({"transport": "tcp"}));
    }
}
