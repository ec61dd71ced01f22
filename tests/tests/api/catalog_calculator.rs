//! The calculator's OpenRPC document: snapshot, official meta-schema,
//! `rpc.discover` over the wire, and agreement between what the document
//! says the params may be and what the server accepts.
//!
//! Regenerate the snapshot with `UPDATE_SNAPSHOTS=1 cargo test -p tests --test integration catalog_calculator::`.

use crate::catalog_util;
use crate::client_support;

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use catalog_util::{assert_valid_openrpc, calculator, schema_verdicts};

fn catalog() -> Value {
    let out = calculator(&["--catalog"], b"");
    serde_json::from_slice(&out).expect("--catalog prints JSON")
}

#[test]
fn snapshot() {
    let out = String::from_utf8(calculator(&["--catalog"], b"")).expect("UTF-8");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join("calculator.openrpc.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &out).expect("the snapshot is written");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}; create it with UPDATE_SNAPSHOTS=1", path.display()));
    assert!(
        out == expected,
        "the calculator's catalog differs from {}; if the change is intended, run with UPDATE_SNAPSHOTS=1\n--- got ---\n{out}",
        path.display()
    );
}

#[test]
fn validates_against_the_official_meta_schema() {
    assert_valid_openrpc("calculator.openrpc.json", &catalog());
}

#[test]
fn rpc_discover_over_the_wire_returns_the_same_document() {
    let requests = concat!(
        r#"{"jsonrpc":"2.0","method":"rpc.discover","params":[],"id":1}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"rpc.discover","id":2}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"rpc.discover","params":[1],"id":3}"#,
        "\n",
    );
    let out = calculator(&[], requests.as_bytes());
    let responses: HashMap<i64, Value> = String::from_utf8(out)
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let response: Value = serde_json::from_str(line).expect("each line is a response");
            (response["id"].as_i64().expect("integer id"), response)
        })
        .collect();
    let expected = catalog();
    assert_eq!(responses[&1]["result"], expected);
    assert_eq!(responses[&2]["result"], expected);
    assert_eq!(responses[&3]["error"]["code"], -32602, "{}", responses[&3]);
}

