//! How a method appears as a Model Context Protocol tool: what
//! `#[rpc(mcp(...))]` records (hidden, title, behaviour hints), and the
//! method's params and result as self-contained JSON Schema 2020-12
//! documents, which is what MCP clients can follow (no pointers into a
//! shared components section).

use schemars::Schema;
use schemars::generate::Contract;
use serde_json::{Map, Value};

use super::document::encode_ref_name;
use super::generate::Generator;
use super::{Draft, MethodInfo, SchemaFn};

/// What `#[rpc(mcp(...))]` says about how a method appears over MCP: as
/// a tool (the default), a resource, a prompt, ... ([`McpKind`]), and
/// under which name and title.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolInfo {
    /// `mcp(hidden)`: the method is not offered over MCP at all.
    pub hidden: bool,
    /// What the method is over MCP: a tool unless `mcp(resource = ..)`,
    /// `mcp(resource_list)`, `mcp(prompt)` or `mcp(complete(..))` says
    /// otherwise.
    pub kind: McpKind,
    /// `mcp(name = "...")`: the tool's (or resource's, or prompt's) name,
    /// when it is not the method's wire name (some model APIs take only
    /// `[a-zA-Z0-9_-]{1,64}` as tool names, and a wire name such as
    /// `items.list` has a dot). The macro checks it.
    pub name: Option<&'static str>,
    /// `mcp(title = "...")`: a human-readable name for the tool, resource
    /// or prompt.
    pub title: Option<&'static str>,
    /// `mcp(read_only)`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `mcp(destructive)`: the tool may destroy or overwrite data (MCP's
    /// default when not said; meaningful only when not read-only).
    pub destructive: Option<bool>,
    /// `mcp(idempotent)`: calling it again with the same arguments has no
    /// further effect.
    pub idempotent: Option<bool>,
    /// `mcp(open_world)`: the tool reaches an open world of outside
    /// entities (the web, say), rather than a closed domain.
    pub open_world: Option<bool>,
}

impl ToolInfo {
    /// Nothing said: a visible tool with MCP's default hints.
    pub const DEFAULT: ToolInfo = ToolInfo {
        hidden: false,
        kind: McpKind::Tool,
        name: None,
        title: None,
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
    };

    /// Whether any annotation (title or hint) was given.
    pub fn has_annotations(&self) -> bool {
        self.title.is_some()
            || self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// What a method is when its router is served over MCP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpKind {
    /// A tool (`tools/list`, `tools/call`): the default.
    #[default]
    Tool,
    /// `mcp(resource = "notes://{id}", mime_type = "text/markdown")`: the
    /// method reads the resources whose URIs match `uri`, an RFC 6570
    /// template whose variables are the method's params (`{id}`, or
    /// `{+path}` for one that may hold `/`). Without variables it is one
    /// resource, listed by `resources/list`; with them a template, listed
    /// by `resources/templates/list`.
    Resource {
        /// The URI, or URI template.
        uri: &'static str,
        /// The MIME type of what it reads, if known.
        mime_type: Option<&'static str>,
    },
    /// `mcp(resource_list)`: the method lists resources (it returns
    /// `Vec<mcp::Resource>`); `resources/list` shows its entries after the
    /// fixed resources.
    ResourceList,
    /// `mcp(prompt)`: a prompt (`prompts/list`, `prompts/get`) whose
    /// arguments are the method's params.
    Prompt,
    /// `mcp(complete(prompt = "..", argument = ".."))` or
    /// `mcp(complete(resource = "..", argument = ".."))`: the method
    /// suggests values for one argument of a prompt, or one variable of
    /// a resource template (`completion/complete`).
    Complete {
        /// Whose argument it completes.
        target: CompletionTarget,
        /// The argument's (or template variable's) name.
        argument: &'static str,
    },
}

/// What a completion method completes an argument of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// The prompt of this name.
    Prompt(&'static str),
    /// The resource template of this URI template.
    Resource(&'static str),
}

/// A JSON Schema 2020-12 as one self-contained document (named types under
/// the root's own `$defs`, no pointer into a shared components section),
/// and what the value is known to be: what an MCP tool's `inputSchema`
/// and `outputSchema` are built from (see [`MethodInfo::result_schema`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StandaloneSchema {
    /// The schema object. Boolean subschemas are spelled as objects at any
    /// depth (`true` as `{}`, `false` as `{"not": {}}`), as MCP clients
    /// require.
    pub schema: Map<String, Value>,
    /// The value is always a JSON object.
    pub object: bool,
    /// The schema says nothing (any value).
    pub any: bool,
}

/// The schemas of a method as a tool-calling protocol (MCP) wants them:
/// JSON Schema 2020-12, each one self-contained. The OpenRPC document
/// ([`Catalog::document`](crate::Catalog::document)) has the same types
/// as draft-07 with shared components.
impl MethodInfo {
    /// The declared params as one object schema keyed by wire name
    /// (whatever the method's param structure is), 2020-12,
    /// self-contained: the arguments a caller that only sends names gives.
    /// `None` for a `whole_params` method (see
    /// [`MethodInfo::whole_param_schema`]).
    ///
    /// ```
    /// use rpc_runtime::rpc;
    ///
    /// #[rpc]
    /// pub trait Calc {
    ///     /// Adds.
    ///     fn add(&self, a: i64, b: i64) -> i64;
    /// }
    ///
    /// let catalog = CalcCatalog::catalog();
    /// let add = catalog.method("add").unwrap();
    /// let schema = add.named_params_schema().unwrap();
    /// assert_eq!(schema["type"], "object");
    /// assert!(schema["properties"]["a"].is_object());
    /// assert_eq!(add.result_schema().unwrap().schema["type"], "integer");
    /// ```
    pub fn named_params_schema(&self) -> Option<Map<String, Value>> {
        if self.spec.whole {
            return None;
        }
        let mut generator = Generator::new(Draft::Draft2020_12, DEFS, Contract::Deserialize);
        let mut root = self.params_object(&mut generator, Draft::Draft2020_12);
        attach_defs(&mut root, generator.definitions());
        no_boolean_subschemas(&mut root);
        Some(root)
    }

