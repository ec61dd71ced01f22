//! TLS (feature `tls`) over real sockets, with certificates made here by
//! rcgen (a CA, a server certificate for `localhost` and 127.0.0.1, a
//! client certificate): HTTPS to curl (a call, a batch) and to the typed
//! client, WSS and TLS over framed TCP to the typed client, a client
//! certificate seen by the connection hook, a CA that is not the server's
//! named in the client's error, plain text on a TLS port not served, and
//! Python's `ssl` + `websockets` against the calculator binary (skipped,
//! saying so, without curl or that Python; mandatory under
//! `RPC_REQUIRE_INTEROP=1`).

use crate::web_support::*;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rpc_runtime::transport::http::HttpConnect;
use rpc_runtime::transport::tcp::Tcp;
use rpc_runtime::transport::tls::{CaBundle, ClientAuth, ClientTls, PeerCertificates, ServerTls, TlsListener};
use rpc_runtime::transport::ws::WsConnect;
use rpc_runtime::{ClientError, Peer, Refused, Server};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A CA and what it signed, as PEM.
struct Pki {
    ca: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
}

impl Pki {
    /// A CA named `name`, a server certificate for `localhost` and
    /// 127.0.0.1, and a client certificate whose subject is
    /// `CN=client-ada`.
    fn new(name: &str) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, name);
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let server_key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        let server_cert = server.signed_by(&server_key, &issuer).unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client = CertificateParams::new(Vec::<String>::new()).unwrap();
        client.distinguished_name.push(DnType::CommonName, "client-ada");
        let client_cert = client.signed_by(&client_key, &issuer).unwrap();
        Pki {
            ca: ca_cert.pem(),
            server_cert: server_cert.pem(),
            server_key: server_key.serialize_pem(),
            client_cert: client_cert.pem(),
            client_key: client_key.serialize_pem(),
        }
    }

    fn server(&self) -> ServerTls {
        ServerTls::from_pem(self.server_cert.as_bytes(), self.server_key.as_bytes()).unwrap()
    }

    fn roots(&self) -> CaBundle {
        CaBundle::from_pem(self.ca.as_bytes()).unwrap()
    }

    fn client(&self) -> ClientTls {
        ClientTls::new(&self.roots())
    }

    fn client_with_cert(&self) -> ClientTls {
        self.client().client_cert_pem(self.client_cert.as_bytes(), self.client_key.as_bytes()).unwrap()
    }

    /// The PEM files of this CA and the server's certificate and key, in a
    /// directory of their own.
    fn files(&self, test: &str) -> PemFiles {
        let dir = std::env::temp_dir().join(format!("rpc-tls-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, pem) in [("ca.pem", &self.ca), ("cert.pem", &self.server_cert), ("key.pem", &self.server_key)] {
            std::fs::write(dir.join(name), pem).unwrap();
        }
        PemFiles { dir }
    }
}

/// PEM files, removed on drop.
struct PemFiles {
    dir: PathBuf,
}

impl PemFiles {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for PemFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The common name of a certificate's subject (the last CN in its DER:
/// the subject comes after the issuer), read as a hook would with an
/// X.509 parser: the value after the `id-at-commonName` OID (2.5.4.3).
fn common_name(der: &[u8]) -> Option<String> {
    const CN: [u8; 5] = [0x06, 0x03, 0x55, 0x04, 0x03];
    let at = der.windows(CN.len()).rposition(|window| window == CN)? + CN.len();
    let (_tag, len) = (der.get(at)?, usize::from(*der.get(at + 1)?));
    String::from_utf8(der.get(at + 2..at + 2 + len)?.to_vec()).ok()
}

/// A hook that admits only clients with a certificate, as the user of its
/// subject's common name.
fn by_client_certificate(server: Server) -> Server {
    server.on_connect(|info, cx| {
        let Some(certs) = info.part::<PeerCertificates>() else {
            return Err(Refused::unauthorized("no client certificate"));
        };
        // Handlers see the same chain in their context.
        assert_eq!(cx.extension::<PeerCertificates>(), Some(certs));
        let name = common_name(certs.end_entity()).ok_or_else(|| Refused::forbidden("no common name"))?;
        Ok(cx.with_extension(User(name)))
    })
}

/// Serves `server` framed over TLS on a free port of 127.0.0.1.
async fn serve_tls_tcp(server: &Server, tls: ServerTls) -> SocketAddr {
    let listener = TlsListener::bind("127.0.0.1:0", tls).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve(listener));
    addr
}