/// Each method with params the server must accept (`true`) or reject
/// (`false`), by position and by name. The expectations only make the test
/// readable: what is compared is the schema's verdict against the server's.
fn cases() -> Vec<(&'static str, Option<Value>, bool)> {
    vec![
        ("subtract", Some(json!([42, 23])), true),
        ("subtract", Some(json!({"minuend": 42, "subtrahend": 23})), true),
        ("subtract", Some(json!({"subtrahend": 23, "minuend": 42})), true),
        ("subtract", Some(json!([42])), false),
        ("subtract", Some(json!([42, 23, 1])), false),
        ("subtract", Some(json!({"minuend": 42})), false),
        ("subtract", Some(json!({"minuend": 42, "subtrahend": 23, "extra": 1})), false),
        ("subtract", Some(json!({"Minuend": 42, "subtrahend": 23})), false),
        ("subtract", Some(json!(["42", 23])), false),
        ("subtract", Some(json!([1.5, 2])), false),
        ("subtract", Some(json!([null, 2])), false),
        ("subtract", Some(json!([])), false),
        ("subtract", None, false),
        ("sum", Some(json!([1, 2, 3])), true),
        ("sum", Some(json!([])), true),
        ("sum", Some(json!(["a"])), false),
        ("sum", Some(json!([1, null])), false),
        ("sum", Some(json!([[1]])), false),
        ("sum", Some(json!({"numbers": [1]})), false),
        ("sum", None, false),
        ("update", Some(json!([1, "a", null, {}])), true),
        ("update", Some(json!([])), true),
        ("update", Some(json!({"values": [1]})), false),
        ("update", None, false),
        ("notify_hello", Some(json!([5])), true),
        ("notify_hello", Some(json!({"value": 5})), true),
        ("notify_hello", Some(json!(["5"])), false),
        ("notify_hello", Some(json!([])), false),
        ("notify_hello", Some(json!([5, 6])), false),
        ("notify_hello", Some(json!({"value": 5, "x": 1})), false),
        ("notify_sum", Some(json!([1, 2])), true),
        ("notify_sum", Some(json!(["x"])), false),
        ("notify_sum", Some(json!({"numbers": [1]})), false),
        ("get_data", None, true),
        ("get_data", Some(json!([])), true),
        ("get_data", Some(json!({})), true),
        ("get_data", Some(json!([1])), false),
        ("get_data", Some(json!({"x": 1})), false),
        ("echo", Some(json!([{"a": [1]}])), true),
        ("echo", Some(json!({"value": null})), true),
        ("echo", Some(json!([null])), true),
        ("echo", Some(json!([])), false),
        ("echo", Some(json!([1, 2])), false),
        ("echo", Some(json!({"val": 1})), false),
        ("echo", None, false),
        ("greet", Some(json!(["Ann"])), true),
        ("greet", Some(json!(["Ann", "Hi"])), true),
        ("greet", Some(json!(["Ann", null])), true),
        ("greet", Some(json!({"name": "Ann"})), true),
        ("greet", Some(json!({"name": "Ann", "greeting": "Hi"})), true),
        ("greet", Some(json!({"name": "Ann", "greeting": null})), true),
        ("greet", Some(json!({"greeting": "Hi"})), false),
        ("greet", Some(json!({"name": null})), false),
        ("greet", Some(json!({"name": "Ann", "Greeting": "x"})), false),
        ("greet", Some(json!([])), false),
        ("greet", Some(json!([1])), false),
        ("greet", Some(json!(["Ann", 2])), false),
        ("greet", Some(json!(["Ann", "Hi", "x"])), false),
        ("fail", Some(json!([-32000, "boom"])), true),
        ("fail", Some(json!([-32000, "boom", {"x": 1}])), true),
        ("fail", Some(json!([-32000, "boom", null])), true),
        ("fail", Some(json!({"code": 1, "message": "m", "data": [1]})), true),
        ("fail", Some(json!({"code": 1, "message": "m"})), true),
        ("fail", Some(json!(["x", "m"])), false),
        ("fail", Some(json!([1])), false),
        ("fail", Some(json!({"code": 1, "message": 2})), false),
        ("fail", Some(json!([1, "m", null, 4])), false),
        ("panic", None, true),
        ("panic", Some(json!([])), true),
        ("panic", Some(json!([1])), false),
        ("panic", Some(json!({"a": 1})), false),
        ("sleep", Some(json!([0])), true),
        ("sleep", Some(json!({"ms": 1})), true),
        ("sleep", Some(json!([-1])), false),
        ("sleep", Some(json!(["1"])), false),
        ("sleep", Some(json!([1.5])), false),
        ("sleep", None, false),
        // The callbacks go to this test, which never answers: the call fails
        // when input ends, with an error other than -32602.
        ("ask_client", Some(json!(["ping"])), true),
        ("ask_client", Some(json!({"method": "ping", "params": [1]})), true),
        ("ask_client", Some(json!({"method": "ping", "params": 1})), false),
        ("ask_client", Some(json!([])), false),
        ("ask_client", Some(json!([1])), false),
        ("notify_client", Some(json!(["note", {"a": 1}])), true),
        ("notify_client", Some(json!({"method": "note"})), true),
        ("notify_client", Some(json!({"params": []})), false),
        ("notify_client", Some(json!(["note", [], 3])), false),
        ("divide", Some(json!([7, 2])), true),
        ("divide", Some(json!({"dividend": 7, "divisor": 0})), true),
        ("divide", Some(json!([-9223372036854775808_i64, -1])), true),
        ("divide", Some(json!([7])), false),
        ("divide", Some(json!({"dividend": 7, "divisr": 2})), false),
        // Answered with a subscription id; its items are notifications,
        // which this test skips.
        ("ticks", Some(json!([2, 0])), true),
        ("ticks", Some(json!({"count": 1, "interval_ms": 0})), true),
        ("ticks", Some(json!([1])), false),
        ("ticks", Some(json!(["x", 0])), false),
        ("ticks", Some(json!({"count": 1, "interval": 0})), false),
        ("unsubscribe_ticks", Some(json!([1])), true),
        ("unsubscribe_ticks", Some(json!({"subscription": 99})), true),
        ("unsubscribe_ticks", Some(json!([])), false),
        ("unsubscribe_ticks", Some(json!(["1"])), false),
        ("unsubscribe_ticks", Some(json!([-1])), false),
        ("unsubscribe_ticks", Some(json!({"id": 1})), false),
        ("wait", Some(json!([0])), true),
        ("wait", Some(json!({"ms": 1})), true),
        ("wait", Some(json!([-1])), false),
        ("wait", None, false),
        ("waiting", None, true),
        ("waiting", Some(json!([])), true),
        ("waiting", Some(json!([1])), false),
    ]
}

