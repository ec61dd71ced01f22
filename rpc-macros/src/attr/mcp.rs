//! `mcp(...)` on a method: whether and how it appears as an MCP tool.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::LitStr;

use super::{
    given_once, span_of, string_value, unknown_key, DESTRUCTIVE, HIDDEN, IDEMPOTENT, MCP_KEYS, NAME, OPEN_WORLD,
    READ_ONLY, TITLE,
};

/// `mcp(hidden)` or `mcp(name = "...", title = "...", read_only,
/// destructive = false, idempotent, open_world)` on a method: its MCP tool.
#[derive(Default)]
pub struct McpAttrs {
    /// Where `mcp` was written, if it was.
    pub span: Option<Span>,
    pub hidden: bool,
    /// `name = "..."`: the tool's name, when not the method's wire name.
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// `mcp(hidden)`, `mcp(title = "Add", read_only, open_world = false)`.
pub(super) fn parse_mcp(meta: &ParseNestedMeta<'_>) -> syn::Result<McpAttrs> {
    let mut out = McpAttrs { span: Some(span_of(meta)), ..McpAttrs::default() };
    if !meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            span_of(meta),
            format!("`mcp` takes options in parentheses, such as `mcp(hidden)` or `mcp(title = \"...\", read_only)`; expected one of: {}", MCP_KEYS.join(", ")),
        ));
    }
    let mut seen = Vec::new();
    let mut hidden = None;
    let mut others = Vec::new();
    meta.parse_nested_meta(|inner| {
        given_once(&inner, &mut seen)?;
        if inner.path.is_ident(HIDDEN) {
            if inner.input.peek(syn::Token![=]) || inner.input.peek(syn::token::Paren) {
                return Err(syn::Error::new(
                    span_of(&inner),
                    "`hidden` is a flag and takes no value: write `#[rpc(mcp(hidden))]`",
                ));
            }
            hidden = Some(span_of(&inner));
            out.hidden = true;
            return Ok(());
        }
        others.push((quote::ToTokens::to_token_stream(&inner.path).to_string(), span_of(&inner)));
        if inner.path.is_ident(NAME) {
            out.name = Some(string_value(&inner, NAME, "\"list_items\"")?);
        } else if inner.path.is_ident(TITLE) {
            let title = string_value(&inner, TITLE, "\"Add two numbers\"")?;
            if title.value().trim().is_empty() {
                return Err(syn::Error::new(
                    title.span(),
                    "the tool's `title` must not be empty: write a name people read, or remove the key",
                ));
            }
            out.title = Some(title);
        } else if inner.path.is_ident(READ_ONLY) {
            out.read_only = Some(hint(&inner, READ_ONLY)?);
        } else if inner.path.is_ident(DESTRUCTIVE) {
            out.destructive = Some(hint(&inner, DESTRUCTIVE)?);
        } else if inner.path.is_ident(IDEMPOTENT) {
            out.idempotent = Some(hint(&inner, IDEMPOTENT)?);
        } else if inner.path.is_ident(OPEN_WORLD) {
            out.open_world = Some(hint(&inner, OPEN_WORLD)?);
        } else {
            return Err(unknown_key(&inner, "in `mcp(...)`", MCP_KEYS));
        }
        Ok(())
    })?;
    if let (Some(hidden), Some((key, span))) = (hidden, others.first()) {
        let mut err = syn::Error::new(
            *span,
            format!("`{key}` has no effect on a method hidden from MCP (`mcp(hidden)`): it has no tool to describe; remove `{key}` or `hidden`"),
        );
        err.combine(syn::Error::new(hidden, "`hidden` given here"));
        return Err(err);
    }
    Ok(out)
}

/// A tool hint: `read_only` (true) or `read_only = false`.
fn hint(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<bool> {
    if !meta.input.peek(syn::Token![=]) {
        if meta.input.peek(syn::token::Paren) {
            return Err(syn::Error::new(
                span_of(meta),
                format!("`{key}` takes a bool: write `{key}` or `{key} = false`"),
            ));
        }
        return Ok(true);
    }
    let value = meta.value()?;
    let span = value.span();
    value
        .parse::<syn::LitBool>()
        .map(|lit| lit.value)
        .map_err(|_| syn::Error::new(span, format!("`{key}` takes a bool: write `{key}` or `{key} = false`")))
}
