//! What a short JSON text is, read by its grammar without a parser: the
//! ids and argument values that hot paths look at, where setting up
//! `serde_json` costs more than the text.

/// Whether `text` is exactly one JSON number (RFC 8259, section 6:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`).
pub(crate) fn is_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = usize::from(bytes.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => {
            digits(&mut at);
        }
        _ => return false,
    }
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return false;
        }
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return false;
        }
    }
    at == bytes.len()
}

/// The contents of `text` when it is a JSON string without escapes (so
/// that its contents are its value); `None` for any other text.
pub(crate) fn plain_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    inner.bytes().all(|byte| byte >= 0x20 && byte != b'"' && byte != b'\\').then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::{is_number, plain_string};

    #[test]
    fn numbers_follow_the_json_grammar() {
        for yes in ["0", "-0", "7", "42", "-12345678901234567890123", "1.5", "1e9", "1E+9", "2.5e-3", "0.0"] {
            assert!(is_number(yes), "{yes}");
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(yes).is_ok(), "{yes}");
        }
        for no in ["", "-", "01", "+1", "1.", ".5", "1e", "1e+", "0x10", "1 ", " 1", "NaN", "inf", "1.5.5", "--1"] {
            assert!(!is_number(no), "{no}");
        }
    }

    #[test]
    fn plain_strings_have_no_escapes() {
        assert_eq!(plain_string(r#""abc""#), Some("abc"));
        assert_eq!(plain_string(r#""""#), Some(""));
        assert_eq!(plain_string(r#""é""#), Some("é"));
        for no in [r#""a\"b""#, r#""a\u0061""#, "\"a", "a\"", "\"", "\"a\"b\"", "\"\u{1}\"", "7"] {
            assert_eq!(plain_string(no), None, "{no}");
        }
    }
}
