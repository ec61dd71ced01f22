//! Subscriptions end to end: typed subscribe, items and unsubscribe over a
//! byte stream, TCP, WebSocket and the in-memory transport; unsubscribing by dropping the
//! stream; the server ending a subscription (normally and with an error);
//! the slow-reader policy on both sides; the per-connection limit; the
//! connection closing; and the wire shape, byte for byte.

use std::time::Duration;

use rpc_runtime::serde_json::{self, json, Value};
use rpc_runtime::{
    peer::{MessageSink, MessageSource, PendingSubscription, Received, SendError},
    rpc,
    transport::{memory::memory_pair, memory::MemorySink, memory::MemorySource},
    wire::SUBSCRIPTION_LAGGED,
    ClientError, ErrorObject, Limits, Peer, RpcError, Server, Subscription, SubscriptionSink,
};
use tokio::sync::mpsc;

/// A feed of numbers, in every shape a subscription method can take.
#[rpc]
pub trait Feed {
    /// Sends 1..=count, then ends; with `fail`, ends with an error instead.
    #[rpc(unsubscribe = "unsubscribe_feed")]
    async fn count_to(&self, count: u64, fail: bool, sink: SubscriptionSink<u64>) -> Result<(), FeedError>;

    /// Sends 1, 2, 3... (waiting for room, and a millisecond between
    /// items) until the subscription ends, then reports why.
    #[rpc(unsubscribe = "unsubscribe_feed")]
    async fn forever(&self, sink: SubscriptionSink<u64>);

    /// Sends `count` items without waiting (`try_send`), then waits for the
    /// subscription to end; reports the first failure.
    #[rpc(unsubscribe = "unsubscribe_feed")]
    async fn flood(&self, count: u64, sink: SubscriptionSink<String>);

    /// A subscription with an unsubscribe method of its own.
    #[rpc(unsubscribe = "stop_words")]
    async fn words(&self, sink: SubscriptionSink<String>);

    /// A plain method, to see that calls go on next to subscriptions.
    fn add(&self, a: u64, b: u64) -> u64;
}

/// What a [`Feed`] subscription can fail with.
#[derive(Debug, PartialEq, RpcError)]
pub enum FeedError {
    /// Asked to fail after `after` items.
    #[rpc(code = -32077, message = "Feed broke")]
    Broke { after: u64 },
}

/// Reports what the handlers saw: why each sink closed.
#[derive(Clone)]
struct FeedImpl {
    seen: mpsc::UnboundedSender<SendError>,
}

impl Feed for FeedImpl {
    async fn count_to(&self, count: u64, fail: bool, sink: SubscriptionSink<u64>) -> Result<(), FeedError> {
        for n in 1..=count {
            if sink.send(n).await.is_err() {
                return Ok(());
            }
        }
        if fail {
            return Err(FeedError::Broke { after: count });
        }
        Ok(())
    }

    async fn forever(&self, sink: SubscriptionSink<u64>) {
        for n in 1.. {
            if let Err(err) = sink.send(n).await {
                let _ = self.seen.send(err);
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    async fn flood(&self, count: u64, sink: SubscriptionSink<String>) {
        for n in 0..count {
            if let Err(err) = sink.try_send(format!("item {n}")) {
                let _ = self.seen.send(err);
                return;
            }
        }
        let why = sink.closed().await;
        let _ = self.seen.send(why);
    }

    async fn words(&self, sink: SubscriptionSink<String>) {
        let _ = sink.send("hello".to_owned()).await;
        let why = sink.closed().await;
        let _ = self.seen.send(why);
    }

    fn add(&self, a: u64, b: u64) -> u64 {
        a + b
    }
}

fn feed() -> (FeedImpl, mpsc::UnboundedReceiver<SendError>) {
    let (seen, rx) = mpsc::unbounded_channel();
    (FeedImpl { seen }, rx)
}

pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// The next reason a handler saw its sink close, within [`WAIT`].
pub(crate) async fn next_seen(seen: &mut mpsc::UnboundedReceiver<SendError>) -> SendError {
    tokio::time::timeout(WAIT, seen.recv()).await.expect("the handler reports in time").expect("a report")
}

/// The next item of a subscription, within [`WAIT`].
pub(crate) async fn next<T: std::fmt::Debug, E: std::fmt::Debug>(
    stream: &mut Subscription<T, E>,
) -> Option<Result<T, ClientError<E>>> {
    tokio::time::timeout(WAIT, stream.next()).await.expect("an item in time")
}

/// A client of `server` over the in-memory transport.
async fn in_memory(server: Server) -> FeedClient {
    FeedClient::new(Peer::builder().connect(server).await.unwrap())
}

/// A client of `server` over a byte stream (an in-process duplex pipe,
/// newline-delimited).
async fn over_bytes(server: Server) -> FeedClient {
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_side);
        let _ = server.serve(rpc_runtime::transport::stream::Stream::new(reader, writer)).await;
    });
    let (reader, writer) = tokio::io::split(client_side);
    FeedClient::new(Peer::builder().connect(rpc_runtime::transport::stream::Stream::new(reader, writer)).await.unwrap())
}

