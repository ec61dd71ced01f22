//! Compile-time tests of `#[rpc]` and `#[derive(RpcError)]`: every case in
//! `pass/` must build and run, and every misuse in `fail/<category>/` must
//! fail with exactly its `.stderr` snapshot (the macro's errors, and the
//! catalog's: a param or result type without `JsonSchema` is reported on
//! the user's type).
//!
//! After changing a message on purpose, regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p ui-tests` and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("pass/*.rs");
    cases.compile_fail("fail/*/*.rs");
}
