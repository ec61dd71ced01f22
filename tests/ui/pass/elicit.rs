//! `#[derive(Elicit)]`: the struct's fields, named as serde reads them,
//! are the form's `requestedSchema`; doc comments describe them; `Option`
//! fields and `#[serde(default)]` ones may be left out; skipped ones are
//! not asked for. On an enum of unit variants: a choice, a field's
//! `{"type": "string", "enum": [..]}` of the variants' serde names.
use rpc_runtime::mcp::{Elicit, ElicitField};
use rpc_runtime::serde_json::{json, Value};
use serde::Deserialize;

#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "camelCase")]
pub struct NewNote {
    /// The note's title,
    ///   shown in the list.
    title: String,
    pinned: bool,
    /// Days until it expires.
    expires_in_days: u32,
    #[serde(rename = "weight")]
    priority_weight: f64,
    comment: Option<String>,
    #[serde(default)]
    tags: String,
    #[serde(skip)]
    draft: Vec<u8>,
    #[serde(skip_deserializing)]
    cache: Nested,
}

#[derive(Debug, Default)]
pub struct Nested {
    pub inner: Vec<String>,
}

/// Every field may be left out; a raw identifier is read by its name.
#[derive(Default, Deserialize, Elicit)]
#[serde(default)]
pub struct Filter {
    r#type: String,
    limit: u8,
}

/// `crate = "..."`: the runtime through a re-export.
mod facade {
    pub use rpc_runtime as rt;
}

#[derive(Deserialize, Elicit)]
#[elicit(crate = "crate::facade::rt")]
pub struct Confirm {
    /// Delete every note?
    confirm: bool,
}

/// A choice: the names serde reads the variants by. Its doc comment is
/// not in the schema: the field's describes it.
#[derive(Debug, PartialEq, Deserialize, Elicit)]
#[serde(rename_all = "kebab-case")]
pub enum Priority {
    VeryLow,
    #[serde(rename = "normal", alias = "medium")]
    Medium,
    r#High,
    #[serde(skip)]
    Draft,
    /// Never read, so it may hold data.
    #[serde(skip_deserializing)]
    Custom(u8),
}

#[derive(Debug, PartialEq, Deserialize, Elicit)]
pub enum Color {
    Red,
    Green,
}

#[derive(Debug, Deserialize, Elicit)]
pub struct Task {
    /// How urgent it is.
    priority: Priority,
    /// A color, if any.
    color: Option<Color>,
}

/// The generated impl names everything by its full path.
mod no_prelude {
    #![no_implicit_prelude]

    #[derive(::serde::Deserialize, ::rpc_runtime::mcp::Elicit)]
    pub struct Rate {
        /// Stars, 1 to 5.
        pub stars: ::core::option::Option<u8>,
        pub size: Size,
    }

    #[derive(::serde::Deserialize, ::rpc_runtime::mcp::Elicit)]
    #[elicit(crate = "::rpc_runtime")]
    #[derive(Debug, PartialEq)]
    pub enum Size {
        Small,
        Large,
    }
}

fn main() {
    assert_eq!(
        Value::Object(NewNote::requested_schema()),
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "The note's title,\n  shown in the list."},
                "pinned": {"type": "boolean"},
                "expiresInDays": {"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "Days until it expires."},
                "weight": {"type": "number"},
                "comment": {"type": "string"},
                "tags": {"type": "string"},
            },
            "required": ["title", "pinned", "expiresInDays", "weight"],
        })
    );
    assert_eq!(
        Value::Object(Filter::requested_schema()),
        json!({
            "type": "object",
            "properties": {"type": {"type": "string"}, "limit": {"type": "integer", "minimum": 0, "maximum": 255}},
        })
    );
    assert_eq!(
        Value::Object(Confirm::requested_schema()),
        json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Delete every note?"}},
            "required": ["confirm"],
        })
    );

    assert_eq!(
        Value::Object(no_prelude::Rate::requested_schema()),
        json!({
            "type": "object",
            "properties": {
                "stars": {"type": "integer", "minimum": 0, "maximum": 255, "description": "Stars, 1 to 5."},
                "size": {"type": "string", "enum": ["Small", "Large"]},
            },
            "required": ["size"],
        })
    );

    // A choice is a field's schema, and the form's field is described by
    // its own doc comment; an `Option` of one may be left out.
    assert_eq!(Value::Object(Priority::schema()), json!({"type": "string", "enum": ["very-low", "normal", "high"]}));
    const { assert!(!Priority::OPTIONAL) };
    assert_eq!(
        Value::Object(Task::requested_schema()),
        json!({
            "type": "object",
            "properties": {
                "priority": {"type": "string", "enum": ["very-low", "normal", "high"], "description": "How urgent it is."},
                "color": {"type": "string", "enum": ["Red", "Green"], "description": "A color, if any."},
            },
            "required": ["priority"],
        })
    );
    let task: Task = rpc_runtime::serde_json::from_value(json!({"priority": "normal", "color": "Green"})).unwrap();
    assert_eq!((task.priority, task.color), (Priority::Medium, Some(Color::Green)));
    let task: Task = rpc_runtime::serde_json::from_value(json!({"priority": "very-low"})).unwrap();
    assert_eq!((task.priority, task.color), (Priority::VeryLow, None));

    // What the user fills in decodes into the struct, by the same names.
    let note: NewNote =
        rpc_runtime::serde_json::from_value(json!({"title": "t", "pinned": true, "expiresInDays": 3, "weight": 0.5}))
            .unwrap();
    assert_eq!((note.title.as_str(), note.pinned, note.expires_in_days, note.priority_weight), ("t", true, 3, 0.5));
    assert_eq!((note.comment, note.tags.as_str(), note.draft.len(), note.cache.inner.len()), (None, "", 0, 0));
    let confirm: Confirm = rpc_runtime::serde_json::from_value(json!({"confirm": true})).unwrap();
    assert!(confirm.confirm);
    let rate: no_prelude::Rate = rpc_runtime::serde_json::from_value(json!({"size": "Large"})).unwrap();
    assert_eq!((rate.stars, rate.size), (None, no_prelude::Size::Large));
}
