//! The WebSocket transport over real sockets: the same peer as every other
//! transport (calls both ways, cancellation), the connection hook and
//! Origin check at the handshake, binary frames, keep-alive pings, the
//! close handshake, the size limit, and a client that reconnects (its
//! calls in flight fail when the connection is lost, whether or not the
//! server comes back).

use crate::client_support::next_event;
use crate::web_support;
use crate::web_support::cuttable_proxy;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rpc_runtime::{
    rpc,
    transport::{ws::Reconnect, ws::WsConnect},
    wire::TRANSPORT_ERROR,
    Cancellation, ClientError, Limits, Peer, Server, SubscriptionSink,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use web_support::*;

/// What the client side serves, for the server to call back.
#[rpc]
pub trait Pinger {
    fn ping(&self) -> String;
}

struct PingerImpl;

impl Pinger for PingerImpl {
    fn ping(&self) -> String {
        "pong from the client".to_owned()
    }
}

type Raw = tokio_tungstenite::WebSocketStream<TcpStream>;

/// A WebSocket client that is not ours.
async fn raw_client(addr: std::net::SocketAddr) -> Raw {
    let stream = TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(format!("ws://{addr}/"), stream).await.expect("handshake").0
}

/// The next text frame, skipping control frames.
async fn next_text(ws: &mut Raw) -> serde_json::Value {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            match ws.next().await.expect("a frame").expect("not an error") {
                Message::Text(text) => return serde_json::from_str(&text).unwrap(),
                Message::Close(frame) => panic!("closed: {frame:?}"),
                _ => continue,
            }
        }
    })
    .await
    .expect("a text frame in time")
}

#[tokio::test]
async fn a_typed_client_calls_and_the_server_calls_back() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    let peer = Peer::builder()
        .router(PingerImpl.into_rpc())
        // The upgrade request's token, read by `ConnectionInfo::bearer_token`
        // (the scheme in any case).
        .connect(WsConnect::new(format!("ws://{addr}/")).header("authorization", "bearer alice"))
        .await
        .expect("connect");
    let vault = VaultClient::new(peer);
    assert_eq!(vault.whoami().await.unwrap(), "alice");
    assert!(vault.wipe(true).await.unwrap());
    assert_eq!(vault.call_back().await.unwrap(), "pong from the client");
    let mut batch = vault.batch();
    let (a, b) = (batch.read("a".into()), batch.sleep(2));
    batch.send().await.unwrap();
    assert_eq!((a.await.unwrap().as_str(), b.await.unwrap()), ("value of a", 2));
}

#[tokio::test]
async fn the_hook_and_origin_check_refuse_the_handshake() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&with_tokens(server), Http::default()).await;
    let err = Peer::builder()
        .connect(rpc_runtime::transport::ws::WsConnect::new(format!("ws://{addr}/")))
        .await
        .expect_err("no token");
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("401"), "{err}");
    let err = Peer::builder()
        .connect(WsConnect::new(format!("ws://{addr}/")).header("authorization", "Bearer mallory"))
        .await
        .expect_err("unknown token");
    assert!(err.to_string().contains("403"), "{err}");
    let err = Peer::builder()
        .connect(
            WsConnect::new(format!("ws://{addr}/"))
                .header("authorization", "Bearer bob")
                .header("origin", "https://evil.example"),
        )
        .await
        .expect_err("foreign origin");
    assert!(err.to_string().contains("403"), "{err}");
    let bob = Peer::builder()
        .connect(WsConnect::new(format!("ws://{addr}/")).header("authorization", "Bearer bob"))
        .await
        .unwrap();
    let error = VaultClient::new(bob).wipe(true).await.expect_err("bob is no admin");
    assert!(matches!(error, ClientError::Server(e) if e.code() == rpc_runtime::wire::PERMISSION_DENIED));
}

