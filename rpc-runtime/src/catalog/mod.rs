#![doc = include_str!("../../docs/catalog.md")]

use std::collections::HashMap;
use std::sync::Arc;

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::spec::{MethodSpec, ParamStructure};

pub mod compat;
pub(crate) mod support;
mod tool;

pub use tool::{StandaloneSchema, ToolInfo};

/// The OpenRPC version the documents conform to.
pub const OPENRPC_VERSION: &str = "1.3.2";

/// The name of the discovery method every router serves unless turned off.
pub const DISCOVER_METHOD: &str = "rpc.discover";

/// Produces the schema of one type, registering named types in the generator.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// What `#[rpc]` records about one trait; generated as a `static`.
#[derive(Debug)]
#[non_exhaustive]
pub struct ServiceInfo {
    /// `info.title`: `#[rpc(title = "...")]`, or the trait's name.
    pub title: &'static str,
    /// `info.version`: `#[rpc(version = "...")]`, or the crate's version.
    pub version: &'static str,
    /// `info.description`: the trait's doc comment.
    pub description: Option<&'static str>,
    /// Every method, in declaration order.
    pub methods: &'static [MethodInfo],
}

/// What `#[rpc]` records about one method.
#[derive(Debug)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The same spec the dispatch uses (wire names, optional params, accepted
    /// structure), so the catalog cannot drift from the decoder.
    pub spec: &'static MethodSpec,
    /// The first paragraph of the doc comment.
    pub summary: Option<&'static str>,
    /// The paragraphs after the first one.
    pub description: Option<&'static str>,
    /// One entry per entry of `spec.params`, in the same order.
    pub params: &'static [ParamInfo],
    /// The schema of the result; `None` for notifications (never answered).
    pub result: Option<SchemaFn>,
    /// `#[deprecated]` on the method.
    pub deprecated: bool,
    /// Errors declared with `#[rpc(error(code = ..., message = "..."))]`.
    pub errors: &'static [ErrorInfo],
    /// The errors the method's error type declares ([`RpcError::ERRORS`]),
    /// or none.
    pub error_type: fn() -> &'static [ErrorInfo],
    /// For an `#[rpc(alias = "...")]` name: the method's current name.
    pub alias_of: Option<&'static str>,
    /// How the method appears as an MCP tool (`#[rpc(mcp(...))]`).
    pub tool: ToolInfo,
    /// For a subscribe method (one with a `SubscriptionSink` parameter): its items and
    /// how they arrive and end. Its `result` is the subscription id.
    pub subscription: Option<SubscriptionInfo>,
}

/// What `#[rpc]` records about a subscribe method.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SubscriptionInfo {
    /// The schema of one item (`T` of its `SubscriptionSink<T>`).
    pub item: SchemaFn,
    /// The method of the notifications that carry its items.
    pub notification: &'static str,
    /// The method that ends it.
    pub unsubscribe: &'static str,
}

/// What `#[rpc]` records about one parameter.
#[derive(Debug)]
#[non_exhaustive]
pub struct ParamInfo {
    /// The doc comment on the parameter.
    pub description: Option<&'static str>,
    /// The schema of the parameter's type.
    pub schema: SchemaFn,
}

/// An error a method declares it may answer with.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ErrorInfo {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What the error means.
    pub message: &'static str,
}

impl ErrorInfo {
    /// Error `code`, which means `message`; for a hand-written
    /// [`RpcError`] (the derive writes them itself):
    ///
    /// ```
    /// use rpc_runtime::{RpcError, catalog::ErrorInfo};
    ///
    /// struct Busy;
    /// impl RpcError for Busy {
    ///     const ERRORS: &'static [ErrorInfo] = &[ErrorInfo::new(-32010, "The service is busy.")];
    /// }
    /// assert_eq!(Busy::ERRORS[0].code, -32010);
    /// ```
    pub const fn new(code: i64, message: &'static str) -> Self {
        ErrorInfo { code, message }
    }
}

/// Which JSON Schema dialect to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// Draft-07, what OpenRPC 1.3 uses.
    Draft07,
    /// 2020-12, what MCP's `inputSchema` uses.
    Draft2020_12,
}

