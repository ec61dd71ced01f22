//! The client side of WebSocket: [`WsConnect`], where and how to
//! connect (URL, handshake headers, TLS, pings, reconnection), the
//! handshake itself, and the [`Connect`] that starts a peer on it.
//!
//! Apart from the server because the two share only the framing
//! (`socket`, `source`, `sink`): the client opens its own TCP (or TLS)
//! connection and makes its own handshake, and only it reconnects.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use http::header::{HeaderName, HeaderValue};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::reconnect::Reopen;
use super::socket::{build, config, into_io};
use crate::peer::{Peer, PeerBuilder};
use crate::transport::listener::Connect;
use crate::transport::reconnect::Reconnect;

/// The client's socket: TCP, or (`wss://`) TLS over it.
#[cfg(feature = "tls")]
type ClientStream = crate::transport::tls::MaybeTls;
#[cfg(not(feature = "tls"))]
type ClientStream = TcpStream;

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
    #[must_use = "a builder does nothing until used"]
    pub fn tls(mut self, tls: crate::transport::tls::ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Sends header `name: value` with the handshake (and every
    /// reconnection's).
    #[must_use = "a builder does nothing until used"]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Pings the server this often, and treats a whole interval of
    /// silence after a ping as a lost connection (off by default).
    #[must_use = "a builder does nothing until used"]
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = Some(interval);
        self
    }

    /// Reconnects when the connection is lost (off by default). Calls in
    /// flight then fail at once with a [`TRANSPORT_ERROR`](crate::wire::TRANSPORT_ERROR) error object
    /// saying so (`data`: `{"transport": "ws"}`; they may or may not have
    /// run), which displays as "the WebSocket connection was lost...";
    /// calls made later go through the new connection. Subscriptions made
    /// on the lost connection are made again on the new one, each stream
    /// yielding [`ClientError::Resubscribed`](crate::ClientError::Resubscribed)
    /// first (items may have been missed). A close by this side ends it for
    /// good.
    #[must_use = "a builder does nothing until used"]
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
        // The span current when connecting: the server parents every call
        // on the connection with it.
        #[cfg(feature = "otel")]
        if let Some(trace) = crate::otel::TraceContext::current() {
            trace.write_headers(request.headers_mut());
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
