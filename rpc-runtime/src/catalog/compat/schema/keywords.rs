//! What a schema's keywords say, read the same way by the walk, the rules
//! of each type and `admits`: the keywords compared and the ones that only
//! describe, the types a schema admits, its finite values and union
//! branches, and JSON Pointer and URI fragment escapes.

use serde_json::{Map, Value};

/// Keywords the comparison judges.
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

pub(super) static TRUE: Value = Value::Bool(true);

pub(super) static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

pub(super) fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

pub(super) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || key.starts_with("x-")
}

pub(super) fn is_known(key: &str) -> bool {
    COMPARED.contains(&key) || is_annotation(key)
}

/// Whether a schema restricts values at all (`{}` and annotations alone
/// accept anything).
pub(super) fn restricts(schema: &Map<String, Value>) -> bool {
    schema.keys().any(|key| !is_annotation(key))
}

/// A JSON Pointer segment, escaped.
pub(super) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A URI fragment with its `%XX` escapes decoded (schemars percent-encodes
/// what a fragment cannot hold); malformed escapes are kept as they are.
pub(super) fn percent_decode(fragment: &str) -> String {
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
pub(super) fn finite_values(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    match (schema.get("enum"), schema.get("const")) {
        (_, Some(value)) => Some(vec![value]),
        (Some(Value::Array(values)), None) => Some(values.iter().collect()),
        _ => None,
    }
}

/// `anyOf` or `oneOf` with its branches. `oneOf`'s "exactly one" is read
/// as "at least one": schemars uses it for enum variants, which never
/// overlap.
pub(super) fn branches(schema: &Map<String, Value>) -> Option<(&'static str, &[Value])> {
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        schema.get(keyword).and_then(Value::as_array).map(|branches| (keyword, branches.as_slice()))
    })
}

/// The JSON types a schema admits (all of them without `type`); `number`
/// stands for `integer` too.
pub(super) fn types_of(schema: &Map<String, Value>) -> Vec<&'static str> {
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
pub(super) fn type_phrase(types: &[&str]) -> String {
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

/// The JSON Schema type of a value (`integer` for numbers without a
/// fraction, as JSON Schema counts them).
pub(super) fn json_type(value: &Value) -> &'static str {
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
