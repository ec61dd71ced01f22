//! Interop with vscode-jsonrpc (npm), the JSON-RPC library VS Code uses:
//! `tests/js/vscode/interop.js` drives the calculator example over
//! Content-Length stdio with requests, notifications, concurrent calls and
//! server-to-client requests it answers itself. Needs `node` and `npm`
//! (skipped without them unless `RPC_REQUIRE_INTEROP=1`, see
//! `tests::interop`); installs the locked packages with `npm ci` when they
//! are missing.

mod client_support;

use std::path::PathBuf;
use std::process::Command;

fn script_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("vscode")
}

fn install_once(dir: &PathBuf) {
    if dir.join("node_modules").join("vscode-jsonrpc").is_dir() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .expect("npm is needed for the vscode-jsonrpc interop test (install Node.js)");
    assert!(status.success(), "`npm ci` in {} failed", dir.display());
}

#[test]
fn vscode_jsonrpc_drives_the_calculator() {
    if !tests::interop::require(&["node", "npm"], "vscode_jsonrpc_drives_the_calculator") {
        return;
    }
    let dir = script_dir();
    install_once(&dir);
    let calculator = client_support::calculator();
    let output = Command::new("node")
        .arg("interop.js")
        .arg(&calculator)
        .current_dir(&dir)
        .output()
        .expect("node is needed for the vscode-jsonrpc interop test (install Node.js)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "interop.js failed ({}):\n{stdout}\n{stderr}", output.status);
    for check in [
        "ok request by position",
        "ok request by name",
        "ok notifications are not answered",
        "ok concurrent requests, answered out of order",
        "ok server-to-client request answered by vscode-jsonrpc",
        "ok server-to-client notification arrives before the answer",
        "ok concurrent server-to-client requests",
    ] {
        assert!(stdout.lines().any(|line| line == check), "missing `{check}` in:\n{stdout}");
    }
    assert!(stdout.contains("all 13 checks passed"), "{stdout}");
}
