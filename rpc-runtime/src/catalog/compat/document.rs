//! An OpenRPC document read for comparison: its methods as the server
//! applies them (defaults filled in), each part still borrowed from the
//! JSON value.

use serde_json::Value;

use super::schema::Doc;

/// Which shapes of `params` a method accepts, as its `paramStructure`
/// says (OpenRPC's default is `either`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Structure {
    /// An array is accepted.
    pub by_position: bool,
    /// An object is accepted.
    pub by_name: bool,
}

/// One method of a document.
#[derive(Debug)]
pub(super) struct Method<'d> {
    pub name: &'d str,
    pub summary: Option<&'d str>,
    pub description: Option<&'d str>,
    pub params: Vec<Param<'d>>,
    /// The result's schema; `None` for a notification.
    pub result: Option<&'d Value>,
    pub structure: Structure,
    /// The literal `paramStructure` (or `either`), for messages.
    pub structure_name: &'d str,
    pub deprecated: bool,
    /// `x-whole-params`: the one param is the whole `params` value.
    pub whole: bool,
    /// `x-allow-extra-params`: surplus and unknown params are ignored.
    pub allow_extra: bool,
    /// `x-alias-of`: the method this name is an older name of.
    pub alias_of: Option<&'d str>,
    /// `x-requires`: the permission a caller must hold.
    pub requires: Option<&'d str>,
    pub subscription: Option<Subscription<'d>>,
    /// `(code, message)` of each declared error.
    pub errors: Vec<(i64, &'d str)>,
}

/// One param (a content descriptor).
#[derive(Debug)]
pub(super) struct Param<'d> {
    pub name: &'d str,
    pub description: Option<&'d str>,
    pub required: bool,
    pub schema: &'d Value,
}

/// `x-subscription` of a subscribe method.
#[derive(Debug)]
pub(super) struct Subscription<'d> {
    pub notification: Option<&'d str>,
    pub unsubscribe: Option<&'d str>,
    pub item: &'d Value,
}

/// A whole document: its methods, and the root its `$ref`s resolve in.
pub(super) struct Document<'d> {
    pub doc: Doc<'d>,
    pub methods: Vec<Method<'d>>,
}

static ANY: Value = Value::Bool(true);

impl<'d> Document<'d> {
    /// Reads `root`; `Err` says, for a person, why it is not an OpenRPC
    /// 1.x document this module can compare.
    pub(super) fn read(root: &'d Value) -> Result<Self, String> {
        let Some(object) = root.as_object() else {
            return Err("not an OpenRPC document: the top level is not a JSON object".to_owned());
        };
        match object.get("openrpc").and_then(Value::as_str) {
            Some(version) if version.starts_with("1.") => {}
            Some(version) => {
                return Err(format!("`openrpc` is \"{version}\"; only OpenRPC 1.x documents are compared"));
            }
            None => return Err("not an OpenRPC document: no `openrpc` version string".to_owned()),
        }
        let Some(methods) = object.get("methods").and_then(Value::as_array) else {
            return Err("not an OpenRPC document: no `methods` array".to_owned());
        };
        let methods = methods
            .iter()
            .enumerate()
            .map(|(index, method)| read_method(root, method).map_err(|why| format!("method {index}: {why}")))
            .collect::<Result<Vec<_>, _>>()?;
        for (index, method) in methods.iter().enumerate() {
            if methods[..index].iter().any(|earlier| earlier.name == method.name) {
                return Err(format!("method `{}` is listed twice", method.name));
            }
        }
        Ok(Document { doc: Doc::new(root), methods })
    }

    pub(super) fn method(&self, name: &str) -> Option<&Method<'d>> {
        self.methods.iter().find(|method| method.name == name)
    }
}

/// `$ref` objects (OpenRPC's Reference Object) followed within the
/// document, a few times at most.
fn follow<'d>(root: &'d Value, mut value: &'d Value) -> Result<&'d Value, String> {
    for _ in 0..8 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else { return Ok(value) };
        value = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .ok_or_else(|| format!("`$ref` \"{reference}\" points nowhere in the document"))?;
    }
    Err("a chain of `$ref`s too long to follow".to_owned())
}

fn text<'d>(object: &'d Value, key: &str) -> Option<&'d str> {
    object.get(key).and_then(Value::as_str)
}

fn flag(object: &Value, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn read_method<'d>(root: &'d Value, method: &'d Value) -> Result<Method<'d>, String> {
    let method = follow(root, method)?;
    let name = text(method, "name").ok_or("no `name` string")?;
    let params = match method.get("params") {
        Some(Value::Array(params)) => params,
        Some(_) => return Err(format!("`{name}`: `params` is not an array")),
        None => return Err(format!("`{name}`: no `params` array")),
    };
    let params = params
        .iter()
        .map(|param| read_descriptor(root, param).map_err(|why| format!("`{name}`: a param {why}")))
        .collect::<Result<Vec<_>, _>>()?;
    for (index, param) in params.iter().enumerate() {
        if params[..index].iter().any(|earlier| earlier.name == param.name) {
            return Err(format!("`{name}` lists param `{}` twice", param.name));
        }
    }
    let result = match method.get("result") {
        Some(result) => {
            Some(read_descriptor(root, result).map_err(|why| format!("`{name}`: its result {why}"))?.schema)
        }
        None => None,
    };
    let structure_name = text(method, "paramStructure").unwrap_or("either");
    let structure = match structure_name {
        "either" => Structure { by_position: true, by_name: true },
        "by-name" => Structure { by_position: false, by_name: true },
        "by-position" => Structure { by_position: true, by_name: false },
        other => return Err(format!("`{name}`: unknown `paramStructure` \"{other}\"")),
    };
    let subscription = method.get("x-subscription").map(|subscription| Subscription {
        notification: text(subscription, "notification"),
        unsubscribe: text(subscription, "unsubscribe"),
        item: subscription.get("item").unwrap_or(&ANY),
    });
    let errors = match method.get("errors") {
        Some(Value::Array(errors)) => errors
            .iter()
            .filter_map(|error| follow(root, error).ok())
            .filter_map(|error| Some((error.get("code")?.as_i64()?, text(error, "message").unwrap_or(""))))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Method {
        name,
        summary: text(method, "summary"),
        description: text(method, "description"),
        params,
        result,
        structure,
        structure_name,
        deprecated: flag(method, "deprecated"),
        whole: flag(method, "x-whole-params"),
        allow_extra: flag(method, "x-allow-extra-params"),
        alias_of: text(method, "x-alias-of"),
        requires: text(method, "x-requires"),
        subscription,
        errors,
    })
}

fn read_descriptor<'d>(root: &'d Value, descriptor: &'d Value) -> Result<Param<'d>, String> {
    let descriptor = follow(root, descriptor)?;
    let name = text(descriptor, "name").ok_or("has no `name` string")?;
    let schema = descriptor.get("schema").ok_or_else(|| format!("`{name}` has no `schema`"))?;
    Ok(Param { name, description: text(descriptor, "description"), required: flag(descriptor, "required"), schema })
}
