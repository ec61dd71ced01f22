//! Typed values of the `#[rpc(...)]` attributes on the trait, its methods
//! and their parameters. Every key is a named constant; an unknown key is
//! an error that lists the accepted ones.
//!
//! This file holds every key and what all attribute families share:
//! finding `#[rpc]` and doc attributes, reading a string or a flag, a key
//! given twice, an unknown key and its likely typo. Each family is parsed
//! in a file of its own: the trait's (`service`), a method's and a
//! parameter's (`method`), and what a method's keys nest: `error(...)`
//! (`error`), `requires` (`requires`) and `mcp(...)` (`mcp`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use crate::ctxt::Ctxt;

mod error;
mod mcp;
mod method;
mod requires;
mod service;

pub use error::{parse_code, DeclaredError};
pub use mcp::{CompletionTarget, McpAttrs, McpKind};
pub use method::{take_method_attrs, take_param_attrs, ParamAttrs, Structure};
pub use requires::Requires;
pub use service::{parse_service_attrs, ServiceAttrs};

/// The attribute name, on the trait and inside it.
pub const RPC: &str = "rpc";

// Trait-level keys.
const NAMESPACE: &str = "namespace";
const NAMESPACE_SEPARATOR: &str = "namespace_separator";
const RENAME_ALL: &str = "rename_all";
const CRATE: &str = "crate";
const TITLE: &str = "title";
const VERSION: &str = "version";
const CATALOG: &str = "catalog";
const STRICT_SCHEMAS: &str = "strict_schemas";
const SUBSCRIPTION_NOTIFICATION: &str = "subscription_notification";
const SERVER_ONLY: &str = "server_only";
pub(crate) const TRAIT_KEYS: &[&str] = &[
    NAMESPACE,
    NAMESPACE_SEPARATOR,
    RENAME_ALL,
    CRATE,
    TITLE,
    VERSION,
    CATALOG,
    STRICT_SCHEMAS,
    SUBSCRIPTION_NOTIFICATION,
    SERVER_ONLY,
];

// Method-level keys.
const NAME: &str = "name";
const NOTIFICATION: &str = "notification";
const PARAM_STRUCTURE: &str = "param_structure";
const WHOLE_PARAMS: &str = "whole_params";
const ALLOW_EXTRA_PARAMS: &str = "allow_extra_params";
const ERROR: &str = "error";
const ALIAS: &str = "alias";
const REQUIRES: &str = "requires";
const MCP: &str = "mcp";
const UNSUBSCRIBE: &str = "unsubscribe";
const BLOCKING: &str = "blocking";
const EXCLUSIVE: &str = "exclusive";
pub(crate) const METHOD_KEYS: &[&str] = &[
    NAME,
    ALIAS,
    NOTIFICATION,
    PARAM_STRUCTURE,
    WHOLE_PARAMS,
    ALLOW_EXTRA_PARAMS,
    ERROR,
    REQUIRES,
    MCP,
    UNSUBSCRIBE,
    BLOCKING,
    EXCLUSIVE,
];

// Keys inside `mcp(...)`.
const HIDDEN: &str = "hidden";
const READ_ONLY: &str = "read_only";
const DESTRUCTIVE: &str = "destructive";
const IDEMPOTENT: &str = "idempotent";
const OPEN_WORLD: &str = "open_world";
const RESOURCE: &str = "resource";
const MIME_TYPE: &str = "mime_type";
const RESOURCE_LIST: &str = "resource_list";
const PROMPT: &str = "prompt";
const COMPLETE: &str = "complete";
pub(crate) const MCP_KEYS: &[&str] = &[
    HIDDEN,
    NAME,
    TITLE,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    RESOURCE,
    MIME_TYPE,
    RESOURCE_LIST,
    PROMPT,
    COMPLETE,
];

// Keys inside `mcp(complete(...))`.
const ARGUMENT: &str = "argument";
pub(crate) const COMPLETE_KEYS: &[&str] = &[PROMPT, RESOURCE, ARGUMENT];

