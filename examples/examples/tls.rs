//! HTTPS with rustls: the server shows a certificate for `localhost`
//! signed by a CA the client trusts, and asks clients for a certificate
//! of their own (optional here); the one a client shows reaches the
//! connection hook as `PeerCertificates`. The CA and both certificates
//! are made in memory at startup (with `rcgen`), so the example runs as
//! it is; a real service reads PEM files (`ServerTls::from_pem_files`,
//! `CaBundle::from_pem_file`).
//!
//! ```text
//! cargo run --example tls
//! cargo run --example tls --no-default-features --features tls,http
//! ```

use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
use rpc_runtime::transport::http::{Http, HttpConnect};
use rpc_runtime::transport::tls::{CaBundle, ClientAuth, ClientTls, PeerCertificates, ServerTls};
use rpc_runtime::{rpc, Context, Peer, Server};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Tells callers who they are.
#[rpc]
pub trait WhoAmI {
    /// What the server knows of the caller's certificate.
    fn whoami(&self, cx: Context) -> String;
}

struct Service;

impl WhoAmI for Service {
    fn whoami(&self, cx: Context) -> String {
        match cx.extension::<PeerCertificates>() {
            Some(certs) => format!("a client with a certificate ({} bytes of DER)", certs.end_entity().len()),
            None => "an anonymous client".to_owned(),
        }
    }
}

/// A certificate (PEM) and its private key (PEM).
struct Issued {
    cert: String,
    key: String,
}

/// A certificate for `names` with `usage`, signed by `ca`.
fn issue(ca: &Issuer<'_, KeyPair>, names: &[&str], usage: ExtendedKeyUsagePurpose) -> Result<Issued, Error> {
    let mut params = CertificateParams::new(names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>())?;
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, ca)?;
    Ok(Issued { cert: cert.pem(), key: key.serialize_pem() })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    // A CA, and certificates it signs: the server's, for `localhost`, and
    // a client's.
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate()?;
    let ca_pem = ca_params.self_signed(&ca_key)?.pem();
    let ca = Issuer::new(ca_params, ca_key);
    let server_cert = issue(&ca, &["localhost"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let client_cert = issue(&ca, &["client.example"], ExtendedKeyUsagePurpose::ClientAuth)?;
    let trusted = CaBundle::from_pem(ca_pem.as_bytes())?;

    // The server: HTTPS (and WSS, with the `ws` feature) on one port.
    // Clients may show a certificate signed by the CA; the hook sees it
    // and handlers find it in their context.
    let tls = ServerTls::from_pem(server_cert.cert.as_bytes(), server_cert.key.as_bytes())?
        .client_auth(&trusted, ClientAuth::Optional)?;
    let listener = Http::default().tls(tls).bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let server = Server::new(Service.into_rpc()).on_connect(|info, cx| {
        let shown = info.part::<PeerCertificates>().is_some();
        println!("hook: an HTTPS request, client certificate: {}", if shown { "yes" } else { "no" });
        Ok(cx)
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener).with_graceful_shutdown(async {
        stopped.await.ok();
    }));
    let url = format!("https://localhost:{port}/");
    println!("serving {url}");

    // A client that trusts the CA, and one that also shows a certificate.
    let anonymous = HttpConnect::new(url.clone()).tls(ClientTls::new(&trusted));
    let anonymous = WhoAmIClient::new(Peer::builder().connect(anonymous).await?);
    println!("anonymous client -> {}", anonymous.whoami().await?);

    let client_tls =
        ClientTls::new(&trusted).client_cert_pem(client_cert.cert.as_bytes(), client_cert.key.as_bytes())?;
    let known = WhoAmIClient::new(Peer::builder().connect(HttpConnect::new(url.clone()).tls(client_tls)).await?);
    println!("client with a certificate -> {}", known.whoami().await?);

    // A client that does not trust the CA fails the handshake.
    let other_ca = CertificateParams::new(Vec::<String>::new())?.self_signed(&KeyPair::generate()?)?;
    let untrusting = ClientTls::new(&CaBundle::from_pem(other_ca.pem().as_bytes())?);
    let stranger = WhoAmIClient::new(Peer::builder().connect(HttpConnect::new(url).tls(untrusting)).await?);
    match stranger.whoami().await {
        Ok(answer) => return Err(format!("an untrusted server was called: {answer}").into()),
        Err(error) => println!("client not trusting the CA -> {error}"),
    }

    stop.send(()).ok();
    serving.await??;
    Ok(())
}
