//! Each rule of the engine (issue 2, "The engine") with a test that fails
//! if the rule breaks. Most talk bytes to the calculator example's binary;
//! rules that need control over a handler (concurrency, limits) use small
//! test-local services served in-process over a duplex pipe or TCP.
//!
//! Concurrency is proven by ordering, never by timing: handlers wait on
//! gates and barriers that only another request can open.

use crate::common;

use std::sync::Arc;

use common::{
    connect, error, invalid_request, invalid_request_because, parse_error, result, serve_in_process, Calculator, Conn,
    Wire,
};
use rpc_runtime::serde_json::{self, Value};
use rpc_runtime::{rpc, ErrorObject, Limits, Server};
use tokio::sync::{Barrier, Semaphore};

// ---------------------------------------------------------------------------
// A test-local service whose methods wait on each other.

/// Methods that block until another request lets them go.
#[rpc]
pub trait Gates {
    /// Waits until two callers have arrived, then answers how many there were.
    async fn meet(&self) -> u32;
    /// Waits until `open` is called, then answers `"opened"`.
    async fn wait(&self) -> String;
    /// Lets one `wait` go.
    fn open(&self) -> bool;
    /// Panics after its first await point.
    async fn boom(&self) -> u32;
    /// Adds two integers, at once.
    fn add(&self, a: i64, b: i64) -> i64;
    /// Adds two integers, in an `async` method.
    async fn add_later(&self, a: i64, b: i64) -> i64;
    /// Always fails with -32001.
    fn refuse(&self) -> Result<(), ErrorObject>;
}

struct GateService {
    barrier: Arc<Barrier>,
    gate: Arc<Semaphore>,
}

impl GateService {
    fn router() -> rpc_runtime::Router {
        GateService { barrier: Arc::new(Barrier::new(2)), gate: Arc::new(Semaphore::new(0)) }.into_rpc()
    }
}

impl Gates for GateService {
    async fn meet(&self) -> u32 {
        self.barrier.wait().await;
        2
    }

    async fn wait(&self) -> String {
        self.gate.acquire().await.expect("the gate is never closed").forget();
        "opened".to_owned()
    }

    fn open(&self) -> bool {
        self.gate.add_permits(1);
        true
    }

    async fn boom(&self) -> u32 {
        tokio::task::yield_now().await;
        panic!("boom")
    }

    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    async fn add_later(&self, a: i64, b: i64) -> i64 {
        tokio::task::yield_now().await;
        a + b
    }

    fn refuse(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(-32001, "refused"))
    }
}

fn gates(wire: Wire) -> Conn {
    serve_in_process(Server::new(GateService::router()), wire).0
}

fn gates_with(limits: Limits, wire: Wire) -> Conn {
    serve_in_process(Server::new(GateService::router()).limits(limits), wire).0
}

fn req(method: &str, params: &str, id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":{id}}}"#)
}

fn note(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#)
}

/// A request whose answer marks "everything before this was answered".
const MARK: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":"mark"}"#;
const MARK_ANSWER: &str = r#"{"jsonrpc":"2.0","result":2,"id":"mark"}"#;

fn parse(message: &str) -> Value {
    serde_json::from_str(message).unwrap_or_else(|err| panic!("not JSON ({err}): {message}"))
}

