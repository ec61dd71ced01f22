//! Strings in, typed params out: URI template variables and prompt
//! arguments arrive as strings, and become a method's params by name
//! (numbers and booleans read from their text when the parameter is one);
//! then the method runs like any call, and its result is shaped for MCP.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ToolServer;
use super::content::MARKER;
use super::input::InputCall;
use super::logging::{LogLevel, log_outlet, logged};
use crate::catalog::MethodInfo;
use crate::dispatch::context::Context;
use crate::dispatch::router::{Called, MethodOutcome, MethodResult, encode, written_result};
use crate::wire::ErrorObject;

/// One parameter that takes a string argument.
#[derive(Debug)]
pub(crate) struct StringParam {
    /// The wire name.
    pub(crate) name: &'static str,
    /// It may be left out.
    pub(crate) optional: bool,
    /// The doc comment.
    pub(crate) description: Option<&'static str>,
    /// The parameter is a number or a boolean: a string that reads as one
    /// is passed as one.
    scalar: bool,
}

/// The params of `method`, as string arguments take them.
pub(crate) fn string_params(method: &MethodInfo) -> Vec<StringParam> {
    let schema = method.named_params_schema().unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    method
        .spec
        .params
        .iter()
        .enumerate()
        .map(|(index, param)| {
            let property = properties.and_then(|properties| properties.get(param.name));
            StringParam {
                name: param.name,
                optional: param.optional,
                description: method.params.get(index).and_then(|info| info.description),
                scalar: property.is_some_and(is_scalar),
            }
        })
        .collect()
}

/// Whether a param schema says number, integer or boolean (and maybe
/// null), never string.
fn is_scalar(schema: &Value) -> bool {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    !types.is_empty() && types.iter().all(|t| matches!(*t, "integer" | "number" | "boolean" | "null"))
}

/// The params object made of `values` (name, string) for `params`.
pub(crate) fn params_from_strings<'a>(
    params: &[StringParam],
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Box<RawValue> {
    let mut object = Map::new();
    for (name, text) in values {
        let scalar = params.iter().any(|param| param.name == name && param.scalar);
        let value = match serde_json::from_str::<Value>(text) {
            Ok(value @ (Value::Number(_) | Value::Bool(_))) if scalar => value,
            _ => Value::String(text.to_owned()),
        };
        object.insert(name.to_owned(), value);
    }
    serde_json::value::to_raw_value(&object).unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"))
}

/// What kind of value a method's result is, by its schema's marker
/// (`x-mcp`, set by the types of [`super::content`]) or its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// One of this crate's MCP types (`contents`, `prompt`, `completion`).
    Marked(&'static str),
    /// A JSON string.
    Text,
    /// Any other value.
    Json,
}

impl Reply {
    pub(crate) fn of(method: &MethodInfo) -> Reply {
        let Some(result) = method.result_schema() else { return Reply::Json };
        if let Some(marker) = result.schema.get(MARKER).and_then(Value::as_str) {
            for known in ["contents", "prompt", "completion", "resource"] {
                if marker == known {
                    return Reply::Marked(known);
                }
            }
        }
        match result.schema.get("type").and_then(Value::as_str) {
            Some("string") => Reply::Text,
            _ => Reply::Json,
        }
    }
}

/// What a call of a user method carries besides its params.
#[derive(Default)]
pub(crate) struct Extras {
    /// Send the call's logs at this level and above.
    pub(crate) log_level: Option<LogLevel>,
    /// It may ask the client for input (and, in 2026-07-28, the call's
    /// identity for its `requestState`).
    pub(crate) input: Option<(InputCall, Option<String>)>,
}

/// Runs method `name` with `params` on `cx`, then `finish` on its result:
/// at once for a plain `fn`, when it completes for an `async fn`. With a
/// `log_level`, the call's `tracing` events at that level and above go to
/// the client (see [`super::logging`]).
pub(crate) fn invoke<F>(
    server: &Arc<ToolServer>,
    name: &'static str,
    params: Option<&RawValue>,
    cx: &Context,
    extras: Extras,
    finish: F,
) -> MethodOutcome
where
    F: FnOnce(&ToolServer, MethodResult) -> MethodResult + Send + 'static,
{
    if extras.log_level.is_some() {
        let rest = Extras { log_level: None, ..extras };
        return logged(extras.log_level, log_outlet(cx), || invoke(server, name, params, cx, rest, finish));
    }
    let scoped;
    let (cx, round) = match extras.input {
        Some((input, call)) => {
            let round = input.round.clone().zip(call);
            scoped = cx.clone().with_extension(input);
            (&scoped, round)
        }
        None => (cx, None),
    };
    let mut out = Vec::new();
    let result = match server.router.call(name, server.router.find(name), params, false, cx, &mut out) {
        Called::Written => written_result(out),
        Called::Failed(error) => Err(error),
        Called::NotFound => Err(not_served(name)),
        Called::Pending(future) => {
            let server = Arc::clone(server);
            let Some((round, call)) = round else {
                return MethodOutcome::Pending(Box::pin(async move { finish(&server, future.await) }));
            };
            // 2026-07-28: a handler that asks for input it was not given
            // stops there, and the call answers what it needs.
            return MethodOutcome::Pending(Box::pin(async move {
                tokio::select! {
                    result = future => finish(&server, result),
                    () = round.blocked() => encode(&round.input_required(call, &server.server_info_meta)),
                }
            }));
        }
    };
    MethodOutcome::Ready(finish(server, result))
}

/// Runs method `name` with `params` on `cx` to its end.
pub(crate) async fn run(
    server: &ToolServer,
    name: &'static str,
    params: Option<&RawValue>,
    cx: &Context,
) -> MethodResult {
    let mut out = Vec::new();
    let called = server.router.call(name, server.router.find(name), params, false, cx, &mut out);
    match called {
        Called::Written => written_result(out),
        Called::Failed(error) => Err(error),
        Called::NotFound => Err(not_served(name)),
        Called::Pending(future) => future.await,
    }
}

fn not_served(name: &str) -> ErrorObject {
    ErrorObject::internal_error(format!("Internal error: method `{name}` is not served"))
}

/// The result of a method whose value did not have the shape its kind
/// needs (a hand-written `JsonSchema` that says otherwise, say).
pub(crate) fn unexpected(name: &str, wanted: &str, err: &serde_json::Error) -> ErrorObject {
    ErrorObject::internal_error(format!(
        "Internal error: method `{name}` returned something other than {wanted}: {err}"
    ))
}

#[cfg(test)]
mod tests {
    use super::{StringParam, params_from_strings};

    #[test]
    fn numbers_and_booleans_are_read_from_text_only_for_scalar_params() {
        let params = [
            StringParam { name: "id", optional: false, description: None, scalar: true },
            StringParam { name: "title", optional: false, description: None, scalar: false },
        ];
        let raw = params_from_strings(&params, [("id", "42"), ("title", "42")]);
        assert_eq!(raw.get(), r#"{"id":42,"title":"42"}"#);
        let raw = params_from_strings(&params, [("id", "x")]);
        assert_eq!(raw.get(), r#"{"id":"x"}"#);
    }
}
