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

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use serde_json::{Map, Value};

/// Nesting deeper than this is reported instead of followed, so hostile
/// documents cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Schemas that take more steps than this to compare (unions of unions
/// multiply the work) are reported instead of compared to the end.
const MAX_STEPS: usize = 10_000;

/// Keywords this module compares.
const COMPARED: &[&str] = &[
    "$ref",
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "additionalItems",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
];

/// Keywords that describe but never restrict values (and the places where
/// a schema keeps its own definitions, reached only through `$ref`).
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
    "$id",
    "definitions",
    "$defs",
];

/// The JSON types, as JSON Schema names them (`integer` is a subset of
/// `number`).
const TYPES: [&str; 7] = ["null", "boolean", "integer", "number", "string", "array", "object"];

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

    /// Reports keywords outside [`COMPARED`] and [`ANNOTATIONS`] whose
    /// values differ between the two schemas.
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

    fn numbers(&mut self, ty: &'static str, narrow: &Map<String, Value>, wide: &Map<String, Value>) {
        let noun = if ty == "integer" { "integers" } else { "numbers" };
        let (narrow_low, narrow_high) = number_bounds(narrow, ty);
        let (wide_low, wide_high) = number_bounds(wide, ty);
        if let Some(phrase) = lower_excess(noun, narrow_low, wide_low) {
            self.values(phrase);
        }
        if let Some(phrase) = upper_excess(noun, narrow_high, wide_high) {
            self.values(phrase);
        }
        if let Some(step) = wide.get("multipleOf").and_then(Value::as_f64) {
            let divides =
                narrow.get("multipleOf").and_then(Value::as_f64).is_some_and(|own| (own / step).fract() == 0.0);
            if !divides {
                self.values(format!("{noun} that are not multiples of {step}"));
            }
        }
    }

    fn strings(&mut self, narrow: &Map<String, Value>, wide: &Map<String, Value>) {
        let (narrow_short, narrow_long) = (bound(narrow, "minLength", false), bound(narrow, "maxLength", false));
        let (wide_short, wide_long) = (bound(wide, "minLength", false), bound(wide, "maxLength", false));
        if let Some(min) = wide_short.filter(|min| narrow_short.as_ref().is_none_or(|own| own.value < min.value)) {
            self.values(format!("strings shorter than {} characters", min.text));
        }
        if let Some(max) = wide_long.filter(|max| narrow_long.as_ref().is_none_or(|own| own.value > max.value)) {
            self.values(format!("strings longer than {} characters", max.text));
        }
        for (keyword, phrase) in [("pattern", "matching"), ("format", "in format")] {
            if let Some(wanted) = wide.get(keyword)
                && narrow.get(keyword) != Some(wanted)
            {
                self.values(format!("strings not {phrase} {wanted}"));
            }
        }
    }

    fn arrays(&mut self, narrow: &'d Map<String, Value>, wide: &'d Map<String, Value>, depth: usize) {
        let (narrow_min, narrow_max) = (bound(narrow, "minItems", false), bound(narrow, "maxItems", false));
        let (wide_min, wide_max) = (bound(wide, "minItems", false), bound(wide, "maxItems", false));
        if let Some(min) = wide_min.filter(|min| narrow_min.as_ref().is_none_or(|own| own.value < min.value)) {
            self.values(format!("arrays of fewer than {} items", min.text));
        }
        if let Some(max) = wide_max.filter(|max| narrow_max.as_ref().is_none_or(|own| own.value > max.value)) {
            self.values(format!("arrays of more than {} items", max.text));
        }
        if wide.get("uniqueItems") == Some(&Value::Bool(true)) && narrow.get("uniqueItems") != Some(&Value::Bool(true))
        {
            self.values("arrays with repeated items");
        }
        // Each position of a tuple on either side, then the rest (index
        // `positions`, which stands for every later one).
        let positions = tuple_len(narrow).max(tuple_len(wide));
        for index in 0..=positions {
            if narrow_max.as_ref().is_some_and(|max| max.value <= index as f64) {
                break;
            }
            let (narrow_item, _) = item_at(narrow, index);
            let (wide_item, segment) = item_at(wide, index);
            if index < positions {
                self.at(segment, |walk| {
                    walk.at(index.to_string(), |walk| walk.check(narrow_item, wide_item, None, depth + 1))
                });
            } else {
                self.at(segment, |walk| walk.check(narrow_item, wide_item, None, depth + 1));
            }
        }
    }

    fn objects(&mut self, narrow: &'d Map<String, Value>, wide: &'d Map<String, Value>, depth: usize) {
        let (narrow_min, narrow_max) = (bound(narrow, "minProperties", false), bound(narrow, "maxProperties", false));
        let (wide_min, wide_max) = (bound(wide, "minProperties", false), bound(wide, "maxProperties", false));
        if let Some(min) = wide_min.filter(|min| narrow_min.as_ref().is_none_or(|own| own.value < min.value)) {
            self.values(format!("objects of fewer than {} properties", min.text));
        }
        if let Some(max) = wide_max.filter(|max| narrow_max.as_ref().is_none_or(|own| own.value > max.value)) {
            self.values(format!("objects of more than {} properties", max.text));
        }
        let narrow_required = required(narrow);
        for name in required(wide) {
            if !narrow_required.contains(&name) {
                self.values(format!("objects without property `{name}`"));
            }
        }
        let narrow_properties = properties(narrow);
        let wide_properties = properties(wide);
        let narrow_rest = narrow.get("additionalProperties");
        let wide_rest = wide.get("additionalProperties");
        let mut names: Vec<&String> = narrow_properties.keys().collect();
        names.extend(wide_properties.keys().filter(|name| !narrow_properties.contains_key(*name)));
        for name in names {
            let narrow_property = match (narrow_properties.get(name), narrow_rest) {
                (Some(schema), _) | (None, Some(schema)) => schema,
                // A property the narrow side never declared, in an object
                // that did not say what other properties may be: not part
                // of that contract (serde ignores unknown fields), so a
                // newly declared property does not narrow it.
                (None, None) => continue,
            };
            if !wide_properties.contains_key(name) && wide_rest.is_none() {
                // Declared on the narrow side only, and the wide side takes
                // any other property: no value is lost, but a reader of the
                // documents sees a property come or go.
                self.at("properties", |walk| {
                    walk.at(name.as_str(), |walk| walk.report(What::Undeclared(name.clone())))
                });
                continue;
            }
            let wide_property = wide_properties.get(name).or(wide_rest).unwrap_or(&TRUE);
            if wide_property == &Value::Bool(false) && narrow_property != &Value::Bool(false) {
                self.values(format!("objects with property `{name}`"));
                continue;
            }
            self.at("properties", |walk| {
                walk.at(name.as_str(), |walk| walk.check(narrow_property, wide_property, None, depth + 1))
            });
        }
        let narrow_rest = narrow_rest.unwrap_or(&TRUE);
        let wide_rest = wide_rest.unwrap_or(&TRUE);
        if wide_rest == &Value::Bool(false) && narrow_rest != &Value::Bool(false) {
            self.values("objects with properties not listed in `properties`");
        } else {
            self.at("additionalProperties", |walk| walk.check(narrow_rest, wide_rest, None, depth + 1));
        }
    }
}

