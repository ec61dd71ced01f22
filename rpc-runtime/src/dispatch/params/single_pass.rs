//! The single pass: a generated handler decodes every declared parameter
//! in order, so each value is read where the one before it ended, without
//! splitting the params first (which would walk the whole text only to
//! find the values that the decodes then walk again).
//!
//! This is the valid call's path, so it handles only the plain case:
//! values in declaration order (for an object, keys spelled as declared,
//! without escapes), nothing after the last one but the closing bracket.
//! Anything else is left to the split path, which knows the rules and
//! the order of the errors; the caller falls back to it when
//! [`Cursor::locate`] says [`Located::Elsewhere`], when a value does not
//! decode (its error is handed over, not found again), or when
//! [`Cursor::advance`] refuses what follows it.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use serde::de::{DeserializeOwned, IgnoredAny};

use crate::dispatch::strict;
use crate::spec::{MethodSpec, ParamStructure};

/// Where the single pass is: the params text is walked once, each
/// [`Params::decode`](super::Params::decode) taking the next value where
/// the last one ended. Atomics (only ever used `Relaxed`, plain loads and
/// stores) keep `Params` `Sync` while `decode` takes `&self`.
pub(super) struct Cursor {
    /// Byte offset in the params text where parameter `next` starts (its
    /// key, for an object), or of the closing bracket once every given
    /// param is read.
    at: AtomicUsize,
    /// The index of the parameter read next.
    next: AtomicUsize,
    /// An object (by name) rather than an array (by position).
    named: bool,
}

/// Where [`Cursor::locate`] found a parameter.
pub(super) enum Located {
    /// Its value starts at this offset.
    At(usize),
    /// Every given param is read: this one is absent.
    Absent,
    /// Not where the cursor is (out of order, another key): the split
    /// path finds it, or says what is wrong.
    Elsewhere,
}

// `locate` and `advance`, and the helpers under them, run for every
// parameter of every valid call to a generated handler, so they are
// inlined into it when optimizing. Unoptimized, `locate` and `advance`
// stay functions of this crate, shared by every parameter type: an
// inlined or `#[inline]` copy would be compiled again in each crate that
// decodes params.
impl Cursor {
    /// A cursor at the first param of `text` (raw JSON, so valid), when
    /// `spec` takes it in this shape and has params to read; `None` sends
    /// the params the split way (which also finds `[1]` too many for a
    /// method without params).
    // Runs on every call, from `Params::unsplit` in the router.
    #[inline]
    pub(super) fn start(text: &str, spec: &MethodSpec) -> Option<Self> {
        let named = match text.as_bytes().first() {
            Some(b'[') => false,
            Some(b'{') => true,
            _ => return None,
        };
        let refused = if named { ParamStructure::ByPosition } else { ParamStructure::ByName };
        if spec.structure == refused || spec.params.is_empty() {
            return None;
        }
        Some(Cursor { at: AtomicUsize::new(1), next: AtomicUsize::new(0), named })
    }

    /// Where the value of parameter `index` starts in `text`, if it is the
    /// next one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn locate(&self, text: &str, spec: &MethodSpec, index: usize) -> Located {
        if self.next.load(Relaxed) != index {
            return Located::Elsewhere;
        }
        let bytes = text.as_bytes();
        let at = skip_whitespace(bytes, self.at.load(Relaxed));
        if matches!(bytes.get(at), Some(b']' | b'}')) {
            // Fewer params given than declared: the rest are absent.
            self.next.store(index + 1, Relaxed);
            return Located::Absent;
        }
        if !self.named {
            return Located::At(at);
        }
        match key_end(bytes, at, spec.params[index].name) {
            Some(end) => Located::At(skip_whitespace(bytes, end)),
            None => Located::Elsewhere,
        }
    }

    /// Moves past parameter `index`, whose value ends at `end`: false
    /// when what follows sends the params the split way.
    #[cfg_attr(not(debug_assertions), inline)]
    pub(super) fn advance(&self, text: &str, spec: &MethodSpec, index: usize, end: usize) -> bool {
        let bytes = text.as_bytes();
        let mut at = skip_whitespace(bytes, end);
        let last = index + 1 == spec.params.len();
        match bytes.get(at) {
            Some(b',') if !last => at += 1,
            Some(b']' | b'}') => {}
            // Surplus positional params are ignored when allowed; surplus
            // names may repeat one already read, which the split refuses.
            Some(b',') if spec.allow_extra && !self.named => {}
            _ => return false,
        }
        self.at.store(at, Relaxed);
        self.next.store(index + 1, Relaxed);
        true
    }
}

