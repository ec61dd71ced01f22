//! Compile-time tests of `#[rpc]`: `ui/pass` must build and run, and every
//! misuse in `ui/fail/<category>` must fail with exactly its `.stderr`.
//!
//! After changing a message on purpose, regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p tests --test ui_tests ui::` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*/*.rs");
}
