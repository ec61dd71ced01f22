//! Interop with the official MCP Inspector (`@modelcontextprotocol/inspector`
//! on npm, pinned in `tests/js/inspector/package-lock.json`), in its CLI
//! mode: `mcp-inspector --cli --protocol-era ERA --format json --method M
//! -- notes --file NOTES.json` launches the notes example over stdio, runs
//! one method and prints its result as one JSON object (a failure as an
//! `{"error": ...}` envelope on stderr, exit 1). In both eras the Inspector
//! can speak (`legacy`: `initialize`, 2025-11-25; `modern`: 2026-07-28, and
//! `auto` lands there): the negotiated version and capabilities, the
//! resources the notes file holds, the `notes://{id}` template, reading a
//! note and the errors for an unknown note and an unknown URI, the
//! `summarize_note` prompt listed and got, and the tools listed with the
//! Inspector's `--strict` schema portability check (no error-severity
//! problem), `clear_notes` and `suggest_title` among them. The one-shot CLI
//! has no `completion/complete`, and answers neither elicitation nor
//! sampling requests, so those two tools are not called.
//!
//! Needs `node` and `npm` (skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`, see `tests::interop`); `.ci/run` installs the
//! locked packages, and this test does too when they are missing.

use crate::client_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::{json, Value};

/// What the notes file holds: two notes, so that the ids' order is not
/// the order of their digits.
const NOTES: &str = r#"[
  {"id": 1, "title": "groceries", "body": "eggs, milk", "tags": ["home"]},
  {"id": 12, "title": "plans", "body": "go *north*", "tags": []}
]"#;

fn inspector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("inspector")
}

/// `npm ci` once, for all the tests of this file (they run in parallel).
fn install() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = inspector_dir();
    tests::interop::npm_ci(&dir);
    dir
}

/// The notes example with its notes file, and a home of its own for the
/// Inspector (which keeps a catalog and client settings under `~`).
struct Setup {
    dir: PathBuf,
    notes: PathBuf,
    scratch: PathBuf,
    era: &'static str,
}

impl Setup {
    fn new(era: &'static str) -> Setup {
        let dir = install();
        let notes = client_support::example("notes");
        let scratch = std::env::temp_dir().join(format!("rpc-mcp-inspector-{}-{era}", std::process::id()));
        std::fs::create_dir_all(&scratch).expect("create the scratch directory");
        std::fs::write(scratch.join("notes.json"), NOTES).expect("write the notes file");
        Setup { dir, notes, scratch, era }
    }

    /// Runs `method` with `options`: `Ok(result)` when the Inspector
    /// printed one, `Err(error)` with its error envelope when it failed.
    fn run(&self, method: &str, options: &[&str]) -> Result<Value, Value> {
        let output = Command::new("node")
            .arg(Path::new("node_modules").join(".bin").join("mcp-inspector"))
            .args(["--cli", "--protocol-era", self.era, "--format", "json", "--method", method])
            .args(options)
            .arg("--")
            .arg(&self.notes)
            .arg("--file")
            .arg(self.scratch.join("notes.json"))
            .current_dir(&self.dir)
            .env("HOME", &self.scratch)
            .env_remove("RPC_LOG")
            .output()
            .unwrap_or_else(|err| panic!("mcp-inspector could not start (install Node.js): {err}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let what = format!("mcp-inspector --cli --protocol-era {} --method {method} {options:?}", self.era);
        if output.status.success() {
            let printed: Value = serde_json::from_str(stdout.trim())
                .unwrap_or_else(|err| panic!("{what}: stdout is not one JSON object ({err}):\n{stdout}\n{stderr}"));
            return Ok(printed.get("result").cloned().unwrap_or_else(|| panic!("{what}: no result in {printed}")));
        }
        let envelope = stderr
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line).ok().filter(|value| value.get("error").is_some()))
            .unwrap_or_else(|| {
                panic!("{what} failed ({}) without an error envelope:\n{stdout}\n{stderr}", output.status)
            });
        Err(envelope["error"].clone())
    }

    fn ok(&self, method: &str, options: &[&str]) -> Value {
        self.run(method, options).unwrap_or_else(|error| panic!("{method} {options:?} failed: {error}"))
    }