/// Runs curl with `args`, giving its standard output.
async fn curl(args: &[&str]) -> String {
    let output = tokio::time::timeout(HANG_GUARD, tokio::process::Command::new("curl").args(args).output())
        .await
        .expect("curl finished in time")
        .expect("curl runs");
    assert!(output.status.success(), "curl {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn curl_calls_and_sends_a_batch_over_https() {
    if !tests::interop::require(&["curl"], "curl_calls_and_sends_a_batch_over_https") {
        return;
    }
    let pki = Pki::new("test CA");
    let files = pki.files("curl");
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().tls(pki.server())).await;
    let url = format!("https://localhost:{}/", addr.port());
    let ca = files.path("ca.pem");
    let post = |body: &'static str| {
        let (url, ca) = (url.clone(), ca.clone());
        async move { curl(&["-sS", "--cacert", &ca, "-H", "content-type: application/json", "--data", body, &url]).await }
    };
    let reply: serde_json::Value =
        serde_json::from_str(&post(r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#).await).unwrap();
    assert_eq!(reply, json!({"jsonrpc": "2.0", "result": "value of k", "id": 1}));
    let batch = r#"[{"jsonrpc":"2.0","method":"read","params":["a"],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":2}]"#;
    let reply: serde_json::Value = serde_json::from_str(&post(batch).await).unwrap();
    assert_eq!(
        reply,
        json!([{"jsonrpc": "2.0", "result": "value of a", "id": 1}, {"jsonrpc": "2.0", "result": 1, "id": 2}])
    );
    // By 127.0.0.1 too (the certificate names the address). ALPN settles
    // on HTTP/2 (`h2`, which curl offers first and the server serves), or
    // on HTTP/1.1 for a client that offers only that.
    let version = |http: &'static str| {
        let (ca, url) = (ca.clone(), format!("https://{addr}/"));
        async move {
            curl(&[
                "-sS",
                http,
                "--cacert",
                &ca,
                "-o",
                "/dev/null",
                "-w",
                "%{http_version}",
                "-H",
                "content-type: application/json",
                "--data",
                r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#,
                &url,
            ])
            .await
        }
    };
    assert_eq!(version("--http2").await, "2");
    assert_eq!(version("--http1.1").await, "1.1");
}

#[tokio::test]
async fn curl_initializes_an_mcp_session_over_https() {
    if !tests::interop::require(&["curl"], "curl_initializes_an_mcp_session_over_https") {
        return;
    }
    let pki = Pki::new("test CA");
    let files = pki.files("mcp");
    let (cancelled, _) = tokio::sync::mpsc::unbounded_channel();
    let server = rpc_runtime::mcp::McpServer::new(VaultImpl { cancelled }.into_rpc()).name("vault").into_server();
    let (listener, addr) = listener().await;
    let mcp = rpc_runtime::mcp::McpHttp::default().http(Http::default().tls(pki.server()));
    tokio::spawn(server.serve(mcp.listener(listener)));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}})
    .to_string();
    let reply = curl(&[
        "-sS",
        "--cacert",
        &files.path("ca.pem"),
        "-H",
        "content-type: application/json",
        "-H",
        "accept: application/json, text/event-stream",
        "--data",
        &initialize,
        &format!("https://localhost:{}/", addr.port()),
    ])
    .await;
    let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
}

#[tokio::test]
async fn typed_clients_call_over_tls_tcp_https_and_wss() {
    let pki = Pki::new("test CA");
    let (server, _) = vault();
    let tcp = serve_tls_tcp(&server, pki.server()).await;
    let (web, _stop, _task) = serve(&server, Http::default().tls(pki.server())).await;
    let peers = [
        Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "localhost")).await.unwrap(),
        Peer::builder()
            .connect(HttpConnect::new(format!("https://localhost:{}/", web.port())).tls(pki.client()))
            .await
            .unwrap(),
        // HTTP/2 over TLS, chosen by ALPN.
        Peer::builder()
            .connect(
                HttpConnect::new(format!("https://localhost:{}/", web.port()))
                    .tls(pki.client())
                    .http2_prior_knowledge(),
            )
            .await
            .unwrap(),
        Peer::builder()
            .connect(WsConnect::new(format!("wss://127.0.0.1:{}/", web.port())).tls(pki.client()))
            .await
            .unwrap(),
    ];
    for peer in peers {
        let vault = VaultClient::new(peer);
        assert_eq!(vault.read("k".into()).await.unwrap(), "value of k");
        let mut batch = vault.batch();
        let (one, two) = (batch.read("1".into()), batch.sleep(1));
        batch.send().await.unwrap();
        assert_eq!((one.await.unwrap().as_str(), two.await.unwrap()), ("value of 1", 1));
    }
}

