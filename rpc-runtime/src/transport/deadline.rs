//! The write deadline of network connections: a peer that stops reading
//! must not keep its connection (a socket, a place under
//! `max_connections`, the answers queued for it) forever.
//!
//! [`WriteDeadline`] wraps a connection's socket below every protocol
//! (NDJSON or `Content-Length` framing, hyper's HTTP, the WebSocket
//! crate): once a write has made no progress for the timeout, the write
//! fails with [`io::ErrorKind::TimedOut`], and the connection ends as it
//! does when its peer is gone. Only a write that is blocked arms the timer,
//! so a connection whose writes go through costs nothing more.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Default time a blocked write may make no progress before its
/// connection is closed (see [`Server::write_timeout`](crate::Server::write_timeout)).
pub(crate) const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// A socket (or its write half) whose writes fail once they made no
/// progress for `timeout`. Reads pass through.
#[derive(Debug)]
pub(crate) struct WriteDeadline<T> {
    inner: T,
    timeout: Option<Duration>,
    /// Armed while a write is blocked: when it fires, the write fails.
    /// Any progress (a write, flush or shutdown that completes) disarms it.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> WriteDeadline<T> {
    /// `inner` with writes that fail after `timeout` without progress
    /// (never, with `None`).
    pub(crate) fn new(inner: T, timeout: Option<Duration>) -> Self {
        WriteDeadline { inner, timeout, stalled: None }
    }

    /// What a blocked write returns: still pending, or the timeout's error
    /// once it has been blocked for that long.
    fn poll_stalled<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let Some(timeout) = self.timeout else { return Poll::Pending };
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.stalled = None;
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no progress writing for {timeout:?} (write_timeout): the peer does not read"),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Passes on what the socket answered, keeping the timer armed only
    /// while it blocks.
    fn watch<R>(&mut self, polled: Poll<io::Result<R>>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match polled {
            Poll::Ready(result) => {
                // Checked first: assigning would call the drop of the old
                // value, out of line, on every write that goes through.
                if self.stalled.is_some() {
                    self.stalled = None;
                }
                Poll::Ready(result)
            }
            Poll::Pending => self.poll_stalled(cx),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(polled, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(polled, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(polled, cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_write_blocked_for_the_timeout_fails_and_progress_resets_it() {
        // A pipe of 64 bytes nobody reads: the second write blocks.
        let (mut far, near) = tokio::io::duplex(64);
        let mut near = WriteDeadline::new(near, Some(Duration::from_secs(30)));
        near.write_all(&[b'x'; 64]).await.unwrap();
        let started = tokio::time::Instant::now();
        let blocked = near.write_all(&[b'y'; 64]);
        let reader = async {
            // Reading a little after 20 s is progress: the deadline starts over.
            tokio::time::sleep(Duration::from_secs(20)).await;
            let mut some = [0u8; 64];
            tokio::io::AsyncReadExt::read_exact(&mut far, &mut some).await.unwrap();
            far
        };
        let (written, mut far) = tokio::join!(blocked, reader);
        written.expect("progress within the timeout");
        assert_eq!(started.elapsed(), Duration::from_secs(20));
        // Now nobody reads: the next write fails 30 s after it blocked.
        let started = tokio::time::Instant::now();
        let err = near.write_all(&[b'z'; 64]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        assert!(err.to_string().contains("write_timeout"), "{err}");
        let mut rest = [0u8; 64];
        tokio::io::AsyncReadExt::read_exact(&mut far, &mut rest).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_timeout_a_blocked_write_waits() {
        let (_far, near) = tokio::io::duplex(8);
        let mut near = WriteDeadline::new(near, None);
        let write = near.write_all(&[0; 64]);
        assert!(tokio::time::timeout(Duration::from_secs(3600), write).await.is_err());
    }
}
