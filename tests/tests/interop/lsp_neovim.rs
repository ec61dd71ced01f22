//! Neovim's own LSP client (`vim.lsp`, Debian's `neovim`, 0.7.x) edits a
//! buffer against the `language_server` example: `tests/lsp/neovim_drive.lua`
//! starts the server for a text file, checks the TODO diagnostics as
//! `vim.diagnostic.get` shows them (UTF-16 columns turned into byte
//! columns by Neovim) after didOpen and after edits that Neovim sends as
//! incremental didChange, hovers and completes, runs the `countWords`
//! command (the server asks Neovim for its configuration and reports
//! progress), then stops the client (shutdown, exit) and checks the
//! server's exit code.
//!
//! Needs `nvim` (skipped without it unless `RPC_REQUIRE_INTEROP=1`, see
//! `tests::interop`; `.ci/run` installs it). `RPC_NVIM` names another
//! Neovim binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rpc_runtime::serde_json::{self, Value};

/// The script's checks, in its order; each must be reported, and pass.
const CHECKS: &[&str] = &[
    "start_client returns a client id",
    "the client attaches to the buffer",
    "initialize is answered",
    "the capabilities: incremental sync, hover, completion, the countWords command",
    "Neovim chose incremental didChange",
    "diagnostics after didOpen: one Warning per TODO, UTF-16 columns",
    "diagnostics after an edit within a line: the second TODO",
    "diagnostics after lines are appended",
    "diagnostics after a line is deleted",
    "diagnostics after an edit across two lines",
    "hover inside `alpha`, after multi-byte characters",
    "hover inside `fix`, after multi-byte characters",
    "hover just after `alpha`",
    "hover where there is no word is null",
    "completion after `be`: the distinct words starting with it, sorted, kind Text",
    "workspace/executeCommand languageServer.countWords counts the buffer words",
    "the server asked Neovim for workspace/configuration, section languageServer",
    "progress: window/workDoneProgress/create, then begin, reports, end, all with its token",
    "client.stop(): shutdown then exit, and the server exits with code 0",
];

#[tokio::test]
async fn neovim_edits_hovers_completes_and_stops_the_language_server() {
    let test = "neovim_edits_hovers_completes_and_stops_the_language_server";
    let nvim = std::env::var("RPC_NVIM").unwrap_or_else(|_| "nvim".to_owned());
    if !tests::interop::require(&[&nvim], test) {
        return;
    }
    let server = crate::client_support::example("language_server");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp").join("neovim_drive.lua");

    // HOME and every XDG directory in a fresh directory: the user's
    // configuration, plugins and shada are never read (`--clean` skips
    // them too), and Neovim's LSP log lands there.
    let dir = std::env::temp_dir().join(format!("rpc-lsp-neovim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let home = dir.join("home");
    for sub in ["config", "data", "cache", "state", "run"] {
        std::fs::create_dir_all(home.join(sub)).expect("create the temporary HOME");
    }
    let results = dir.join("results.json");
    let file = dir.join("work").join("notes.txt");

    let run = tokio::process::Command::new(&nvim)
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("NVIM_LOG_FILE", home.join("nvim.log"))
        .env("LSP_SERVER", &server)
        .env("LSP_FILE", &file)
        .env("LSP_RESULTS", &results)
        .env_remove("VIMINIT")
        .env_remove("NVIM")
        .env_remove("NVIM_LISTEN_ADDRESS")
        .env_remove("RPC_LOG")
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .unwrap_or_else(|_| panic!("nvim did not finish in 120 s; see {}", log_excerpt(&home)))
        .unwrap_or_else(|err| panic!("run {nvim}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let context = || format!("nvim {}\nstdout:\n{stdout}\nstderr:\n{stderr}\n{}", output.status, log_excerpt(&home));

    let reported: Vec<Value> = match std::fs::read(&results) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .unwrap_or_else(|err| panic!("{} is not a JSON array ({err})\n{}", results.display(), context())),
        Err(err) => panic!("the script wrote no results to {} ({err})\n{}", results.display(), context()),
    };
    for want in CHECKS {
        let check = reported
            .iter()
            .find(|check| check["name"] == *want)
            .unwrap_or_else(|| panic!("Neovim did not report the check `{want}`: {reported:#?}\n{}", context()));
        assert!(check["ok"] == true, "Neovim: `{want}` failed: {}\n{}", check["detail"], context());
    }
    let unexpected: Vec<&Value> =
        reported.iter().filter(|check| !CHECKS.iter().any(|want| check["name"] == *want)).collect();
    assert!(unexpected.is_empty(), "checks this test does not know: {unexpected:#?}\n{}", context());
    assert!(output.status.success(), "every check passed but nvim exited with {}\n{}", output.status, context());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The end of Neovim's LSP log (every message in and out, and the
/// server's stderr), kept in the temporary directory.
fn log_excerpt(home: &Path) -> String {
    let log: PathBuf = home.join("cache").join("nvim").join("lsp.log");
    match std::fs::read_to_string(&log) {
        Ok(text) => {
            let start = text.len().saturating_sub(12_000);
            let start = (start..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
            format!("{} (last {} bytes):\n{}", log.display(), text.len() - start, &text[start..])
        }
        Err(err) => format!("no LSP log at {} ({err})", log.display()),
    }
}