#[test]
fn schema_and_server_agree_on_params() {
    let cases = cases();
    let doc = catalog();

    // Every method of the document is exercised, with params accepted and rejected.
    for method in doc["methods"].as_array().expect("methods") {
        let name = method["name"].as_str().expect("name");
        for expected in [true, false] {
            assert!(
                cases.iter().any(|(m, _, e)| *m == name && *e == expected),
                "no case where `{name}` should be {}",
                if expected { "accepted" } else { "rejected" }
            );
        }
    }

    let mut requests = String::new();
    for (id, (method, params, _)) in cases.iter().enumerate() {
        let mut request = json!({"jsonrpc": "2.0", "method": method, "id": id});
        if let Some(params) = params {
            request["params"] = params.clone();
        }
        requests.push_str(&request.to_string());
        requests.push('\n');
    }
    let out = calculator(&[], requests.as_bytes());
    let mut server = vec![None; cases.len()];
    for line in String::from_utf8(out).expect("UTF-8").lines() {
        let response: Value = serde_json::from_str(line).expect("each line is JSON");
        if response.get("method").is_some() {
            continue; // a callback from `ask_client` or `notify_client`
        }
        let id = response["id"].as_u64().expect("integer id") as usize;
        // Accepted: anything but "invalid params" (`fail` always answers
        // with the error it is given, `panic` with -32603).
        server[id] = Some(response["error"]["code"] != -32602);
    }

    let plain: Vec<(&str, Option<Value>)> = cases.iter().map(|(m, p, _)| (*m, p.clone())).collect();
    // Without Node.js only the server's side is checked (and the skip said).
    let schema = schema_verdicts("calculator", &doc, &plain);

    let mut problems = Vec::new();
    for (i, (method, params, expected)) in cases.iter().enumerate() {
        let server = server[i].unwrap_or_else(|| panic!("no response to case {i}"));
        let params = params.as_ref().map_or("(none)".to_owned(), Value::to_string);
        if let Some(schema) = schema.as_ref().filter(|schema| schema[i] != server) {
            problems.push(format!("{method} {params}: server accepts: {server}, schema accepts: {}", schema[i]));
        }
        if server != *expected {
            problems.push(format!("{method} {params}: server accepts: {server}, the test expects {expected}"));
        }
    }
    assert!(problems.is_empty(), "schema and server disagree:\n{}", problems.join("\n"));
}

/// Every `format` in `value`, with where it is.
fn formats(value: &Value, pointer: &str, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                if let (true, Some(format)) = (key == "format", member.as_str()) {
                    found.push((pointer.to_owned(), format.to_owned()));
                }
                formats(member, &format!("{pointer}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                formats(item, &format!("{pointer}/{index}"), found);
            }
        }
        _ => {}
    }
}

/// Clients that validate params with ajv before sending (the OpenRPC
/// generator's) refuse a schema with a `format` JSON Schema does not define
/// (`int64`): none is left, and the integer ranges stay as bounds.
#[test]
fn no_format_outside_json_schema_and_integer_ranges_stay() {
    let doc = catalog();
    let mut found = Vec::new();
    formats(&doc, "", &mut found);
    assert!(found.is_empty(), "non-standard formats: {found:?}");
    let subtract = doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == "subtract").unwrap();
    assert_eq!(
        subtract["params"][0]["schema"],
        json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}),
        "{subtract}"
    );
    let sleep = doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == "sleep").unwrap();
    assert_eq!(sleep["params"][0]["schema"], json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}), "{sleep}");
    let sum = doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == "sum").unwrap();
    assert!(sum["x-params-note"].as_str().unwrap().contains("OpenRPC 1.3"), "{sum}");
}

/// The official OpenRPC generator (`@open-rpc/generator`, pinned in
/// `tests/js/openrpc-client/generator`) writes a TypeScript client from
/// `--catalog`; `tests/js/openrpc-client/run.js` compiles it and calls
/// every method the calculator answers over HTTP through the generated
/// class (working around the generator's own bugs, which it lists). Needs
/// `node` and `npm` (skipped without them unless `RPC_REQUIRE_INTEROP=1`).
#[test]
fn the_openrpc_generators_typescript_client_calls_the_calculator_over_http() {
    let test = "the_openrpc_generators_typescript_client_calls_the_calculator_over_http";
    if !tests::interop::require(&["node", "npm"], test) {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("js").join("openrpc-client");
    tests::interop::npm_ci(&dir.join("generator"));
    tests::interop::npm_ci(&dir);
    let checks = [
        "ok the generated client compiles (strict)",
        "ok calls with integer params pass the client's own ajv check and are answered",
        "ok errors arrive with their code, message and data",
        "ok invalid params are refused by the generated client's validator",
        "ok a notification is sent as one (no answer awaited)",
        "ok a batch through startBatch/stopBatch",
        "ok sum (whole_params list): the generated method is refused as documented, client.rpc.request works",
    ];
    let args = [client_support::calculator()];
    tests::interop::node_checks(&dir, "run.js", &args, &checks, "all checks passed");
}
