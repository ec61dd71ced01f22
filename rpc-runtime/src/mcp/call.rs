//! `tools/call`: a tool's `arguments` become its method's params, decoded
//! with the same strict rules as any request; the method's result becomes
//! a text block with its JSON plus `structuredContent` (no content for
//! `()`); its error becomes a result with `isError: true` that the model
//! can read.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::arguments::{Extras, invoke};
use super::changes::tool_served;
use super::progress::ProgressToken;
use super::revision::Revision;
use super::session::Meta;
use super::tools::{Arguments, Structured, Tool, WRAPPED_RESULT};
use super::written::{self, Object, Written};
use super::{Answered, ToolServer, read};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::params::named_to_positional;
use crate::wire::{ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, PERMISSION_DENIED, REQUEST_CANCELLED};

/// The params of `tools/call`.
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `tools/call`: runs the tool's method (see [`call_tool`]); the answer is
/// written into `out`.
pub(crate) fn tools_call(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let request: CallParams<'_> = read(params, "tools/call")?;
    let meta = Meta::read(request.meta);
    let caller = meta.caller(cx)?;
    let revision = caller.revision;
    let Some(name) = request.name else {
        return Err(ErrorObject::new(INVALID_PARAMS, "Invalid params: `tools/call` needs the tool's `name`"));
    };
    let tool = server.tools.get(&name).filter(|_| tool_served(server.changes.as_ref(), &name));
    let Some(tool) = tool else {
        return Err(ErrorObject::new(INVALID_PARAMS, format!("Invalid params: unknown tool `{name}`")));
    };
    #[cfg(feature = "otel")]
    super::name_span("tools/call", &name);
    let arguments = request.arguments.filter(|raw| raw.get() != "null");
    let extras = Extras::of(&meta, &caller, params, ("tools/call", &name, arguments))?;
    call_tool(server, tool, arguments, meta.progress_token, revision, extras, cx, out)
}

/// Calls `tool` with `arguments` (the request's member, if given) under
/// `revision`, on the caller's context `cx`; the answer is written into
/// `out`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn call_tool(
    server: &Arc<ToolServer>,
    tool: &Tool,
    arguments: Option<&RawValue>,
    progress_token: Option<&RawValue>,
    revision: Revision,
    extras: Extras,
    cx: &Context,
    out: &mut Vec<u8>,
) -> Answered {
    if let Some(arguments) = arguments
        && !arguments.get().starts_with('{')
    {
        return Err(ErrorObject::invalid_params("Invalid params: `arguments` must be an object"));
    }
    let params = match params_of(tool, arguments) {
        Ok(params) => params,
        Err(error) => return finish(server, tool, revision, Err(error), out).map(|()| None),
    };
    let scoped;
    let cx = match progress_token {
        Some(token) => {
            scoped = cx.clone().with_extension(ProgressToken::new(token));
            &scoped
        }
        None => cx,
    };
    let (name, index) = (tool.method.spec.name, tool.index);
    invoke(server, name, params.as_deref(), cx, extras, out, move |server, result, out| match server.tools.at(index) {
        Some(tool) => finish(server, tool, revision, result, out),
        None => Err(ErrorObject::internal_error("Internal error: the tool disappeared")),
    })
}

/// The method's params, from the tool's arguments.
fn params_of<'a>(tool: &Tool, arguments: Option<&'a RawValue>) -> Result<Option<Cow<'a, RawValue>>, ErrorObject> {
    let spec = tool.method.spec;
    match tool.arguments {
        Arguments::Named | Arguments::Whole => Ok(arguments.map(Cow::Borrowed)),
        Arguments::Positional => named_to_positional(arguments, spec).map(|params| Some(Cow::Owned(params))),
        Arguments::Wrapped { name, optional } => {
            let members: HashMap<String, &RawValue> = match arguments {
                Some(arguments) => serde_json::from_str(arguments.get()).map_err(|err| {
                    ErrorObject::invalid_params(format!("Invalid params: malformed `arguments`: {err}"))
                })?,
                None => Default::default(),
            };
            if let Some(unknown) = members.keys().find(|key| key.as_str() != name)
                && !spec.allow_extra
            {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown argument `{unknown}` for tool `{}`; expected: {name}",
                    tool.name()
                )));
            }
            match members.get(name) {
                Some(value) => Ok(Some(Cow::Owned((*value).to_owned()))),
                None if optional => Ok(None),
                None => Err(ErrorObject::invalid_params(format!(
                    "missing required argument `{name}` of tool `{}`",
                    tool.name()
                ))),
            }
        }
    }
}

/// The answer to `tools/call`, a `CallToolResult`, from the method's
/// result: its JSON as the text block and, as it is, as
/// `structuredContent`; no content at all for a method that returns `()`.
fn finish(
    server: &ToolServer,
    tool: &Tool,
    revision: Revision,
    result: Written<'_>,
    out: &mut Vec<u8>,
) -> Result<(), ErrorObject> {
    let json = match result {
        Ok(json) => json,
        Err(error) => return failed(server, revision, error, out),
    };
    let mut object = Object::open(out);
    if tool.returns_unit() && json == "null" {
        object.member("content").extend_from_slice(b"[]");
    } else {
        text_block(object.member("content"), json);
    }
    match tool.structured(revision) {
        Structured::Omit => {}
        Structured::AsIs => object.json("structuredContent", json),
        Structured::Wrap => {
            let mut wrapped = Object::open(object.member("structuredContent"));
            wrapped.json(WRAPPED_RESULT, json);
            wrapped.close();
        }
    }
    object.stamp(server, revision);
    object.close();
    Ok(())
}

/// `[{"type": "text", "text": text}]`.
fn text_block(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(br#"[{"type":"text","text":"#);
    written::string(out, text);
    out.extend_from_slice(b"}]");
}

/// A method's error: a tool execution error (a result with `isError`, so
/// that the model sees it and may correct itself), except for what MCP
/// keeps as protocol errors: internal errors, cancellation, invalid
/// arguments before 2025-11-25, and a caller's missing permission (not
/// something the model can correct; over HTTP with OAuth, a 403 that
/// asks the client for a wider scope).
fn failed(server: &ToolServer, revision: Revision, error: ErrorObject, out: &mut Vec<u8>) -> Result<(), ErrorObject> {
    let protocol = match error.code() {
        INVALID_PARAMS => !revision.invalid_arguments_are_tool_errors(),
        INTERNAL_ERROR | REQUEST_CANCELLED | PERMISSION_DENIED => true,
        _ => false,
    };
    if protocol {
        return Err(error);
    }
    let mut text = format!("{} (error {})", error.message(), error.code());
    if let Some(data) = error.data() {
        text.push_str(": ");
        text.push_str(data.get());
    }
    let mut object = Object::open(out);
    text_block(object.member("content"), &text);
    object.json("isError", "true");
    object.stamp(server, revision);
    object.close();
    Ok(())
}
