//! jsonrpsee's `examples/rpc_middleware.rs`, ported: RPC-level middleware
//! that logs every call's method and counts calls per connection and in
//! total, around a server with `say_hello` and `thready`, called by two
//! WebSocket clients in turn (`say_hello`, an unknown method, `say_hello`,
//! `thready(4)` each).
//!
//! jsonrpsee's `RpcServiceBuilder` takes `RpcServiceT` layers, built once
//! per connection, so its `CallsPerConn` keeps its count in the layer.
//! Here a layer is an ordinary tower `Layer` around a
//! `Service<MethodCall>`, put on every connection by `Server::layer`, and
//! built once: what is per connection lives in the connection's `Context`,
//! attached by the connection hook and read by the layer from the call.
//! `RpcServiceBuilder::option_layer` is `tower::ServiceBuilder`'s own.
//!
//! jsonrpsee also installs the same middleware on its client
//! (`WsClientBuilder::set_rpc_middleware`); the generated clients here
//! have no layers, so the port counts on the server only. What the
//! original prints, the port writes to a log and compares line by line.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use rpc_runtime::dispatch::{MethodCall, MethodResponse};
use rpc_runtime::transport::http::Http;
use rpc_runtime::transport::ws::WsConnect;
use rpc_runtime::wire::METHOD_NOT_FOUND;
use rpc_runtime::{rpc, Peer, Server};
use tower::layer::util::Identity;
use tower::util::MapRequestLayer;
use tower::{Layer, Service, ServiceBuilder};

use crate::common::HANG_GUARD;

/// The methods of jsonrpsee's example.
#[rpc]
pub trait Hello {
    /// Answers `"lo"`.
    fn say_hello(&self) -> &'static str;

    /// jsonrpsee's spawns `thread_count` threads that sleep a second; this
    /// one only answers, as the original does, with an empty string.
    fn thready(&self, thread_count: usize) -> &'static str;
}

struct HelloService;

impl Hello for HelloService {
    fn say_hello(&self) -> &'static str {
        "lo"
    }

    fn thready(&self, _thread_count: usize) -> &'static str {
        ""
    }
}

/// What the middleware prints in jsonrpsee's example, in order.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, line: String) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(line);
    }

    /// The lines written so far, leaving none.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The calls made on one connection: attached to the connection's
/// `Context` by the hook, so that each connection counts from zero.
#[derive(Default)]
struct ConnectionCalls(Arc<AtomicUsize>);

/// Which counter a [`CountLayer`] adds to.
#[derive(Clone)]
enum Counter {
    /// The connection's [`ConnectionCalls`] (jsonrpsee's `CallsPerConn`).
    PerConnection,
    /// One counter for every connection (jsonrpsee's `GlobalCalls`).
    Global(Arc<AtomicUsize>),
}

/// Counts each call once it is answered, and logs the count.
#[derive(Clone)]
struct CountLayer {
    counter: Counter,
    log: Log,
}

impl<S> Layer<S> for CountLayer {
    type Service = Count<S>;

    fn layer(&self, inner: S) -> Count<S> {
        Count { inner, counter: self.counter.clone(), log: self.log.clone() }
    }
}

/// The service of a [`CountLayer`].
#[derive(Clone)]
struct Count<S> {
    inner: S,
    counter: Counter,
    log: Log,
}

impl<S> Service<MethodCall> for Count<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<MethodResponse, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        // The counter is taken before the call moves on: the connection's
        // lives in the call's context (none without the hook: not counted).
        let counted = match &self.counter {
            Counter::PerConnection => {
                call.context().extension::<ConnectionCalls>().map(|calls| (Arc::clone(&calls.0), "on the connection"))
            }
            Counter::Global(count) => Some((Arc::clone(count), "in total")),
        };
        let log = self.log.clone();
        let answered = self.inner.call(call);
        Box::pin(async move {
            let response = answered.await?;
            if let Some((count, scope)) = counted {
                let count = count.fetch_add(1, Ordering::SeqCst) + 1;
                log.push(format!("server processed calls={count} {scope}"));
            }
            Ok(response)
        })
    }
}