impl Draft {
    fn settings(self) -> SchemaSettings {
        match self {
            Draft::Draft07 => SchemaSettings::draft07(),
            Draft::Draft2020_12 => SchemaSettings::draft2020_12(),
        }
    }
}

/// The catalog of one or more traits: turn it into an OpenRPC document with
/// [`Catalog::document`].
///
/// `#[rpc]` generates, next to each trait `Foo`, a unit struct `FooCatalog`
/// whose `catalog()` returns the trait's [`Catalog`] without needing an
/// instance of the service (a build script or a CLI can write it to a file).
/// `into_rpc()` attaches the same catalog to the [`Router`](crate::Router),
/// [`Router::merge`](crate::Router::merge) merges catalogs, and every router
/// answers `rpc.discover` with the merged document unless turned off with
/// [`Router::set_discover`](crate::Router::set_discover).
///
/// Param and result types implement [`JsonSchema`]: derive it (with a
/// `schemars = "1"` dependency), or through the re-export, without one:
///
/// ```
/// use rpc_runtime::schemars::JsonSchema;
/// use rpc_runtime::serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(crate = "rpc_runtime::serde")]
/// #[schemars(crate = "rpc_runtime::schemars")]
/// struct Point {
///     x: f64,
///     y: f64,
/// }
/// ```
///
/// A param or result type without `JsonSchema` appears as any value, with
/// a note (`"x-no-schema": true`); `#[rpc(strict_schemas)]` makes that a
/// compile error instead. A trait can also opt out entirely with
/// `#[rpc(catalog = false)]`: it then gets no `FooCatalog`, and its methods
/// are absent from `rpc.discover`.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    services: Vec<&'static ServiceInfo>,
    info: Option<Arc<Info>>,
}

impl Catalog {
    /// The catalog of one trait.
    pub fn new(service: &'static ServiceInfo) -> Self {
        Catalog { services: vec![service], info: None }
    }

    /// Adds the methods of `other`. The merged document's `info` is the one
    /// set with [`Catalog::set_info`], else the first trait's title and
    /// version with the titles of the others appended.
    pub fn merge(&mut self, other: Catalog) {
        if self.info.is_none() {
            self.info = other.info;
        }
        self.services.extend(other.services);
    }

    /// Replaces `info` (title, version, description) of the document.
    pub fn set_info(&mut self, info: Info) {
        self.info = Some(Arc::new(info));
    }

    /// `true` when no trait contributed a method.
    pub fn is_empty(&self) -> bool {
        self.methods().next().is_none()
    }

    /// Every method, in order of the traits and their declarations.
    pub fn methods(&self) -> impl Iterator<Item = &'static MethodInfo> + '_ {
        self.services.iter().flat_map(|service| service.methods.iter())
    }

    /// The method called `name` on the wire.
    pub fn method(&self, name: &str) -> Option<&'static MethodInfo> {
        self.methods().find(|method| method.spec.name == name)
    }

    /// The OpenRPC 1.3 document: schemas in JSON Schema draft-07, named
    /// types hoisted once into `components/schemas` (name clashes between
    /// different types get a numeric suffix, never an overwrite).
    ///
    /// Params are described as they deserialize and results as they
    /// serialize; a type used both ways has one entry when both schemas are
    /// the same, else the result's gets a name of its own.
    pub fn document(&self) -> OpenRpc {
        let mut inputs = Generator::new(Draft::Draft07, COMPONENTS, Contract::Deserialize);
        let mut outputs = Generator::new(Draft::Draft07, COMPONENTS, Contract::Serialize);
        let mut methods: Vec<MethodObject> =
            self.methods().map(|method| method.object(&mut inputs, &mut outputs)).collect();
        let mut schemas = inputs.definitions();
        let output_schemas = outputs.definitions();
        let renames = output_names(&schemas, &output_schemas);
        for result in methods.iter_mut().filter_map(|method| method.result.as_mut()) {
            rewrite_refs(&mut result.schema, &renames);
        }
        for (name, mut schema) in output_schemas {
            rewrite_refs(&mut schema, &renames);
            let name = renames.get(&name).cloned().unwrap_or(name);
            schemas.entry(name).or_insert(schema);
        }
        OpenRpc { openrpc: OPENRPC_VERSION, info: self.info(), methods, components: Components { schemas } }
    }

    /// The document as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.document()).unwrap_or_else(|err| unreachable!("documents serialize: {err}"))
    }

    /// The document's `info`: the one set with [`Catalog::set_info`], else
    /// the traits' titles, the first one's version, and their doc comments.
    pub fn info(&self) -> Info {
        if let Some(info) = &self.info {
            return (**info).clone();
        }
        let Some(first) = self.services.first() else {
            return Info { title: "JSON-RPC service".to_owned(), version: "0.0.0".to_owned(), description: None };
        };
        let titles: Vec<&str> = self.services.iter().map(|s| s.title).collect();
        let descriptions: Vec<&str> = self.services.iter().filter_map(|s| s.description).collect();
        Info {
            title: titles.join(" + "),
            version: first.version.to_owned(),
            description: (!descriptions.is_empty()).then(|| descriptions.join("\n\n")),
        }
    }
}

