//! The clock of hyper's header-read timeout, one per connection. hyper
//! asks its timer for a new sleep each time it starts reading a request's
//! head and drops it once the head is read: with tokio's timer that is a
//! timer entry registered and removed per request. Here a sleep only
//! records its deadline; the connection's task keeps one real timer,
//! armed for the earliest deadline still wanted, which goes off at most
//! about once per timeout period on a busy connection.
//!
//! Only the connection's own task polls the sleeps (hyper polls its
//! header-read sleep while it waits for a head), so a sleep needs no
//! waker of its own: the real timer wakes that task, which polls the
//! connection again, and hyper's sleep then sees the time it waited for.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// What the sleeps and the real timer of one connection share. Times
/// are nanoseconds since `base`; 0 in `wanted` means no sleep is waiting.
struct Alarm {
    base: Instant,
    /// The earliest deadline of a sleep that found it not yet reached.
    wanted: AtomicU64,
    /// The latest time the real timer went off at.
    reached: AtomicU64,
}

impl Alarm {
    fn nanos(&self, at: Instant) -> u64 {
        // At least 1, so that a deadline is never read as "none".
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX).max(1)
    }

    fn instant(&self, nanos: u64) -> Instant {
        self.base + Duration::from_nanos(nanos)
    }
}

/// The timer handed to hyper (see the module's documentation).
#[derive(Clone)]
pub(crate) struct AlarmTimer(Arc<Alarm>);

/// The connection's side: the one real timer.
pub(crate) struct AlarmClock {
    alarm: Arc<Alarm>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The deadline `timer` is armed for; 0 when it is not armed.
    armed: u64,
}

/// A new clock for one connection, and the timer for its hyper builder.
pub(crate) fn alarm() -> (AlarmTimer, AlarmClock) {
    let alarm = Arc::new(Alarm { base: Instant::now(), wanted: AtomicU64::new(0), reached: AtomicU64::new(0) });
    (AlarmTimer(Arc::clone(&alarm)), AlarmClock { alarm, timer: None, armed: 0 })
}

impl AlarmClock {
    /// Called by the connection's task whenever the connection is
    /// pending: arms the real timer for the earliest deadline wanted.
    /// `Ready` when the timer went off: poll the connection again, so
    /// that its sleeps see the time.
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let wanted = self.alarm.wanted.load(Ordering::Acquire);
        if wanted != 0 && (self.armed == 0 || wanted < self.armed) {
            let deadline = tokio::time::Instant::from_std(self.alarm.instant(wanted));
            match &mut self.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
            self.armed = wanted;
        }
        let Some(timer) = self.timer.as_mut().filter(|_| self.armed != 0) else { return Poll::Pending };
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let now = self.alarm.nanos(Instant::now()).max(self.armed);
        self.alarm.reached.fetch_max(now, Ordering::AcqRel);
        // Sleeps still waiting say so again when polled.
        let _ = self
            .alarm
            .wanted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |wanted| (wanted != 0 && wanted <= now).then_some(0));
        self.armed = 0;
        Poll::Ready(())
    }
}

impl hyper::rt::Timer for AlarmTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(AlarmSleep { alarm: Arc::clone(&self.0), deadline: self.0.nanos(deadline) })
    }
}

/// One of hyper's sleeps: ready once the connection's real timer went
/// off at or after its deadline.
struct AlarmSleep {
    alarm: Arc<Alarm>,
    deadline: u64,
}

impl Future for AlarmSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let alarm = &self.alarm;
        if alarm.reached.load(Ordering::Acquire) >= self.deadline {
            return Poll::Ready(());
        }
        let _ = alarm.wanted.fetch_update(Ordering::AcqRel, Ordering::Acquire, |wanted| {
            (wanted == 0 || self.deadline < wanted).then_some(self.deadline)
        });
        Poll::Pending
    }
}

impl hyper::rt::Sleep for AlarmSleep {}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer;

    fn poll<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(std::task::Waker::noop()))
    }

    fn poll_clock(clock: &mut AlarmClock) -> Poll<()> {
        clock.poll_fired(&mut Context::from_waker(std::task::Waker::noop()))
    }

    /// Waits until the clock's real timer goes off.
    async fn fired(clock: &mut AlarmClock) {
        std::future::poll_fn(|cx| clock.poll_fired(cx)).await
    }

    #[tokio::test]
    async fn a_sleep_is_ready_once_the_clock_went_off_at_its_deadline() {
        let (timer, mut clock) = alarm();
        let mut sleep = timer.sleep(Duration::from_millis(30));
        // Nothing is ready before the clock went off, however late it is.
        assert!(poll(sleep.as_mut()).is_pending());
        assert!(poll_clock(&mut clock).is_pending());
        assert!(poll(sleep.as_mut()).is_pending());
        fired(&mut clock).await;
        assert!(poll(sleep.as_mut()).is_ready());
        assert_eq!(clock.armed, 0, "nothing left to wait for");
    }

    #[tokio::test]
    async fn a_dropped_sleep_costs_an_early_wake_up_and_the_next_is_armed_then() {
        let (timer, mut clock) = alarm();
        let mut first = timer.sleep(Duration::from_millis(30));
        assert!(poll(first.as_mut()).is_pending());
        assert!(poll_clock(&mut clock).is_pending());
        drop(first);
        let mut second = timer.sleep(Duration::from_secs(3600));
        assert!(poll(second.as_mut()).is_pending());
        // Still armed for the first; the second is not due when it goes off.
        assert!(poll_clock(&mut clock).is_pending());
        fired(&mut clock).await;
        assert!(poll(second.as_mut()).is_pending());
        assert!(poll_clock(&mut clock).is_pending());
        let deadline = clock.alarm.nanos(Instant::now() + Duration::from_secs(3600));
        assert!(clock.armed > 0 && clock.armed <= deadline, "armed again for the second sleep");
    }
}
