//! `#[rpc(exclusive)]`: an exclusive call starts once every call read
//! before it on its connection has finished, and the calls read after it
//! wait until it has finished; the others still run concurrently. The
//! reader goes on reading meanwhile (an exclusive call may call the
//! client back), a waiting request can be cancelled, a panic releases the
//! calls behind it, and waiting calls count against the connection's
//! limit of requests in flight.
//!
//! The state is shared by every connection: a second connection, which
//! the first one's order does not hold up, watches and releases.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rpc_runtime::{rpc, Cancellation, Context, ErrorObject, Limits, Peer, Server};
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::common::{serve_in_process, Conn, Wire, HANG_GUARD};

/// A document whose changes are exclusive.
#[rpc]
pub trait Doc {
    /// Appends `text` after `turns` turns of the runtime.
    #[rpc(exclusive, notification)]
    async fn append(&self, text: String, turns: u32);

    /// Replaces the text once `release` is called (when `hold`), then
    /// answers the new text.
    #[rpc(exclusive)]
    async fn set(&self, text: String, hold: bool) -> String;

    /// Empties the text: a plain `fn`, inline when nothing runs.
    #[rpc(exclusive)]
    fn clear(&self) -> bool;

    /// Panics.
    #[rpc(exclusive)]
    async fn explode(&self) -> u32;

    /// Asks the client for a word and appends it.
    #[rpc(exclusive)]
    async fn ask(&self, cx: Context) -> Result<String, ErrorObject>;

    /// The text now.
    async fn read(&self) -> String;

    /// Waits until `release` is called; answers `"released"`.
    async fn wait(&self) -> String;

    /// Lets every waiting `wait` and held `set` go on.
    fn release(&self) -> bool;

    /// What happened, in order.
    fn events(&self) -> Vec<String>;
}

/// What the client answers when the server calls it back.
#[rpc]
pub trait Asked {
    /// A word.
    fn word(&self) -> String;
}

#[derive(Clone, Debug, Default)]
pub struct Shared {
    text: Arc<Mutex<String>>,
    events: Arc<Mutex<Vec<String>>>,
    released: Arc<Notify>,
}

impl Shared {
    fn event(&self, event: impl Into<String>) {
        self.events.lock().unwrap().push(event.into());
    }

    async fn released(&self) {
        tokio::time::timeout(HANG_GUARD, self.released.notified()).await.expect("never released");
    }
}

impl Doc for Shared {
    async fn append(&self, text: String, turns: u32) {
        for _ in 0..turns {
            tokio::task::yield_now().await;
        }
        self.text.lock().unwrap().push_str(&text);
    }

    async fn set(&self, text: String, hold: bool) -> String {
        self.event("set-start");
        if hold {
            self.released().await;
        }
        *self.text.lock().unwrap() = text.clone();
        self.event("set-end");
        text
    }

    fn clear(&self) -> bool {
        self.event("clear");
        self.text.lock().unwrap().clear();
        true
    }

    async fn explode(&self) -> u32 {
        tokio::task::yield_now().await;
        panic!("exploded on purpose")
    }

    async fn ask(&self, cx: Context) -> Result<String, ErrorObject> {
        let peer = cx.peer().ok_or_else(|| ErrorObject::internal_error("no connection"))?;
        let word = AskedClient::new(peer.clone())
            .word()
            .await
            .map_err(|err| ErrorObject::internal_error(format!("calling back failed: {err}")))?;
        self.text.lock().unwrap().push_str(&word);
        Ok(word)
    }