#[tokio::test]
async fn the_hook_sees_the_client_certificate_and_refuses_clients_without_one() {
    let pki = Pki::new("test CA");
    let (server, _) = vault();
    let server = by_client_certificate(server);
    let tls = pki.server().client_auth(&pki.roots(), ClientAuth::Optional).unwrap();
    let tcp = serve_tls_tcp(&server, tls.clone()).await;
    let (web, _stop, _task) = serve(&server, Http::default().tls(tls)).await;

    // With a certificate: the hook read its subject, handlers see the user.
    let with_cert = [
        Peer::builder().connect(Tcp::new(tcp).tls(pki.client_with_cert(), "localhost")).await.unwrap(),
        Peer::builder()
            .connect(HttpConnect::new(format!("https://localhost:{}/", web.port())).tls(pki.client_with_cert()))
            .await
            .unwrap(),
        Peer::builder()
            .connect(
                HttpConnect::new(format!("https://localhost:{}/", web.port()))
                    .tls(pki.client_with_cert())
                    .http2_prior_knowledge(),
            )
            .await
            .unwrap(),
        Peer::builder()
            .connect(WsConnect::new(format!("wss://localhost:{}/", web.port())).tls(pki.client_with_cert()))
            .await
            .unwrap(),
    ];
    for peer in with_cert {
        assert_eq!(VaultClient::new(peer).whoami().await.unwrap(), "client-ada");
    }

    // Without: refused by the hook (TCP: closed; HTTP: 401; WebSocket: 401
    // before the upgrade).
    let peer = Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "localhost")).await.unwrap();
    assert!(VaultClient::new(peer).whoami().await.is_err());
    let peer = Peer::builder()
        .connect(HttpConnect::new(format!("https://localhost:{}/", web.port())).tls(pki.client()))
        .await
        .unwrap();
    match VaultClient::new(peer).whoami().await {
        Err(ClientError::Server(error)) => assert!(error.message().starts_with("HTTP 401"), "{}", error.message()),
        other => panic!("expected a 401, got {other:?}"),
    }
    let refused =
        Peer::builder().connect(WsConnect::new(format!("wss://localhost:{}/", web.port())).tls(pki.client())).await;
    assert_eq!(refused.unwrap_err().kind(), std::io::ErrorKind::PermissionDenied);
}

#[tokio::test]
async fn a_required_client_certificate_is_checked_in_the_handshake() {
    let pki = Pki::new("test CA");
    let stranger = Pki::new("another CA");
    let (server, _) = vault();
    let tls = pki.server().client_auth(&pki.roots(), ClientAuth::Required).unwrap();
    let tcp = serve_tls_tcp(&server, tls).await;
    let peer = Peer::builder().connect(Tcp::new(tcp).tls(pki.client_with_cert(), "localhost")).await.unwrap();
    assert_eq!(VaultClient::new(peer).read("k".into()).await.unwrap(), "value of k");
    // Without a certificate, or with one of another CA: never served
    // (in TLS 1.3 the client may learn it only on its first read).
    let of_another_ca =
        pki.client().client_cert_pem(stranger.client_cert.as_bytes(), stranger.client_key.as_bytes()).unwrap();
    for client in [pki.client(), of_another_ca] {
        match Peer::builder().connect(Tcp::new(tcp).tls(client, "localhost")).await {
            Err(error) => assert!(error.to_string().contains("TLS handshake"), "{error}"),
            Ok(peer) => assert!(VaultClient::new(peer).read("k".into()).await.is_err()),
        }
    }
}

#[tokio::test]
async fn a_server_certificate_of_another_ca_is_not_trusted() {
    let pki = Pki::new("test CA");
    let stranger = Pki::new("another CA");
    let (server, _) = vault();
    let tcp = serve_tls_tcp(&server, pki.server()).await;
    let (web, _stop, _task) = serve(&server, Http::default().tls(pki.server())).await;

    let error = Peer::builder().connect(Tcp::new(tcp).tls(stranger.client(), "localhost")).await.unwrap_err();
    assert!(error.to_string().contains("certificate was not trusted"), "{error}");
    let error = Peer::builder()
        .connect(WsConnect::new(format!("wss://localhost:{}/", web.port())).tls(stranger.client()))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("certificate was not trusted"), "{error}");
    let peer = Peer::builder()
        .connect(HttpConnect::new(format!("https://localhost:{}/", web.port())).tls(stranger.client()))
        .await
        .unwrap();
    match VaultClient::new(peer).read("k".into()).await {
        Err(ClientError::Server(error)) => {
            assert!(error.message().contains("certificate was not trusted"), "{}", error.message())
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    // A name the certificate is not for is not trusted either.
    let error = Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "example.com")).await.unwrap_err();
    assert!(error.to_string().contains("certificate was not trusted"), "{error}");
}

