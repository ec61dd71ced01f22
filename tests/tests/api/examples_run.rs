//! The examples that stop by themselves run to the end: each is built as
//! `cargo run --example NAME` builds it, run with a time limit, and must
//! exit with status 0 after printing its key line. The stdio servers
//! (`hello`, `mcp_stdio`) are fed their requests on stdin and stop when
//! it ends.

use crate::client_support;

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// How long one example may run (they take well under a second alone;
/// this leaves room for a loaded machine).
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs example `name` with `input` on its stdin (then closed); answers
/// its stdout once it exited with status 0.
async fn run(name: &str, input: &[u8]) -> String {
    let program = client_support::example(name);
    let mut child = Command::new(&program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("spawn {}: {err}", program.display()));
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input).await.expect("write the example's stdin");
    drop(stdin);
    let output = tokio::time::timeout(TIME_LIMIT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the {name} example did not exit within {TIME_LIMIT:?}"))
        .expect("wait for the example");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the {name} example exited with {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs example `name` (nothing on stdin) and checks that a line of its
/// output contains `key`.
async fn runs_and_prints(name: &str, key: &str) {
    let stdout = run(name, b"").await;
    assert!(
        stdout.lines().any(|line| line.contains(key)),
        "the {name} example printed no line with `{key}`:\n{stdout}"
    );
}

#[tokio::test]
async fn hello_answers_a_request_on_stdin() {
    let request = br#"{"jsonrpc":"2.0","method":"hello","params":["world"],"id":1}"#;
    let stdout = run("hello", &[&request[..], b"\n"].concat()).await;
    assert_eq!(stdout, "{\"jsonrpc\":\"2.0\",\"result\":\"Hello, world!\",\"id\":1}\n");
}

#[tokio::test]
async fn mcp_stdio_answers_a_tool_call_on_stdin() {
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_words","arguments":{"text":"one two three"}}}"#,
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    let stdout = run("mcp_stdio", input.as_bytes()).await;
    let answer =
        stdout.lines().find(|line| line.contains(r#""id":2"#)).unwrap_or_else(|| panic!("no answer:\n{stdout}"));
    assert!(answer.contains(r#""structuredContent":{"result":3}"#), "{answer}");
}

#[tokio::test]
async fn tcp_client_runs() {
    runs_and_prints("tcp_client", "get nothing -> StoreError::NotFound").await;
}

#[tokio::test]
async fn http_auth_runs() {
    runs_and_prints("http_auth", "admin reset -> ok; user bump -> 1 (bumped by user)").await;
}

#[tokio::test]
async fn middleware_runs() {
    runs_and_prints("middleware", "error Some(-32005) (LIMIT_EXCEEDED is -32005)").await;
}

#[tokio::test]
async fn subscriptions_runs() {
    runs_and_prints("subscriptions", "(SUBSCRIPTION_LAGGED): the server answered with an error: Subscription ended")
        .await;
}

#[tokio::test]
async fn axum_health_runs() {
    runs_and_prints("axum_health", "shutting down: GET /readyz -> HTTP/1.1 503 Service Unavailable").await;
}

#[tokio::test]
async fn tls_runs() {
    runs_and_prints("tls", "client with a certificate -> a client with a certificate").await;
}

#[tokio::test]
async fn metrics_tracing_runs() {
    runs_and_prints("metrics_tracing", r#"rpc_server_calls_total{method="subtract",outcome="ok"} 2"#).await;
}

#[tokio::test]
async fn catalog_snapshot_runs() {
    runs_and_prints("catalog_snapshot", "version 2 breaks callers of version 1: 2 breaking change(s)").await;
}
