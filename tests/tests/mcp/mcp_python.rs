//! Interop with the official MCP Python SDK (`mcp` on PyPI, pinned in
//! `tests/python/requirements.txt`): `tests/python/mcp_interop.py` launches
//! the calculator (`--mcp`) and the notes example as subprocesses and
//! connects both ways, with the SDK's default client (a `server/discover`
//! probe, landing on 2026-07-28 well under a second) and with an explicit
//! `initialize` session: lists the tools, checks that every schema compiles
//! and accepts exactly the arguments the server accepts, calls tools with
//! valid and invalid arguments, cancels a call, receives progress; on the
//! notes example also its capabilities, resources (`list_resources`,
//! `list_resource_templates`, `read_resource`, errors for an unknown note
//! and an unknown URI), its prompt (`list_prompts`, `get_prompt`),
//! completion of the prompt's and the template's `id`, logs at `debug` then
//! `info` (`set_logging_level`; in 2026-07-28 the per-request `logLevel`
//! and `Client(log_level=)`), resource changes (`subscribe_resource` and
//! the `message_handler`; in 2026-07-28 `Client.listen`), sampling
//! (`suggest_title` through `sampling_callback`) and elicitation
//! (`clear_notes` through `elicitation_callback`: accept, decline, cancel,
//! accept without confirming; a client without the capability). The same
//! again over Streamable HTTP (`--mcp --http 127.0.0.1:0`; the notes example
//! with `--http`): the SDK's HTTP client in both eras, with sessions,
//! `DELETE` at the end, cancellation by closing the stream (2026-07-28) or
//! by `notifications/cancelled` (in a session), progress as event streams.
//!
//! Needs `python3` (skipped without it unless `RPC_REQUIRE_INTEROP=1`, see
//! `tests::interop`); the SDK goes into a virtual environment made on first
//! use, once per machine and requirements file
//! (`tests::interop::shared_install_dir`), or at `target/mcp-venv` where
//! installs are not shared.

use crate::client_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

pub(crate) fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// The venv for this requirements file, shared by every checkout of this
/// machine; else `<target>/mcp-venv`, next to the profile directories.
fn venv(requirements: &str) -> PathBuf {
    if let Some(shared) = tests::interop::shared_install_dir("python", "mcp-venv", &[requirements.as_bytes()]) {
        return shared;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe.ancestors().nth(3).expect("target/<profile>/deps/<test>");
    target.join("mcp-venv")
}

/// The venv's python, with the pinned packages installed (once per venv
/// and requirements file).
pub(crate) fn python() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let requirements = python_dir().join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).expect("tests/python/requirements.txt");
    let venv = venv(&wanted);
    let python = venv.join("bin").join("python");
    let marker = venv.join("installed-requirements.txt");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|installed| installed == wanted) {
        return python;
    }
    // Another test process may be making the same shared venv: one at a
    // time (a venv cannot be made elsewhere and moved).
    std::fs::create_dir_all(&venv).expect("make the venv's folder");
    let lock = std::fs::File::create(venv.with_extension("lock")).expect("create the venv's lock file");
    lock.lock().expect("lock the venv");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|installed| installed == wanted) {
        return python;
    }
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv");
    }
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(&requirements),
        "pip install -r tests/python/requirements.txt",
    );
    std::fs::write(&marker, wanted).expect("write the venv's marker");
    python
}

fn run(command: &mut Command, what: &str) {
    let status = command.status().unwrap_or_else(|err| panic!("`{what}` could not start: {err}"));
    assert!(status.success(), "`{what}` failed ({status})");
}

fn drive(server: &Path, which: &str, checks: &[&str]) {
    drive_over(server, which, &[], checks);
}

