//! Shared by the HTTP and WebSocket tests: a small service with an
//! identity, permissions and slow methods; a bearer-token hook; and a raw
//! HTTP/1.1 exchange over a TCP socket (the tests read the server's bytes
//! with their own code, not with hyper's).

use std::net::SocketAddr;
use std::time::Duration;

pub use rpc_runtime::transport::http::Http;
use rpc_runtime::{dispatch::Permissions, rpc, Context, ErrorObject, Refused, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const HANG_GUARD: Duration = Duration::from_secs(20);

/// Who the hook says the caller is.
#[derive(Clone, Debug)]
pub struct User(pub String);

/// A service whose methods tell what the caller's context holds.
#[rpc]
pub trait Vault {
    /// The caller's name, as the connection hook saw it.
    fn whoami(&self, cx: Context) -> String;

    /// Anyone may read.
    fn read(&self, key: String) -> String;

    /// Only callers holding `admin`.
    #[rpc(requires = "admin")]
    fn wipe(&self, confirm: bool) -> bool;

    /// Waits `ms`, then answers it.
    async fn sleep(&self, ms: u64) -> u64;

    /// Waits until cancelled, then says so.
    async fn wait_for_cancel(&self, cx: Context) -> Result<(), ErrorObject>;

    /// Calls the caller's `ping` back and answers with its result.
    async fn call_back(&self, cx: Context) -> Result<String, ErrorObject>;
}

pub struct VaultImpl {
    pub cancelled: tokio::sync::mpsc::UnboundedSender<()>,
}

impl Vault for VaultImpl {
    fn whoami(&self, cx: Context) -> String {
        cx.extension::<User>().map_or_else(|| "anonymous".to_owned(), |user| user.0.clone())
    }

    fn read(&self, key: String) -> String {
        format!("value of {key}")
    }

    fn wipe(&self, confirm: bool) -> bool {
        confirm
    }

    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }

    async fn wait_for_cancel(&self, cx: Context) -> Result<(), ErrorObject> {
        cx.cancelled().await;
        let _ = self.cancelled.send(());
        Ok(())
    }

    async fn call_back(&self, cx: Context) -> Result<String, ErrorObject> {
        let peer = cx.peer().ok_or_else(|| ErrorObject::internal_error("no connection to call back"))?;
        peer.call::<String, _>("ping", ()).await.map_err(|err| ErrorObject::internal_error(err.to_string()))
    }
}

pub fn vault() -> (Server, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (Server::new(VaultImpl { cancelled: tx }.into_rpc()), rx)
}

/// Bearer tokens: `alice` (admin), `bob` (no permissions); anything else
/// is refused (401 without a bearer token, 403 with an unknown one).
pub fn with_tokens(server: Server) -> Server {
    server.on_connect(|info, cx| match info.bearer_token() {
        None => Err(Refused::unauthorized("no bearer token")),
        Some("alice") => Ok(cx.with_extension(User("alice".into())).with_extension(Permissions::new(["admin"]))),
        Some("bob") => Ok(cx.with_extension(User("bob".into()))),
        Some(_) => Err(Refused::forbidden("unknown token")),
    })
}

/// A listener on a free port of 127.0.0.1.
pub async fn listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    (listener, addr)
}

/// Serves `server` over HTTP with `http` settings on a free port until the
/// returned sender is dropped or fired; the join handle completes once the
/// server shut down.
pub async fn serve(
    server: &Server,
    http: Http,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = http.bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    (addr, stop, task)
}

/// An HTTP response as read off the socket.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("not JSON ({err}): {}", self.body))
    }
}

/// `POST /` of `body` with these extra header lines.
pub fn post(addr: SocketAddr, body: &str, headers: &[&str]) -> String {
    let mut request = format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n", body.len());
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// `post` with `Content-Type: application/json`.
pub fn post_json(addr: SocketAddr, body: &str, headers: &[&str]) -> String {
    let mut all = vec!["Content-Type: application/json"];
    all.extend_from_slice(headers);
    post(addr, body, &all)
}

/// Sends `request` on a new connection and reads one response.
pub async fn exchange(addr: SocketAddr, request: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    read_reply(&mut stream).await
}

/// Reads one response (with a `Content-Length` or no body) off `stream`;
/// what arrives past it is dropped.
pub async fn read_reply(stream: &mut TcpStream) -> Reply {
    tokio::time::timeout(HANG_GUARD, async {
        let mut buf = Vec::new();
        loop {
            if let Some((_, reply)) = take_response(&mut buf) {
                break reply;
            }
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "connection closed before a whole response: {:?}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("a response in time")
}

/// Takes the first response off `buf` when it is all there: its status
/// line and the reply (a body only as long as its `Content-Length`; the
/// server sends no chunked answers).
pub fn take_response(buf: &mut Vec<u8>) -> Option<(String, Reply)> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8(buf[..head_end].to_vec()).expect("UTF-8 head");
    let mut lines = head.split("\r\n");
    let line = lines.next().expect("status line").to_owned();
    let status = line.split(' ').nth(1).expect("status code").parse().expect("a number");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, value)| value.parse().expect("a length"));
    let end = head_end + 4 + length;
    if buf.len() < end {
        return None;
    }
    let body = String::from_utf8(buf[head_end + 4..end].to_vec()).expect("UTF-8 body");
    buf.drain(..end);
    Some((line, Reply { status, headers, body }))
}

/// A TCP proxy to `to` whose connections are all cut at each
/// `cut.send(())` (new ones are served as before), to lose a connection
/// without the server's say.
pub async fn cuttable_proxy(to: SocketAddr) -> (SocketAddr, tokio::sync::broadcast::Sender<()>) {
    let (listener, addr) = listener().await;
    let (cut, _) = tokio::sync::broadcast::channel::<()>(4);
    let cuts = cut.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let mut cut = cuts.subscribe();
            tokio::spawn(async move {
                let mut outbound = TcpStream::connect(to).await.unwrap();
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cut.recv() => {}
                }
            });
        }
    });
    (addr, cut)
}
