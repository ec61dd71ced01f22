//! Shared by the client test files: where the example binaries are.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Builds example `name` once per test binary (a no-op when `cargo test`
/// already built it) and returns its path.
pub fn example(name: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "examples", "--example", name])
        .current_dir(&workspace)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the {name} example failed");
    // target/<profile>/deps/<this test> -> target/<profile>/examples/<name>
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = profile_dir.join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    built.insert(name.to_owned(), path.clone());
    path
}

/// The calculator example.
#[allow(dead_code)] // not every test file uses it
pub fn calculator() -> PathBuf {
    example("calculator")
}
