//! pygls' `LanguageClient` (pinned in `tests/py/requirements.txt`) drives
//! the `language_server` example over stdio (`tests/py/lsp_client.py`):
//! initialize declaring `window.workDoneProgress`, open a document, run
//! `languageServer.countWords` to completion (the server asks the client's
//! `workspace/configuration` and reports progress through
//! `window/workDoneProgress/create` and `$/progress`) and once more,
//! cancelled with `$/cancelRequest` after its first report (-32800, and the
//! progress still ends), then shutdown and exit with code 0.
//!
//! Skipped, saying so, without `target/interop-venv` and its pygls;
//! mandatory under `RPC_REQUIRE_INTEROP=1` (`.ci/run` installs it).

use std::path::Path;
use std::time::Duration;

use rpc_runtime::serde_json::{self, Value};
use tokio::process::Command;

/// The script's checks; each must be reported, and pass.
const CHECKS: &[&str] = &[
    "initialize: serverInfo and capabilities",
    "countWords returns the number of words",
    "the server asked workspace/configuration for section languageServer, before answering",
    "progress: created a string token, then begin, one report per line, end, all with that token",
    "the cancelled countWords fails with -32800 (RequestCancelled)",
    "the cancelled run: a new token, begin, fewer reports than lines, and still its end",
    "a second workspace/configuration request for the second run",
    "didOpen published one diagnostic for the TODO, with the document's version",
    "shutdown answers null",
    "after shutdown and exit the server exits with code 0",
];

#[tokio::test]
async fn pygls_runs_and_cancels_count_words_with_progress_and_configuration() {
    let test = "pygls_runs_and_cancels_count_words_with_progress_and_configuration";
    let Some(python) = tests::interop::require_python(&["pygls.lsp.client", "lsprotocol"], test) else {
        return;
    };
    let server = crate::client_support::example("language_server");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/lsp_client.py");
    let run = Command::new(python).arg(script).arg(&server).env_remove("RPC_LOG").kill_on_drop(true).output();
    let output = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the pygls client finished in time")
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let context = || format!("python {}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("the pygls client printed no JSON line\n{}", context()));
    let reported = summary["checks"].as_array().unwrap_or_else(|| panic!("no `checks` array\n{}", context()));
    for want in CHECKS {
        let check = reported
            .iter()
            .find(|check| check["name"] == *want)
            .unwrap_or_else(|| panic!("pygls did not report the check `{want}`: {reported:#?}\n{}", context()));
        assert!(check["ok"] == true, "pygls: `{want}` failed: {}\n{}", check["detail"], context());
    }
    let unexpected: Vec<&Value> =
        reported.iter().filter(|check| !CHECKS.iter().any(|want| check["name"] == *want)).collect();
    assert!(unexpected.is_empty(), "checks this test does not know: {unexpected:#?}\n{}", context());
    assert!(output.status.success(), "every check passed but the pygls client failed\n{}", context());
}
