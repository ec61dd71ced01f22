//! `compat::check_file` and `assert_compatible`: the catalog kept in the
//! repository, written on first use, rewritten when nothing breaks, and
//! refused on a breaking change until accepted.

// Only the catalogs of the traits below are used, never an implementation.
#![allow(dead_code)]

use std::path::PathBuf;

use rpc_runtime::catalog::compat::{assert_compatible, check_file, FileCheck, FileError, ACCEPT_VAR};
use rpc_runtime::rpc;

/// Version 1 of a service.
#[rpc(title = "Shop", version = "1.0.0")]
pub trait ShopV1 {
    /// The price of `sku`, in cents.
    fn price(&self, sku: String) -> u64;
    /// Every sku.
    fn list(&self) -> Vec<String>;
}

/// Version 2: `list` is gone (breaking).
#[rpc(title = "Shop", version = "2.0.0")]
pub trait ShopV2 {
    /// The price of `sku`, in cents.
    fn price(&self, sku: String) -> u64;
}

/// Version 1.1: `stock` added, `price` takes an optional currency at the
/// end (compatible).
#[rpc(title = "Shop", version = "1.1.0")]
pub trait ShopV11 {
    /// The price of `sku`, in cents.
    fn price(&self, sku: String, currency: Option<String>) -> u64;
    /// Every sku.
    fn list(&self) -> Vec<String>;
    /// How many of `sku` are left.
    fn stock(&self, sku: String) -> u32;
}

fn path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("catalog_file");
    let path = dir.join(name).join("openrpc.json");
    let _ = std::fs::remove_file(&path);
    path
}

// One test, in order: the accept variable is process-wide.
#[test]
fn committed_catalog_is_created_kept_updated_refused_and_accepted() {
    let path = path("shop");
    let v1 = ShopV1Catalog::catalog();
    assert_eq!(check_file(&v1, &path).expect("created"), FileCheck::Created);
    let written = std::fs::read_to_string(&path).expect("written");
    assert_eq!(written, format!("{}\n", v1.to_json_pretty()));
    assert_eq!(check_file(&v1, &path).expect("same"), FileCheck::Unchanged);
    assert_compatible(&v1, &path);

    // Nothing breaking: the file follows the current catalog.
    let v11 = ShopV11Catalog::catalog();
    let FileCheck::Updated(report) = check_file(&v11, &path).expect("compatible") else { panic!("not updated") };
    assert!(!report.is_breaking() && !report.is_empty(), "{report}");
    assert_eq!(std::fs::read_to_string(&path).expect("rewritten"), format!("{}\n", v11.to_json_pretty()));

    // Breaking: refused, naming the change and the way to accept it; the
    // file is left alone.
    let v2 = ShopV2Catalog::catalog();
    let err = check_file(&v2, &path).expect_err("breaking");
    let message = err.to_string();
    assert!(matches!(err, FileError::Breaking { .. }), "{message}");
    assert!(message.contains("breaking: list: method removed"), "{message}");
    assert!(message.contains("breaking: price: param currency: removed"), "{message}");
    assert!(message.contains(ACCEPT_VAR), "{message}");
    assert!(!message.contains("compatible:"), "{message}");
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), format!("{}\n", v11.to_json_pretty()));
    let panic = std::panic::catch_unwind(|| assert_compatible(&v2, &path)).expect_err("assert_compatible panics");
    let panic = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(panic.contains("breaking: list"), "{panic}");

    // Accepted.
    std::env::set_var(ACCEPT_VAR, "1");
    let accepted = check_file(&v2, &path);
    std::env::remove_var(ACCEPT_VAR);
    let Ok(FileCheck::Accepted(report)) = accepted else { panic!("not accepted: {accepted:?}") };
    assert!(report.is_breaking());
    assert_eq!(std::fs::read_to_string(&path).expect("rewritten"), format!("{}\n", v2.to_json_pretty()));

    // A file that is not a catalog says so.
    std::fs::write(&path, "[]").expect("written");
    let err = check_file(&v2, &path).expect_err("invalid");
    assert!(matches!(err, FileError::Invalid { .. }) && err.to_string().contains(ACCEPT_VAR), "{err}");
}
