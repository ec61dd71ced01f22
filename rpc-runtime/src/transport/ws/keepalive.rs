//! Keep-alive pings: a ping every interval, and a connection that stays
//! silent for a whole interval after one is treated as gone.
//!
//! Its own file because the ping schedule is a small state machine
//! (pings due, a flush due, heard since the last ping) that the source
//! runs only when it is about to wait for a frame.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Sink;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::source::Frame;

/// Keep-alive: a ping every interval; a whole interval without a frame
/// from the other side after a ping means it is gone.
pub(super) struct Keepalive {
    interval: Duration,
    timer: Interval,
    heard: bool,
    waiting: bool,
    ping_due: bool,
    flush_due: bool,
}

impl Keepalive {
    pub(super) fn new(interval: Duration) -> Self {
        let mut timer = tokio::time::interval_at(Instant::now() + interval, interval);
        timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Keepalive { interval, timer, heard: true, waiting: false, ping_due: false, flush_due: false }
    }

    /// Starts over, as for a new connection (after a reconnection).
    pub(super) fn restart(&mut self) {
        *self = Keepalive::new(self.interval);
    }

    /// A frame came from the other side.
    pub(super) fn heard(&mut self) {
        self.heard = true;
    }

    /// Sends the pings that are due on `ws` and notices a silent other
    /// side: the frame that ends the connection (silence, or a failed
    /// ping), or `None` to go on reading.
    pub(super) fn poll<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        ws: &mut WebSocketStream<S>,
        cx: &mut TaskContext<'_>,
    ) -> Option<Frame> {
        while self.timer.poll_tick(cx).is_ready() {
            if self.waiting && !self.heard {
                return Some(Frame::Silent(self.interval));
            }
            self.waiting = true;
            self.heard = false;
            self.ping_due = true;
        }
        if self.ping_due {
            match Pin::new(&mut *ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {
                    if let Err(err) = Pin::new(&mut *ws).start_send(Message::Ping(Bytes::new())) {
                        return Some(Frame::Gone(Some(err)));
                    }
                    self.ping_due = false;
                    self.flush_due = true;
                }
                Poll::Ready(Err(err)) => return Some(Frame::Gone(Some(err))),
                Poll::Pending => {}
            }
        }
        if self.flush_due
            && let Poll::Ready(flushed) = Pin::new(&mut *ws).poll_flush(cx)
        {
            self.flush_due = false;
            if let Err(err) = flushed {
                return Some(Frame::Gone(Some(err)));
            }
        }
        None
    }
}