static TRUE: Value = Value::Bool(true);

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || key.starts_with("x-")
}

fn is_known(key: &str) -> bool {
    COMPARED.contains(&key) || is_annotation(key)
}

/// Whether a schema restricts values at all (`{}` and annotations alone
/// accept anything).
fn restricts(schema: &Map<String, Value>) -> bool {
    schema.keys().any(|key| !is_annotation(key))
}

/// A JSON Pointer segment, escaped.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A URI fragment with its `%XX` escapes decoded (schemars percent-encodes
/// what a fragment cannot hold); malformed escapes are kept as they are.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| fragment.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The values of `enum` or `const`: the schema accepts no others.
fn finite_values(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    match (schema.get("enum"), schema.get("const")) {
        (_, Some(value)) => Some(vec![value]),
        (Some(Value::Array(values)), None) => Some(values.iter().collect()),
        _ => None,
    }
}

/// `anyOf` or `oneOf` with its branches. `oneOf`'s "exactly one" is read
/// as "at least one": schemars uses it for enum variants, which never
/// overlap.
fn branches(schema: &Map<String, Value>) -> Option<(&'static str, &[Value])> {
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        schema.get(keyword).and_then(Value::as_array).map(|branches| (keyword, branches.as_slice()))
    })
}

/// The JSON types a schema admits (all of them without `type`); `number`
/// stands for `integer` too.
fn types_of(schema: &Map<String, Value>) -> Vec<&'static str> {
    let named = |name: &str| TYPES.iter().copied().find(|ty| *ty == name);
    let mut types: Vec<&'static str> = match schema.get("type") {
        Some(Value::String(name)) => named(name).into_iter().collect(),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).filter_map(named).collect(),
        _ => TYPES.to_vec(),
    };
    if types.contains(&"number") {
        types.retain(|ty| *ty != "integer");
    }
    types
}