impl MethodInfo {
    /// `paramStructure` as the server applies it. A `whole_params` method
    /// takes what its one parameter's type accepts: an array type is
    /// `by-position`; an object type (a struct, a map, an enum) `by-name`,
    /// and the server refuses an array for a struct, although serde could
    /// read one from it.
    pub fn param_structure(&self) -> ParamStructure {
        let (true, Some(param)) = (self.spec.whole, self.params.first()) else {
            return self.spec.structure;
        };
        let mut generator = Generator::new(Draft::Draft07, "/definitions", Contract::Deserialize);
        let schema = (param.schema)(&mut generator.inner);
        let mut types = Vec::new();
        if !generator.json_types(&schema, &mut types, 0) {
            return ParamStructure::Either;
        }
        match (types.contains(&"object"), types.contains(&"array")) {
            (true, false) => ParamStructure::ByName,
            (false, true) => ParamStructure::ByPosition,
            _ => ParamStructure::Either,
        }
    }

    /// The params as one object schema keyed by wire name (what MCP calls a
    /// tool's `inputSchema`), with its named types under `$defs` (2020-12) or
    /// `definitions` (draft-07). Unknown names are rejected
    /// (`additionalProperties: false`) unless the method allows extra params.
    /// For a `whole_params` method it is the schema of its one parameter.
    /// `None` when the method does not accept params by name.
    pub fn input_schema(&self, draft: Draft) -> Option<Value> {
        let path = match draft {
            Draft::Draft07 => "/definitions",
            Draft::Draft2020_12 => "/$defs",
        };
        let mut generator = Generator::new(draft, path, Contract::Deserialize);
        let mut root = if self.spec.whole {
            let schema = generator.schema(self.params.first()?.schema);
            if generator.resolve(&schema).get("type").and_then(Value::as_str) != Some("object") {
                return None;
            }
            match schema.to_value() {
                Value::Object(map) => map,
                _ => return None,
            }
        } else {
            if self.spec.structure == ParamStructure::ByPosition {
                return None;
            }
            self.params_object(&mut generator, draft)
        };
        let definitions = generator.definitions();
        if !definitions.is_empty() {
            root.insert(path[1..].to_owned(), definitions.into());
        }
        if let Some(meta) = draft.settings().meta_schema {
            root.insert("$schema".into(), meta.into_owned().into());
        }
        Some(Value::Object(root))
    }

