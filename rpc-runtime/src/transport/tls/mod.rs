#![doc = include_str!("../../../docs/transport-tls.md")]

// Two jobs, one file each: the server side (`server`: its settings, the
// handshake it runs, the listener and the client certificates it hands
// to the hook) and the client side (`client`: its settings, the
// connector, framed TCP over TLS and the WebSocket client's socket).
// What both sides read is here: PEM files into certificates and keys,
// the CA bundle, and the crypto provider every configuration uses.
mod client;
mod server;

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// rustls, re-exported so that the configurations handed to
/// [`ServerTls::from_config`] and [`ClientTls::from_config`] are of the
/// version this crate uses.
pub use tokio_rustls::rustls;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

#[cfg(feature = "ws")]
pub(crate) use client::MaybeTls;
#[cfg(feature = "http")]
pub(crate) use client::server_name;
pub use client::{ClientTls, TlsTcp};
#[cfg(feature = "http")]
pub(crate) use server::handshake;
pub use server::{ClientAuth, PeerCertificates, ServerTls, TlsListener};

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

#[cfg(test)]
mod tests {
    use super::client::server_name;
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
