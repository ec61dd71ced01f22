//! The HTTP client: a message transport whose every outgoing message is
//! `POST`ed, and whose incoming messages are the response bodies. A
//! [`Peer`] runs over it unchanged, and so does every generated client
//! (calls, notifications, batches).

use std::io;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{HeaderMap, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::http1;
#[cfg(feature = "http2")]
use hyper::client::conn::http2;
#[cfg(feature = "http2")]
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::peer::{MessageSink, MessageSource, Peer, PeerBuilder, Received};
use crate::transport::listener::Connect;
use crate::transport::replies::{error_reply, request_ids};
use crate::wire::{self, ErrorObject, TRANSPORT_ERROR};

/// A client connection's bytes: TCP, or TLS over it.
type Io = Box<dyn Stream>;

/// What a client connection is read from and written to.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Stream for S {}

/// Kept-alive connections kept for reuse, at most.
const MAX_IDLE: usize = 32;

/// Where and how an HTTP client connects: the URL (`http://host:port/path`,
/// or `https://` with [`HttpConnect::tls`]), headers sent with every
/// request (`Authorization`, say), and the HTTP version: HTTP/1.1 over a
/// pool of kept-alive connections by default, or, with the `http2`
/// feature, HTTP/2 over one connection (`HttpConnect::http2_prior_knowledge`).
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use rpc_runtime::{Peer, transport::http::HttpConnect};
/// let peer = Peer::builder()
///     .connect(HttpConnect::new("http://127.0.0.1:8080/rpc").header("authorization", "Bearer s3cret"))
///     .await?;
/// let difference: i64 = peer.call("subtract", [42, 23]).await.expect("a call");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct HttpConnect {
    url: String,
    headers: Vec<(String, String)>,
    http2: bool,
    #[cfg(feature = "tls")]
    tls: Option<crate::transport::tls::ClientTls>,
}