    /// The declared params as one object schema keyed by wire name, their
    /// named types left in `generator`. Draft-07 puts no `description`
    /// next to a `$ref` (siblings of `$ref` are ignored there).
    fn params_object(&self, generator: &mut Generator, draft: Draft) -> Map<String, Value> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (spec, param) in self.spec.params.iter().zip(self.params) {
            let mut schema = generator.schema(param.schema);
            if let (Some(text), Some(object)) = (param.description, schema.as_object_mut())
                && (draft == Draft::Draft2020_12 || !object.contains_key("$ref"))
            {
                object.entry("description").or_insert_with(|| text.into());
            }
            properties.insert(spec.name.to_owned(), schema.to_value());
            if !spec.optional {
                required.push(Value::from(spec.name));
            }
        }
        let mut root = Map::new();
        root.insert("type".into(), "object".into());
        root.insert("properties".into(), properties.into());
        if !required.is_empty() {
            root.insert("required".into(), required.into());
        }
        if !self.spec.allow_extra {
            root.insert("additionalProperties".into(), false.into());
        }
        root
    }

    /// A `whole_params` struct as the named params it is on the wire: one
    /// content descriptor per field (its schema, `required` as the struct
    /// says), and whether unknown names are let through (the struct's
    /// schema does not forbid them). `None` for anything else, such as a
    /// list (no OpenRPC 1.3 shape for it), a map, an enum or an option.
    fn whole_struct_params(&self, inputs: &mut Generator) -> Option<(Vec<ContentDescriptor>, bool)> {
        let param = self.params.first().filter(|_| self.spec.whole)?;
        if self.param_structure() != ParamStructure::ByName {
            return None;
        }
        let schema = inputs.schema(param.schema);
        let resolved = inputs.resolve(&schema).as_object()?;
        let combined = ["allOf", "anyOf", "oneOf", "patternProperties", "$ref"];
        if resolved.get("type").and_then(Value::as_str) != Some("object")
            || combined.iter().any(|key| resolved.contains_key(*key))
            || resolved.get("additionalProperties").is_some_and(|extra| !extra.is_boolean())
        {
            return None;
        }
        let properties = resolved.get("properties")?.as_object()?;
        let required: Vec<&str> = resolved
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let descriptors = properties
            .iter()
            .map(|(name, schema)| ContentDescriptor {
                name: name.clone(),
                description: schema.get("description").and_then(Value::as_str).map(str::to_owned),
                required: required.contains(&name.as_str()),
                schema: schema.clone(),
            })
            .collect();
        let extra = resolved.get("additionalProperties") != Some(&Value::Bool(false));
        Some((descriptors, extra))
    }

    fn object(&self, inputs: &mut Generator, outputs: &mut Generator) -> MethodObject {
        let spec = self.spec;
        let named = self.whole_struct_params(inputs);
        let params = spec
            .params
            .iter()
            .zip(self.params)
            .map(|(param_spec, param)| ContentDescriptor {
                name: param_spec.name.to_owned(),
                description: param.description.map(str::to_owned),
                required: !param_spec.optional,
                schema: inputs.schema(param.schema).to_value(),
            })
            .collect();
        let result = self.result.map(|schema| ContentDescriptor {
            name: "result".to_owned(),
            description: None,
            required: true,
            schema: outputs.schema(schema).to_value(),
        });
        let subscription = self.subscription.map(|subscription| SubscriptionObject {
            notification: subscription.notification,
            item: outputs.schema(subscription.item).to_value(),
            unsubscribe: subscription.unsubscribe,
        });
        let mut errors: Vec<ErrorDescriptor> = Vec::new();
        for error in self.errors.iter().chain((self.error_type)()) {
            if !errors.iter().any(|known| known.code == error.code && known.message == error.message) {
                errors.push(ErrorDescriptor { code: error.code, message: error.message.to_owned() });
            }
        }
        if spec.requires.is_some() && !errors.iter().any(|known| known.code == crate::wire::PERMISSION_DENIED) {
            errors.push(ErrorDescriptor {
                code: crate::wire::PERMISSION_DENIED,
                message: "Permission denied".to_owned(),
            });
        }
        let summary = match self.alias_of {
            Some(current) => Some(format!("Deprecated alias of `{current}`: call `{current}` instead.")),
            None => self.summary.map(str::to_owned),
        };
        let param_structure = self.param_structure();
        let (params, whole_params, allow_extra_params) = match named {
            Some((named, extra)) => (named, false, spec.allow_extra || extra),
            None => (params, spec.whole, spec.allow_extra),
        };
        let params_note = (whole_params && param_structure != ParamStructure::ByName).then_some(WHOLE_LIST_NOTE);
        MethodObject {
            name: spec.name.to_owned(),
            summary,
            description: self.description.map(str::to_owned),
            params,
            result,
            param_structure: param_structure.as_str(),
            deprecated: self.deprecated || self.alias_of.is_some(),
            errors,
            whole_params,
            params_note,
            allow_extra_params,
            alias_of: self.alias_of,
            requires: spec.requires,
            subscription,
        }
    }
}