/// Everything the server sends back on a fresh connection to `addr` after
/// `request`, until it closes the connection.
async fn plain_exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut answer))
        .await
        .expect("the server closed the connection")
        .ok();
    answer
}

#[tokio::test]
async fn plain_text_on_a_tls_port_is_not_served() {
    let pki = Pki::new("test CA");
    let (server, _) = vault();
    let tcp = serve_tls_tcp(&server, pki.server()).await;
    let (web, _stop, _task) = serve(&server, Http::default().tls(pki.server())).await;

    let answer = plain_exchange(
        web,
        post_json(web, r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#, &[]).as_bytes(),
    )
    .await;
    let text = String::from_utf8_lossy(&answer);
    assert!(!text.contains("HTTP/1.1") && !text.contains("value of k"), "{text}");
    let answer = plain_exchange(tcp, b"{\"jsonrpc\":\"2.0\",\"method\":\"read\",\"params\":[\"k\"],\"id\":1}\n").await;
    assert!(!String::from_utf8_lossy(&answer).contains("value of k"));

    // Both ports still serve TLS.
    let peer = Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "localhost")).await.unwrap();
    assert_eq!(VaultClient::new(peer).read("k".into()).await.unwrap(), "value of k");
    let peer = Peer::builder()
        .connect(HttpConnect::new(format!("https://localhost:{}/", web.port())).tls(pki.client()))
        .await
        .unwrap();
    assert_eq!(VaultClient::new(peer).read("k".into()).await.unwrap(), "value of k");
}

#[tokio::test]
async fn a_silent_client_is_closed_after_the_handshake_timeout() {
    let pki = Pki::new("test CA");
    let (server, _) = vault();
    let listener =
        TlsListener::bind("127.0.0.1:0", pki.server()).await.unwrap().handshake_timeout(Duration::from_millis(50));
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.clone().max_connections(1).serve(listener));
    // The silent connection holds the only slot until it is closed; then
    // a client gets in.
    assert!(plain_exchange(addr, b"").await.is_empty());
    let (web, _stop, _task) =
        serve(&server, Http::default().tls(pki.server()).header_timeout(Duration::from_millis(50))).await;
    assert!(plain_exchange(web, b"").await.is_empty());
    let peer = Peer::builder().connect(Tcp::new(addr).tls(pki.client(), "localhost")).await.unwrap();
    assert_eq!(VaultClient::new(peer).read("k".into()).await.unwrap(), "value of k");
}

#[tokio::test]
async fn a_tls_connection_counts_against_the_connection_limit() {
    let pki = Pki::new("test CA");
    let (server, _) = vault();
    let server = server.max_connections(1);
    let tcp = serve_tls_tcp(&server, pki.server()).await;
    let first = Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "localhost")).await.unwrap();
    let first = VaultClient::new(first);
    assert_eq!(first.read("k".into()).await.unwrap(), "value of k");
    // The second is told why, inside TLS, and closed.
    let second = VaultClient::new(Peer::builder().connect(Tcp::new(tcp).tls(pki.client(), "localhost")).await.unwrap());
    match second.read("k".into()).await {
        Err(error) => {
            assert!(error.to_string().contains("connections") || error.to_string().contains("closed"), "{error}")
        }
        Ok(value) => panic!("served beyond the limit: {value}"),
    }
    assert_eq!(first.read("k".into()).await.unwrap(), "value of k");
}

#[tokio::test]
async fn pem_errors_name_the_file_and_what_is_wrong() {
    let pki = Pki::new("test CA");
    let files = pki.files("errors");
    let error = ServerTls::from_pem_files(files.path("key.pem"), files.path("key.pem")).unwrap_err().to_string();
    assert!(
        error.contains(&format!("the TLS certificate chain `{}`: no certificate in it", files.path("key.pem"))),
        "{error}"
    );
    let error = ServerTls::from_pem_files(files.path("cert.pem"), files.path("cert.pem")).unwrap_err().to_string();
    assert!(
        error.contains(&format!("the TLS private key `{}`: no private key in it", files.path("cert.pem"))),
        "{error}"
    );
    let other = Pki::new("another CA");
    let error = ServerTls::from_pem(pki.server_cert.as_bytes(), other.server_key.as_bytes()).unwrap_err().to_string();
    assert!(error.contains("is not the key of the first certificate"), "{error}");
    let error = CaBundle::from_pem_file(files.path("missing.pem")).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    assert!(error.to_string().contains("missing.pem"), "{error}");
    assert!(ServerTls::from_pem_files(files.path("cert.pem"), files.path("key.pem")).is_ok());
}

