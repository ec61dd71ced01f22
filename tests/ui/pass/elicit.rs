//! `#[derive(Elicit)]`: the struct's fields, named as serde reads them,
//! are the form's `requestedSchema`; doc comments describe them; `Option`
//! fields and `#[serde(default)]` ones may be left out; skipped ones are
//! not asked for.
use rpc_runtime::mcp::Elicit;
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

/// The generated impl names everything by its full path.
mod no_prelude {
    #![no_implicit_prelude]

    #[derive(::serde::Deserialize, ::rpc_runtime::mcp::Elicit)]
    pub struct Rate {
        /// Stars, 1 to 5.
        pub stars: ::core::option::Option<u8>,
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
            "properties": {"stars": {"type": "integer", "minimum": 0, "maximum": 255, "description": "Stars, 1 to 5."}},
        })
    );

    // What the user fills in decodes into the struct, by the same names.
    let note: NewNote =
        rpc_runtime::serde_json::from_value(json!({"title": "t", "pinned": true, "expiresInDays": 3, "weight": 0.5}))
            .unwrap();
    assert_eq!((note.title.as_str(), note.pinned, note.expires_in_days, note.priority_weight), ("t", true, 3, 0.5));
    assert_eq!((note.comment, note.tags.as_str(), note.draft.len(), note.cache.inner.len()), (None, "", 0, 0));
}