/// A schemars generator with the draft's transforms applied to every schema
/// it hands out (schemars applies them only to definitions and roots).
struct Generator {
    inner: SchemaGenerator,
}

impl Generator {
    fn new(draft: Draft, definitions_path: &'static str, contract: Contract) -> Self {
        let mut settings = draft.settings();
        settings.contract = contract;
        settings.definitions_path = definitions_path.into();
        settings.meta_schema = None;
        settings.transforms.push(Box::new(RecursiveTransform(standard_formats)));
        Generator { inner: settings.into_generator() }
    }

    fn schema(&mut self, schema: SchemaFn) -> Schema {
        let mut schema = schema(&mut self.inner);
        for transform in self.inner.transforms_mut() {
            transform.transform(&mut schema);
        }
        schema
    }

    /// Follows a local `$ref` into the definitions, once.
    fn resolve<'s>(&'s self, schema: &'s Schema) -> &'s Schema {
        let target = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.rsplit('/').next())
            .and_then(|name| self.inner.definitions().get(name))
            .and_then(|value| <&Schema>::try_from(value).ok());
        target.unwrap_or(schema)
    }

    /// Adds the JSON types `schema` accepts to `types`, looking through
    /// `$ref`, `oneOf` and `anyOf` (an enum is one of its variants);
    /// `false` when that cannot be told (no `type`, as for any value).
    fn json_types(&self, schema: &Schema, types: &mut Vec<&'static str>, depth: usize) -> bool {
        const NAMES: [&str; 7] = ["object", "array", "string", "number", "integer", "boolean", "null"];
        let schema = self.resolve(schema);
        let known = |name: &str| NAMES.iter().find(|known| **known == name).copied();
        match schema.get("type") {
            Some(Value::String(name)) => {
                types.extend(known(name));
                return true;
            }
            Some(Value::Array(names)) => {
                types.extend(names.iter().filter_map(Value::as_str).filter_map(known));
                return true;
            }
            _ => {}
        }
        if schema.get("enum").is_some() || schema.get("const").is_some() {
            // Literal values: never an array or an object in our schemas.
            return true;
        }
        let variants = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array);
        match variants {
            Some(variants) if depth < 8 => variants.iter().all(|variant| {
                <&Schema>::try_from(variant).is_ok_and(|variant| self.json_types(variant, types, depth + 1))
            }),
            _ => false,
        }
    }

    fn definitions(&mut self) -> Map<String, Value> {
        self.inner.take_definitions(true)
    }
}

/// The `x-params-note` of a `whole_params` method whose params are not an
/// object (a list, say).
const WHOLE_LIST_NOTE: &str = "The params are this one value itself (`[1, 2, 4]`), not a list holding it (`[[1, 2, 4]]`): OpenRPC 1.3 has no way to describe a variable number of positional params, so `params` holds one descriptor and `x-whole-params` says it is the entire params value. Generated clients that send one positional param per descriptor call this method wrongly.";

/// The `format` values JSON Schema defines (draft-07 and 2020-12).
/// Validators such as ajv refuse a schema with any other one ("unknown
/// format"), and clients built on them (the OpenRPC generator's) then
/// refuse to call the method at all.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops a `format` JSON Schema does not define (schemars writes `int64`,
/// `uint32`, `double`, `ip`, ...). What an integer format said stays, as
/// the range it stands for (`minimum`/`maximum`), where JSON numbers can
/// carry it (not for 128-bit integers).
fn standard_formats(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let Some(format) = object.get("format").and_then(Value::as_str) else { return };
    if STANDARD_FORMATS.contains(&format) {
        return;
    }
    let range: Option<(Value, Value)> = match format {
        "int8" => Some((i8::MIN.into(), i8::MAX.into())),
        "int16" => Some((i16::MIN.into(), i16::MAX.into())),
        "int32" => Some((i32::MIN.into(), i32::MAX.into())),
        "int64" => Some((i64::MIN.into(), i64::MAX.into())),
        "int" => Some(((isize::MIN as i64).into(), (isize::MAX as i64).into())),
        "uint8" => Some((0.into(), u8::MAX.into())),
        "uint16" => Some((0.into(), u16::MAX.into())),
        "uint32" => Some((0.into(), u32::MAX.into())),
        "uint64" => Some((0.into(), u64::MAX.into())),
        "uint" => Some((0.into(), (usize::MAX as u64).into())),
        _ => None,
    };
    if let Some((minimum, maximum)) = range {
        object.entry("minimum").or_insert(minimum);
        object.entry("maximum").or_insert(maximum);
    }
    object.remove("format");
}

