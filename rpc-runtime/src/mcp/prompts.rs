//! Prompts: methods marked `#[rpc(mcp(prompt))]`, whose params are the
//! prompt's arguments (`prompts/list`) and whose result becomes the
//! prompt's messages (`prompts/get`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::arguments::{Extras, Reply, StringParam, invoke, params_from_strings, string_params, unexpected};
use super::input::InputCall;
use super::logging::CallLog;
use super::revision::Revision;
use super::session::Meta;
use super::tools::{group, page};
use super::{ListParams, Stamp, ToolServer, cacheable, read, stamped};
use crate::catalog::{Catalog, McpKind, MethodInfo};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::router::{MethodOutcome, encode};
use crate::wire::{ErrorObject, INVALID_PARAMS};

/// One prompt.
pub(crate) struct Prompt {
    method: &'static MethodInfo,
    pub(crate) params: Vec<StringParam>,
    reply: Reply,
}

impl Prompt {
    /// `#[rpc(mcp(name = ".."))]`, else the method's name.
    pub(crate) fn name(&self) -> &'static str {
        self.method.tool.name.unwrap_or(self.method.spec.name)
    }

    /// The prompt as `prompts/list` shows it under `revision`.
    fn describe(&self, revision: Revision) -> Box<RawValue> {
        let mut out = Map::new();
        super::describe(&mut out, self.method, revision);
        let arguments: Vec<Value> = self
            .params
            .iter()
            .map(|param| {
                let mut argument = Map::new();
                argument.insert("name".into(), param.name.into());
                if let Some(description) = param.description {
                    argument.insert("description".into(), description.into());
                }
                argument.insert("required".into(), (!param.optional).into());
                Value::Object(argument)
            })
            .collect();
        out.insert("arguments".into(), arguments.into());
        serde_json::value::to_raw_value(&out).unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"))
    }
}

/// Every prompt of a router.
#[derive(Default)]
pub(crate) struct Prompts {
    prompts: Vec<Prompt>,
    by_name: HashMap<&'static str, usize>,
    listings: [OnceLock<Vec<Box<RawValue>>>; 4],
}

