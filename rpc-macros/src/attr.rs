//! Typed values of the `#[rpc(...)]` attributes on the trait, its methods
//! and their parameters. Every key is a named constant; an unknown key is
//! an error that lists the accepted ones.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use crate::case::{RenameRule, RULE_NAMES};
use crate::ctxt::Ctxt;

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
pub(crate) const MCP_KEYS: &[&str] = &[HIDDEN, NAME, TITLE, READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD];

// Keys inside `error(...)`.
const CODE: &str = "code";
const MESSAGE: &str = "message";
pub(crate) const ERROR_KEYS: &[&str] = &[CODE, MESSAGE];

// Param-level keys.
pub(crate) const PARAM_KEYS: &[&str] = &[NAME];

/// `param_structure = "..."` values.
const STRUCTURES: &[&str] = &["either", "by-name", "by-position"];

/// Options on the trait: `#[rpc(namespace = "eth", rename_all = "camelCase")]`.
pub struct ServiceAttrs {
    pub namespace: Option<LitStr>,
    pub separator: String,
    pub rename_all: Option<RenameRule>,
    pub crate_path: syn::Path,
    /// `info.title` of the catalog; the trait name when absent.
    pub title: Option<LitStr>,
    /// `info.version` of the catalog; the crate version when absent.
    pub version: Option<LitStr>,
    /// `catalog = false` turns the catalog off.
    pub catalog: bool,
    /// `strict_schemas`: every param and result type must implement
    /// `JsonSchema` (a compile error otherwise) instead of appearing in the
    /// catalog as any value.
    pub strict_schemas: bool,
    /// `subscription_notification = "eth_subscription"`: the method of the
    /// notifications that carry subscription items (default `subscription`,
    /// after the namespace).
    pub subscription_notification: Option<LitStr>,
    /// `server_only`: no client, so params need not be `Serialize` nor
    /// results `DeserializeOwned`.
    pub server_only: bool,
}

impl Default for ServiceAttrs {
    fn default() -> Self {
        ServiceAttrs {
            namespace: None,
            separator: "_".to_owned(),
            rename_all: None,
            crate_path: syn::parse_quote!(::rpc_runtime),
            title: None,
            version: None,
            catalog: true,
            strict_schemas: false,
            subscription_notification: None,
            server_only: false,
        }
    }
}

/// Which shapes of params a method accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    Either,
    ByName,
    ByPosition,
}

/// Options on a method: `#[rpc(name = "x", notification)]`.
#[derive(Default)]
pub struct MethodAttrs {
    pub name: Option<LitStr>,
    pub notification: Option<Span>,
    pub structure: Option<(Structure, Span)>,
    pub whole_params: Option<Span>,
    pub allow_extra: bool,
    /// Declared errors, for the catalog.
    pub errors: Vec<DeclaredError>,
    /// `alias = "old_name"`: older wire names also served (repeatable).
    pub aliases: Vec<LitStr>,
    /// `requires = "admin"`, `requires(any("admin", "ops"))` or
    /// `requires(all("read", "write"))`: what a caller must hold.
    pub requires: Option<Requires>,
    /// `mcp(...)`: how the method appears as an MCP tool.
    pub mcp: McpAttrs,
    /// `unsubscribe = "unsubscribe_ticks"`: the method that ends the
    /// subscriptions this method opens.
    pub unsubscribe: Option<LitStr>,
    /// `unsubscribe` was given with a value that is not a string (already
    /// an error; no second one for a subscription without it).
    pub unsubscribe_malformed: bool,
    /// `blocking`: the plain `fn` runs on the blocking thread pool, where
    /// it was written.
    pub blocking: Option<Span>,
    /// `exclusive`: the call runs alone on its connection, after every
    /// earlier call and before every later one.
    pub exclusive: Option<Span>,
}

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

/// `error(code = -32001, message = "...")` on a method; the code is an
/// integer literal or a constant.
pub struct DeclaredError {
    pub code: syn::Expr,
    pub message: String,
}

/// Options on a parameter: `#[rpc(name = "x")]`.
#[derive(Default)]
pub struct ParamAttrs {
    pub name: Option<LitStr>,
}

