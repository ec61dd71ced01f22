//! One trace across hops, checked by OpenTelemetry's own Python SDK and
//! wire format: a Python client (the SDK, its W3C propagator) calls the
//! `traced_relay` example over HTTP; the relay asks the calculator over a
//! real `nats-server`; all three export their spans over OTLP/HTTP
//! (protobuf) to a receiver the test starts (`tests/python/otel_trace.py
//! receive`, decoding with the `opentelemetry-proto` package). The spans
//! must make one trace: the Python client's span, the relay's server span
//! under it, the relay's client span for its call under that, and the
//! calculator's server span under the relay's client span. And the
//! official MCP Python SDK's `_meta.traceparent` (SEP-414) parents the
//! calculator's `tools/call` over stdio, in both eras.
//!
//! Needs `python3` (the SDK comes from `tests/python/requirements.txt`,
//! in the MCP tests' venv) and `nats-server`; skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use crate::client_support::{example, spawn_announcing};
use crate::mcp::mcp_python::{python, python_dir};

const TEST: &str = "one_request_is_one_trace_across_http_and_nats";

/// The OTLP receiver: the process, its lines (one span each), its URL.
async fn receiver(python: &Path) -> (Child, Lines<BufReader<ChildStdout>>, String) {
    let mut receiver = Command::new(python)
        .args(["otel_trace.py", "receive"])
        .current_dir(python_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the OTLP receiver");
    let mut spans = BufReader::new(receiver.stdout.take().expect("piped")).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), spans.next_line()).await.expect("receiver starts");
    let port = first.expect("read").and_then(|line| line.strip_prefix("listening ").map(str::to_owned));
    let otlp = format!("http://127.0.0.1:{}", port.expect("`listening PORT`"));
    (receiver, spans, otlp)
}

/// SIGTERM: the example sends its last spans, then exits.
fn terminate(child: &Child) {
    let pid = child.id().expect("still running").to_string();
    let status = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_is_one_trace_across_http_and_nats() {
    if !tests::interop::require(&["python3"], TEST) {
        return;
    }
    let Some(nats) = tests::nats::NatsServer::start(TEST) else { return };
    let python = tokio::task::spawn_blocking(python).await.expect("the venv");
    let (calculator, relay) =
        tokio::task::spawn_blocking(|| (example("calculator"), example("traced_relay"))).await.expect("built");

    let (receiver, mut spans, otlp) = receiver(&python).await;

    let subject = format!("svc.trace.{}", std::process::id());
    let (mut calculator_process, _) = spawn_announcing(
        &calculator,
        &["--nats", nats.url(), "--subject", &subject, "--otlp", &otlp],
        &["serving NATS subject"],
    )
    .await;
    let (mut relay_process, addr) = spawn_announcing(
        &relay,
        &["--http", "127.0.0.1:0", "--nats", nats.url(), "--subject", &subject, "--otlp", &otlp],
        &["listening on http://"],
    )
    .await;

    let called = Command::new(&python)
        .args(["otel_trace.py", "call", &format!("http://{}/", addr[0]), &otlp])
        .current_dir(python_dir())
        .output()
        .await
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&called.stdout);
    assert!(called.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&called.stderr));
    let client: Value = serde_json::from_str(stdout.trim()).expect("the client's JSON line");
    assert_eq!(client["answer"]["result"], 19, "{client}");
    let trace_id = client["trace_id"].as_str().expect("trace id").to_owned();
    let client_span = client["span_id"].as_str().expect("span id").to_owned();
    assert!(client["traceparent"].as_str().is_some_and(|header| header.contains(&trace_id)), "{client}");

    // Both examples send what they have left on SIGTERM.
    terminate(&relay_process);
    terminate(&calculator_process);
    // By service and kind (OTLP's SPAN_KIND_SERVER is 2, CLIENT 3).
    let mut received: HashMap<(String, u64), Value> = HashMap::new();
    let collected = tokio::time::timeout(Duration::from_secs(30), async {
        while received.len() < 4 {
            let line = spans.next_line().await.expect("read").expect("the receiver stays up");
            let span: Value = serde_json::from_str(&line).expect("a span's JSON line");
            let key = (span["service"].as_str().unwrap_or_default().to_owned(), span["kind"].as_u64().unwrap_or(0));
            if span["trace_id"] == trace_id.as_str() {
                received.insert(key, span);
            }
        }
    })
    .await;
    assert!(collected.is_ok(), "spans of trace {trace_id} received: {received:#?}");

    let span = |service: &str, kind: u64| {
        received
            .get(&(service.to_owned(), kind))
            .unwrap_or_else(|| panic!("no {service} span of kind {kind}: {received:#?}"))
    };
    let (python_span, front, outgoing, back) =
        (span("python-client", 3), span("traced_relay", 2), span("traced_relay", 3), span("calculator", 2));
    assert_eq!(python_span["span_id"], client_span.as_str());
    // The relay's server span is the Python client's child (over HTTP);
    // the relay's call to the calculator is a client span inside it; the
    // calculator's server span is that client span's child (over NATS).
    assert_eq!(front["parent_span_id"], client_span.as_str(), "{front}");
    assert_eq!(outgoing["parent_span_id"], front["span_id"], "{outgoing}");
    assert_eq!(back["parent_span_id"], outgoing["span_id"], "{back}");
    for ours in [front, outgoing, back] {
        assert_eq!(ours["name"], "subtract", "named after the method: {ours}");
    }
    let (relay, calculator) = (relay_process.wait().await.expect("relay exits"), calculator_process.wait().await);
    assert!(relay.success(), "traced_relay exits 0 after SIGTERM: {relay}");
    assert!(calculator.expect("calculator exits").success());
    drop((receiver, nats));
}