/// "`null`", "strings", "`null`, strings and arrays".
fn type_phrase(types: &[&str]) -> String {
    let nouns: Vec<&str> = types
        .iter()
        .map(|ty| match *ty {
            "null" => "`null`",
            "boolean" => "booleans",
            "integer" => "integers",
            "number" => "numbers",
            "string" => "strings",
            "array" => "arrays",
            _ => "objects",
        })
        .collect();
    match nouns.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => nouns.concat(),
    }
}

/// One end of a range: its value, whether the value itself is out, and the
/// text to show (the JSON number as written, exact even past `f64`).
#[derive(Debug, Clone)]
struct Bound {
    value: f64,
    exclusive: bool,
    text: String,
}

fn bound(schema: &Map<String, Value>, keyword: &str, exclusive: bool) -> Option<Bound> {
    let number = schema.get(keyword)?;
    Some(Bound { value: number.as_f64()?, exclusive, text: number.to_string() })
}

/// The range of integer formats schemars writes without `minimum` or
/// `maximum` (`int32` has none of its own, yet refuses 2^31).
fn format_range(format: &str) -> Option<(&'static str, &'static str)> {
    Some(match format {
        "int8" => ("-128", "127"),
        "int16" => ("-32768", "32767"),
        "int32" => ("-2147483648", "2147483647"),
        "int64" => ("-9223372036854775808", "9223372036854775807"),
        "uint8" => ("0", "255"),
        "uint16" => ("0", "65535"),
        "uint32" => ("0", "4294967295"),
        "uint64" => ("0", "18446744073709551615"),
        "int128" => ("-170141183460469231731687303715884105728", "170141183460469231731687303715884105727"),
        "uint128" => ("0", "340282366920938463463374607431768211455"),
        _ => return None,
    })
}

/// The tighter of two lower (`low`) or upper bounds.
fn tighter(a: Option<Bound>, b: Option<Bound>, low: bool) -> Option<Bound> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let a_wins = if low { a.value > b.value } else { a.value < b.value };
            Some(if a_wins || (a.value == b.value && a.exclusive) { a } else { b })
        }
        (a, b) => a.or(b),
    }
}

