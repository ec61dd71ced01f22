//! The client side of TLS: [`ClientTls`] (the CAs it trusts, and a
//! certificate of its own for servers that ask), the handshake, and
//! [`TlsTcp`] for framed TCP; with the `ws` feature, the WebSocket
//! client's socket, plain or TLS.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{self, ClientConfig};

use super::{CaBundle, certificates, certified_key, invalid, private_key, provider, read_file};
use crate::peer::{Peer, PeerBuilder};
use crate::transport::listener::Connect;
use crate::transport::redial::Reopen;
use crate::transport::tcp::{Redial, Tcp, with_peer_addr};

/// A client's TLS settings: the CAs it trusts to sign a server's
/// certificate, and optionally its own certificate for servers that ask.
/// Give it to [`Tcp::tls`](crate::transport::tcp::Tcp::tls), and with the `http` and
/// `ws` features to `HttpConnect::tls` (`https://`) and `WsConnect::tls`
/// (`wss://`).
///
/// A server whose certificate is not signed by one of those CAs (or not
/// for the name connected to) fails the connection with an error saying
/// that its certificate was not trusted.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls").finish_non_exhaustive()
    }
}

impl ClientTls {
    /// Trusts the CAs of `roots`, and shows no certificate of its own.
    pub fn new(roots: &CaBundle) -> Self {
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("rustls' ring provider supports its default protocol versions")
            .with_root_certificates(Arc::clone(&roots.roots))
            .with_no_client_auth();
        ClientTls { config: Arc::new(config) }
    }

    /// A rustls configuration of one's own, as it is.
    pub fn from_config(config: impl Into<Arc<ClientConfig>>) -> Self {
        ClientTls { config: config.into() }
    }

    /// The same, showing this certificate chain (PEM, the client's
    /// certificate first) and private key (PEM) to servers that ask.
    pub fn client_cert_pem(self, cert_chain: &[u8], key: &[u8]) -> io::Result<Self> {
        self.with_client_cert(cert_chain, "the TLS client certificate chain", key, "the TLS client private key")
    }

    /// [`ClientTls::client_cert_pem`] of two files; errors name the file.
    pub fn client_cert_pem_files(self, cert_chain: impl AsRef<Path>, key: impl AsRef<Path>) -> io::Result<Self> {
        let (certs, cert_label) = read_file(cert_chain.as_ref(), "the TLS client certificate chain")?;
        let (key, key_label) = read_file(key.as_ref(), "the TLS client private key")?;
        self.with_client_cert(&certs, &cert_label, &key, &key_label)
    }

    fn with_client_cert(self, certs: &[u8], cert_label: &str, key: &[u8], key_label: &str) -> io::Result<Self> {
        let certs = certificates(certs, cert_label)?;
        let key = private_key(key, key_label)?;
        let key = certified_key(certs, key, cert_label, key_label)?;
        let mut config = (*self.config).clone();
        config.client_auth_cert_resolver = Arc::new(ClientCert(key));
        Ok(ClientTls { config: Arc::new(config) })
    }

    /// The rustls configuration.
    pub fn config(&self) -> &Arc<ClientConfig> {
        &self.config
    }

    /// The same, offering `protocols` by ALPN unless the configuration
    /// names protocols of its own.
    #[cfg(feature = "http2")]
    #[must_use]
    pub(crate) fn with_alpn(self, protocols: &[&[u8]]) -> Self {
        ClientTls { config: super::with_default_alpn(self.config, protocols, |config| &mut config.alpn_protocols) }
    }

    /// The client side of the handshake on `stream`, for the server
    /// `name`; the error says why it failed.
    pub(crate) async fn connect<S>(
        &self,
        stream: S,
        name: &ServerName<'static>,
    ) -> io::Result<tokio_rustls::client::TlsStream<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let connector = TlsConnector::from(Arc::clone(&self.config));
        connector.connect(name.clone(), stream).await.map_err(|err| handshake_error(err, name))
    }
}

/// The name a client checks the server's certificate against: a DNS
/// name, or an IP address (`[::1]` as `::1`).
pub(crate) fn server_name(host: &str) -> io::Result<ServerName<'static>> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned()).map_err(|err| invalid(format!("`{host}` is not a TLS server name: {err}")))
}