/// Where the document keeps its named schemas.
const COMPONENTS: &str = "/components/schemas";

/// New names for the output (serialize) schemas: the input (deserialize)
/// entry of the same type when both schemas are equal, else a fresh name
/// if the output's name is taken by a different input schema. Renaming one
/// schema changes the schemas that refer to it, so this repeats until the
/// names settle.
fn output_names(inputs: &Map<String, Value>, outputs: &Map<String, Value>) -> HashMap<String, String> {
    let mut renames: HashMap<String, String> = HashMap::new();
    // Each round can only add renames caused by the previous one.
    for _ in 0..=outputs.len() {
        let mut next: HashMap<String, String> = HashMap::new();
        for (name, schema) in outputs {
            let mut schema = schema.clone();
            rewrite_refs(&mut schema, &renames);
            if inputs.get(name) == Some(&schema) {
                continue;
            }
            // schemars tells same-named types apart by a numeric suffix,
            // which the two generators may hand out differently.
            let same = inputs.iter().find(|(input, value)| stem(input) == stem(name) && **value == schema);
            if let Some((input, _)) = same {
                next.insert(name.clone(), input.clone());
            } else if inputs.contains_key(name) {
                let taken = |candidate: &String| {
                    inputs.contains_key(candidate)
                        || outputs.contains_key(candidate)
                        || next.values().any(|v| v == candidate)
                };
                let fresh = (2..).map(|i| format!("{name}{i}")).find(|c| !taken(c)).unwrap_or_default();
                next.insert(name.clone(), fresh);
            }
        }
        if next == renames {
            break;
        }
        renames = next;
    }
    renames
}

/// A schema name without the numeric suffix schemars adds on clashes.
fn stem(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
}

/// Points every `$ref` to a renamed schema at its new name.
fn rewrite_refs(value: &mut Value, renames: &HashMap<String, String>) {
    if renames.is_empty() {
        return;
    }
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref") {
                let target = reference.strip_prefix("#/components/schemas/").and_then(|encoded| {
                    renames.iter().find(|(old, _)| encode_ref_name(old) == encoded).map(|(_, new)| new)
                });
                if let Some(new) = target {
                    *reference = format!("#{COMPONENTS}/{}", encode_ref_name(new));
                }
            }
            object.values_mut().for_each(|v| rewrite_refs(v, renames));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, renames)),
        _ => {}
    }
}

/// A schema name as schemars writes it in a `$ref` (JSON Pointer escapes,
/// then percent-encoding of what a URI fragment cannot hold).
fn encode_ref_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        match byte {
            b'~' => out.push_str("~0"),
            b'/' => out.push_str("~1"),
            b'!' | b'$' | b'&'..=b';' | b'=' | b'?'..=b'Z' | b'_' | b'a'..=b'z' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:2X}")),
        }
    }
    out
}

/// An OpenRPC document (the parts this crate generates).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct OpenRpc {
    /// Always [`OPENRPC_VERSION`].
    pub openrpc: &'static str,
    /// Title, version and description of the service.
    pub info: Info,
    /// Every method.
    pub methods: Vec<MethodObject>,
    /// The named schemas referred to with `#/components/schemas/Name`.
    pub components: Components,
}

/// The `info` object.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Info {
    /// The service's title.
    pub title: String,
    /// The service's version.
    pub version: String,
    /// What the service is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Info {
    /// A service's `title` and `version`, without a description; for
    /// [`Catalog::set_info`]:
    ///
    /// ```
    /// let info = rpc_runtime::catalog::Info::new("Everything", "9.9.9").description("All services in one.");
    /// assert_eq!(info.description.as_deref(), Some("All services in one."));
    /// ```
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        Info { title: title.into(), version: version.into(), description: None }
    }

    /// The same info with `description`.
    pub fn description(self, description: impl Into<String>) -> Self {
        Info { description: Some(description.into()), ..self }
    }
}

