//! Real third-party clients call the calculator example over HTTP (Python's
//! urllib) and WebSocket (the Python `websockets` package, pinned in
//! `tests/py/requirements.txt`), including a call from the server back to
//! the Python client. Skipped, saying so, without that Python environment;
//! mandatory under `RPC_REQUIRE_INTEROP=1` (`.ci/run` installs it).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn calculator_path() -> std::path::PathBuf {
    // Built by cargo for this test crate's workspace.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("target");
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    target.join(profile).join("examples").join("calculator")
}

#[tokio::test]
async fn python_clients_call_the_calculator_over_http_and_websocket() {
    let Some(python) =
        tests::interop::require_python(&["websockets"], "python_clients_call_the_calculator_over_http_and_websocket")
    else {
        return;
    };
    let built = std::process::Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "examples", "--example", "calculator"])
        .status()
        .expect("cargo build");
    assert!(built.success(), "building the calculator failed");
    let mut calculator = Command::new(calculator_path())
        .args(["--http", "127.0.0.1:0", "--ws", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the calculator");
    let mut stderr = BufReader::new(calculator.stderr.take().unwrap()).lines();
    let (mut http, mut ws) = (None, None);
    tokio::time::timeout(Duration::from_secs(20), async {
        while http.is_none() || ws.is_none() {
            let line = stderr.next_line().await.unwrap().expect("the calculator exited early");
            if let Some(addr) = line.strip_prefix("listening on http://") {
                http = Some(addr.to_owned());
            } else if let Some(addr) = line.strip_prefix("listening on ws://") {
                ws = Some(addr.to_owned());
            }
        }
    })
    .await
    .expect("the calculator printed its addresses");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/web_client.py");
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(python).arg(script).args([http.unwrap(), ws.unwrap()]).output(),
    )
    .await
    .expect("the Python client finished in time")
    .expect("run python");
    assert!(
        output.status.success(),
        "the Python client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
