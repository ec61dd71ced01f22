//! The Streamable HTTP endpoint's settings, and the endpoint as a
//! standalone listener on the HTTP transport's (connection limit, header
//! timeout, graceful shutdown).

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use tokio::net::{TcpListener, ToSocketAddrs};

use super::store::{SessionStore, SharedStore};
use super::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, McpBody, McpHttpService};
use crate::transport::http::{ConnectionSlot, Endpoint, Http, HttpAddrs, HttpService, serve_listener};
use crate::transport::listener::{Listener, Shutdown};
use crate::transport::server::Server;

/// The settings of MCP's Streamable HTTP endpoint: its HTTP settings and
/// its sessions. `Default` for the defaults ([`DEFAULT_MAX_SESSIONS`],
/// [`DEFAULT_SESSION_IDLE_TIMEOUT`], [`Http::default`]). Make a listener
/// with [`McpHttp::bind`] or [`McpHttp::listener`] for
/// [`Server::serve`](crate::Server::serve) (on a server made by
/// [`McpServer::into_server`](super::super::McpServer::into_server)), or the
/// tower service for axum with [`McpHttp::service`].
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{mcp::{McpHttp, McpServer}, transport::http::Http};
/// let http = Http::default().allowed_origins(["https://app.example.com"]);
/// let listener = McpHttp::default().http(http).max_sessions(100).bind("127.0.0.1:8080").await?;
/// McpServer::new(router).into_server().serve(listener).await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct McpHttp {
    pub(super) http: Http,
    pub(super) max_sessions: usize,
    pub(super) session_idle_timeout: Duration,
    pub(super) store: Option<SharedStore>,
}

impl Default for McpHttp {
    fn default() -> Self {
        McpHttp {
            http: Http::default(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            store: None,
        }
    }
}

impl McpHttp {
    /// Other HTTP settings: allowed hosts and origins, body limit,
    /// timeouts (see [`Http`]).
    ///
    /// With the `cors` feature, `Http::cors(origins)` lets web pages of
    /// those origins (a browser-based MCP client) call the endpoint: CORS
    /// preflights are answered for `POST` and `DELETE` with MCP's request
    /// headers (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`, `Last-Event-ID`, plus `Content-Type`, `Accept` and
    /// `Authorization`), and answers expose `Mcp-Session-Id` to the page.
    #[must_use = "a builder does nothing until used"]
    pub fn http(self, http: Http) -> Self {
        McpHttp { http, ..self }
    }

    /// At most `max` sessions open at once (default
    /// [`DEFAULT_MAX_SESSIONS`]); one more `initialize` is answered 503
    /// unless an idle session can be ended.
    #[must_use = "a builder does nothing until used"]
    pub fn max_sessions(self, max: usize) -> Self {
        McpHttp { max_sessions: max.max(1), ..self }
    }

    /// A session without requests for `timeout` ends (default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`]); its next request gets 404.
    #[must_use = "a builder does nothing until used"]
    pub fn session_idle_timeout(self, timeout: Duration) -> Self {
        McpHttp { session_idle_timeout: timeout, ..self }
    }

    /// Keeps the sessions of the handshake revisions in `store`, which
    /// every replica of the server shares, so that a load balancer may
    /// send each request to any of them (no sticky sessions). Without
    /// one, sessions live in this endpoint's memory only, and a request
    /// reaching another replica gets 404.
    ///
    /// Each request that names a session loads its [`SessionRecord`]
    /// (the revision, the client's capabilities, the log level,
    /// subscriptions, the OAuth owner) and a session that changed is
    /// written back before its answer goes out. The store bounds how many
    /// sessions exist and when they expire (see [`SessionStore`]);
    /// [`max_sessions`](McpHttp::max_sessions) still bounds the sessions
    /// this endpoint holds calls and streams for at once (503 past it),
    /// and [`session_idle_timeout`](McpHttp::session_idle_timeout) which
    /// of those it may let go when full.
    ///
    /// What cannot travel in a record stays with the replica that has it:
    /// `notifications/cancelled` cancels a call only on the replica that
    /// runs it, a request for input (elicitation, sampling) is answered
    /// only through the replica whose call asked, the session's `GET`
    /// stream carries what its own replica sends, and a session's running
    /// calls are bounded per replica. `DELETE` ends the session
    /// everywhere, and cancels its calls on the replica it reached (the
    /// others notice at their next request for it).
    ///
    /// ```no_run
    /// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
    /// use rpc_runtime::mcp::{McpHttp, McpServer, MemoryStore};
    /// let store = MemoryStore::default(); // or a store on a shared database
    /// let settings = McpHttp::default().session_store(store.clone());
    /// McpServer::new(router).into_server().serve(settings.bind("127.0.0.1:8080").await?).await
    /// # }
    /// ```
    ///
    /// [`SessionRecord`]: super::SessionRecord
    #[must_use = "a builder does nothing until used"]
    pub fn session_store(self, store: impl SessionStore) -> Self {
        McpHttp { store: Some(SharedStore(std::sync::Arc::new(store))), ..self }
    }

    /// The endpoint of `server` (made by
    /// [`McpServer::into_server`](super::super::McpServer::into_server)) as
    /// a tower service, with a session table of its own (see
    /// [`McpHttpService`]).
    pub fn service(&self, server: &Server) -> McpHttpService {
        McpHttpService::new(server, self)
    }

    /// Binds `addr` for [`Server::serve`](crate::Server::serve) with these
    /// settings.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<McpHttpListener> {
        Ok(self.listener(TcpListener::bind(addr).await?))
    }

    /// Serves the endpoint on `listener` with these settings, for
    /// [`Server::serve`](crate::Server::serve).
    pub fn listener(self, listener: TcpListener) -> McpHttpListener {
        McpHttpListener { mcp: self, listener }
    }
}

/// A TCP listener serving MCP's Streamable HTTP endpoint (on every path:
/// mount [`McpHttpService`] in axum to give it one), for
/// [`Server::serve`](crate::Server::serve). It shuts down gracefully as an
/// [`HttpListener`](crate::transport::http::HttpListener) does: the calls
/// running are answered (event streams included), then every connection
/// closes. At most the server's `max_connections` are open at once; one
/// more is answered 503.
#[derive(Debug)]
pub struct McpHttpListener {
    mcp: McpHttp,
    listener: TcpListener,
}

impl McpHttpListener {
    /// The local address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }
}

impl Listener for McpHttpListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        serve_listener(self.mcp.service(&server), self.listener, &shutdown).await
    }
}

/// The standalone server's drain signal, in each request it accepted.
#[derive(Clone)]
pub(crate) struct Drain(pub(crate) Arc<crate::dispatch::signal::Signal>);

impl Endpoint for McpHttpService {
    type Body = McpBody;

    fn http(&self) -> &HttpService {
        &self.http
    }

    fn respond(
        &self,
        mut request: Request<Incoming>,
        addrs: HttpAddrs,
        slot: &ConnectionSlot,
    ) -> impl Future<Output = Response<McpBody>> + Send {
        request.extensions_mut().insert(addrs);
        // Calls that would run forever (`subscriptions/listen`) end when
        // the server drains.
        request.extensions_mut().insert(Drain(Arc::clone(&slot.drain)));
        // Through the tower service: CORS first, when configured.
        let mut service = self.clone();
        async move { tower_service::Service::call(&mut service, request).await.unwrap_or_else(|never| match never {}) }
    }
}
