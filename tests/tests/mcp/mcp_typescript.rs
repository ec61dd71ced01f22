//! Interop with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk`
//! on npm, pinned in `tests/js/mcp/package-lock.json`), which most MCP
//! hosts are built on: `tests/js/mcp/interop.mjs` drives the calculator
//! (`--mcp`) and the notes example over stdio and over Streamable HTTP:
//! `listTools` (the SDK parses the listing with MCP's own schema), every
//! schema compiled with the SDK's validator, `callTool` with valid and
//! invalid arguments, a tool error, `structuredContent` checked against
//! `outputSchema` by the SDK, progress, cancellation by `AbortSignal` with
//! no answer afterwards, `ping`, and a clean close (exit 0 over stdio,
//! `DELETE` of the session over HTTP). On the notes example also resources
//! (`listResources`, `listResourceTemplates`, `readResource` and its
//! errors), the `summarize_note` prompt (`listPrompts`, `getPrompt`) and
//! `complete` for the prompt's and the template's `id`, logs at `debug` then
//! `info` (`setLoggingLevel`, a `LoggingMessageNotificationSchema`
//! handler), `subscribeResource` with `ResourceUpdatedNotificationSchema` and
//! `ResourceListChangedNotificationSchema` handlers (over HTTP on the
//! session's `GET` stream), sampling (`suggest_title`, a
//! `CreateMessageRequestSchema` handler) and elicitation (`clear_notes`, an
//! `ElicitRequestSchema` handler: accept, decline, cancel, accept without
//! confirming; the notes client declares `elicitation` and `sampling`, and
//! a second client without them gets a tool error). The client runs with
//! `enforceStrictCapabilities`, so the SDK checks every request against the
//! capabilities the server declared (the calculator's: tools only).
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
            "calculator: capabilities are tools only; the SDK refuses resources and prompts requests",
            "notes: notes tools listed (clear_notes and suggest_title too), a note added and found",
            "notes: capabilities declare tools, resources, prompts, completions and logging, with changes (the SDK enforces them)",
            "notes: listResources lists every note by title",
            "notes: listResourceTemplates has notes://{id}",
            "notes: readResource answers the note as Markdown; an unknown note is 1001, an unknown URI -32002",
            "notes: listPrompts has summarize_note with its required argument",
            "notes: getPrompt answers the messages with the note; a missing argument is -32602",
            "notes: complete suggests note ids for the prompt and the template",
            "notes: progress notifications reach onprogress",
            "notes: setLoggingLevel: debug and info logs at debug",
            "notes: subscribeResource brings resources/updated for the note deleted, and resources/list_changed",
            "notes: suggest_title asks the CreateMessageRequestSchema handler (maxTokens 60, the note in the message) and answers its text",
            "notes: clear_notes asks the ElicitRequestSchema handler; decline, cancel and confirm false delete nothing (0)",
            "notes: accepted with confirm true, clear_notes deletes every note",
            "notes: a client without the elicitation capability gets a tool error naming it from clear_notes",
        ] {
            checks.push(format!("ok {transport} {check}"));
        }
    }
    checks.push("ok stdio calculator: close ends the server cleanly (exit 0)".to_owned());
    checks.push("ok stdio notes: close ends the server cleanly (exit 0)".to_owned());
    checks.push(
        "ok Streamable HTTP notes: subscribeResource brings resources/updated for the note deleted, and resources/list_changed (on the GET stream)"
            .to_owned(),
    );
    for what in ["calculator", "notes"] {
        checks.push(format!("ok Streamable HTTP {what}: terminateSession ends the session (then 404), close is clean"));
    }
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    let examples = [client_support::calculator(), client_support::example("notes")];
    tests::interop::node_checks(&dir, "interop.mjs", &examples, &checks, "all checks passed");
}