/// Subscribe, read typed items, the server's end, unsubscribe, and calls
/// next to a running subscription.
async fn exercise(client: &FeedClient, seen: &mut mpsc::UnboundedReceiver<SendError>) {
    // The server ends it: all items, then the end.
    let mut counting = client.count_to(3, false).await.unwrap();
    let mut items = Vec::new();
    while let Some(item) = next(&mut counting).await {
        items.push(item.unwrap());
    }
    assert_eq!(items, [1, 2, 3]);
    assert!(next(&mut counting).await.is_none(), "an ended stream stays ended");

    // The server ends it with the method's own error, typed.
    let mut failing = client.count_to(2, true).await.unwrap();
    assert_eq!(next(&mut failing).await.unwrap().unwrap(), 1);
    assert_eq!(next(&mut failing).await.unwrap().unwrap(), 2);
    match next(&mut failing).await {
        Some(Err(ClientError::App(FeedError::Broke { after: 2 }))) => {}
        other => panic!("expected the feed's own error, got {other:?}"),
    }
    assert!(next(&mut failing).await.is_none());

    // The client ends it: explicit unsubscribe, answered `true`; the
    // handler sees why.
    let mut endless = client.forever().await.unwrap();
    assert_eq!(next(&mut endless).await.unwrap().unwrap(), 1);
    assert_eq!(next(&mut endless).await.unwrap().unwrap(), 2);
    assert_eq!(client.add(2, 3).await.unwrap(), 5, "calls go on next to a subscription");
    assert!(endless.unsubscribe().await.unwrap());
    assert_eq!(next_seen(seen).await, SendError::Unsubscribed);

    // Two at once, each with its own items.
    let mut a = client.count_to(2, false).await.unwrap();
    let mut b = client.count_to(3, false).await.unwrap();
    assert_ne!(a.id().get(), b.id().get());
    let (mut from_a, mut from_b) = (Vec::new(), Vec::new());
    while let Some(item) = next(&mut a).await {
        from_a.push(item.unwrap());
    }
    while let Some(item) = next(&mut b).await {
        from_b.push(item.unwrap());
    }
    assert_eq!((from_a, from_b), (vec![1, 2], vec![1, 2, 3]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_items_over_the_in_memory_transport() {
    let (service, mut seen) = feed();
    let client = in_memory(Server::new(service.into_rpc())).await;
    exercise(&client, &mut seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_items_over_a_byte_stream() {
    let (service, mut seen) = feed();
    let client = over_bytes(Server::new(service.into_rpc())).await;
    exercise(&client, &mut seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_items_over_tcp() {
    let (service, mut seen) = feed();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::new(service.into_rpc());
    tokio::spawn(server.serve(listener));
    let client = FeedClient::new(Peer::builder().connect(rpc_runtime::transport::tcp::Tcp::new(addr)).await.unwrap());
    exercise(&client, &mut seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_items_over_websocket() {
    let (service, mut seen) = feed();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = rpc_runtime::transport::http::Http::default().listener(listener);
    tokio::spawn(Server::new(service.into_rpc()).serve(listener));
    let peer =
        Peer::builder().connect(rpc_runtime::transport::ws::WsConnect::new(format!("ws://{addr}/"))).await.unwrap();
    exercise(&FeedClient::new(peer), &mut seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_unsubscribes() {
    let (service, mut seen) = feed();
    let client = in_memory(Server::new(service.into_rpc())).await;
    let mut endless = client.forever().await.unwrap();
    assert_eq!(next(&mut endless).await.unwrap().unwrap(), 1);
    drop(endless);
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);

    // Also before its first item was read, and when the subscribe call is
    // dropped unanswered: the answer then unsubscribes.
    let endless = client.forever().await.unwrap();
    drop(endless);
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    let call = client.forever();
    let pending = tokio::spawn(call);
    pending.abort();
    let _ = pending.await;
    // The call may have been dropped before it was sent, or after: in the
    // second case the handler sees the unsubscribe.
    let report = tokio::time::timeout(Duration::from_millis(500), seen.recv()).await;
    if let Ok(report) = report {
        assert_eq!(report, Some(SendError::Unsubscribed));
    }
    assert_eq!(client.add(1, 1).await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscribe_method_ends_only_its_own_subscriptions() {
    let (service, mut seen) = feed();
    let client = in_memory(Server::new(service.into_rpc())).await;
    let peer = client.peer().clone();
    let mut words = client.words().await.unwrap();
    assert_eq!(next(&mut words).await.unwrap().unwrap(), "hello");
    let id: Value = serde_json::from_str(words.id().get()).unwrap();
    // `unsubscribe_feed` does not end a `words` subscription; an unknown id
    // is `false` too.
    assert!(!peer.call::<bool, _>("unsubscribe_feed", [&id]).await.unwrap());
    assert!(!peer.call::<bool, _>("stop_words", [999]).await.unwrap());
    // By name too.
    assert!(peer.call::<bool, _>("stop_words", json!({"subscription": id})).await.unwrap());
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    assert!(!peer.call::<bool, _>("stop_words", [&id]).await.unwrap(), "already ended");
    // A missing id, or one no subscribe call answers with: -32602 naming
    // the param.
    for params in [json!([]), json!(["7"]), json!([-1])] {
        match peer.call::<bool, _>("stop_words", &params).await {
            Err(ClientError::Server(error)) => {
                assert_eq!(error.code(), -32602, "{params}");
                assert!(error.message().contains("subscription"), "{}", error.message());
            }
            other => panic!("expected -32602 for {params}, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_connection_limit_refuses_with_a_clear_error() {
    let (service, _seen) = feed();
    let limits = Limits::default().max_subscriptions(2);
    let client = in_memory(Server::new(service.into_rpc()).limits(limits)).await;
    let first = client.forever().await.unwrap();
    let _second = client.forever().await.unwrap();
    match client.forever().await {
        Err(ClientError::Server(error)) => {
            assert_eq!(error.code(), -32000);
            assert!(error.message().contains("at most 2 subscriptions"), "{}", error.message());
            assert!(error.message().contains("max_subscriptions"), "{}", error.message());
        }
        other => panic!("expected -32000, got {other:?}"),
    }
    // Another connection has a limit of its own; ending one makes room.
    assert!(first.unsubscribe().await.unwrap());
    let _third = client.forever().await.unwrap();
}

/// The server side of a raw connection: what a client that does not read
/// (or reads later) sees, message by message.
async fn raw_client(server: Server) -> (MemorySource, MemorySink) {
    let (client_side, server_side) = memory_pair();
    tokio::spawn(async move {
        let (source, sink) = server_side;
        let _ = server
            .serve(
                rpc_runtime::transport::Transport::new(source, sink).info(rpc_runtime::ConnectionInfo::new("memory")),
            )
            .await;
    });
    client_side
}

async fn send(sink: &mut MemorySink, message: &str) {
    sink.send(message.as_bytes());
    sink.flush().await.unwrap();
}

async fn recv(source: &mut MemorySource) -> Value {
    match tokio::time::timeout(WAIT, source.recv()).await.expect("a message in time").unwrap() {
        Some(Received::Message(bytes)) => serde_json::from_slice(bytes).unwrap(),
        other => panic!("expected a message, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_falls_behind_is_dropped_with_an_error_notification() {
    let (service, mut seen) = feed();
    // Room for 4 items per subscription and about 200 bytes of unsent output.
    let limits = Limits::default().subscription_buffer(4).max_queued_bytes(200);
    let (mut source, mut sink) = raw_client(Server::new(service.into_rpc()).limits(limits)).await;
    // Subscribe, then read nothing while the handler floods.
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"flood","params":[100000],"id":1}"#).await;
    assert_eq!(next_seen(&mut seen).await, SendError::Lagged { capacity: 4 });
    // Reading now: the answer, the items that fit, then the error.
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 1, "id": 1}));
    let mut items = 0;
    let last = loop {
        let message = recv(&mut source).await;
        assert_eq!(message["method"], "subscription");
        assert_eq!(message["params"]["subscription"], 1);
        if message["params"].get("result").is_none() {
            break message;
        }
        assert_eq!(message["params"]["result"], format!("item {items}"));
        items += 1;
    };
    assert!(items < 100_000, "memory did not grow with the flood ({items} items were kept)");
    assert_eq!(last["params"]["error"]["code"], SUBSCRIPTION_LAGGED);
    let message = last["params"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("too slowly") && message.contains("subscription_buffer"), "{message}");
    // The connection carries on.
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 3, "id": 2}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_is_not_read_ends_with_lagged_and_unsubscribes() {
    let (service, mut seen) = feed();
    let client = Peer::builder()
        .limits(Limits::default().subscription_buffer(3))
        .connect(Server::new(service.into_rpc()))
        .await
        .unwrap();
    let client = FeedClient::new(client);
    let mut endless = client.forever().await.unwrap();
    // Not read: the server keeps sending, this side keeps 3 and gives up.
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    for expected in 1..=3 {
        assert_eq!(next(&mut endless).await.unwrap().unwrap(), expected);
    }
    match next(&mut endless).await {
        Some(Err(ClientError::Lagged(3))) => {}
        other => panic!("expected Lagged(3), got {other:?}"),
    }
    assert!(next(&mut endless).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_connection_ends_every_subscription_on_both_sides() {
    // The client leaves: every handler sees it.
    let (service, mut seen) = feed();
    let client = in_memory(Server::new(service.into_rpc())).await;
    let a = client.words().await.unwrap();
    let b = client.words().await.unwrap();
    client.peer().close();
    assert_eq!(next_seen(&mut seen).await, SendError::Closed);
    assert_eq!(next_seen(&mut seen).await, SendError::Closed);
    drop((a, b));

    // Over a byte stream whose client side is dropped, too.
    let (service, mut seen) = feed();
    let client = over_bytes(Server::new(service.into_rpc())).await;
    let endless = client.forever().await.unwrap();
    drop(client);
    drop(endless);
    let why = next_seen(&mut seen).await;
    assert!(matches!(why, SendError::Closed | SendError::Unsubscribed), "{why:?}");

    // The server side goes away: the stream says so after its items.
    let (service, _seen) = feed();
    let (client_side, server_side) = memory_pair();
    let server = Server::new(service.into_rpc());
    let serving = tokio::spawn(async move {
        let (source, sink) = server_side;
        server
            .serve(
                rpc_runtime::transport::Transport::new(source, sink).info(rpc_runtime::ConnectionInfo::new("memory")),
            )
            .await
    });
    let (source, sink) = client_side;
    let client =
        FeedClient::new(Peer::builder().connect(rpc_runtime::transport::Transport::new(source, sink)).await.unwrap());
    let mut words = client.words().await.unwrap();
    assert_eq!(next(&mut words).await.unwrap().unwrap(), "hello");
    serving.abort();
    match next(&mut words).await {
        Some(Err(ClientError::Closed)) => {}
        other => panic!("expected Closed, got {other:?}"),
    }
    assert!(next(&mut words).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_shape_is_the_ethereum_convention() {
    let (service, mut seen) = feed();
    let (mut source, mut sink) = raw_client(Server::new(service.into_rpc())).await;
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"count_to","params":{"count":2,"fail":false},"id":"a"}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 1, "id": "a"}));
    for n in 1..=2 {
        assert_eq!(
            recv(&mut source).await,
            json!({"jsonrpc": "2.0", "method": "subscription", "params": {"subscription": 1, "result": n}})
        );
    }
    assert_eq!(
        recv(&mut source).await,
        json!({"jsonrpc": "2.0", "method": "subscription", "params": {"subscription": 1, "end": true}})
    );
    // Failing: the last notification carries the error object.
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"count_to","params":[0,true],"id":2}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 2, "id": 2}));
    assert_eq!(
        recv(&mut source).await,
        json!({"jsonrpc": "2.0", "method": "subscription",
               "params": {"subscription": 2, "error": {"code": -32077, "message": "Feed broke", "data": {"after": 0}}}})
    );
    // Called as a notification, nothing opens (nobody would learn the id).
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"words"}"#).await;
    // In a batch whose other entry waits: the items come after the answer.
    send(
        &mut sink,
        r#"[{"jsonrpc":"2.0","method":"words","id":3},{"jsonrpc":"2.0","method":"add","params":[1,1],"id":4}]"#,
    )
    .await;
    let batch = recv(&mut source).await;
    assert_eq!(batch, json!([{"jsonrpc": "2.0", "result": 3, "id": 3}, {"jsonrpc": "2.0", "result": 2, "id": 4}]));
    assert_eq!(
        recv(&mut source).await,
        json!({"jsonrpc": "2.0", "method": "subscription", "params": {"subscription": 3, "result": "hello"}})
    );
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"stop_words","params":[3],"id":5}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": true, "id": 5}));
    assert_eq!(next_seen(&mut seen).await, SendError::Unsubscribed);
    // Bad params are -32602 and open nothing.
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"count_to","params":{"count":"x","fail":false},"id":6}"#).await;
    let answer = recv(&mut source).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["id"], 6);
}

/// Items arrive in order and typed even when many are in flight at once.
/// (A stream holds at most `subscription_buffer` unread items; this one has
/// room for all, so that a slow test build never lags.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_items_arrive_in_order() {
    let (service, _seen) = feed();
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let server = Server::new(service.into_rpc());
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_side);
        let _ = server.serve(rpc_runtime::transport::stream::Stream::new(reader, writer)).await;
    });
    let (reader, writer) = tokio::io::split(client_side);
    let limits = Limits::default().subscription_buffer(32_768);
    let client = FeedClient::new(
        Peer::builder()
            .limits(limits)
            .connect(rpc_runtime::transport::stream::Stream::new(reader, writer))
            .await
            .unwrap(),
    );
    let mut counting = client.count_to(20_000, false).await.unwrap();
    let mut expected = 1;
    while let Some(item) = next(&mut counting).await {
        assert_eq!(item.unwrap(), expected);
        expected += 1;
    }
    assert_eq!(expected, 20_001);
}

/// The untyped `Peer::subscribe`, for servers without a trait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untyped_subscriptions() {
    let (service, _seen) = feed();
    let peer = Peer::builder().connect(Server::new(service.into_rpc())).await.unwrap();
    let mut counting =
        peer.subscribe::<Value, _>("count_to", json!([2, false]), "subscription", "unsubscribe_feed").await.unwrap();
    assert_eq!(next(&mut counting).await.unwrap().unwrap(), json!(1));
    assert_eq!(next(&mut counting).await.unwrap().unwrap(), json!(2));
    assert!(next(&mut counting).await.is_none());
}

