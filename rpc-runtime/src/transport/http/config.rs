//! [`Http`], the settings of the HTTP transport: the builder users call,
//! its defaults, and the two ways out of it (a listener, a tower service).
//!
//! Only the settings live here, so that every knob and its documented
//! default read in one place; the handler (`service`), the Host and Origin
//! checks (`origin`) and the standalone server (`serve`) read the fields.
//! The WebSocket setters are here too (behind the `ws` feature): they
//! change `Http`, and a user looks for them on `Http`'s page.

use std::io;
use std::time::Duration;

#[cfg(feature = "cors")]
use http::Method;
#[cfg(feature = "cors")]
use http::header::{self, HeaderValue};
use tokio::net::{TcpListener, ToSocketAddrs};

use super::origin::HostCheck;
use super::serve::HttpListener;
use super::service::HttpService;
use crate::transport::server::Server;

/// Default time a client has to send a request's headers (and, between
/// requests on a kept-alive connection, to start the next one).
const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a client has to send a request's body once its headers
/// arrived.
const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of requests an HTTP/2 connection may have in progress
/// at once (its concurrent streams).
pub const DEFAULT_MAX_CONCURRENT_STREAMS: u32 = 100;

/// The settings of the HTTP transport (and, with the `ws` feature, of
/// WebSocket upgrades on it): a builder, `Default` for the defaults below.
/// Make a listener with [`Http::bind`] or [`Http::listener`] for
/// [`Server::serve`], or the tower service to mount in axum with
/// [`Http::service`].
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Server, transport::http::Http};
/// let listener = Http::default().allowed_origins(["https://app.example.com"]).bind("127.0.0.1:8080").await?;
/// println!("serving on {}", listener.local_addr()?);
/// Server::new(router).serve(listener).await
/// # }
/// ```
///
/// Security defaults: a server bound to a loopback address serves only
/// the loopback host names (`localhost`, `127.0.0.1`, `[::1]`), against
/// DNS rebinding; an `Origin` header (sent by browsers) must be the
/// request's own origin or an allowed one; CORS is off until
/// configured; bodies are limited to the engine's `max_message_size`;
/// headers must arrive within 10 s and bodies within 30 s.
#[derive(Clone, Debug)]
pub struct Http {
    pub(super) hosts: HostCheck,
    pub(super) origins: Vec<String>,
    pub(super) any_origin: bool,
    pub(super) max_body: Option<usize>,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_concurrent_streams: u32,
    #[cfg(feature = "ws")]
    pub(crate) ws: crate::transport::ws::WsServerOptions,
    #[cfg(feature = "cors")]
    pub(crate) cors: Option<tower_http::cors::CorsLayer>,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<crate::transport::tls::ServerTls>,
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<std::sync::Arc<super::oauth::ResourceServer>>,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            hosts: HostCheck::Auto,
            origins: Vec::new(),
            any_origin: false,
            max_body: None,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            #[cfg(feature = "ws")]
            ws: Default::default(),
            #[cfg(feature = "cors")]
            cors: None,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

impl Http {
    /// The tower service of `server` with these settings, to mount in
    /// axum or any hyper-based server (see [`HttpService`]).
    pub fn service(&self, server: &Server) -> HttpService {
        HttpService::new(server.clone(), self.clone())
    }

    /// Binds `addr` for [`Server::serve`] with these settings (port 0: an
    /// address the system picks; read it with [`HttpListener::local_addr`]).
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<HttpListener> {
        Ok(self.listener(TcpListener::bind(addr).await?))
    }

    /// Serves HTTP on `listener` with these settings, for [`Server::serve`].
    pub fn listener(self, listener: TcpListener) -> HttpListener {
        HttpListener { http: self, listener }
    }

    #[must_use]
    fn with_config(mut self, change: impl FnOnce(&mut Http)) -> Self {
        change(&mut self);
        self
    }

    /// Serves requests whose `Host` is one of `hosts` (`example.com`
    /// matches any port, `example.com:8080` only that one). On a local
    /// server the loopback names stay allowed.
    #[must_use = "a builder does nothing until used"]
    pub fn allowed_hosts<I, S>(self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let hosts = hosts.into_iter().map(|host| host.into().to_ascii_lowercase()).collect();
        self.with_config(|config| config.hosts = HostCheck::Only(hosts))
    }

    /// Serves any `Host`, even on a loopback address (turns DNS rebinding
    /// protection off).
    #[must_use = "a builder does nothing until used"]
    pub fn allow_any_host(self) -> Self {
        self.with_config(|config| config.hosts = HostCheck::Any)
    }

    /// Accepts requests (and WebSocket upgrades) from web pages of these
    /// origins (`https://app.example.com`), besides same-origin ones.
    #[must_use = "a builder does nothing until used"]
    pub fn allowed_origins<I, S>(self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origins = origins.into_iter().map(|origin| origin.into().to_ascii_lowercase()).collect();
        self.with_config(|config| config.origins = origins)
    }

    /// Accepts any `Origin` (turns the cross-site check off).
    #[must_use = "a builder does nothing until used"]
    pub fn allow_any_origin(self) -> Self {
        self.with_config(|config| config.any_origin = true)
    }

    /// The largest body accepted, in bytes (default: the engine's
    /// `max_message_size`, 10 MiB).
    #[must_use = "a builder does nothing until used"]
    pub fn max_body(self, bytes: usize) -> Self {
        self.with_config(|config| config.max_body = Some(bytes))
    }

