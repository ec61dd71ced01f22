//! Compile errors about the catalog: a param or result type without
//! `JsonSchema` is reported on the user's type, and the catalog attribute
//! keys are checked. Regenerate with `TRYBUILD=overwrite`.

#[test]
fn catalog_compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/catalog_ui/*.rs");
}
