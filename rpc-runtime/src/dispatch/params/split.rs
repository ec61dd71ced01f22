//! The split path: each parameter's text is found first, one slot per
//! declared parameter, then decoded on demand (in any order). Handlers
//! registered by hand always take it; generated ones when the single pass
//! gives up. It checks everything the single pass leaves to it: the shape
//! the method takes, the number of positional params, unknown and
//! repeated names.
//!
//! An array is split by a scanner of our own rather than by serde_json:
//! the text is a `RawValue`, valid JSON already, so finding the top-level
//! commas is enough, and parsing every element here only to parse it
//! again when it is decoded would double the cost of the call. An object
//! is walked with serde_json, whose key reading (escapes included) it
//! needs.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::errors;
use crate::spec::{MethodSpec, ParamStructure};
use crate::wire::ErrorObject;

/// Most methods declare few parameters: up to this many are split without
/// a heap allocation.
const INLINE_SLOTS: usize = 6;

/// One slot per declared parameter (its JSON text, `None` when absent),
/// inline when there are few.
pub(super) enum SlotBuf<'a> {
    Inline([Option<&'a str>; INLINE_SLOTS]),
    Heap(Vec<Option<&'a str>>),
}

impl<'a> SlotBuf<'a> {
    /// `len` empty slots.
    pub(super) fn new(len: usize) -> Self {
        if len <= INLINE_SLOTS { SlotBuf::Inline([None; INLINE_SLOTS]) } else { SlotBuf::Heap(vec![None; len]) }
    }

    /// Slot `index`, which must be below the length given to `new`.
    fn slot(&mut self, index: usize) -> &mut Option<&'a str> {
        match self {
            SlotBuf::Inline(slots) => &mut slots[index],
            SlotBuf::Heap(slots) => &mut slots[index],
        }
    }

    /// The text of parameter `index`, `None` when absent.
    pub(super) fn get(&self, index: usize) -> Option<&'a str> {
        match self {
            SlotBuf::Inline(slots) => slots[index],
            SlotBuf::Heap(slots) => slots[index],
        }
    }
}

/// Splits `raw` (the request's `params`) by position or by name, as
/// `spec` allows.
pub(super) fn split<'a>(raw: &'a RawValue, spec: &'static MethodSpec) -> Result<SlotBuf<'a>, ErrorObject> {
    match raw.get().as_bytes().first() {
        Some(b'[') if spec.structure == ParamStructure::ByName => Err(errors::structure(spec, "an array")),
        Some(b'[') => split_positional(raw, spec),
        Some(b'{') if spec.structure == ParamStructure::ByPosition => Err(errors::structure(spec, "an object")),
        Some(b'{') => split_named(raw, spec),
        // The engine rejects other shapes with -32600 before we get here.
        _ => Err(ErrorObject::invalid_params("params must be an array or an object")),
    }
}

fn split_positional<'a>(raw: &'a RawValue, spec: &'static MethodSpec) -> Result<SlotBuf<'a>, ErrorObject> {
    let declared = spec.params.len();
    let mut slots = SlotBuf::new(declared);
    let given = for_each_element(raw.get(), |index, element| {
        if index < declared {
            *slots.slot(index) = Some(element);
        }
    })
    .ok_or_else(errors::malformed_array)?;
    if given > declared && !spec.allow_extra {
        return Err(errors::too_many(spec, given));
    }
    Ok(slots)
}