/// A failed client handshake with `name`, said plainly.
fn handshake_error(err: io::Error, name: &ServerName<'_>) -> io::Error {
    let name = name.to_str();
    let tls = err.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let why = match tls {
        Some(rustls::Error::InvalidCertificate(why)) => {
            format!("the server's certificate was not trusted ({why:?}): check the CA bundle and the server name")
        }
        Some(rustls::Error::AlertReceived(alert)) => format!(
            "the server refused the handshake ({alert:?}); a server that requires a client certificate refuses a client without one it trusts"
        ),
        _ => err.to_string(),
    };
    io::Error::new(err.kind(), format!("TLS handshake with `{name}` failed: {why}"))
}

/// A client certificate shown to every server that asks.
#[derive(Debug)]
struct ClientCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for ClientCert {
    fn resolve(&self, _: &[&[u8]], _: &[rustls::SignatureScheme]) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// A TLS server over TCP to connect to (made by
/// [`Tcp::tls`](crate::transport::tcp::Tcp::tls)), for [`PeerBuilder::connect`]:
/// framed JSON-RPC inside TLS, as a [`TlsListener`](super::TlsListener) serves it.
#[derive(Clone, Debug)]
pub struct TlsTcp<A> {
    tcp: Tcp<A>,
    tls: ClientTls,
    server_name: String,
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Tcp<A> {
    /// The same server, reached over TLS with `tls`, its certificate
    /// checked for `server_name` (a DNS name, or an IP address). Needs
    /// the `tls` feature. A client made with
    /// [`Tcp::reconnect`](crate::transport::tcp::Tcp::reconnect) makes the
    /// handshake again on every new connection.
    pub fn tls(self, tls: ClientTls, server_name: impl Into<String>) -> TlsTcp<A> {
        TlsTcp { tcp: self, tls, server_name: server_name.into() }
    }
}

impl<A: ToSocketAddrs + Clone + Send + Sync + 'static> TlsTcp<A> {
    /// Reconnects when the connection is lost, as
    /// [`Tcp::reconnect`](crate::transport::tcp::Tcp::reconnect) does,
    /// making the TLS handshake again on every new connection.
    #[must_use = "a builder does nothing until used"]
    pub fn reconnect(self, policy: crate::transport::Reconnect) -> Self {
        TlsTcp { tcp: self.tcp.reconnect(policy), ..self }
    }
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Connect for TlsTcp<A> {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let name = server_name(&self.server_name)?;
        let stream = match &self.tcp.redial {
            // With `TCP_NODELAY`, as every new connection.
            Some(redial) => (redial.dial)().await?,
            None => {
                let stream = TcpStream::connect(self.tcp.addr).await?;
                let _ = stream.set_nodelay(true);
                stream
            }
        };
        let builder = with_peer_addr(builder, &stream);
        let first = tokio::io::split(self.tls.connect(stream, &name).await?);
        let Some(Redial { dial, policy }) = self.tcp.redial else {
            return Ok(builder.start_stream(first.0, first.1));
        };
        let tls = self.tls;
        let reopen: Reopen<_, _> = Arc::new(move || {
            let (dial, tls, name) = (Arc::clone(&dial), tls.clone(), name.clone());
            Box::pin(async move { Ok(tokio::io::split(tls.connect(dial().await?, &name).await?)) })
        });
        Ok(builder.start_redialing(crate::transport::redial::TCP, first, reopen, policy))
    }
}

/// A client's socket: TCP, or TLS over TCP (`wss://`).
#[cfg(feature = "ws")]
pub(crate) use maybe::MaybeTls;

#[cfg(feature = "ws")]
mod maybe {
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio::net::TcpStream;

    /// A client's socket: TCP, or TLS over TCP.
    #[derive(Debug)]
    pub(crate) enum MaybeTls {
        Plain(TcpStream),
        Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    }

    impl AsyncRead for MaybeTls {
        fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            match self.get_mut() {
                MaybeTls::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
                MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
            }
        }
    }

    impl AsyncWrite for MaybeTls {
        fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            match self.get_mut() {
                MaybeTls::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
                MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
            }
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[io::IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            match self.get_mut() {
                MaybeTls::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
                MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
            }
        }

        fn is_write_vectored(&self) -> bool {
            match self {
                MaybeTls::Plain(stream) => stream.is_write_vectored(),
                MaybeTls::Tls(stream) => stream.is_write_vectored(),
            }
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            match self.get_mut() {
                MaybeTls::Plain(stream) => Pin::new(stream).poll_flush(cx),
                MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
            }
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            match self.get_mut() {
                MaybeTls::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
                MaybeTls::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
            }
        }
    }
}