/// A subscribe call over HTTP `POST` (one answer per request, nothing
/// after it) is the caller's mistake, not the server's: -32601 with a
/// message that says why and what to use, not -32603.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_over_http_post_says_the_transport_carries_no_notifications() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (service, _seen) = feed();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = rpc_runtime::transport::http::Http::default().listener(listener);
    tokio::spawn(Server::new(service.into_rpc()).serve(listener));
    let body = r#"{"jsonrpc":"2.0","method":"count_to","params":[3,false],"id":1}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut reply)).await.unwrap().unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|err| panic!("{err}: {body}"));
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Notifications not supported"), "{message}");
    assert!(message.contains("`count_to`") && message.contains("WebSocket"), "{message}");
}

/// Events from a broadcast channel, the case where setup must come before
/// the client learns the id.
#[rpc]
pub trait Bus {
    /// Sends 0 at once, then every event fired after the subscription.
    #[rpc(unsubscribe = "unsubscribe_events")]
    async fn events(&self, sink: SubscriptionSink<u64>);

    /// Fires `value`; answers how many subscriptions were listening.
    fn fire(&self, value: u64) -> usize;
}

struct BusImpl {
    events: tokio::sync::broadcast::Sender<u64>,
}

impl Bus for BusImpl {
    async fn events(&self, sink: SubscriptionSink<u64>) {
        // The setup: done before the subscribe call is answered.
        let mut events = self.events.subscribe();
        let _ = sink.try_send(0);
        while let Ok(event) = events.recv().await {
            if sink.send(event).await.is_err() {
                return;
            }
        }
    }

