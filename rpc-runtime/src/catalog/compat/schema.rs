//! Whether every value one JSON Schema accepts is also accepted by another,
//! and if not, which values are left out.
//!
//! Callers decide the direction: a param's new schema must accept what its
//! old one did (the old one is the "narrower" side checked here), a
//! result's old schema must accept what its new one produces. The check
//! covers the draft-07 subset schemars emits (types, enums, numeric and
//! length bounds, integer formats, `anyOf`/`oneOf`, tuples, required
//! properties, `additionalProperties`) and follows `$ref`s inside each
//! document, so a component renamed with the same shape compares equal.
//! A keyword it does not understand is never judged compatible silently:
//! when its value differs between the two schemas it is reported as
//! [`What::Unsupported`].
//!
//! This file holds the walk over two schemas: following `$ref`s, unions
//! and the order of the checks. What each JSON type's keywords bound is in
//! `kinds`, reading keywords in `keywords`, and whether a schema takes one
//! value (for `enum` and `const`) in `admits`.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use serde_json::{Map, Value};

use admits::{admits, same_shape};
use keywords::{
    EMPTY, address, branches, escape, finite_values, is_annotation, is_known, json_type, percent_decode, restricts,
    type_phrase, types_of,
};

mod admits;
mod keywords;
mod kinds;
#[cfg(test)]
mod tests;

/// Nesting deeper than this is reported instead of followed, so hostile
/// documents cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Schemas that take more steps than this to compare (unions of unions
/// multiply the work) are reported instead of compared to the end.
const MAX_STEPS: usize = 10_000;

/// The document a schema belongs to: its `$ref`s resolve against it.
#[derive(Clone, Copy)]
pub(super) struct Doc<'d> {
    root: &'d Value,
}

impl<'d> Doc<'d> {
    /// The document rooted at `root` (a whole OpenRPC document).
    pub(super) fn new(root: &'d Value) -> Self {
        Doc { root }
    }

    /// Follows `schema`'s `$ref`s (a chain of them, too) to the schema they
    /// name; with the last component's name. `Err` with the reference that
    /// points nowhere (only local references, `#/...`, are followed).
    fn resolve(self, mut schema: &'d Value) -> Result<(&'d Value, Option<String>), String> {
        let mut name = None;
        for _ in 0..MAX_DEPTH {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                return Ok((schema, name));
            };
            let pointer = reference.strip_prefix('#').map(percent_decode).ok_or_else(|| reference.to_owned())?;
            schema = self.root.pointer(&pointer).ok_or_else(|| reference.to_owned())?;
            name = pointer.rsplit('/').next().map(|last| last.replace("~1", "/").replace("~0", "~"));
        }
        Err(format!("{} (a chain of more than {MAX_DEPTH} references)", schema["$ref"]))
    }
}

/// What one schema accepts that the other does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Finding {
    /// Where, as a JSON Pointer into the narrow side's schema as written
    /// (through `$ref`s; the side whose values the other misses); empty
    /// for the schema itself.
    pub path: String,
    /// The innermost named component (`components/schemas`) on the way,
    /// as the new document names it when it has one.
    pub component: Option<String>,
    /// The values left out, or the keyword that could not be compared.
    pub what: What,
}

/// The kind of a [`Finding`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum What {
    /// Values the wider side misses, as a noun phrase ("`null`",
    /// "integers above 255", "objects without property `id`").
    Values(String),
    /// Something this module does not judge, said for a person (a keyword
    /// whose value changed, a reference that points nowhere).
    Unsupported(String),
    /// A property only the narrow side declares, in an object whose wide
    /// side takes any undeclared property: nothing is lost either way.
    Undeclared(String),
}

/// What `narrow` accepts and `wide` does not, each in its own document.
/// `new_is_wide` says which side is the new document, whose component
/// names the findings use.
pub(super) fn excess<'d>(
    (narrow_doc, narrow): (Doc<'d>, &'d Value),
    (wide_doc, wide): (Doc<'d>, &'d Value),
    new_is_wide: bool,
) -> Vec<Finding> {
    let mut walk = Walk {
        narrow_doc,
        wide_doc,
        new_is_wide,
        seen: HashSet::new(),
        steps: Rc::new(Cell::new(0)),
        path: Vec::new(),
        component: None,
        findings: Vec::new(),
    };
    walk.check(narrow, wide, None, 0);
    walk.findings
}

/// One comparison in progress.
#[derive(Clone)]
struct Walk<'d> {
    narrow_doc: Doc<'d>,
    wide_doc: Doc<'d>,
    new_is_wide: bool,
    /// Pairs of schemas (by address, and the type looked at) being or
    /// already compared without a finding: a recursive type meets itself
    /// again here, and is then taken as compatible so far.
    seen: HashSet<(usize, usize, Option<&'static str>)>,
    /// Steps taken so far, shared with trial walks (see [`MAX_STEPS`]).
    steps: Rc<Cell<usize>>,
    path: Vec<String>,
    component: Option<String>,
    findings: Vec<Finding>,
}

