//! `tools/call`: a tool's `arguments` become its method's params, decoded
//! with the same strict rules as any request; the method's result becomes
//! a text block with its JSON plus `structuredContent`; its error becomes a
//! result with `isError: true` that the model can read.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use super::arguments::{Extras, invoke};
use super::progress::ProgressToken;
use super::revision::Revision;
use super::tools::{Arguments, Structured, Tool, WRAPPED_RESULT};
use super::{Stamp, ToolServer};
use crate::dispatch::context::Context;
use crate::dispatch::params::named_to_positional;
use crate::dispatch::router::{MethodOutcome, MethodResult};
use crate::wire::{ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, REQUEST_CANCELLED};

/// Calls `tool` with `arguments` (the request's member, if given) under
/// `revision`, on the caller's context `cx`.
pub(crate) fn call_tool(
    server: &Arc<ToolServer>,
    tool: &Tool,
    arguments: Option<&RawValue>,
    progress_token: Option<&RawValue>,
    revision: Revision,
    extras: Extras,
    cx: &Context,
) -> Result<MethodOutcome, ErrorObject> {
    if let Some(arguments) = arguments
        && !arguments.get().starts_with('{')
    {
        return Err(ErrorObject::invalid_params("Invalid params: `arguments` must be an object"));
    }
    let params = match params_of(tool, arguments) {
        Ok(params) => params,
        Err(error) => return Ok(MethodOutcome::Ready(finish(server, tool, revision, Err(error)))),
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
    Ok(invoke(server, name, params.as_deref(), cx, extras, move |server, result| match server.tools.at(index) {
        Some(tool) => finish(server, tool, revision, result),
        None => Err(ErrorObject::internal_error("Internal error: the tool disappeared")),
    }))
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

/// The text block of a result.
#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum StructuredContent<'a> {
    AsIs(&'a RawValue),
    Wrapped(BTreeMap<&'static str, &'a RawValue>),
}

/// A `CallToolResult`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallToolResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<StructuredContent<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    #[serde(flatten)]
    stamp: Option<Stamp<'a>>,
}

/// The answer to `tools/call`, from the method's result.
fn finish(server: &ToolServer, tool: &Tool, revision: Revision, result: MethodResult) -> MethodResult {
    let value = match result {
        Ok(value) => value,
        Err(error) => return failed(server, revision, error),
    };
    let structured_content = match tool.structured(revision) {
        Structured::Omit => None,
        Structured::AsIs => Some(StructuredContent::AsIs(&value)),
        Structured::Wrap => Some(StructuredContent::Wrapped([(WRAPPED_RESULT, &*value)].into_iter().collect())),
    };
    let result = CallToolResult {
        content: [TextContent { kind: "text", text: value.get() }],
        structured_content,
        is_error: false,
        stamp: server.stamp(revision),
    };
    crate::dispatch::router::encode(&result)
}

/// A method's error: a tool execution error (a result with `isError`, so
/// that the model sees it and may correct itself), except for what MCP
/// keeps as protocol errors: internal errors, cancellation, and invalid
/// arguments before 2025-11-25.
fn failed(server: &ToolServer, revision: Revision, error: ErrorObject) -> MethodResult {
    let protocol = match error.code() {
        INVALID_PARAMS => !revision.invalid_arguments_are_tool_errors(),
        INTERNAL_ERROR | REQUEST_CANCELLED => true,
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
    let result = CallToolResult {
        content: [TextContent { kind: "text", text: &text }],
        structured_content: None,
        is_error: true,
        stamp: server.stamp(revision),
    };
    crate::dispatch::router::encode(&result)
}
