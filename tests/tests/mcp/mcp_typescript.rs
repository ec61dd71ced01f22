//! Interop with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk`
//! on npm, pinned in `tests/js/mcp/package-lock.json`), which most MCP
//! hosts are built on: `tests/js/mcp/interop.mjs` drives the calculator
//! (`--mcp`) and the notes example over stdio and over Streamable HTTP:
//! `listTools` (the SDK parses the listing with MCP's own schema), every
//! schema compiled with the SDK's validator, `callTool` with valid and
//! invalid arguments, a tool error, `structuredContent` checked against
//! `outputSchema` by the SDK, progress, cancellation by `AbortSignal` with
//! no answer afterwards, `ping`, and a clean close (exit 0 over stdio,
//! `DELETE` of the session over HTTP).
//!
//! Needs `node` and `npm` (skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`, see `tests::interop`); `.ci/run` installs the
//! locked packages, and this test does too when they are missing.

use crate::client_support;

use std::path::PathBuf;

#[test]
fn the_typescript_sdk_drives_the_calculator_and_notes_over_stdio_and_http() {
    let test = "the_typescript_sdk_drives_the_calculator_and_notes_over_stdio_and_http";
    if !tests::interop::require(&["node", "npm"], test) {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("mcp");
    tests::interop::npm_ci(&dir);
    let mut checks = Vec::new();
    for transport in ["stdio", "Streamable HTTP"] {
        for check in [
            "calculator: listTools lists",
            "calculator: callTool with valid arguments; structuredContent passes the SDK's outputSchema check",
            "calculator: callTool with invalid arguments is a tool error naming the parameter",
            "calculator: a failing tool is a tool error (isError)",
            "calculator: cancellation by AbortSignal stops the call and nothing answers it afterwards",
            "calculator: ping",
            "notes: progress notifications reach onprogress",
        ] {
            checks.push(format!("ok {transport} {check}"));
        }
    }
    checks.push("ok stdio calculator: close ends the server cleanly (exit 0)".to_owned());
    checks
        .push("ok Streamable HTTP calculator: terminateSession ends the session (then 404), close is clean".to_owned());
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    let examples = [client_support::calculator(), client_support::example("notes")];
    tests::interop::node_checks(&dir, "interop.mjs", &examples, &checks, "all checks passed");
}