    fn fire(&self, value: u64) -> usize {
        self.events.send(value).unwrap_or(0)
    }
}

fn bus() -> Server {
    Server::new(BusImpl { events: tokio::sync::broadcast::channel(16).0 }.into_rpc())
}

fn event(subscription: u64, value: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "subscription", "params": {"subscription": subscription, "result": value}})
}

/// The race jsonrpsee's pending sink closes: an event fired right after the
/// subscription is set up, by the client that just subscribed, arrives.
/// In one batch (the event fired by the very next entry), and pipelined
/// (fired before the client has even read the id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_fired_right_after_subscribing_is_not_lost() {
    let (mut source, mut sink) = raw_client(bus()).await;
    send(
        &mut sink,
        r#"[{"jsonrpc":"2.0","method":"events","id":1},{"jsonrpc":"2.0","method":"fire","params":[7],"id":2}]"#,
    )
    .await;
    assert_eq!(
        recv(&mut source).await,
        json!([{"jsonrpc": "2.0", "result": 1, "id": 1}, {"jsonrpc": "2.0", "result": 1, "id": 2}]),
        "the event found the subscription's receiver in place"
    );
    // What the setup sent, then the event: both after the answer.
    assert_eq!(recv(&mut source).await, event(1, 0));
    assert_eq!(recv(&mut source).await, event(1, 7));

    for round in 0..20 {
        let (mut source, mut sink) = raw_client(bus()).await;
        send(&mut sink, r#"{"jsonrpc":"2.0","method":"events","id":"s"}"#).await;
        send(&mut sink, &format!(r#"{{"jsonrpc":"2.0","method":"fire","params":[{round}],"id":"f"}}"#)).await;
        assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 1, "id": "s"}), "the id comes first");
        let mut rest = vec![recv(&mut source).await, recv(&mut source).await, recv(&mut source).await];
        let fired = rest.iter().position(|message| message["id"] == "f").expect("fire is answered");
        assert_eq!(rest.remove(fired), json!({"jsonrpc": "2.0", "result": 1, "id": "f"}), "one listener");
        assert_eq!(rest, [event(1, 0), event(1, round)]);
    }
}

