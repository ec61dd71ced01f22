#![doc = include_str!("../../../docs/compat.md")]

use std::fmt;

use serde_json::Value;

mod document;
mod file;
mod methods;
mod params;
mod schema;

pub use file::{ACCEPT_VAR, FileCheck, FileError, assert_compatible, check_file};

/// How a change affects a caller of the old version. Ordered from the
/// most severe: the worst verdict of a report is its minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Some call that worked against the old version fails, or is
    /// answered differently from what the old document promised.
    Breaking,
    /// Every call that worked still works; new callers may do more.
    Compatible,
    /// Documentation only (summaries, descriptions, declared errors,
    /// deprecation): nothing on the wire changes.
    Info,
}

impl Verdict {
    /// `breaking`, `compatible` or `info`: the word `catalog_diff` starts
    /// its lines with.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Breaking => "breaking",
            Verdict::Compatible => "compatible",
            Verdict::Info => "info",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which part of a method a change is in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// The method itself (its presence, kind, `paramStructure`, ...).
    Method,
    /// A param; [`Change::param`] names it.
    Param,
    /// The result (a response's `result` member). Not called `Result`:
    /// a public name `Result` makes rustc spell `std::result::Result` out
    /// in every user's error messages.
    ResultValue,
    /// The items of its subscription (`x-subscription`).
    SubscriptionItem,
}

/// One difference between the two documents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// What it means for callers of the old version.
    pub verdict: Verdict,
    /// The method's wire name.
    pub method: String,
    /// Where in the method.
    pub part: Part,
    /// The param's name (the new one for a rename), for [`Part::Param`].
    pub param: Option<String>,
    /// Where in the param's, result's or item's schema, as a JSON Pointer
    /// into the schema as written, `$ref`s followed (`/properties/tags/items`):
    /// the schema of the values in question (the old one for values a
    /// param no longer accepts, the new one for values a result may now
    /// be). `None` for the method's own shape, `Some("")` for the whole
    /// schema.
    pub schema_path: Option<String>,
    /// The named component (`components/schemas`) the change sits in, if
    /// any, as the new document names it.
    pub component: Option<String>,
    /// One line: what changed, what it does to callers, what to do.
    pub reason: String,
}

impl fmt::Display for Change {
    /// `breaking: subtract: param minuend at /maximum: ...`, one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.verdict, self.method)?;
        match (&self.part, &self.param) {
            (Part::Param, Some(param)) => write!(f, ": param {param}")?,
            (Part::ResultValue, _) => f.write_str(": result")?,
            (Part::SubscriptionItem, _) => f.write_str(": subscription item")?,
            _ => {}
        }
        if let Some(path) = self.schema_path.as_deref().filter(|path| !path.is_empty()) {
            write!(f, " at {path}")?;
        }
        if let Some(component) = &self.component {
            write!(f, " (in {component})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Every change between two documents, in the old document's method
/// order, then the methods only the new one has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    changes: Vec<Change>,
}

impl Report {
    /// Every change.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The breaking changes.
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|change| change.verdict == Verdict::Breaking)
    }

    /// Whether any change is breaking.
    pub fn is_breaking(&self) -> bool {
        self.breaking().next().is_some()
    }

    /// Whether the documents are the same for callers and readers alike.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

impl fmt::Display for Report {
    /// One change per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.changes {
            writeln!(f, "{change}")?;
        }
        Ok(())
    }
}

/// Which of the two documents [`compare`] was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first argument, the version callers use now.
    Old,
    /// The second argument, the version about to ship.
    New,
}

/// A document [`compare`] cannot read as OpenRPC 1.x.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocumentError {
    /// Which document.
    pub side: Side,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.side {
            Side::Old => "old",
            Side::New => "new",
        };
        write!(f, "the {side} document: {}", self.message)
    }
}

impl std::error::Error for DocumentError {}

/// Compares the document callers use now (`old`) with the one about to
/// replace it (`new`); see the [module docs](crate::catalog::compat) for the rules.
pub fn compare(old: &Value, new: &Value) -> Result<Report, DocumentError> {
    let old = document::Document::read(old).map_err(|message| DocumentError { side: Side::Old, message })?;
    let new = document::Document::read(new).map_err(|message| DocumentError { side: Side::New, message })?;
    let mut changes = Vec::new();
    for method in &old.methods {
        match new.method(method.name) {
            Some(successor) => methods::compare(&old, method, &new, successor, &mut changes),
            None => changes.push(methods::removed(method, &new)),
        }
    }
    for method in new.methods.iter().filter(|method| old.method(method.name).is_none()) {
        changes.push(methods::added(method));
    }
    Ok(Report { changes })
}

/// Builds [`Change`]s for one method.
struct Changes<'c> {
    method: &'c str,
    out: &'c mut Vec<Change>,
}

impl Change {
    /// A change of the method itself.
    fn of_method(verdict: Verdict, method: &str, reason: String) -> Self {
        Change {
            verdict,
            method: method.to_owned(),
            part: Part::Method,
            param: None,
            schema_path: None,
            component: None,
            reason,
        }
    }
}

impl Changes<'_> {
    fn push(&mut self, verdict: Verdict, part: Part, param: Option<&str>, reason: String) {
        let mut change = Change::of_method(verdict, self.method, reason);
        change.part = part;
        change.param = param.map(str::to_owned);
        self.out.push(change);
    }

    fn method(&mut self, verdict: Verdict, reason: String) {
        self.push(verdict, Part::Method, None, reason);
    }

    fn param(&mut self, verdict: Verdict, param: &str, reason: String) {
        self.push(verdict, Part::Param, Some(param), reason);
    }
}
