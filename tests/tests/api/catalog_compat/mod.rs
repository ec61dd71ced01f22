//! Versioning (`rpc_runtime::catalog::compat`): a corpus of old/new pairs made from
//! the examples' real catalogs, property tests, the committed-file helper
//! and the `catalog_diff` example's exit codes.

use crate::common;
mod corpus;
mod diff_tool;
mod file;
mod properties;
mod wire;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The folder of the examples' catalogs (`tests/compat/`), with the
/// calculator's snapshot next door.
fn catalogs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat")
}

/// A real catalog by short name: `calculator` (the snapshot the
/// `catalog_calculator` test keeps current), `notes`, `counter`
/// (the former web_service example), `language_server`, `language_client` (lsp_pair).
fn catalog(name: &str) -> Value {
    let path = match name {
        "calculator" => Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join("calculator.openrpc.json"),
        _ => catalogs().join(format!("{name}.openrpc.json")),
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Every real catalog of the corpus.
const BASES: [&str; 5] = ["calculator", "notes", "counter", "language_server", "language_client"];