/// Code and id of an error response.
fn code_and_id(message: &str) -> (i64, Value) {
    let value = parse(message);
    assert_eq!(value["jsonrpc"], "2.0", "{message}");
    let code = value["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error response: {message}"));
    assert!(value["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "error without a message: {message}");
    (code, value["id"].clone())
}

/// Receives `n` messages and returns them sorted, for answers whose
/// relative order is not specified.
async fn recv_unordered(conn: &mut Conn, n: usize) -> Vec<String> {
    let mut got = Vec::with_capacity(n);
    for _ in 0..n {
        got.push(conn.recv().await);
    }
    got.sort();
    got
}

fn sorted(mut messages: Vec<String>) -> Vec<String> {
    messages.sort();
    messages
}

// ---------------------------------------------------------------------------
// Single and batch messages.

#[tokio::test(flavor = "multi_thread")]
async fn single_and_batch_messages_are_both_answered() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        let got = calc.conn.call(req("subtract", "[10,4]", "1")).await;
        assert_eq!(got, result("6", "1"), "{wire:?}");
        let batch = format!("[{},{}]", req("subtract", "[10,4]", "1"), req("greet", r#"{"name":"Ada"}"#, "2"));
        let got = calc.conn.call(batch).await;
        assert_eq!(got, format!("[{},{}]", result("6", "1"), result(r#""Hello, Ada!""#, "2")), "{wire:?}");
        // A batch of one is still a batch: the answer is an array.
        let got = calc.conn.call(format!("[{}]", req("get_data", "[]", "3"))).await;
        assert_eq!(got, format!("[{}]", result(r#"["hello",5]"#, "3")), "{wire:?}");
        // Leading whitespace before a batch does not turn it into a single.
        let got = calc.conn.call(format!(" \t[{}]", req("sum", "[1,2]", "4"))).await;
        assert_eq!(got, format!("[{}]", result("3", "4")), "{wire:?}");
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_batch_is_one_invalid_request_object_not_an_array() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for empty in ["[]", "[ ]", " [\t] "] {
            assert_eq!(calc.conn.call(empty).await, invalid_request("null"), "{wire:?}: {empty:?}");
        }
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER, "{wire:?}: one answer per empty batch");
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_batch_entries_each_get_their_own_error() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        let batch = format!(
            "[1,{},{{\"foo\":1,\"id\":7}},\"x\",null,[],{},{},{}]",
            req("subtract", "[5,3]", r#""a""#),
            r#"{"jsonrpc":"2.0","method":"subtract","params":"bad","id":"b"}"#,
            r#"{"jsonrpc":"1.0","method":"subtract","params":[1,1],"id":"c"}"#,
            req("nope", "[]", r#""d""#),
        );
        let want = [
            invalid_request("null"),
            result("2", r#""a""#),
            invalid_request("7"),
            invalid_request("null"),
            invalid_request("null"),
            invalid_request("null"),
            invalid_request(r#""b""#),
            invalid_request_because(r#""c""#, r#""jsonrpc" must be "2.0", got "1.0""#),
            error(-32601, "Method not found", r#""d""#),
        ];
        assert_eq!(calc.conn.call(batch).await, format!("[{}]", want.join(",")), "{wire:?}");
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn all_notification_batch_produces_no_output() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        let batch = format!(
            "[{},{},{},{},{},{}]",
            note("notify_sum", "[1,2,4]"),
            note("notify_hello", "[7]"),
            // Failing notifications are still silent.
            note("no_such_method", "[]"),
            note("subtract", r#"["not a number"]"#),
            note("panic", "[]"),
            note("sleep", "[1]"),
        );
        calc.conn.send(batch).await;
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER, "{wire:?}: the batch must not be answered");
        let exit = calc.finish().await;
        assert!(exit.status.success());
        assert!(exit.rest.is_empty(), "{wire:?}: {:?}", exit.rest);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_entries_run_concurrently() {
    for wire in Wire::BOTH {
        let mut conn = gates(wire);
        // Each `meet` waits at a barrier for two parties: the batch can only
        // be answered if both entries are running at the same time.
        let batch = format!("[{},{},{}]", req("meet", "[]", "1"), req("add", "[1,2]", "2"), req("meet", "[]", "3"));
        let got = conn.call(batch).await;
        assert_eq!(got, format!("[{},{},{}]", result("2", "1"), result("3", "2"), result("2", "3")), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_answers_keep_their_order_around_waiting_entries() {
    for wire in Wire::BOTH {
        let mut conn = gates(wire);
        // Entries answered at once (a notification among them) before the
        // first one that waits, and more of both after it.
        let batch = format!(
            "[{},{},{},{},{},{}]",
            req("add", "[1,1]", "1"),
            note("add", "[0,0]"),
            req("add", "[1,2]", "2"),
            req("meet", "[]", "3"),
            req("add", "[2,2]", "4"),
            req("meet", "[]", "5")
        );
        let got = conn.call(batch).await;
        let want = [result("2", "1"), result("3", "2"), result("2", "3"), result("4", "4"), result("2", "5")];
        assert_eq!(got, format!("[{}]", want.join(",")), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_on_one_connection_run_concurrently() {
    for wire in Wire::BOTH {
        let mut conn = gates(wire);
        // Two separate messages: the first is only answered once the second
        // is running too.
        conn.send(req("meet", "[]", "1")).await;
        conn.send(req("meet", "[]", "2")).await;
        assert_eq!(recv_unordered(&mut conn, 2).await, sorted(vec![result("2", "1"), result("2", "2")]), "{wire:?}");
    }
}

// ---------------------------------------------------------------------------
// -32700, -32600, -32601.

#[tokio::test(flavor = "multi_thread")]
async fn invalid_json_is_a_parse_error_with_id_null() {
    let cases: &[&[u8]] = &[
        br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":1"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":1}}"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":1} x"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":01}"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2,],"id":1}"#,
        br#"{'jsonrpc':'2.0'}"#,
        b"not json",
        b"nul",
        br#"{"jsonrpc":"2.0","method":"echo","params":["\ud800"],"id":1,}"#,
        br#"[{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":1}"#,
        // Not UTF-8.
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\",\"id\":1}",
    ];
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for case in cases {
            assert_eq!(calc.conn.call(case).await, parse_error(), "{wire:?}: {}", String::from_utf8_lossy(case));
        }
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER);
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_request_is_invalid_request_answered_with_its_id_when_readable() {
    let cases: &[(&str, &str)] = &[
        // jsonrpc missing or wrong.
        (r#"{"method":"subtract","params":[1,2],"id":1}"#, "1"),
        (r#"{"jsonrpc":"1.0","method":"subtract","params":[1,2],"id":2}"#, "2"),
        (r#"{"jsonrpc":2.0,"method":"subtract","params":[1,2],"id":3}"#, "3"),
        (r#"{"jsonrpc":null,"method":"subtract","params":[1,2],"id":"4"}"#, r#""4""#),
        (r#"{"jsonrpc":"2.0 ","method":"subtract","params":[1,2],"id":5}"#, "5"),
        // method missing or not a string.
        (r#"{"jsonrpc":"2.0","params":[1,2],"id":6}"#, "6"),
        (r#"{"jsonrpc":"2.0","method":1,"params":[1,2],"id":7}"#, "7"),
        (r#"{"jsonrpc":"2.0","method":null,"id":8}"#, "8"),
        (r#"{"jsonrpc":"2.0","method":["subtract"],"id":9}"#, "9"),
        (r#"{"jsonrpc":"2.0","method":{"name":"subtract"},"id":-10}"#, "-10"),
        // params neither array nor object.
        (r#"{"jsonrpc":"2.0","method":"subtract","params":"bar","id":11}"#, "11"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":12,"id":12}"#, "12"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":null,"id":13}"#, "13"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":true,"id":14}"#, "14"),
        // id of a wrong type: it cannot be echoed.
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":{"a":1}}"#, "null"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":[1]}"#, "null"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":true}"#, "null"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":false}"#, "null"),
        // A member given twice: not a well-formed request, the id still read.
        (r#"{"jsonrpc":"2.0","method":"subtract","method":"sum","params":[1,2],"id":15}"#, "15"),
        // Not an object at all.
        ("1", "null"),
        (r#""subtract""#, "null"),
        ("null", "null"),
        ("true", "null"),
        // Without an id an invalid request is still answered (it is not a
        // valid notification either).
        (r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#, "null"),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":5}"#, "null"),
        (r#"{"method":"update","params":[1]}"#, "null"),
    ];
    // Why, in `data`; the shapes the specification's own examples answer
    // with a bare error object (a non-object, `method` not a string,
    // `params` not structured, neither `jsonrpc` nor `method`) stay bare.
    let version = r#""jsonrpc" must be "2.0"; it is missing (JSON-RPC 1.0 requests are not supported)"#;
    let reasons: &[(&str, &str)] = &[
        (r#"{"method":"subtract","#, version),
        (r#"{"jsonrpc":"1.0","#, r#""jsonrpc" must be "2.0", got "1.0""#),
        (r#"{"jsonrpc":2.0,"#, r#""jsonrpc" must be "2.0", got 2.0"#),
        (r#"{"jsonrpc":null,"#, r#""jsonrpc" must be "2.0", got null"#),
        (r#"{"jsonrpc":"2.0 ","#, r#""jsonrpc" must be "2.0", got "2.0 ""#),
        (r#"{"jsonrpc":"2.0","params":[1,2],"id":6}"#, r#""method" is missing"#),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":{"#, r#""id" must be a string, a number or null"#),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":["#, r#""id" must be a string, a number or null"#),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":t"#, r#""id" must be a string, a number or null"#),
        (r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":f"#, r#""id" must be a string, a number or null"#),
        (r#"{"jsonrpc":"2.0","method":"subtract","method""#, "not a request object: duplicate field `method`"),
        (r#"{"method":"update""#, version),
    ];
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for (request, id) in cases {
            let want = match reasons.iter().find(|(start, _)| request.starts_with(start)) {
                Some((_, why)) => invalid_request_because(id, why),
                None => invalid_request(id),
            };
            assert_eq!(calc.conn.call(request).await, want, "{wire:?}: {request}");
        }
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER);
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_methods_are_method_not_found() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for (method, id) in [("foobar", "1"), ("Subtract", "2"), ("subtract ", r#""three""#), ("", "4"), ("rpc.x", "5")]
        {
            let got = calc.conn.call(req(method, "[1,2]", id)).await;
            assert_eq!(got, error(-32601, "Method not found", id), "{wire:?}: {method:?}");
        }
        // No params member at all.
        let got = calc.conn.call(r#"{"jsonrpc":"2.0","method":"nope","id":6}"#).await;
        assert_eq!(got, error(-32601, "Method not found", "6"));
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_are_never_answered_even_on_error() {
    let notifications = [
        note("update", "[1,2,3]"),
        note("notify_hello", "[7]"),
        note("foobar", "[]"),
        r#"{"jsonrpc":"2.0","method":"foobar"}"#.to_owned(),
        note("subtract", r#"["x","y"]"#),
        note("subtract", "[1,2,3]"),
        note("subtract", r#"{"minuend":1}"#),
        note("notify_hello", r#"["not a number"]"#),
        note("fail", r#"[1,"failure"]"#),
        note("panic", "[]"),
        note("sleep", "[1]"),
        note("sleep", r#"["x"]"#),
    ];
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for notification in &notifications {
            calc.conn.send(notification).await;
        }
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER, "{wire:?}: a notification was answered");
        // The same inside a batch with one request: only that one answers.
        let batch = format!("[{},{}]", notifications.join(","), MARK);
        assert_eq!(calc.conn.call(batch).await, format!("[{MARK_ANSWER}]"), "{wire:?}");
        let exit = calc.finish().await;
        assert!(exit.status.success());
        assert!(exit.rest.is_empty(), "{wire:?}: {:?}", exit.rest);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ids_are_echoed_byte_exactly() {
    let ids = [
        r#""1""#,
        r#""""#,
        r#""a\"b\\c\/d\n\t""#,
        r#""\u00e9\u20AC\ud83d\ude00""#,
        r#""é€😀 raw""#,
        "0",
        "-0",
        "7",
        "-42",
        "9007199254740993",
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
        "1.5",
        "-0.000001",
        "1.0",
        "1e400",
        "2.5E-3",
        "null",
    ];
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for id in ids {
            let got = calc.conn.call(req("echo", "[true]", id)).await;
            assert_eq!(got, result("true", id), "{wire:?}");
            // Errors echo it the same way.
            let got = calc.conn.call(req("nope", "[]", id)).await;
            assert_eq!(got, error(-32601, "Method not found", id), "{wire:?}");
            let got = calc.conn.call(format!(r#"{{"jsonrpc":"1","method":"echo","id":{id}}}"#)).await;
            assert_eq!(got, invalid_request_because(id, r#""jsonrpc" must be "2.0", got "1""#), "{wire:?}");
        }
        // Async methods and batches too.
        for id in ["123456789012345678901234567890", r#""\u00e9""#, "null"] {
            assert_eq!(calc.conn.call(req("sleep", "[0]", id)).await, result("0", id), "{wire:?}");
            let got = calc.conn.call(format!("[{}]", req("sleep", "[0]", id))).await;
            assert_eq!(got, format!("[{}]", result("0", id)), "{wire:?}");
        }
        // Whitespace around the id is not part of it.
        let got = calc.conn.call(r#"{"jsonrpc":"2.0","method":"echo","params":[1],"id":   77   }"#).await;
        assert_eq!(got, result("1", "77"));
        assert!(calc.finish().await.status.success());
    }
}

// ---------------------------------------------------------------------------
// Concurrency on one connection.

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_request_does_not_hold_up_a_fast_one_sent_after_it() {
    for wire in Wire::BOTH {
        let mut conn = gates(wire);
        // `wait` cannot finish before `open`, which is sent after both.
        conn.send(req("wait", "[]", r#""slow""#)).await;
        conn.send(req("add_later", "[1,2]", r#""fast-async""#)).await;
        conn.send(req("add", "[1,2]", r#""fast""#)).await;
        let first_two = recv_unordered(&mut conn, 2).await;
        assert_eq!(first_two, sorted(vec![result("3", r#""fast-async""#), result("3", r#""fast""#)]), "{wire:?}");
        conn.send(req("open", "[]", r#""open""#)).await;
        let last_two = recv_unordered(&mut conn, 2).await;
        assert_eq!(last_two, sorted(vec![result(r#""opened""#, r#""slow""#), result("true", r#""open""#)]), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sleeping_calculator_request_does_not_hold_up_later_ones() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        // Far longer than the test: it is killed with the process.
        calc.conn.send(req("sleep", "[600000]", r#""slow""#)).await;
        calc.conn.send(req("sleep", "[0]", r#""fast""#)).await;
        calc.conn.send(req("subtract", "[3,1]", r#""sync""#)).await;
        let got = recv_unordered(&mut calc.conn, 2).await;
        assert_eq!(got, sorted(vec![result("0", r#""fast""#), result("2", r#""sync""#)]), "{wire:?}");
    }
}

// ---------------------------------------------------------------------------
// Panics.

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_handler_yields_internal_error_for_that_request_only() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        calc.conn.send(req("sleep", "[50]", r#""in-flight""#)).await;
        calc.conn.send(req("panic", "[]", "1")).await;
        calc.conn.send(format!("[{},{}]", req("panic", "[]", "2"), req("subtract", "[9,2]", "3"))).await;
        calc.conn.send(MARK).await;
        // The sleep may answer at any point; everything else in order.
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(calc.conn.recv().await);
        }
        let in_flight = result("50", r#""in-flight""#);
        assert!(got.contains(&in_flight), "{wire:?}: the in-flight request carries on: {got:?}");
        got.retain(|message| *message != in_flight);
        assert_eq!(code_and_id(&got[0]), (-32603, Value::from(1)), "{wire:?}: {got:?}");
        let batch = parse(&got[1]);
        assert_eq!(batch[0]["error"]["code"], -32603, "{wire:?}: {batch}");
        assert_eq!(batch[0]["id"], 2);
        assert_eq!(batch[1], parse(&result("7", "3")));
        assert_eq!(got[2], MARK_ANSWER);
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{wire:?}: {}", exit.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_async_handler_yields_internal_error_for_that_request_only() {
    for wire in Wire::BOTH {
        let mut conn = gates(wire);
        conn.send(req("wait", "[]", r#""waiting""#)).await;
        let got = conn.call(req("boom", "[]", "1")).await;
        assert_eq!(code_and_id(&got), (-32603, Value::from(1)), "{wire:?}: {got}");
        let batch =
            format!("[{},{},{}]", req("boom", "[]", "2"), req("add_later", "[1,1]", "3"), req("add", "[2,2]", "4"));
        let got = parse(&conn.call(batch).await);
        assert_eq!(got[0]["error"]["code"], -32603, "{wire:?}: {got}");
        assert_eq!(got[0]["id"], 2);
        assert_eq!(got[1], parse(&result("2", "3")));
        assert_eq!(got[2], parse(&result("4", "4")));
        // A panicking notification is silent.
        conn.send(note("boom", "[]")).await;
        conn.send(req("open", "[]", r#""open""#)).await;
        let got = recv_unordered(&mut conn, 2).await;
        assert_eq!(got, sorted(vec![result(r#""opened""#, r#""waiting""#), result("true", r#""open""#)]), "{wire:?}");
        assert_eq!(conn.call(req("add", "[1,2]", "5")).await, result("3", "5"));
    }
}

// ---------------------------------------------------------------------------
// Limits.

fn limits() -> Limits {
    Limits::default()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_message_is_refused_and_the_connection_stays_usable() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_message_size(100), wire);
        let big = req("add", &format!("[1,2,{}]", "0,".repeat(100) + "0"), "1");
        assert!(big.len() > 100);
        let got = conn.call(&big).await;
        assert_eq!(code_and_id(&got), (-32600, Value::Null), "{wire:?}: {got}");
        assert!(got.contains("100"), "{wire:?}: the message should name the limit: {got}");
        // Right at the limit is fine.
        let fits = req("add", "[1,2]", &format!("\"{}\"", "x".repeat(100 - req("add", "[1,2]", "\"\"").len())));
        assert_eq!(fits.len(), 100);
        assert!(conn.call(&fits).await.contains(r#""result":3"#), "{wire:?}");
        assert_eq!(conn.call(req("add", "[2,2]", "2")).await, result("4", "2"), "{wire:?}");
        // Several oversized frames in a row, then a good one.
        for _ in 0..3 {
            conn.send(&big).await;
        }
        for _ in 0..3 {
            assert_eq!(code_and_id(&conn.recv().await).0, -32600, "{wire:?}");
        }
        assert_eq!(conn.call(req("add", "[3,3]", "3")).await, result("6", "3"), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_calculator_refuses_a_message_over_its_default_limit_and_carries_on() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        let filler = "x".repeat(Limits::default().max_message_size);
        let big = req("echo", &format!("[\"{filler}\"]"), "1");
        let got = calc.conn.call(&big).await;
        assert_eq!(code_and_id(&got), (-32600, Value::Null), "{wire:?}: {got}");
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER, "{wire:?}");
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_over_the_length_limit_is_one_invalid_request() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_batch_len(2), wire);
        let entry = req("add", "[1,1]", "1");
        let got = conn.call(format!("[{entry},{entry},{entry}]")).await;
        assert_eq!(code_and_id(&got), (-32600, Value::Null), "{wire:?}: {got}");
        assert!(got.starts_with('{'), "{wire:?}: one error object, not an array: {got}");
        assert!(got.contains('2') && got.contains('3'), "{wire:?}: the message names the size and the limit: {got}");
        let got = conn.call(format!("[{entry},{entry}]")).await;
        assert_eq!(got, format!("[{},{}]", result("2", "1"), result("2", "1")), "{wire:?}");
    }
}

/// Entries past the batch limit are counted, not kept: the refusal still
/// names the true length, and invalid JSON anywhere is still -32700.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_batch_is_measured_whole_and_still_checked_for_syntax() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_batch_len(2), wire);
        let entries = vec![r#"{"nested":[[[1]],{"a":[2]}]}"#; 5_000].join(",");
        let got = conn.call(format!("[{entries}]")).await;
        assert_eq!(code_and_id(&got), (-32600, Value::Null), "{wire:?}: {got}");
        assert!(got.contains("batch of 5000 requests exceeds the limit of 2"), "{wire:?}: {got}");
        let got = conn.call(format!("[{entries},{{\"broken\"]")).await;
        assert_eq!(got, parse_error(), "{wire:?}");
        let got = conn.call(format!("[{entries}] trailing")).await;
        assert_eq!(got, parse_error(), "{wire:?}");
        assert_eq!(conn.call(req("add", "[1,2]", "1")).await, result("3", "1"), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_beyond_the_concurrency_limit_get_a_clear_error() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_concurrent_requests(1), wire);
        conn.send(req("wait", "[]", "1")).await;
        // The limit is reached while `wait` runs: the next async request is
        // turned away at once (its answer comes before `wait`'s).
        let got = conn.call(req("add_later", "[1,2]", "2")).await;
        let (code, id) = code_and_id(&got);
        assert_eq!((code, id), (-32000, Value::from(2)), "{wire:?}: {got}");
        assert!(got.contains("max_concurrent_requests"), "{wire:?}: the message names the limit: {got}");
        // Synchronous methods need no slot.
        assert_eq!(conn.call(req("add", "[1,2]", "3")).await, result("3", "3"), "{wire:?}");
        conn.send(req("open", "[]", "4")).await;
        assert_eq!(recv_unordered(&mut conn, 2).await, sorted(vec![result(r#""opened""#, "1"), result("true", "4")]));
        // The slot is free again.
        assert_eq!(conn.call(req("add_later", "[1,2]", "5")).await, result("3", "5"), "{wire:?}");
    }
}

/// Regression: a batch took one slot however many `async` entries it ran,
/// so batching got around `max_concurrent_requests`.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_cannot_get_around_the_concurrency_limit() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_concurrent_requests(2), wire);
        conn.send(req("wait", "[]", "1")).await;
        // One slot is left; the batch needs two: its waiting entries are
        // refused at once, its synchronous entry is answered.
        let got = conn
            .call(format!("[{},{},{}]", req("wait", "[]", "2"), req("add", "[1,2]", "3"), req("wait", "[]", "4")))
            .await;
        let got = parse(&got);
        assert_eq!(got[0]["error"]["code"], -32000, "{wire:?}: {got}");
        assert_eq!(got[0]["id"], 2);
        assert_eq!(got[1], parse(&result("3", "3")));
        assert_eq!(got[2]["error"]["code"], -32000, "{wire:?}: {got}");
        assert_eq!(got[2]["id"], 4);
        conn.send(req("open", "[]", "5")).await;
        assert_eq!(recv_unordered(&mut conn, 2).await, sorted(vec![result(r#""opened""#, "1"), result("true", "5")]));
        // With both slots free, a batch of two concurrent entries runs.
        let got = conn.call(format!("[{},{}]", req("meet", "[]", "6"), req("meet", "[]", "7"))).await;
        assert_eq!(got, format!("[{},{}]", result("2", "6"), result("2", "7")), "{wire:?}");
    }
}

/// Regression: a limit above tokio's semaphore maximum (such as
/// `usize::MAX` for "no limit") panicked the connection's task.
#[tokio::test(flavor = "multi_thread")]
async fn an_unbounded_concurrency_limit_is_accepted() {
    for wire in Wire::BOTH {
        let mut conn = gates_with(limits().max_concurrent_requests(usize::MAX), wire);
        assert_eq!(conn.call(req("add_later", "[1,2]", "1")).await, result("3", "1"), "{wire:?}");
        let got = conn.call(format!("[{},{}]", req("meet", "[]", "2"), req("meet", "[]", "3"))).await;
        assert_eq!(got, format!("[{},{}]", result("2", "2"), result("2", "3")), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn deeply_nested_json_cannot_crash_the_server() {
    let depth = 100_000;
    let open = "[".repeat(depth);
    let nested = format!("{open}{}", "]".repeat(depth));
    let nested_object = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        // As the whole message: unclosed, and closed (a batch whose only
        // entry is not a request).
        assert_eq!(calc.conn.call(&open).await, parse_error(), "{wire:?}");
        assert_eq!(calc.conn.call(&nested).await, format!("[{}]", invalid_request("null")), "{wire:?}");
        // In a request's members.
        let got = calc.conn.call(req("sum", &nested, "1")).await;
        assert_eq!(code_and_id(&got), (-32602, Value::from(1)), "{wire:?}");
        let got = calc.conn.call(req("update", &format!("[{nested}]"), "2")).await;
        assert_eq!(code_and_id(&got), (-32602, Value::from(2)), "{wire:?}");
        let got =
            calc.conn.call(req("subtract", &format!(r#"{{"minuend":{nested_object},"subtrahend":1}}"#), "3")).await;
        assert_eq!(code_and_id(&got), (-32602, Value::from(3)), "{wire:?}");
        let got = calc.conn.call(format!(r#"{{"jsonrpc":"2.0","method":"echo","params":[1],"id":{nested}}}"#)).await;
        assert_eq!(got, invalid_request_because("null", r#""id" must be a string, a number or null"#), "{wire:?}");
        let got = calc.conn.call(req("sum", &format!("[1,{}", open), "4")).await;
        assert_eq!(got, parse_error(), "{wire:?}");
        // In a batch, next to a good entry.
        let got = calc.conn.call(format!("[{},{}]", req("sum", &nested, "5"), req("sum", "[1,2]", "6"))).await;
        let got = parse(&got);
        assert_eq!(got[0]["error"]["code"], -32602, "{wire:?}");
        assert_eq!(got[1], parse(&result("3", "6")));
        assert_eq!(calc.conn.call(MARK).await, MARK_ANSWER);
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{wire:?}: {}", exit.stderr);
    }
}

// ---------------------------------------------------------------------------
// Framing problems, end of input, stdout hygiene.

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_content_length_header_is_reported_on_stderr_and_the_next_message_answered() {
    let good = |id: u32| req("subtract", "[5,3]", &id.to_string());
    let cases: Vec<(String, &str)> = vec![
        (format!("Content-Length: abc\r\n\r\n{}", good(100)), "abc"),
        (format!("Content-Length: -5\r\n\r\n{}", good(100)), "-5"),
        (format!("Content-Length: 99999999999999999999999999\r\n\r\n{}", good(100)), "99999999999999999999999999"),
        ("Content-Type: application/json\r\n\r\n".to_owned(), "without Content-Length"),
        ("this is not a header\r\n\r\n".to_owned(), "this is not a header"),
    ];
    for (i, (bad, reason)) in cases.iter().enumerate() {
        let mut calc = Calculator::spawn(Wire::ContentLength);
        calc.conn.send_raw(bad.as_bytes()).await;
        let id = i as u32 + 1;
        calc.conn.send(good(id)).await;
        // The bad frame is reported to the client, then the good one answered.
        let mut got = calc.conn.recv().await;
        assert_eq!(code_and_id(&got), (-32700, Value::Null), "{bad:?}: {got}");
        got = calc.conn.recv().await;
        assert_eq!(got, result("2", &id.to_string()), "{bad:?}");
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{bad:?}: {}", exit.stderr);
        assert!(exit.stderr.contains(reason), "{bad:?}: stderr should explain; got:\n{}", exit.stderr);
        assert!(!exit.stderr.contains("panicked"), "{bad:?}: {}", exit.stderr);
    }
}

/// Regression: a bad header line next to a valid Content-Length used to
/// leave the body to be read as headers, which cost an extra error and the
/// next (good) message.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_header_line_next_to_a_valid_length_costs_only_that_message() {
    let pretty = "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"subtract\",\n  \"params\": [42, 23],\n  \"id\": 1\n}";
    let bad_frames = [
        format!("Content-Length: {}\r\nbogus\r\n\r\n{pretty}", pretty.len()),
        format!("Content-Length: {}\r\nContent-Length: 3\r\n\r\n{pretty}", pretty.len()),
    ];
    for bad in bad_frames {
        let mut calc = Calculator::spawn(Wire::ContentLength);
        calc.conn.send_raw(bad.as_bytes()).await;
        calc.conn.send(req("subtract", "[42,23]", "2")).await;
        let got = calc.conn.recv().await;
        assert_eq!(code_and_id(&got), (-32700, Value::Null), "{bad:?}: {got}");
        assert_eq!(calc.conn.recv().await, result("19", "2"), "{bad:?}: the next message must be answered");
        let exit = calc.finish().await;
        assert!(exit.status.success());
        assert!(exit.rest.is_empty(), "{bad:?}: one error only, got also {:?}", exit.rest);
    }
}

/// Regression: after an unreadable length, a body with a line that is not
/// a header made the following good frame be read as junk too.
#[tokio::test(flavor = "multi_thread")]
async fn junk_after_an_unreadable_length_does_not_swallow_the_next_message() {
    let mut calc = Calculator::spawn(Wire::ContentLength);
    calc.conn.send_raw(b"Content-Length: twelve\r\n\r\n[1,\n2]\r\n").await;
    calc.conn.send(req("subtract", "[42,23]", "2")).await;
    let got = calc.conn.recv().await;
    assert_eq!(code_and_id(&got), (-32700, Value::Null), "{got}");
    assert_eq!(calc.conn.recv().await, result("19", "2"));
    let exit = calc.finish().await;
    assert!(exit.status.success());
    assert!(exit.rest.is_empty(), "{:?}", exit.rest);
    assert!(exit.stderr.contains("twelve"), "{}", exit.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn content_length_headers_are_case_insensitive_and_other_headers_ignored() {
    let mut calc = Calculator::spawn(Wire::ContentLength);
    let body = req("greet", r#"["Zoë","Hej"]"#, "1");
    let raw = format!(
        "content-length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}",
        body.len()
    );
    assert!(body.len() > body.chars().count(), "the body has multi-byte characters");
    calc.conn.send_raw(raw.as_bytes()).await;
    assert_eq!(calc.conn.recv().await, result(r#""Hej, Zoë!""#, "1"));
    let raw = format!("CONTENT-LENGTH:{}\r\n\r\n{body}", body.len());
    calc.conn.send_raw(raw.as_bytes()).await;
    assert_eq!(calc.conn.recv().await, result(r#""Hej, Zoë!""#, "1"));
    assert!(calc.finish().await.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_split_across_writes_or_sharing_one_are_read_whole() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        let mut bytes = wire.encode(req("greet", r#"["Zoë","Hi"]"#, "1").as_bytes());
        bytes.extend(wire.encode(req("subtract", "[5,3]", "2").as_bytes()));
        bytes.extend(wire.encode(b"[]"));
        // Dribbled in pieces of 1 to 7 bytes, each flushed on its own.
        for (i, chunk) in bytes.chunks(7).enumerate() {
            let cut = 1 + i % chunk.len();
            calc.conn.send_raw(&chunk[..cut]).await;
            calc.conn.send_raw(&chunk[cut..]).await;
        }
        assert_eq!(calc.conn.recv().await, result(r#""Hi, Zoë!""#, "1"), "{wire:?}");
        assert_eq!(calc.conn.recv().await, result("2", "2"), "{wire:?}");
        assert_eq!(calc.conn.recv().await, invalid_request("null"), "{wire:?}");
        // All three in a single write.
        calc.conn.send_raw(&bytes).await;
        assert_eq!(calc.conn.recv().await, result(r#""Hi, Zoë!""#, "1"), "{wire:?}");
        assert_eq!(calc.conn.recv().await, result("2", "2"), "{wire:?}");
        assert_eq!(calc.conn.recv().await, invalid_request("null"), "{wire:?}");
        assert!(calc.finish().await.status.success());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_end_of_input_in_flight_requests_finish_before_a_clean_exit() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        calc.conn.send(req("sleep", "[300]", "1")).await;
        calc.conn.send(format!("[{},{}]", req("sleep", "[200]", "2"), req("sleep", "[100]", "3"))).await;
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{wire:?}: {:?}\n{}", exit.status, exit.stderr);
        let mut rest = exit.rest;
        rest.sort();
        let mut want = vec![result("300", "1"), format!("[{},{}]", result("200", "2"), result("100", "3"))];
        want.sort();
        assert_eq!(rest, want, "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn in_process_end_of_input_waits_for_in_flight_requests() {
    for wire in Wire::BOTH {
        let (mut conn, task) = serve_in_process(Server::new(GateService::router()), wire);
        conn.send(req("wait", "[]", "1")).await;
        conn.send(req("open", "[]", "2")).await;
        conn.close().await;
        let got = sorted(conn.rest().await);
        assert_eq!(got, sorted(vec![result(r#""opened""#, "1"), result("true", "2")]), "{wire:?}");
        task.await.expect("server task").expect("serving a stream ends cleanly at end of input");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_only_protocol_messages() {
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn_with_env(wire, &[("RPC_LOG", "trace")]);
        let messages = [
            req("subtract", "[1,2]", "1"),
            note("notify_hello", "[1]"),
            req("panic", "[]", "2"),
            "not json".to_owned(),
            format!("[{},{}]", req("sleep", "[1]", "3"), note("update", "[1]")),
            req("fail", r#"[5,"five",{"x":1}]"#, "4"),
            "[]".to_owned(),
        ];
        for message in &messages {
            calc.conn.send(message).await;
        }
        if wire == Wire::ContentLength {
            calc.conn.send_raw(b"Content-Length: zzz\r\n\r\n").await;
        }
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{wire:?}: {}", exit.stderr);
        // `finish` read every frame strictly; each must be a JSON-RPC response.
        let expected = if wire == Wire::ContentLength { 7 } else { 6 };
        assert_eq!(exit.rest.len(), expected, "{wire:?}: {:?}", exit.rest);
        for message in &exit.rest {
            let value = parse(message);
            let responses = value.as_array().cloned().unwrap_or_else(|| vec![value.clone()]);
            for response in responses {
                assert_eq!(response["jsonrpc"], "2.0", "{wire:?}: {message}");
                assert!(response.get("id").is_some(), "{wire:?}: {message}");
            }
        }
        let failed = r#"{"jsonrpc":"2.0","error":{"code":5,"message":"five","data":{"x":1}},"id":4}"#;
        assert!(exit.rest.iter().any(|message| message == failed), "{wire:?}: {:?}", exit.rest);
        assert!(!exit.stderr.is_empty(), "{wire:?}: with RPC_LOG=trace the logs go to stderr");
    }
}

// ---------------------------------------------------------------------------
// TCP.

#[tokio::test(flavor = "multi_thread")]
async fn the_calculator_serves_several_simultaneous_tcp_connections() {
    for wire in Wire::BOTH {
        let (_calc, addr) = Calculator::spawn_tcp(wire).await;
        let mut a = connect(addr, wire).await;
        let mut b = connect(addr, wire).await;
        let mut c = connect(addr, wire).await;
        // A is busy for longer than the test; B and C are answered anyway,
        // each with its own answer to the same id.
        a.send(req("sleep", "[600000]", "1")).await;
        b.send(req("subtract", "[10,1]", "1")).await;
        c.send(req("subtract", "[10,2]", "1")).await;
        assert_eq!(c.recv().await, result("8", "1"), "{wire:?}");
        assert_eq!(b.recv().await, result("9", "1"), "{wire:?}");
        assert_eq!(a.call(req("subtract", "[10,3]", "2")).await, result("7", "2"), "{wire:?}");
        // Closing one connection leaves the others working.
        b.close().await;
        assert_eq!(b.rest().await, Vec::<String>::new());
        assert_eq!(c.call(req("get_data", "[]", "3")).await, result(r#"["hello",5]"#, "3"), "{wire:?}");
        let mut d = connect(addr, wire).await;
        assert_eq!(d.call(req("sum", "[1,2,3]", "4")).await, result("6", "4"), "{wire:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_served_by_a_tcp_listener_run_independently() {
    for wire in Wire::BOTH {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let server = Server::new(GateService::router()).framing(wire.framing());
        let serving = tokio::spawn(server.serve(listener));
        let mut first = connect(addr, wire).await;
        let mut second = connect(addr, wire).await;
        // `first` waits for a gate that only `second` opens.
        first.send(req("wait", "[]", "1")).await;
        assert_eq!(second.call(req("open", "[]", "1")).await, result("true", "1"), "{wire:?}");
        assert_eq!(first.recv().await, result(r#""opened""#, "1"), "{wire:?}");
        // And `meet` needs both connections at the barrier.
        first.send(req("meet", "[]", "2")).await;
        second.send(req("meet", "[]", "2")).await;
        assert_eq!(first.recv().await, result("2", "2"));
        assert_eq!(second.recv().await, result("2", "2"));
        serving.abort();
    }
}

// ---------------------------------------------------------------------------
// Documented trade-offs and defaults.

#[tokio::test(flavor = "multi_thread")]
async fn a_notification_method_called_with_an_id_is_answered_null() {
    // The spec requires an answer to every request with an id, whatever the
    // method was declared as.
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        assert_eq!(calc.conn.call(req("notify_hello", "[7]", "1")).await, result("null", "1"), "{wire:?}");
        assert_eq!(calc.conn.call(req("update", "[1,2]", r#""u""#)).await, result("null", r#""u""#), "{wire:?}");
        assert!(calc.finish().await.status.success());
    }
}

/// A plain method that blocks its thread until another connection lets it go.
#[rpc]
pub trait Turnstile {
    /// Blocks (a plain `fn`, run inline) until `release` is called.
    fn hold(&self) -> bool;
    /// Lets `hold` go.
    fn release(&self) -> bool;
    /// Counts a call.
    fn tick(&self) -> u32;
    /// How many `tick`s have run.
    fn ticks(&self) -> u32;
    /// Whether `hold` is blocking.
    fn holding(&self) -> bool;
}

#[derive(Default)]
struct TurnstileService {
    holding: std::sync::atomic::AtomicBool,
    released: std::sync::Mutex<bool>,
    wake: std::sync::Condvar,
    ticks: std::sync::atomic::AtomicU32,
}

impl Turnstile for TurnstileService {
    fn hold(&self) -> bool {
        self.holding.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut released = self.released.lock().unwrap();
        while !*released {
            released = self.wake.wait(released).unwrap();
        }
        true
    }
    fn release(&self) -> bool {
        *self.released.lock().unwrap() = true;
        self.wake.notify_all();
        true
    }
    fn tick(&self) -> u32 {
        self.ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
    }
    fn ticks(&self) -> u32 {
        self.ticks.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn holding(&self) -> bool {
        self.holding.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plain_method_runs_inline_and_holds_up_its_own_connection_only() {
    // README: plain `fn` methods run on the connection's reader, so a slow
    // one holds up later requests on that connection (and no other).
    let server = Server::new(TurnstileService::default().into_rpc());
    let (mut held, _) = serve_in_process(server.clone(), Wire::Ndjson);
    let (mut other, _) = serve_in_process(server, Wire::Ndjson);
    held.send(req("hold", "[]", "1")).await;
    while other.call(req("holding", "[]", "0")).await != result("true", "0") {
        tokio::task::yield_now().await;
    }
    held.send(req("tick", "[]", "2")).await;
    // The other connection is served meanwhile, and sees that `tick`, sent
    // after `hold` on the held connection, has not run.
    assert_eq!(other.call(req("ticks", "[]", "3")).await, result("0", "3"));
    assert_eq!(other.call(req("release", "[]", "4")).await, result("true", "4"));
    assert_eq!(held.recv().await, result("true", "1"));
    assert_eq!(held.recv().await, result("1", "2"));
}

#[test]
fn the_documented_default_limits() {
    let limits = Limits::default();
    assert_eq!(limits.max_message_size, 10 * 1024 * 1024);
    assert_eq!(limits.max_batch_len, 1_000);
    assert_eq!(limits.max_concurrent_requests, 1_024);
}

// ---------------------------------------------------------------------------
// A protocol dialect defined outside the runtime, with its public API only.

mod dialect {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rpc_runtime::dispatch::Dialect;
    use rpc_runtime::serde_json::value::RawValue;
    use rpc_runtime::Cancellation;
    use rpc_runtime::{Context, ErrorObject, Server};

    use super::{error, invalid_request_because, note, req, result, serve_in_process, sorted, GateService, Wire};

    /// String ids only, no batches, and its own cancellation notification
    /// `x/cancel` with params `{"call": <id>}`.
    struct Strict {
        answer_cancelled: bool,
    }

    /// Batches refused so far on one connection.
    #[derive(Default)]
    struct Refusals(AtomicUsize);

    impl Dialect for Strict {
        fn check_id(&self, id: &RawValue) -> Result<(), ErrorObject> {
            if id.get().starts_with('"') {
                Ok(())
            } else {
                Err(ErrorObject::invalid_request().with_data(&"ids must be strings"))
            }
        }

        fn check_batch(&self, cx: &Context) -> Result<(), ErrorObject> {
            let refused =
                cx.connection_state(Refusals::default).map_or(0, |count| count.0.fetch_add(1, Ordering::SeqCst));
            Err(ErrorObject::new(-32099, format!("no batches (refusal {})", refused + 1)))
        }

        fn cancellation(&self) -> Option<Cancellation> {
            Some(Cancellation::Custom { method: "x/cancel", id_member: "call", answered: self.answer_cancelled })
        }
    }

    fn strict(wire: Wire, answer_cancelled: bool) -> super::Conn {
        serve_in_process(Server::new(GateService::router()).dialect(Strict { answer_cancelled }), wire).0
    }

    #[tokio::test]
    async fn a_custom_dialect_refuses_the_ids_it_does_not_allow_and_runs_nothing_for_them() {
        for wire in Wire::BOTH {
            let mut conn = strict(wire, true);
            assert_eq!(conn.call(req("add", "[1,2]", "\"a\"")).await, result("3", "\"a\""), "{wire:?}");
            assert_eq!(conn.call(req("add", "[1,2]", "7")).await, invalid_request_because("7", "ids must be strings"));
            assert_eq!(
                conn.call(req("add", "[1,2]", "null")).await,
                invalid_request_because("null", "ids must be strings")
            );
            // A refused request does not run: had this `wait` run, it
            // would take the one permit that `open` gives, and the `wait`
            // after it would never be answered.
            conn.send(req("wait", "[]", "5")).await;
            conn.send(req("open", "[]", "\"o\"")).await;
            conn.send(req("wait", "[]", "\"w\"")).await;
            let got = vec![conn.recv().await, conn.recv().await, conn.recv().await];
            let expected = vec![
                invalid_request_because("5", "ids must be strings"),
                result("true", "\"o\""),
                result(r#""opened""#, "\"w\""),
            ];
            assert_eq!(sorted(got), sorted(expected), "{wire:?}");
        }
    }

    #[tokio::test]
    async fn a_custom_dialect_refuses_batches_with_its_own_error_and_keeps_state_per_connection() {
        let batch = format!("[{},{}]", req("add", "[1,2]", "\"a\""), req("add", "[3,4]", "\"b\""));
        for wire in Wire::BOTH {
            let mut conn = strict(wire, true);
            assert_eq!(conn.call(&batch).await, error(-32099, "no batches (refusal 1)", "null"), "{wire:?}");
            assert_eq!(conn.call(&batch).await, error(-32099, "no batches (refusal 2)", "null"));
            let mut other = strict(wire, true);
            assert_eq!(other.call(&batch).await, error(-32099, "no batches (refusal 1)", "null"));
        }
    }

    #[tokio::test]
    async fn a_custom_dialect_names_the_cancellation_notification_and_whether_it_is_answered() {
        for (answer_cancelled, wire) in [(true, Wire::Ndjson), (false, Wire::ContentLength)] {
            let (mut conn, task) =
                serve_in_process(Server::new(GateService::router()).dialect(Strict { answer_cancelled }), wire);
            conn.send(req("wait", "[]", "\"w\"")).await;
            // The LSP notification means nothing here: no handler, no effect.
            conn.send(note("$/cancelRequest", r#"{"id":"w"}"#)).await;
            conn.send(note("x/cancel", r#"{"call":"w"}"#)).await;
            conn.send(req("open", "[]", "\"o\"")).await;
            conn.close().await;
            let mut expected = vec![result("true", "\"o\"")];
            if answer_cancelled {
                expected.push(error(-32800, "Request cancelled", "\"w\""));
            }
            assert_eq!(sorted(conn.rest().await), sorted(expected), "answer_cancelled: {answer_cancelled}");
            task.await.expect("server task").expect("the connection ends cleanly");
        }
    }
}