/// The official MCP Python SDK sends its client span's context in each
/// request's `params._meta` (SEP-414): the calculator's `tools/call` span
/// is that span's child, in both eras (2026-07-28 and a 2025-11-25
/// session), over stdio, where nothing but `_meta` can carry it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_python_sdk_s_meta_traceparent_parents_the_tool_call() {
    if !tests::interop::require(&["python3"], "the_mcp_python_sdk_s_meta_traceparent_parents_the_tool_call") {
        return;
    }
    let python = tokio::task::spawn_blocking(python).await.expect("the venv");
    let calculator = tokio::task::spawn_blocking(|| example("calculator")).await.expect("built");
    let (receiver, mut spans, otlp) = receiver(&python).await;
    let calculator = calculator.to_str().expect("a UTF-8 path");
    let run = Command::new(&python)
        .args(["otel_trace.py", "mcp", calculator, &otlp])
        .current_dir(python_dir())
        .env_remove("RPC_LOG")
        .output()
        .await
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let sessions: Value = serde_json::from_str(stdout.trim()).expect("the sessions' JSON line");
    assert_eq!(sessions["auto"]["version"], "2026-07-28", "{sessions}");
    assert_eq!(sessions["legacy"]["version"], "2025-11-25", "{sessions}");

    // Per trace: the SDK's span for the tools/call request, and ours.
    let traces: Vec<String> = ["auto", "legacy"]
        .iter()
        .map(|mode| sessions[mode]["trace_id"].as_str().expect("a trace id").to_owned())
        .collect();
    let mut sent: HashMap<String, Value> = HashMap::new();
    let mut served: HashMap<String, Value> = HashMap::new();
    let collected = tokio::time::timeout(Duration::from_secs(30), async {
        while traces.iter().any(|trace| !sent.contains_key(trace) || !served.contains_key(trace)) {
            let line = spans.next_line().await.expect("read").expect("the receiver stays up");
            let span: Value = serde_json::from_str(&line).expect("a span's JSON line");
            let trace = span["trace_id"].as_str().unwrap_or_default().to_owned();
            match (span["service"].as_str(), span["name"].as_str()) {
                (Some("python-mcp"), Some("MCP send tools/call subtract")) => sent.insert(trace, span),
                (Some("calculator"), Some("tools/call subtract")) => served.insert(trace, span),
                _ => None,
            };
        }
    })
    .await;
    assert!(collected.is_ok(), "sent: {sent:#?}\nserved: {served:#?}");
    for trace in &traces {
        let (client, server) = (&sent[trace], &served[trace]);
        assert_eq!(server["parent_span_id"], client["span_id"], "{client}\n{server}");
        assert_eq!(server["kind"], 2, "{server}");
    }
    drop(receiver);
}
