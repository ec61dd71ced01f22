//! The `catalog_diff` example, as outside checks drive it: one change per
//! line starting with its verdict, exit 0 when nothing breaks, 1 when
//! something does, 2 with a message on stderr when it cannot compare.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use super::{catalog, common::catalog_diff_path};

fn run(old: &Path, new: &Path) -> Output {
    Command::new(catalog_diff_path()).arg(old).arg(new).output().expect("catalog_diff runs")
}

/// A file in this binary's scratch folder.
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog_diff");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path
}

fn calculator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join("calculator.openrpc.json")
}

#[test]
fn nothing_breaking_exits_0() {
    let mut new = catalog("calculator");
    new["methods"][0]["deprecated"] = json!(true);
    let new = scratch("deprecated.json", &new.to_string());
    let output = run(&calculator(), &new);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["info: subtract: deprecated: still served; tell callers what to use instead"]
    );
    let same = run(&calculator(), &calculator());
    assert_eq!((same.status.code(), same.stdout.len()), (Some(0), 0));
}

#[test]
fn something_breaking_exits_1_with_one_line_per_change() {
    let mut new = catalog("calculator");
    let methods = new["methods"].as_array_mut().expect("methods");
    methods.retain(|method| method["name"] != "subtract");
    methods
        .push(json!({"name": "multiply", "params": [], "result": {"name": "result", "schema": {"type": "integer"}}}));
    let new = scratch("breaking.json", &new.to_string());
    let output = run(&calculator(), &new);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("breaking: subtract: "), "{stdout}");
    assert_eq!(lines[1], "compatible: multiply: method added");
}

#[test]
fn unreadable_input_exits_2_with_a_message() {
    let not_json = scratch("not.json", "{ not json");
    let not_openrpc = scratch("not-openrpc.json", r#"{"swagger": "2.0"}"#);
    let bad_method = scratch("bad-method.json", r#"{"openrpc": "1.3.2", "methods": [{"params": []}]}"#);
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog_diff").join("missing.json");
    for (old, new, words) in [
        (calculator(), not_json, "not JSON"),
        (not_openrpc, calculator(), "`openrpc`"),
        (calculator(), bad_method, "no `name`"),
        (missing, calculator(), "cannot read"),
    ] {
        let output = run(&old, &new);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{} {}: {stderr}", old.display(), new.display());
        assert!(stderr.contains(words), "{stderr}");
        assert!(output.stdout.is_empty());
    }
    let usage = Command::new(catalog_diff_path()).output().expect("catalog_diff runs");
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("usage: catalog_diff OLD.json NEW.json"));
}