impl<'d> Walk<'d> {
    fn report(&mut self, what: What) {
        let path = self.path.iter().map(|segment| format!("/{}", escape(segment))).collect();
        let finding = Finding { path, component: self.component.clone(), what };
        if !self.findings.contains(&finding) {
            self.findings.push(finding);
        }
    }

    fn values(&mut self, phrase: impl Into<String>) {
        self.report(What::Values(phrase.into()));
    }

    fn unsupported(&mut self, why: impl Into<String>) {
        self.report(What::Unsupported(why.into()));
    }

    /// Runs `f` one path segment further down.
    fn at(&mut self, segment: impl Into<String>, f: impl FnOnce(&mut Self)) {
        self.path.push(segment.into());
        f(self);
        self.path.pop();
    }

    /// Checks that `wide` accepts every value `narrow` does, looking at
    /// `narrow`'s values of type `only` when given.
    fn check(&mut self, narrow: &'d Value, wide: &'d Value, only: Option<&'static str>, depth: usize) {
        if depth > MAX_DEPTH {
            self.unsupported(format!("nesting deeper than {MAX_DEPTH} levels is not compared"));
            return;
        }
        self.steps.set(self.steps.get() + 1);
        if self.steps.get() > MAX_STEPS {
            // Once, for the whole schema: every later step lands here.
            let what = What::Unsupported(format!("schemas too large to compare in {MAX_STEPS} steps"));
            let finding = Finding { path: String::new(), component: None, what };
            if !self.findings.contains(&finding) {
                self.findings.push(finding);
            }
            return;
        }
        let (narrow, narrow_name) = match self.narrow_doc.resolve(narrow) {
            Ok(resolved) => resolved,
            Err(reference) => {
                return self.unsupported(format!("`$ref` {reference} points nowhere (or only to itself)"));
            }
        };
        let (wide, wide_name) = match self.wide_doc.resolve(wide) {
            Ok(resolved) => resolved,
            Err(reference) => {
                return self.unsupported(format!("`$ref` {reference} points nowhere (or only to itself)"));
            }
        };
        let pair = (address(narrow), address(wide), only);
        if !self.seen.insert(pair) {
            return;
        }
        let findings = self.findings.len();
        let (new_name, old_name) = if self.new_is_wide { (wide_name, narrow_name) } else { (narrow_name, wide_name) };
        let outer = self.component.clone();
        if let Some(name) = new_name.or(old_name) {
            self.component = Some(name);
        }
        self.compare(narrow, wide, only, depth);
        self.component = outer;
        if self.findings.len() > findings {
            // Not clean: a trial of a union branch that meets this pair
            // again must see its findings too.
            self.seen.remove(&pair);
        }
    }

    fn compare(&mut self, narrow_value: &'d Value, wide_value: &'d Value, only: Option<&'static str>, depth: usize) {
        let (narrow, wide) = (narrow_value, wide_value);
        let wide = match wide {
            Value::Bool(true) => return,
            Value::Bool(false) if narrow == &Value::Bool(false) => return,
            Value::Bool(false) => return self.values("any value (the schema now accepts none)"),
            Value::Object(map) => map,
            _ => return self.unsupported("a schema that is neither an object nor a boolean cannot be compared"),
        };
        let narrow = match narrow {
            Value::Bool(false) => return,
            Value::Bool(true) => &EMPTY,
            Value::Object(map) => map,
            _ => return self.unsupported("a schema that is neither an object nor a boolean cannot be compared"),
        };
        if !restricts(wide) {
            return;
        }
        self.unknown_keywords(narrow, wide, depth);
        if let Some(values) = finite_values(narrow) {
            for value in values {
                if !admits(self.wide_doc, wide_value, value, depth) {
                    self.values(format!("the value `{value}`"));
                }
            }
            return;
        }
        if let Some((keyword, branches)) = branches(narrow) {
            // The narrow side's other keywords are left out: it is taken
            // as wider than it is, so this can only over-report.
            for (index, branch) in branches.iter().enumerate() {
                self.at(keyword, |walk| {
                    walk.at(index.to_string(), |walk| walk.check(branch, wide_value, only, depth + 1))
                });
            }
            return;
        }
        if let Some((keyword, branches)) = branches(wide) {
            self.fit_branches((narrow_value, narrow), wide, keyword, branches, only, depth);
            return;
        }
        self.compare_flat(narrow, wide, only, depth);
    }

