//! The forms of elicitation: a Rust struct, derived, as MCP's flat
//! `requestedSchema`; its field types checked at compile time.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A form to ask the user for: a struct whose fields are strings,
/// numbers, integers and booleans (or `Option`s of them, which the user
/// may leave out), as MCP's elicitation allows. Derive it, beside
/// `Deserialize`: `#[derive(Deserialize, Elicit)]`. The fields' doc
/// comments describe them to the user; a field type the form cannot hold
/// is a compile error.
pub trait Elicit: DeserializeOwned {
    /// The `requestedSchema`: `{"type": "object", "properties": {..},
    /// "required": [..]}`.
    fn requested_schema() -> Map<String, Value>;
}

/// A type a field of an [`Elicit`] form may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    note = "MCP asks users only for flat values: `String`, `bool`, integers, `f32`/`f64`, or an `Option` of one of them (a field the user may leave out)"
)]
pub trait ElicitField {
    /// The field's schema (MCP's `PrimitiveSchemaDefinition`).
    fn schema() -> Map<String, Value>;
    /// Whether the user may leave it out.
    const OPTIONAL: bool = false;
}

fn typed(kind: &str) -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".into(), kind.into());
    schema
}

impl ElicitField for String {
    fn schema() -> Map<String, Value> {
        typed("string")
    }
}

impl ElicitField for bool {
    fn schema() -> Map<String, Value> {
        typed("boolean")
    }
}

macro_rules! elicit_numbers {
    ($kind:literal: $($ty:ty),*) => {$(
        impl ElicitField for $ty {
            fn schema() -> Map<String, Value> {
                let mut schema = typed($kind);
                if $kind == "integer" {
                    schema.insert("minimum".into(), json!(<$ty>::MIN));
                    schema.insert("maximum".into(), json!(<$ty>::MAX));
                }
                schema
            }
        }
    )*};
}

elicit_numbers!("integer": i8, i16, i32, u8, u16, u32);
elicit_numbers!("number": f32, f64);

// 64-bit integers: JSON numbers beyond 2^53 lose precision in most
// clients, so no bounds are claimed.
impl ElicitField for i64 {
    fn schema() -> Map<String, Value> {
        typed("integer")
    }
}

impl ElicitField for u64 {
    fn schema() -> Map<String, Value> {
        let mut schema = typed("integer");
        schema.insert("minimum".into(), 0.into());
        schema
    }
}

impl<T: ElicitField> ElicitField for Option<T> {
    fn schema() -> Map<String, Value> {
        T::schema()
    }
    const OPTIONAL: bool = true;
}

/// One field of a form, as the derive describes it.
#[derive(Debug)]
pub struct FormField {
    /// The field's name in the form (serde's).
    pub name: &'static str,
    /// Its schema (its type's [`ElicitField::schema`]).
    pub schema: fn() -> Map<String, Value>,
    /// The user may leave it out.
    pub optional: bool,
    /// Its doc comment.
    pub description: Option<&'static str>,
}

/// The `requestedSchema` of a form of `fields` (what the derive calls).
pub fn form_schema(fields: &[FormField]) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        let mut schema = (field.schema)();
        if let Some(description) = field.description {
            schema.insert("description".into(), description.into());
        }
        properties.insert(field.name.into(), Value::Object(schema));
        if !field.optional {
            required.push(Value::from(field.name));
        }
    }
    let mut form = typed("object");
    form.insert("properties".into(), properties.into());
    if !required.is_empty() {
        form.insert("required".into(), required.into());
    }
    form
}

/// What the user did with a form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// Filled it in and submitted it.
    Accept(T),
    /// Declined to (said no).
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_list_their_fields_and_what_is_required() {
        let form = form_schema(&[
            FormField { name: "confirm", schema: bool::schema, optional: false, description: Some("Sure?") },
            FormField { name: "note", schema: <Option<String>>::schema, optional: true, description: None },
        ]);
        assert_eq!(
            Value::Object(form),
            json!({"type": "object", "properties": {"confirm": {"type": "boolean", "description": "Sure?"},
                   "note": {"type": "string"}}, "required": ["confirm"]})
        );
    }
}