#[tokio::test]
async fn an_abandoned_call_cancels_the_handler() {
    let (server, mut cancelled) = vault();
    let (addr, _stop, _task) = serve(&server.cancellation(Cancellation::Lsp), Http::default()).await;
    let peer = Peer::builder()
        .cancellation(Cancellation::Lsp)
        .connect(rpc_runtime::transport::ws::WsConnect::new(format!("ws://{addr}/")))
        .await
        .unwrap();
    let vault = VaultClient::new(peer).with_timeout(Duration::from_millis(100));
    assert!(matches!(vault.wait_for_cancel().await, Err(ClientError::Timeout(_))));
    tokio::time::timeout(HANG_GUARD, cancelled.recv()).await.expect("the handler saw the cancellation");
}

#[tokio::test]
async fn binary_frames_are_refused_with_a_parse_error_naming_them() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::Binary(br#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#.to_vec().into()))
        .await
        .unwrap();
    let reply = next_text(&mut ws).await;
    assert_eq!(reply["error"]["code"], -32700);
    assert!(reply["error"]["message"].as_str().unwrap().contains("binary"), "{reply}");
    // The connection stays usable.
    ws.send(Message::text(r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":2}"#)).await.unwrap();
    assert_eq!(next_text(&mut ws).await, json!({"jsonrpc": "2.0", "result": "value of k", "id": 2}));
}

#[tokio::test]
async fn the_close_handshake_is_answered_and_sent() {
    let (server, _) = vault();
    let (addr, stop, task) = serve(&server, Http::default()).await;
    // The client closes: the server answers with its close frame.
    let mut ws = raw_client(addr).await;
    ws.close(None).await.unwrap();
    let end = tokio::time::timeout(HANG_GUARD, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | None => return,
                Some(Ok(_)) => continue,
                Some(Err(err)) => panic!("{err}"),
            }
        }
    });
    end.await.expect("the server closed too");
    // The server shuts down: a running request is answered, then a close
    // frame comes.
    let mut ws = raw_client(addr).await;
    ws.send(Message::text(r#"{"jsonrpc":"2.0","method":"sleep","params":[200],"id":1}"#)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.send(()).unwrap();
    assert_eq!(next_text(&mut ws).await["result"], 200);
    match tokio::time::timeout(HANG_GUARD, ws.next()).await.expect("a frame") {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected a close frame, got {other:?}"),
    }
    tokio::time::timeout(HANG_GUARD, task).await.expect("shut down").unwrap().unwrap();
}

#[tokio::test]
async fn keepalive_pings_close_a_silent_client_and_keep_a_live_one() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().ws_ping_interval(Some(Duration::from_millis(100)))).await;
    // A live client (tungstenite answers pings as it reads) outlasts
    // several intervals.
    let mut live = raw_client(addr).await;
    let reader = tokio::spawn(async move {
        let mut pings = 0;
        while let Some(Ok(message)) = live.next().await {
            if matches!(message, Message::Ping(_)) {
                pings += 1;
                if pings == 5 {
                    live.send(Message::text(r#"{"jsonrpc":"2.0","method":"read","params":["k"],"id":1}"#))
                        .await
                        .unwrap();
                }
            }
            if let Message::Text(text) = message {
                return (pings, text.to_string());
            }
        }
        panic!("the live client was disconnected after {pings} pings");
    });
    let (pings, answer) = tokio::time::timeout(HANG_GUARD, reader).await.expect("in time").unwrap();
    assert!(pings >= 5 && answer.contains("value of k"), "{pings} {answer}");
    // A silent client (a raw handshake, then nothing read or sent) is cut off.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let handshake = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    silent.write_all(handshake.as_bytes()).await.unwrap();
    let started = tokio::time::Instant::now();
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(HANG_GUARD, silent.read_to_end(&mut seen)).await.expect("closed in time");
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 101"), "{:?}", String::from_utf8_lossy(&seen));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn large_messages_whole_and_fragmented_are_answered() {
    // Larger than what the server's frame reader keeps ahead, so the read
    // buffer grows while the payload arrives.
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut ws = raw_client(addr).await;
    let key = "k".repeat(3 << 20);
    let request = format!(r#"{{"jsonrpc":"2.0","method":"read","params":["{key}"],"id":1}}"#);
    ws.send(Message::text(request.clone())).await.unwrap();
    let answer = next_text(&mut ws).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"].as_str().map(str::len), Some(key.len() + "value of ".len()));
    // The same request in three fragments, a ping between two of them.
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::{Frame, FrameHeader};
    let request = request.replace(r#""id":1"#, r#""id":2"#).into_bytes();
    let third = request.len() / 3;
    let pieces = [
        (OpCode::Data(Data::Text), false, &request[..third]),
        (OpCode::Data(Data::Continue), false, &request[third..2 * third]),
        (OpCode::Data(Data::Continue), true, &request[2 * third..]),
    ];
    for (index, (opcode, is_final, piece)) in pieces.into_iter().enumerate() {
        let header = FrameHeader { is_final, opcode, ..FrameHeader::default() };
        ws.send(Message::Frame(Frame::from_payload(header, piece.to_vec().into()))).await.unwrap();
        if index == 1 {
            ws.send(Message::Ping(b"between".to_vec().into())).await.unwrap();
        }
    }
    let answer = next_text(&mut ws).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"].as_str().map(str::len), Some(key.len() + "value of ".len()));
}

#[tokio::test]
async fn a_message_over_the_limit_closes_with_1009() {
    let (server, _) = vault();
    let server = server.limits(Limits::default().max_message_size(1024));
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut ws = raw_client(addr).await;
    let big = format!(r#"{{"jsonrpc":"2.0","method":"read","params":["{}"],"id":1}}"#, "x".repeat(4096));
    let _ = ws.send(Message::text(big)).await;
    let frame = tokio::time::timeout(HANG_GUARD, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
    .expect("closed in time")
    .expect("a close frame with a code");
    assert_eq!(frame.code, CloseCode::Size);
    assert!(frame.reason.contains("1024"), "{}", frame.reason);
}

#[tokio::test]
async fn a_reconnecting_client_fails_calls_in_flight_and_carries_on() {
    let (server, _) = vault();
    let (server_addr, _stop, _task) = serve(&server, Http::default().allow_any_host()).await;
    let (proxy, cut) = cuttable_proxy(server_addr).await;
    let reconnect =
        Reconnect::default().initial(Duration::from_millis(20)).max(Duration::from_millis(200)).attempts(Some(50));
    let peer = Peer::builder().connect(WsConnect::new(format!("ws://{proxy}/")).reconnect(reconnect)).await.unwrap();
    let vault = VaultClient::new(peer);
    assert_eq!(vault.read("a".into()).await.unwrap(), "value of a");
    let in_flight = tokio::spawn({
        let vault = vault.clone();
        async move { vault.sleep(5_000).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cut.send(()).unwrap();
    let failed = tokio::time::timeout(HANG_GUARD, in_flight).await.expect("failed in time").unwrap();
    match failed {
        Err(ClientError::Server(error)) => {
            assert_eq!(error.code(), TRANSPORT_ERROR);
            assert!(error.message().contains("connection was lost"), "{}", error.message());
        }
        other => panic!("expected a transport error object, got {other:?}"),
    }
    let again = tokio::time::timeout(HANG_GUARD, vault.read("b".into())).await.expect("answered in time");
    assert_eq!(again.unwrap(), "value of b");
}

/// Ticks to subscribe to over a connection that is lost and re-made.
#[rpc]
pub trait Ticker {
    /// 1, 2, 3... every few milliseconds, until unsubscribed.
    #[rpc(unsubscribe = "stop_ticks")]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

/// Says each time a `ticks` subscription ends on the server.
struct TickerImpl(tokio::sync::mpsc::UnboundedSender<()>);

impl Ticker for TickerImpl {
    async fn ticks(&self, sink: SubscriptionSink<u64>) {
        for n in 1.. {
            if sink.send(n).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = self.0.send(());
    }
}

/// A `Ticker` subscription over a client of `addr` that reconnects within
/// `max` between attempts, its first tick read.
async fn ticking(addr: impl std::fmt::Display, max: Duration, attempts: u32) -> rpc_runtime::Subscription<u64> {
    let reconnect = Reconnect::default().initial(Duration::from_millis(20)).max(max).attempts(Some(attempts));
    let peer = Peer::builder().connect(WsConnect::new(format!("ws://{addr}/")).reconnect(reconnect)).await.unwrap();
    let mut ticks = TickerClient::new(peer).ticks().await.expect("subscribed");
    assert_eq!(ticks.next().await.expect("an item").expect("a tick"), 1);
    ticks
}

/// A subscription made over a connection that is then lost used to wait
/// for items forever: the new connection's server knows nothing of it.
/// Now its stream says so (`Resubscribed`: items may have been missed),
/// the subscription is made again once the connection is re-made, and its
/// items flow on; dropping it unsubscribes under its new id.
#[tokio::test]
async fn a_reconnecting_client_makes_its_subscriptions_again_and_says_items_may_be_missed() {
    let (ended, mut ends) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::new(TickerImpl(ended).into_rpc());
    let (server_addr, _stop, _task) = serve(&server, Http::default().allow_any_host()).await;
    let (proxy, cut) = cuttable_proxy(server_addr).await;
    let mut ticks = ticking(proxy, Duration::from_millis(200), 50).await;

    cut.send(()).unwrap();
    match next_event(&mut ticks).await {
        Some(Err(err @ ClientError::Resubscribed)) => {
            assert!(err.to_string().contains("items sent in between were missed"), "{err}");
        }
        other => panic!("expected Resubscribed, got {other:?}"),
    }
    tokio::time::timeout(HANG_GUARD, ends.recv()).await.expect("the old subscription ended on the server");

    // The new subscription starts over, as a fresh one does.
    let next = tokio::time::timeout(HANG_GUARD, ticks.next()).await.expect("items flow again");
    assert_eq!(next.expect("an item").expect("a tick"), 1);
    assert_eq!(ticks.next().await.expect("an item").expect("a tick"), 2);

    drop(ticks);
    tokio::time::timeout(HANG_GUARD, ends.recv()).await.expect("dropping it unsubscribed the new subscription");
}

/// The server itself stopped mid-stream and started again on the same
/// port: the client keeps trying (with backoff) while it is down, then
/// makes its subscription again on the new server.
#[tokio::test]
async fn subscriptions_come_back_when_the_server_is_restarted() {
    let (ended, _ends) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::new(TickerImpl(ended).into_rpc());
    let (addr, stop, task) = serve(&server, Http::default().allow_any_host()).await;
    let mut ticks = ticking(addr, Duration::from_millis(100), 200).await;

    // Stopped: its connections end, and connecting is refused for a while.
    stop.send(()).expect("serving");
    tokio::time::timeout(HANG_GUARD, task).await.expect("stopped").expect("not panicked").expect("served");
    let said = next_event(&mut ticks).await;
    assert!(matches!(said, Some(Err(ClientError::Resubscribed))), "{said:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Started again on the same address.
    let listener = Http::default().allow_any_host().bind(&addr.to_string()).await.expect("bind the same port again");
    let _serving = tokio::spawn(server.serve(listener));
    let next = tokio::time::timeout(HANG_GUARD, ticks.next()).await.expect("items flow from the new server");
    assert_eq!(next.expect("an item").expect("a tick"), 1);
}

/// A server that comes back without the subscription method: making the
/// subscription again fails, and its stream ends with that error.
#[tokio::test]
async fn a_subscription_the_new_server_refuses_ends_with_its_error() {
    let (ended, _ends) = tokio::sync::mpsc::unbounded_channel();
    let (addr, stop, task) = serve(&Server::new(TickerImpl(ended).into_rpc()), Http::default().allow_any_host()).await;
    let mut ticks = ticking(addr, Duration::from_millis(100), 200).await;
    stop.send(()).expect("serving");
    tokio::time::timeout(HANG_GUARD, task).await.expect("stopped").expect("not panicked").expect("served");

    // Back, as a server of something else.
    let (other, _) = vault();
    let listener = Http::default().allow_any_host().bind(&addr.to_string()).await.expect("bind the same port again");
    let _serving = tokio::spawn(other.serve(listener));
    let ending = tokio::time::timeout(HANG_GUARD, async {
        let mut seen = Vec::new();
        while let Some(item) = ticks.next().await {
            seen.push(item.map_err(|err| err.to_string()));
        }
        seen
    })
    .await
    .expect("the stream ends");
    let errors: Vec<&String> = ending.iter().filter_map(|item| item.as_ref().err()).collect();
    assert_eq!(errors.len(), 2, "Resubscribed, then the refusal: {ending:?}");
    assert!(errors[0].contains("items sent in between were missed"), "{ending:?}");
    assert!(errors[1].contains("-32601") || errors[1].contains("Method not found"), "{ending:?}");
}

/// A TCP proxy to `to` that can be taken down (its connections cut, and
/// new ones closed as soon as they are accepted, as a server that is gone)
/// and brought back up: `false` on the sender takes it down.
async fn switchable_proxy(to: std::net::SocketAddr) -> (std::net::SocketAddr, tokio::sync::watch::Sender<bool>) {
    let (listener, addr) = listener().await;
    let (up, up_seen) = tokio::sync::watch::channel(true);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let mut up = up_seen.clone();
            if !*up.borrow_and_update() {
                continue;
            }
            tokio::spawn(async move {
                let mut outbound = TcpStream::connect(to).await.unwrap();
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = up.wait_for(|up| !*up) => {}
                }
            });
        }
    });
    (addr, up)
}

/// How long a call in flight may take to fail once its connection is
/// lost: it fails at once, so this only tells a hang from an answer.
const LOST_CALL_GUARD: Duration = Duration::from_secs(5);

/// Takes the proxy down under a call in flight and checks that the call
/// fails with the transport error, without waiting for the server.
async fn a_call_in_flight_fails_when(vault: &VaultClient, proxy_up: &tokio::sync::watch::Sender<bool>) {
    let in_flight = tokio::spawn({
        let vault = vault.clone();
        async move { vault.sleep(60_000).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    proxy_up.send(false).unwrap();
    let failed = tokio::time::timeout(LOST_CALL_GUARD, in_flight)
        .await
        .expect("the call in flight failed at once, without waiting for a reconnection")
        .unwrap();
    match failed {
        Err(ClientError::Server(error)) => {
            assert_eq!(error.code(), TRANSPORT_ERROR);
            assert!(error.message().contains("connection was lost"), "{}", error.message());
        }
        other => panic!("expected a transport error object, got {other:?}"),
    }
}

/// A vault served over WebSocket behind a proxy that can be taken down, and
/// a client of it that reconnects forever (the default), made one call.
/// The server's handles are returned to keep it running.
async fn vault_behind_a_switchable_proxy() -> (VaultClient, tokio::sync::watch::Sender<bool>, impl Sized) {
    let (server, _) = vault();
    let (server_addr, stop, task) = serve(&server, Http::default().allow_any_host()).await;
    let (proxy, proxy_up) = switchable_proxy(server_addr).await;
    let reconnect = Reconnect::default().initial(Duration::from_millis(20)).max(Duration::from_millis(200));
    let peer = Peer::builder().connect(WsConnect::new(format!("ws://{proxy}/")).reconnect(reconnect)).await.unwrap();
    let vault = VaultClient::new(peer);
    assert_eq!(vault.read("a".into()).await.unwrap(), "value of a");
    (vault, proxy_up, (stop, task))
}

#[tokio::test]
async fn a_call_in_flight_fails_at_once_when_the_server_never_comes_back() {
    let (vault, proxy_up, _server) = vault_behind_a_switchable_proxy().await;
    a_call_in_flight_fails_when(&vault, &proxy_up).await;
}

#[tokio::test]
async fn a_call_in_flight_fails_before_the_server_comes_back_and_later_calls_use_it() {
    let (vault, proxy_up, _server) = vault_behind_a_switchable_proxy().await;
    a_call_in_flight_fails_when(&vault, &proxy_up).await;
    // Made while the server is gone: it waits for the new connection.
    let waiting = tokio::spawn({
        let vault = vault.clone();
        async move { vault.read("b".into()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy_up.send(true).unwrap();
    let waited = tokio::time::timeout(HANG_GUARD, waiting).await.expect("answered in time").unwrap();
    assert_eq!(waited.unwrap(), "value of b");
    let again = tokio::time::timeout(HANG_GUARD, vault.read("c".into())).await.expect("answered in time");
    assert_eq!(again.unwrap(), "value of c");
}