    /// The one parameter of a `whole_params` method, as it deserializes;
    /// `None` for any other method.
    pub fn whole_param_schema(&self) -> Option<StandaloneSchema> {
        let param = self.params.first().filter(|_| self.spec.whole)?;
        let mut standalone = standalone(param.schema, Contract::Deserialize);
        if let Some(text) = param.description {
            standalone.schema.entry("description").or_insert_with(|| text.into());
        }
        Some(standalone)
    }

    /// The result, as it serializes; `None` for a notification.
    pub fn result_schema(&self) -> Option<StandaloneSchema> {
        self.result.map(|schema| standalone(schema, Contract::Serialize))
    }
}

/// Where named types go: the root's `$defs`.
const DEFS: &str = "/$defs";

/// `schema` as one 2020-12 document. A root that only refers to a named
/// type is replaced by that type's schema (so that an object type has
/// `"type": "object"` at its root, as MCP wants); a value that is always
/// an object gets that `type` at its root even when it is a `oneOf`.
fn standalone(schema: SchemaFn, contract: Contract) -> StandaloneSchema {
    let mut generator = Generator::new(Draft::Draft2020_12, DEFS, contract);
    let schema = generator.schema(schema);
    let mut types = Vec::new();
    let known = generator.json_types(&schema, &mut types, 0);
    let object = known && !types.is_empty() && types.iter().all(|t| *t == "object");
    let resolved: Schema = generator.resolve(&schema).clone();
    let mut root = match resolved.to_value() {
        Value::Object(map) => map,
        Value::Bool(true) => Map::new(),
        _ => nothing(),
    };
    let any = root.keys().all(|key| matches!(key.as_str(), "description" | "title" | "x-no-schema"));
    if object {
        root.entry("type").or_insert_with(|| "object".into());
    }
    let mut definitions = generator.definitions();
    // The root's own type, inlined, stays among the definitions only if
    // something (itself, when recursive) still refers to it.
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let quoted = format!("\"{reference}\"");
        let own = definitions.keys().find(|name| format!("#{DEFS}/{}", encode_ref_name(name)) == reference).cloned();
        if let Some(own) = own {
            let used = Value::Object(root.clone()).to_string().contains(&quoted)
                || definitions.values().any(|value| value.to_string().contains(&quoted));
            if !used {
                definitions.remove(&own);
            }
        }
    }
    attach_defs(&mut root, definitions);
    no_boolean_subschemas(&mut root);
    StandaloneSchema { schema: root, object, any }
}

/// The schema that accepts nothing, as an object: `{"not": {}}`.
pub(crate) fn nothing() -> Map<String, Value> {
    let mut never = Map::new();
    never.insert("not".into(), Value::Object(Map::new()));
    never
}

/// Keywords whose value is one subschema.
const ONE_SUBSCHEMA: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an array of subschemas (`items` too, in drafts
/// before 2020-12).
const SUBSCHEMA_ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value maps names to subschemas (`dependencies` values
/// may also be arrays of names, which are left alone).
const SUBSCHEMA_MAPS: &[&str] =
    &["$defs", "definitions", "dependentSchemas", "dependencies", "patternProperties", "properties"];

/// Rewrites every boolean subschema of `schema`, at any depth (`$defs`
/// included), as the object that means the same: `true` as `{}`, `false`
/// as `{"not": {}}`. JSON Schema allows both spellings, but MCP's own
/// schema types every property schema as an object, and the TypeScript
/// SDK (which most MCP hosts are built on) rejects a tool list with a
/// bare `true` in it. Booleans that are not schemas (`uniqueItems`,
/// `deprecated`, `readOnly`, ...) are left alone.
pub(crate) fn no_boolean_subschemas(schema: &mut Map<String, Value>) {
    for (keyword, value) in schema.iter_mut() {
        let keyword = keyword.as_str();
        if ONE_SUBSCHEMA.contains(&keyword) {
            objectify(value);
        }
        match value {
            Value::Array(items) if SUBSCHEMA_ARRAYS.contains(&keyword) => items.iter_mut().for_each(objectify),
            Value::Object(members) if SUBSCHEMA_MAPS.contains(&keyword) => {
                for member in members.values_mut() {
                    if !member.is_array() {
                        objectify(member);
                    }
                }
            }
            _ => {}
        }
    }
}

/// One subschema as an object, and its own subschemas likewise.
fn objectify(value: &mut Value) {
    match value {
        Value::Bool(true) => *value = Value::Object(Map::new()),
        Value::Bool(false) => *value = Value::Object(nothing()),
        Value::Object(schema) => no_boolean_subschemas(schema),
        // An `items` array (draft-07), handled by the caller.
        _ => {}
    }
}

/// Puts `definitions` under the root's `$defs` (if there are any).
fn attach_defs(root: &mut Map<String, Value>, definitions: Map<String, Value>) {
    if !definitions.is_empty() {
        root.insert("$defs".into(), definitions.into());
    }
}