/// Calls `each(index, text)` for every element of a JSON array and returns
/// how many there are (`None` if `array` is not an array).
///
/// `array` is the text of a `RawValue`, so it is valid JSON already: this
/// only has to find the top-level commas, skipping over strings and
/// counting brackets. Nesting depth is a counter, not recursion.
fn for_each_element<'a>(array: &'a str, mut each: impl FnMut(usize, &'a str)) -> Option<usize> {
    let array = array.trim_ascii();
    let inner = array.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim_ascii().is_empty() {
        return Some(0);
    }
    let bytes = inner.as_bytes();
    let (mut depth, mut start, mut count, mut i) = (0usize, 0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // To the closing quote; an escape is a backslash and one
                // ASCII character (`\uXXXX` continues with hex digits).
                // Strings in params are mostly short: a plain loop beats
                // memchr's setup here.
                i += 1;
                while let Some(&byte) = bytes.get(i) {
                    match byte {
                        b'"' => break,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                each(count, inner[start..i].trim_ascii());
                count += 1;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    each(count, inner[start..].trim_ascii());
    Some(count + 1)
}

/// Splits named params (an object): an unknown name (unless `spec`
/// allows extra params) or a repeated one is refused.
pub(super) fn split_named<'a>(raw: &'a RawValue, spec: &'static MethodSpec) -> Result<SlotBuf<'a>, ErrorObject> {
    /// Stops the walk with an error of ours, kept in `problem`.
    struct Named<'s> {
        spec: &'s MethodSpec,
        problem: &'s mut Option<ErrorObject>,
    }
    impl<'de> Visitor<'de> for Named<'_> {
        type Value = SlotBuf<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of params")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut slots = SlotBuf::new(self.spec.params.len());
            while let Some(key) = map.next_key_seed(KeySeed)? {
                match self.spec.params.iter().position(|p| p.name == key) {
                    Some(index) => {
                        let value = map.next_value::<&'de RawValue>()?;
                        if slots.slot(index).replace(value.get()).is_some() {
                            *self.problem = Some(errors::given_twice(self.spec, &key));
                            return Err(serde::de::Error::custom("stop"));
                        }
                    }
                    None if self.spec.allow_extra => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    None => {
                        *self.problem = Some(errors::unknown_param(self.spec, &key));
                        return Err(serde::de::Error::custom("stop"));
                    }
                }
            }
            Ok(slots)
        }
    }
    let mut problem = None;
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let result = de.deserialize_map(Named { spec, problem: &mut problem });
    match (result, problem) {
        (_, Some(problem)) => Err(problem),
        (Ok(slots), None) => Ok(slots),
        (Err(err), None) => Err(ErrorObject::invalid_params(format!("malformed params: {err}"))),
    }
}

/// A map key that borrows when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(CowStr)
    }
}

/// Visits a JSON string as a `Cow<str>`, borrowed when possible.
struct CowStr;

impl<'de> Visitor<'de> for CowStr {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elements `for_each_element` finds, next to serde_json's own split.
    fn both_ways(array: &str) -> (Vec<String>, Vec<String>) {
        let mut ours = Vec::new();
        let count = for_each_element(array, |index, text| {
            assert_eq!(index, ours.len());
            ours.push(text.to_owned());
        });
        assert_eq!(count, Some(ours.len()));
        let theirs: Vec<&RawValue> = serde_json::from_str(array).unwrap();
        (ours, theirs.iter().map(|raw| raw.get().to_owned()).collect())
    }

    #[test]
    fn elements_are_split_like_serde_json_does() {
        for array in [
            "[]",
            "[ ]",
            "[1]",
            "[ 1 , 2 ,3 ]",
            r#"["a,b", "c\"d,", "e\\", "\\\"", "\u00e9,\n"]"#,
            r#"[[1,[2,3]],{"k":[4,{"l":","}],"m":"]"},"}",null]"#,
            "[\"héllo, wörld\", {\"ключ\": \"значение, да\"}, -1.5e3, true, false]",
            "\n[\t{}\n,\r[] ]",
        ] {
            let (ours, theirs) = both_ways(array);
            assert_eq!(ours, theirs, "{array}");
        }
    }

    #[test]
    fn not_an_array_is_refused() {
        assert_eq!(for_each_element("{\"a\":1}", |_, _| {}), None);
        assert_eq!(for_each_element("\"[1]\"", |_, _| {}), None);
    }
}