/// The server of jsonrpsee's `run_server`, with its three layers (and the
/// optional one that does nothing), and the log they write.
async fn run_server() -> (String, Log) {
    let log = Log::default();
    let global = Arc::new(AtomicUsize::new(0));
    let logger = {
        let log = log.clone();
        MapRequestLayer::new(move |call: MethodCall| {
            log.push(format!("server logger middleware: method `{}`", call.method()));
            call
        })
    };
    // Read top down, outermost first, as `RpcServiceBuilder` is.
    let middleware = ServiceBuilder::new()
        .layer(logger)
        .layer(CountLayer { counter: Counter::PerConnection, log: log.clone() })
        .layer(CountLayer { counter: Counter::Global(global), log: log.clone() })
        .option_layer(Some(Identity::new()));
    let server = Server::new(HelloService.into_rpc())
        // State created per connection.
        .on_connect(|_info, cx| Ok(cx.with_extension(ConnectionCalls::default())))
        .layer(middleware);
    let listener = Http::default().bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}", listener.local_addr().expect("local address"));
    tokio::spawn(server.serve(listener));
    (url, log)
}

#[tokio::test]
async fn middleware_logs_and_counts_calls_per_connection_and_in_total() {
    let (url, log) = run_server().await;
    tokio::time::timeout(HANG_GUARD, async {
        for round in 0..2 {
            let peer = Peer::builder().connect(WsConnect::new(&url)).await.expect("connect");
            let client = HelloClient::new(peer.clone());
            assert_eq!(client.say_hello().await.expect("say_hello"), "lo");
            let unknown = peer.call::<String, _>("unknown_method", ()).await.expect_err("no such method");
            assert_eq!(unknown.server_error().map(|error| error.code()), Some(METHOD_NOT_FOUND));
            assert_eq!(client.say_hello().await.expect("say_hello"), "lo");
            assert_eq!(client.thready(4).await.expect("thready"), "");

            // Every call went through each layer once, an unknown method
            // too: the logger first on the way in, then the innermost
            // counter (the global one) first on the way out.
            let mut expected = Vec::new();
            for (n, method) in ["say_hello", "unknown_method", "say_hello", "thready"].into_iter().enumerate() {
                expected.push(format!("server logger middleware: method `{method}`"));
                expected.push(format!("server processed calls={} in total", round * 4 + n + 1));
                expected.push(format!("server processed calls={} on the connection", n + 1));
            }
            assert_eq!(log.take(), expected, "round {round}");
        }
    })
    .await
    .expect("no hang");
}

#[tokio::test]
async fn each_call_of_a_batch_goes_through_the_layers_on_its_own() {
    // jsonrpsee's middleware adds a batch's length at once; here each call
    // of a batch is counted as it is answered.
    let (url, log) = run_server().await;
    tokio::time::timeout(HANG_GUARD, async {
        let client = HelloClient::new(Peer::builder().connect(WsConnect::new(&url)).await.expect("connect"));
        let mut batch = client.batch();
        let (hello, thready) = (batch.say_hello(), batch.thready(2));
        batch.send().await.expect("batch");
        assert_eq!(
            (hello.await.expect("say_hello"), thready.await.expect("thready")),
            ("lo".to_owned(), String::new())
        );
        let lines = log.take();
        let counted: Vec<&String> = lines.iter().filter(|line| line.contains("on the connection")).collect();
        assert_eq!(
            counted,
            ["server processed calls=1 on the connection", "server processed calls=2 on the connection"]
        );
        assert_eq!(lines.iter().filter(|line| line.contains("logger")).count(), 2, "{lines:#?}");
    })
    .await
    .expect("no hang");
}
