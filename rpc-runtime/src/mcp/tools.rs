//! The tools: every method of the router's catalog that can be one, with
//! its input schema (one self-contained JSON Schema 2020-12 object per
//! tool), its output schema, and how its `arguments` become the method's
//! params. Listed per revision, page by page.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::changes::Changes;
use super::revision::Revision;
use crate::catalog::{Catalog, McpKind, MethodInfo, StandaloneSchema};
use crate::dispatch::permissions::Permissions;
use crate::dispatch::router::Router;
use crate::spec::{ParamStructure, Requirement};
use crate::wire::ErrorObject;

/// How a tool's `arguments` (always an object) become the method's params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arguments {
    /// As they are: the method takes params by name.
    Named,
    /// Rewritten as an array in declaration order (`by-position` methods).
    Positional,
    /// As they are, as the whole params of a `whole_params` method whose
    /// one parameter is an object type.
    Whole,
    /// Member `name` of the arguments is the whole params of a
    /// `whole_params` method whose parameter is not an object (an array,
    /// say): tool arguments are always an object.
    Wrapped {
        /// The parameter's wire name.
        name: &'static str,
        /// The parameter is an `Option`: the member may be left out.
        optional: bool,
    },
}

/// What a tool's result is, as far as structured content goes.
enum Output {
    /// Nothing worth structuring (the method returns `()`).
    Unit,
    /// Always a JSON object: structured content as it is.
    Object(Map<String, Value>),
    /// Anything else (a number, an array, a string, ...): wrapped in
    /// `{"result": ...}` where structured content must be an object.
    Other { schema: Map<String, Value>, any: bool },
}

/// How a result goes into `structuredContent` under a revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Structured {
    /// Left out (the revision has no structured content, or nothing to say).
    Omit,
    /// The result as it is.
    AsIs,
    /// `{"result": <the result>}`.
    Wrap,
}

/// The member a wrapped result is put under.
pub(crate) const WRAPPED_RESULT: &str = "result";

/// One tool.
pub(crate) struct Tool {
    /// Its place among the router's tools.
    pub(crate) index: usize,
    pub(crate) method: &'static MethodInfo,
    pub(crate) arguments: Arguments,
    input_schema: Map<String, Value>,
    output: Output,
}

/// Every tool of a router, and their listings per revision.
pub(crate) struct Tools {
    tools: Vec<Tool>,
    by_name: HashMap<&'static str, usize>,
    /// Each tool's JSON, per group of revisions that list tools alike.
    listings: [OnceLock<Vec<Box<RawValue>>>; 4],
}

impl Tools {
    /// The tools of `router`: its catalog's methods, except notifications
    /// (they have no result), aliases (the current name is the tool),
    /// methods marked `#[rpc(mcp(hidden))]` or as another kind (resources,
    /// prompts, ...), subscriptions and their
    /// unsubscribe methods (a tool call has one result, not a stream), and
    /// names the router does not serve.
    pub(crate) fn new(router: &Router) -> Self {
        let catalog: &Catalog = router.catalog();
        let unsubscribes: Vec<&str> =
            catalog.methods().filter_map(|method| method.subscription.map(|sub| sub.unsubscribe)).collect();
        let mut tools = Vec::new();
        for method in catalog.methods() {
            let spec = method.spec;
            if spec.notification
                || method.alias_of.is_some()
                || method.tool.hidden
                || method.tool.kind != McpKind::Tool
                || method.subscription.is_some()
                || unsubscribes.contains(&spec.name)
                || router.spec(spec.name).is_none()
            {
                continue;
            }
            match Tool::new(method) {
                Some(tool) => tools.push(tool),
                None => tracing::debug!(method = spec.name, "not offered as an MCP tool: no params schema"),
            }
        }
        // Merged routers may bring two tools of one name: the first stays.
        let mut by_name = HashMap::new();
        tools.retain(|tool| {
            let name = tool.name();
            if by_name.contains_key(name) {
                tracing::warn!(
                    tool = name,
                    method = tool.method.spec.name,
                    "not offered as an MCP tool: another method has this tool name; give one `#[rpc(mcp(name = \"...\"))]`"
                );
                return false;
            }
            by_name.insert(name, by_name.len());
            true
        });
        for (index, tool) in tools.iter_mut().enumerate() {
            tool.index = index;
        }
        Tools { tools, by_name, listings: Default::default() }
    }

    /// The tool called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    /// The tool at `index` (its place: see [`Tool::index`]).
    pub(crate) fn at(&self, index: usize) -> Option<&Tool> {
        self.tools.get(index)
    }

