//! Completion: methods marked `#[rpc(mcp(complete(prompt = "..",
//! argument = "..")))]` (or `resource = "<template>"`) suggest values for
//! one argument (`completion/complete`). Each gets the partial value and,
//! if it takes a second param, the other arguments given so far.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::arguments::{Extras, Reply, invoke, outcome, unexpected};
use super::content::Completion;
use super::session::Meta;
use super::{ToolServer, read, stamped};
use crate::catalog::{Catalog, CompletionTarget, McpKind, MethodInfo};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::router::MethodOutcome;
use crate::wire::{ErrorObject, INVALID_PARAMS};

/// One completion method.
struct Completer {
    method: &'static MethodInfo,
    target: CompletionTarget,
    argument: &'static str,
    reply: Reply,
}

/// Every completion method of a router.
#[derive(Default)]
pub(crate) struct Completions {
    completers: Vec<Completer>,
}

impl Completions {
    pub(crate) fn new(catalog: &Catalog, served: impl Fn(&str) -> bool) -> Completions {
        let completers = super::offered(catalog, &served)
            .filter_map(|method| match method.tool.kind {
                McpKind::Complete { target, argument } => {
                    Some(Completer { method, target, argument, reply: Reply::of(method) })
                }
                _ => None,
            })
            .collect();
        Completions { completers }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.completers.is_empty()
    }

    fn find(&self, target: CompletionTarget, argument: &str) -> Option<&Completer> {
        self.completers.iter().find(|completer| completer.target == target && completer.argument == argument)
    }
}

#[derive(Deserialize)]
struct CompleteParams<'a> {
    #[serde(default, rename = "ref")]
    reference: Option<Reference>,
    #[serde(default)]
    argument: Option<Argument>,
    #[serde(default)]
    context: Option<CompletionContext>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Reference {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
}

#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct CompletionContext {
    #[serde(default)]
    arguments: Option<BTreeMap<String, String>>,
}

/// `completion/complete`: the values the argument's completion method
/// suggests (none when the argument has no such method).
pub(crate) fn complete(
    server: &Arc<ToolServer>,
    params: Params<'_>,
    cx: &Context,
) -> Result<MethodOutcome, ErrorObject> {
    let request: CompleteParams<'_> = read(&params, "completion/complete")?;
    let revision = Meta::read(request.meta).revision(cx)?;
    let (Some(reference), Some(argument)) = (request.reference, request.argument) else {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            "Invalid params: `completion/complete` needs `ref` ({\"type\": \"ref/prompt\", \"name\": ..} or {\"type\": \"ref/resource\", \"uri\": ..}) and `argument` ({\"name\": .., \"value\": ..})",
        ));
    };
    let target = match (reference.kind.as_str(), reference.name, reference.uri) {
        ("ref/prompt", Some(name), _) => match server.prompts.get(&name) {
            Some(prompt) => CompletionTarget::Prompt(prompt.name()),
            None => return Err(unknown(format!("unknown prompt `{name}`; `prompts/list` shows the ones there are"))),
        },
        ("ref/resource", _, Some(uri)) => match server.resources.template(&uri) {
            Some(entry) => CompletionTarget::Resource(entry.uri),
            None => {
                return Err(unknown(format!(
                    "unknown resource template `{uri}`; `resources/templates/list` shows the ones there are"
                )));
            }
        },
        (kind, ..) => {
            return Err(unknown(format!(
                "`ref` must be {{\"type\": \"ref/prompt\", \"name\": ..}} or {{\"type\": \"ref/resource\", \"uri\": ..}}, not type `{kind}` without them"
            )));
        }
    };
    let Some(completer) = server.completions.find(target, &argument.name) else {
        return Ok(MethodOutcome::Ready(answer(server, revision, Completion::counted(Vec::new()))));
    };
    let spec = completer.method.spec;
    let mut params = Map::new();
    if let Some(first) = spec.params.first() {
        params.insert(first.name.into(), argument.value.into());
    }
    if let Some(second) = spec.params.get(1) {
        let others = request.context.and_then(|context| context.arguments).unwrap_or_default();
        let others: Map<String, Value> = others.into_iter().map(|(name, value)| (name, value.into())).collect();
        params.insert(second.name.into(), others.into());
    }
    let params = serde_json::value::to_raw_value(&params).unwrap_or_else(|err| unreachable!("JSON serializes: {err}"));
    let (name, reply) = (spec.name, completer.reply);
    Ok(outcome(|out| {
        invoke(server, name, Some(&params), cx, Extras::default(), out, move |server, result, out| {
            let json = result?;
            let completion = if reply == Reply::Marked("completion") {
                serde_json::from_str::<Completion>(json).map_err(|err| unexpected(name, "a completion", &err))?.capped()
            } else {
                let values: Vec<String> =
                    serde_json::from_str(json).map_err(|err| unexpected(name, "a list of strings", &err))?;
                Completion::counted(values)
            };
            out.extend_from_slice(answer(server, revision, completion)?.get().as_bytes());
            Ok(())
        })
    }))
}

fn answer(
    server: &ToolServer,
    revision: super::Revision,
    completion: Completion,
) -> crate::dispatch::router::MethodResult {
    let mut result = Map::new();
    result.insert("completion".into(), serde_json::to_value(completion).unwrap_or_default());
    stamped(server, revision, result)
}

fn unknown(reason: String) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, format!("Invalid params: {reason}"))
}