/// Lower and upper bounds of a number schema: `minimum`/`maximum`, the
/// exclusive ones (draft-07 numbers, or draft-04 booleans), and for
/// integers the range of their `format`.
fn number_bounds(schema: &Map<String, Value>, ty: &str) -> (Option<Bound>, Option<Bound>) {
    let flag = |keyword: &str| schema.get(keyword) == Some(&Value::Bool(true));
    let mut low = bound(schema, "minimum", flag("exclusiveMinimum"));
    let mut high = bound(schema, "maximum", flag("exclusiveMaximum"));
    low = tighter(low, bound(schema, "exclusiveMinimum", true), true);
    high = tighter(high, bound(schema, "exclusiveMaximum", true), false);
    if let Some((min, max)) =
        (ty == "integer").then(|| schema.get("format").and_then(Value::as_str)).flatten().and_then(format_range)
    {
        let parse = |text: &str| Bound { value: text.parse().unwrap_or(0.0), exclusive: false, text: text.to_owned() };
        low = tighter(low, Some(parse(min)), true);
        high = tighter(high, Some(parse(max)), false);
    }
    (low, high)
}

/// The numbers below `wide`'s lower bound that `narrow` still admits.
fn lower_excess(noun: &str, narrow: Option<Bound>, wide: Option<Bound>) -> Option<String> {
    let wide = wide?;
    let covered = narrow
        .is_some_and(|own| own.value > wide.value || (own.value == wide.value && (own.exclusive || !wide.exclusive)));
    let limit = &wide.text;
    (!covered)
        .then(|| if wide.exclusive { format!("{noun} of {limit} or less") } else { format!("{noun} below {limit}") })
}

/// The numbers above `wide`'s upper bound that `narrow` still admits.
fn upper_excess(noun: &str, narrow: Option<Bound>, wide: Option<Bound>) -> Option<String> {
    let wide = wide?;
    let covered = narrow
        .is_some_and(|own| own.value < wide.value || (own.value == wide.value && (own.exclusive || !wide.exclusive)));
    let limit = &wide.text;
    (!covered)
        .then(|| if wide.exclusive { format!("{noun} of {limit} or more") } else { format!("{noun} above {limit}") })
}

/// How many positions a tuple schema spells out (`prefixItems`, or
/// draft-07's array form of `items`).
fn tuple_len(schema: &Map<String, Value>) -> usize {
    let prefix = schema.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
    let items = schema.get("items").and_then(Value::as_array).map_or(0, Vec::len);
    prefix.max(items)
}

/// The schema of the item at `index`, and the keyword it comes from.
fn item_at(schema: &Map<String, Value>, index: usize) -> (&Value, &'static str) {
    if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array) {
        return match prefix.get(index) {
            Some(item) => (item, "prefixItems"),
            None => (schema.get("items").unwrap_or(&TRUE), "items"),
        };
    }
    match schema.get("items") {
        Some(Value::Array(tuple)) => match tuple.get(index) {
            Some(item) => (item, "items"),
            None => (schema.get("additionalItems").unwrap_or(&TRUE), "additionalItems"),
        },
        Some(items) => (items, "items"),
        None => (&TRUE, "items"),
    }
}

fn required(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |names| names.iter().filter_map(Value::as_str).collect())
}

fn properties(schema: &Map<String, Value>) -> &Map<String, Value> {
    schema.get("properties").and_then(Value::as_object).unwrap_or(&EMPTY)
}