/// A watch whose setup must await before it can listen (a query, a remote
/// subscription): the case `PendingSubscription` is for.
#[rpc]
pub trait Watch {
    /// After an awaited setup: with `decide` "accept", accepts and sends
    /// every event ("slow": after a longer setup); "reject" rejects;
    /// "never" returns without deciding; "fail" returns an error without
    /// deciding; "drop" drops the pending sink and goes on.
    #[rpc(unsubscribe = "unsubscribe_watch")]
    async fn watch(&self, decide: String, pending: PendingSubscription<u64>) -> Result<(), ErrorObject>;

    /// Fires `value`; answers how many subscriptions were listening.
    fn fire(&self, value: u64) -> usize;
}

/// The same subscription through a `SubscriptionSink`: its catalog must be the same.
#[rpc]
pub trait SinkWatch {
    /// After an awaited setup: with `decide` "accept", accepts and sends
    /// every event ("slow": after a longer setup); "reject" rejects;
    /// "never" returns without deciding; "fail" returns an error without
    /// deciding; "drop" drops the pending sink and goes on.
    #[rpc(unsubscribe = "unsubscribe_watch")]
    async fn watch(&self, decide: String, sink: SubscriptionSink<u64>) -> Result<(), ErrorObject>;

    /// Fires `value`; answers how many subscriptions were listening.
    fn fire(&self, value: u64) -> usize;
}

