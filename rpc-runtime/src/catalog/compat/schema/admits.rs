//! Whether a schema accepts one value (the values of an `enum` or a
//! `const`, checked one by one), and whether two schemas are the same
//! shape (a keyword the walk does not compare is compatible only then).

use std::collections::HashSet;

use serde_json::Value;

use super::keywords::{TRUE, address, branches, finite_values, is_known, json_type, types_of};
use super::kinds::{Bound, bound, item_at, number_bounds, properties, required};
use super::{Doc, MAX_DEPTH};

/// Whether `schema` accepts `value`. Conservative: a keyword the comparison
/// does not know, or cannot evaluate (`pattern`, a string `format`),
/// counts as refusing.
pub(super) fn admits(doc: Doc<'_>, schema: &Value, value: &Value, depth: usize) -> bool {
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
/// side for keywords the comparison does not understand.
pub(super) fn same_shape(
    a: (Doc<'_>, &Value),
    b: (Doc<'_>, &Value),
    seen: &mut HashSet<(usize, usize)>,
    depth: usize,
) -> bool {
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