/// The JSON Schema type of a value (`integer` for numbers without a
/// fraction, as JSON Schema counts them).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(number) if number.as_f64().is_some_and(|float| float.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `schema` accepts `value`. Conservative: a keyword this module
/// does not know, or cannot evaluate (`pattern`, a string `format`),
/// counts as refusing.
fn admits(doc: Doc<'_>, schema: &Value, value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Ok((schema, _)) = doc.resolve(schema) else { return false };
    let schema = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(map) => map,
        _ => return false,
    };
    if schema.keys().any(|key| !is_known(key)) || schema.contains_key("pattern") {
        return false;
    }
    if finite_values(schema).is_some_and(|values| !values.contains(&value)) {
        return false;
    }
    if let Some((_, branches)) = branches(schema)
        && !branches.iter().any(|branch| admits(doc, branch, value, depth + 1))
    {
        return false;
    }
    let ty = json_type(value);
    let types = types_of(schema);
    if !(types.contains(&ty) || (ty == "integer" && types.contains(&"number"))) {
        return false;
    }
    let within = |count: f64, low: Option<Bound>, high: Option<Bound>| {
        low.is_none_or(|low| count > low.value || (count == low.value && !low.exclusive))
            && high.is_none_or(|high| count < high.value || (count == high.value && !high.exclusive))
    };
    match value {
        Value::Number(number) => {
            let (low, high) = number_bounds(schema, ty);
            let step = schema.get("multipleOf").and_then(Value::as_f64);
            let float = number.as_f64().unwrap_or(f64::NAN);
            within(float, low, high) && step.is_none_or(|step| (float / step).fract() == 0.0)
        }
        Value::String(text) => {
            let count = text.chars().count() as f64;
            !schema.contains_key("format")
                && within(count, bound(schema, "minLength", false), bound(schema, "maxLength", false))
        }
        Value::Array(items) => {
            let count = items.len() as f64;
            within(count, bound(schema, "minItems", false), bound(schema, "maxItems", false))
                && items.iter().enumerate().all(|(index, item)| admits(doc, item_at(schema, index).0, item, depth + 1))
                && (schema.get("uniqueItems") != Some(&Value::Bool(true))
                    || items.iter().enumerate().all(|(index, item)| !items[..index].contains(item)))
        }
        Value::Object(members) => {
            let count = members.len() as f64;
            let declared = properties(schema);
            let rest = schema.get("additionalProperties").unwrap_or(&TRUE);
            within(count, bound(schema, "minProperties", false), bound(schema, "maxProperties", false))
                && required(schema).iter().all(|name| members.contains_key(*name))
                && members
                    .iter()
                    .all(|(name, member)| admits(doc, declared.get(name).unwrap_or(rest), member, depth + 1))
        }
        _ => true,
    }
}

