//! MCP's rules, byte for byte over stdio: the calculator example with
//! `--mcp` as a subprocess (ids, lifecycle, version negotiation,
//! cancellation, end of input), and a service of the test's own served
//! in-process (tools, schemas per revision, arguments, progress, pages).

use crate::client_support;
use crate::common;

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{Conn, Wire, HANG_GUARD};
use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{mcp::McpServer, rpc, Context, ErrorObject};
use serde_json::{json, Value};
use tokio::process::{Child, Command};

/// The calculator as an MCP server, over its stdio.
struct Calculator {
    conn: Conn,
    child: Child,
}

impl Calculator {
    fn spawn() -> Self {
        Self::spawn_example("calculator", &["--mcp"])
    }

    /// Example `name` with `args`, an MCP server over its stdio.
    fn spawn_example(name: &str, args: &[&str]) -> Self {
        let mut child = Command::new(client_support::example(name))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("RPC_LOG")
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the calculator");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        Calculator { conn: Conn::new(stdout, stdin, Wire::Ndjson), child }
    }

    /// Closes stdin; returns what is still written and the exit status.
    async fn finish(mut self) -> (Vec<Value>, std::process::ExitStatus) {
        self.conn.close().await;
        let rest = self.conn.rest().await.iter().map(|line| parse(line)).collect();
        let status = tokio::time::timeout(HANG_GUARD, self.child.wait()).await.expect("exits").expect("wait");
        (rest, status)
    }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

async fn call(conn: &mut Conn, message: Value) -> Value {
    parse(&conn.call(message.to_string()).await)
}

async fn send(conn: &mut Conn, message: Value) {
    conn.send(message.to_string()).await;
}

fn initialize(version: &str, id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
}

/// The `_meta` of a modern (2026-07-28) request.
fn modern_meta(version: &str) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}})
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}

async fn initialized_calculator(version: &str) -> Calculator {
    let mut calculator = Calculator::spawn();
    let answer = call(&mut calculator.conn, initialize(version, 0)).await;
    assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    send(&mut calculator.conn, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    calculator
}

#[tokio::test]
async fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let mut calculator = Calculator::spawn();
    let conn = &mut calculator.conn;
    let answer = call(conn, request(json!(1), "tools/list", json!({}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("send `initialize` first"), "{answer}");
    let answer = call(conn, request(json!(2), "tools/call", json!({"name": "subtract"}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    let answer = call(conn, request(json!(3), "ping", json!({}))).await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "result": {}, "id": 3}));
    let answer = call(conn, request(json!(4), "roots/list", json!({}))).await;
    assert_eq!(error_code(&answer), -32601, "{answer}");
    let (rest, status) = calculator.finish().await;
    assert!(rest.is_empty() && status.success(), "{rest:?} {status}");
}

#[tokio::test]
async fn initialize_negotiates_a_revision_once() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut calculator = Calculator::spawn();
        let answer = call(&mut calculator.conn, initialize(asked, 1)).await;
        let result = &answer["result"];
        assert_eq!(result["protocolVersion"], answered, "asked {asked}: {answer}");
        assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}}), "{answer}");
        assert_eq!(result["serverInfo"]["name"], "calculator", "{answer}");
        assert!(result.get("resultType").is_none(), "handshake results have no resultType: {answer}");
        // Once only.
        let again = call(&mut calculator.conn, initialize(asked, 2)).await;
        assert_eq!(error_code(&again), -32600, "{again}");
        // Served from the answer on, even before notifications/initialized.
        let listed = call(&mut calculator.conn, request(json!(3), "tools/list", json!({}))).await;
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
    let mut calculator = Calculator::spawn();
    let answer = call(
        &mut calculator.conn,
        request(json!(1), "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}})),
    )
    .await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("clientInfo"), "{answer}");
}