    /// How long a client may take to send a request's headers, and to
    /// start the next request on a kept-alive connection (default 10 s);
    /// past it the connection is closed. Keeps slow clients from holding
    /// connections. On HTTP/1.1 it is hyper's `header_read_timeout`; an
    /// HTTP/2 connection has it to open its first stream, and again
    /// whenever none is open (then it is told `GOAWAY` and closed).
    /// (Mounted in another server, such as axum's, that server's own
    /// settings apply.)
    #[must_use = "a builder does nothing until used"]
    pub fn header_timeout(self, timeout: Duration) -> Self {
        self.with_config(|config| config.header_timeout = timeout)
    }

    /// How long a client may take to send a body once its headers
    /// arrived (default 30 s); past it the answer is 408.
    #[must_use = "a builder does nothing until used"]
    pub fn body_timeout(self, timeout: Duration) -> Self {
        self.with_config(|config| config.body_timeout = timeout)
    }

    /// How many requests one HTTP/2 connection may have in progress at
    /// once (default [`DEFAULT_MAX_CONCURRENT_STREAMS`], 100): the
    /// server announces it (`SETTINGS_MAX_CONCURRENT_STREAMS`), and a
    /// client that opens more streams has them refused (`REFUSED_STREAM`,
    /// safe to retry). An HTTP/1.1 connection has one request in progress
    /// at a time. At least 1. (Mounted in another server, such as axum's,
    /// that server's own settings apply.)
    #[must_use = "a builder does nothing until used"]
    pub fn max_concurrent_streams(self, max: u32) -> Self {
        self.with_config(|config| config.max_concurrent_streams = max.max(1))
    }

    /// Answers CORS preflights and adds CORS headers for web pages of
    /// `origins` (which are also allowed by the Origin check), for
    /// `POST` with `Content-Type` and `Authorization` headers. Off by
    /// default. Needs the `cors` feature.
    #[cfg(feature = "cors")]
    #[must_use = "a builder does nothing until used"]
    pub fn cors<I, S>(self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origins: Vec<String> = origins.into_iter().map(|origin| origin.into().to_ascii_lowercase()).collect();
        let values: Vec<HeaderValue> = origins.iter().filter_map(|origin| HeaderValue::from_str(origin).ok()).collect();
        let layer = tower_http::cors::CorsLayer::new()
            .allow_origin(values)
            .allow_methods([Method::POST])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION]);
        self.with_config(|config| {
            config.origins.extend(origins);
            config.cors = Some(layer);
        })
    }

    /// Serves HTTPS (and, with the `ws` feature, WSS) with `tls` on the
    /// listeners made with these settings ([`Http::bind`],
    /// [`Http::listener`], MCP's Streamable HTTP listener): a connection
    /// is served only once its TLS handshake is done, within the
    /// [header timeout](Http::header_timeout); a plain-text request is
    /// not served. ALPN offers what the listener serves (`http/1.1`)
    /// unless `tls` names protocols of its own. A client certificate (see
    /// [`ServerTls::client_auth`](crate::transport::tls::ServerTls::client_auth))
    /// reaches the connection hook as a
    /// [`PeerCertificates`](crate::transport::tls::PeerCertificates) part.
    /// (Mounted in another server with [`Http::service`], TLS is that
    /// server's.) Needs the `tls` feature.
    #[cfg(feature = "tls")]
    #[must_use = "a builder does nothing until used"]
    pub fn tls(self, tls: crate::transport::tls::ServerTls) -> Self {
        let tls = tls.with_default_alpn(super::serve::ALPN);
        self.with_config(|config| config.tls = Some(tls))
    }

    /// Whether WebSocket upgrades are accepted (default: yes, with the
    /// `ws` feature).
    #[cfg(feature = "ws")]
    #[must_use = "a builder does nothing until used"]
    pub fn websocket(self, enabled: bool) -> Self {
        self.with_config(|config| config.ws.enabled = enabled)
    }

    /// Pings every WebSocket client this often, and closes a connection
    /// that answered nothing (no pong, no message) for a whole interval
    /// (default 30 s; `None` turns pings off).
    #[cfg(feature = "ws")]
    #[must_use = "a builder does nothing until used"]
    pub fn ws_ping_interval(self, interval: Option<Duration>) -> Self {
        self.with_config(|config| config.ws.ping_interval = interval)
    }

    /// Protects the service as an OAuth 2.1 resource server: every
    /// request needs a bearer token that `resource` accepts, whose scopes
    /// become the caller's permissions, and the RFC 9728 metadata is
    /// served at its well-known path (see [`oauth`](super::oauth)). The
    /// connection hook, if any, runs after the token was accepted. Needs
    /// the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[must_use = "a builder does nothing until used"]
    pub fn oauth(self, resource: super::oauth::ResourceServer) -> Self {
        let resource = std::sync::Arc::new(resource);
        self.with_config(|config| config.oauth = Some(resource))
    }

    /// The CORS layer [`Http::cors`] configured, if any.
    #[cfg(all(feature = "cors", feature = "mcp"))]
    pub(crate) fn cors_layer(&self) -> Option<&tower_http::cors::CorsLayer> {
        self.cors.as_ref()
    }
}
