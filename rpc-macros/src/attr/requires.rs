//! `requires = "admin"`, `requires(any(...))`, `requires(all(...))` on a
//! method: the permissions a caller must hold.

use syn::meta::ParseNestedMeta;
use syn::LitStr;

use super::{span_of, unknown_key, ALL, ANY, REQUIRES_KEYS};

/// What `requires` says a caller must hold.
pub enum Requires {
    /// `requires = "admin"`.
    One(LitStr),
    /// `requires(any("admin", "ops"))`: at least one of them.
    Any(Vec<LitStr>),
    /// `requires(all("read", "write"))`: every one of them.
    All(Vec<LitStr>),
}

impl Requires {
    /// Each permission named, for the checks.
    pub fn permissions(&self) -> &[LitStr] {
        match self {
            Requires::One(permission) => std::slice::from_ref(permission),
            Requires::Any(permissions) | Requires::All(permissions) => permissions,
        }
    }
}

/// `requires = "admin"`, `requires(any("admin", "ops"))`,
/// `requires(all("read", "write"))`.
pub(super) fn parse_requires(meta: &ParseNestedMeta<'_>) -> syn::Result<Requires> {
    let usage = "write `requires = \"admin\"`, `requires(any(\"admin\", \"ops\"))` (one of them) or `requires(all(\"read\", \"write\"))` (every one)";
    if meta.input.peek(syn::Token![=]) {
        let value = meta.value()?;
        let span = value.span();
        return value
            .parse::<LitStr>()
            .map(Requires::One)
            .map_err(|_| syn::Error::new(span, format!("`requires` takes a permission name or a list: {usage}")));
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(span_of(meta), format!("`requires` needs the permissions: {usage}")));
    }
    let mut out = None;
    meta.parse_nested_meta(|inner| {
        let all = inner.path.is_ident(ALL);
        if !all && !inner.path.is_ident(ANY) {
            return Err(unknown_key(&inner, "in `requires(...)`", REQUIRES_KEYS));
        }
        if out.is_some() {
            return Err(syn::Error::new(
                span_of(&inner),
                format!("`requires(...)` takes one list, `any(...)` or `all(...)`: {usage}"),
            ));
        }
        let span = span_of(&inner);
        let content;
        syn::parenthesized!(content in inner.input);
        let names =
            syn::punctuated::Punctuated::<LitStr, syn::Token![,]>::parse_terminated(&content).map_err(|err| {
                syn::Error::new(
                    err.span(),
                    format!("`any(...)` and `all(...)` list permission names as strings: {usage}"),
                )
            })?;
        let names: Vec<LitStr> = names.into_iter().collect();
        if names.is_empty() {
            return Err(syn::Error::new(span, format!("an empty list requires nothing a caller could hold: {usage}")));
        }
        out = Some(if all { Requires::All(names) } else { Requires::Any(names) });
        Ok(())
    })?;
    out.ok_or_else(|| {
        syn::Error::new(span_of(meta), format!("`requires(...)` needs `any(...)` or `all(...)`: {usage}"))
    })
}
