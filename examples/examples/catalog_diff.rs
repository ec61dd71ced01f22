//! Compares two OpenRPC documents and says what would break callers of
//! the old one: a check to run before a release, or in CI against the
//! catalog of the last release.
//!
//! ```text
//! cargo run --example calculator -- --catalog > new.json
//! cargo run --example catalog_diff -- old.json new.json
//! ```
//!
//! Prints one change per line, each starting with `breaking:`,
//! `compatible:` or `info:` and then the method's name. Exits with 0 when
//! nothing is breaking, 1 when something is, and 2 (with a message on
//! stderr) when an argument is missing or a file is not a readable OpenRPC
//! document.

use std::io::Write;
use std::process::ExitCode;

use rpc_runtime::catalog::compat::{compare, DocumentError, Side};
use rpc_runtime::serde_json::{self, Value};

const USAGE: &str = "usage: catalog_diff OLD.json NEW.json";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [old, new] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let (old, new) = match (read(old), read(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(message), _) | (_, Err(message)) => {
            eprintln!("catalog_diff: {message}");
            return ExitCode::from(2);
        }
    };
    let report = match compare(&old.1, &new.1) {
        Ok(report) => report,
        Err(DocumentError { side, message, .. }) => {
            let path = if side == Side::Old { &old.0 } else { &new.0 };
            eprintln!("catalog_diff: {path}: {message}");
            return ExitCode::from(2);
        }
    };
    // A closed stdout (`| head`) is not worth a panic; the exit code
    // still tells the verdict.
    let _ = write!(std::io::stdout().lock(), "{report}");
    if report.is_breaking() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The file at `path` as JSON, with the path kept for messages.
fn read(path: &str) -> Result<(String, Value), String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{path}: cannot read it: {err}"))?;
    let value = serde_json::from_str(&text).map_err(|err| format!("{path}: not JSON: {err}"))?;
    Ok((path.to_owned(), value))
}
