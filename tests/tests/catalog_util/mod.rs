//! Shared by the catalog tests: running the calculator example and the
//! OpenRPC checks in `tests/js/openrpc` (installed with `npm ci` on first use).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// Runs the calculator example with `args`, feeding it `stdin`; returns stdout.
pub fn calculator(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new(crate::client_support::example("calculator"))
        .args(args)
        .current_dir(workspace())
        .env("RPC_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo runs the calculator example");
    child.stdin.take().expect("piped stdin").write_all(stdin).expect("the calculator reads its stdin");
    let output = child.wait_with_output().expect("the calculator finishes");
    assert!(
        output.status.success(),
        "calculator {args:?} failed: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The folder of the node checks.
fn js_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("js").join("openrpc")
}

/// Installs the OpenRPC checks' packages (once per lock file, see
/// `tests::interop::npm_ci`).
fn ensure_packages() {
    tests::interop::npm_ci(&js_dir());
}

/// Runs `node check.js ARGS...` in tests/js/openrpc; returns (success, stdout).
pub fn node_check(args: &[&Path]) -> (bool, String) {
    ensure_packages();
    let output = Command::new("node")
        .arg("check.js")
        .args(args.iter().map(|a| a.as_os_str()))
        .current_dir(js_dir())
        .stderr(Stdio::inherit())
        .output()
        .expect("node is needed for the OpenRPC checks (install Node.js 18 or newer)");
    (output.status.success(), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Writes `value` as JSON to a fresh file under the target directory.
pub fn temp_json(name: &str, value: &impl serde::Serialize) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog");
    std::fs::create_dir_all(&dir).expect("the temp dir can be created");
    let path = dir.join(format!("{}-{name}", std::process::id()));
    std::fs::write(&path, serde_json::to_vec_pretty(value).expect("JSON serializes")).expect("temp file is written");
    path
}

/// Whether node and npm are there for the checks in `tests/js/openrpc`
/// (a skip, said on the terminal, when they are not; see `tests::interop`).
pub fn have_node(test: &str) -> bool {
    tests::interop::require(&["node", "npm"], test)
}

/// Validates `doc` against the official OpenRPC meta-schema (skipped
/// without Node.js).
pub fn assert_valid_openrpc(name: &str, doc: &serde_json::Value) {
    if !have_node(&format!("OpenRPC validation of {name}")) {
        return;
    }
    let path = temp_json(name, doc);
    let (ok, out) = node_check(&[Path::new("validate"), &path]);
    assert!(ok && out.trim() == "ok", "{name} is not a valid OpenRPC document:\n{out}");
}

/// The document's verdict on each `(method, params)` case; `None` when
/// Node.js is missing (the check is skipped, and says so).
pub fn schema_verdicts(
    name: &str,
    doc: &serde_json::Value,
    cases: &[(&str, Option<serde_json::Value>)],
) -> Option<Vec<bool>> {
    if !have_node(&format!("schema verdicts of {name}")) {
        return None;
    }
    let cases: Vec<serde_json::Value> = cases
        .iter()
        .map(|(method, params)| match params {
            Some(params) => serde_json::json!({ "method": method, "params": params }),
            None => serde_json::json!({ "method": method }),
        })
        .collect();
    let doc_path = temp_json(&format!("{name}.openrpc.json"), doc);
    let cases_path = temp_json(&format!("{name}.cases.json"), &cases);
    let (ok, out) = node_check(&[Path::new("verdicts"), &doc_path, &cases_path]);
    assert!(ok, "the schema verdicts failed:\n{out}");
    let verdicts: Vec<bool> = serde_json::from_str(out.trim()).expect("check.js prints a JSON array");
    assert_eq!(verdicts.len(), cases.len());
    Some(verdicts)
}
