//! Interop with vscode-jsonrpc (npm), the JSON-RPC library VS Code uses:
//! `tests/js/vscode/interop.js` drives the calculator example over
//! Content-Length stdio with requests, notifications, concurrent calls and
//! server-to-client requests it answers itself. Needs `node` and `npm`
//! (skipped without them unless `RPC_REQUIRE_INTEROP=1`, see
//! `tests::interop`); installs the locked packages with `npm ci` when they
//! are missing.

use crate::client_support;

use std::path::PathBuf;

#[test]
fn vscode_jsonrpc_drives_the_calculator() {
    if !tests::interop::require(&["node", "npm"], "vscode_jsonrpc_drives_the_calculator") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("vscode");
    tests::interop::npm_ci(&dir);
    let checks = [
        "ok request by position",
        "ok request by name",
        "ok notifications are not answered",
        "ok concurrent requests, answered out of order",
        "ok server-to-client request answered by vscode-jsonrpc",
        "ok server-to-client notification arrives before the answer",
        "ok concurrent server-to-client requests",
    ];
    tests::interop::node_checks(&dir, "interop.js", &[client_support::calculator()], &checks, "all 13 checks passed");
}
