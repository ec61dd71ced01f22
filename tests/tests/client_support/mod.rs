//! Shared by the client test files: where the calculator example is.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Builds the calculator example once (a no-op when `cargo test` already
/// did) and returns its path.
pub fn calculator() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "examples", "--example", "calculator"])
            .current_dir(&workspace)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the calculator example failed");
        // target/<profile>/deps/<this test> -> target/<profile>/examples/calculator
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
        profile_dir.join("examples").join(format!("calculator{}", std::env::consts::EXE_SUFFIX))
    })
}
