//! A TCP client that reconnects (`Tcp::reconnect`), over real sockets and
//! in both framings: a server stopped mid-stream and started again on the
//! same port gets the client's subscription back (the stream says items
//! were missed), calls made meanwhile wait for it, a call in flight when
//! the connection drops fails at once saying so, a client whose server
//! stays gone gives up after its attempts, and over TLS every new
//! connection makes its handshake again. A Unix socket client
//! (`Unix::reconnect`) gets its subscription back from a restarted daemon
//! too.

use crate::client_support::next_event;
use crate::common::{Wire, HANG_GUARD};
use crate::web_support::{cuttable_proxy, listener};

use std::net::SocketAddr;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rpc_runtime::transport::tcp::Tcp;
use rpc_runtime::transport::tls::{CaBundle, ClientTls, ServerTls, TlsListener};
use rpc_runtime::transport::{Listener, Reconnect};
use rpc_runtime::{rpc, wire::TRANSPORT_ERROR, ClientError, Peer, Server, SubscriptionSink};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Ticks to subscribe to, and calls, over a connection that is lost and
/// re-made.
#[rpc]
pub trait Feed {
    /// `text`, as sent.
    fn echo(&self, text: String) -> String;
    /// Answers after `ms` milliseconds.
    async fn sleep(&self, ms: u64) -> u64;
    /// 1, 2, 3... every few milliseconds, until unsubscribed.
    #[rpc(unsubscribe = "stop_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

struct FeedImpl;

impl Feed for FeedImpl {
    fn echo(&self, text: String) -> String {
        text
    }

    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }

    async fn ticks(&self, sink: SubscriptionSink<u64>) {
        for n in 1.. {
            if sink.send(n).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The feed, framed with `wire`.
fn feed_server(wire: Wire) -> Server {
    Server::new(FeedImpl.into_rpc()).framing(wire.framing())
}

/// A server running until the sender fires; the task ends once every
/// connection it served is closed.
struct Running {
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stops accepting, closes every connection, and waits until it is
    /// done: connecting is refused from then on.
    async fn stop(self) {
        self.stop.send(()).expect("serving");
        tokio::time::timeout(HANG_GUARD, self.task).await.expect("stopped").expect("not panicked").expect("served");
    }
}

fn run(server: &Server, listener: impl Listener) -> Running {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    Running { stop, task }
}

/// `server` on a free port.
async fn serve(server: &Server) -> (SocketAddr, Running) {
    let (listener, addr) = listener().await;
    (addr, run(server, listener))
}

/// `server` again on `addr`, the port a stopped server left.
async fn serve_again(server: &Server, addr: SocketAddr) -> Running {
    run(server, TcpListener::bind(addr).await.expect("bind the same port again"))
}

/// Quick retries, so that a restarted server is found soon; `attempts`
/// before giving up.
fn policy(attempts: u32) -> Reconnect {
    Reconnect::default().initial(Duration::from_millis(20)).max(Duration::from_millis(100)).attempts(Some(attempts))
}

/// A reconnecting client of `addr`, framed with `wire`.
async fn client(addr: SocketAddr, wire: Wire, attempts: u32) -> FeedClient {
    let peer = Peer::builder().framing(wire.framing()).connect(Tcp::new(addr).reconnect(policy(attempts))).await;
    FeedClient::new(peer.expect("connected"))
}

/// A `ticks` subscription of `feed`, its first tick read.
async fn ticking(feed: &FeedClient) -> rpc_runtime::Subscription<u64> {
    let mut ticks = feed.ticks().await.expect("subscribed");
    assert_eq!(ticks.next().await.expect("an item").expect("a tick"), 1);
    ticks
}

/// The server stopped mid-stream, refusing connections for a while, then
/// started again on the same port: the stream says items were missed,
/// then yields the new subscription's items (which start over); a call
/// made while the server was gone waits for the new connection.
#[tokio::test]
async fn subscriptions_come_back_when_the_tcp_server_is_restarted_in_both_framings() {
    for wire in Wire::BOTH {
        let server = feed_server(wire);
        let (addr, running) = serve(&server).await;
        let feed = client(addr, wire, 200).await;
        let mut ticks = ticking(&feed).await;
        assert_eq!(feed.echo("before".into()).await.unwrap(), "before", "{wire:?}");

        running.stop().await;
        let said = next_event(&mut ticks).await;
        assert!(matches!(said, Some(Err(ClientError::Resubscribed))), "{wire:?}: {said:?}");
        let waiting = tokio::spawn({
            let feed = feed.clone();
            async move { feed.echo("meanwhile".into()).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;

        let _running = serve_again(&server, addr).await;
        let next = tokio::time::timeout(HANG_GUARD, ticks.next()).await.expect("items flow from the new server");
        assert_eq!(next.expect("an item").expect("a tick"), 1, "{wire:?}");
        assert_eq!(ticks.next().await.expect("an item").expect("a tick"), 2, "{wire:?}");
        let waited = tokio::time::timeout(HANG_GUARD, waiting).await.expect("answered in time").unwrap();
        assert_eq!(waited.unwrap(), "meanwhile", "{wire:?}");
        assert_eq!(feed.echo("after".into()).await.unwrap(), "after", "{wire:?}");
    }
}

/// The same over a Unix socket (`Unix::reconnect`): a daemon restarted
/// at the same path gets its client's subscription back, and a call made
/// while it was gone waits for it.
#[cfg(unix)]
#[tokio::test]
async fn subscriptions_come_back_when_a_unix_socket_daemon_restarts() {
    use rpc_runtime::transport::unix::Unix;
    use tokio::net::UnixListener;

    let path = super::unix::socket_path("redial");
    let server = feed_server(Wire::Ndjson);
    let running = run(&server, UnixListener::bind(&path).expect("bind"));
    let peer = Peer::builder().connect(Unix::new(&path).reconnect(policy(200))).await.expect("connected");
    let feed = FeedClient::new(peer);
    let mut ticks = ticking(&feed).await;

    running.stop().await;
    std::fs::remove_file(&path).expect("the stopped daemon's socket file");
    let said = next_event(&mut ticks).await;
    assert!(matches!(said, Some(Err(ClientError::Resubscribed))), "{said:?}");
    let waiting = tokio::spawn({
        let feed = feed.clone();
        async move { feed.echo("meanwhile".into()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;

    let _running = run(&server, UnixListener::bind(&path).expect("bind the same path again"));
    let next = tokio::time::timeout(HANG_GUARD, ticks.next()).await.expect("items flow from the new daemon");
    assert_eq!(next.expect("an item").expect("a tick"), 1);
    let waited = tokio::time::timeout(HANG_GUARD, waiting).await.expect("answered in time").unwrap();
    assert_eq!(waited.unwrap(), "meanwhile");
    let _ = std::fs::remove_file(&path);
}

/// A call the server is still running when the connection drops fails at
/// once, saying that the connection was lost and the call may or may not
/// have run; the next call goes through the new connection.
#[tokio::test]
async fn a_call_in_flight_fails_at_once_when_the_tcp_connection_drops_in_both_framings() {
    for wire in Wire::BOTH {
        let (server_addr, _running) = serve(&feed_server(wire)).await;
        let (proxy, cut) = cuttable_proxy(server_addr).await;
        let feed = client(proxy, wire, 200).await;
        assert_eq!(feed.echo("a".into()).await.unwrap(), "a");
        let in_flight = tokio::spawn({
            let feed = feed.clone();
            async move { feed.sleep(60_000).await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        cut.send(()).unwrap();
        let failed = tokio::time::timeout(HANG_GUARD, in_flight).await.expect("failed at once").unwrap();
        let err = failed.expect_err("the connection was lost under it");
        let shown = err.to_string();
        match err {
            ClientError::Server(error) => {
                assert_eq!(error.code(), TRANSPORT_ERROR, "{wire:?}");
                assert!(error.message().starts_with("the TCP connection was lost"), "{}", error.message());
                assert!(error.message().contains("may or may not have run"), "{}", error.message());
                let data = error.data_as::<serde_json::Value>().expect("data").expect("JSON");
                assert_eq!(data, serde_json::json!({"transport": "tcp"}));
            }
            other => panic!("{wire:?}: expected a transport error object, got {other:?}"),
        }
        assert!(shown.starts_with("the TCP connection was lost"), "shown as what it is: {shown}");
        let again = tokio::time::timeout(HANG_GUARD, feed.echo("b".into())).await.expect("answered in time");
        assert_eq!(again.unwrap(), "b", "{wire:?}");
    }
}

/// A server that never comes back: after its two attempts the client
/// closes the connection, and calls (one made while it was still trying,
/// one after) fail saying why.
#[tokio::test]
async fn a_client_whose_server_stays_gone_gives_up_after_its_attempts() {
    for wire in Wire::BOTH {
        let (addr, running) = serve(&feed_server(wire)).await;
        let feed = client(addr, wire, 2).await;
        let mut ticks = ticking(&feed).await;
        running.stop().await;
        // Once the loss is noticed, calls wait for a new connection.
        let said = next_event(&mut ticks).await;
        assert!(matches!(said, Some(Err(ClientError::Resubscribed))), "{wire:?}: {said:?}");
        let during = tokio::spawn({
            let feed = feed.clone();
            async move { feed.echo("anyone?".into()).await }
        });
        let during = tokio::time::timeout(HANG_GUARD, during).await.expect("failed in time").unwrap();
        for err in [during.expect_err("no server"), feed.echo("later".into()).await.expect_err("closed")] {
            match &err {
                ClientError::Transport(io) => {
                    assert!(io.to_string().contains("reconnecting failed 2 times"), "{wire:?}: {io}")
                }
                other => panic!("{wire:?}: expected the connection's failure, got {other:?}"),
            }
            assert!(err.to_string().contains("reconnecting failed 2 times"), "{err}");
        }
        // The subscription could not be made again: its stream ends.
        let ended = tokio::time::timeout(HANG_GUARD, async {
            let mut rest = Vec::new();
            while let Some(item) = ticks.next().await {
                rest.push(item);
            }
            rest
        })
        .await
        .expect("the stream ends");
        assert!(ended.iter().all(Result::is_err), "{wire:?}: {ended:?}");
    }
}

/// A CA's certificate, and a server certificate for `localhost` it signed
/// (with its key), as PEM.
fn certificates() -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let server_cert = server.signed_by(&server_key, &issuer).unwrap();
    (ca_cert.pem(), server_cert.pem(), server_key.serialize_pem())
}

/// Over TLS, the new connection makes its handshake again: the restarted
/// server serves the subscription and calls as before.
#[tokio::test]
async fn a_reconnecting_tls_client_makes_the_handshake_again() {
    let (ca, cert, key) = certificates();
    let tls = || ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let server = feed_server(Wire::Ndjson);
    let (plain, addr) = listener().await;
    let running = run(&server, TlsListener::new(plain, tls()));
    let client_tls = ClientTls::new(&CaBundle::from_pem(ca.as_bytes()).unwrap());
    let target = Tcp::new(addr).reconnect(policy(200)).tls(client_tls, "localhost");
    let feed = FeedClient::new(Peer::builder().connect(target).await.expect("connected"));
    let mut ticks = ticking(&feed).await;

    running.stop().await;
    let said = next_event(&mut ticks).await;
    assert!(matches!(said, Some(Err(ClientError::Resubscribed))), "{said:?}");
    let _running = run(&server, TlsListener::bind(addr, tls()).await.expect("bind the same port again"));
    let next = tokio::time::timeout(HANG_GUARD, ticks.next()).await.expect("items flow from the new server");
    assert_eq!(next.expect("an item").expect("a tick"), 1);
    assert_eq!(feed.echo("over TLS".into()).await.unwrap(), "over TLS");
}
