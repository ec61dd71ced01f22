//! The server side of TLS: [`ServerTls`] (a certificate, its key, and
//! whether clients must show one), the handshake, the client's
//! [`PeerCertificates`], and [`TlsListener`] for framed TCP.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, ServerConfig};

use super::{CaBundle, certificates, certified_key, invalid, private_key, provider, read_file};
use crate::dispatch::context::Context;
use crate::peer::Controls;
use crate::transport::deadline::WriteDeadline;
use crate::transport::listener::{Listener, Shutdown};
use crate::transport::server::{ConnectionInfo, Server};
use crate::transport::stream::StreamSink;
use crate::transport::tcp::{accept, refuse_overloaded};
use crate::wire::FrameReader;

/// Default time a client of a [`TlsListener`] has to complete the TLS
/// handshake.
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection refused for the connection limit has to finish
/// its handshake (to be told why) before it is closed anyway.
const REFUSAL_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);

/// Whether a server asks its clients for a certificate (see
/// [`ServerTls::client_auth`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// A client without a certificate signed by one of the CAs is refused
    /// in the handshake.
    Required,
    /// A client may come without a certificate (the connection hook then
    /// finds no [`PeerCertificates`]); one it sends must be signed by one
    /// of the CAs.
    Optional,
}

/// A server's TLS settings: its certificate chain and private key, and
/// whether clients must show a certificate. Give it to a [`TlsListener`]
/// (framed TCP) or, with the `http` feature, to `Http::tls` (HTTPS and
/// WSS).
///
/// ```no_run
/// # fn run() -> std::io::Result<()> {
/// use rpc_runtime::transport::tls::ServerTls;
/// let tls = ServerTls::from_pem_files("/etc/myservice/cert.pem", "/etc/myservice/key.pem")?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let alpn: Vec<_> = self.config.alpn_protocols.iter().map(|p| String::from_utf8_lossy(p)).collect();
        f.debug_struct("ServerTls").field("alpn", &alpn).finish_non_exhaustive()
    }
}

impl ServerTls {
    /// A certificate chain (PEM: the server's certificate first, then the
    /// intermediate CAs that issued it) and its private key (PEM: PKCS#8,
    /// PKCS#1 or SEC1). Errors say what is missing or wrong: no
    /// certificate, no key, a key that is not the certificate's.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> io::Result<Self> {
        Self::parse(cert_chain, "the TLS certificate chain", key, "the TLS private key")
    }

    /// [`ServerTls::from_pem`] of two files; errors name the file.
    pub fn from_pem_files(cert_chain: impl AsRef<Path>, key: impl AsRef<Path>) -> io::Result<Self> {
        let (certs, cert_label) = read_file(cert_chain.as_ref(), "the TLS certificate chain")?;
        let (key, key_label) = read_file(key.as_ref(), "the TLS private key")?;
        Self::parse(&certs, &cert_label, &key, &key_label)
    }

    fn parse(certs: &[u8], cert_label: &str, key: &[u8], key_label: &str) -> io::Result<Self> {
        let certs = certificates(certs, cert_label)?;
        let key = private_key(key, key_label)?;
        let key = certified_key(certs, key, cert_label, key_label)?;
        let config = server_builder()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(key)));
        Ok(ServerTls { config: Arc::new(config) })
    }

    /// A rustls configuration of one's own, as it is (an HTTP listener
    /// adds its ALPN protocols when it has none).
    pub fn from_config(config: impl Into<Arc<ServerConfig>>) -> Self {
        ServerTls { config: config.into() }
    }

    /// The same certificate, asking every client for a certificate signed
    /// by one of the CAs of `roots`: [`ClientAuth::Required`] refuses a
    /// client without one in the handshake, [`ClientAuth::Optional`] lets it
    /// in (the hook decides). The client's chain reaches the connection
    /// hook as a [`PeerCertificates`] part. Keeps the ALPN protocols, not
    /// other settings of a configuration of one's own (set its verifier
    /// there instead).
    pub fn client_auth(self, roots: &CaBundle, auth: ClientAuth) -> io::Result<Self> {
        let mut verifier = WebPkiClientVerifier::builder_with_provider(Arc::clone(&roots.roots), provider());
        if auth == ClientAuth::Optional {
            verifier = verifier.allow_unauthenticated();
        }
        let verifier =
            verifier.build().map_err(|err| invalid(format!("the client CA bundle cannot verify clients: {err}")))?;
        let mut config = server_builder()?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::clone(&self.config.cert_resolver));
        config.alpn_protocols.clone_from(&self.config.alpn_protocols);
        Ok(ServerTls { config: Arc::new(config) })
    }

    /// The rustls configuration.
    pub fn config(&self) -> &Arc<ServerConfig> {
        &self.config
    }

    /// The same, offering `protocols` by ALPN unless the configuration
    /// names protocols of its own.
    #[cfg(feature = "http")]
    #[must_use]
    pub(crate) fn with_default_alpn(self, protocols: &[&[u8]]) -> Self {
        ServerTls { config: super::with_default_alpn(self.config, protocols, |config| &mut config.alpn_protocols) }
    }

    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.config))
    }
}

