//! Interop with the official MCP Python SDK (`mcp` on PyPI, pinned in
//! `tests/python/requirements.txt`): `tests/python/mcp_interop.py` launches
//! the calculator (`--mcp`) and the notes example as subprocesses and
//! connects both ways, with the SDK's default client (a `server/discover`
//! probe, landing on 2026-07-28 well under a second) and with an explicit
//! `initialize` session: lists the tools, checks that every schema compiles
//! and accepts exactly the arguments the server accepts, calls tools with
//! valid and invalid arguments, cancels a call, receives progress. The same
//! again over Streamable HTTP (`--mcp --http 127.0.0.1:0`; the notes example
//! with `--http`): the SDK's HTTP client in both eras, with sessions,
//! `DELETE` at the end, cancellation by closing the stream (2026-07-28) or
//! by `notifications/cancelled` (in a session), progress as event streams.
//!
//! Needs `python3` (skipped without it unless `RPC_REQUIRE_INTEROP=1`, see
//! `tests::interop`); the SDK goes into a virtual environment at
//! `target/mcp-venv`, made on first use (`.ci/run` makes it up front).

use crate::client_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// `<target>/mcp-venv`, next to the profile directories.
fn venv() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe.ancestors().nth(3).expect("target/<profile>/deps/<test>");
    target.join("mcp-venv")
}

/// The venv's python, with the pinned packages installed (once per venv
/// and requirements file).
fn python() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let venv = venv();
    let python = venv.join("bin").join("python");
    let requirements = python_dir().join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).expect("tests/python/requirements.txt");
    let marker = venv.join("installed-requirements.txt");
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

#[test]
fn the_python_sdk_drives_the_notes_example() {
    if !tests::interop::require(&["python3"], "the_python_sdk_drives_the_notes_example") {
        return;
    }
    let notes = client_support::example("notes");
    drive(
        &notes,
        "notes",
        &[
            "ok 2026-07-28: notes are added and found",
            "ok 2025-11-25: notes are added and found",
            "ok 2026-07-28: progress notifications reach the caller",
            "ok 2025-11-25: progress notifications reach the caller",
        ],
    );
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
    drive_over(
        &notes,
        "notes",
        &["--http"],
        &[
            "ok 2026-07-28: notes are added and found",
            "ok 2025-11-25: notes are added and found",
            "ok 2026-07-28: progress notifications reach the caller",
            "ok 2025-11-25: progress notifications reach the caller",
        ],
    );
}
