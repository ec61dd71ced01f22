//! The catalog kept in the repository: a test compares the trait's
//! current catalog with the committed file and fails on a breaking change
//! until the change is accepted, as snapshot tests do (`insta`,
//! `expect-test`).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Report, compare};
use crate::catalog::Catalog;

/// The environment variable that accepts a breaking change: with it set
/// (to anything but `0` or nothing), [`check_file`] rewrites the file
/// instead of failing.
pub const ACCEPT_VAR: &str = "RPC_CATALOG_ACCEPT";

/// What [`check_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileCheck {
    /// There was no file: it now holds the current catalog.
    Created,
    /// The file already holds exactly the current catalog.
    Unchanged,
    /// Nothing breaking: the file was rewritten with the current catalog
    /// (commit it, so the next change is judged against this one).
    Updated(Report),
    /// Breaking changes, accepted through [`ACCEPT_VAR`]: the file was
    /// rewritten.
    Accepted(Report),
}

/// Why [`check_file`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileError {
    /// The current catalog breaks callers of the committed one.
    Breaking {
        /// The committed file.
        path: PathBuf,
        /// Every change; [`Report::breaking`] lists those that fail.
        report: Report,
    },
    /// The file exists but is not an OpenRPC document this crate can read.
    Invalid {
        /// The committed file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file could not be read or written.
    Io {
        /// The committed file.
        path: PathBuf,
        /// The error from the file system.
        error: io::Error,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Breaking { path, report } => {
                let count = report.breaking().count();
                let plural = if count == 1 { "" } else { "s" };
                writeln!(
                    f,
                    "the catalog has {count} breaking change{plural} for callers of the version in {}:",
                    path.display()
                )?;
                for change in report.breaking() {
                    writeln!(f, "  {change}")?;
                }
                write!(
                    f,
                    "Undo the change, or, if the break is intended (a new major version), accept it with \
                     {ACCEPT_VAR}=1 and commit the rewritten file."
                )
            }
            FileError::Invalid { path, message } => write!(
                f,
                "{}: {message}; fix it, or rewrite it from the current catalog with {ACCEPT_VAR}=1",
                path.display()
            ),
            FileError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Whether [`ACCEPT_VAR`] is set to accept.
fn accepting() -> bool {
    std::env::var_os(ACCEPT_VAR).is_some_and(|value| !value.is_empty() && value != "0")
}

/// Compares `catalog` with the document committed at `path`: writes the
/// file when there is none, rewrites it when nothing breaks callers of
/// the committed version, and otherwise fails with the breaking changes,
/// unless [`ACCEPT_VAR`] is set. The file is the catalog's pretty JSON,
/// as `rpc.discover` answers it.
pub fn check_file(catalog: &Catalog, path: impl AsRef<Path>) -> Result<FileCheck, FileError> {
    let path = path.as_ref();
    let current = format!("{}\n", catalog.to_json_pretty());
    let write = |outcome: FileCheck| {
        let created =
            path.parent().filter(|parent| !parent.as_os_str().is_empty()).map_or(Ok(()), std::fs::create_dir_all);
        created
            .and_then(|()| std::fs::write(path, &current))
            .map(|()| outcome)
            .map_err(|error| FileError::Io { path: path.to_owned(), error })
    };
    let committed = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return write(FileCheck::Created),
        Err(error) => return Err(FileError::Io { path: path.to_owned(), error }),
    };
    if committed == current {
        return Ok(FileCheck::Unchanged);
    }
    let invalid = |message: String| FileError::Invalid { path: path.to_owned(), message };
    let report =
        serde_json::from_str::<Value>(&committed).map_err(|err| invalid(format!("not JSON ({err})"))).and_then(|old| {
            compare(&old, &serde_json::to_value(catalog.document()).unwrap_or(Value::Null))
                .map_err(|err| invalid(err.message))
        });
    let report = match report {
        Ok(report) => report,
        Err(_) if accepting() => return write(FileCheck::Accepted(Report::default())),
        Err(err) => return Err(err),
    };
    match (report.is_breaking(), accepting()) {
        (false, _) => write(FileCheck::Updated(report)),
        (true, true) => write(FileCheck::Accepted(report)),
        (true, false) => Err(FileError::Breaking { path: path.to_owned(), report }),
    }
}

/// [`check_file`] for a test: panics with the breaking changes (or why the
/// file cannot be used), and prints what else changed.
///
/// ```no_run
/// # use rpc_runtime::rpc;
/// #[rpc]
/// pub trait Calculator {
///     fn add(&self, a: i64, b: i64) -> i64;
/// }
///
/// #[test]
/// fn catalog_is_compatible() {
///     let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openrpc.json");
///     rpc_runtime::catalog::compat::assert_compatible(&CalculatorCatalog::catalog(), path);
/// }
/// ```
#[track_caller]
pub fn assert_compatible(catalog: &Catalog, path: impl AsRef<Path>) {
    let path = path.as_ref();
    match check_file(catalog, path) {
        Ok(FileCheck::Created) => eprintln!("{}: written from the current catalog; commit it", path.display()),
        Ok(FileCheck::Updated(report) | FileCheck::Accepted(report)) if !report.is_empty() => {
            eprintln!("{}: rewritten; commit it. Changes:\n{report}", path.display());
        }
        Ok(_) => {}
        Err(err) => panic!("{err}"),
    }
}