impl HttpConnect {
    /// A client of `url` (`http://`; `https://` with [`HttpConnect::tls`],
    /// which needs the `tls` feature).
    pub fn new(url: impl Into<String>) -> Self {
        HttpConnect {
            url: url.into(),
            headers: Vec::new(),
            http2: false,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Connects to an `https://` URL with `tls` (the CAs trusted, a client
    /// certificate), checking the server's certificate for the URL's
    /// host. Needs the `tls` feature. With
    /// [`http2_prior_knowledge`](HttpConnect::http2_prior_knowledge) it
    /// offers `h2` by ALPN.
    #[cfg(feature = "tls")]
    #[must_use = "a builder does nothing until used"]
    pub fn tls(mut self, tls: crate::transport::tls::ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Speaks HTTP/2 without asking first (h2c with prior knowledge, as
    /// `curl --http2-prior-knowledge` does): every request is a stream of
    /// one connection, concurrent calls multiplexed on it (at most the
    /// server's `max_concurrent_streams` at once; more wait for a stream
    /// once the server's settings arrived, and fail as refused if sent
    /// before: a burst past the limit within the first round trip). The
    /// server must serve HTTP/2, as this crate's
    /// [`HttpListener`](super::HttpListener) does; a new connection is
    /// made when the server closed the last one (after it was idle, say).
    #[cfg(feature = "http2")]
    #[must_use = "a builder does nothing until used"]
    pub fn http2_prior_knowledge(mut self) -> Self {
        self.http2 = true;
        self
    }

    /// Sends header `name: value` with every request.
    #[must_use = "a builder does nothing until used"]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl From<&str> for HttpConnect {
    fn from(url: &str) -> Self {
        HttpConnect::new(url)
    }
}

impl From<String> for HttpConnect {
    fn from(url: String) -> Self {
        HttpConnect::new(url)
    }
}

/// What every request of one client shares: the target, the headers and
/// the idle connections.
struct Target {
    uri: Uri,
    authority: String,
    /// For `https://`: the TLS settings and the name the server's
    /// certificate must be for.
    #[cfg(feature = "tls")]
    tls: Option<(crate::transport::tls::ClientTls, tokio_rustls::rustls::pki_types::ServerName<'static>)>,
    headers: HeaderMap,
    max_body: usize,
    connections: Connections,
}

/// The connections of one client.
enum Connections {
    /// HTTP/1.1: kept-alive connections, each free for one request.
    Http1(Mutex<Vec<http1::SendRequest<Full<Bytes>>>>),
    /// HTTP/2: one connection for every request (made again when it
    /// closed), behind a lock held while one is being made.
    #[cfg(feature = "http2")]
    Http2(tokio::sync::Mutex<Option<http2::SendRequest<Full<Bytes>>>>),
}

/// The receiving half of the HTTP client: the bodies of the answers.
pub struct HttpSource {
    replies: mpsc::UnboundedReceiver<Vec<u8>>,
    current: Vec<u8>,
}

impl std::fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSource").finish_non_exhaustive()
    }
}

/// The sending half of the HTTP client: each message is one `POST`, sent
/// on its own task (calls run concurrently over a pool of kept-alive
/// connections).
pub struct HttpSink {
    target: Arc<Target>,
    scratch: Vec<u8>,
    /// Messages to post, each with headers of its own (its span's trace
    /// context), if any.
    queue: Vec<(Vec<u8>, Option<HeaderMap>)>,
    /// The headers of the message appended next.
    next_headers: Option<HeaderMap>,
    queued: usize,
    /// Dropped on close: the source ends once every answer is in.
    replies: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl std::fmt::Debug for HttpSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSink").finish_non_exhaustive()
    }
}

impl HttpConnect {
    /// The client's two halves, for a [`Transport`](crate::transport::Transport).
    /// Bodies of answers are limited to `max_body` bytes.
    pub fn transport(self, max_body: usize) -> io::Result<(HttpSource, HttpSink)> {
        let uri: Uri = self.url.parse().map_err(|err| invalid(format!("`{}` is not a URL: {err}", self.url)))?;
        let default_port = match uri.scheme_str() {
            Some("http") => 80,
            Some("https") => 443,
            _ => return Err(invalid(format!("`{}` is not an http:// or https:// URL", self.url))),
        };
        let Some(authority) = uri.authority() else {
            return Err(invalid(format!("`{}` has no host", self.url)));
        };
        #[cfg(feature = "tls")]
        let tls = match (uri.scheme_str(), self.tls) {
            (Some("https"), Some(tls)) => {
                // HTTP/2 over TLS is chosen by ALPN.
                #[cfg(feature = "http2")]
                let tls = if self.http2 { tls.with_alpn(&[b"h2"]) } else { tls };
                Some((tls, crate::transport::tls::server_name(authority.host())?))
            }
            (Some("https"), None) => {
                return Err(invalid(format!(
                    "`{}` is https://: give the client its TLS settings with HttpConnect::tls",
                    self.url
                )));
            }
            _ => None,
        };
        #[cfg(not(feature = "tls"))]
        if default_port == 443 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "https:// needs the `tls` feature of rpc-runtime (or a TLS proxy in front, and http://)",
            ));
        }
        let authority = match authority.port() {
            Some(_) => authority.as_str().to_owned(),
            None => format!("{}:{default_port}", authority.host()),
        };
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::try_from(name.as_str()).map_err(|err| invalid(format!("header `{name}`: {err}")))?;
            let value =
                HeaderValue::try_from(value.as_str()).map_err(|err| invalid(format!("header `{name}`: {err}")))?;
            headers.append(name, value);
        }
        let connections = match self.http2 {
            #[cfg(feature = "http2")]
            true => Connections::Http2(tokio::sync::Mutex::new(None)),
            _ => Connections::Http1(Mutex::new(Vec::new())),
        };
        let target = Arc::new(Target {
            uri,
            authority,
            #[cfg(feature = "tls")]
            tls,
            headers,
            max_body,
            connections,
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = HttpSink {
            target,
            scratch: Vec::new(),
            queue: Vec::new(),
            next_headers: None,
            queued: 0,
            replies: Some(tx),
        };
        Ok((HttpSource { replies: rx, current: Vec::new() }, sink))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A connection to a JSON-RPC server over HTTP, for
/// [`PeerBuilder::connect`]: every call (or batch, or notification) is one
/// `POST` to the URL, and the answer comes back in its response.
///
///
/// HTTP is request/response only: the server cannot call this side
/// back. An answer other than 200 or 204 fails each call in the
/// message with a [`TRANSPORT_ERROR`] error object naming the status
/// (`data`: `{"httpStatus": 401}`, read by
/// [`ClientError::http_status`](crate::ClientError::http_status)), unless
/// its body is the JSON-RPC answer to every call in the message (an OAuth
/// resource server's 403 carries the -32003 refusal so): the calls then
/// get that answer. A request that could not be sent, or whose answer
/// could not be read, fails each call with a [`TRANSPORT_ERROR`] too
/// (`data`: `{"transport": "http"}`).
impl Connect for HttpConnect {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let (source, sink) = self.transport(builder.limits.max_message_size)?;
        Ok(builder.start(source, sink))
    }
}

impl MessageSource for HttpSource {
    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        match self.replies.recv().await {
            Some(reply) => {
                self.current = reply;
                Ok(Some(Received::Message(&self.current)))
            }
            None => Ok(None),
        }
    }

    fn recv_ready(&mut self) -> Option<Received<'_>> {
        self.current = self.replies.try_recv().ok()?;
        Some(Received::Message(&self.current))
    }
}

