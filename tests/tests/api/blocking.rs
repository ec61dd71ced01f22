//! `#[rpc(blocking)]`: a plain `fn` that runs on the blocking thread pool,
//! so that its connection goes on reading and answering meanwhile; a
//! panic in it answered -32603 with the connection still serving; its
//! cancellation answered as an `async fn`'s is (-32800 under LSP
//! cancellation, nothing under MCP's), once the method returns.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rpc_runtime::{rpc, Cancellation, Context, Peer, Server};
use serde_json::{json, Value};

use crate::common::{serve_in_process, Conn, Wire, HANG_GUARD};

/// Work that holds its thread.
#[rpc]
pub trait Work {
    /// Holds its thread for `millis` milliseconds; answers how long.
    #[rpc(blocking)]
    fn crunch(&self, millis: u64) -> u64;

    /// Holds its thread until `release` is called or the request is
    /// cancelled; answers which.
    #[rpc(blocking)]
    fn hold(&self, cx: Context) -> String;

    /// Lets a running `hold` return.
    fn release(&self) -> bool;

    /// How many `hold` calls returned because they were cancelled.
    fn cancelled(&self) -> u64;

    /// Panics on the blocking pool.
    #[rpc(blocking)]
    fn explode(&self) -> u64;

    /// Records `text`, on the blocking pool; never answered.
    #[rpc(blocking, notification)]
    fn note(&self, text: String);

    /// What `note` recorded.
    fn notes(&self) -> Vec<String>;

    /// Answers at once.
    fn ping(&self) -> String;
}

/// The state [`Work`]'s methods share.
#[derive(Debug, Default)]
struct State {
    released: bool,
    cancelled: u64,
    notes: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Worker {
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Work for Worker {
    fn crunch(&self, millis: u64) -> u64 {
        std::thread::sleep(Duration::from_millis(millis));
        millis
    }

    fn hold(&self, cx: Context) -> String {
        let (state, changed) = &*self.state;
        let mut state = state.lock().unwrap();
        let deadline = std::time::Instant::now() + HANG_GUARD;
        loop {
            if state.released {
                state.released = false;
                return "released".into();
            }
            // The blocking closure cannot be interrupted: it asks.
            if cx.is_cancelled() {
                state.cancelled += 1;
                return "cancelled".into();
            }
            assert!(std::time::Instant::now() < deadline, "never released nor cancelled");
            state = changed.wait_timeout(state, Duration::from_millis(5)).unwrap().0;
        }
    }

    fn release(&self) -> bool {
        let (state, changed) = &*self.state;
        state.lock().unwrap().released = true;
        changed.notify_all();
        true
    }

    fn cancelled(&self) -> u64 {
        self.state.0.lock().unwrap().cancelled
    }

    fn explode(&self) -> u64 {
        panic!("exploded on purpose")
    }

    fn note(&self, text: String) {
        self.state.0.lock().unwrap().notes.push(text);
    }

    fn notes(&self) -> Vec<String> {
        self.state.0.lock().unwrap().notes.clone()
    }

    fn ping(&self) -> String {
        "pong".into()
    }
}

fn connect(cancellation: Cancellation) -> Conn {
    let server = Server::new(Worker::default().into_rpc()).cancellation(cancellation);
    serve_in_process(server, Wire::Ndjson).0
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}).to_string()
}

