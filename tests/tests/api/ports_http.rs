//! jsonrpsee's `examples/http.rs`, ported: an HTTP server on a port the
//! system picks, with one method `say_hello` that answers `"lo"` whatever
//! params it is given, and an HTTP client that calls it with `[1, 2, 3]`.
//!
//! jsonrpsee registers a closure on an `RpcModule` and calls it through
//! `ClientT::request`; here the method is a trait's (with
//! `allow_extra_params`, since a method without params otherwise refuses
//! surplus ones), called both by name through the `Peer` and through the
//! generated client. Where jsonrpsee leaves the server running
//! (`tokio::spawn(handle.stopped())`), the port stops it gracefully, as
//! `ServerHandle::stop` would. The porting guide
//! (`rpc_runtime::guide::porting`) shows these same steps.

use rpc_runtime::transport::http::{Http, HttpConnect};
use rpc_runtime::wire::INVALID_PARAMS;
use rpc_runtime::{rpc, Peer, Server};
use tokio::sync::oneshot;

use crate::common::HANG_GUARD;

/// The one method of jsonrpsee's example.
#[rpc]
pub trait Hello {
    /// Answers `"lo"`, whatever params come with the call.
    #[rpc(allow_extra_params)]
    fn say_hello(&self) -> &'static str;

    /// The same without `allow_extra_params`: surplus params are refused.
    fn say_hello_strictly(&self) -> &'static str;
}

struct HelloService;

impl Hello for HelloService {
    fn say_hello(&self) -> &'static str {
        "lo"
    }

    fn say_hello_strictly(&self) -> &'static str {
        "lo"
    }
}

/// A server on `127.0.0.1:0`, as jsonrpsee's `run_server`: its address,
/// the sender that stops it, and its task.
async fn run_server() -> (String, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = Http::default().bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(HelloService.into_rpc()).serve(listener).with_graceful_shutdown(async {
        stopped.await.ok();
    }));
    (url, stop, serving)
}

#[tokio::test]
async fn say_hello_over_http_answers_lo() {
    let (url, stop, serving) = run_server().await;

    // `HttpClient::builder().build(url)`.
    let peer = Peer::builder().connect(HttpConnect::new(&url)).await.expect("connect");

    // `client.request("say_hello", rpc_params![1_u64, 2, 3])`: by name,
    // with params the method ignores.
    let answer: String =
        tokio::time::timeout(HANG_GUARD, peer.call("say_hello", [1_u64, 2, 3])).await.expect("no hang").expect("call");
    assert_eq!(answer, "lo");

    // The same through the client `#[rpc]` generated.
    let hello = HelloClient::new(peer.clone());
    assert_eq!(hello.say_hello().await.expect("call"), "lo");

    // jsonrpsee's closure ignores its params; a method here refuses params
    // it does not declare unless it says `allow_extra_params`.
    let error = peer.call::<String, _>("say_hello_strictly", [1_u64, 2, 3]).await.expect_err("surplus params");
    assert_eq!(error.server_error().map(|error| error.code()), Some(INVALID_PARAMS), "{error:?}");
    assert_eq!(peer.call::<String, _>("say_hello_strictly", ()).await.expect("call"), "lo");

    // `ServerHandle::stop()` then `stopped().await`.
    stop.send(()).ok();
    tokio::time::timeout(HANG_GUARD, serving).await.expect("stops").expect("task").expect("serve");

    // A stopped server answers no more calls.
    let after = peer.call::<String, _>("say_hello", ()).await;
    assert!(after.is_err(), "{after:?}");
}
