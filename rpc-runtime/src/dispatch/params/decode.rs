//! Decoding one parameter from its own text, found by the split path:
//! how handlers registered by hand read every parameter, and how a
//! generated handler reads one that the single pass did not. Splitting
//! first is what puts the errors in order: too many params or an unknown
//! name is answered before anything about the parameter itself.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::{Params, Slots, errors, split};
use crate::dispatch::strict;
use crate::wire::ErrorObject;

impl<'a> Params<'a> {
    /// The text of parameter `index` (`None` when absent), splitting the
    /// params if they are not yet: "too many params", an unknown name and
    /// the like come before anything about the parameter itself. Params
    /// taken whole that are an array, where `probe` says the type reads
    /// itself from an object only, are refused.
    pub(super) fn find(&self, index: usize, probe: Option<fn() -> bool>) -> Result<Option<&'a str>, ErrorObject> {
        let text = match &self.slots {
            Slots::Split(slots) => slots.get(index),
            Slots::Whole => self.raw.map(RawValue::get),
            Slots::Absent => None,
            Slots::Stream(_) | Slots::Unsplit => match self.raw {
                Some(raw) => split::split(raw, self.spec)?.get(index),
                None => None,
            },
        };
        match text {
            // serde also reads a struct from an array of its fields, in
            // order; the catalog describes such params as an object
            // (`by-name`), so an array is refused as the catalog says.
            Some(text) if self.spec.whole && text.starts_with('[') && probe.is_some_and(|asks| asks()) => {
                Err(errors::structure(self.spec, "an array"))
            }
            _ => Ok(text),
        }
    }

    /// Decodes parameter `index` from `found`, what [`Params::find`] says
    /// of it (or `Ok(None)` when the single pass found it absent). `failed`
    /// is the error of the single pass, which read this same text (each
    /// value is where the split finds it) and could not decode it: unless
    /// the split has an error to put first, that is the answer, and the
    /// text is not decoded again.
    // The one function per `T` off the single pass. Out of line when
    // optimizing, so that each generated handler carries only the single
    // pass; inlined unoptimized, where a function of its own would be
    // compiled in a codegen unit of its own in each crate that decodes
    // params. Written with `match`, not `?` or closures, which would be
    // code of their own per `T` too.
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline(always))]
    pub(super) fn decode_slot<T: DeserializeOwned>(
        &self,
        index: usize,
        found: Result<Option<&str>, ErrorObject>,
        failed: Option<serde_json::Error>,
    ) -> Result<T, ErrorObject> {
        let param = &self.spec.params[index];
        let text = match found {
            Ok(Some(text)) => text,
            // An absent optional parameter (or absent params taken whole)
            // decodes from `null`, as `Option<T>` does to `None`.
            Ok(None) if param.optional || self.spec.whole => match strict::from_str("null") {
                Ok(value) => return Ok(value),
                Err(_) => return Err(errors::missing(self.spec, param)),
            },
            Ok(None) => return Err(errors::missing(self.spec, param)),
            Err(err) => return Err(err),
        };
        let err = match failed {
            Some(err) => err,
            None => match strict::from_str(text) {
                Ok(value) => return Ok(value),
                Err(err) => err,
            },
        };
        // JSON's `-0` is an integer zero, but serde_json reads it as the
        // float `-0.0`, which integer types refuse: on failure, and only if
        // the text has a `-0`, decode once more with each `-0` read as `0`
        // (so a float parameter still gets `-0.0` the first time).
        if let Some(again) = without_negative_zero(text)
            && let Ok(value) = strict::from_str(&again)
        {
            return Ok(value);
        }
        Err(errors::decode(self.spec, param, &err))
    }
}

/// `text` (valid JSON) with the sign of every `-0` number outside strings
/// blanked, or `None` if it has none. `-0.5` and `-0e1` keep their sign.
fn without_negative_zero(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut signs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string: an escape is a backslash and one character.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'0')
                && !matches!(bytes.get(i + 2), Some(b'.' | b'e' | b'E' | b'0'..=b'9')) =>
            {
                signs.push(i);
            }
            _ => {}
        }
        i += 1;
    }
    if signs.is_empty() {
        return None;
    }
    let mut owned = text.as_bytes().to_vec();
    for at in signs {
        owned[at] = b' '; // whitespace before a number is still valid JSON
    }
    String::from_utf8(owned).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{MethodSpec, ParamSpec};

    #[test]
    fn negative_zero_is_blanked_only_where_it_is_an_integer() {
        assert_eq!(without_negative_zero("-0").as_deref(), Some(" 0"));
        assert_eq!(without_negative_zero("[-0, -0 ,{\"a\":-0}]").as_deref(), Some("[ 0,  0 ,{\"a\": 0}]"));
        for kept in ["-0.0", "-0e1", "-0E+2", "-1", "-10", "\"-0\"", "[\"a\\\"-0\"]", "0"] {
            assert_eq!(without_negative_zero(kept), None, "{kept}");
        }
        /// Decodes `text` as the one param of a method, split first.
        fn decode_text<T: DeserializeOwned>(text: &str) -> Result<T, ErrorObject> {
            static PARAMS: [ParamSpec; 1] = [ParamSpec::new("p", "T")];
            static SPEC: MethodSpec = MethodSpec::new("m", &PARAMS);
            let raw = RawValue::from_string(format!("[{text}]")).unwrap();
            Params::parse(Some(&raw), &SPEC)?.decode(0)
        }
        assert_eq!(decode_text::<i64>("-0").unwrap(), 0);
        assert_eq!(decode_text::<u8>("-0").unwrap(), 0);
        assert_eq!(decode_text::<Vec<i32>>("[-0,1]").unwrap(), [0, 1]);
        assert!(decode_text::<f64>("-0").unwrap().is_sign_negative(), "a float keeps its sign");
        assert!(decode_text::<i64>("-0.5").is_err());
    }
}
