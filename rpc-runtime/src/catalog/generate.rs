//! Generating JSON Schemas: a schemars generator that gives every schema
//! the same transforms (only the `format`s JSON Schema defines), and what
//! a method's params are as one schema (`paramStructure`, MCP's
//! `inputSchema`).

use schemars::generate::Contract;
use schemars::transform::RecursiveTransform;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::{Draft, MethodInfo, SchemaFn};
use crate::spec::ParamStructure;

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
    pub(super) fn params_object(&self, generator: &mut Generator, draft: Draft) -> Map<String, Value> {
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
}

/// A schemars generator with the draft's transforms applied to every schema
/// it hands out (schemars applies them only to definitions and roots).
pub(super) struct Generator {
    inner: SchemaGenerator,
}

impl Generator {
    pub(super) fn new(draft: Draft, definitions_path: &'static str, contract: Contract) -> Self {
        let mut settings = draft.settings();
        settings.contract = contract;
        settings.definitions_path = definitions_path.into();
        settings.meta_schema = None;
        settings.transforms.push(Box::new(RecursiveTransform(standard_formats)));
        Generator { inner: settings.into_generator() }
    }

    pub(super) fn schema(&mut self, schema: SchemaFn) -> Schema {
        let mut schema = schema(&mut self.inner);
        for transform in self.inner.transforms_mut() {
            transform.transform(&mut schema);
        }
        schema
    }

    /// Follows a local `$ref` into the definitions, once.
    pub(super) fn resolve<'s>(&'s self, schema: &'s Schema) -> &'s Schema {
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
    pub(super) fn json_types(&self, schema: &Schema, types: &mut Vec<&'static str>, depth: usize) -> bool {
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

    pub(super) fn definitions(&mut self) -> Map<String, Value> {
        self.inner.take_definitions(true)
    }
}

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