impl MessageSink for HttpSink {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if self.scratch.len() > start {
            let message = self.scratch.split_off(start);
            self.queued += message.len();
            self.queue.push((message, self.next_headers.take()));
        }
    }

    #[cfg(feature = "otel")]
    fn trace_next(&mut self, trace: &crate::otel::TraceContext) {
        trace.write_headers(self.next_headers.get_or_insert_with(HeaderMap::new));
    }

    fn queued(&self) -> usize {
        self.queued
    }

    async fn flush(&mut self) -> io::Result<()> {
        let Some(replies) = &self.replies else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the HTTP client is closed"));
        };
        // Each message is sent on its own task: nothing is left in the
        // future, so dropping it loses nothing.
        for (message, headers) in self.queue.drain(..) {
            tokio::spawn(exchange(Arc::clone(&self.target), message, headers, replies.clone()));
        }
        self.queued = 0;
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        let flushed = self.flush().await;
        self.replies = None;
        flushed
    }
}

/// Posts `message`; hands the answer (or an error answer for each call in
/// it) to `replies`.
async fn exchange(
    target: Arc<Target>,
    message: Vec<u8>,
    headers: Option<HeaderMap>,
    replies: mpsc::UnboundedSender<Vec<u8>>,
) {
    let failure = match target.post(&message, headers.as_ref()).await {
        Ok((StatusCode::OK, body)) if body.is_empty() => return,
        Ok((StatusCode::OK, body)) => {
            let _ = replies.send(body.to_vec());
            return;
        }
        Ok((StatusCode::NO_CONTENT, _)) => return,
        // The server's own JSON-RPC answer, in an error status: what it
        // says is more precise than the status (an OAuth 403's -32003
        // names the scopes required).
        Ok((status, body)) if answers_every_call(&message, &body) => {
            tracing::debug!(%status, "an HTTP error status carried the JSON-RPC answer");
            let _ = replies.send(body.to_vec());
            return;
        }
        Ok((status, body)) => {
            let text = String::from_utf8_lossy(&body);
            let text = text.trim();
            let mut reason = format!("HTTP {status}");
            if !text.is_empty() {
                reason.push_str(": ");
                reason.extend(text.chars().take(200));
            }
            #[derive(serde::Serialize)]
            struct Data {
                #[serde(rename = "httpStatus")]
                http_status: u16,
            }
            ErrorObject::new(TRANSPORT_ERROR, reason).with_data(&Data { http_status: status.as_u16() })
        }
        Err(err) => ErrorObject::new(TRANSPORT_ERROR, format!("the HTTP request failed: {err}"))
            .with_data(&serde_json::json!({"transport": "http"})),
    };
    tracing::debug!(error = %failure, "an HTTP exchange failed");
    for id in request_ids(&message) {
        let _ = replies.send(error_reply(&id, &failure));
    }
}