    fn error(&self, method: &str, options: &[&str]) -> String {
        match self.run(method, options) {
            Ok(result) => panic!("{method} {options:?} should fail, answered {result}"),
            Err(error) => error["message"].as_str().unwrap_or_else(|| panic!("no message in {error}")).to_owned(),
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Everything the one-shot CLI can ask the notes example, in `era`, which
/// negotiates `version` with `capabilities`.
fn inspect_the_notes(era: &'static str, version: &str, capabilities: Value) {
    let setup = Setup::new(era);

    let init = setup.ok("initialize", &[]);
    assert_eq!(init["protocolVersion"], version, "{init}");
    assert_eq!(init["serverInfo"]["name"], "notes", "{init}");
    assert_eq!(init["capabilities"], capabilities, "{init}");

    let resources = setup.ok("resources/list", &[]);
    assert_eq!(
        resources["resources"],
        json!([
            {"uri": "notes://1", "name": "note-1", "title": "groceries", "mimeType": "text/markdown"},
            {"uri": "notes://12", "name": "note-12", "title": "plans", "mimeType": "text/markdown"},
        ]),
        "{resources}"
    );

    let templates = setup.ok("resources/templates/list", &[]);
    assert_eq!(
        templates["resourceTemplates"],
        json!([{"uriTemplate": "notes://{id}", "name": "note", "title": "A note",
                "description": "One note as Markdown: its title as a heading, then its body.",
                "mimeType": "text/markdown"}]),
        "{templates}"
    );

    let read = setup.ok("resources/read", &["--uri", "notes://12"]);
    assert_eq!(
        read["contents"],
        json!([{"uri": "notes://12", "mimeType": "text/markdown", "text": "# plans\n\ngo *north*\n"}]),
        "{read}"
    );
    assert_eq!(read.get("ttlMs").is_some(), version == "2026-07-28", "{read}");
    assert_eq!(setup.error("resources/read", &["--uri", "notes://99"]), "No such note");
    let unknown = setup.error("resources/read", &["--uri", "other://1"]);
    assert!(unknown.contains("other://1"), "{unknown}");

    let prompts = setup.ok("prompts/list", &[]);
    assert_eq!(
        prompts["prompts"],
        json!([{"name": "summarize_note", "title": "Summarize a note",
                "description": "Asks the model for a short summary of one note.",
                "arguments": [{"name": "id", "description": "The note's id (`search` finds it).", "required": true}]}]),
        "{prompts}"
    );

    let prompt = setup.ok("prompts/get", &["--prompt-name", "summarize_note", "--prompt-args", "id=1"]);
    assert_eq!(prompt["description"], "Summarize note 1", "{prompt}");
    assert_eq!(
        prompt["messages"],
        json!([
            {"role": "user", "content": {"type": "text", "text": "Summarize this note in one sentence:"}},
            {"role": "user", "content": {"type": "text", "text": "# groceries\n\neggs, milk\n"}},
        ]),
        "{prompt}"
    );
    assert_eq!(
        setup.error("prompts/get", &["--prompt-name", "summarize_note", "--prompt-args", "id=99"]),
        "No such note"
    );
    let missing = setup.error("prompts/get", &["--prompt-name", "summarize_note"]);
    assert!(missing.contains("needs the argument(s): id"), "{missing}");

    // `--strict` exits 6 on an error-severity portability problem in a
    // tool's schema (warnings, such as `"type": [.., "null"]`, pass).
    let tools = setup.ok("tools/list", &["--strict"]);
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["add_note", "search", "get_note", "delete_note", "reindex", "clear_notes", "suggest_title"],
        "{tools}"
    );
    // The tools that ask the client (the one-shot CLI answers neither an
    // elicitation nor a sampling request, so they are listed, not called).
    let tool =
        |name: &str| tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap().clone();
    let clear = tool("clear_notes");
    assert_eq!(clear["inputSchema"]["properties"], json!({}), "{clear}");
    assert_eq!(
        clear["annotations"],
        json!({"title": "Delete every note", "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}),
        "{clear}"
    );
    let suggest = tool("suggest_title");
    assert_eq!(suggest["inputSchema"]["required"], json!(["id"]), "{suggest}");
    // A string result: as it is in 2026-07-28, under `result` before.
    let output = if version == "2026-07-28" {
        &suggest["outputSchema"]
    } else {
        &suggest["outputSchema"]["properties"]["result"]
    };
    assert_eq!(output, &json!({"type": "string"}), "{suggest}");
    assert_eq!(suggest["annotations"], json!({"title": "Suggest a title", "readOnlyHint": true}), "{suggest}");
}

/// What the notes example declares, in either era (`initialize`'s answer
/// and `server/discover`'s): changes of every list, subscriptions to its
/// resources, completion and logging.
fn notes_capabilities() -> Value {
    json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
           "prompts": {"listChanged": true}, "completions": {}, "logging": {}})
}

#[test]
fn the_inspector_cli_reads_the_notes_resources_and_prompt_in_2025_11_25() {
    let test = "the_inspector_cli_reads_the_notes_resources_and_prompt_in_2025_11_25";
    if !tests::interop::require(&["node", "npm"], test) {
        return;
    }
    inspect_the_notes("legacy", "2025-11-25", notes_capabilities());
}

#[test]
fn the_inspector_cli_reads_the_notes_resources_and_prompt_in_2026_07_28() {
    let test = "the_inspector_cli_reads_the_notes_resources_and_prompt_in_2026_07_28";
    if !tests::interop::require(&["node", "npm"], test) {
        return;
    }
    inspect_the_notes("modern", "2026-07-28", notes_capabilities());
}

#[test]
fn the_inspector_cli_in_auto_mode_lands_on_2026_07_28() {
    if !tests::interop::require(&["node", "npm"], "the_inspector_cli_in_auto_mode_lands_on_2026_07_28") {
        return;
    }
    let setup = Setup::new("auto");
    let init = setup.ok("initialize", &[]);
    assert_eq!(init["protocolVersion"], "2026-07-28", "{init}");
    assert_eq!(init["capabilities"], notes_capabilities(), "{init}");
    let templates = setup.ok("resources/templates/list", &[]);
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "notes://{id}", "{templates}");
}