struct WatchImpl {
    events: tokio::sync::broadcast::Sender<u64>,
    /// Why each accepted sink closed, and what the handler did after it
    /// stopped being seen.
    seen: mpsc::UnboundedSender<String>,
}

/// Code of the error a "fail" watch returns.
const WATCH_FAILED: i64 = -32099;

impl Watch for WatchImpl {
    async fn watch(&self, decide: String, pending: PendingSubscription<u64>) -> Result<(), ErrorObject> {
        // Setup that awaits, then listens: a `SubscriptionSink` would have had its id
        // sent at the first `.await`, before the receiver exists.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut events = self.events.subscribe();
        // Another producer fires right after the setup, before the
        // handler's first send.
        let _ = self.events.send(1);
        tokio::task::yield_now().await;
        match decide.as_str() {
            "accept" => {}
            "slow" => tokio::time::sleep(Duration::from_millis(100)).await,
            "reject" => {
                pending.reject(ErrorObject::invalid_params("no such feed")).await;
                let _ = self.seen.send("went on after reject".to_owned());
                return Err(ErrorObject::new(WATCH_FAILED, "not seen by anyone"));
            }
            "never" => return Ok(()),
            "fail" => return Err(ErrorObject::new(WATCH_FAILED, "the feed is down")),
            _ => {
                drop(pending);
                tokio::time::sleep(Duration::from_millis(10)).await;
                let _ = self.seen.send("went on after drop".to_owned());
                return Ok(());
            }
        }
        let sink = match pending.accept().await {
            Ok(sink) => sink,
            Err(why) => {
                let _ = self.seen.send(why.to_string());
                return Err(why.into());
            }
        };
        loop {
            tokio::select! {
                why = sink.closed() => {
                    // Stop listening before saying so: a `fire` the test
                    // sends next must not count this subscription.
                    drop(events);
                    let _ = self.seen.send(why.to_string());
                    return Ok(());
                }
                event = events.recv() => match event {
                    Ok(event) => sink.send(event).await?,
                    Err(_) => return Ok(()),
                },
            }
        }
    }

