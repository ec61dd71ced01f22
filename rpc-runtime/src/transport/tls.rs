#![doc = include_str!("../../docs/transport-tls.md")]

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::Semaphore;
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// rustls, re-exported so that the configurations handed to
/// [`ServerTls::from_config`] and [`ClientTls::from_config`] are of the
/// version this crate uses.
pub use tokio_rustls::rustls;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use super::deadline::WriteDeadline;
use super::listener::{Connect, Listener, Shutdown};
use super::server::{ConnectionInfo, Server};
use super::stream::StreamSink;
use super::tcp::{Tcp, accept, refuse_overloaded};
use crate::dispatch::context::Context;
use crate::peer::{Controls, Peer, PeerBuilder};
use crate::wire::FrameReader;

/// Default time a client of a [`TlsListener`] has to complete the TLS
/// handshake.
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection refused for the connection limit has to finish
/// its handshake (to be told why) before it is closed anyway.
const REFUSAL_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);

/// The crypto provider of every configuration made here (not the process
/// default, which is ambiguous when several providers are compiled in).
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The contents of `path`, or an error naming it and what it was to be.
fn read_file(path: &Path, what: &str) -> io::Result<(Vec<u8>, String)> {
    let label = format!("{what} `{}`", path.display());
    match std::fs::read(path) {
        Ok(bytes) => Ok((bytes, label)),
        Err(err) => Err(io::Error::new(err.kind(), format!("{label}: cannot read it: {err}"))),
    }
}

/// What `err`, met reading the PEM of `label`, means.
fn pem_error(label: &str, err: pem::Error) -> io::Error {
    invalid(format!("{label}: not valid PEM: {err}"))
}

/// Every certificate of the PEM `bytes` of `label` (at least one).
fn certificates(bytes: &[u8], label: &str) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs =
        CertificateDer::pem_slice_iter(bytes).collect::<Result<Vec<_>, _>>().map_err(|err| pem_error(label, err))?;
    if certs.is_empty() {
        return Err(invalid(format!(
            "{label}: no certificate in it (expected a PEM `-----BEGIN CERTIFICATE-----` section)"
        )));
    }
    Ok(certs)
}

/// The first private key of the PEM `bytes` of `label`.
fn private_key(bytes: &[u8], label: &str) -> io::Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(bytes).map_err(|err| match err {
        pem::Error::NoItemsFound => invalid(format!(
            "{label}: no private key in it (expected a PEM `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` section)"
        )),
        err => pem_error(label, err),
    })
}

/// A certificate chain and its key, as rustls' signing key: the error says
/// which file (`cert_label`, `key_label`) is wrong.
fn certified_key(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    cert_label: &str,
    key_label: &str,
) -> io::Result<Arc<rustls::sign::CertifiedKey>> {
    match rustls::sign::CertifiedKey::from_der(certs, key, &provider()) {
        Ok(key) => Ok(Arc::new(key)),
        Err(rustls::Error::InconsistentKeys(_)) => Err(invalid(format!(
            "{key_label} is not the key of the first certificate of {cert_label} (the certificate must come first, then its issuers)"
        ))),
        Err(err) => Err(invalid(format!("{key_label}: not a private key rustls can sign with: {err}"))),
    }
}

/// A set of trusted certificate authorities (CAs): the roots a client
/// checks a server's certificate against ([`ClientTls::new`]), or a server
/// a client's ([`ServerTls::client_auth`]).
///
/// ```
/// # use rpc_runtime::transport::tls::CaBundle;
/// let error = CaBundle::from_pem(b"not a certificate").unwrap_err();
/// assert!(error.to_string().contains("no certificate"), "{error}");
/// ```
#[derive(Clone)]
pub struct CaBundle {
    roots: Arc<RootCertStore>,
}

impl fmt::Debug for CaBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaBundle").field("certificates", &self.roots.len()).finish()
    }
}

impl CaBundle {
    /// The CAs of a PEM bundle (one or more `CERTIFICATE` sections): an
    /// error when it holds none, or one that is not a usable CA.
    pub fn from_pem(pem: &[u8]) -> io::Result<Self> {
        Self::parse(pem, "the TLS CA bundle")
    }

    /// [`CaBundle::from_pem`] of the file at `path` (the system's bundle,
    /// `/etc/ssl/certs/ca-certificates.crt` on Debian, works too); errors
    /// name the file.
    pub fn from_pem_file(path: impl AsRef<Path>) -> io::Result<Self> {
        let (pem, label) = read_file(path.as_ref(), "the TLS CA bundle")?;
        Self::parse(&pem, &label)
    }

