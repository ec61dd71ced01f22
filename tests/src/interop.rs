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

/// Installs the npm packages locked in `dir`'s `package-lock.json` and
/// makes them `dir/node_modules`, unless that exact lock file is what is
/// there already (a copy of it is kept in
/// `node_modules/.installed-lock.json`). Call it after [`require`] found
/// `npm`; calls for the same `dir` in one test process install once.
///
/// The packages are installed with `npm ci` once per machine and lock
/// file, as cargo extracts a crate's sources once per machine: into
/// [`shared_install_dir`]`("npm", ..)`, a folder named after `dir` and a
/// hash of its `package.json` and lock file, and `dir/node_modules`
/// becomes a link to it. A fresh clone then links what an earlier one
/// installed instead of unpacking some 270 MB again. Where installs are
/// not shared (`RPC_NPM_CACHE=none`), `npm ci` runs in `dir` itself.
pub fn npm_ci(dir: &std::path::Path) {
    static DONE: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if done.iter().any(|installed| installed == dir) {
        return;
    }
    install_npm_packages(dir);
    done.push(dir.to_owned());
}

/// Names the folder under which [`npm_ci`] and the MCP Python SDK's test
/// keep what they install once per machine, or `none` to install into
/// each checkout instead.
pub const NPM_CACHE_ENV: &str = "RPC_NPM_CACHE";

const INSTALLED_LOCK: &str = ".installed-lock.json";

fn install_npm_packages(dir: &std::path::Path) {
    let read =
        |name: &str| std::fs::read(dir.join(name)).unwrap_or_else(|err| panic!("{}/{name}: {err}", dir.display()));
    let (manifest, lock) = (read("package.json"), read("package-lock.json"));
    let modules = dir.join("node_modules");
    if installed_lock(&modules).is_some_and(|installed| installed == lock) {
        return;
    }
    let Some(shared) = npm_cache_dir(dir, &manifest, &lock) else {
        run_npm_ci(dir, &lock);
        return;
    };
    if installed_lock(&shared.join("node_modules")).is_none_or(|installed| installed != lock) {
        let cache = shared.parent().expect("the cache folder has a parent");
        let scratch = cache.join(format!(
            "{}.installing-{}",
            shared.file_name().expect("named").to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap_or_else(|err| panic!("create {}: {err}", scratch.display()));
        std::fs::write(scratch.join("package.json"), &manifest).expect("write package.json");
        std::fs::write(scratch.join("package-lock.json"), &lock).expect("write package-lock.json");
        run_npm_ci(&scratch, &lock);
        // Another process may have installed the same lock meanwhile:
        // either copy will do.
        if installed_lock(&shared.join("node_modules")).is_none_or(|installed| installed != lock) {
            let _ = std::fs::remove_dir_all(&shared);
            if let Err(err) = std::fs::rename(&scratch, &shared) {
                assert!(
                    installed_lock(&shared.join("node_modules")).is_some_and(|installed| installed == lock),
                    "move {} to {}: {err}",
                    scratch.display(),
                    shared.display()
                );
            }
        }
        let _ = std::fs::remove_dir_all(&scratch);
    }
    link_node_modules(&shared.join("node_modules"), &modules);
}

/// The lock file an install was made from, if `modules` holds one.
fn installed_lock(modules: &std::path::Path) -> Option<Vec<u8>> {
    std::fs::read(modules.join(INSTALLED_LOCK)).ok()
}

fn run_npm_ci(dir: &std::path::Path, lock: &[u8]) {
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|err| panic!("`npm ci` in {} could not start: {err}", dir.display()));
    assert!(status.success(), "`npm ci` in {} failed ({status})", dir.display());
    std::fs::write(dir.join("node_modules").join(INSTALLED_LOCK), lock)
        .expect("write node_modules/.installed-lock.json");
}

/// `<cache>/npm/<dir's name>-<hash of package.json and the lock>`, or
/// `None` where installs are not shared.
fn npm_cache_dir(dir: &std::path::Path, manifest: &[u8], lock: &[u8]) -> Option<std::path::PathBuf> {
    let name = dir.file_name().map_or_else(|| "packages".into(), |name| name.to_string_lossy().into_owned());
    shared_install_dir("npm", &name, &[manifest, lock])
}

/// Where a tool installed from pinned `inputs` (a lock or requirements
/// file) is kept once per machine: `<cache>/<kind>/<name>-<hash of
/// inputs>`, the cache being [`NPM_CACHE_ENV`] if set, else
/// `$XDG_CACHE_HOME/rpc-runtime-tests` or `~/.cache/rpc-runtime-tests`.
/// `None` (install per checkout instead) with `RPC_NPM_CACHE=none`, with
/// no home directory, when the folder cannot be made, or not on Unix.
pub fn shared_install_dir(kind: &str, name: &str, inputs: &[&[u8]]) -> Option<std::path::PathBuf> {
    if !cfg!(unix) {
        return None;
    }
    let cache = match std::env::var_os(NPM_CACHE_ENV) {
        Some(value) if value == "none" => return None,
        Some(value) => std::path::PathBuf::from(value),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|value| !value.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|value| !value.is_empty())
                    .map(|home| std::path::Path::new(&home).join(".cache"))
            })?
            .join("rpc-runtime-tests"),
    };
    let cache = cache.join(kind);
    std::fs::create_dir_all(&cache).ok()?;
    // FNV-1a: a stable name for the contents (std's hashers may change
    // between Rust releases); what each install keeps of its inputs is
    // compared before it is used.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for input in inputs {
        for byte in input.iter().chain(&[0xff]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Some(cache.join(format!("{name}-{hash:016x}")))
}

/// Makes `link` (a test's `node_modules`) point at `target`, replacing
/// whatever was there (an older link, or an install of another lock).
#[cfg(unix)]
fn link_node_modules(target: &std::path::Path, link: &std::path::Path) {
    match std::fs::symlink_metadata(link) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(link),
        Ok(_) => std::fs::remove_file(link),
        Err(_) => Ok(()),
    }
    .unwrap_or_else(|err| panic!("remove {}: {err}", link.display()));
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|err| panic!("link {} to {}: {err}", link.display(), target.display()));
}

#[cfg(not(unix))]
fn link_node_modules(_target: &std::path::Path, _link: &std::path::Path) {
    unreachable!("installs are shared on Unix only")
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