/// Parses the arguments of the outer `#[rpc(...)]`.
pub fn parse_service_attrs(cx: &Ctxt, args: proc_macro2::TokenStream) -> ServiceAttrs {
    let mut attrs = ServiceAttrs::default();
    let mut seen = Vec::new();
    let parser = syn::meta::parser(|meta| {
        given_once(&meta, &mut seen)?;
        if meta.path.is_ident(NAMESPACE) {
            let value = string_value(&meta, NAMESPACE, "\"eth\"")?;
            if value.value().is_empty() {
                return Err(syn::Error::new(
                    value.span(),
                    "namespace must not be empty: give a prefix such as `namespace = \"eth\"`, or remove the key",
                ));
            }
            attrs.namespace = Some(value);
        } else if meta.path.is_ident(NAMESPACE_SEPARATOR) {
            attrs.separator = string_value(&meta, NAMESPACE_SEPARATOR, "\".\"")?.value();
        } else if meta.path.is_ident(RENAME_ALL) {
            attrs.rename_all = Some(parse_rename_rule(&meta)?);
        } else if meta.path.is_ident(CRATE) {
            let value = string_value(&meta, CRATE, "\"::rpc_runtime\"")?;
            attrs.crate_path = value.parse().map_err(|_| {
                syn::Error::new(
                    value.span(),
                    "`crate` must be the path of the runtime crate or a re-export of it, such as `crate = \"::rpc_runtime\"` or `crate = \"my_facade::rpc\"`",
                )
            })?;
        } else if meta.path.is_ident(TITLE) {
            attrs.title = Some(string_value(&meta, TITLE, "\"Calculator API\"")?);
        } else if meta.path.is_ident(VERSION) {
            attrs.version = Some(string_value(&meta, VERSION, "\"1.2.0\"")?);
        } else if meta.path.is_ident(CATALOG) {
            attrs.catalog = meta.value()?.parse::<syn::LitBool>()?.value;
        } else if meta.path.is_ident(STRICT_SCHEMAS) {
            flag(&meta, STRICT_SCHEMAS)?;
            attrs.strict_schemas = true;
        } else if meta.path.is_ident(SUBSCRIPTION_NOTIFICATION) {
            let value = string_value(&meta, SUBSCRIPTION_NOTIFICATION, "\"eth_subscription\"")?;
            let text = value.value();
            if text.is_empty() || text.trim() != text || text.chars().any(char::is_control) {
                return Err(syn::Error::new(
                    value.span(),
                    "`subscription_notification` is the method name of subscription items on the wire: write a name such as `subscription_notification = \"eth_subscription\"`",
                ));
            }
            attrs.subscription_notification = Some(value);
        } else if meta.path.is_ident(SERVER_ONLY) {
            flag(&meta, SERVER_ONLY)?;
            attrs.server_only = true;
        } else {
            return Err(unknown_key(&meta, "on an #[rpc] trait", TRAIT_KEYS));
        }
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(err);
    }
    attrs
}

/// Parses and removes every `#[rpc(...)]` on a method.
pub fn take_method_attrs(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> MethodAttrs {
    let mut out = MethodAttrs::default();
    let mut seen = Vec::new();
    for attr in take_rpc_attrs(attrs) {
        if !has_options(cx, &attr, "method", METHOD_KEYS) {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            // `error(...)` and `alias` may be repeated.
            if !meta.path.is_ident(ERROR) && !meta.path.is_ident(ALIAS) {
                given_once(&meta, &mut seen)?;
            }
            if meta.path.is_ident(NAME) {
                out.name = Some(string_value(&meta, NAME, "\"methodName\"")?);
            } else if meta.path.is_ident(NOTIFICATION) {
                out.notification = Some(flag(&meta, NOTIFICATION)?);
            } else if meta.path.is_ident(PARAM_STRUCTURE) {
                let value = string_value(&meta, PARAM_STRUCTURE, "\"by-name\"")?;
                let structure = match value.value().replace('_', "-").as_str() {
                    "either" => Structure::Either,
                    "by-name" => Structure::ByName,
                    "by-position" => Structure::ByPosition,
                    other => {
                        return Err(syn::Error::new(
                            value.span(),
                            format!("unknown param_structure `{other}`; expected one of: {}", STRUCTURES.join(", ")),
                        ))
                    }
                };
                out.structure = Some((structure, value.span()));
            } else if meta.path.is_ident(WHOLE_PARAMS) {
                out.whole_params = Some(flag(&meta, WHOLE_PARAMS)?);
            } else if meta.path.is_ident(ALLOW_EXTRA_PARAMS) {
                flag(&meta, ALLOW_EXTRA_PARAMS)?;
                out.allow_extra = true;
            } else if meta.path.is_ident(ERROR) {
                out.errors.push(parse_declared_error(&meta)?);
            } else if meta.path.is_ident(ALIAS) {
                out.aliases.push(string_value(&meta, ALIAS, "\"oldName\"")?);
            } else if meta.path.is_ident(REQUIRES) {
                out.requires = Some(parse_requires(&meta)?);
            } else if meta.path.is_ident(MCP) {
                out.mcp = parse_mcp(&meta)?;
            } else if meta.path.is_ident(UNSUBSCRIBE) {
                out.unsubscribe_malformed = true;
                out.unsubscribe = Some(string_value(&meta, UNSUBSCRIBE, "\"unsubscribe_ticks\"")?);
                out.unsubscribe_malformed = false;
            } else if meta.path.is_ident(BLOCKING) {
                out.blocking = Some(flag(&meta, BLOCKING)?);
            } else if meta.path.is_ident(EXCLUSIVE) {
                out.exclusive = Some(flag(&meta, EXCLUSIVE)?);
            } else {
                return Err(unknown_key(&meta, "on an #[rpc] method", METHOD_KEYS));
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

/// Parses and removes every `#[rpc(...)]` on a parameter.
pub fn take_param_attrs(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> ParamAttrs {
    let mut out = ParamAttrs::default();
    let mut seen = Vec::new();
    for attr in take_rpc_attrs(attrs) {
        if !has_options(cx, &attr, "method parameter", PARAM_KEYS) {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            given_once(&meta, &mut seen)?;
            if meta.path.is_ident(NAME) {
                out.name = Some(string_value(&meta, NAME, "\"paramName\"")?);
            } else {
                return Err(unknown_key(&meta, "on an #[rpc] method parameter", PARAM_KEYS));
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

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

fn parse_rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<RenameRule> {
    let value = string_value(meta, RENAME_ALL, "\"camelCase\"")?;
    RenameRule::from_str(&value.value()).ok_or_else(|| {
        syn::Error::new(
            value.span(),
            format!("unknown rename_all rule `{}`; expected one of: {}", value.value(), RULE_NAMES.join(", ")),
        )
    })
}

/// Keys inside `requires(...)`.
const ANY: &str = "any";
const ALL: &str = "all";
pub(crate) const REQUIRES_KEYS: &[&str] = &[ANY, ALL];

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
fn parse_requires(meta: &ParseNestedMeta<'_>) -> syn::Result<Requires> {
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

/// `mcp(hidden)`, `mcp(title = "Add", read_only, open_world = false)`.
fn parse_mcp(meta: &ParseNestedMeta<'_>) -> syn::Result<McpAttrs> {
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

/// `error(code = -32001, message = "Not found")`.
fn parse_declared_error(meta: &ParseNestedMeta<'_>) -> syn::Result<DeclaredError> {
    let mut code = None;
    let mut message = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident(CODE) {
            let expr: syn::Expr = inner.value()?.parse()?;
            code = Some(parse_code(&expr)?);
        } else if inner.path.is_ident(MESSAGE) {
            message = Some(inner.value()?.parse::<LitStr>()?.value());
        } else {
            return Err(unknown_key(&inner, "in `error(...)`", ERROR_KEYS));
        }
        Ok(())
    })?;
    match (code, message) {
        (Some(code), Some(message)) => Ok(DeclaredError { code, message }),
        _ => Err(meta.error("`error` needs both keys: `error(code = -32001, message = \"...\")`")),
    }
}

/// An error code: an integer literal (possibly negative) or the path of
/// a constant (`NOT_FOUND`, `errors::NOT_FOUND`), checked by the compiler
/// to be an `i64`.
pub fn parse_code(expr: &syn::Expr) -> syn::Result<syn::Expr> {
    let invalid = || {
        syn::Error::new_spanned(expr, "error `code` must be an integer such as -32001 or the name of an `i64` constant")
    };
    match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => int.base10_parse::<i64>().map(|_| expr.clone()),
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr: inner, .. }) => match &**inner {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => {
                int.base10_parse::<i64>().map(|_| expr.clone())
            }
            syn::Expr::Path(_) => Ok(expr.clone()),
            _ => Err(invalid()),
        },
        syn::Expr::Path(_) => Ok(expr.clone()),
        _ => Err(invalid()),
    }
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