async fn answer(conn: &mut Conn) -> Value {
    serde_json::from_str(&conn.recv().await).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_method_does_not_stall_its_connection() {
    let mut conn = connect(Cancellation::None);
    conn.send(request(1, "crunch", json!([1000]))).await;
    conn.send(request(2, "ping", json!([]))).await;
    // The second call is answered while the first still holds its thread.
    let first = answer(&mut conn).await;
    assert_eq!((first["id"].clone(), first["result"].clone()), (json!(2), json!("pong")), "{first}");
    let second = answer(&mut conn).await;
    assert_eq!((second["id"].clone(), second["result"].clone()), (json!(1), json!(1000)), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_call_on_the_same_connection_releases_a_blocked_one() {
    // Without a timing: `hold` returns only once `release`, sent after it
    // on the same connection, has been read and answered.
    let mut conn = connect(Cancellation::None);
    conn.send(request(1, "hold", json!([]))).await;
    conn.send(request(2, "release", json!([]))).await;
    let first = answer(&mut conn).await;
    assert_eq!((first["id"].clone(), first["result"].clone()), (json!(2), json!(true)), "{first}");
    let second = answer(&mut conn).await;
    assert_eq!((second["id"].clone(), second["result"].clone()), (json!(1), json!("released")), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_blocking_method_is_answered_internal_error() {
    let mut conn = connect(Cancellation::None);
    let panicked = answer_of(&mut conn, request(1, "explode", json!([]))).await;
    assert_eq!(panicked["error"]["code"], -32603, "{panicked}");
    assert_eq!(panicked["error"]["message"], "Internal error: method `explode` panicked", "{panicked}");
    // The connection goes on serving, blocking methods too.
    assert_eq!(answer_of(&mut conn, request(2, "ping", json!([]))).await["result"], "pong");
    assert_eq!(answer_of(&mut conn, request(3, "crunch", json!([1]))).await["result"], 1);
    // In a batch, only its entry fails.
    conn.send(
        json!([
            {"jsonrpc": "2.0", "method": "explode", "id": 4},
            {"jsonrpc": "2.0", "method": "crunch", "params": [2], "id": 5},
        ])
        .to_string(),
    )
    .await;
    let batch = answer(&mut conn).await;
    assert_eq!(batch[0]["error"]["code"], -32603, "{batch}");
    assert_eq!(batch[1]["result"], 2, "{batch}");
}

async fn answer_of(conn: &mut Conn, message: String) -> Value {
    conn.send(message).await;
    answer(conn).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_blocking_method_is_answered_request_cancelled_under_lsp() {
    let mut conn = connect(Cancellation::Lsp);
    conn.send(request(1, "hold", json!([]))).await;
    conn.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}).to_string()).await;
    let cancelled = answer(&mut conn).await;
    assert_eq!(cancelled["id"], 1, "{cancelled}");
    assert_eq!(cancelled["error"]["code"], rpc_runtime::wire::REQUEST_CANCELLED, "{cancelled}");
    assert_eq!(answer_of(&mut conn, request(2, "cancelled", json!([]))).await["result"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_blocking_method_is_not_answered_under_mcp() {
    let mut conn = connect(Cancellation::Mcp);
    conn.send(request(1, "hold", json!([]))).await;
    conn.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string())
        .await;
    // Once the method has seen it...
    let mut id = 2;
    while answer_of(&mut conn, request(id, "cancelled", json!([]))).await["result"] != 1 {
        id += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // ...nothing more comes: the end of input lets running requests
    // finish and be answered, and the cancelled one is not.
    conn.close().await;
    assert_eq!(conn.rest().await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_notification_runs_and_is_never_answered() {
    let mut conn = connect(Cancellation::None);
    conn.send(json!({"jsonrpc": "2.0", "method": "note", "params": ["hello"]}).to_string()).await;
    let mut id = 1;
    loop {
        let notes = answer_of(&mut conn, request(id, "notes", json!([]))).await;
        assert_eq!(notes["id"], id, "only the calls are answered: {notes}");
        if notes["result"] == json!(["hello"]) {
            break;
        }
        id += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typed_client_calls_blocking_methods_as_any_other() {
    let peer = Peer::builder().connect(Server::new(Worker::default().into_rpc())).await.unwrap();
    let client = WorkClient::new(peer);
    assert_eq!(client.crunch(3).await.unwrap(), 3);
    let err = client.explode().await.unwrap_err();
    assert_eq!(err.server_error().map(rpc_runtime::ErrorObject::code), Some(-32603), "{err}");
    client.note("typed".into()).await.unwrap();
    let (held, released) = tokio::join!(client.hold(), client.release());
    assert!(released.unwrap());
    assert_eq!(held.unwrap(), "released");
}
