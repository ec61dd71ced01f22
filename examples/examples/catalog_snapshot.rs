//! The catalog as a snapshot: keep a service's OpenRPC document in the
//! repository, and let a test say when a change to the trait would break
//! the callers of the version that shipped.
//!
//! ```text
//! cargo run --example catalog_snapshot --no-default-features
//! ```
//!
//! It prints version 1's catalog (`LibraryCatalog::catalog()`, pretty
//! JSON: no instance of the service is needed), writes it to a file in a
//! temporary folder as a repository would keep it, then compares that
//! file with version 2's catalog (`catalog::compat::compare`) and prints
//! each change on a line of its own: `breaking:`, `compatible:` or
//! `info:`, the method, and why.
//!
//! In a project this is one test, next to the committed file; it writes
//! the file the first time, rewrites it after a compatible change, and
//! fails on a breaking change until `RPC_CATALOG_ACCEPT=1` accepts it
//! (see `rpc_runtime::catalog::compat::assert_compatible`):
//!
//! ```ignore
//! #[test]
//! fn catalog_is_compatible() {
//!     let path = concat!(env!("CARGO_MANIFEST_DIR"), "/library.openrpc.json");
//!     rpc_runtime::catalog::compat::assert_compatible(&LibraryCatalog::catalog(), path);
//! }
//! ```
//!
//! To compare two documents by hand, or in CI against the last release's:
//! `cargo run --example catalog_diff -- OLD.json NEW.json`.

use rpc_runtime::catalog::compat::compare;
use rpc_runtime::serde_json::{self, Value};

/// Version 1, as released.
pub mod v1 {
    /// Books to borrow.
    #[rpc_runtime::rpc]
    pub trait Library {
        /// The titles by `author`, at most `limit` of them (default 10).
        fn search(&self, author: String, limit: Option<u32>) -> Vec<String>;

        /// Lends the book called `title` to `reader`; answers the days
        /// until it is due.
        fn lend(&self, title: String, reader: String) -> u32;
    }
}

/// Version 2, about to be released.
pub mod v2 {
    /// Books to borrow.
    #[rpc_runtime::rpc]
    pub trait Library {
        /// The titles by `author`, at most `limit` of them (default 10).
        // `limit` is now required: a breaking change.
        fn search(&self, author: String, limit: u32) -> Vec<String>;

        /// Lends the book called `title` to `reader` for `days` days
        /// (default 21); answers the days until it is due.
        // A new optional param at the end: old calls still work.
        fn lend(&self, title: String, reader: String, days: Option<u32>) -> u32;

        /// Takes the book called `title` back.
        // A new method: compatible.
        fn give_back(&self, title: String) -> bool;
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let released = v1::LibraryCatalog::catalog().to_json_pretty();
    println!("{released}");

    // The file a repository would commit.
    let folder = std::env::temp_dir().join(format!("catalog_snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&folder)?;
    let path = folder.join("library.openrpc.json");
    std::fs::write(&path, format!("{released}\n"))?;
    println!("wrote {}", path.display());

    // The trait changed: compare the committed file with its new catalog.
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let next = serde_json::to_value(v2::LibraryCatalog::catalog().document())?;
    let report = compare(&committed, &next)?;
    println!("changes from version 1 to version 2:");
    for change in report.changes() {
        println!("  {change}");
    }
    if report.is_breaking() {
        println!("version 2 breaks callers of version 1: {} breaking change(s)", report.breaking().count());
    } else {
        println!("version 2 is compatible with version 1");
    }

    std::fs::remove_dir_all(&folder)?;
    Ok(())
}
