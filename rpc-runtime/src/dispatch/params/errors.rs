//! The -32602 (`Invalid params`) messages: they name the method and the
//! parameter (or the whole params) at fault, and say what was expected,
//! so that a caller can fix the call from the message alone.
//!
//! Only invalid calls get here, so the messages are built plainly; their
//! exact wording is pinned by `tests/param_messages.rs` and the
//! integration tests.

use std::fmt::Write;

use crate::spec::{MethodSpec, ParamSpec, ParamStructure};
use crate::wire::ErrorObject;

/// Appends serde_json's message for `err` to `out`, without the
/// `" at line L column C"` it ends with when it knows the position: that
/// points into the text serde was given (a parameter's own slice, one
/// entry of a batch), not into anything the caller sent as a whole, and
/// would only confuse.
pub(crate) fn push_without_position(out: &mut String, err: &serde_json::Error) {
    let start = out.len();
    let _ = write!(out, "{err}"); // writing to a `String` cannot fail
    if let Some(at) = out[start..].rfind(" at line ") {
        out.truncate(start + at);
    }
}

/// The params come in a shape (`got`: "an array", "an object") that the
/// method does not take.
pub(super) fn structure(spec: &MethodSpec, got: &str) -> ErrorObject {
    let wanted = match spec.structure {
        ParamStructure::ByName => "by name (an object)",
        _ if spec.whole => "by name (an object)",
        _ => "by position (an array)",
    };
    ErrorObject::invalid_params(format!("method `{}` takes params {wanted}, got {got}", spec.name))
}

/// The text of `param` did not decode, with serde's `err`. serde usually
/// says what it expected; when it does not, the declared type does.
pub(super) fn decode(spec: &MethodSpec, param: &ParamSpec, err: &serde_json::Error) -> ErrorObject {
    let mut message = if spec.whole {
        format!("invalid params of method `{}`: ", spec.name)
    } else {
        format!("invalid parameter `{}` of method `{}`: ", param.name, spec.name)
    };
    let reason = message.len();
    push_without_position(&mut message, err);
    if !message[reason..].contains("expected") {
        let _ = write!(message, " (expected {})", param.ty);
    }
    ErrorObject::invalid_params(message)
}

/// Required `param` is absent.
pub(super) fn missing(spec: &MethodSpec, param: &ParamSpec) -> ErrorObject {
    if spec.whole {
        return ErrorObject::invalid_params(format!("method `{}` requires params ({})", spec.name, param.ty));
    }
    ErrorObject::invalid_params(format!(
        "missing required parameter `{}` ({}) of method `{}`",
        param.name, param.ty, spec.name
    ))
}

/// Positional params that the array scanner could not take apart.
pub(super) fn malformed_array() -> ErrorObject {
    ErrorObject::invalid_params("malformed params: expected an array")
}

/// `given` positional params, more than `spec` declares.
pub(super) fn too_many(spec: &MethodSpec, given: usize) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "too many params: method `{}` takes at most {}, got {given}",
        spec.name,
        spec.params.len()
    ))
}

/// Named parameter `key` appears twice.
pub(super) fn given_twice(spec: &MethodSpec, key: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("parameter `{key}` of method `{}` is given twice", spec.name))
}

/// Named parameter `key` is not declared: the declared names are listed,
/// with the closest one suggested when `key` looks like a typo of it.
pub(super) fn unknown_param(spec: &MethodSpec, key: &str) -> ErrorObject {
    let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
    let expected = if names.is_empty() {
        "it takes no params".to_owned()
    } else {
        format!("expected one of: {}", names.join(", "))
    };
    let suggestion = match closest(key, &names) {
        Some(name) => format!(" (did you mean `{name}`?)"),
        None => String::new(),
    };
    ErrorObject::invalid_params(format!("unknown parameter `{key}` for method `{}`{suggestion}; {expected}", spec.name))
}

