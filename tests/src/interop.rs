//! Tests that need a tool from another ecosystem (Node.js and npm,
//! `nats-server`; Python later) go through [`require`], so that
//! `cargo test --workspace` passes on a machine with only Rust: there each
//! such test says on the terminal that it was skipped and why. CI makes
//! them mandatory by setting [`REQUIRE_ENV`] (`.ci/run` installs the tools
//! and sets it), and then a missing tool fails the test instead.
//!
//! ```no_run
//! #[test]
//! fn talks_to_node() {
//!     if !tests::interop::require(&["node", "npm"], "talks_to_node") {
//!         return; // skipped, and said so
//!     }
//!     // ... run node ...
//! }
//! ```

use std::io::Write;
use std::process::{Command, Stdio};

/// Set to `1` to make a missing tool a test failure rather than a skip.
pub const REQUIRE_ENV: &str = "RPC_REQUIRE_INTEROP";

/// Whether the interop tests are mandatory (`RPC_REQUIRE_INTEROP=1`).
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|value| value == "1")
}

/// Whether `tool --version` runs.
pub fn available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `true` when every tool in `tools` can be run. Otherwise the test named
/// `test` is skipped: this says so on the terminal (past the test
/// harness's output capture) and returns `false`, or panics when
/// [`REQUIRE_ENV`] is `1`.
pub fn require(tools: &[&str], test: &str) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|tool| !available(tool)).collect();
    if missing.is_empty() {
        return true;
    }
    let message =
        format!("{test}: needs {} (not found on PATH); install it to run this interop check", missing.join(" and "));
    assert!(!required(), "{message} ({REQUIRE_ENV}=1 makes it mandatory)");
    // Written to the process's stderr, not through `eprintln!`, which the
    // harness captures and shows only for failing tests.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {message}; set {REQUIRE_ENV}=1 to make this a failure");
    false
}

/// Where `.ci/run` installs the Python packages of `tests/py/requirements.txt`
/// (a venv under `target/`); `RPC_INTEROP_PYTHON` overrides it.
pub fn python() -> std::path::PathBuf {
    if let Some(python) = std::env::var_os("RPC_INTEROP_PYTHON") {
        return python.into();
    }
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(std::path::Path::new("."));
    workspace.join("target/interop-venv/bin/python")
}

/// [`python`] when it can import every one of `modules`; otherwise the
/// test named `test` is skipped as [`require`] does (a failure under
/// [`REQUIRE_ENV`]).
pub fn require_python(modules: &[&str], test: &str) -> Option<std::path::PathBuf> {
    let python = python();
    let imports = modules.iter().map(|module| format!("import {module}")).collect::<Vec<_>>().join("; ");
    let works = Command::new(&python)
        .args(["-c", &imports])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if works {
        return Some(python);
    }
    let message = format!(
        "{test}: needs {} with the Python packages {} (python3 -m venv target/interop-venv && target/interop-venv/bin/pip install -r tests/py/requirements.txt)",
        python.display(),
        modules.join(", ")
    );
    assert!(!required(), "{message} ({REQUIRE_ENV}=1 makes it mandatory)");
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {message}; set {REQUIRE_ENV}=1 to make this a failure");
    None
}

/// Installs the npm packages locked in `dir`'s `package-lock.json` with
/// `npm ci`, unless that exact lock file is what is installed already (a
/// copy of it is kept in `node_modules/.installed-lock.json`). Call it
/// after [`require`] found `npm`.
pub fn npm_ci(dir: &std::path::Path) {
    let lock = std::fs::read(dir.join("package-lock.json"))
        .unwrap_or_else(|err| panic!("{}/package-lock.json: {err}", dir.display()));
    let marker = dir.join("node_modules").join(".installed-lock.json");
    if std::fs::read(&marker).is_ok_and(|installed| installed == lock) {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .status()
        .unwrap_or_else(|err| panic!("`npm ci` in {} could not start: {err}", dir.display()));
    assert!(status.success(), "`npm ci` in {} failed ({status})", dir.display());
    std::fs::write(&marker, lock).expect("write node_modules/.installed-lock.json");
}

/// Runs `node script args...` in `dir` (the calculator's log level unset)
/// and checks what it printed: it exits 0, prints every line that starts
/// with one of `checks` (the script's `ok ...` lines), and prints `last`.
/// Panics with the script's output otherwise.
pub fn node_checks<A: AsRef<std::ffi::OsStr>>(
    dir: &std::path::Path,
    script: &str,
    args: &[A],
    checks: &[&str],
    last: &str,
) {
    let output = Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(dir)
        .env_remove("RPC_LOG")
        .output()
        .unwrap_or_else(|err| panic!("node {script} could not start (install Node.js): {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed ({}):\n{stdout}\n{stderr}", output.status);
    for check in checks {
        assert!(stdout.lines().any(|line| line.starts_with(check)), "missing `{check}` in:\n{stdout}");
    }
    assert!(stdout.contains(last), "missing `{last}` in:\n{stdout}");
}
