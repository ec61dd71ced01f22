//! URI templates as resources use them (RFC 6570, the two expressions the
//! macro accepts): `{var}`, whose value holds no `/`, `?` or `#`, and
//! `{+var}`, whose value may hold anything. Matching a URI gives each
//! variable's value, percent-decoded.

use std::borrow::Cow;

/// The variables' values of a URI that matched, in order: name, value.
pub(crate) type Values<'t, 'u> = Vec<(&'t str, Cow<'u, str>)>;

/// The longest URI matched against templates: longer ones match nothing.
pub(crate) const MAX_URI_LEN: usize = 8 * 1024;

/// How many steps matching one URI may take (backtracking over `{+var}`
/// values); a URI that needs more matches nothing.
const MAX_STEPS: usize = 10_000;

#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Variable { name: String, reserved: bool },
}

/// A parsed URI template.
#[derive(Debug)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// `text` parsed; `None` when it is not a template the macro accepts.
    pub(crate) fn parse(text: &str) -> Option<Template> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}')?;
                    let expression = &rest[1..end];
                    let (name, reserved) = match expression.strip_prefix('+') {
                        Some(name) => (name, true),
                        None => (expression, false),
                    };
                    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                        return None;
                    }
                    if matches!(pieces.last(), Some(Piece::Variable { .. })) {
                        return None;
                    }
                    pieces.push(Piece::Variable { name: name.to_owned(), reserved });
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    if rest[..end].contains('}') {
                        return None;
                    }
                    pieces.push(Piece::Literal(rest[..end].to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        Some(Template { pieces })
    }

    /// The variables' names, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Variable { name, .. } => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// Whether it has no variables (one fixed URI).
    pub(crate) fn is_fixed(&self) -> bool {
        self.variables().next().is_none()
    }

    /// The variables' values if `uri` matches, in order.
    pub(crate) fn matches<'u>(&self, uri: &'u str) -> Option<Values<'_, 'u>> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let mut values = Vec::new();
        let mut steps = 0;
        if !self.match_from(0, uri, &mut values, &mut steps) {
            return None;
        }
        let names = self.variables();
        names.zip(values).map(|(name, raw)| Some((name, percent_decode(raw)?))).collect()
    }

    fn match_from<'u>(&self, index: usize, uri: &'u str, values: &mut Vec<&'u str>, steps: &mut usize) -> bool {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let Some(piece) = self.pieces.get(index) else { return uri.is_empty() };
        match piece {
            Piece::Literal(literal) => {
                uri.strip_prefix(literal.as_str()).is_some_and(|rest| self.match_from(index + 1, rest, values, steps))
            }
            Piece::Variable { reserved, .. } => {
                // The value runs to a place where the rest matches: the
                // shortest such for `{var}`, bounded by its delimiters.
                let limit = if *reserved { uri.len() } else { uri.find(['/', '?', '#']).unwrap_or(uri.len()) };
                for end in (1..=limit).filter(|&end| uri.is_char_boundary(end)) {
                    values.push(&uri[..end]);
                    if self.match_from(index + 1, &uri[end..], values, steps) {
                        return true;
                    }
                    values.pop();
                    if *steps > MAX_STEPS {
                        return false;
                    }
                }
                false
            }
        }
    }
}

/// `%XX` escapes decoded; `None` when they are malformed or not UTF-8.
fn percent_decode(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains('%') {
        return Some(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::Template;

    fn values(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let template = Template::parse(template).expect("a template");
        template.matches(uri).map(|found| found.into_iter().map(|(k, v)| (k.to_owned(), v.into_owned())).collect())
    }

    #[test]
    fn simple_variables_stop_at_delimiters() {
        assert_eq!(values("notes://{id}", "notes://42"), Some(vec![("id".into(), "42".into())]));
        assert_eq!(values("notes://{id}", "notes://4/2"), None);
        assert_eq!(values("notes://{id}", "notes://"), None);
        assert_eq!(values("notes://{id}/body", "notes://7/body"), Some(vec![("id".into(), "7".into())]));
        assert_eq!(values("notes://{id}", "notes://a%20b"), Some(vec![("id".into(), "a b".into())]));
        assert_eq!(values("notes://{id}", "notes://bad%zz"), None);
    }

    #[test]
    fn reserved_variables_take_slashes() {
        assert_eq!(values("file:///{+path}.md", "file:///a/b.c.md"), Some(vec![("path".into(), "a/b.c".into())]));
        assert_eq!(
            values("repo://{owner}/{+path}", "repo://me/src/lib.rs"),
            Some(vec![("owner".into(), "me".into()), ("path".into(), "src/lib.rs".into())])
        );
    }

    #[test]
    fn fixed_uris_match_only_themselves() {
        let fixed = Template::parse("config://app").unwrap();
        assert!(fixed.is_fixed());
        assert!(fixed.matches("config://app").is_some());
        assert!(fixed.matches("config://apps").is_none());
    }

    #[test]
    fn malformed_templates_and_long_uris_are_refused() {
        for bad in ["a://{", "a://{}", "a://{a}{b}", "a://{?q}", "a://x}"] {
            assert!(Template::parse(bad).is_none(), "{bad}");
        }
        let long = format!("notes://{}", "1".repeat(super::MAX_URI_LEN));
        assert!(Template::parse("notes://{+id}").unwrap().matches(&long).is_none());
        // Backtracking is bounded: many `{+var}`s against a long URI end.
        let slow = Template::parse("x://{+a}-{+b}-{+c}-{+d}!").unwrap();
        assert!(slow.matches(&format!("x://{}", "-".repeat(2000))).is_none());
    }
}
