//! Compile-time tests of `#[rpc]` and `#[derive(RpcError)]`: every misuse
//! in `fail/<category>/` must fail with exactly its `.stderr` snapshot (the
//! macro's errors, and the catalog's: a param or result type without
//! `JsonSchema` is reported on the user's type).
//!
//! Every case in `pass/` must build and run: each is a test target of this
//! package (`harness = false`, listed in `Cargo.toml`), so cargo builds it
//! as a crate of its own and runs its `main`. The test below checks that
//! none is missing from the list.
//!
//! After changing a message on purpose, regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p ui-tests` and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("fail/*/*.rs");
}

#[test]
fn every_pass_case_is_a_test_target() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("read Cargo.toml");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir.join("pass")).expect("read pass/") {
        let name = entry.expect("read pass/").file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && !manifest.contains(&format!("path = \"pass/{name}\"")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "pass cases without a [[test]] entry (harness = false) in tests/ui/Cargo.toml, so never built: {missing:?}"
    );
}
