//! Every example of section 7 of the JSON-RPC 2.0 specification, sent to
//! the calculator example's binary over stdio in both framings.
//!
//! The transcripts below are the specification's text. The server writes
//! compact JSON, so each expected response is the specification's with the
//! whitespace outside strings removed, and must match byte for byte: key
//! order, values, messages and ids as written. Where the specification
//! shows no response (notifications, the all-notification batch), the test
//! sends a following request and checks that its answer is the very next
//! thing on stdout. After every example, the same follow-up request proves
//! that nothing else was written.

use crate::common;

use common::{compact, Calculator, Wire};

/// One `-->` request and what `<--` shows for it (`None`: nothing).
#[derive(Debug)]
struct Exchange {
    request: String,
    response: Option<String>,
}

/// Reads a transcript in the specification's notation: `-->` starts a
/// request, `<--` a response, other lines continue the previous one; a
/// response that is a `//` comment means nothing is returned.
fn transcript(text: &str) -> Vec<Exchange> {
    enum Part {
        Request(String),
        Response(String),
    }
    let mut parts: Vec<Part> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("-->") {
            parts.push(Part::Request(rest.to_owned()));
        } else if let Some(rest) = line.trim_start().strip_prefix("<--") {
            parts.push(Part::Response(rest.to_owned()));
        } else if let Some(Part::Request(text) | Part::Response(text)) = parts.last_mut() {
            text.push('\n');
            text.push_str(line);
        }
    }
    let mut exchanges: Vec<Exchange> = Vec::new();
    for part in parts {
        match part {
            Part::Request(request) => exchanges.push(Exchange { request, response: None }),
            Part::Response(response) => {
                let last = exchanges.last_mut().expect("a response follows a request");
                assert!(last.response.is_none(), "two responses to one request");
                let response = response.trim();
                last.response = (!response.starts_with("//")).then(|| response.to_owned());
            }
        }
    }
    assert!(!exchanges.is_empty(), "empty transcript");
    exchanges
}

/// The follow-up request, and its answer; it is the specification's first
/// example.
const NEXT: &str = r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#;
const NEXT_ANSWER: &str = r#"{"jsonrpc":"2.0","result":19,"id":1}"#;

/// Plays `text` through a fresh calculator in each framing.
async fn check(text: &str) {
    let exchanges = transcript(text);
    for wire in Wire::BOTH {
        let mut calc = Calculator::spawn(wire);
        for Exchange { request, response } in &exchanges {
            calc.conn.send(request.trim()).await;
            if let Some(expected) = response {
                let got = calc.conn.recv().await;
                assert_eq!(got, compact(expected), "{wire:?}: answer to {request}");
            }
            let next = calc.conn.call(NEXT).await;
            assert_eq!(next, NEXT_ANSWER, "{wire:?}: after {request}, the next thing out must answer the next request");
        }
        let exit = calc.finish().await;
        assert!(exit.status.success(), "{wire:?}: exit status {:?}; stderr:\n{}", exit.status, exit.stderr);
        assert!(exit.rest.is_empty(), "{wire:?}: unexpected output {:?}", exit.rest);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_positional_parameters() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}
<-- {"jsonrpc": "2.0", "result": 19, "id": 1}

--> {"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}
<-- {"jsonrpc": "2.0", "result": -19, "id": 2}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_named_parameters() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}
<-- {"jsonrpc": "2.0", "result": 19, "id": 3}

--> {"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}
<-- {"jsonrpc": "2.0", "result": 19, "id": 4}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notification() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}
--> {"jsonrpc": "2.0", "method": "foobar"}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_of_non_existent_method() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": "foobar", "id": "1"}
<-- {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_invalid_json() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]
<-- {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_invalid_request_object() {
    check(
        r#"
--> {"jsonrpc": "2.0", "method": 1, "params": "bar"}
<-- {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_batch_invalid_json() {
    check(
        r#"
--> [
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]
<-- {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_an_empty_array() {
    check(
        r#"
--> []
<-- {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_an_invalid_batch_but_not_empty() {
    check(
        r#"
--> [1]
<-- [
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
]
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_with_invalid_batch() {
    check(
        r#"
--> [1,2,3]
<-- [
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
]
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_batch() {
    check(
        r#"
--> [
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"} 
    ]
<-- [
        {"jsonrpc": "2.0", "result": 7, "id": "1"},
        {"jsonrpc": "2.0", "result": 19, "id": "2"},
        {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}
    ]
"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_call_batch_all_notifications() {
    check(
        r#"
--> [
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]
<-- //Nothing is returned for all notification batches
"#,
    )
    .await;
}

/// The helpers themselves: a transcript with continuation lines and a
/// "nothing" response parses as the specification means it.
#[test]
fn transcript_notation_is_read_as_the_specification_means() {
    let got = transcript("--> [1,\n 2]\n<-- [\n  {\"a\": \"b c\"}\n]\n--> {}\n--> []\n<-- //nothing");
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].request.trim(), "[1,\n 2]");
    assert_eq!(compact(got[0].response.as_deref().unwrap()), r#"[{"a":"b c"}]"#);
    assert!(got[1].response.is_none());
    assert!(got[2].response.is_none());
}
