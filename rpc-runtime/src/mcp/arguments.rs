//! Strings in, typed params out: URI template variables and prompt
//! arguments arrive as strings, and become a method's params by name
//! (numbers and booleans read from their text when the parameter is one);
//! then the method runs like any call, and its result is shaped for MCP.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::ToolServer;
use super::content::MARKER;
use super::input::InputCall;
use super::logging::{CallLog, LogLevel, log_outlet, logged};
use super::session::{Caller, Meta};
use super::written::{self, Written};
use crate::catalog::MethodInfo;
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::router::{Called, MethodFuture, MethodOutcome, MethodResult, encode, written_result};
use crate::wire::{ErrorObject, lexical};

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

/// The params object made of `values` (name, string) for `params` (a
/// name given twice keeps its first value), written by hand: see
/// [`ParamsText::raw`].
pub(crate) fn params_from_strings<N, V>(params: &[StringParam], values: &[(N, V)]) -> ParamsText
where
    N: AsRef<str>,
    V: AsRef<str>,
{
    let mut out = Vec::with_capacity(64);
    out.push(b'{');
    for (index, (name, text)) in values.iter().enumerate() {
        let name = name.as_ref();
        if values[..index].iter().any(|(earlier, _)| earlier.as_ref() == name) {
            continue;
        }
        if out.len() > 1 {
            out.push(b',');
        }
        let text = text.as_ref();
        written::string(&mut out, name);
        out.push(b':');
        let scalar = params.iter().any(|param| param.name == name && param.scalar);
        if scalar && (matches!(text, "true" | "false") || lexical::is_number(text)) {
            out.extend_from_slice(text.as_bytes());
        } else {
            written::string(&mut out, text);
        }
    }
    out.push(b'}');
    ParamsText(String::from_utf8(out).unwrap_or_else(|err| unreachable!("JSON strings are UTF-8: {err}")))
}

/// A params object made of string arguments.
pub(crate) struct ParamsText(String);