    /// One page of the listing for `revision`: at most `page_size` tools
    /// from `cursor` on (an opaque string this server handed out; the start
    /// when absent), and the cursor of the next page if there is one.
    pub(crate) fn page(
        &self,
        revision: Revision,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<(&[Box<RawValue>], Option<String>), ErrorObject> {
        page(self.listing(revision), cursor, page_size, "tools")
    }

    fn listing(&self, revision: Revision) -> &[Box<RawValue>] {
        self.listings[group(revision)].get_or_init(|| self.tools.iter().map(|tool| tool.describe(revision)).collect())
    }

    /// [`Tools::page`] of the tools served now: without the ones `changes`
    /// hides.
    /// The caller's permissions hide the tools whose methods it may not
    /// call.
    pub(crate) fn page_served(
        &self,
        revision: Revision,
        cursor: Option<&str>,
        page_size: usize,
        changes: Option<&Changes>,
        permissions: &Permissions,
    ) -> Result<Page<'_>, ErrorObject> {
        let hides = changes.is_some_and(Changes::hides_any);
        let shown = |tool: &Tool| {
            permissions.allow(tool.method.spec.requires.as_ref())
                && !changes.is_some_and(|changes| hides && changes.is_hidden(tool.name()))
        };
        if !self.tools.iter().all(shown) {
            let served: Vec<Box<RawValue>> = (self.tools.iter().zip(self.listing(revision)))
                .filter(|(tool, _)| shown(tool))
                .map(|(_, listed)| listed.clone())
                .collect();
            let (items, next) = page(&served, cursor, page_size, "tools")?;
            return Ok((Cow::Owned(items.to_vec()), next));
        }
        self.page(revision, cursor, page_size).map(|(items, next)| (Cow::Borrowed(items), next))
    }
}

/// `items` without the ones whose method (`requires`, in the same order)
/// a caller holding `permissions` may not call; borrowed when it may call
/// them all.
pub(crate) fn visible<'a>(
    items: &'a [Box<RawValue>],
    requires: impl Iterator<Item = Option<&'static Requirement>> + Clone,
    permissions: &Permissions,
) -> Cow<'a, [Box<RawValue>]> {
    if requires.clone().all(|requirement| permissions.allow(requirement)) {
        return Cow::Borrowed(items);
    }
    Cow::Owned(
        items
            .iter()
            .zip(requires)
            .filter(|(_, requirement)| permissions.allow(*requirement))
            .map(|(item, _)| item.clone())
            .collect(),
    )
}

/// A page of a listing and the cursor of the next one.
pub(crate) type Page<'a> = (Cow<'a, [Box<RawValue>]>, Option<String>);

/// One page of `items`: at most `page_size` from `cursor` on (an opaque
/// string this server handed out, `<kind>:<index>`; the start when
/// absent), and the cursor of the next page if there is one.
pub(crate) fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    page_size: usize,
    kind: &str,
) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => parse_cursor(cursor, kind).filter(|&start| start < items.len()).ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "Invalid params: unknown `cursor` {cursor:?}; pass the `nextCursor` of the previous page"
            ))
        })?,
    };
    let end = start.saturating_add(page_size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| format_cursor(end, kind));
    Ok((&items[start..end], next))
}

/// Listings are the same within a group of revisions.
pub(crate) fn group(revision: Revision) -> usize {
    match revision {
        Revision::V2024_11_05 => 0,
        Revision::V2025_03_26 => 1,
        Revision::V2025_06_18 | Revision::V2025_11_25 => 2,
        Revision::V2026_07_28 => 3,
    }
}

/// Cursors say where the next page starts; they are opaque to clients.
fn format_cursor(start: usize, kind: &str) -> String {
    format!("{kind}:{start}")
}

fn parse_cursor(cursor: &str, kind: &str) -> Option<usize> {
    cursor.strip_prefix(kind)?.strip_prefix(':')?.parse().ok()
}

impl Tool {
    /// The tool of `method`; `None` when its params cannot be described as
    /// an object.
    fn new(method: &'static MethodInfo) -> Option<Tool> {
        let spec = method.spec;
        let (arguments, input_schema) = if spec.whole {
            let param = method.whole_param_schema()?;
            if param.object {
                (Arguments::Whole, param.schema)
            } else {
                let first = spec.params.first()?;
                let arguments = Arguments::Wrapped { name: first.name, optional: first.optional };
                (arguments, wrap_schema(first.name, !first.optional, param.schema, None))
            }
        } else {
            let arguments = match spec.structure {
                ParamStructure::ByPosition => Arguments::Positional,
                _ => Arguments::Named,
            };
            (arguments, method.named_params_schema()?)
        };
        Some(Tool { index: 0, method, arguments, input_schema, output: Output::of(method.result_schema()) })
    }