/// Whether `body` is a JSON-RPC answer (one response, or a batch of them)
/// to every request in `message`, matched by id: only then can it stand
/// for the calls' answers, none of them left waiting.
fn answers_every_call(message: &[u8], body: &[u8]) -> bool {
    let asked = request_ids(message);
    let Some(text) = wire::message::text(body) else { return false };
    let answered: Vec<&str> = if wire::message::is_batch(text) {
        match serde_json::from_str::<Vec<wire::message::Message<'_>>>(text) {
            Ok(batch) => batch
                .iter()
                .filter(|entry| entry.is_response())
                .filter_map(|entry| entry.id.map(RawValue::get))
                .collect(),
            Err(_) => return false,
        }
    } else {
        match serde_json::from_str::<wire::message::Message<'_>>(text) {
            Ok(one) if one.is_response() => one.id.map(RawValue::get).into_iter().collect(),
            _ => return false,
        }
    };
    !asked.is_empty() && asked.iter().all(|id| answered.contains(&&**id))
}

impl Target {
    /// One `POST`, with `extra` headers beside the client's: the status
    /// and body of the answer.
    async fn post(&self, message: &[u8], extra: Option<&HeaderMap>) -> io::Result<(StatusCode, Bytes)> {
        let body = Bytes::copy_from_slice(message);
        match &self.connections {
            Connections::Http1(idle) => {
                let (response, sender) = self.send_http1(idle, body, extra).await?;
                let answer = self.read(response).await?;
                self.checkin(idle, sender);
                Ok(answer)
            }
            #[cfg(feature = "http2")]
            Connections::Http2(shared) => {
                let response = self.send_http2(shared, body, extra).await?;
                self.read(response).await
            }
        }
    }

    /// Sends one request over HTTP/1.1: its response, and the connection
    /// to put back once the body is read.
    async fn send_http1(
        &self,
        idle: &Mutex<Vec<http1::SendRequest<Full<Bytes>>>>,
        body: Bytes,
        extra: Option<&HeaderMap>,
    ) -> io::Result<(http::Response<Incoming>, http1::SendRequest<Full<Bytes>>)> {
        let (mut sender, reused) = self.checkout(idle).await?;
        match sender.try_send_request(self.request(body.clone(), extra)?).await {
            Ok(response) => Ok((response, sender)),
            // A kept-alive connection the server closed meanwhile: the
            // request was not sent, so sending it again is safe.
            Err(err) if reused && err.message().is_some() => {
                let mut fresh = self.connect_http1().await?;
                let response = fresh.send_request(self.request(body, extra)?).await.map_err(io::Error::other)?;
                Ok((response, fresh))
            }
            Err(err) => Err(io::Error::other(err.into_error())),
        }
    }

    /// Sends one request as a stream of the HTTP/2 connection.
    #[cfg(feature = "http2")]
    async fn send_http2(
        &self,
        shared: &tokio::sync::Mutex<Option<http2::SendRequest<Full<Bytes>>>>,
        body: Bytes,
        extra: Option<&HeaderMap>,
    ) -> io::Result<http::Response<Incoming>> {
        let mut sender = self.http2_connection(shared).await?;
        match sender.try_send_request(self.request(body.clone(), extra)?).await {
            Ok(response) => Ok(response),
            // The connection closed before the stream was opened (the
            // server's GOAWAY after it was idle, say): the request was not
            // sent, so sending it again on a new connection is safe.
            Err(err) if err.message().is_some() => {
                let mut fresh = self.http2_connection(shared).await?;
                fresh.send_request(self.request(body, extra)?).await.map_err(io::Error::other)
            }
            Err(err) => Err(io::Error::other(err.into_error())),
        }
    }

