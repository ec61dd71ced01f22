#![doc = include_str!("../../docs/transport-ws.md")]

use std::collections::{HashSet, VecDeque};
use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{Sink, Stream};
use http::header::{self, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

use crate::peer::{Connection, Controls, MessageSink, MessageSource, Peer, PeerBuilder, Received};
use crate::transport::http::{HttpAddrs, Inner, Serving, status_response};
use crate::transport::listener::Connect;
use crate::transport::replies::{error_reply, request_ids, response_ids};
use crate::wire::{ErrorObject, TRANSPORT_ERROR};

/// A sink buffer grown past this for a large message is given back once
/// it is empty again.
const KEEP_CAPACITY: usize = 256 * 1024;
/// Default interval of keep-alive pings.
const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long a closing side waits for the other's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The client's socket: TCP, or (`wss://`) TLS over it.
#[cfg(feature = "tls")]
type ClientStream = crate::transport::tls::MaybeTls;
#[cfg(not(feature = "tls"))]
type ClientStream = TcpStream;

/// WebSocket settings of the HTTP service.
#[derive(Clone, Debug)]
pub(crate) struct WsServerOptions {
    pub(crate) enabled: bool,
    pub(crate) ping_interval: Option<Duration>,
}

impl Default for WsServerOptions {
    fn default() -> Self {
        WsServerOptions { enabled: true, ping_interval: Some(DEFAULT_PING_INTERVAL) }
    }
}

impl super::http::Http {
    /// Whether WebSocket upgrades are accepted (default: yes, with the
    /// `ws` feature).
    pub fn websocket(self, enabled: bool) -> Self {
        self.with_ws(|options| options.enabled = enabled)
    }

    /// Pings every WebSocket client this often, and closes a connection
    /// that answered nothing (no pong, no message) for a whole interval
    /// (default 30 s; `None` turns pings off).
    pub fn ws_ping_interval(self, interval: Option<Duration>) -> Self {
        self.with_ws(|options| options.ping_interval = interval)
    }
}

/// Whether `request` asks for a WebSocket upgrade.
pub(crate) fn is_upgrade<B>(request: &Request<B>) -> bool {
    let has = |name: HeaderName, token: &str| {
        request.headers().get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|value| value.split(',').any(|part| part.trim().eq_ignore_ascii_case(token)))
        })
    };
    request.method() == http::Method::GET && has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade")
}

/// Answers a WebSocket upgrade: the handshake checks, the connection hook
/// (401/403 before the upgrade), then 101 and the connection on its own
/// task.
pub(crate) async fn upgrade<B>(
    inner: Arc<Inner>,
    mut request: Request<B>,
    addrs: Option<HttpAddrs>,
    serving: Option<Serving>,
) -> Response<Full<Bytes>>
where
    B: Body + Send + 'static,
{
    if !inner.config.ws.enabled {
        return status_response(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: WebSocket is not served here");
    }
    if request.headers().get(header::SEC_WEBSOCKET_VERSION).is_none_or(|version| version != "13") {
        let mut response =
            status_response(StatusCode::UPGRADE_REQUIRED, "Upgrade Required: only WebSocket version 13 is served");
        response.headers_mut().insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        return response;
    }
    let Some(key) = request.headers().get(header::SEC_WEBSOCKET_KEY).map(|key| derive_accept_key(key.as_bytes()))
    else {
        return status_response(StatusCode::BAD_REQUEST, "Bad Request: Sec-WebSocket-Key is missing");
    };
    let Some(on_upgrade) = request.extensions_mut().remove::<hyper::upgrade::OnUpgrade>() else {
        return status_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: this HTTP server cannot hand the connection over to WebSocket",
        );
    };
    let (parts, _) = request.into_parts();
    let cx = match inner.admit("ws", parts, addrs).await {
        Ok(cx) => cx,
        Err(refusal) => return refusal,
    };
    let server = inner.server.clone();
    let ping_interval = inner.config.ws.ping_interval;
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(upgraded) => upgraded,
            Err(err) => {
                tracing::debug!(error = %err, "a WebSocket upgrade did not complete");
                return;
            }
        };
        let limits = server.engine.limits();
        let (max_message_size, budget) = (limits.max_message_size, limits.max_queued_bytes);
        let config = config(max_message_size, budget);
        let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        let (source, sink) = build(ws, ping_interval, max_message_size, budget, None);
        let controls = Controls {
            idle_timeout: server.idle_timeout,
            drain: serving.as_ref().map(|s| Arc::clone(&s.drain)),
            at_eof: server.network_eof(),
        };
        #[cfg(feature = "metrics")]
        let _open = crate::dispatch::metrics::OpenConnection::new("ws");
        let (connection, _peer) = Connection::new(server.engine.clone(), server.peer, cx, controls);
        if let Err(err) = connection.run(source, sink).await {
            tracing::debug!(peer = ?addrs.map(|a| a.peer), error = %err, "WebSocket connection ended with an error");
        }
        // Held until here: the connection counts against the limit and
        // graceful shutdown waits for it.
        drop(serving);
    });
    let mut response = Response::new(Full::default());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(key) = HeaderValue::from_str(&key) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, key);
    }
    response
}