fn drive_over(server: &Path, which: &str, transport: &[&str], checks: &[&str]) {
    let output = Command::new(python())
        .arg("mcp_interop.py")
        .arg(which)
        .arg(server)
        .args(transport)
        .current_dir(python_dir())
        .env_remove("RPC_LOG")
        .output()
        .expect("run mcp_interop.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mcp_interop.py {which} failed ({}):\n{stdout}\n{stderr}", output.status);
    for check in checks {
        assert!(stdout.lines().any(|line| line.starts_with(check)), "missing `{check}` in:\n{stdout}");
    }
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

#[test]
fn the_python_sdk_drives_the_calculator_in_both_eras() {
    if !tests::interop::require(&["python3"], "the_python_sdk_drives_the_calculator_in_both_eras") {
        return;
    }
    let calculator = client_support::calculator();
    drive(
        &calculator,
        "calculator",
        &[
            "ok auto mode lands on 2026-07-28",
            "ok initialize negotiates 2025-11-25",
            "ok 2026-07-28: every input and output schema compiles, self-contained",
            "ok 2025-11-25: every input and output schema compiles, self-contained",
            "ok 2026-07-28: schemas and the server accept and reject the same arguments",
            "ok 2025-11-25: schemas and the server accept and reject the same arguments",
            "ok 2025-11-25: invalid arguments are a tool execution error naming the parameter",
            "ok 2026-07-28: unknown and hidden tools are protocol errors (-32602)",
            "ok 2025-11-25: a cancelled call leaves the connection usable",
        ],
    );
}

/// What `notes_session` prints in each era: tools, resources, the prompt
/// and completion, progress, then logs, changes, sampling and elicitation.
fn notes_checks() -> Vec<String> {
    let mut checks = Vec::new();
    for (version, unknown_uri, changes, logs) in [
        (
            "2026-07-28",
            "-32602",
            "listen honors resources_list_changed and notes://{id}; deleting notes brings the events",
            "per-request _meta logLevel",
        ),
        (
            "2025-11-25",
            "-32002",
            "resources/subscribe brings resources/updated for the note deleted and list_changed to message_handler",
            "set_logging_level",
        ),
    ] {
        for check in [
            "notes tools listed (clear_notes and suggest_title too), schemas compile",
            "notes are added and found",
            "capabilities declare tools, resources, prompts, completions and logging, with changes",
            "resources/list lists every note by title",
            "resources/templates/list has notes://{id}",
            "resources/read answers the note as Markdown",
            &format!("reading an unknown note is its error (1001), an unknown URI {unknown_uri}"),
            "prompts/list has summarize_note with its required argument",
            "prompts/get answers the messages with the note",
            "completion/complete suggests note ids for the prompt and the template",
            "progress notifications reach the caller",
            &format!("logs reach logging_callback by {logs}: debug and info at debug"),
            changes,
            "suggest_title asks sampling_callback (maxTokens 60, the note in the message) and answers its text",
            "clear_notes asks elicitation_callback; decline, cancel and confirm false delete nothing (0)",
            "accepted with confirm true, clear_notes deletes every note",
            "without elicitation_callback clear_notes is a tool error naming the elicitation capability",
        ] {
            checks.push(format!("ok {version}: {check}"));
        }
    }
    checks.push("ok 2026-07-28: without elicitation_callback clear_notes is a tool error naming the elicitation capability; Client(log_level='debug') brings debug logs".to_owned());
    checks
}

#[test]
fn the_python_sdk_drives_the_notes_example() {
    if !tests::interop::require(&["python3"], "the_python_sdk_drives_the_notes_example") {
        return;
    }
    let notes = client_support::example("notes");
    let checks = notes_checks();
    drive(&notes, "notes", &checks.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn the_python_sdk_drives_the_calculator_over_streamable_http() {
    if !tests::interop::require(&["python3"], "the_python_sdk_drives_the_calculator_over_streamable_http") {
        return;
    }
    let calculator = client_support::calculator();
    drive_over(
        &calculator,
        "calculator",
        &["--http"],
        &[
            "ok serving Streamable HTTP at http://127.0.0.1:",
            "ok auto mode lands on 2026-07-28",
            "ok initialize negotiates 2025-11-25",
            "ok 2026-07-28: every input and output schema compiles, self-contained",
            "ok 2025-11-25: every input and output schema compiles, self-contained",
            "ok 2026-07-28: schemas and the server accept and reject the same arguments",
            "ok 2025-11-25: schemas and the server accept and reject the same arguments",
            "ok 2026-07-28: invalid arguments are a tool execution error naming the parameter",
            "ok 2025-11-25: invalid arguments are a tool execution error naming the parameter",
            "ok 2026-07-28: unknown and hidden tools are protocol errors (-32602)",
            "ok 2026-07-28: a cancelled call leaves the connection usable",
            "ok 2025-11-25: a cancelled call leaves the connection usable",
        ],
    );
}

#[test]
fn the_python_sdk_gets_progress_over_streamable_http() {
    if !tests::interop::require(&["python3"], "the_python_sdk_gets_progress_over_streamable_http") {
        return;
    }
    let notes = client_support::example("notes");
    let mut checks = notes_checks();
    checks.push("ok serving Streamable HTTP at http://127.0.0.1:".to_owned());
    drive_over(&notes, "notes", &["--http"], &checks.iter().map(String::as_str).collect::<Vec<_>>());
}