// Keys inside `error(...)`.
const CODE: &str = "code";
const MESSAGE: &str = "message";
pub(crate) const ERROR_KEYS: &[&str] = &[CODE, MESSAGE];

// Param-level keys.
pub(crate) const PARAM_KEYS: &[&str] = &[NAME];

/// Keys inside `requires(...)`.
const ANY: &str = "any";
const ALL: &str = "all";
pub(crate) const REQUIRES_KEYS: &[&str] = &[ANY, ALL];

/// `param_structure = "..."` values.
const STRUCTURES: &[&str] = &["either", "by-name", "by-position"];

/// `#[rpc]` or `#[rpc = ".."]` inside the trait is an error: options go in
/// parentheses.
fn has_options(cx: &Ctxt, attr: &Attribute, place: &str, valid: &[&str]) -> bool {
    if matches!(attr.meta, syn::Meta::List(_)) {
        return true;
    }
    cx.error_spanned_by(
        attr,
        format!(
            "`#[rpc]` on a {place} takes options in parentheses, such as `#[rpc(name = \"...\")]`; expected one of: {}",
            valid.join(", ")
        ),
    );
    false
}

/// Removes `#[rpc...]` attributes from `attrs` and returns them.
pub fn take_rpc_attrs(attrs: &mut Vec<Attribute>) -> Vec<Attribute> {
    let (ours, theirs) = std::mem::take(attrs).into_iter().partition(|attr| attr.path().is_ident(RPC));
    *attrs = theirs;
    ours
}

/// The text of the `///` doc comments, one entry per line.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').map(str::to_owned).unwrap_or(line))
        .collect()
}

/// Rejects a key given twice for one item, in one attribute or across
/// several: `#[rpc(name = "a", name = "b")]`.
fn given_once(meta: &ParseNestedMeta<'_>, seen: &mut Vec<String>) -> syn::Result<()> {
    let key = quote::ToTokens::to_token_stream(&meta.path).to_string().replace(' ', "");
    if seen.contains(&key) {
        return Err(meta.error(format!("`{key}` is given twice; keep one")));
    }
    seen.push(key);
    Ok(())
}

/// The string after `key =`; anything else is an error that shows the form.
fn string_value(meta: &ParseNestedMeta<'_>, key: &str, example: &str) -> syn::Result<LitStr> {
    let wrong = |span| syn::Error::new(span, format!("`{key}` takes a string: write `{key} = {example}`"));
    if !meta.input.peek(syn::Token![=]) {
        return Err(wrong(span_of(meta)));
    }
    let value = meta.value()?;
    let span = value.span();
    value.parse::<LitStr>().map_err(|_| wrong(span))
}

/// A key that takes no value, such as `notification`.
fn flag(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Span> {
    if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            span_of(meta),
            format!("`{key}` is a flag and takes no value: write `#[rpc({key})]`"),
        ));
    }
    Ok(span_of(meta))
}

fn span_of(meta: &ParseNestedMeta<'_>) -> Span {
    syn::spanned::Spanned::span(&meta.path)
}

#[cold]
pub fn unknown_key(meta: &ParseNestedMeta<'_>, place: &str, valid: &[&str]) -> syn::Error {
    let key = quote::ToTokens::to_token_stream(&meta.path).to_string().replace(' ', "");
    let suggestion = match closest(&key, valid) {
        Some(near) => format!("did you mean `{near}`? "),
        None => String::new(),
    };
    meta.error(format!("unknown key `{key}` {place}; {suggestion}expected one of: {}", valid.join(", ")))
}

/// The key in `valid` nearest to `key` when it is a likely typo: at most
/// one edit (insertion, deletion, substitution or swap of neighbours) per
/// three characters.
fn closest<'k>(key: &str, valid: &[&'k str]) -> Option<&'k str> {
    let limit = (key.chars().count() / 3).max(1);
    valid
        .iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance (Levenshtein plus swaps of
/// neighbours, so `nmae` is one edit from `name`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}
