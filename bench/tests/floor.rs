//! The hand-written floor answers what ours answers: byte for byte for
//! every case the benchmarks time where the answer is fixed by the
//! protocol (results, unknown method), and the same error code per id where
//! only the error's wording is ours to choose (invalid params, and the
//! edge cases below). `cargo test --release` from `bench/`.

use rpc_bench::{cases, handwritten, ours};
use rpc_runtime::Context;

fn answers(message: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let engine = ours::engine();
    let mut from_ours = Vec::new();
    ours::call(&engine, &Context::default(), message, &mut from_ours);
    let mut from_handwritten = Vec::new();
    handwritten::handle(message, &mut from_handwritten);
    (from_ours, from_handwritten)
}

#[test]
fn every_benchmark_case_is_answered_like_ours() {
    for case in cases::all() {
        let (from_ours, from_handwritten) = answers(case.message.as_bytes());
        if case.name == "invalid_params" {
            assert_eq!(cases::meaning(&from_ours), cases::meaning(&from_handwritten), "{}", case.name);
        } else {
            assert_eq!(
                String::from_utf8_lossy(&from_ours),
                String::from_utf8_lossy(&from_handwritten),
                "{}",
                case.name
            );
        }
    }
}

#[test]
fn the_load_benchmark_request_is_answered_like_ours() {
    let (from_ours, from_handwritten) = answers(br#"{"jsonrpc":"2.0","method":"add","params":[123456,1],"id":123456}"#);
    assert_eq!(String::from_utf8_lossy(&from_ours), String::from_utf8_lossy(&from_handwritten));
}

#[test]
fn edge_cases_get_the_same_error_codes_and_ids_as_ours() {
    let messages: &[&str] = &[
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":null}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"abc"}"#,
        r#"{"jsonrpc":"2.0","method":"version","params":[],"id":2}"#,
        r#"{"jsonrpc":"2.0","method":"echo","params":{"record":5},"id":3}"#,
        r#"{"jsonrpc":"1.0","method":"add","params":[1,2],"id":4}"#,
        r#"{"jsonrpc":"2.0","params":[1,2],"id":5}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":6"#,
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":7} x"#,
        r#"{"jsonrpc":"2.0","method":"ad\u0064","params":[1,2],"id":10}"#,
        r#"[]"#,
        r#"[1]"#,
        r#"[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":8},{"jsonrpc":"2.0","method":"add","params":[1,2]}]"#,
        r#"[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":9},"#,
        "\"\u{e9}\"",
    ];
    for message in messages {
        let (from_ours, from_handwritten) = answers(message.as_bytes());
        assert_eq!(cases::meaning(&from_ours), cases::meaning(&from_handwritten), "{message}");
    }
}

#[test]
fn notifications_are_not_answered() {
    for message in [
        r#"{"jsonrpc":"2.0","method":"add","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"nope","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"add","params":["x",2]}"#,
        r#"[{"jsonrpc":"2.0","method":"add","params":[1,2]}]"#,
    ] {
        let (from_ours, from_handwritten) = answers(message.as_bytes());
        assert!(from_ours.is_empty(), "ours answered {message}");
        assert!(from_handwritten.is_empty(), "handwritten answered {message}");
    }
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let (from_ours, from_handwritten) = answers(b"{\"jsonrpc\":\"2.0\",\"method\":\"add\xff\",\"id\":1}");
    assert_eq!(cases::meaning(&from_ours), cases::meaning(&from_handwritten));
}