impl Prompts {
    pub(crate) fn new(catalog: &Catalog, served: impl Fn(&str) -> bool) -> Prompts {
        let mut prompts = Prompts::default();
        for method in super::offered(catalog, &served) {
            if method.tool.kind != McpKind::Prompt {
                continue;
            }
            let prompt = Prompt { method, params: string_params(method), reply: Reply::of(method) };
            let name = prompt.name();
            if prompts.by_name.contains_key(name) {
                tracing::warn!(
                    prompt = name,
                    method = method.spec.name,
                    "not offered as an MCP prompt: another method has this prompt name; give one `#[rpc(mcp(name = \"...\"))]`"
                );
                continue;
            }
            prompts.by_name.insert(name, prompts.prompts.len());
            prompts.prompts.push(prompt);
        }
        prompts
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The prompt called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Prompt> {
        self.by_name.get(name).map(|&index| &self.prompts[index])
    }
}

/// `prompts/list`: one page of prompts.
pub(crate) fn list(server: &Arc<ToolServer>, params: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: ListParams<'_> = read(&params, "prompts/list")?;
    let meta = Meta::read(request.meta);
    let revision = meta.revision(cx)?;
    let prompts = &server.prompts;
    let listing = prompts.listings[group(revision)]
        .get_or_init(|| prompts.prompts.iter().map(|prompt| prompt.describe(revision)).collect());
    let (items, next) = page(listing, request.cursor.as_deref(), server.page_size, "prompts")?;
    let mut result = Map::new();
    let items: Vec<Value> = items.iter().filter_map(|item| serde_json::from_str(item.get()).ok()).collect();
    result.insert("prompts".into(), items.into());
    if let Some(next) = next {
        result.insert("nextCursor".into(), next.into());
    }
    cacheable(&mut result, revision);
    Ok(MethodOutcome::Ready(stamped(server, revision, result)))
}

#[derive(Deserialize)]
struct GetParams<'a> {
    #[serde(default)]
    name: Option<String>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `prompts/get`: the prompt's method, given its arguments.
pub(crate) fn get(server: &Arc<ToolServer>, params: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: GetParams<'_> = read(&params, "prompts/get")?;
    let meta = Meta::read(request.meta);
    let caller = meta.caller(cx)?;
    let revision = caller.revision;
    let log_level = CallLog::level_of(&meta, &caller)?;
    let Some(name) = request.name else {
        return Err(ErrorObject::new(INVALID_PARAMS, "Invalid params: `prompts/get` needs the prompt's `name`"));
    };
    let Some(prompt) = server.prompts.get(&name) else {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: unknown prompt `{name}`; `prompts/list` shows the ones there are"),
        ));
    };
    let arguments: BTreeMap<String, Value> = match request.arguments.filter(|raw| raw.get() != "null") {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|_| {
            ErrorObject::new(
                INVALID_PARAMS,
                "Invalid params: `arguments` of `prompts/get` must be an object of strings",
            )
        })?,
        None => BTreeMap::new(),
    };
    let mut values = Vec::with_capacity(arguments.len());
    for (argument, value) in &arguments {
        match value {
            Value::String(text) => values.push((argument.as_str(), text.as_str())),
            Value::Null => {}
            other => {
                return Err(ErrorObject::new(
                    INVALID_PARAMS,
                    format!(
                        "Invalid params: prompt argument `{argument}` must be a string (MCP prompt arguments are strings), got {}",
                        kind_of(other)
                    ),
                ));
            }
        }
    }
    let missing: Vec<&str> = prompt
        .params
        .iter()
        .filter(|param| !param.optional && !values.iter().any(|(name, _)| *name == param.name))
        .map(|param| param.name)
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: prompt `{name}` needs the argument(s): {}", missing.join(", ")),
        ));
    }
    let input = InputCall::of(&meta, &caller, &params, ("prompts/get", &name, request.arguments))?;
    let extras = Extras { log_level, input };
    let params = params_from_strings(&prompt.params, values);
    let (method, reply) = (prompt.method.spec.name, prompt.reply);
    let summary = prompt.method.summary;
    Ok(invoke(server, method, Some(&params), cx, extras, move |server, result| {
        let value = result?;
        let stamp = server.stamp(revision);
        // The method's JSON goes out as it came, around MCP's members.
        match reply {
            Reply::Marked("prompt") => {
                #[derive(Deserialize)]
                struct Written<'a> {
                    #[serde(borrow, default)]
                    description: Option<&'a RawValue>,
                    #[serde(borrow)]
                    messages: &'a RawValue,
                }
                let written: Written<'_> =
                    serde_json::from_str(value.get()).map_err(|err| unexpected(method, "prompt messages", &err))?;
                let description = match written.description {
                    Some(raw) => Some(Description::Raw(raw)),
                    None => summary.map(Description::Text),
                };
                encode(&GetResult { description, messages: written.messages, stamp })
            }
            Reply::Text if value.get().starts_with('"') => {
                let messages = [UserText { role: "user", content: TextContent { kind: "text", text: &*value } }];
                encode(&GetResult { description: summary.map(Description::Text), messages, stamp })
            }
            _ => {
                let messages = [UserText { role: "user", content: TextContent { kind: "text", text: value.get() } }];
                encode(&GetResult { description: summary.map(Description::Text), messages, stamp })
            }
        }
    }))
}

/// A `GetPromptResult`.
#[derive(Serialize)]
struct GetResult<'a, M: Serialize> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Description<'a>>,
    messages: M,
    #[serde(flatten)]
    stamp: Option<Stamp<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Description<'a> {
    Raw(&'a RawValue),
    Text(&'a str),
}

/// A text message from the user (`text`: a string, or a JSON string as
/// it is).
#[derive(Serialize)]
struct UserText<T: Serialize> {
    role: &'static str,
    content: TextContent<T>,
}

#[derive(Serialize)]
struct TextContent<T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: T,
}

/// What kind of JSON value it is, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