/// A method object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MethodObject {
    /// The wire name.
    pub name: String,
    /// The first paragraph of the doc comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The rest of the doc comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The params in order.
    pub params: Vec<ContentDescriptor>,
    /// The result; absent for notifications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ContentDescriptor>,
    /// `either`, `by-name` or `by-position`.
    pub param_structure: &'static str,
    /// `#[deprecated]`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// Declared errors.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorDescriptor>,
    /// Extension `x-whole-params`: the one content descriptor in `params`
    /// describes the entire JSON-RPC `params` value (a variadic array or a
    /// params struct), not one entry of it. `paramStructure` says whether
    /// that value is an object or an array, and the server holds to it.
    /// A `whole_params` struct is not one: its fields are listed as the
    /// named params they are.
    #[serde(rename = "x-whole-params", skip_serializing_if = "std::ops::Not::not")]
    pub whole_params: bool,
    /// Extension `x-params-note`: why `params` cannot say what the method
    /// takes (a `whole_params` list: OpenRPC 1.3 has no variadic params).
    #[serde(rename = "x-params-note", skip_serializing_if = "Option::is_none")]
    pub params_note: Option<&'static str>,
    /// Extension `x-allow-extra-params`: surplus positional params and
    /// unknown named params are ignored instead of rejected.
    #[serde(rename = "x-allow-extra-params", skip_serializing_if = "std::ops::Not::not")]
    pub allow_extra_params: bool,
    /// Extension `x-alias-of`: this name is an older name of that method
    /// (`#[rpc(alias = "...")]`), served the same way and `deprecated`.
    #[serde(rename = "x-alias-of", skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<&'static str>,
    /// Extension `x-requires`: the permission a caller must hold
    /// (`#[rpc(requires = "...")]`: `"admin"`), or `{"anyOf": [...]}` /
    /// `{"allOf": [...]}` of them; others are refused with -32003.
    #[serde(rename = "x-requires", skip_serializing_if = "Option::is_none")]
    pub requires: Option<crate::spec::Requirement>,
    /// Extension `x-subscription`: this method opens a subscription (its
    /// `result` is the subscription id) whose items arrive as
    /// notifications.
    #[serde(rename = "x-subscription", skip_serializing_if = "Option::is_none")]
    pub subscription: Option<SubscriptionObject>,
}

/// The `x-subscription` extension of a subscribe method: items arrive as
/// notifications `notification` with params `{"subscription": id,
/// "result": item}` until the method `unsubscribe` (params `[id]`) ends
/// them, or the server does (a last notification without `result`:
/// `"end": true`, or `"error"`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SubscriptionObject {
    /// The method of the item notifications.
    pub notification: &'static str,
    /// JSON Schema (draft-07) of one item.
    pub item: Value,
    /// The method that ends the subscription.
    pub unsubscribe: &'static str,
}

/// A content descriptor: one param or the result.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ContentDescriptor {
    /// The wire name.
    pub name: String,
    /// The doc comment on the parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `false` exactly for `Option` params.
    pub required: bool,
    /// JSON Schema (draft-07) of the value.
    pub schema: Value,
}

/// An error object of a method's `errors`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ErrorDescriptor {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What the error means.
    pub message: String,
}

/// The `components` object.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Components {
    /// Named schemas, each once.
    pub schemas: Map<String, Value>,
}

/// An error type that declares the errors it stands for, so that every
/// method returning `Result<_, E>` lists them in the catalog's `errors`.
/// Implemented by `#[derive(RpcError)]`, which also gives
/// `From<E> for ErrorObject` and [`FromErrorObject`](crate::peer::FromErrorObject).
pub trait RpcError {
    /// Each error: its code and message.
    const ERRORS: &'static [ErrorInfo];
}

impl RpcError for crate::wire::ErrorObject {
    const ERRORS: &'static [ErrorInfo] = &[];
}

/// An error object: `code`, `message` and any `data`.
impl JsonSchema for crate::wire::ErrorObject {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorObject".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        "rpc_runtime::ErrorObject".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": "A JSON-RPC 2.0 error object.",
            "type": "object",
            "properties": {
                "code": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
                "message": {"type": "string"},
                "data": {}
            },
            "required": ["code", "message"]
        })
    }
}