/// The offset just past `"name":` when the key at `at` is `name` written
/// without escapes (any other spelling takes the split path).
#[inline(always)]
fn key_end(bytes: &[u8], at: usize, name: &str) -> Option<usize> {
    let close = at + 1 + name.len();
    if bytes.get(at) != Some(&b'"')
        || bytes.get(at + 1..close) != Some(name.as_bytes())
        || bytes.get(close) != Some(&b'"')
    {
        return None;
    }
    let colon = skip_whitespace(bytes, close + 1);
    (bytes.get(colon) == Some(&b':')).then_some(colon + 1)
}

/// The offset of the first byte at or after `at` that is not JSON whitespace.
#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        at += 1;
    }
    at
}

/// Decodes the value at the start of `text` (leading whitespace allowed)
/// and says how many bytes it took; what follows is left for the caller.
/// Through [`strict`], as every param is: see [`strict::from_str`].
// Always inlined, also unoptimized: it is the decode of every valid
// param, and as a function of its own per `T` it would be compiled in a
// codegen unit of its own in each crate that decodes params.
#[inline(always)]
pub(super) fn decode_prefix<T: DeserializeOwned>(text: &str) -> Result<(T, usize), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(strict::Strict(&mut de))?;
    Ok((value, de.into_iter::<IgnoredAny>().byte_offset()))
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::super::Params;
    use crate::spec::{MethodSpec, ParamSpec, ParamStructure};
    use crate::wire::ErrorObject;

    /// Decodes every param in order as a generated handler does, stopping
    /// at the first error; with `decodes_all` the single pass is taken.
    fn decoded(raw: &str, spec: &'static MethodSpec, decodes_all: bool) -> String {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Point {
            x: i64,
        }
        let raw = RawValue::from_string(raw.to_owned()).unwrap();
        let all = || -> Result<String, ErrorObject> {
            let params = Params::parse_for(Some(&raw), spec, decodes_all)?;
            let a: i64 = params.decode(0)?;
            let b: Option<String> = params.decode(1)?;
            let c: Option<Vec<Point>> = params.decode(2)?;
            Ok(format!("{a:?} {b:?} {c:?}"))
        };
        match all() {
            Ok(values) => values,
            Err(err) => format!("error {} {}", err.code(), err.message()),
        }
    }

    #[test]
    fn params_read_in_a_single_pass_decode_as_split_ones() {
        static PARAMS: [ParamSpec; 3] = [
            ParamSpec::new("a", "i64"),
            ParamSpec::new("b", "Option<String>").optional(true),
            ParamSpec::new("c", "Option<Vec<Point>>").optional(true),
        ];
        static EITHER: MethodSpec = MethodSpec::new("m", &PARAMS);
        static EXTRA: MethodSpec = MethodSpec::new("m", &PARAMS).allow_extra(true);
        static BY_NAME: MethodSpec = MethodSpec::new("m", &PARAMS).structure(ParamStructure::ByName);
        static BY_POSITION: MethodSpec = MethodSpec::new("m", &PARAMS).structure(ParamStructure::ByPosition);
        let inputs = [
            "[1]",
            "[1,\"b\"]",
            "[ 1 , \"b\" , [ {\"x\" : 2} ] ]",
            "[1,null,null]",
            "[]",
            "[-0]",
            "[-0,\"-0\",[{\"x\":-0}]]",
            "[1,2]",
            "[\"one\",\"b\",[]]",
            "[1,\"b\",[],4]",
            "[\"one\",\"b\",[],4]",
            "[1,\"b\",[[2]]]",
            "[1,\"b\",[{\"x\":2,\"y\":3}]]",
            "[1.5]",
            "{\"a\":1}",
            "{\"a\":1,\"b\":\"b\",\"c\":[{\"x\":2}]}",
            "{ \"a\" : 1 , \"c\" : [] }",
            "{\"c\":[],\"b\":\"b\",\"a\":1}",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"b\":\"b\",\"c\":null,\"a\":2}",
            "{\"a\":1,\"d\":4}",
            "{\"a\":\"one\",\"d\":4}",
            "{\"a\":\"one\",\"a\":2}",
            "{\"\\u0061\":1}",
            "{\"b\":\"b\"}",
            "{}",
            "{\"a\":-0}",
            "{\"a\":1,\"b\":2}",
            "{\"a\":1,\"c\":[[1]]}",
        ];
        for spec in [&EITHER, &EXTRA, &BY_NAME, &BY_POSITION] {
            for input in inputs {
                let split = decoded(input, spec, false);
                assert_eq!(decoded(input, spec, true), split, "{input} with {spec:?}");
            }
        }
        assert_eq!(decoded("[1,\"b\",[{\"x\":2}]]", &EITHER, true), "1 Some(\"b\") Some([Point { x: 2 }])");
    }
}
