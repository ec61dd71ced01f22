//! Building an OpenRPC document from the records `#[rpc]` generates: one
//! method object per method, and every named type once in
//! `components/schemas`, with the names of result types that serialize
//! differently from how they deserialize kept apart.

use std::collections::HashMap;

use schemars::generate::Contract;
use serde_json::{Map, Value};

use super::generate::Generator;
use super::openrpc::{Components, ContentDescriptor, ErrorDescriptor, Info, MethodObject, OpenRpc, SubscriptionObject};
use super::{Draft, MethodInfo, OPENRPC_VERSION};
use crate::spec::ParamStructure;

/// The document of `methods`, with `info`: see [`Catalog::document`](super::Catalog::document).
pub(super) fn build(methods: impl Iterator<Item = &'static MethodInfo>, info: Info) -> OpenRpc {
    let mut inputs = Generator::new(Draft::Draft07, COMPONENTS, Contract::Deserialize);
    let mut outputs = Generator::new(Draft::Draft07, COMPONENTS, Contract::Serialize);
    let mut methods: Vec<MethodObject> = methods.map(|method| method.object(&mut inputs, &mut outputs)).collect();
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
    OpenRpc { openrpc: OPENRPC_VERSION, info, methods, components: Components { schemas } }
}

impl MethodInfo {
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

/// The `x-params-note` of a `whole_params` method whose params are not an
/// object (a list, say).
const WHOLE_LIST_NOTE: &str = "The params are this one value itself (`[1, 2, 4]`), not a list holding it (`[[1, 2, 4]]`): OpenRPC 1.3 has no way to describe a variable number of positional params, so `params` holds one descriptor and `x-whole-params` says it is the entire params value. Generated clients that send one positional param per descriptor call this method wrongly.";

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
pub(super) fn encode_ref_name(name: &str) -> String {
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