    /// The status and body (within `max_body`) of a response.
    async fn read(&self, response: http::Response<Incoming>) -> io::Result<(StatusCode, Bytes)> {
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, self.max_body)
            .collect()
            .await
            .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, format!("reading the answer failed: {err}")))?;
        Ok((parts.status, body.to_bytes()))
    }

    fn request(&self, body: Bytes, extra: Option<&HeaderMap>) -> io::Result<Request<Full<Bytes>>> {
        let mut request = match &self.connections {
            // HTTP/2 takes the full URI (its `:scheme` and `:authority`).
            #[cfg(feature = "http2")]
            Connections::Http2(_) => Request::post(self.uri.clone()),
            Connections::Http1(_) => {
                let path = self.uri.path_and_query().map_or("/", |path| path.as_str());
                Request::post(path)
                    .header(header::HOST, self.uri.authority().map_or("", |authority| authority.as_str()))
            }
        }
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json")
        .body(Full::new(body))
        .map_err(io::Error::other)?;
        for (name, value) in &self.headers {
            request.headers_mut().append(name, value.clone());
        }
        // The message's own (its trace context) replace the client's.
        for (name, value) in extra.into_iter().flatten() {
            request.headers_mut().insert(name, value.clone());
        }
        Ok(request)
    }

    /// An idle kept-alive connection, or a new one; and whether it was
    /// reused.
    async fn checkout(
        &self,
        idle: &Mutex<Vec<http1::SendRequest<Full<Bytes>>>>,
    ) -> io::Result<(http1::SendRequest<Full<Bytes>>, bool)> {
        loop {
            let idle = idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
            match idle {
                Some(mut sender) => {
                    if sender.is_closed() {
                        continue;
                    }
                    if std::future::poll_fn(|cx| sender.poll_ready(cx)).await.is_ok() {
                        return Ok((sender, true));
                    }
                }
                None => return Ok((self.connect_http1().await?, false)),
            }
        }
    }

    /// A connection to the server: TCP, or TLS over it for `https://`.
    async fn dial(&self) -> io::Result<TokioIo<Io>> {
        let stream = TcpStream::connect(&self.authority).await?;
        let _ = stream.set_nodelay(true);
        #[cfg(feature = "tls")]
        if let Some((tls, name)) = &self.tls {
            return Ok(TokioIo::new(Box::new(tls.connect(stream, name).await?)));
        }
        Ok(TokioIo::new(Box::new(stream)))
    }

    async fn connect_http1(&self) -> io::Result<http1::SendRequest<Full<Bytes>>> {
        let (sender, connection) = http1::handshake(self.dial().await?).await.map_err(io::Error::other)?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, "an HTTP client connection ended with an error");
            }
        });
        Ok(sender)
    }

    /// The HTTP/2 connection, made (again) if there is none open.
    #[cfg(feature = "http2")]
    async fn http2_connection(
        &self,
        shared: &tokio::sync::Mutex<Option<http2::SendRequest<Full<Bytes>>>>,
    ) -> io::Result<http2::SendRequest<Full<Bytes>>> {
        let mut shared = shared.lock().await;
        if let Some(sender) = shared.as_ref().filter(|sender| !sender.is_closed()) {
            return Ok(sender.clone());
        }
        let (sender, connection) =
            http2::handshake(TokioExecutor::new(), self.dial().await?).await.map_err(io::Error::other)?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, "an HTTP/2 client connection ended with an error");
            }
        });
        *shared = Some(sender.clone());
        Ok(sender)
    }

    fn checkin(&self, idle: &Mutex<Vec<http1::SendRequest<Full<Bytes>>>>, sender: http1::SendRequest<Full<Bytes>>) {
        if sender.is_closed() {
            return;
        }
        let mut idle = idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }
}
