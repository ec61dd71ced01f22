//! Shared by the test binaries: building the example binaries, and
//! starting one that announces its addresses on stderr.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Builds example `name` once per test binary (a no-op when `cargo test`
/// already built it) and returns its path.
///
/// The path comes from the test executable's own location
/// (`<target>/<profile>/deps/<test>`), so it follows `CARGO_TARGET_DIR` and
/// the profile. `cargo build --workspace --example NAME` is run once so
/// that `cargo test -p tests` never runs a stale binary.
pub fn example(name: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let path = build_example(name);
    built.insert(name.to_owned(), path.clone());
    path
}

fn build_example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("test executable under <target>/<profile>/deps");
    let binary = profile_dir.join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let mut build = std::process::Command::new(cargo);
    // `--workspace`, so that features resolve as for `cargo test
    // --workspace`, which has built the examples already: `-p examples`
    // alone resolves another feature set (no dev-dependencies' tokio
    // features, no `http2`) and rebuilt tokio, hyper and everything on
    // them for the examples. The calculator built here therefore has the
    // `http2` feature that `cargo run --example calculator` leaves out:
    // it answers HTTP/1.1 through hyper's auto builder, which serves
    // HTTP/1.1 as the HTTP/1-only one does.
    build.args(["build", "--quiet", "--workspace", "--example", name, "--manifest-path"]).arg(&manifest);
    // Without the variables cargo set for this test process: build scripts
    // that watch one (ring's watches `CARGO_MANIFEST_DIR`) would see it
    // change, rebuild here, and again in the next `cargo test`.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let set_by_cargo = ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_CRATE_", "CARGO_BIN_", "CARGO_TARGET_TMPDIR"]
            .iter()
            .any(|prefix| key.starts_with(prefix))
            || key == "CARGO_PRIMARY_PACKAGE";
        if set_by_cargo {
            build.env_remove(&*key);
        }
    }
    if let Some(target_dir) = profile_dir.parent() {
        build.arg("--target-dir").arg(target_dir);
    }
    if profile_dir.file_name().is_some_and(|name| name == "release") {
        build.arg("--release");
    }
    match build.status() {
        Ok(status) => assert!(status.success(), "`cargo build --workspace --example {name}` failed"),
        // No cargo (a test binary run by hand): use what is there.
        Err(err) if binary.exists() => eprintln!("could not run cargo ({err}); using {}", binary.display()),
        Err(err) => panic!("could not run cargo to build the {name} example: {err}"),
    }
    assert!(binary.exists(), "the {name} example was built but is not at {}", binary.display());
    binary
}

/// The calculator example.
pub fn calculator() -> PathBuf {
    example("calculator")
}

/// Starts `program` with `args` (stdin and stdout closed, killed when the
/// handle drops) and waits for one stderr line starting with each of
/// `prefixes` (such as `"listening on https://"`); returns the process and
/// the rest of each of those lines, in the order of `prefixes`. What it
/// writes to stderr afterwards is passed on to the test's stderr, so that a
/// chatty process never blocks on a full pipe.
pub async fn spawn_announcing(program: &Path, args: &[&str], prefixes: &[&str]) -> (Child, Vec<String>) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("spawn {}: {err}", program.display()));
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let mut found = vec![None; prefixes.len()];
    tokio::time::timeout(Duration::from_secs(20), async {
        while found.iter().any(Option::is_none) {
            let line = stderr.next_line().await.expect("read stderr");
            let line = line.unwrap_or_else(|| panic!("{} exited before printing {prefixes:?}", program.display()));
            for (prefix, slot) in prefixes.iter().zip(&mut found) {
                if let Some(rest) = line.strip_prefix(prefix).filter(|_| slot.is_none()) {
                    *slot = Some(rest.to_owned());
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} printed {prefixes:?} in time", program.display()));
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            eprintln!("{line}");
        }
    });
    (child, found.into_iter().map(Option::unwrap_or_default).collect())
}

/// What a subscription yields next that is not an item (an error such as
/// `ClientError::Resubscribed`, or its end), skipping items, within the
/// hang guard.
pub async fn next_event<T>(stream: &mut rpc_runtime::Subscription<T>) -> Option<Result<T, rpc_runtime::ClientError>> {
    tokio::time::timeout(crate::common::HANG_GUARD, async {
        loop {
            match stream.next().await {
                Some(Ok(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the stream says so instead of waiting forever")
}
