//! The Streamable HTTP endpoint as a standalone server, on the HTTP
//! transport's listener (connection limit, header timeout, graceful
//! shutdown).

use std::future::Future;
use std::io;

use http::{Request, Response};
use hyper::body::Incoming;
use tokio::net::{TcpListener, ToSocketAddrs};

use super::{McpBody, McpHttpService};
use crate::transport::http::{serve_listener, Endpoint, HttpAddrs, HttpService, Serving};

impl McpHttpService {
    /// Binds `addr` and serves the endpoint on it, forever (on every
    /// path: mount it in axum to give it one).
    pub async fn serve(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        self.serve_with_shutdown(addr, std::future::pending()).await
    }

    /// Binds `addr` and serves until `shutdown` completes.
    pub async fn serve_with_shutdown(
        self,
        addr: impl ToSocketAddrs,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_listener_with_shutdown(listener, shutdown).await
    }

    /// Serves every connection accepted on `listener` until `shutdown`
    /// completes, then shuts down gracefully as
    /// [`HttpService::serve_listener_with_shutdown`](crate::HttpService::serve_listener_with_shutdown)
    /// does: the calls running are answered (event streams included), then
    /// every connection closes. At most the server's `max_connections`
    /// are open at once; one more is answered 503.
    pub async fn serve_listener_with_shutdown(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        serve_listener(self, listener, shutdown).await
    }
}

impl Endpoint for McpHttpService {
    type Body = McpBody;

    fn http(&self) -> &HttpService {
        &self.http
    }

    fn respond(
        &self,
        mut request: Request<Incoming>,
        addrs: HttpAddrs,
        _: &Serving,
    ) -> impl Future<Output = Response<McpBody>> + Send {
        request.extensions_mut().insert(addrs);
        // Through the tower service: CORS first, when configured.
        let mut service = self.clone();
        async move { tower_service::Service::call(&mut service, request).await.unwrap_or_else(|never| match never {}) }
    }
}