    fn fire(&self, value: u64) -> usize {
        self.events.send(value).unwrap_or(0)
    }
}

fn watch() -> (Server, mpsc::UnboundedReceiver<String>) {
    let (seen, rx) = mpsc::unbounded_channel();
    let service = WatchImpl { events: tokio::sync::broadcast::channel(16).0, seen };
    (Server::new(service.into_rpc()), rx)
}

/// With a `PendingSubscription`, setup that awaits is covered too: the id goes out
/// when the method accepts, so the event fired right after its setup (by
/// another producer, before the method's first send) and an event the
/// client fires as soon as it holds the id both arrive, after the id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_sink_answers_when_accepted_so_no_event_after_an_awaited_setup_is_lost() {
    for round in 0..10 {
        let (server, _seen) = watch();
        let (mut source, mut sink) = raw_client(server).await;
        send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["accept"],"id":"w"}"#).await;
        assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 1, "id": "w"}), "the id comes first");
        send(&mut sink, &format!(r#"{{"jsonrpc":"2.0","method":"fire","params":[{round}],"id":"f"}}"#)).await;
        let mut rest = vec![recv(&mut source).await, recv(&mut source).await, recv(&mut source).await];
        let fired = rest.iter().position(|message| message["id"] == "f").expect("fire is answered");
        assert_eq!(rest.remove(fired), json!({"jsonrpc": "2.0", "result": 1, "id": "f"}), "the receiver was in place");
        assert_eq!(rest, [event(1, 1), event(1, round)]);
    }
}

/// In a batch, the accepted subscription's first item waits for the whole
/// batch's answer, which carries the id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_sink_in_a_batch_sends_nothing_before_the_batch_answer() {
    let (server, _seen) = watch();
    let (mut source, mut sink) = raw_client(server).await;
    send(
        &mut sink,
        r#"[{"jsonrpc":"2.0","method":"watch","params":{"decide":"accept"},"id":1},{"jsonrpc":"2.0","method":"fire","params":[5],"id":2}]"#,
    )
    .await;
    let answer = recv(&mut source).await;
    assert_eq!(answer[0], json!({"jsonrpc": "2.0", "result": 1, "id": 1}), "{answer}");
    assert_eq!(answer[1]["id"], 2, "{answer}");
    assert_eq!(recv(&mut source).await, event(1, 1));
}

/// `reject` answers with its error object; no subscription opens, and the
/// method runs to its end unseen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_pending_sink_answers_with_the_error() {
    let (server, mut seen) = watch();
    let (mut source, mut sink) = raw_client(server).await;
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["reject"],"id":1}"#).await;
    let answer = recv(&mut source).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["message"], "no such feed", "{answer}");
    assert_eq!(answer.get("result"), None, "{answer}");
    let went_on = tokio::time::timeout(WAIT, seen.recv()).await.expect("in time");
    assert_eq!(went_on.as_deref(), Some("went on after reject"));
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"unsubscribe_watch","params":[1],"id":2}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": false, "id": 2}), "nothing was open");
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"fire","params":[3],"id":3}"#).await;
    assert_eq!(recv(&mut source).await["id"], 3, "no notification of the rejected subscription");
}