/// Bytes tungstenite asks of the socket per read. It zeroes this much of
/// its read buffer before every read, including the read that finds
/// nothing more after a burst; at its default (128 KiB) that zeroing cost
/// more than the rest of the work per pipelined message. Under 16
/// connections of 32 pipelined small calls (about 10 messages a read),
/// callgrind counts 6,250 instructions per request with 8 KiB, 5,968 with
/// 4 KiB and 5,940 with 2 KiB; 4 KiB keeps large messages at fewer reads.
const READ_BUFFER_SIZE: usize = 4 * 1024;
/// Bytes tungstenite gathers before it writes; the sink flushes after
/// every burst anyway.
const WRITE_BUFFER_SIZE: usize = 64 * 1024;

/// tungstenite's settings for a connection whose messages are at most
/// `max_message_size` and whose unsent output is bounded by `budget`
/// (`Limits::max_queued_bytes`).
///
/// The sink hands tungstenite a message only when its buffer is written
/// out, and the source stops reading while the pongs owed pass `budget`;
/// `max_write_buffer_size` is the backstop under both: one message, the
/// write buffer and the pongs' budget. Past it tungstenite refuses a
/// message (the connection ends) and drops pongs.
fn config(max_message_size: usize, budget: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
        .read_buffer_size(READ_BUFFER_SIZE)
        .write_buffer_size(WRITE_BUFFER_SIZE)
        .max_write_buffer_size(max_message_size.saturating_add(budget).saturating_add(2 * WRITE_BUFFER_SIZE))
}

/// Bytes a pong frame adds to the output beyond its payload (the server's
/// unmasked header of a control frame; a client's masked one adds 4 more).
const PONG_OVERHEAD: usize = 6;

/// A future that opens a new WebSocket connection (for reconnecting).
type Reopen<S> = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<WebSocketStream<S>>> + Send>> + Send + Sync>;

/// What both halves of one WebSocket transport share.
struct Shared<S> {
    /// `None` while a reconnecting client reconnects.
    ws: Mutex<Option<WebSocketStream<S>>>,
    /// Bytes of pongs tungstenite owes the other side since its output was
    /// last written out (an upper bound: it may merge them).
    pongs_owed: AtomicUsize,
    /// `Limits::max_queued_bytes`: reading stops while the pongs owed
    /// reach it.
    budget: usize,
    /// Raised when a new connection replaced a lost one.
    reconnected: Notify,
    /// Reconnecting client only: ids of calls sent on the current
    /// connection and not answered yet, failed when it is lost.
    outstanding: Option<Mutex<HashSet<Box<str>>>>,
    closing: std::sync::atomic::AtomicBool,
    max_message_size: usize,
}