    /// The CAs of a rustls root store made otherwise (for example with
    /// the `rustls-native-certs` or `webpki-roots` crates).
    pub fn from_root_store(roots: RootCertStore) -> Self {
        CaBundle { roots: Arc::new(roots) }
    }

    fn parse(pem: &[u8], label: &str) -> io::Result<Self> {
        let mut roots = RootCertStore::empty();
        for (index, cert) in certificates(pem, label)?.into_iter().enumerate() {
            roots
                .add(cert)
                .map_err(|err| invalid(format!("{label}: certificate {} is not usable as a CA: {err}", index + 1)))?;
        }
        Ok(CaBundle { roots: Arc::new(roots) })
    }
}

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
        ServerTls { config: with_default_alpn(self.config, protocols, |config| &mut config.alpn_protocols) }
    }

    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.config))
    }
}

/// `config`, offering `protocols` by ALPN unless it names protocols of
/// its own (`alpn` finds its list: server and client configurations
/// both have one).
#[cfg(feature = "http")]
fn with_default_alpn<C: Clone>(config: Arc<C>, protocols: &[&[u8]], alpn: fn(&mut C) -> &mut Vec<Vec<u8>>) -> Arc<C> {
    let mut config = config;
    let list = alpn(Arc::make_mut(&mut config));
    if list.is_empty() {
        *list = protocols.iter().map(|protocol| protocol.to_vec()).collect();
    }
    config
}

fn server_builder() -> io::Result<rustls::ConfigBuilder<ServerConfig, rustls::WantsVerifier>> {
    ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|err| io::Error::other(format!("rustls: {err}")))
}

/// A client's TLS settings: the CAs it trusts to sign a server's
/// certificate, and optionally its own certificate for servers that ask.
/// Give it to [`Tcp::tls`](super::tcp::Tcp::tls), and with the `http` and
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
        ClientTls { config: with_default_alpn(self.config, protocols, |config| &mut config.alpn_protocols) }
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
/// Clients connect with [`Tcp::tls`](super::tcp::Tcp::tls).
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
pub(crate) fn with_certificates(
    info: ConnectionInfo,
    cx: Context,
    certs: Option<PeerCertificates>,
) -> (ConnectionInfo, Context) {
    match certs {
        Some(certs) => (info.with_part(certs.clone()), cx.with_extension(certs)),
        None => (info, cx),
    }
}

/// A TLS server over TCP to connect to (made by
/// [`Tcp::tls`](super::tcp::Tcp::tls)), for [`PeerBuilder::connect`]:
/// framed JSON-RPC inside TLS, as a [`TlsListener`] serves it.
#[derive(Clone, Debug)]
pub struct TlsTcp<A> {
    tcp: Tcp<A>,
    tls: ClientTls,
    server_name: String,
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Tcp<A> {
    /// The same server, reached over TLS with `tls`, its certificate
    /// checked for `server_name` (a DNS name, or an IP address). Needs
    /// the `tls` feature.
    pub fn tls(self, tls: ClientTls, server_name: impl Into<String>) -> TlsTcp<A> {
        TlsTcp { tcp: self, tls, server_name: server_name.into() }
    }
}

impl<A: ToSocketAddrs + Send + Sync + 'static> Connect for TlsTcp<A> {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let name = server_name(&self.server_name)?;
        let stream = TcpStream::connect(self.tcp.addr).await?;
        let _ = stream.set_nodelay(true);
        let addr = stream.peer_addr().ok();
        let stream = self.tls.connect(stream, &name).await?;
        let builder = match addr {
            Some(addr) => PeerBuilder { cx: builder.cx.with_peer_addr(addr), ..builder },
            None => builder,
        };
        let (reader, writer) = tokio::io::split(stream);
        Ok(builder.start_stream(reader, writer))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_is_missing_and_where() {
        let err = ServerTls::from_pem(b"", b"").unwrap_err().to_string();
        assert!(err.contains("the TLS certificate chain: no certificate in it"), "{err}");
        let err = ServerTls::from_pem_files("/nonexistent/cert.pem", "/nonexistent/key.pem").unwrap_err().to_string();
        assert!(err.contains("`/nonexistent/cert.pem`: cannot read it"), "{err}");
        let err = CaBundle::from_pem(b"-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("the TLS CA bundle: not valid PEM"), "{err}");
        let err = server_name("not a name!").unwrap_err().to_string();
        assert!(err.contains("is not a TLS server name"), "{err}");
        assert!(server_name("[::1]").is_ok() && server_name("localhost").is_ok());
    }
}
