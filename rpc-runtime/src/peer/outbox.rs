//! The queue through which other tasks (handlers of `async` methods,
//! callers, subscriptions) hand messages to a connection's task.
//!
//! A mutex around a `VecDeque` and the receiving task's waker, rather than
//! tokio's unbounded channel: that channel allocates a block of slots and a
//! cache-padded state when it is made, on every connection, although most
//! connections of a server never use it (plain methods are answered in
//! place). This one allocates nothing until the first message. Unbounded
//! in count: what bounds it is the connection's byte budget, taken before a
//! message is queued.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use super::lock;

/// Messages for one receiving task, from any number of senders.
pub(super) struct Outbox<T> {
    state: Mutex<State<T>>,
}

struct State<T> {
    queue: VecDeque<T>,
    /// The receiving task, to wake when a message arrives.
    waker: Option<Waker>,
    /// The receiving side is gone: sends fail.
    closed: bool,
}

impl<T> Outbox<T> {
    pub(super) fn new() -> Self {
        Outbox { state: Mutex::new(State { queue: VecDeque::new(), waker: None, closed: false }) }
    }

    /// Queues `item` for the receiving task; gives it back if that side is
    /// closed.
    pub(super) fn send(&self, item: T) -> Result<(), T> {
        let waker = {
            let mut state = lock(&self.state);
            if state.closed {
                return Err(item);
            }
            state.queue.push_back(item);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// The next message, or `Pending` (the task is woken by the next send).
    pub(super) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<T> {
        let mut state = lock(&self.state);
        if let Some(item) = state.queue.pop_front() {
            return Poll::Ready(item);
        }
        if !state.waker.as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The next message, if one is queued.
    pub(super) fn try_recv(&self) -> Option<T> {
        lock(&self.state).queue.pop_front()
    }

    /// Whether nothing is queued.
    pub(super) fn is_empty(&self) -> bool {
        lock(&self.state).queue.is_empty()
    }

    /// The receiving side is gone: later sends fail, and what is queued is
    /// dropped (outside the lock: dropping a message gives back its share
    /// of the byte budget and tells its waiter).
    pub(super) fn close(&self) {
        let queued = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.waker = None;
            std::mem::take(&mut state.queue)
        };
        drop(queued);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn messages_arrive_in_order_and_a_send_wakes_the_waiting_receiver() {
        let outbox = Outbox::new();
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);
        assert!(outbox.poll_recv(&mut cx).is_pending());
        assert!(outbox.is_empty());
        outbox.send(1).unwrap();
        outbox.send(2).unwrap();
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "woken once: the first send took the waker");
        assert!(!outbox.is_empty());
        assert_eq!(outbox.poll_recv(&mut cx), Poll::Ready(1));
        assert_eq!(outbox.try_recv(), Some(2));
        assert_eq!(outbox.try_recv(), None);
    }

    #[test]
    fn after_close_sends_fail_and_queued_messages_are_dropped() {
        let outbox = Outbox::new();
        let queued = Arc::new(());
        outbox.send(Arc::clone(&queued)).unwrap();
        outbox.close();
        assert_eq!(Arc::strong_count(&queued), 1, "the queued message was dropped");
        let refused = outbox.send(Arc::clone(&queued)).unwrap_err();
        assert!(Arc::ptr_eq(&refused, &queued), "the message comes back");
        assert!(outbox.is_empty());
    }
}
