//! The rules of each JSON type: what the narrow side's numbers, strings,
//! arrays and objects hold that the wide side's bounds, lengths, items and
//! properties leave out; and reading those bounds.

use serde_json::{Map, Value};

use super::keywords::{EMPTY, TRUE};
use super::{Walk, What};

impl<'d> Walk<'d> {
    pub(super) fn numbers(&mut self, ty: &'static str, narrow: &Map<String, Value>, wide: &Map<String, Value>) {
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

    pub(super) fn strings(&mut self, narrow: &Map<String, Value>, wide: &Map<String, Value>) {
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

    pub(super) fn arrays(&mut self, narrow: &'d Map<String, Value>, wide: &'d Map<String, Value>, depth: usize) {
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

    pub(super) fn objects(&mut self, narrow: &'d Map<String, Value>, wide: &'d Map<String, Value>, depth: usize) {
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

/// One end of a range: its value, whether the value itself is out, and the
/// text to show (the JSON number as written, exact even past `f64`).
#[derive(Debug, Clone)]
pub(super) struct Bound {
    pub(super) value: f64,
    pub(super) exclusive: bool,
    pub(super) text: String,
}

pub(super) fn bound(schema: &Map<String, Value>, keyword: &str, exclusive: bool) -> Option<Bound> {
    let number = schema.get(keyword)?;
    Some(Bound { value: number.as_f64()?, exclusive, text: number.to_string() })
}

/// The range of integer formats schemars writes without `minimum` or
/// `maximum` (`int32` has none of its own, yet refuses 2^31).
pub(super) fn format_range(format: &str) -> Option<(&'static str, &'static str)> {
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
pub(super) fn tighter(a: Option<Bound>, b: Option<Bound>, low: bool) -> Option<Bound> {
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
pub(super) fn number_bounds(schema: &Map<String, Value>, ty: &str) -> (Option<Bound>, Option<Bound>) {
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
pub(super) fn lower_excess(noun: &str, narrow: Option<Bound>, wide: Option<Bound>) -> Option<String> {
    let wide = wide?;
    let covered = narrow
        .is_some_and(|own| own.value > wide.value || (own.value == wide.value && (own.exclusive || !wide.exclusive)));
    let limit = &wide.text;
    (!covered)
        .then(|| if wide.exclusive { format!("{noun} of {limit} or less") } else { format!("{noun} below {limit}") })
}

/// The numbers above `wide`'s upper bound that `narrow` still admits.
pub(super) fn upper_excess(noun: &str, narrow: Option<Bound>, wide: Option<Bound>) -> Option<String> {
    let wide = wide?;
    let covered = narrow
        .is_some_and(|own| own.value < wide.value || (own.value == wide.value && (own.exclusive || !wide.exclusive)));
    let limit = &wide.text;
    (!covered)
        .then(|| if wide.exclusive { format!("{noun} of {limit} or more") } else { format!("{noun} above {limit}") })
}

/// How many positions a tuple schema spells out (`prefixItems`, or
/// draft-07's array form of `items`).
pub(super) fn tuple_len(schema: &Map<String, Value>) -> usize {
    let prefix = schema.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
    let items = schema.get("items").and_then(Value::as_array).map_or(0, Vec::len);
    prefix.max(items)
}

/// The schema of the item at `index`, and the keyword it comes from.
pub(super) fn item_at(schema: &Map<String, Value>, index: usize) -> (&Value, &'static str) {
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

pub(super) fn required(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |names| names.iter().filter_map(Value::as_str).collect())
}

pub(super) fn properties(schema: &Map<String, Value>) -> &Map<String, Value> {
    schema.get("properties").and_then(Value::as_object).unwrap_or(&EMPTY)
}