/// The calculator binary serving with `args`, and the addresses it
/// printed for each of `schemes`.
async fn calculator(args: &[&str], schemes: &[&str]) -> (tokio::process::Child, Vec<String>) {
    let prefixes: Vec<String> = schemes.iter().map(|scheme| format!("listening on {scheme}")).collect();
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    crate::client_support::spawn_announcing(&crate::client_support::calculator(), args, &prefixes).await
}

#[tokio::test]
async fn python_calls_the_calculator_over_https_and_wss() {
    let Some(python) =
        tests::interop::require_python(&["websockets"], "python_calls_the_calculator_over_https_and_wss")
    else {
        return;
    };
    let pki = Pki::new("test CA");
    let files = pki.files("python");
    let (cert, key) = (files.path("cert.pem"), files.path("key.pem"));
    let args = ["--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key];
    let (_calculator, addrs) = calculator(&args, &["https://", "wss://"]).await;
    let port = |addr: &str| addr.rsplit(':').next().unwrap().to_owned();
    let script = r#"
import asyncio, json, ssl, sys, urllib.request
import websockets

context = ssl.create_default_context(cafile=sys.argv[1])
https, wss = sys.argv[2], sys.argv[3]

request = urllib.request.Request(https, data=b'{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}',
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, context=context) as answer:
    assert json.load(answer) == {"jsonrpc": "2.0", "result": 19, "id": 1}

async def over_wss():
    async with websockets.connect(wss, ssl=context) as ws:
        await ws.send('{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}')
        assert json.loads(await ws.recv()) == {"jsonrpc": "2.0", "result": 19, "id": 1}
        await ws.send('[{"jsonrpc":"2.0","method":"sum","params":[1,2,3],"id":2},{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":3}]')
        batch = sorted(json.loads(await ws.recv()), key=lambda r: r["id"])
        assert batch == [{"jsonrpc": "2.0", "result": 6, "id": 2}, {"jsonrpc": "2.0", "result": 0, "id": 3}], batch

asyncio.run(over_wss())

# Without the CA, Python's ssl refuses the calculator's certificate.
try:
    urllib.request.urlopen(request, context=ssl.create_default_context())
    sys.exit("an untrusted certificate was accepted")
except urllib.error.URLError as err:
    assert isinstance(err.reason, ssl.SSLCertVerificationError), err
print("ok")
"#;
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(python)
            .args(["-c", script, &files.path("ca.pem")])
            .arg(format!("https://localhost:{}/", port(&addrs[0])))
            .arg(format!("wss://localhost:{}/", port(&addrs[1])))
            .output(),
    )
    .await
    .expect("the Python client finished in time")
    .expect("run python");
    assert!(
        output.status.success() && output.stdout.starts_with(b"ok"),
        "the Python client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn the_calculator_serves_tls_on_tcp_and_says_what_is_wrong_with_its_flags() {
    let pki = Pki::new("test CA");
    let files = pki.files("calculator");
    let (cert, key) = (files.path("cert.pem"), files.path("key.pem"));
    let (_calculator, addrs) =
        calculator(&["--tcp", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key], &["tls://"]).await;
    let peer = Peer::builder().connect(Tcp::new(addrs[0].clone()).tls(pki.client(), "localhost")).await.unwrap();
    assert_eq!(peer.call::<i64, _>("subtract", [42, 23]).await.unwrap(), 19);

    let refused = |args: Vec<String>| async move {
        let output = tokio::process::Command::new(crate::client_support::calculator())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let owned = |args: &[&str]| args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
    let stderr = refused(owned(&["--http", "127.0.0.1:0", "--tls-cert", &cert])).await;
    assert!(stderr.contains("--tls-cert and --tls-key go together"), "{stderr}");
    let stderr = refused(owned(&["--tls-cert", &cert, "--tls-key", &key])).await;
    assert!(stderr.contains("need --http ADDR, --ws ADDR or --tcp ADDR"), "{stderr}");
    let stderr = refused(owned(&["--http", "127.0.0.1:0", "--tls-cert", &key, "--tls-key", &key])).await;
    assert!(stderr.contains("no certificate in it"), "{stderr}");
}
