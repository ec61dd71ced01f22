//! Fetching a JSON document (an authorization server's metadata, its
//! keys) with hyper's client: one `GET` on a connection of its own, within
//! a time and size limit. Rare (at start, and when a token names a key not
//! seen yet), so nothing is pooled.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The largest document read (JWKS of many keys stay far below).
const MAX_DOCUMENT: usize = 256 * 1024;

/// How long one fetch may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// How a fetch reaches `https://` URLs.
#[derive(Clone, Debug, Default)]
pub(super) struct Fetcher {
    #[cfg(feature = "tls")]
    pub(super) tls: Option<crate::transport::tls::ClientTls>,
}

impl Fetcher {
    /// The body of a `200` answer to `GET url`, parsed as JSON of type `T`.
    pub(super) async fn json<T: serde::de::DeserializeOwned>(&self, url: &str) -> io::Result<T> {
        let body = tokio::time::timeout(FETCH_TIMEOUT, self.get(url)).await.map_err(|_| {
            io::Error::new(io::ErrorKind::TimedOut, format!("GET {url} did not answer within {FETCH_TIMEOUT:?}"))
        })??;
        serde_json::from_slice(&body).map_err(|err| {
            io::Error::new(io::ErrorKind::InvalidData, format!("GET {url}: not the JSON expected: {err}"))
        })
    }

    async fn get(&self, url: &str) -> io::Result<Bytes> {
        let uri: Uri = url.parse().map_err(|err| invalid(format!("`{url}` is not a URL: {err}")))?;
        let authority = uri.authority().ok_or_else(|| invalid(format!("`{url}` has no host")))?.clone();
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(invalid(format!("`{url}`: only http:// and https:// URLs are fetched"))),
        };
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        let host = authority.host();
        let stream = TcpStream::connect((host.trim_start_matches('[').trim_end_matches(']'), port)).await?;
        let path = uri.path_and_query().map_or("/", |path| path.as_str());
        let request = Request::get(path)
            .header(header::HOST, authority.as_str())
            .header(header::ACCEPT, "application/json")
            .body(Empty::<Bytes>::new())
            .map_err(io::Error::other)?;
        let response = if https {
            self.send_tls(stream, host, request, url).await?
        } else {
            send(TokioIo::new(stream), request).await?
        };
        let (parts, body) = response.into_parts();
        if parts.status != StatusCode::OK {
            return Err(io::Error::other(format!("GET {url} answered {}", parts.status)));
        }
        let body = Limited::new(body, MAX_DOCUMENT).collect().await.map_err(|err| {
            io::Error::new(io::ErrorKind::InvalidData, format!("GET {url}: reading the body failed: {err}"))
        })?;
        Ok(body.to_bytes())
    }

    #[cfg(feature = "tls")]
    async fn send_tls(
        &self,
        stream: TcpStream,
        host: &str,
        request: Request<Empty<Bytes>>,
        url: &str,
    ) -> io::Result<http::Response<hyper::body::Incoming>> {
        let Some(tls) = &self.tls else {
            return Err(invalid(format!("`{url}` is https://: give the verifier TLS settings (`JwtVerifier::tls`)")));
        };
        let name = crate::transport::tls::server_name(host)?;
        send(TokioIo::new(tls.connect(stream, &name).await?), request).await
    }

    #[cfg(not(feature = "tls"))]
    async fn send_tls(
        &self,
        _stream: TcpStream,
        _host: &str,
        _request: Request<Empty<Bytes>>,
        url: &str,
    ) -> io::Result<http::Response<hyper::body::Incoming>> {
        Err(invalid(format!("`{url}` is https://, which needs rpc-runtime's `tls` feature")))
    }
}

async fn send<S>(io: TokioIo<S>, request: Request<Empty<Bytes>>) -> io::Result<http::Response<hyper::body::Incoming>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = http1::handshake(io).await.map_err(io::Error::other)?;
    tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::debug!(error = %err, "fetching a key document: the connection ended with an error");
        }
    });
    sender.send_request(request).await.map_err(io::Error::other)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