impl<S> Shared<S> {
    fn ws(&self) -> MutexGuard<'_, Option<WebSocketStream<S>>> {
        self.ws.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn reconnects(&self) -> bool {
        self.outstanding.is_some() && !self.closing.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn outstanding(&self) -> Option<MutexGuard<'_, HashSet<Box<str>>>> {
        Some(self.outstanding.as_ref()?.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// Keep-alive: a ping every interval; a whole interval without a frame
/// from the other side after a ping means it is gone.
struct Keepalive {
    interval: Duration,
    timer: Interval,
    heard: bool,
    waiting: bool,
    ping_due: bool,
    flush_due: bool,
}

impl Keepalive {
    fn new(interval: Duration) -> Self {
        let mut timer = tokio::time::interval_at(Instant::now() + interval, interval);
        timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Keepalive { interval, timer, heard: true, waiting: false, ping_due: false, flush_due: false }
    }
}

/// The receiving half of a WebSocket transport: text frames as messages.
pub struct WsSource<S> {
    shared: Arc<Shared<S>>,
    current: Bytes,
    keepalive: Option<Keepalive>,
    /// Error answers for calls lost with a connection, delivered first.
    lost: VecDeque<Vec<u8>>,
    /// A frame [`MessageSource::recv_ready`] read that is not a text
    /// message; `recv` takes it first.
    stashed: Option<Frame>,
    reopen: Option<(Reopen<S>, Reconnect)>,
}

impl<S> std::fmt::Debug for WsSource<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSource")
            .field("keepalive", &self.keepalive.is_some())
            .field("reconnect", &self.reopen.as_ref().map(|(_, reconnect)| reconnect))
            .finish_non_exhaustive()
    }
}

/// The sending half of a WebSocket transport: each message one text frame.
///
/// Messages are written back to back into `scratch`; a flush checks the
/// whole burst for UTF-8 once and frames each message: the server's
/// framing copies it into its output straight from `scratch`; for the
/// client, the burst moves into `staged` (one copy into a buffer reused
/// from burst to burst) and tungstenite gets each message as a slice of
/// it. Either way a message costs no allocation of its own.
pub struct WsSink<S> {
    shared: Arc<Shared<S>>,
    /// Committed messages not staged yet (the first `committed` bytes),
    /// then whatever is being written.
    scratch: Vec<u8>,
    committed: usize,
    /// Messages checked and waiting for tungstenite, back to back.
    staged: BytesMut,
    /// The length of every message queued, staged ones first.
    lengths: VecDeque<usize>,
    queued: usize,
}

impl<S> std::fmt::Debug for WsSink<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSink").field("queued", &self.lengths.len()).finish_non_exhaustive()
    }
}

fn build<S>(
    ws: WebSocketStream<S>,
    ping_interval: Option<Duration>,
    max_message_size: usize,
    budget: usize,
    reopen: Option<(Reopen<S>, Reconnect)>,
) -> (WsSource<S>, WsSink<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let shared = Arc::new(Shared {
        ws: Mutex::new(Some(ws)),
        reconnected: Notify::new(),
        outstanding: reopen.as_ref().map(|_| Mutex::new(HashSet::new())),
        closing: false.into(),
        max_message_size,
        pongs_owed: AtomicUsize::new(0),
        budget,
    });
    let source = WsSource {
        shared: Arc::clone(&shared),
        current: Bytes::new(),
        keepalive: ping_interval.map(Keepalive::new),
        lost: VecDeque::new(),
        stashed: None,
        reopen,
    };
    let sink = WsSink {
        shared,
        scratch: Vec::new(),
        committed: 0,
        staged: BytesMut::new(),
        lengths: VecDeque::new(),
        queued: 0,
    };
    (source, sink)
}

