//! One trace across hops, checked by OpenTelemetry's own Python SDK and
//! wire format: a Python client (the SDK, its W3C propagator) calls the
//! `traced_relay` example over HTTP; the relay asks the calculator over a
//! real `nats-server`; all three export their spans over OTLP/HTTP
//! (protobuf) to a receiver the test starts (`tests/python/otel_trace.py
//! receive`, decoding with the `opentelemetry-proto` package). The spans
//! must make one trace: the client's span, the relay's server span under
//! it, the calculator's under the relay's.
//!
//! Needs `python3` (the SDK comes from `tests/python/requirements.txt`,
//! in the MCP tests' venv) and `nats-server`; skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::client_support::{example, spawn_announcing};
use crate::mcp::mcp_python::{python, python_dir};

const TEST: &str = "one_request_is_one_trace_across_http_and_nats";

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

    let mut receiver = Command::new(&python)
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

    let subject = format!("svc.trace.{}", std::process::id());
    let (back, _) = spawn_announcing(
        &calculator,
        &["--nats", nats.url(), "--subject", &subject, "--otlp", &otlp],
        &["serving NATS subject"],
    )
    .await;
    let (front, addr) = spawn_announcing(
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
    terminate(&front);
    terminate(&back);
    let mut by_service: HashMap<String, Value> = HashMap::new();
    let collected = tokio::time::timeout(Duration::from_secs(30), async {
        while by_service.len() < 3 {
            let line = spans.next_line().await.expect("read").expect("the receiver stays up");
            let span: Value = serde_json::from_str(&line).expect("a span's JSON line");
            let service = span["service"].as_str().unwrap_or_default().to_owned();
            if span["trace_id"] == trace_id.as_str() {
                by_service.insert(service, span);
            }
        }
    })
    .await;
    assert!(collected.is_ok(), "spans of trace {trace_id} received: {by_service:#?}");

    let (python_span, front_span, back_span) =
        (&by_service["python-client"], &by_service["traced_relay"], &by_service["calculator"]);
    assert_eq!(python_span["span_id"], client_span.as_str());
    // The relay's server span is the client's child; the calculator's is
    // the relay's child: parent links across HTTP, then NATS.
    assert_eq!(front_span["parent_span_id"], client_span.as_str(), "{front_span}");
    assert_eq!(back_span["parent_span_id"], front_span["span_id"], "{back_span}");
    for server in [front_span, back_span] {
        assert_eq!(server["name"], "subtract", "named after the method: {server}");
        assert_eq!(server["kind"], 2, "a server span (SPAN_KIND_SERVER): {server}");
    }
    let (front, back) = (front.wait_with_output().await.expect("relay exits"), back.wait_with_output().await);
    assert!(front.status.success(), "traced_relay exits 0 after SIGTERM: {}", front.status);
    assert!(back.expect("calculator exits").status.success());
    drop((receiver, nats));
}