    async fn read(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    async fn wait(&self) -> String {
        self.event("wait-start");
        self.released().await;
        self.event("wait-end");
        "released".into()
    }

    fn release(&self) -> bool {
        self.released.notify_waiters();
        true
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

fn connect(shared: &Shared, limits: Limits) -> Conn {
    let server = Server::new(shared.clone().into_rpc()).cancellation(Cancellation::Lsp).limits(limits);
    serve_in_process(server, Wire::Ndjson).0
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}).to_string()
}

async fn answer(conn: &mut Conn) -> Value {
    serde_json::from_str(&conn.recv().await).unwrap()
}

/// Waits (on the watching connection) until `event` has happened `times` times.
async fn until_event(watch: &mut Conn, event: &str, times: usize) {
    let deadline = tokio::time::Instant::now() + HANG_GUARD;
    for id in 1_000.. {
        watch.send(request(id, "events", json!([]))).await;
        let events = answer(watch).await;
        let seen = events["result"].as_array().unwrap().iter().filter(|e| *e == event).count();
        if seen >= times {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "`{event}` never happened {times} times: {events}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Answers received on `conn` until one for each of `ids`, by id.
async fn answers(conn: &mut Conn, ids: &[u64]) -> Vec<Value> {
    let mut by_id = vec![Value::Null; ids.len()];
    for _ in ids {
        let answer = answer(conn).await;
        let at = ids.iter().position(|id| answer["id"] == *id).unwrap_or_else(|| panic!("unexpected {answer}"));
        by_id[at] = answer;
    }
    by_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_sees_the_changes_sent_before_it() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default());
    // Pipelined: each change takes a different number of turns, and each
    // read is sent right after a change, before anything is answered.
    let mut expected = String::new();
    let mut ids = Vec::new();
    for i in 0..300u64 {
        let text = format!("{},", i % 10);
        expected.push_str(&text);
        let params = json!([text, (i * 7) % 5]);
        conn.send(json!({"jsonrpc": "2.0", "method": "append", "params": params}).to_string()).await;
        conn.send(request(i, "read", json!([]))).await;
        ids.push((i, expected.clone()));
    }
    let got = answers(&mut conn, &ids.iter().map(|(id, _)| *id).collect::<Vec<_>>()).await;
    for ((id, expected), answer) in ids.iter().zip(got) {
        assert_eq!(answer["result"], json!(expected), "read {id} did not see the changes sent before it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_calls_wait_for_an_exclusive_call_and_calls_between_run_concurrently() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default());
    let mut watch = connect(&shared, Limits::default());
    // Two reads-like calls run at once (both start before either ends)...
    conn.send(request(1, "wait", json!([]))).await;
    conn.send(request(2, "wait", json!([]))).await;
    until_event(&mut watch, "wait-start", 2).await;
    // ...an exclusive one waits for both...
    conn.send(request(3, "set", json!(["new", false]))).await;
    // ...and a read after it waits for it: were it not held, it would be
    // answered now with the old text.
    conn.send(request(4, "read", json!([]))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!shared.events().contains(&"set-start".to_owned()), "{:?}", shared.events());
    watch.send(request(5, "release", json!([]))).await;
    assert_eq!(answer(&mut watch).await["result"], true);
    let got = answers(&mut conn, &[1, 2, 3, 4]).await;
    assert_eq!(got[0]["result"], "released");
    assert_eq!(got[1]["result"], "released");
    assert_eq!(got[2]["result"], "new");
    assert_eq!(got[3]["result"], "new", "the read after `set` saw the text before it");
    assert_eq!(shared.events(), ["wait-start", "wait-start", "wait-end", "wait-end", "set-start", "set-end"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_after_a_held_exclusive_call_is_answered_after_it() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default());
    let mut watch = connect(&shared, Limits::default());
    conn.send(request(1, "set", json!(["held", true]))).await;
    conn.send(request(2, "read", json!([]))).await;
    until_event(&mut watch, "set-start", 1).await;
    // A plain exclusive `fn` after them waits too, off the reader.
    conn.send(request(3, "clear", json!([]))).await;
    conn.send(request(4, "read", json!([]))).await;
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        watch.send(request(5, "release", json!([]))).await;
        answer(&mut watch).await
    });
    // Nothing is answered before the exclusive call ends: the first answer
    // is its own.
    let first = answer(&mut conn).await;
    assert_eq!((first["id"].clone(), first["result"].clone()), (json!(1), json!("held")), "{first}");
    let rest = answers(&mut conn, &[2, 3, 4]).await;
    assert_eq!(rest[0]["result"], "held");
    assert_eq!(rest[1]["result"], true);
    assert_eq!(rest[2]["result"], "", "the read after `clear` saw the text before it");
    assert_eq!(release.await.unwrap()["result"], true);
    assert_eq!(shared.events(), ["set-start", "set-end", "clear"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_call_may_call_the_client_back_while_later_calls_wait() {
    let shared = Shared::default();
    let server = Server::new(shared.clone().into_rpc());
    let peer = Peer::builder().router(AskedWord.into_rpc()).connect(server).await.unwrap();
    let doc = DocClient::new(peer);
    // The read waits for `ask`, which waits for the client's answer: the
    // connection reads that answer while the read is parked.
    let (asked, read) = tokio::time::timeout(HANG_GUARD, async { tokio::join!(doc.ask(), doc.read()) })
        .await
        .expect("the connection wedged");
    assert_eq!(asked.unwrap(), "word");
    assert_eq!(read.unwrap(), "word");
}

/// The client's side of [`an_exclusive_call_may_call_the_client_back_while_later_calls_wait`].
#[derive(Debug)]
pub struct AskedWord;

impl Asked for AskedWord {
    fn word(&self) -> String {
        "word".into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_request_that_is_cancelled_is_answered_without_running() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default());
    let mut watch = connect(&shared, Limits::default());
    conn.send(request(1, "wait", json!([]))).await;
    until_event(&mut watch, "wait-start", 1).await;
    conn.send(request(2, "set", json!(["never", false]))).await;
    conn.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}).to_string()).await;
    let cancelled = answer(&mut conn).await;
    assert_eq!(cancelled["id"], 2, "{cancelled}");
    assert_eq!(cancelled["error"]["code"], rpc_runtime::wire::REQUEST_CANCELLED, "{cancelled}");
    watch.send(request(3, "release", json!([]))).await;
    assert_eq!(answer(&mut conn).await["result"], "released");
    conn.send(request(4, "read", json!([]))).await;
    assert_eq!(answer(&mut conn).await["result"], "");
    assert_eq!(shared.events(), ["wait-start", "wait-end"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_exclusive_call_releases_the_calls_behind_it() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default());
    conn.send(request(1, "explode", json!([]))).await;
    conn.send(request(2, "set", json!(["after", false]))).await;
    conn.send(request(3, "read", json!([]))).await;
    let got = answers(&mut conn, &[1, 2, 3]).await;
    assert_eq!(got[0]["error"]["code"], -32603, "{}", got[0]);
    assert_eq!(got[1]["result"], "after");
    assert_eq!(got[2]["result"], "after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_calls_count_against_the_limit_of_requests_in_flight() {
    let shared = Shared::default();
    let mut conn = connect(&shared, Limits::default().max_concurrent_requests(4));
    let mut watch = connect(&shared, Limits::default());
    conn.send(request(1, "set", json!(["held", true]))).await;
    until_event(&mut watch, "set-start", 1).await;
    // Three more fit (waiting); the next three are refused at once.
    for id in 2..=7 {
        conn.send(request(id, "read", json!([]))).await;
    }
    let refused = answers(&mut conn, &[5, 6, 7]).await;
    for answer in &refused {
        assert_eq!(answer["error"]["code"], rpc_runtime::wire::SERVER_OVERLOADED, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("max_concurrent_requests"), "{answer}");
    }
    watch.send(request(8, "release", json!([]))).await;
    let served = answers(&mut conn, &[1, 2, 3, 4]).await;
    for answer in &served {
        assert_eq!(answer["result"], "held", "{answer}");
    }
    // And the connection serves on.
    conn.send(request(9, "read", json!([]))).await;
    assert_eq!(answer(&mut conn).await["result"], "held");
}