fn server_builder() -> io::Result<rustls::ConfigBuilder<ServerConfig, rustls::WantsVerifier>> {
    ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|err| io::Error::other(format!("rustls: {err}")))
}

/// The certificate chain a client showed in the TLS handshake (DER, the
/// client's own certificate first), verified against the server's
/// [`CaBundle`] (see [`ServerTls::client_auth`]).
///
/// The connection hook finds it with
/// [`ConnectionInfo::part`]`::<PeerCertificates>()`, and handlers with
/// [`Context::extension`]`::<PeerCertificates>()`; a client without a
/// certificate (or a connection without TLS) has none. Read the subject or
/// other fields of [`PeerCertificates::end_entity`] with an X.509 parser
/// (`x509-parser`, say), or compare the certificate itself.
///
/// ```
/// # use rpc_runtime::{Context, Refused, Server, Router};
/// use rpc_runtime::transport::tls::PeerCertificates;
///
/// /// Who the client is: the DER of its certificate.
/// struct Caller(Vec<u8>);
///
/// let server = Server::new(Router::new()).on_connect(|info, cx| {
///     match info.part::<PeerCertificates>() {
///         Some(certs) => Ok(cx.with_extension(Caller(certs.end_entity().to_vec()))),
///         None => Err(Refused::unauthorized("no client certificate")),
///     }
/// });
/// ```
///
/// Outside the standalone HTTP server (an axum app behind a TLS terminator
/// of its own), insert it in the request's extensions to hand it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerCertificates {
    chain: Arc<[CertificateDer<'static>]>,
}

impl PeerCertificates {
    /// A chain (DER, the peer's own certificate first); `None` when empty.
    pub fn new(chain: Vec<CertificateDer<'static>>) -> Option<Self> {
        if chain.is_empty() {
            return None;
        }
        Some(PeerCertificates { chain: chain.into() })
    }

    /// The whole chain, the peer's own certificate first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }

    /// The peer's own certificate (the end entity): the first of the chain.
    pub fn end_entity(&self) -> &CertificateDer<'static> {
        &self.chain[0]
    }

    /// The chain of a server-side connection whose handshake is done.
    fn of<S>(stream: &tokio_rustls::server::TlsStream<S>) -> Option<Self> {
        Self::new(stream.get_ref().1.peer_certificates()?.to_vec())
    }
}

/// The server side of the handshake on `stream` within `timeout`, and the
/// client's certificates; `None` (logged at debug) when it fails or takes
/// too long.
pub(crate) async fn handshake<S>(
    acceptor: &TlsAcceptor,
    stream: S,
    timeout: Duration,
    peer: SocketAddr,
) -> Option<(tokio_rustls::server::TlsStream<S>, Option<PeerCertificates>)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
        Ok(Ok(stream)) => {
            let certs = PeerCertificates::of(&stream);
            Some((stream, certs))
        }
        Ok(Err(err)) => {
            tracing::debug!(%peer, error = %err, "closed a connection: the TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, ?timeout, "closed a connection: no TLS handshake within the timeout");
            None
        }
    }
}