    /// The tool's name: `#[rpc(mcp(name = "..."))]`, else the method's.
    pub(crate) fn name(&self) -> &'static str {
        self.method.tool.name.unwrap_or(self.method.spec.name)
    }

    /// The method returns `()`: its result says nothing, and the tool's
    /// answer has no content (rather than the text `null`).
    pub(crate) fn returns_unit(&self) -> bool {
        matches!(self.output, Output::Unit)
    }

    /// How the result goes into `structuredContent` under `revision`.
    pub(crate) fn structured(&self, revision: Revision) -> Structured {
        if !revision.has_structured_output() {
            return Structured::Omit;
        }
        match &self.output {
            Output::Unit => Structured::Omit,
            Output::Object(_) => Structured::AsIs,
            Output::Other { .. } if revision.wants_object_output() => Structured::Wrap,
            Output::Other { .. } => Structured::AsIs,
        }
    }

    /// The `outputSchema` under `revision`, if any.
    fn output_schema(&self, revision: Revision) -> Option<Value> {
        match (self.structured(revision), &self.output) {
            (Structured::Omit, _) | (_, Output::Unit) => None,
            (_, Output::Object(schema)) => Some(Value::Object(schema.clone())),
            (Structured::Wrap, Output::Other { schema, .. }) => {
                let note = format!(
                    "The method's result is under `{WRAPPED_RESULT}`: MCP {revision} wants structured content to be an object."
                );
                Some(Value::Object(wrap_schema(WRAPPED_RESULT, true, schema.clone(), Some(note))))
            }
            (_, Output::Other { any: true, .. }) => None,
            (_, Output::Other { schema, .. }) => Some(Value::Object(schema.clone())),
        }
    }

    /// The tool as `tools/list` shows it under `revision`.
    fn describe(&self, revision: Revision) -> Box<RawValue> {
        let info = self.method;
        let mut tool = Map::new();
        tool.insert("name".into(), self.name().into());
        if let (true, Some(title)) = (revision.has_structured_output(), info.tool.title) {
            tool.insert("title".into(), title.into());
        }
        let description = [info.summary, info.description].into_iter().flatten().collect::<Vec<_>>().join("\n\n");
        if !description.is_empty() {
            tool.insert("description".into(), description.into());
        }
        tool.insert("inputSchema".into(), Value::Object(self.input_schema.clone()));
        if let Some(schema) = self.output_schema(revision) {
            tool.insert("outputSchema".into(), schema);
        }
        if revision.has_annotations() && info.tool.has_annotations() {
            let hints = [
                ("title", info.tool.title.map(Value::from)),
                ("readOnlyHint", info.tool.read_only.map(Value::from)),
                ("destructiveHint", info.tool.destructive.map(Value::from)),
                ("idempotentHint", info.tool.idempotent.map(Value::from)),
                ("openWorldHint", info.tool.open_world.map(Value::from)),
            ];
            let annotations: Map<String, Value> =
                hints.into_iter().filter_map(|(key, value)| Some((key.to_owned(), value?))).collect();
            tool.insert("annotations".into(), annotations.into());
        }
        serde_json::value::to_raw_value(&tool).unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"))
    }
}

impl Output {
    fn of(result: Option<StandaloneSchema>) -> Output {
        let Some(result) = result else { return Output::Unit };
        let unit = result.schema.get("type").and_then(Value::as_str) == Some("null")
            && result.schema.keys().all(|key| matches!(key.as_str(), "type" | "description" | "title"));
        if unit {
            Output::Unit
        } else if result.object {
            Output::Object(result.schema)
        } else {
            Output::Other { schema: result.schema, any: result.any }
        }
    }
}

/// `{"type": "object", "properties": {name: inner}, ...}`, with the named
/// types of `inner` moved to the new root (where its `$ref`s point).
fn wrap_schema(
    name: &str,
    required: bool,
    mut inner: Map<String, Value>,
    description: Option<String>,
) -> Map<String, Value> {
    let defs = inner.remove("$defs");
    let mut properties = Map::new();
    properties.insert(name.to_owned(), Value::Object(inner));
    let mut root = Map::new();
    root.insert("type".into(), "object".into());
    if let Some(description) = description {
        root.insert("description".into(), description.into());
    }
    root.insert("properties".into(), properties.into());
    if required {
        root.insert("required".into(), vec![Value::from(name)].into());
    }
    // No other member: the schema that accepts nothing, spelled as an object.
    root.insert("additionalProperties".into(), serde_json::json!({ "not": {} }));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::{format_cursor, parse_cursor};

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        assert_eq!(parse_cursor(&format_cursor(40, "tools"), "tools"), Some(40));
        assert_eq!(parse_cursor("40", "tools"), None);
        assert_eq!(parse_cursor("tools:-1", "tools"), None);
        assert_eq!(parse_cursor("prompts:1", "tools"), None);
    }
}
