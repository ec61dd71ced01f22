//! `rename_all` rules, applied to snake_case Rust identifiers.

/// A naming convention for wire names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

/// The accepted spellings, for error messages.
pub const RULE_NAMES: &[&str] = &[
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

impl RenameRule {
    pub fn from_str(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Applies the rule to a snake_case identifier (a leading `r#` is dropped
    /// by the caller).
    pub fn apply(self, ident: &str) -> String {
        let words = ident.split('_').filter(|w| !w.is_empty());
        match self {
            RenameRule::Lower | RenameRule::Snake => ident.to_ascii_lowercase(),
            RenameRule::Upper | RenameRule::ScreamingSnake => ident.to_ascii_uppercase(),
            RenameRule::Kebab => ident.replace('_', "-"),
            RenameRule::ScreamingKebab => ident.replace('_', "-").to_ascii_uppercase(),
            RenameRule::Pascal => words.map(capitalize).collect(),
            RenameRule::Camel => {
                let mut out = String::new();
                for (i, word) in words.enumerate() {
                    if i == 0 {
                        out.push_str(word);
                    } else {
                        out.push_str(&capitalize(word));
                    }
                }
                out
            }
        }
    }
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(RenameRule::Camel.apply("get_block_by_hash"), "getBlockByHash");
        assert_eq!(RenameRule::Pascal.apply("get_block"), "GetBlock");
        assert_eq!(RenameRule::ScreamingSnake.apply("get_block"), "GET_BLOCK");
        assert_eq!(RenameRule::Kebab.apply("get_block"), "get-block");
        assert_eq!(RenameRule::Camel.apply("sum"), "sum");
    }
}