/// Whether two schemas are the same once `$ref`s are followed (component
/// names are not on the wire); annotations count too, to stay on the safe
/// side for keywords this module does not understand.
fn same_shape(a: (Doc<'_>, &Value), b: (Doc<'_>, &Value), seen: &mut HashSet<(usize, usize)>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let (Ok((left, _)), Ok((right, _))) = (a.0.resolve(a.1), b.0.resolve(b.1)) else { return false };
    if !seen.insert((address(left), address(right))) {
        return true;
    }
    match (left, right) {
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left.iter().all(|(key, value)| {
                    right.get(key).is_some_and(|other| same_shape((a.0, value), (b.0, other), seen, depth + 1))
                })
        }
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len()
                && left.iter().zip(right).all(|(value, other)| same_shape((a.0, value), (b.0, other), seen, depth + 1))
        }
        _ => left == right,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Findings of `narrow` against `wide`, both in `doc`.
    fn lost(doc: &Value, narrow: &Value, wide: &Value) -> Vec<Finding> {
        excess((Doc::new(doc), narrow), (Doc::new(doc), wide), true)
    }

    #[test]
    fn a_recursive_type_compares_with_itself_and_a_renamed_copy() {
        let old = json!({"components": {"schemas": {
            "List": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/components/schemas/List"}, {"type": "null"}]}}}
        }}});
        let new = json!({"components": {"schemas": {
            "Chain": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/components/schemas/Chain"}, {"type": "null"}]}}}
        }}});
        let (old_ref, new_ref) =
            (json!({"$ref": "#/components/schemas/List"}), json!({"$ref": "#/components/schemas/Chain"}));
        assert_eq!(lost(&old, &old_ref, &old_ref), []);
        assert_eq!(excess((Doc::new(&old), &old_ref), (Doc::new(&new), &new_ref), true), []);
        assert_eq!(excess((Doc::new(&new), &new_ref), (Doc::new(&old), &old_ref), false), []);
    }

    #[test]
    fn a_change_deep_in_a_recursive_type_is_found() {
        let doc = json!({"components": {"schemas": {
            "A": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/A"}, "n": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/B"}, "n": {"type": "string"}}}
        }}});
        let found = lost(&doc, &json!({"$ref": "#/components/schemas/A"}), &json!({"$ref": "#/components/schemas/B"}));
        assert_eq!(found[0].what, What::Values("integers".into()));
        assert_eq!((found[0].path.as_str(), found[0].component.as_deref()), ("/properties/n", Some("B")));
    }

    #[test]
    fn references_are_percent_and_pointer_decoded() {
        let doc = json!({"components": {"schemas": {"Pair<A/B>": {"type": "string"}}}});
        let reference = json!({"$ref": "#/components/schemas/Pair%3CA~1B%3E"});
        assert_eq!(lost(&doc, &reference, &json!({"type": "string"})), []);
        let found = lost(&doc, &reference, &json!({"type": "integer"}));
        assert_eq!(found[0].component.as_deref(), Some("Pair<A/B>"));
        assert_eq!(found[0].what, What::Values("strings".into()));
        let dangling = lost(&doc, &json!({"$ref": "#/components/schemas/Missing"}), &json!({"type": "string"}));
        assert!(matches!(&dangling[0].what, What::Unsupported(why) if why.contains("Missing")), "{dangling:?}");
    }

    #[test]
    fn deep_nesting_is_reported_not_followed() {
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "array", "items": deep});
        }
        let found = lost(&json!({}), &deep, &json!({"type": "array", "items": {"type": "array"}}));
        assert_eq!(found, []);
        let found = lost(&json!({}), &deep, &deep.clone());
        assert!(
            matches!(&found[..], [Finding { what: What::Unsupported(why), .. }] if why.contains("nesting")),
            "{found:?}"
        );
    }

    #[test]
    fn unions_of_unions_are_compared_in_bounded_time() {
        let mut wide = json!({"type": "integer"});
        let mut narrow = json!({"type": "string"});
        for _ in 0..10 {
            wide = json!({"anyOf": [wide.clone(), {"type": "array", "items": wide.clone()}, {"type": "array", "items": wide}]});
            narrow = json!({"type": "array", "items": narrow});
        }
        // Nested arrays of strings fit no branch: found, in bounded time
        // (a step budget stops worse inputs).
        let found = lost(&json!({}), &narrow, &wide);
        assert!(!found.is_empty());
    }

    #[test]
    fn a_schema_past_the_step_budget_is_reported() {
        let properties: Map<String, Value> =
            (0..MAX_STEPS + 1).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
        let object = json!({"type": "object", "properties": properties});
        let found = lost(&json!({}), &object, &object.clone());
        assert!(
            matches!(&found[..], [Finding { what: What::Unsupported(why), .. }] if why.contains("steps")),
            "{found:?}"
        );
    }

    #[test]
    fn integer_formats_bound_ranges() {
        let doc = json!({});
        let found =
            lost(&doc, &json!({"type": "integer", "format": "uint16"}), &json!({"type": "integer", "format": "uint8"}));
        assert_eq!(found[0].what, What::Values("integers above 255".into()));
        let found =
            lost(&doc, &json!({"type": "integer", "format": "uint8"}), &json!({"type": "integer", "minimum": 1}));
        assert_eq!(found[0].what, What::Values("integers below 1".into()));
        let found =
            lost(&doc, &json!({"type": "number", "maximum": 10}), &json!({"type": "number", "exclusiveMaximum": 10}));
        assert_eq!(found[0].what, What::Values("numbers of 10 or more".into()));
    }

    #[test]
    fn a_type_list_may_spread_over_union_branches() {
        let doc = json!({});
        let narrow = json!({"type": ["string", "null"]});
        assert_eq!(lost(&doc, &narrow, &json!({"anyOf": [{"type": "null"}, {"type": "string"}]})), []);
        let found = lost(&doc, &narrow, &json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]}));
        assert_eq!(found[0].what, What::Values("`null`".into()));
    }
}
