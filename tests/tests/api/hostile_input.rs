//! Regression tests for the quirks a hostile-client review found (issue 14,
//! finding 5), end to end over an in-process byte stream in both framings.

use crate::common;

use common::{result, serve_in_process, Wire};
use rpc_runtime::{rpc, ErrorObject, Server};
use serde_json::{json, Value};

#[rpc]
trait Numbers {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
    fn count(&self, n: u64) -> u64;
    fn small(&self, n: i8) -> i8;
    fn float(&self, x: f64) -> f64;
    #[rpc(whole_params)]
    fn sum(&self, numbers: Vec<i64>) -> i64;
    fn fail(&self) -> Result<(), ErrorObject>;
}

struct Service;

impl Numbers for Service {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }
    fn count(&self, n: u64) -> u64 {
        n
    }
    fn small(&self, n: i8) -> i8 {
        n
    }
    fn float(&self, x: f64) -> f64 {
        x
    }
    fn sum(&self, numbers: Vec<i64>) -> i64 {
        numbers.iter().sum()
    }
    fn fail(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(-1, "no"))
    }
}

fn server() -> Server {
    Server::new(Service.into_rpc())
}

fn req(method: &str, params: &str, id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":{id}}}"#)
}

/// Regression: `-0` was refused for an `i64` param as "floating point";
/// JSON's `-0` is an integer zero.
#[tokio::test(flavor = "multi_thread")]
async fn negative_zero_is_accepted_as_an_integer_zero() {
    for wire in Wire::BOTH {
        let (mut conn, _task) = serve_in_process(server(), wire);
        let cases = [
            ("subtract", "[-0, 5]", "-5"),
            ("subtract", r#"{"minuend": 3, "subtrahend": -0}"#, "3"),
            ("count", "[-0]", "0"),
            ("small", "[-0]", "0"),
            ("sum", "[-0, -0, 2]", "2"),
            // A float parameter still sees the sign.
            ("float", "[-0]", "-0.0"),
            ("float", "[-0.0]", "-0.0"),
        ];
        for (id, (method, params, expected)) in cases.into_iter().enumerate() {
            let id = id as u32 + 1;
            let got = conn.call(req(method, params, id)).await;
            assert_eq!(got, result(expected, &id.to_string()), "{wire:?}: {method} {params}");
        }
        // Still refused where it is not an integer, naming the parameter.
        let got: Value = serde_json::from_str(&conn.call(req("count", "[-0.5]", 99)).await).unwrap();
        assert_eq!(got["error"]["code"], -32602, "{got}");
        assert!(got["error"]["message"].as_str().unwrap().contains("`n`"), "{got}");
    }
}

/// Regression: `Content-Length: +67` was accepted; only ASCII digits make a
/// byte count.
#[tokio::test(flavor = "multi_thread")]
async fn a_content_length_with_a_plus_sign_is_malformed() {
    let (mut conn, _task) = serve_in_process(server(), Wire::ContentLength);
    let body = req("subtract", "[5,3]", 1);
    conn.send_raw(format!("Content-Length: +{}\r\n\r\n{body}", body.len()).as_bytes()).await;
    let got: Value = serde_json::from_str(&conn.recv().await).unwrap();
    assert_eq!(got["error"]["code"], -32700, "{got}");
    assert_eq!(got["id"], Value::Null, "{got}");
    assert_eq!(conn.call(req("subtract", "[5,3]", 2)).await, result("2", "2"), "the next message is answered");
}

/// Regression: a UTF-8 byte-order mark before the JSON was answered -32700.
#[tokio::test(flavor = "multi_thread")]
async fn a_byte_order_mark_before_a_message_is_skipped() {
    for wire in Wire::BOTH {
        let (mut conn, _task) = serve_in_process(server(), wire);
        let mut single = b"\xEF\xBB\xBF".to_vec();
        single.extend_from_slice(req("subtract", "[5,3]", 1).as_bytes());
        assert_eq!(conn.call(&single).await, result("2", "1"), "{wire:?}");
        let mut batch = b"\xEF\xBB\xBF[".to_vec();
        batch.extend_from_slice(req("subtract", "[9,3]", 2).as_bytes());
        batch.push(b']');
        assert_eq!(conn.call(&batch).await, format!("[{}]", result("6", "2")), "{wire:?}");
        // Only a mark at the start is skipped: one elsewhere is not JSON.
        let got: Value = serde_json::from_str(&conn.call(b"[\xEF\xBB\xBF]").await).unwrap();
        assert_eq!(got["error"]["code"], -32700, "{wire:?}: {got}");
        assert_eq!(conn.call(req("subtract", "[1,1]", 3)).await, result("0", "3"), "{wire:?}");
    }
}

/// Regression (finding 4): every panic wrote its own lines to stderr, so a
/// client sending batches of `panic` calls wrote hundreds of megabytes of
/// logs. Now the first panic of a method is logged with its message and
/// later ones only counted.
#[tokio::test(flavor = "multi_thread")]
async fn repeated_panics_are_logged_once_with_a_count_not_once_each() {
    let mut calc = common::Calculator::spawn_with_env(Wire::Ndjson, &[("RUST_BACKTRACE", "0")]);
    let call = |id: usize| format!(r#"{{"jsonrpc":"2.0","method":"panic","id":{id}}}"#);
    let batches = 3;
    for batch in 0..batches {
        let calls: Vec<String> = (0..1_000).map(|i| call(batch * 1_000 + i)).collect();
        let answer: Value = serde_json::from_str(&calc.conn.call(format!("[{}]", calls.join(","))).await).unwrap();
        assert_eq!(answer.as_array().map(Vec::len), Some(1_000));
        assert!(answer.as_array().unwrap().iter().all(|response| response["error"]["code"] == -32603));
    }
    let exit = calc.finish().await;
    assert!(exit.status.success(), "{}", exit.stderr);
    // The first panic, with its message, from the runtime and from Rust's
    // panic hook; then a few counted lines (powers of two, or one per
    // interval), never one per panic.
    assert!(exit.stderr.contains("the `panic` method always panics"), "{}", exit.stderr);
    let mentions = exit.stderr.matches("panicked").count();
    assert!(mentions <= 30, "{mentions} panic reports for {} panics:\n{}", batches * 1_000, exit.stderr);
    assert!(exit.stderr.len() < 8 * 1024, "{} bytes of stderr:\n{}", exit.stderr.len(), exit.stderr);
}

/// Regression (finding 4): with stderr a pipe nobody drains, the first log
/// line that did not fit in the pipe blocked the server, and every client
/// with it. Logging now drops lines rather than wait.
#[tokio::test(flavor = "multi_thread")]
async fn an_undrained_stderr_does_not_stall_the_server() {
    use tokio::io::AsyncWriteExt;
    // Kept whole: its stderr pipe stays open, unread.
    let mut calc = common::UndrainedCalculator::spawn();
    // Each notification logs an info line: far more than a pipe holds.
    let line = r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#.to_owned() + "\n";
    let flood = line.repeat(20_000);
    let request = req("subtract", "[5,3]", 1) + "\n";
    let answered = tokio::time::timeout(std::time::Duration::from_secs(15), async {
        calc.stdin.write_all(flood.as_bytes()).await.unwrap();
        calc.stdin.write_all(request.as_bytes()).await.unwrap();
        calc.stdin.flush().await.unwrap();
        calc.conn.recv().await
    })
    .await;
    assert_eq!(answered.ok(), Some(result("2", "1")), "the server stalled on its log output");
}

/// A header line longer than 8 KiB is never buffered whole: it is skipped.
/// After a `Content-Length`, it makes the frame malformed (its body is
/// skipped and the error names the limit); before one, it is junk ahead of
/// the frame, logged and passed over.
#[tokio::test(flavor = "multi_thread")]
async fn an_endless_header_line_is_skipped_naming_the_limit() {
    let (mut conn, _task) = serve_in_process(server(), Wire::ContentLength);
    let padding = format!("X-Padding: {}\r\n", "a".repeat(1 << 20));
    let body = req("subtract", "[5,3]", 1);
    conn.send_raw(format!("Content-Length: {}\r\n{padding}\r\n{body}", body.len()).as_bytes()).await;
    let got: Value = serde_json::from_str(&conn.recv().await).unwrap();
    assert_eq!(got["error"]["code"], -32700, "{got}");
    let message = got["error"]["message"].as_str().unwrap();
    assert!(message.contains("exceeds 8192"), "the error names the limit: {message}");
    let body = req("subtract", "[5,3]", 2);
    conn.send_raw(format!("{padding}Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
    assert_eq!(conn.recv().await, result("2", "2"), "junk before a frame is passed over");
}

/// A server connection that never made a call reads a request's four
/// members only; a message without `method` is read again as a response.
/// So a stray response is still taken off the stream and never answered,
/// while a message with neither `method` nor a response's members is an
/// invalid request, whatever members it holds besides.
#[tokio::test(flavor = "multi_thread")]
async fn a_stray_response_is_dropped_and_a_request_without_method_is_answered() {
    for wire in Wire::BOTH {
        let (mut conn, _task) = serve_in_process(server(), wire);
        conn.send(r#"{"jsonrpc":"2.0","result":5,"id":99}"#).await;
        conn.send(r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"no"},"id":98}"#).await;
        let got = conn.call(r#"{"jsonrpc":"2.0","params":[1],"id":7}"#).await;
        assert_eq!(got, common::invalid_request_because("7", r#""method" is missing"#), "{wire:?}");
        // A request with a response's members besides is still a request.
        let got = conn.call(r#"{"jsonrpc":"2.0","method":"count","params":[2],"result":1,"id":8}"#).await;
        assert_eq!(got, result("2", "8"), "{wire:?}");
        conn.close().await;
        assert!(conn.rest().await.is_empty(), "{wire:?}: nothing else was answered");
    }
}

/// A `method` or `jsonrpc` member with an escaped lone surrogate is no
/// string a method can have: the request is invalid (-32600, its id echoed,
/// the reason in `data`), never a parse error, and the server goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_method_or_version_with_a_lone_surrogate_is_an_invalid_request() {
    for wire in Wire::BOTH {
        let (mut conn, _task) = serve_in_process(server(), wire);
        for request in [
            r#"{"jsonrpc":"2.0","method":"count\ud800","params":[1],"id":7}"#,
            r#"{"jsonrpc":"2.\udc00","method":"count","params":[1],"id":7}"#,
        ] {
            let got: Value = serde_json::from_str(&conn.call(request.to_owned()).await).unwrap();
            assert_eq!((&got["error"]["code"], &got["id"]), (&json!(-32600), &json!(7)), "{wire:?}: {got}");
            let data = got["error"]["data"].as_str().unwrap_or_default();
            assert!(data.starts_with("not a request object: ") && data.contains("escape"), "{got}");
        }
        let got = conn.call(r#"{"jsonrpc":"2.0","method":"count","params":[1],"id":8}"#.to_owned()).await;
        assert_eq!(got, result("1", "8"), "{wire:?}");
    }
}

/// Found by the `engine` fuzz target: JSON's grammar allows an escaped lone
/// surrogate (`"\ud800"`), which no Rust string can hold. Such an id is still
/// echoed exactly as it came (a JavaScript client, whose strings are UTF-16,
/// can match it), and never breaks the server.
#[tokio::test(flavor = "multi_thread")]
async fn an_id_with_a_lone_surrogate_escape_is_echoed_as_it_came() {
    for wire in Wire::BOTH {
        let (mut conn, _task) = serve_in_process(server(), wire);
        for id in [r#""a\ude00e9""#, r#""\uD800""#, r#""\udbff\u0041""#] {
            let got = conn.call(format!(r#"{{"jsonrpc":"2.0","method":"count","params":[1],"id":{id}}}"#)).await;
            assert_eq!(got, result("1", id), "{wire:?}");
            let got = conn.call(format!(r#"{{"jsonrpc":"1.0","method":"count","id":{id}}}"#)).await;
            assert_eq!(got, common::invalid_request_because(id, r#""jsonrpc" must be "2.0", got "1.0""#), "{wire:?}");
        }
    }
}
