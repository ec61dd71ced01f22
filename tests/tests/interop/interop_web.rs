//! Real third-party clients call the calculator example over HTTP (Python's
//! urllib) and WebSocket (the Python `websockets` package, pinned in
//! `tests/py/requirements.txt`), including a call from the server back to
//! the Python client. Skipped, saying so, without that Python environment;
//! mandatory under `RPC_REQUIRE_INTEROP=1` (`.ci/run` installs it).

use std::path::Path;
use std::time::Duration;

use tokio::process::Command;

#[tokio::test]
async fn python_clients_call_the_calculator_over_http_and_websocket() {
    let Some(python) =
        tests::interop::require_python(&["websockets"], "python_clients_call_the_calculator_over_http_and_websocket")
    else {
        return;
    };
    let (_calculator, addrs) = crate::client_support::spawn_announcing(
        &crate::client_support::calculator(),
        &["--http", "127.0.0.1:0", "--ws", "127.0.0.1:0"],
        &["listening on http://", "listening on ws://"],
    )
    .await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/web_client.py");
    let output = tokio::time::timeout(Duration::from_secs(60), Command::new(python).arg(script).args(&addrs).output())
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
