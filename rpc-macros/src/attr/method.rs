//! A method's and a parameter's `#[rpc(...)]`: the wire name, the params'
//! shape, declared errors, aliases, permissions, the MCP tool, and how the
//! call runs. The keys that nest options are parsed in `error`,
//! `requires` and `mcp`.

use proc_macro2::Span;
use syn::{Attribute, LitStr};

use super::error::{parse_declared_error, DeclaredError};
use super::mcp::{parse_mcp, McpAttrs};
use super::requires::{parse_requires, Requires};
use super::{
    flag, given_once, has_options, string_value, take_rpc_attrs, unknown_key, ALIAS, ALLOW_EXTRA_PARAMS, BLOCKING,
    ERROR, EXCLUSIVE, MCP, METHOD_KEYS, NAME, NOTIFICATION, PARAM_KEYS, PARAM_STRUCTURE, REQUIRES, STRUCTURES,
    UNSUBSCRIBE, WHOLE_PARAMS,
};
use crate::ctxt::Ctxt;

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

/// Options on a parameter: `#[rpc(name = "x")]`.
#[derive(Default)]
pub struct ParamAttrs {
    pub name: Option<LitStr>,
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
                // Whatever it would have declared is not there: no second
                // error about, say, the prompt a completion names.
                out.mcp = McpAttrs { malformed: true, ..McpAttrs::default() };
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
