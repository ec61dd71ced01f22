//! A third-party client subscribes: Python's standard library, over TCP,
//! against the calculator example's `ticks` (`tests/python/subscribe_ticks.py`).
//! Skipped, saying so, without `python3`; mandatory with
//! `RPC_REQUIRE_INTEROP=1` (as `.ci/run` sets it).

use crate::common;

use std::path::Path;

use common::{Calculator, Wire, HANG_GUARD};
use rpc_runtime::serde_json::{self, json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_subscribes_to_ticks_over_tcp() {
    if !tests::interop::require(&["python3"], "python_subscribes_to_ticks_over_tcp") {
        return;
    }
    let (_calculator, addr) = Calculator::spawn_tcp(Wire::Ndjson).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python").join("subscribe_ticks.py");
    let run = tokio::process::Command::new("python3")
        .arg(&script)
        .args([addr.ip().to_string(), addr.port().to_string()])
        .kill_on_drop(true)
        .output();
    let output =
        tokio::time::timeout(HANG_GUARD, run).await.expect("the Python client finishes").expect("python3 runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the Python client failed: {}\n{stderr}", output.status);
    let summary: Value = serde_json::from_slice(&output.stdout).expect("one JSON line");
    assert_eq!(
        summary,
        json!({
            "items": [1, 2, 3],
            "end": {"subscription": 1, "end": true},
            "unsubscribed": true,
            "unsubscribed_again": false,
            "distinct_ids": true,
        })
    );
}