impl ParamsText {
    /// The params as JSON (read once more, briefly: a `RawValue` can only
    /// be had that way, and a borrowed one costs no copy).
    pub(crate) fn raw(&self) -> &RawValue {
        serde_json::from_str(&self.0).unwrap_or_else(|err| unreachable!("written as JSON: {err}"))
    }
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

impl Extras {
    /// What the call `(method, target, arguments)` of a request with
    /// `meta` from `caller` carries: its log level, and whether (and how)
    /// it may ask the client for input.
    pub(crate) fn of(
        meta: &Meta<'_>,
        caller: &Caller,
        params: &Params<'_>,
        call: (&str, &str, Option<&RawValue>),
    ) -> Result<Extras, ErrorObject> {
        Ok(Extras { log_level: CallLog::level_of(meta, caller)?, input: InputCall::of(meta, caller, params, call)? })
    }
}

/// How long a method's JSON usually is: its buffer starts this big, so
/// that writing it rarely reallocates.
const RESULT_CAPACITY: usize = 512;

/// Runs method `name` with `params` on `cx`, then `finish` on its result,
/// which writes the answer: at once, into the response buffer `out`, for
/// a plain `fn`; when it completes, for an `async fn` (`Ok(Some(..))`).
/// With a `log_level`, the call's `tracing` events at that level and
/// above go to the client first (see [`super::logging`]).
pub(crate) fn invoke<F>(
    server: &Arc<ToolServer>,
    name: &'static str,
    params: Option<&RawValue>,
    cx: &Context,
    extras: Extras,
    out: &mut Vec<u8>,
    finish: F,
) -> Result<Option<MethodFuture>, ErrorObject>
where
    F: FnOnce(&ToolServer, Written<'_>, &mut Vec<u8>) -> Result<(), ErrorObject> + Send + 'static,
{
    if extras.log_level.is_some() {
        let rest = Extras { log_level: None, ..extras };
        let call = || outcome(|out| invoke(server, name, params, cx, rest, out, finish));
        return settle(logged(extras.log_level, log_outlet(cx), call), out);
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
    let mut written = Scratch::take();
    let result = match server.router.call(name, server.router.find(name), params, false, cx, &mut written) {
        Called::Written => std::str::from_utf8(&written).map_err(|_| not_json()),
        Called::Failed(error) => Err(error),
        Called::NotFound => Err(not_served(name)),
        Called::Pending(future) => {
            Scratch::give(written);
            let server = Arc::clone(server);
            let Some((round, call)) = round else {
                return Ok(Some(Box::pin(async move { finish_later(&server, future.await, finish) })));
            };
            // 2026-07-28: a handler that asks for input it was not given
            // stops there, and the call answers what it needs.
            return Ok(Some(Box::pin(async move {
                tokio::select! {
                    result = future => finish_later(&server, result, finish),
                    () = round.blocked() => encode(&round.input_required(call, &server.server_info_meta)),
                }
            })));
        }
    };
    let answered = finish(server, result, out).map(|()| None);
    Scratch::give(written);
    answered
}

thread_local! {
    /// The buffer methods write their results into before they are
    /// answered, kept for the thread's next call (see [`Scratch`]).
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The scratch buffer of this thread: taken for one call, given back when
/// the call's answer is written (a call within it gets a new one).
struct Scratch;

impl Scratch {
    /// A buffer bigger than this is not kept.
    const MAX_KEPT: usize = 64 * 1024;

    fn take() -> Vec<u8> {
        let mut buffer = SCRATCH.take();
        buffer.clear();
        buffer.reserve(RESULT_CAPACITY);
        buffer
    }

    fn give(buffer: Vec<u8>) {
        if buffer.capacity() <= Scratch::MAX_KEPT {
            SCRATCH.set(buffer);
        }
    }
}

/// `finish` of a result that came later, written into a buffer of its own.
fn finish_later<F>(server: &ToolServer, result: MethodResult, finish: F) -> MethodResult
where
    F: FnOnce(&ToolServer, Written<'_>, &mut Vec<u8>) -> Result<(), ErrorObject>,
{
    let mut out = Vec::with_capacity(RESULT_CAPACITY);
    match result {
        Ok(raw) => finish(server, Ok(raw.get()), &mut out)?,
        Err(error) => finish(server, Err(error), &mut out)?,
    }
    written_result(out)
}

/// A call that writes its answer (as [`invoke`] does), as a
/// [`MethodOutcome`].
pub(crate) fn outcome(call: impl FnOnce(&mut Vec<u8>) -> Result<Option<MethodFuture>, ErrorObject>) -> MethodOutcome {
    let mut out = Vec::new();
    match call(&mut out) {
        Ok(None) => MethodOutcome::Ready(written_result(out)),
        Ok(Some(future)) => MethodOutcome::Pending(future),
        Err(error) => MethodOutcome::Ready(Err(error)),
    }
}

/// A [`MethodOutcome`] as a call that writes its answer into `out` gives it.
fn settle(outcome: MethodOutcome, out: &mut Vec<u8>) -> Result<Option<MethodFuture>, ErrorObject> {
    match outcome {
        MethodOutcome::Ready(result) => {
            out.extend_from_slice(result?.get().as_bytes());
            Ok(None)
        }
        MethodOutcome::Pending(future) => Ok(Some(future)),
    }
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

#[cold]
fn not_json() -> ErrorObject {
    ErrorObject::internal_error("Internal error: the result is not valid JSON")
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
        let raw = params_from_strings(&params, &[("id", "42"), ("title", "42")]);
        let raw = raw.raw();
        assert_eq!(raw.get(), r#"{"id":42,"title":"42"}"#);
        let raw = params_from_strings(&params, &[("id", "x")]);
        let raw = raw.raw();
        assert_eq!(raw.get(), r#"{"id":"x"}"#);
        let raw = params_from_strings(&params, &[("id", "-3"), ("title", "say \"hi\""), ("id", "4")]);
        let raw = raw.raw();
        assert_eq!(raw.get(), r#"{"id":-3,"title":"say \"hi\""}"#);
        for (text, json) in [("true", "true"), ("2.5", "2.5"), ("1e3", "1e3"), ("007", "\"007\""), ("1e999", "1e999")] {
            assert_eq!(
                params_from_strings(&params, &[("id", text)]).raw().get(),
                format!(r#"{{"id":{json}}}"#),
                "{text}"
            );
        }
    }
}