    /// Reports keywords outside `COMPARED` and `ANNOTATIONS` (in
    /// `keywords`) whose values differ between the two schemas.
    fn unknown_keywords(&mut self, narrow: &'d Map<String, Value>, wide: &'d Map<String, Value>, depth: usize) {
        let keys: Vec<&String> = narrow.keys().chain(wide.keys().filter(|key| !narrow.contains_key(*key))).collect();
        for key in keys {
            if is_known(key) {
                continue;
            }
            let same = match (narrow.get(key), wide.get(key)) {
                (Some(a), Some(b)) => same_shape((self.narrow_doc, a), (self.wide_doc, b), &mut HashSet::new(), depth),
                _ => false,
            };
            if !same {
                self.unsupported(format!("`{key}` changed, and this checker does not compare it"));
            }
        }
    }

    /// `narrow` (not a union itself) must fit one of `wide`'s branches, and
    /// `wide`'s own keywords beside them. A narrow side of several types
    /// may spread over branches, one type each.
    fn fit_branches(
        &mut self,
        (narrow_value, narrow): (&'d Value, &'d Map<String, Value>),
        wide: &'d Map<String, Value>,
        keyword: &'static str,
        branches: &'d [Value],
        only: Option<&'static str>,
        depth: usize,
    ) {
        if wide.keys().any(|key| key != keyword && !is_annotation(key) && key != "oneOf" && key != "anyOf") {
            self.compare_flat(narrow, wide, only, depth);
        }
        let types: Vec<&'static str> = match only {
            Some(only) => vec![only],
            None => types_of(narrow),
        };
        let pieces: Vec<Option<&'static str>> = if types.len() > 1 && narrow.contains_key("type") {
            types.into_iter().map(Some).collect()
        } else {
            vec![only]
        };
        for piece in pieces {
            let mut best: Option<((bool, usize), Walk<'d>)> = None;
            for branch in branches {
                let mut trial = self.clone();
                trial.findings.clear();
                trial.check(narrow_value, branch, piece, depth + 1);
                if trial.findings.is_empty() {
                    self.seen = trial.seen;
                    best = None;
                    break;
                }
                // The branch to blame: one of the same JSON type if any
                // (a new object variant is not "a string other than ..."),
                // then the one missing the least.
                let score = (!self.shares_a_type(narrow, piece, branch), trial.findings.len());
                if best.as_ref().is_none_or(|(kept, _)| score < *kept) {
                    best = Some((score, trial));
                }
            }
            if let Some((_, trial)) = best {
                for finding in trial.findings {
                    if !self.findings.contains(&finding) {
                        self.findings.push(finding);
                    }
                }
            }
        }
    }

    /// Whether `branch` admits some value of the JSON types `narrow` (or
    /// its `piece`) has.
    fn shares_a_type(&self, narrow: &Map<String, Value>, piece: Option<&'static str>, branch: &'d Value) -> bool {
        let Ok((Value::Object(branch), _)) = self.wide_doc.resolve(branch) else { return true };
        let narrow_types = piece.map_or_else(|| types_of(narrow), |piece| vec![piece]);
        let branch_types: Vec<&str> = match finite_values(branch) {
            Some(values) => values.into_iter().map(json_type).collect(),
            None => types_of(branch),
        };
        narrow_types.iter().any(|ty| {
            branch_types.contains(ty)
                || (*ty == "integer" && branch_types.contains(&"number"))
                || (*ty == "number" && branch_types.contains(&"integer"))
        })
    }

    /// Compares two schemas without `enum`, `const`, `anyOf` or `oneOf` on
    /// the narrow side: type by type.
    fn compare_flat(
        &mut self,
        narrow: &'d Map<String, Value>,
        wide: &'d Map<String, Value>,
        only: Option<&'static str>,
        depth: usize,
    ) {
        if let Some(values) = finite_values(wide) {
            let listed: Vec<String> = values.iter().map(|value| format!("`{value}`")).collect();
            return self.values(format!("values other than {}", listed.join(", ")));
        }
        let wide_types = types_of(wide);
        let mut missing = Vec::new();
        for ty in types_of(narrow).into_iter().filter(|ty| only.is_none_or(|only| only == *ty)) {
            let covered = wide_types.contains(&ty) || (ty == "integer" && wide_types.contains(&"number"));
            if !covered {
                if ty == "number" && wide_types.contains(&"integer") {
                    self.values("numbers with a fraction");
                    self.numbers("integer", narrow, wide);
                } else {
                    missing.push(ty);
                }
                continue;
            }
            match ty {
                "integer" | "number" => self.numbers(ty, narrow, wide),
                "string" => self.strings(narrow, wide),
                "array" => self.arrays(narrow, wide, depth),
                "object" => self.objects(narrow, wide, depth),
                _ => {}
            }
        }
        if !missing.is_empty() {
            self.values(type_phrase(&missing));
        }
    }
}