/// A TCP listener serving TLS: framed JSON-RPC (the server's
/// [`Framing`](crate::Framing)) inside TLS, with everything a plain
/// [`TcpListener`] does (the connection limit, the hook, write timeout,
/// half-close, graceful shutdown). The handshake runs on each connection's
/// task within [`TlsListener::handshake_timeout`]; a connection beyond the
/// limit is told why (a -32000 error) once its handshake is done.
/// Clients connect with [`Tcp::tls`](crate::transport::tcp::Tcp::tls).
#[derive(Debug)]
pub struct TlsListener {
    listener: TcpListener,
    tls: ServerTls,
    handshake_timeout: Duration,
}

impl TlsListener {
    /// Serves TLS with `tls` on `listener`, for [`Server::serve`].
    pub fn new(listener: TcpListener, tls: ServerTls) -> Self {
        TlsListener { listener, tls, handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT }
    }

    /// Binds `addr` (port 0: one the system picks) and serves TLS with
    /// `tls` on it.
    pub async fn bind(addr: impl ToSocketAddrs, tls: ServerTls) -> io::Result<Self> {
        Ok(Self::new(TcpListener::bind(addr).await?, tls))
    }

    /// How long a client has to complete the handshake (default 10 s);
    /// past it the connection is closed.
    #[must_use = "a builder does nothing until used"]
    pub fn handshake_timeout(self, timeout: Duration) -> Self {
        TlsListener { handshake_timeout: timeout, ..self }
    }

    /// The local address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl Listener for TlsListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let limit = server.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
        let slots = Arc::new(Semaphore::new(limit));
        let acceptor = self.tls.acceptor();
        let drain = &shutdown.drain;
        while let Some((stream, peer)) = accept(&self.listener, drain).await {
            let _ = stream.set_nodelay(true);
            let acceptor = acceptor.clone();
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                tracing::debug!(%peer, limit, "refused a TLS connection: at the connection limit");
                let framing = server.framing;
                tokio::spawn(async move {
                    if let Some((stream, _)) = handshake(&acceptor, stream, REFUSAL_HANDSHAKE_TIMEOUT, peer).await {
                        refuse_overloaded(stream, framing, limit).await;
                    }
                });
                continue;
            };
            let server = server.clone();
            let controls =
                Controls { idle_timeout: None, drain: Some(Arc::clone(drain)), at_eof: server.network_eof() };
            let timeout = self.handshake_timeout;
            tokio::spawn(async move {
                let local = stream.local_addr();
                let stream = WriteDeadline::new(stream, server.write_timeout);
                let Some((stream, certs)) = handshake(&acceptor, stream, timeout, peer).await else { return };
                let mut info = ConnectionInfo::new("tcp").with_peer_addr(peer);
                if let Ok(local) = local {
                    info = info.with_local_addr(local);
                }
                let (info, cx) = with_certificates(info, Context::new(), certs);
                let (reader, writer) = tokio::io::split(stream);
                let source = FrameReader::new(reader, server.framing, server.engine.limits().max_message_size);
                let sink = StreamSink::new(writer, server.framing);
                if let Err(err) = server.run_connection(source, sink, &info, cx, controls).await {
                    tracing::debug!(%peer, error = %err, "TLS connection ended with an error");
                }
                drop(slot);
            });
        }
        drop(self.listener);
        // Every connection holds a slot until it is closed.
        let _all_closed = slots.acquire_many(limit as u32).await;
        Ok(())
    }
}

/// `info` and the base context `cx` of a connection whose client showed
/// `certs`: the hook finds them in both.
fn with_certificates(info: ConnectionInfo, cx: Context, certs: Option<PeerCertificates>) -> (ConnectionInfo, Context) {
    match certs {
        Some(certs) => (info.with_part(certs.clone()), cx.with_extension(certs)),
        None => (info, cx),
    }
}