#[tokio::test]
async fn null_and_fractional_ids_are_refused_and_not_executed() {
    let mut calculator = initialized_calculator("2025-11-25").await;
    let conn = &mut calculator.conn;
    // Executed, `notify_client` would send us a notification first.
    let params = json!({"name": "notify_client", "arguments": {"method": "executed"}});
    let answer = call(conn, request(Value::Null, "tools/call", params.clone())).await;
    assert_eq!(error_code(&answer), -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    let answer = call(conn, request(json!(1.5), "tools/call", params.clone())).await;
    assert_eq!(error_code(&answer), -32600, "{answer}");
    assert_eq!(answer["id"], json!(1.5), "{answer}");
    // A string or integer id is fine: the notification, then the answer.
    let notification = call(conn, request(json!("s"), "tools/call", params)).await;
    assert_eq!(notification["method"], "executed", "{notification}");
    let answer = parse(&conn.recv().await);
    assert_eq!(answer["id"], "s", "{answer}");
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    let (rest, status) = calculator.finish().await;
    assert!(rest.is_empty() && status.success(), "{rest:?} {status}");
}

#[tokio::test]
async fn batches_only_where_the_revision_has_them() {
    let batch = json!([request(json!(1), "ping", json!({})), request(json!(2), "tools/list", json!({}))]);
    // Before initialize, and on revisions without batches: one -32600.
    let mut calculator = Calculator::spawn();
    let answer = call(&mut calculator.conn, batch.clone()).await;
    assert_eq!(error_code(&answer), -32600, "{answer}");
    for version in ["2025-06-18", "2025-11-25"] {
        let mut calculator = initialized_calculator(version).await;
        let answer = call(&mut calculator.conn, batch.clone()).await;
        assert_eq!(error_code(&answer), -32600, "{version}: {answer}");
        assert_eq!(answer["id"], Value::Null);
        assert!(answer["error"]["message"].as_str().unwrap().contains(version), "{answer}");
    }
    for version in ["2024-11-05", "2025-03-26"] {
        let mut calculator = initialized_calculator(version).await;
        let answer = call(&mut calculator.conn, batch.clone()).await;
        let answers = answer.as_array().unwrap_or_else(|| panic!("{version}: a batch answer: {answer}"));
        assert_eq!(answers.len(), 2, "{answer}");
    }
}

#[tokio::test]
async fn the_modern_revision_needs_no_handshake() {
    let mut calculator = Calculator::spawn();
    let conn = &mut calculator.conn;
    let meta = modern_meta("2026-07-28");
    let answer = call(conn, request(json!(1), "server/discover", json!({"_meta": meta}))).await;
    let result = &answer["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]), "{answer}");
    assert_eq!(result["resultType"], "complete", "{answer}");
    assert_eq!(result["capabilities"]["tools"], json!({}), "{answer}");
    assert_eq!(result["ttlMs"], 0, "{answer}");
    assert_eq!(result["cacheScope"], "private", "{answer}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "calculator", "{answer}");

    let call_params = json!({"name": "subtract", "arguments": {"minuend": 42, "subtrahend": 23}, "_meta": meta});
    let answer = call(conn, request(json!(2), "tools/call", call_params)).await;
    assert_eq!(answer["result"]["structuredContent"], 19, "{answer}");
    assert_eq!(answer["result"]["content"], json!([{"type": "text", "text": "19"}]), "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    let answer = call(conn, request(json!(3), "tools/list", json!({"_meta": meta}))).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(answer["result"]["tools"].as_array().is_some_and(|tools| !tools.is_empty()), "{answer}");

    // The modern revision has no ping and no batches.
    let answer = call(conn, request(json!(4), "ping", json!({"_meta": meta}))).await;
    assert_eq!(error_code(&answer), -32601, "{answer}");
    let answer = call(conn, json!([request(json!(5), "tools/list", json!({"_meta": meta}))])).await;
    assert_eq!(error_code(&answer), -32600, "{answer}");
}

#[tokio::test]
async fn modern_requests_are_checked_as_2026_07_28_says() {
    let mut calculator = Calculator::spawn();
    let conn = &mut calculator.conn;
    // No _meta: malformed.
    let answer = call(conn, request(json!(1), "server/discover", json!({}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    // A required key missing: named.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let answer = call(conn, request(json!(2), "server/discover", json!({"_meta": meta}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("clientCapabilities"), "{answer}");
    // Not a string.
    let mut meta = modern_meta("x");
    meta["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
    let answer = call(conn, request(json!(3), "tools/list", json!({"_meta": meta}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    // A revision this server does not speak, or a handshake one: -32022
    // with the supported ones and the requested one.
    for version in ["2099-01-01", "2025-11-25"] {
        let answer = call(conn, request(json!(4), "server/discover", json!({"_meta": modern_meta(version)}))).await;
        assert_eq!(error_code(&answer), -32022, "{answer}");
        assert_eq!(answer["error"]["data"], json!({"supported": ["2026-07-28"], "requested": version}), "{answer}");
    }
}

#[tokio::test]
async fn initialize_works_after_a_discover_probe_either_way() {
    for meta in [modern_meta("2026-07-28"), modern_meta("2099-01-01")] {
        let mut calculator = Calculator::spawn();
        let probe = call(&mut calculator.conn, request(json!(1), "server/discover", json!({"_meta": meta}))).await;
        assert!(probe.get("result").is_some() || probe.get("error").is_some(), "{probe}");
        let answer = call(&mut calculator.conn, initialize("2025-06-18", 2)).await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
        let listed = call(&mut calculator.conn, request(json!(3), "tools/list", json!({}))).await;
        assert!(listed["result"]["tools"].is_array(), "{listed}");
        // Both eras on one connection: a modern request is still served.
        let params = json!({"_meta": modern_meta("2026-07-28")});
        let listed = call(&mut calculator.conn, request(json!(4), "tools/list", params)).await;
        assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    }
}

#[tokio::test]
async fn a_cancelled_call_is_stopped_and_not_answered() {
    let mut calculator = initialized_calculator("2025-11-25").await;
    let conn = &mut calculator.conn;
    send(conn, request(json!("slow"), "tools/call", json!({"name": "sleep", "arguments": {"ms": 60000}}))).await;
    send(
        conn,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow", "reason": "test"}}),
    )
    .await;
    let answer = call(conn, request(json!(2), "ping", json!({}))).await;
    assert_eq!(answer["id"], 2, "only the ping is answered: {answer}");
    // The sleep was stopped (no 60 s wait at the end of input) and never answered.
    let started = std::time::Instant::now();
    let (rest, status) = calculator.finish().await;
    assert!(rest.is_empty(), "a cancelled call is not answered: {rest:?}");
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(30), "the cancelled call kept running");
}

#[tokio::test]
async fn end_of_input_lets_running_calls_finish_then_exits_zero() {
    let mut calculator = initialized_calculator("2025-11-25").await;
    send(&mut calculator.conn, request(json!(7), "tools/call", json!({"name": "sleep", "arguments": {"ms": 200}})))
        .await;
    let (rest, status) = calculator.finish().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 7);
    assert_eq!(rest[0]["result"]["structuredContent"], json!({"result": 200}), "{rest:?}");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn end_of_input_ends_an_open_listen_and_the_server_exits_zero() {
    // A 2026-07-28 client (the Inspector's CLI) opens `subscriptions/listen`,
    // asks one thing and closes stdin: the listen, which would run for
    // ever, ends with its final result, and the server exits.
    let mut calculator = Calculator::spawn();
    let meta = modern_meta("2026-07-28");
    let listen = json!({"notifications": {"toolsListChanged": true}, "_meta": meta});
    send(&mut calculator.conn, request(json!("listen-1"), "subscriptions/listen", listen)).await;
    let ack = parse(&calculator.conn.recv().await);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    let (rest, status) = calculator.finish().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], "listen-1", "{rest:?}");
    assert_eq!(rest[0]["result"]["resultType"], "complete", "{rest:?}");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn invalid_arguments_follow_the_revision() {
    let bad = json!({"name": "subtract", "arguments": {"minuend": 1, "subtrahend": "two"}});
    // Before 2025-11-25: a protocol error.
    let mut calculator = initialized_calculator("2025-06-18").await;
    let answer = call(&mut calculator.conn, request(json!(1), "tools/call", bad.clone())).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    // From 2025-11-25: a result the model can read, naming the parameter.
    let mut calculator = initialized_calculator("2025-11-25").await;
    let answer = call(&mut calculator.conn, request(json!(1), "tools/call", bad)).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("subtrahend") && text.contains("-32602"), "{text}");
    // Arguments that are not an object, and a missing name: protocol errors.
    for params in [json!({"name": "subtract", "arguments": [1, 2]}), json!({"arguments": {}})] {
        let answer = call(&mut calculator.conn, request(json!(2), "tools/call", params)).await;
        assert_eq!(error_code(&answer), -32602, "{answer}");
    }
}

// --- a service of our own, in-process ---

/// A point.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Point {
    /// Across.
    pub x: i64,
    /// Down.
    pub y: i64,
}

/// A shape service.
#[rpc]
pub trait Shapes {
    /// Moves a point.
    #[rpc(mcp(title = "Move", read_only, idempotent, open_world = false, destructive = false))]
    fn shift(&self, point: Point, by: i64) -> Point;

    /// Takes its params by position only.
    #[rpc(param_structure = "by-position")]
    fn pair(&self, first: String, second: Option<String>) -> String;

    /// Takes a whole point as its params.
    #[rpc(whole_params)]
    fn norm(&self, point: Point) -> i64;

    /// Not a tool.
    #[rpc(mcp(hidden))]
    fn secret(&self) -> u8;

    /// Renamed; the old name is not a tool.
    #[rpc(alias = "old_area")]
    fn area(&self, width: u32, height: u32) -> u64;

    /// Not a tool either: a notification.
    #[rpc(notification)]
    fn poke(&self);

    /// Counts to `to`, reporting progress, until cancelled.
    async fn count(&self, to: u32, cx: Context) -> u32;

    /// Always panics.
    fn crash(&self);

    /// Fails with data.
    fn refuse(&self) -> Result<(), ErrorObject>;

    /// Does something and returns nothing.
    fn touch(&self);

    /// Scales a point; a dotted wire name, so its tool is renamed.
    #[rpc(name = "shapes.scale", mcp(name = "scale_point"))]
    fn scale(&self, point: Point, factor: i64) -> Point;
}

#[derive(Default)]
struct ShapesImpl {
    cancelled: Arc<AtomicBool>,
}

impl Shapes for ShapesImpl {
    fn shift(&self, point: Point, by: i64) -> Point {
        Point { x: point.x + by, y: point.y + by }
    }
    fn pair(&self, first: String, second: Option<String>) -> String {
        format!("{first}+{}", second.unwrap_or_default())
    }
    fn norm(&self, point: Point) -> i64 {
        point.x.abs() + point.y.abs()
    }
    fn secret(&self) -> u8 {
        42
    }
    fn area(&self, width: u32, height: u32) -> u64 {
        u64::from(width) * u64::from(height)
    }
    fn poke(&self) {}
    async fn count(&self, to: u32, cx: Context) -> u32 {
        for n in 1..=to {
            cx.report_progress(f64::from(n), Some(f64::from(to)), None).await;
            tokio::select! {
                () = cx.cancelled() => {
                    self.cancelled.store(true, Ordering::SeqCst);
                    return n;
                }
                () = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
        }
        // Not larger than the last one: not sent.
        assert!(!cx.report_progress(f64::from(to), None, None).await);
        to
    }
    fn crash(&self) {
        panic!("crash");
    }
    fn scale(&self, point: Point, factor: i64) -> Point {
        Point { x: point.x * factor, y: point.y * factor }
    }

    fn refuse(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(-31999, "refused").with_data(&json!({"why": "test"})))
    }

    fn touch(&self) {}
}

fn shapes(page_size: usize) -> (Conn, Arc<AtomicBool>) {
    let service = ShapesImpl::default();
    let cancelled = Arc::clone(&service.cancelled);
    let server = McpServer::new(service.into_rpc()).name("shapes").page_size(page_size).into_server();
    let (conn, _task) = common::serve_in_process(server, Wire::Ndjson);
    (conn, cancelled)
}

async fn shapes_session(version: &str, page_size: usize) -> (Conn, Arc<AtomicBool>) {
    let (mut conn, cancelled) = shapes(page_size);
    let answer = call(&mut conn, initialize(version, 0)).await;
    assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    (conn, cancelled)
}

/// Every tool, following the cursors.
async fn all_tools(conn: &mut Conn, meta: Option<Value>) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut cursor = Value::Null;
    for id in 1.. {
        let mut params = json!({});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        let answer = call(conn, request(json!(id), "tools/list", params)).await;
        tools.extend(answer["result"]["tools"].as_array().unwrap_or_else(|| panic!("{answer}")).iter().cloned());
        cursor = answer["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    tools
}

fn tool<'t>(tools: &'t [Value], name: &str) -> &'t Value {
    tools.iter().find(|tool| tool["name"] == name).unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn a_tool_that_returns_nothing_answers_with_no_content_in_every_era() {
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (mut conn, _) = shapes_session(version, 100).await;
        let answer = call(&mut conn, request(json!(1), "tools/call", json!({"name": "touch"}))).await;
        // Not the text "null": an empty list, and nothing structured.
        assert_eq!(answer["result"], json!({"content": []}), "{version}: {answer}");
    }
    let (mut conn, _) = shapes(100);
    let params = json!({"name": "touch", "arguments": {}, "_meta": modern_meta("2026-07-28")});
    let answer = call(&mut conn, request(json!(1), "tools/call", params)).await;
    assert_eq!(answer["result"]["content"], json!([]), "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(answer["result"].get("structuredContent").is_none(), "{answer}");
}

#[tokio::test]
async fn tools_are_the_methods_page_by_page() {
    let (mut conn, _) = shapes_session("2025-11-25", 2).await;
    let answer = call(&mut conn, request(json!(1), "tools/list", json!({}))).await;
    assert_eq!(answer["result"]["tools"].as_array().unwrap().len(), 2, "{answer}");
    assert!(answer["result"]["nextCursor"].is_string(), "{answer}");
    let tools = all_tools(&mut conn, None).await;
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shift", "pair", "norm", "area", "count", "crash", "refuse", "touch", "scale_point"]);
    let answer = call(&mut conn, request(json!(9), "tools/list", json!({"cursor": "bogus"}))).await;
    assert_eq!(error_code(&answer), -32602, "{answer}");
    for hidden in ["secret", "old_area", "poke", "shapes.scale"] {
        let answer = call(&mut conn, request(json!(10), "tools/call", json!({"name": hidden}))).await;
        assert_eq!(error_code(&answer), -32602, "{hidden}: {answer}");
    }
}

#[tokio::test]
async fn tool_descriptions_follow_the_revision() {
    let (mut conn, _) = shapes_session("2024-11-05", 100).await;
    let shift = tool(&all_tools(&mut conn, None).await, "shift").clone();
    assert_eq!(shift["description"], "Moves a point.");
    for absent in ["title", "annotations", "outputSchema"] {
        assert!(shift.get(absent).is_none(), "2024-11-05 has no {absent}: {shift}");
    }
    let answer = call(
        &mut conn,
        request(json!(5), "tools/call", json!({"name": "shift", "arguments": {"point": {"x": 1, "y": 2}, "by": 1}})),
    )
    .await;
    assert!(answer["result"].get("structuredContent").is_none(), "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], r#"{"x":2,"y":3}"#, "{answer}");

    let (mut conn, _) = shapes_session("2025-03-26", 100).await;
    let shift = tool(&all_tools(&mut conn, None).await, "shift").clone();
    assert_eq!(
        shift["annotations"],
        json!({"title": "Move", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false, "destructiveHint": false})
    );
    assert!(shift.get("title").is_none() && shift.get("outputSchema").is_none(), "{shift}");

    let (mut conn, _) = shapes_session("2025-06-18", 100).await;
    let tools = all_tools(&mut conn, None).await;
    let shift = tool(&tools, "shift");
    assert_eq!(shift["title"], "Move");
    // An object result: its schema as it is, the named type inlined at the root.
    assert_eq!(shift["outputSchema"]["type"], "object", "{shift}");
    assert_eq!(shift["outputSchema"]["required"], json!(["x", "y"]), "{shift}");
    // The input schema is self-contained: `Point` under its own `$defs`.
    let input = &shift["inputSchema"];
    assert_eq!(input["properties"]["point"]["$ref"], "#/$defs/Point", "{input}");
    assert_eq!(input["$defs"]["Point"]["type"], "object", "{input}");
    assert_eq!(input["additionalProperties"], json!({"not": {}}));
    // A number result, wrapped, and said so.
    let area = tool(&tools, "area");
    assert_eq!(area["outputSchema"]["properties"]["result"]["type"], "integer", "{area}");
    assert!(area["outputSchema"]["description"].as_str().unwrap().contains("`result`"), "{area}");
    // No result to structure.
    assert!(tool(&tools, "crash").get("outputSchema").is_none());
    // A whole-params struct: its own schema is the input schema.
    assert_eq!(tool(&tools, "norm")["inputSchema"]["required"], json!(["x", "y"]));
}

#[tokio::test]
async fn arguments_become_params_of_every_shape() {
    let (mut conn, _) = shapes_session("2025-11-25", 100).await;
    let cases = [
        (json!({"name": "pair", "arguments": {"first": "a", "second": "b"}}), json!({"result": "a+b"})),
        (json!({"name": "pair", "arguments": {"first": "a"}}), json!({"result": "a+"})),
        (json!({"name": "norm", "arguments": {"x": -3, "y": 4}}), json!({"result": 7})),
        (json!({"name": "area", "arguments": {"width": 3, "height": 4}}), json!({"result": 12})),
        (json!({"name": "shift", "arguments": {"point": {"x": 1, "y": 2}, "by": 1}}), json!({"x": 2, "y": 3})),
    ];
    for (params, structured) in cases {
        let answer = call(&mut conn, request(json!(1), "tools/call", params.clone())).await;
        assert_eq!(answer["result"]["structuredContent"], structured, "{params}: {answer}");
    }
    for params in [
        json!({"name": "pair", "arguments": {"second": "b"}}),
        json!({"name": "pair", "arguments": {"first": "a", "third": "c"}}),
        json!({"name": "norm", "arguments": {"x": 1}}),
        json!({"name": "area", "arguments": {"width": -1, "height": 1}}),
    ] {
        let answer = call(&mut conn, request(json!(2), "tools/call", params.clone())).await;
        assert_eq!(answer["result"]["isError"], true, "{params}: {answer}");
    }
    // The method's own error, with its data, for the model.
    let answer = call(&mut conn, request(json!(3), "tools/call", json!({"name": "refuse"}))).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], r#"refused (error -31999): {"why":"test"}"#);
    // A panic is an internal error: a protocol error.
    let answer = call(&mut conn, request(json!(4), "tools/call", json!({"name": "crash"}))).await;
    assert_eq!(error_code(&answer), -32603, "{answer}");
}

#[tokio::test]
async fn progress_goes_to_the_caller_that_asked_for_it() {
    for modern in [false, true] {
        let (mut conn, _) = if modern { shapes(100) } else { shapes_session("2025-11-25", 100).await };
        let mut meta = if modern { modern_meta("2026-07-28") } else { json!({}) };
        meta["progressToken"] = json!("tok");
        send(
            &mut conn,
            request(json!(1), "tools/call", json!({"name": "count", "arguments": {"to": 3}, "_meta": meta})),
        )
        .await;
        let mut progress = Vec::new();
        let answer = loop {
            let message = parse(&conn.recv().await);
            if message["method"] == "notifications/progress" {
                assert_eq!(message["params"]["progressToken"], "tok", "{message}");
                assert_eq!(message["params"]["total"].as_f64(), Some(3.0), "{message}");
                progress.push(message["params"]["progress"].as_f64().unwrap());
            } else {
                break message;
            }
        };
        assert_eq!(progress, [1.0, 2.0, 3.0]);
        assert_eq!(answer["id"], 1, "{answer}");
        // Without a token: no notifications, just the answer.
        let mut params = json!({"name": "count", "arguments": {"to": 2}});
        if modern {
            params["_meta"] = modern_meta("2026-07-28");
        }
        let answer = call(&mut conn, request(json!(2), "tools/call", params)).await;
        assert_eq!(answer["id"], 2, "{answer}");
    }
}

#[tokio::test]
async fn cancellation_reaches_the_handler() {
    let (mut conn, cancelled) = shapes_session("2025-11-25", 100).await;
    send(&mut conn, request(json!(1), "tools/call", json!({"name": "count", "arguments": {"to": 100000}}))).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    send(&mut conn, json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})).await;
    let answer = call(&mut conn, request(json!(2), "ping", json!({}))).await;
    assert_eq!(answer["id"], 2, "the cancelled call is not answered: {answer}");
    let deadline = tokio::time::Instant::now() + HANG_GUARD;
    while !cancelled.load(Ordering::SeqCst) {
        assert!(tokio::time::Instant::now() < deadline, "the handler never saw the cancellation");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    conn.close().await;
    assert!(conn.rest().await.is_empty());
}

/// Keywords of JSON Schema whose boolean value is not a subschema.
const BOOLEAN_KEYWORDS: &[&str] =
    &["uniqueItems", "deprecated", "readOnly", "writeOnly", "exclusiveMinimum", "exclusiveMaximum", "nullable"];

/// Where `value` (a schema, or something inside one) holds a boolean
/// where a schema goes, as JSON pointers. Annotations and `const`/`enum`/
/// `default`/`examples` values are data, not schemas, and are skipped.
fn boolean_subschemas(value: &Value, pointer: &str, found: &mut Vec<String>) {
    match value {
        Value::Bool(_) => found.push(pointer.to_owned()),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                boolean_subschemas(item, &format!("{pointer}/{index}"), found);
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                let data = matches!(key.as_str(), "const" | "enum" | "default" | "examples" | "required");
                if data || (member.is_boolean() && BOOLEAN_KEYWORDS.contains(&key.as_str())) {
                    continue;
                }
                boolean_subschemas(member, &format!("{pointer}/{key}"), found);
            }
        }
        _ => {}
    }
}

/// Every tool `example` lists under every revision, with every boolean
/// subschema in its input and output schemas.
async fn boolean_subschemas_of(example: &str, args: &[&str]) -> (usize, Vec<String>) {
    let mut found = Vec::new();
    let mut schemas = 0;
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let mut server = Calculator::spawn_example(example, args);
        let meta = if version == "2026-07-28" {
            Some(modern_meta(version))
        } else {
            let answer = call(&mut server.conn, initialize(version, 0)).await;
            assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
            send(&mut server.conn, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
            None
        };
        let tools = all_tools(&mut server.conn, meta).await;
        assert!(!tools.is_empty(), "{example} lists no tools under {version}");
        for tool in &tools {
            for key in ["inputSchema", "outputSchema"] {
                if let Some(schema) = tool.get(key) {
                    schemas += 1;
                    let at = format!("{example} {version} {}: {key}", tool["name"]);
                    boolean_subschemas(schema, &at, &mut found);
                }
            }
        }
        server.finish().await;
    }
    (schemas, found)
}

/// The TypeScript SDK (and MCP's own schema) want every property schema to
/// be an object; JSON Schema's `true`/`false` are written `{}` and
/// `{"not": {}}` everywhere, `$defs` included.
#[tokio::test]
async fn published_tool_schemas_have_no_boolean_subschemas() {
    for (example, args) in [("calculator", &["--mcp"][..]), ("notes", &[][..])] {
        let (schemas, found) = boolean_subschemas_of(example, args).await;
        assert!(schemas > 20, "{example}: only {schemas} schemas walked");
        assert!(found.is_empty(), "boolean subschemas:\n{}", found.join("\n"));
    }
}

/// `#[rpc(mcp(name = "..."))]`: the tool goes by that name (in listings,
/// calls and error messages); the method keeps its wire name.
#[tokio::test]
async fn a_renamed_tool_is_called_by_its_tool_name() {
    let (mut conn, _) = shapes_session("2025-11-25", 100).await;
    let tools = all_tools(&mut conn, None).await;
    assert_eq!(
        tool(&tools, "scale_point")["description"],
        "Scales a point; a dotted wire name, so its tool is renamed."
    );
    let arguments = json!({"point": {"x": 1, "y": -2}, "factor": 3});
    let answer =
        call(&mut conn, request(json!(2), "tools/call", json!({"name": "scale_point", "arguments": arguments}))).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"x": 3, "y": -6}), "{answer}");
    let answer =
        call(&mut conn, request(json!(3), "tools/call", json!({"name": "shapes.scale", "arguments": arguments}))).await;
    assert_eq!(error_code(&answer), -32602, "the wire name is not a tool: {answer}");
    // Over JSON-RPC the method is still `shapes.scale`.
    let router = ShapesImpl::default().into_rpc();
    assert!(router.spec("shapes.scale").is_some() && router.spec("scale_point").is_none());
}

/// Sends `message` and reads until its answer: the answer and the
/// messages before it.
async fn call_collecting(conn: &mut Conn, message: Value) -> (Value, Vec<Value>) {
    let id = message["id"].clone();
    send(conn, message).await;
    let mut before = Vec::new();
    loop {
        let next = parse(&conn.recv().await);
        if next["id"] == id && next.get("method").is_none() {
            return (next, before);
        }
        before.push(next);
    }
}

fn logs(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|message| message["method"] == "notifications/message")
        .map(|message| {
            let params = &message["params"];
            (params["level"].as_str().unwrap().to_owned(), params["data"]["message"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn the_logs_of_a_call_reach_a_client_that_set_a_level() {
    let mut notes = Calculator::spawn_example("notes", &[]);
    let conn = &mut notes.conn;
    let answer = call(conn, initialize("2025-11-25", 0)).await;
    assert_eq!(answer["result"]["capabilities"]["logging"], json!({}), "{answer}");
    send(conn, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

    // No level set: no logs.
    let search = |id: u64| request(json!(id), "tools/call", json!({"name": "search", "arguments": {"query": ""}}));
    let (_, before) = call_collecting(conn, search(1)).await;
    assert!(logs(&before).is_empty(), "{before:?}");

    let set = |id: u64, level: &str| request(json!(id), "logging/setLevel", json!({"level": level}));
    assert_eq!(call(conn, set(2, "debug")).await["result"], json!({}));
    let (_, before) = call_collecting(conn, search(3)).await;
    assert_eq!(logs(&before), [("debug".to_owned(), "searched the notes".to_owned())]);
    let message = &before[0]["params"];
    assert_eq!((message["logger"].as_str(), message["data"]["found"].as_u64()), (Some("notes"), Some(0)), "{message}");

    assert_eq!(call(conn, set(4, "info")).await["result"], json!({}));
    let (_, before) = call_collecting(conn, search(5)).await;
    assert!(logs(&before).is_empty(), "debug is below info: {before:?}");
    let add = request(json!(6), "tools/call", json!({"name": "add_note", "arguments": {"title": "t", "body": "b"}}));
    let (_, before) = call_collecting(conn, add).await;
    assert_eq!(logs(&before), [("info".to_owned(), "note added".to_owned())]);

    let answer = call(conn, set(7, "verbose")).await;
    assert_eq!(error_code(&answer), -32602);
    assert!(answer["error"]["message"].as_str().unwrap().contains("debug, info, notice, warning"), "{answer}");

    // 2026-07-28: per request, and no `logging/setLevel`.
    let mut meta = modern_meta("2026-07-28");
    let (_, before) = call_collecting(
        conn,
        request(json!(8), "tools/call", json!({"name": "search", "arguments": {"query": ""}, "_meta": meta})),
    )
    .await;
    assert!(logs(&before).is_empty(), "no logLevel, no logs: {before:?}");
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    let (answer, before) = call_collecting(
        conn,
        request(json!(9), "tools/call", json!({"name": "search", "arguments": {"query": ""}, "_meta": meta})),
    )
    .await;
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(logs(&before), [("debug".to_owned(), "searched the notes".to_owned())]);
    let answer = call(conn, request(json!(10), "logging/setLevel", json!({"level": "debug", "_meta": meta}))).await;
    assert_eq!(error_code(&answer), -32601, "{answer}");
}
