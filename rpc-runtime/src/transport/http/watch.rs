//! The header-read timeout of the standalone server, kept by each
//! connection's task instead of by hyper.
//!
//! hyper's own `header_read_timeout` makes its connection go round its
//! read/write loop once more after every answer, only to start the timer
//! for the next head (and asks its timer for a new sleep per request):
//! about 1,200 instructions per request by callgrind, 7% of a small
//! call's. Here the requests only count: one count when a head has been
//! read (hyper calls the service, or the plain path reads one), one when
//! its answer is done (hyper drops the answer's body, or the plain path
//! has made it). The connection's task looks at the counts on a slow tick, a
//! quarter of the timeout, and closes the connection once it has been
//! waiting for a head (both counts equal) over as many ticks as make the
//! timeout: between the timeout and a quarter more after the connection
//! began to wait, with no clock read per request.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// How many ticks make the timeout.
const TICKS: u32 = 4;

/// The shortest tick, so that a zero timeout cannot spin.
const MIN_TICK: Duration = Duration::from_millis(1);

/// What a connection's requests count for its [`Watchdog`].
#[derive(Default)]
pub(crate) struct HeadCounts {
    /// Request heads read.
    heads: AtomicU32,
    /// Answers done (their bodies written or dropped).
    answers: AtomicU32,
}

impl HeadCounts {
    /// A request's head was read.
    pub(crate) fn head_read(&self) {
        self.heads.fetch_add(1, Ordering::Relaxed);
    }

    /// A request's answer is done.
    pub(crate) fn answered(&self) {
        self.answers.fetch_add(1, Ordering::Relaxed);
    }

    /// Both counts at once; the connection waits for a head when they
    /// are equal.
    fn now(&self) -> (u32, u32) {
        (self.heads.load(Ordering::Relaxed), self.answers.load(Ordering::Relaxed))
    }
}

/// The body of an answer, which counts the answer done when hyper drops
/// it: after its last frame was written, or when the connection ends.
pub(crate) struct Counted<B, C: AsRef<HeadCounts>> {
    body: B,
    counts: C,
}

impl<B, C: AsRef<HeadCounts>> Counted<B, C> {
    pub(crate) fn new(body: B, counts: C) -> Self {
        Counted { body, counts }
    }
}

impl<B, C: AsRef<HeadCounts>> Drop for Counted<B, C> {
    fn drop(&mut self) {
        self.counts.as_ref().answered();
    }
}

impl<B: Body<Data = Bytes> + Unpin, C: AsRef<HeadCounts> + Unpin> Body for Counted<B, C> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connection's side: one tokio timer, re-armed once per tick.
pub(crate) struct Watchdog {
    tick: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// The counts at the last tick.
    seen: (u32, u32),
    /// Ticks in a row at which the connection was waiting for the same
    /// head as at the tick before.
    waited: u32,
    /// Whether `timer` has this task's waker.
    registered: bool,
}

impl Watchdog {
    /// A watchdog for a connection accepted just now: it waits for its
    /// first head from now on.
    pub(crate) fn new(timeout: Duration) -> Self {
        let tick = (timeout / TICKS).max(MIN_TICK);
        Watchdog { tick, timer: Box::pin(tokio::time::sleep(tick)), seen: (0, 0), waited: 0, registered: false }
    }

    /// Called by the connection's task whenever the connection is
    /// pending. `Ready` when the connection has waited for a head for the
    /// whole timeout: close it.
    pub(crate) fn poll_expired(&mut self, counts: &HeadCounts, cx: &mut Context<'_>) -> Poll<()> {
        // Most wake-ups are the connection's; the timer's state is one
        // load, its waker stays registered until it goes off.
        while !self.registered || self.timer.is_elapsed() {
            if self.timer.as_mut().poll(cx).is_pending() {
                self.registered = true;
                break;
            }
            let now = counts.now();
            if now.0 == now.1 && now == self.seen {
                self.waited += 1;
                if self.waited >= TICKS {
                    return Poll::Ready(());
                }
            } else {
                self.seen = now;
                self.waited = 0;
            }
            let next = tokio::time::Instant::now() + self.tick;
            self.timer.as_mut().reset(next);
            self.registered = false;
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::sync::Arc;

    /// Polls `watchdog` until it says the connection expired, or `limit`.
    async fn expires_within(watchdog: &mut Watchdog, counts: &HeadCounts, limit: Duration) -> Option<Duration> {
        let started = tokio::time::Instant::now();
        tokio::time::timeout(limit, poll_fn(|cx| watchdog.poll_expired(counts, cx))).await.ok()?;
        Some(started.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_sends_nothing_expires_after_the_timeout() {
        let counts = HeadCounts::default();
        let mut watchdog = Watchdog::new(Duration::from_secs(10));
        let after = expires_within(&mut watchdog, &counts, Duration::from_secs(60)).await.expect("expired");
        assert!(after >= Duration::from_secs(10) && after <= Duration::from_millis(12_500), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_progress_never_expires() {
        let counts = HeadCounts::default();
        counts.head_read();
        let mut watchdog = Watchdog::new(Duration::from_secs(1));
        assert_eq!(expires_within(&mut watchdog, &counts, Duration::from_secs(60)).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_for_the_next_head_starts_when_the_answer_is_done() {
        let counts = Arc::new(HeadCounts::default());
        let mut watchdog = Watchdog::new(Duration::from_secs(4));
        // A request arrives at 3 s and is answered at 9 s.
        let requests = {
            let counts = Arc::clone(&counts);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                counts.head_read();
                tokio::time::sleep(Duration::from_secs(6)).await;
                drop(Counted::new(http_body_util::Empty::<Bytes>::new(), counts));
            })
        };
        let after = expires_within(&mut watchdog, &counts, Duration::from_secs(60)).await.expect("expired");
        // Waiting again from 9 s: expired 4 s to 5 s after that.
        assert!(after >= Duration::from_secs(13) && after <= Duration::from_secs(14), "{after:?}");
        requests.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_timeout_expires_at_once_without_spinning() {
        let counts = HeadCounts::default();
        let mut watchdog = Watchdog::new(Duration::ZERO);
        let after = expires_within(&mut watchdog, &counts, Duration::from_secs(1)).await.expect("expired");
        assert!(after <= Duration::from_millis(5), "{after:?}");
    }
}