/// A method that returns (or drops its `PendingSubscription`) without deciding has
/// its call answered with its own error, or with one saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_sink_never_accepted_answers_with_an_error() {
    let (server, mut seen) = watch();
    let (mut source, mut sink) = raw_client(server).await;
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["never"],"id":1}"#).await;
    let answer = recv(&mut source).await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`watch` was never accepted"), "{message}");

    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["fail"],"id":2}"#).await;
    assert_eq!(
        recv(&mut source).await,
        json!({"jsonrpc": "2.0", "error": {"code": WATCH_FAILED, "message": "the feed is down"}, "id": 2})
    );

    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["drop"],"id":3}"#).await;
    let answer = recv(&mut source).await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(3), json!(-32603)), "{answer}");
    let went_on = tokio::time::timeout(WAIT, seen.recv()).await.expect("in time");
    assert_eq!(went_on.as_deref(), Some("went on after drop"));

    // None of them left a subscription open (the limit would count it).
    for id in 1..=3 {
        send(&mut sink, &format!(r#"{{"jsonrpc":"2.0","method":"unsubscribe_watch","params":[{id}],"id":"u"}}"#)).await;
        assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": false, "id": "u"}));
    }
}

/// An accepted subscription is ended by its unsubscribe method like any
/// other; the method sees why, and the client gets no last notification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsubscribing_ends_an_accepted_pending_subscription() {
    let (server, mut seen) = watch();
    let (mut source, mut sink) = raw_client(server).await;
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["accept"],"id":1}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 1, "id": 1}));
    assert_eq!(recv(&mut source).await, event(1, 1));
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"unsubscribe_watch","params":{"subscription":1},"id":2}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": true, "id": 2}));
    let why = tokio::time::timeout(WAIT, seen.recv()).await.expect("in time");
    assert_eq!(why, Some(SendError::Unsubscribed.to_string()));
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"unsubscribe_watch","params":[1],"id":3}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": false, "id": 3}));
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"fire","params":[9],"id":4}"#).await;
    assert_eq!(recv(&mut source).await, json!({"jsonrpc": "2.0", "result": 0, "id": 4}), "nobody listens");
}

/// The client leaves during a pending subscription's setup: the method
/// learns it, from `accept` or from its sink, and ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_sink_whose_client_left_during_setup_ends() {
    let (server, mut seen) = watch();
    let (source, mut sink) = raw_client(server).await;
    send(&mut sink, r#"{"jsonrpc":"2.0","method":"watch","params":["slow"],"id":1}"#).await;
    drop((source, sink));
    let why = tokio::time::timeout(WAIT, seen.recv()).await.expect("in time");
    assert_eq!(why, Some(SendError::Closed.to_string()));
}

/// The typed client is the same for a `PendingSubscription` method: a stream of
/// items, and the error of a rejected call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typed_client_of_a_pending_sink_method() {
    let (server, _seen) = watch();
    let client = WatchClient::new(Peer::builder().connect(server).await.unwrap());
    let mut events = client.watch("accept".to_owned()).await.unwrap();
    assert_eq!(next(&mut events).await.map(Result::unwrap), Some(1));
    assert_eq!(client.fire(8).await.unwrap(), 1);
    assert_eq!(next(&mut events).await.map(Result::unwrap), Some(8));
    let refused = client.watch("reject".to_owned()).await.unwrap_err();
    assert!(refused.to_string().contains("no such feed"), "{refused}");
}

/// A `PendingSubscription` method is catalogued exactly as the same method with a
/// `SubscriptionSink`: the result is the subscription id, with the same `x-` fields.
#[test]
fn a_pending_sink_method_has_the_catalog_of_a_sink_method() {
    let pending = serde_json::to_value(WatchCatalog::catalog().document()).unwrap();
    let plain = serde_json::to_value(SinkWatchCatalog::catalog().document()).unwrap();
    assert_eq!(pending["methods"], plain["methods"]);
    assert_eq!(pending["components"], plain["components"]);
    let watch = &pending["methods"][0];
    assert!(watch.get("x-subscription").is_some(), "{watch}");
}