/// What one poll for a frame produced.
enum Frame {
    Message(Message),
    /// The connection ended or failed (or there is none).
    Gone(Option<WsError>),
    /// Nothing heard for a whole keep-alive interval after a ping.
    Silent(Duration),
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// The next frame; with `keepalive`, also sends the pings that are due
    /// and notices a silent other side (only when about to wait: a frame
    /// at hand resets nothing that a later wait would not see).
    fn poll_frame(&mut self, cx: &mut TaskContext<'_>, keepalive: bool) -> Poll<Frame> {
        let mut guard = self.shared.ws();
        let Some(ws) = guard.as_mut() else { return Poll::Ready(Frame::Gone(None)) };
        if let Some(keepalive) = self.keepalive.as_mut().filter(|_| keepalive) {
            while keepalive.timer.poll_tick(cx).is_ready() {
                if keepalive.waiting && !keepalive.heard {
                    return Poll::Ready(Frame::Silent(keepalive.interval));
                }
                keepalive.waiting = true;
                keepalive.heard = false;
                keepalive.ping_due = true;
            }
            if keepalive.ping_due {
                match Pin::new(&mut *ws).poll_ready(cx) {
                    Poll::Ready(Ok(())) => {
                        if let Err(err) = Pin::new(&mut *ws).start_send(Message::Ping(Bytes::new())) {
                            return Poll::Ready(Frame::Gone(Some(err)));
                        }
                        keepalive.ping_due = false;
                        keepalive.flush_due = true;
                    }
                    Poll::Ready(Err(err)) => return Poll::Ready(Frame::Gone(Some(err))),
                    Poll::Pending => {}
                }
            }
            if keepalive.flush_due
                && let Poll::Ready(flushed) = Pin::new(&mut *ws).poll_flush(cx)
            {
                keepalive.flush_due = false;
                if let Err(err) = flushed {
                    return Poll::Ready(Frame::Gone(Some(err)));
                }
            }
        }
        // A peer that pings and does not read makes tungstenite queue a
        // pong per ping. Once they reach the budget, reading waits until
        // they are written (as answers do, see `Connection::wait`).
        if self.shared.pongs_owed.load(Ordering::Relaxed) >= self.shared.budget {
            match Pin::new(&mut *ws).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.shared.pongs_owed.store(0, Ordering::Relaxed),
                Poll::Ready(Err(err)) => return Poll::Ready(Frame::Gone(Some(err))),
                Poll::Pending => return Poll::Pending,
            }
        }
        match Pin::new(&mut *ws).poll_next(cx) {
            Poll::Ready(Some(Ok(message))) => {
                if let Some(keepalive) = &mut self.keepalive {
                    keepalive.heard = true;
                }
                if let Message::Ping(payload) = &message {
                    self.shared.pongs_owed.fetch_add(payload.len() + PONG_OVERHEAD, Ordering::Relaxed);
                }
                Poll::Ready(Frame::Message(message))
            }
            Poll::Ready(Some(Err(err))) => Poll::Ready(Frame::Gone(Some(err))),
            Poll::Ready(None) => Poll::Ready(Frame::Gone(None)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The connection is gone: fails the calls sent on it and reconnects
    /// (reconnecting client), or ends.
    async fn lost(&mut self, why: io::Error) -> io::Result<()> {
        let Some((reopen, reconnect)) = self.reopen.clone().filter(|_| self.shared.reconnects()) else {
            return Err(why);
        };
        tracing::debug!(error = %why, "WebSocket connection lost; reconnecting");
        self.shared.ws().take();
        let lost: Vec<Box<str>> = self.shared.outstanding().map(|mut ids| ids.drain().collect()).unwrap_or_default();
        let error = ErrorObject::new(
            TRANSPORT_ERROR,
            format!(
                "the WebSocket connection was lost ({why}) before the answer came; the call may or may not have run, and the client is reconnecting"
            ),
        );
        self.lost.extend(lost.iter().map(|id| error_reply(id, &error)));
        let mut delay = reconnect.initial;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match reopen().await {
                Ok(ws) => {
                    *self.shared.ws() = Some(ws);
                    self.shared.pongs_owed.store(0, Ordering::Relaxed);
                    if let Some(keepalive) = &mut self.keepalive {
                        *keepalive = Keepalive::new(keepalive.interval);
                    }
                    self.shared.reconnected.notify_waiters();
                    tracing::debug!(attempt, "WebSocket reconnected");
                    return Ok(());
                }
                Err(err) if reconnect.attempts.is_some_and(|max| attempt >= max) => {
                    return Err(io::Error::new(err.kind(), format!("reconnecting failed {attempt} times: {err}")));
                }
                Err(err) => tracing::debug!(attempt, error = %err, ?delay, "WebSocket reconnect failed; retrying"),
            }
            if !self.lost.is_empty() {
                // Deliver the failures first; reconnecting goes on at the
                // next receive.
                tokio::time::sleep(Duration::ZERO).await;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(reconnect.max);
        }
    }

    /// Sends a close frame with `code` and `reason` (best effort).
    async fn close_with(&self, code: CloseCode, reason: String) {
        let frame = CloseFrame { code, reason: reason.into() };
        let _ = poll_fn(|cx| {
            let mut guard = self.shared.ws();
            let Some(ws) = guard.as_mut() else { return Poll::Ready(Ok(())) };
            ready_then_send(ws, cx, Message::Close(Some(frame.clone())))
        })
        .await;
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSource<S> {
    /// A text frame received: the message (and, reconnecting client, the
    /// calls it answers are no longer outstanding).
    fn text(&mut self, text: Utf8Bytes) -> Received<'_> {
        if let Some(mut outstanding) = self.shared.outstanding().filter(|ids| !ids.is_empty()) {
            for id in response_ids(text.as_bytes()) {
                outstanding.remove(&id);
            }
        }
        self.current = Bytes::from(text);
        Received::Message(&self.current)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> MessageSource for WsSource<S> {
    /// A text frame already read (or readable without waiting), so that a
    /// burst of pipelined requests is answered with one write. Polled with
    /// a no-op waker: `recv` polls (and registers) again before waiting.
    fn recv_ready(&mut self) -> Option<Received<'_>> {
        if !self.lost.is_empty() || self.stashed.is_some() {
            return None;
        }
        match self.poll_frame(&mut TaskContext::from_waker(std::task::Waker::noop()), false) {
            Poll::Ready(Frame::Message(Message::Text(text))) => Some(self.text(text)),
            Poll::Ready(frame) => {
                self.stashed = Some(frame);
                None
            }
            Poll::Pending => None,
        }
    }

    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        loop {
            if let Some(reply) = self.lost.pop_front() {
                self.current = Bytes::from(reply);
                return Ok(Some(Received::Message(&self.current)));
            }
            let frame = match self.stashed.take() {
                Some(frame) => frame,
                None => poll_fn(|cx| self.poll_frame(cx, true)).await,
            };
            let why = match frame {
                Frame::Message(Message::Text(text)) => return Ok(Some(self.text(text))),
                Frame::Message(Message::Binary(_)) => {
                    return Ok(Some(Received::Malformed(
                        "binary WebSocket frames are not accepted: send each JSON-RPC message as a text frame".into(),
                    )));
                }
                Frame::Message(_) => continue,
                Frame::Silent(interval) => io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no answer to a WebSocket ping within {interval:?}"),
                ),
                Frame::Gone(Some(WsError::Capacity(err))) => {
                    let reason = format!("message too big: the limit is {} bytes", self.shared.max_message_size);
                    tracing::debug!(error = %err, "closing a WebSocket connection: {reason}");
                    self.close_with(CloseCode::Size, reason).await;
                    return Ok(None);
                }
                Frame::Gone(Some(WsError::ConnectionClosed | WsError::AlreadyClosed)) | Frame::Gone(None) => {
                    if !self.shared.reconnects() {
                        return Ok(None);
                    }
                    io::Error::new(io::ErrorKind::ConnectionAborted, "the server closed the connection")
                }
                Frame::Gone(Some(err)) => into_io(err),
            };
            self.lost(why).await?;
        }
    }
}

impl<S> WsSink<S> {
    /// Moves the committed messages from `scratch` to `staged`, where each
    /// becomes a slice of one shared buffer (no allocation per message).
    fn stage(&mut self) {
        if self.committed == 0 {
            return;
        }
        self.staged.extend_from_slice(&self.scratch[..self.committed]);
        self.scratch.drain(..self.committed);
        self.committed = 0;
        if self.scratch.is_empty() && self.scratch.capacity() > KEEP_CAPACITY {
            self.scratch = Vec::new();
        }
    }
}

/// A staged message as the text tungstenite sends. The engine writes JSON,
/// so this is one UTF-8 check; a message that is not UTF-8 is sent with
/// replacement characters.
fn text_of(message: Bytes) -> Utf8Bytes {
    Utf8Bytes::try_from(message.clone())
        .unwrap_or_else(|_| Utf8Bytes::from(String::from_utf8_lossy(&message).into_owned()))
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> WsSink<S> {
    /// Hands every queued message to tungstenite and flushes it. A message
    /// is handed over only when tungstenite is ready (its buffer written
    /// out), so what it holds stays within its write buffer and one
    /// message; the rest stays queued here, counted by `queued`.
    fn poll_write(&mut self, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let shared = Arc::clone(&self.shared);
        let mut guard = shared.ws();
        let Some(ws) = guard.as_mut() else {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::NotConnected, "the WebSocket connection is lost")));
        };
        self.stage();
        let failed = loop {
            let Some(&length) = self.lengths.front() else {
                match Pin::new(&mut *ws).poll_flush(cx) {
                    Poll::Ready(Ok(())) => {
                        shared.pongs_owed.store(0, Ordering::Relaxed);
                        if self.staged.is_empty() && self.staged.capacity() > KEEP_CAPACITY {
                            self.staged = BytesMut::new();
                        }
                        return Poll::Ready(Ok(()));
                    }
                    Poll::Ready(Err(err)) => break err,
                    Poll::Pending => return Poll::Pending,
                }
            };
            match Pin::new(&mut *ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(err)) => break err,
                Poll::Pending => return Poll::Pending,
            }
            if let Some(mut outstanding) = self.shared.outstanding() {
                outstanding.extend(request_ids(&self.staged[..length]));
            }
            self.lengths.pop_front();
            self.queued -= length;
            let message = self.staged.split_to(length).freeze();
            if let Err(err) = Pin::new(&mut *ws).start_send(Message::Text(text_of(message))) {
                break err;
            }
        };
        if self.shared.reconnects() {
            // The receiving half notices and reconnects.
            guard.take();
            cx.waker().wake_by_ref();
        }
        Poll::Ready(Err(into_io(failed)))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> MessageSink for WsSink<S> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if start > self.committed {
            // Written but never committed: not a message.
            self.scratch.drain(self.committed..start.min(self.scratch.len()));
        }
        let length = self.scratch.len().saturating_sub(self.committed);
        if length > 0 {
            self.lengths.push_back(length);
            self.committed = self.scratch.len();
            self.queued += length;
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }

    async fn flush(&mut self) -> io::Result<()> {
        loop {
            // Registered before looking, so a reconnection in between is
            // not missed.
            let shared = Arc::clone(&self.shared);
            let reconnected = shared.reconnected.notified();
            match poll_fn(|cx| self.poll_write(cx)).await {
                Ok(()) => return Ok(()),
                Err(_) if self.shared.reconnects() => reconnected.await,
                Err(err) => return Err(err),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.shared.closing.store(true, std::sync::atomic::Ordering::Relaxed);
        let flushed = poll_fn(|cx| self.poll_write(cx)).await;
        let closing = Message::Close(Some(CloseFrame { code: CloseCode::Normal, reason: "".into() }));
        let sent = poll_fn(|cx| {
            let mut guard = self.shared.ws();
            let Some(ws) = guard.as_mut() else { return Poll::Ready(Ok(())) };
            ready_then_send(ws, cx, closing.clone())
        })
        .await;
        if sent.is_ok() {
            // The close handshake: wait (briefly) for the other side's
            // close frame, or for it to hang up.
            let _ = tokio::time::timeout(
                CLOSE_WAIT,
                poll_fn(|cx| {
                    let mut guard = self.shared.ws();
                    let Some(ws) = guard.as_mut() else { return Poll::Ready(()) };
                    loop {
                        match Pin::new(&mut *ws).poll_next(cx) {
                            Poll::Ready(Some(Ok(_))) => continue,
                            Poll::Ready(_) => return Poll::Ready(()),
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                }),
            )
            .await;
        }
        flushed
    }
}

/// Sends `message` and flushes.
fn ready_then_send<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    cx: &mut TaskContext<'_>,
    message: Message,
) -> Poll<Result<(), WsError>> {
    match Pin::new(&mut *ws).poll_ready(cx) {
        Poll::Ready(Ok(())) => {}
        other => return other,
    }
    Pin::new(&mut *ws).start_send(message)?;
    Pin::new(&mut *ws).poll_flush(cx)
}

fn into_io(err: WsError) -> io::Error {
    match err {
        WsError::Io(err) => err,
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            io::Error::new(io::ErrorKind::NotConnected, "the WebSocket connection is closed")
        }
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}

/// How a WebSocket client reconnects after losing its connection: after
/// `initial`, doubling up to `max` between attempts, at most `attempts`
/// times (forever when `None`).
///
/// ```
/// # use std::time::Duration;
/// let reconnect = rpc_runtime::transport::ws::Reconnect::default().initial(Duration::from_millis(20)).attempts(Some(50));
/// assert_eq!((reconnect.max, reconnect.attempts), (Duration::from_secs(5), Some(50)));
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
}

impl Reconnect {
    /// The same policy, first waiting `initial`.
    pub fn initial(self, initial: Duration) -> Self {
        Reconnect { initial, ..self }
    }

    /// The same policy, waiting at most `max` between attempts.
    pub fn max(self, max: Duration) -> Self {
        Reconnect { max, ..self }
    }

    /// The same policy, giving up after `attempts` (never when `None`).
    pub fn attempts(self, attempts: Option<u32>) -> Self {
        Reconnect { attempts, ..self }
    }
}

impl Default for Reconnect {
    /// 100 ms, doubling up to 5 s, forever.
    fn default() -> Self {
        Reconnect { initial: Duration::from_millis(100), max: Duration::from_secs(5), attempts: None }
    }
}

/// Where and how a WebSocket client connects: the URL (`ws://host:port/path`,
/// or `wss://` with [`WsConnect::tls`]), headers for the handshake (`Authorization`, say), keep-alive pings and
/// reconnection.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use rpc_runtime::{Peer, transport::{ws::Reconnect, ws::WsConnect}};
/// let peer = Peer::builder()
///     .connect(WsConnect::new("ws://127.0.0.1:8080/").header("authorization", "Bearer s3cret").reconnect(Reconnect::default()))
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct WsConnect {
    url: String,
    headers: Vec<(String, String)>,
    ping_interval: Option<Duration>,
    reconnect: Option<Reconnect>,
    #[cfg(feature = "tls")]
    tls: Option<crate::transport::tls::ClientTls>,
}

impl WsConnect {
    /// A client of `url` (`ws://`; `wss://` with [`WsConnect::tls`], and
    /// the `tls` feature).
    pub fn new(url: impl Into<String>) -> Self {
        WsConnect {
            url: url.into(),
            headers: Vec::new(),
            ping_interval: None,
            reconnect: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Connects to a `wss://` URL with `tls` (the CAs trusted, a client
    /// certificate), checking the server's certificate for the URL's
    /// host (on every reconnection too). Needs the `tls` feature.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: crate::transport::tls::ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Sends header `name: value` with the handshake (and every
    /// reconnection's).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Pings the server this often, and treats a whole interval of
    /// silence after a ping as a lost connection (off by default).
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = Some(interval);
        self
    }

    /// Reconnects when the connection is lost (off by default). Calls in
    /// flight then fail at once with a [`TRANSPORT_ERROR`] error object
    /// saying so (they may or may not have run); calls made later go
    /// through the new connection. A close by this side ends it for good.
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = Some(reconnect);
        self
    }

    async fn open(&self, config: WebSocketConfig) -> io::Result<WebSocketStream<ClientStream>> {
        let uri: http::Uri = self.url.parse().map_err(|err| invalid(format!("`{}` is not a URL: {err}", self.url)))?;
        let port = match uri.scheme_str() {
            Some("ws") => uri.port_u16().unwrap_or(80),
            Some("wss") => uri.port_u16().unwrap_or(443),
            _ => return Err(invalid(format!("`{}` is not a ws:// or wss:// URL", self.url))),
        };
        let host = uri.host().ok_or_else(|| invalid(format!("`{}` has no host", self.url)))?;
        #[cfg(feature = "tls")]
        let tls = match (uri.scheme_str(), &self.tls) {
            (Some("wss"), Some(tls)) => Some((tls, crate::transport::tls::server_name(host)?)),
            (Some("wss"), None) => {
                return Err(invalid(format!(
                    "`{}` is wss://: give the client its TLS settings with WsConnect::tls",
                    self.url
                )));
            }
            _ => None,
        };
        #[cfg(not(feature = "tls"))]
        if uri.scheme_str() == Some("wss") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "wss:// needs the `tls` feature of rpc-runtime (or a TLS proxy in front, and ws://)",
            ));
        }
        let mut request = self.url.as_str().into_client_request().map_err(into_io)?;
        for (name, value) in &self.headers {
            let name = HeaderName::try_from(name.as_str()).map_err(|err| invalid(format!("header `{name}`: {err}")))?;
            let value =
                HeaderValue::try_from(value.as_str()).map_err(|err| invalid(format!("header `{name}`: {err}")))?;
            request.headers_mut().append(name, value);
        }
        let stream = TcpStream::connect((host.trim_start_matches('[').trim_end_matches(']'), port)).await?;
        let _ = stream.set_nodelay(true);
        #[cfg(feature = "tls")]
        let stream = match tls {
            Some((tls, name)) => crate::transport::tls::MaybeTls::Tls(Box::new(tls.connect(stream, &name).await?)),
            None => crate::transport::tls::MaybeTls::Plain(stream),
        };
        match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
            Ok((ws, _)) => Ok(ws),
            Err(WsError::Http(response)) => {
                let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
                let kind = match response.status() {
                    StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => io::ErrorKind::PermissionDenied,
                    _ => io::ErrorKind::ConnectionRefused,
                };
                Err(io::Error::new(
                    kind,
                    format!("the server refused the WebSocket connection: HTTP {}: {}", response.status(), body.trim()),
                ))
            }
            Err(err) => Err(into_io(err)),
        }
    }
}

impl From<&str> for WsConnect {
    fn from(url: &str) -> Self {
        WsConnect::new(url)
    }
}

impl From<String> for WsConnect {
    fn from(url: String) -> Self {
        WsConnect::new(url)
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A connection to a JSON-RPC server over WebSocket, for
/// [`PeerBuilder::connect`]: one message per text frame, both directions
/// (the server may call this side back; give the builder a router with
/// [`PeerBuilder::router`] to answer). The handshake's refusal (401, 403,
/// ...) is an error of kind `PermissionDenied` or `ConnectionRefused`
/// naming the status.
impl Connect for WsConnect {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let target = self;
        let (max, budget) = (builder.limits.max_message_size, builder.limits.max_queued_bytes);
        let ws = target.open(config(max, budget)).await?;
        let reopen = target.reconnect.map(|reconnect| {
            let target = target.clone();
            let reopen: Reopen<ClientStream> = Arc::new(move || {
                let target = target.clone();
                Box::pin(async move { target.open(config(max, budget)).await })
            });
            (reopen, reconnect)
        });
        let (source, sink) = build(ws, target.ping_interval, max, budget, reopen);
        Ok(builder.start(source, sink))
    }
}
