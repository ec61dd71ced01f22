//! Reconnecting a WebSocket client: what a lost connection does to the
//! receiving half (fail the calls in flight at once, then open a new
//! connection with backoff, resume). The policy and its backoff are
//! shared with TCP, in `transport::reconnect`.
//!
//! Apart from the source's reading because only a client with
//! [`WsConnect::reconnect`](super::WsConnect::reconnect) ever runs it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;

use super::source::WsSource;
use crate::transport::reconnect::{Backoff, lost_call_error};
use crate::transport::replies::error_reply;

/// A future that opens a new WebSocket connection (for reconnecting).
pub(super) type Reopen<S> =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<WebSocketStream<S>>> + Send>> + Send + Sync>;

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// The connection is gone: on a reconnecting client, queues an error
    /// answer for every call sent on it and starts a [`Backoff`], which
    /// `recv` resumes once those answers are delivered; otherwise, `why`.
    pub(super) fn lost(&mut self, why: io::Error) -> io::Result<()> {
        let Some((_, reconnect)) = self.reopen.as_ref().filter(|_| self.shared.reconnects()) else {
            return Err(why);
        };
        tracing::debug!(error = %why, "WebSocket connection lost; reconnecting");
        self.backoff = Some(Backoff::new(*reconnect));
        self.shared.ws().take();
        let lost: Vec<Box<str>> = self.shared.outstanding().map(|mut ids| ids.drain().collect()).unwrap_or_default();
        let error = lost_call_error("WebSocket", "ws", &why);
        self.lost.extend(lost.iter().map(|id| error_reply(id, &error)));
        self.announce = true;
        Ok(())
    }

    /// Goes on with the [`Backoff`] (if any) until a new connection
    /// replaces the lost one, or fails once the attempts run out.
    pub(super) async fn reconnect(&mut self) -> io::Result<()> {
        let Some((reopen, _)) = self.reopen.clone() else { return Ok(()) };
        let Some(backoff) = &mut self.backoff else { return Ok(()) };
        let reopened = backoff.reopen("ws", || reopen()).await;
        self.backoff = None;
        let ws = reopened?;
        *self.shared.ws() = Some(ws);
        self.shared.pongs_owed.store(0, Ordering::Relaxed);
        if let Some(keepalive) = &mut self.keepalive {
            keepalive.restart();
        }
        self.shared.reconnected.notify_waiters();
        Ok(())
    }
}