/// The candidate closest to `key` by edit distance, if it is close enough
/// to be a likely typo: at most one edit per three characters (a case
/// difference alone always is).
fn closest<'n>(key: &str, candidates: &[&'n str]) -> Option<&'n str> {
    let limit = (key.chars().count() * 2 / 3).max(1);
    candidates
        .iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Twice the optimal string alignment distance (Levenshtein's insertions,
/// deletions and substitutions, plus swaps of two neighbours, each one
/// edit: `kye` is one edit from `key`, as a person sees it), a case
/// difference counting one (half an edit), so `Name` is closer to `name`
/// than `nme` is.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: the one two above, the one above, this one.
    let mut above2 = vec![0; b.len() + 1];
    let mut above: Vec<usize> = (0..=b.len()).map(|j| j * 2).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i * 2;
        for j in 1..=b.len() {
            let substitution = match (a[i - 1] == b[j - 1], a[i - 1].eq_ignore_ascii_case(&b[j - 1])) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
            let mut best = (above[j - 1] + substitution).min(row[j - 1] + 2).min(above[j] + 2);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(above2[j - 2] + 2);
            }
            row[j] = best;
        }
        std::mem::swap(&mut above2, &mut above);
        std::mem::swap(&mut above, &mut row);
    }
    above[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_suggest_the_closest_declared_one() {
        assert_eq!(closest("nme", &["name", "greeting"]), Some("name"));
        assert_eq!(closest("Greeting", &["name", "greeting"]), Some("greeting"));
        assert_eq!(closest("x", &["name", "greeting"]), None);
        assert_eq!(closest("colour", &["name", "greeting"]), None);
        assert_eq!(closest("b", &["a"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 6);
        assert_eq!(edit_distance("", "ab"), 4);
        assert_eq!(edit_distance("ab", ""), 4);
        assert_eq!(edit_distance("Key", "key"), 1);
    }

    #[test]
    fn a_swap_of_neighbours_is_one_edit() {
        assert_eq!(edit_distance("kye", "key"), 2);
        assert_eq!(edit_distance("valeu", "value"), 2);
        assert_eq!(edit_distance("ab", "ba"), 2);
        assert_eq!(closest("kye", &["key", "value"]), Some("key"));
        assert_eq!(closest("valeu", &["key", "value"]), Some("value"));
        assert_eq!(closest("nmae", &["name"]), Some("name"));
        // Still not a typo of anything: two swaps in three letters.
        assert_eq!(closest("yke", &["key"]), None);
    }

    #[test]
    fn decode_errors_name_the_param_and_drop_the_position() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Point {
            x: i64,
        }
        static PARAMS: [ParamSpec; 1] = [ParamSpec::new("p", "T")];
        static SPEC: MethodSpec = MethodSpec::new("m", &PARAMS);
        static WHOLE: MethodSpec = MethodSpec::new("w", &PARAMS).whole(true);
        let long = format!("[{}]", "1,".repeat(2_000) + "\"x\"");
        let cases = [
            (serde_json::from_str::<i64>("\"forty\"").unwrap_err(), "invalid type: string \"forty\", expected i64"),
            (serde_json::from_str::<u8>("300").unwrap_err(), "invalid value: integer `300`, expected u8"),
            (serde_json::from_str::<Point>("{}").unwrap_err(), "missing field `x` (expected T)"),
            (serde_json::from_str::<Point>("{\"x\":1,\n\n \"x\":2}").unwrap_err(), "duplicate field `x` (expected T)"),
            (serde_json::from_str::<Vec<i64>>(&long).unwrap_err(), "invalid type: string \"x\", expected i64"),
            // A message of its own that says "at line" is cut there too.
            (<serde_json::Error as serde::de::Error>::custom("said at line 3 without a position"), "said (expected T)"),
            (<serde_json::Error as serde::de::Error>::custom("nothing expected here"), "nothing expected here"),
        ];
        for (err, reason) in &cases {
            assert_eq!(
                decode(&SPEC, &PARAMS[0], err).message(),
                format!("invalid parameter `p` of method `m`: {reason}")
            );
            assert_eq!(decode(&WHOLE, &PARAMS[0], err).message(), format!("invalid params of method `w`: {reason}"));
        }
    }
}
