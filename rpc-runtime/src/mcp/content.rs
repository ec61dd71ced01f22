//! What resource, prompt and completion methods return: typed values that
//! serialize as MCP's own shapes, each marked in its JSON Schema so that
//! the server knows it without guessing from the JSON.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The schema keyword that marks the types of this module, with the kind
/// as its value.
pub(crate) const MARKER: &str = "x-mcp";

/// One entry of `resources/list`, as a `#[rpc(mcp(resource_list))]`
/// method returns it (in a `Vec`).
///
/// ```
/// use rpc_runtime::mcp::Resource;
///
/// let note = Resource::new("notes://1", "note-1").title("Groceries").mime_type("text/markdown");
/// assert_eq!(note.uri, "notes://1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-mcp" = "resource"))]
#[non_exhaustive]
pub struct Resource {
    /// Where it is (`resources/read` takes it).
    pub uri: String,
    /// A short programmatic name.
    pub name: String,
    /// A human-readable name (sent from MCP 2025-06-18 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is, for the model and the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Resource {
    /// The resource at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource { uri: uri.into(), name: name.into(), title: None, description: None, mime_type: None, size: None }
    }

    /// With a human-readable name.
    #[must_use]
    pub fn title(self, title: impl Into<String>) -> Self {
        Resource { title: Some(title.into()), ..self }
    }

    /// With a description.
    #[must_use]
    pub fn description(self, description: impl Into<String>) -> Self {
        Resource { description: Some(description.into()), ..self }
    }

    /// With a MIME type.
    #[must_use]
    pub fn mime_type(self, mime_type: impl Into<String>) -> Self {
        Resource { mime_type: Some(mime_type.into()), ..self }
    }

    /// With a size in bytes.
    #[must_use]
    pub fn size(self, size: u64) -> Self {
        Resource { size: Some(size), ..self }
    }
}

/// What a `#[rpc(mcp(resource = ..))]` method reads: text and binary
/// parts, each with an optional MIME type and URI (the requested one
/// when not given). A method may also return a `String` (one text part,
/// of the declared `mime_type`) or any other serializable value (its JSON,
/// as `application/json` unless another `mime_type` is declared).
///
/// ```
/// use rpc_runtime::mcp::Contents;
///
/// let page = Contents::text("# Title").mime_type("text/markdown").and(Contents::blob([0x89, b'P', b'N', b'G']).mime_type("image/png"));
/// let json = rpc_runtime::serde_json::to_value(&page).unwrap();
/// assert_eq!(json["contents"][1]["blob"], "iVBORw==");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-mcp" = "contents"))]
pub struct Contents {
    contents: Vec<Part>,
}

/// One part of [`Contents`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(flatten)]
    body: Body,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Body {
    /// Text.
    Text(String),
    /// Bytes, in Base64.
    Blob(String),
}

impl Contents {
    /// One text part.
    pub fn text(text: impl Into<String>) -> Self {
        Contents::of(Body::Text(text.into()))
    }

    /// One binary part (sent in Base64).
    pub fn blob(bytes: impl AsRef<[u8]>) -> Self {
        Contents::of(Body::Blob(base64(bytes.as_ref())))
    }

    fn of(body: Body) -> Self {
        Contents { contents: vec![Part { uri: None, mime_type: None, body }] }
    }

    /// The MIME type of the last part.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        if let Some(part) = self.contents.last_mut() {
            part.mime_type = Some(mime_type.into());
        }
        self
    }

    /// The URI of the last part, when it is not the one that was read (a
    /// part of it, say).
    #[must_use]
    pub fn uri(mut self, uri: impl Into<String>) -> Self {
        if let Some(part) = self.contents.last_mut() {
            part.uri = Some(uri.into());
        }
        self
    }

    /// Each part with `uri` and `mime_type` unless it has its own.
    pub(crate) fn filled(mut self, uri: &str, mime_type: Option<&str>) -> Self {
        for part in &mut self.contents {
            part.uri.get_or_insert_with(|| uri.to_owned());
            if let (None, Some(mime_type)) = (&part.mime_type, mime_type) {
                part.mime_type = Some(mime_type.to_owned());
            }
        }
        self
    }

    /// The parts, as `contents` lists them.
    pub(crate) fn parts(&self) -> &[impl Serialize + use<>] {
        &self.contents
    }

    /// These parts, then `more`'s.
    #[must_use]
    pub fn and(mut self, more: Contents) -> Self {
        self.contents.extend(more.contents);
        self
    }
}

/// What a `#[rpc(mcp(prompt))]` method answers: messages for the model,
/// and optionally a description. A prompt method may also return a
/// `String` (one user message).
///
/// ```
/// use rpc_runtime::mcp::PromptMessages;
///
/// let prompt = PromptMessages::new().description("Summarize a note").user("Summarize this:").user("eggs, milk");
/// let json = rpc_runtime::serde_json::to_value(&prompt).unwrap();
/// assert_eq!(json["messages"][1]["content"]["text"], "eggs, milk");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-mcp" = "prompt"))]
pub struct PromptMessages {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    messages: Vec<Message>,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
struct Message {
    role: Role,
    content: MessageContent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
enum MessageContent {
    Text { text: String },
    Resource { resource: Part },
}

/// Written as the derive would write it (`type` first), as a struct: an
/// internally tagged enum goes through a map of serde's, at several times
/// the cost for every message of every prompt.
impl Serialize for MessageContent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut content = serializer.serialize_struct("MessageContent", 2)?;
        match self {
            MessageContent::Text { text } => {
                content.serialize_field("type", "text")?;
                content.serialize_field("text", text)?;
            }
            MessageContent::Resource { resource } => {
                content.serialize_field("type", "resource")?;
                content.serialize_field("resource", resource)?;
            }
        }
        content.end()
    }
}

impl PromptMessages {
    /// No messages yet.
    pub fn new() -> Self {
        PromptMessages::default()
    }

    /// With a description of the prompt as filled in.
    #[must_use]
    pub fn description(self, description: impl Into<String>) -> Self {
        PromptMessages { description: Some(description.into()), ..self }
    }

    /// Then a text message from the user.
    #[must_use]
    pub fn user(self, text: impl Into<String>) -> Self {
        self.push(Role::User, MessageContent::Text { text: text.into() })
    }

    /// Then a text message from the assistant.
    #[must_use]
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.push(Role::Assistant, MessageContent::Text { text: text.into() })
    }

    /// Then, from the user, a resource embedded in the prompt: one
    /// message per part of `contents`, each part's URI `uri` unless it
    /// has its own.
    #[must_use]
    pub fn user_resource(mut self, uri: &str, contents: Contents) -> Self {
        for mut part in contents.contents {
            part.uri.get_or_insert_with(|| uri.to_owned());
            self = self.push(Role::User, MessageContent::Resource { resource: part });
        }
        self
    }

    fn push(mut self, role: Role, content: MessageContent) -> Self {
        self.messages.push(Message { role, content });
        self
    }
}

/// What a `#[rpc(mcp(complete(..)))]` method answers: suggested values
/// (MCP sends at most 100), and optionally how many there are in all and
/// whether there are more than those sent. A completion method may also
/// return a `Vec<String>`: the first 100 are sent, with the count.
///
/// ```
/// use rpc_runtime::mcp::Completion;
///
/// let found = Completion::new(vec!["1".to_owned(), "12".to_owned()]).total(40).has_more(true);
/// let json = rpc_runtime::serde_json::to_value(&found).unwrap();
/// assert_eq!(json["hasMore"], true);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-mcp" = "completion"))]
pub struct Completion {
    values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    has_more: Option<bool>,
}

/// The most values one completion sends.
pub(crate) const MAX_COMPLETION_VALUES: usize = 100;

impl Completion {
    /// These values (beyond 100, the rest are dropped and `hasMore` set).
    pub fn new(values: Vec<String>) -> Self {
        Completion { values, total: None, has_more: None }
    }

    /// How many values there are in all.
    #[must_use]
    pub fn total(self, total: u64) -> Self {
        Completion { total: Some(total), ..self }
    }

    /// Whether there are more values than these.
    #[must_use]
    pub fn has_more(self, has_more: bool) -> Self {
        Completion { has_more: Some(has_more), ..self }
    }

    /// At most [`MAX_COMPLETION_VALUES`] values, saying so when some were
    /// dropped.
    pub(crate) fn capped(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let all = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.has_more = Some(true);
            self.total = Some(self.total.unwrap_or(all).max(all));
        }
        self
    }

    /// All of `values`, counted.
    pub(crate) fn counted(values: Vec<String>) -> Self {
        let total = values.len() as u64;
        Completion { has_more: Some(values.len() > MAX_COMPLETION_VALUES), total: Some(total), values }.capped()
    }
}

/// Standard Base64 (RFC 4648, with padding), as MCP's `blob` wants.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> shift) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let vectors =
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn the_types_carry_their_marker_in_their_schema() {
        let schema = |s: schemars::Schema| s.get(MARKER).and_then(|v| v.as_str()).map(str::to_owned);
        assert_eq!(schema(schemars::schema_for!(Contents)).as_deref(), Some("contents"));
        assert_eq!(schema(schemars::schema_for!(PromptMessages)).as_deref(), Some("prompt"));
        assert_eq!(schema(schemars::schema_for!(Completion)).as_deref(), Some("completion"));
        assert_eq!(schema(schemars::schema_for!(Resource)).as_deref(), Some("resource"));
    }

    #[test]
    fn completions_keep_at_most_a_hundred_values() {
        let values: Vec<String> = (0..150).map(|n| n.to_string()).collect();
        let json = serde_json::to_value(Completion::counted(values)).unwrap();
        assert_eq!(json["values"].as_array().unwrap().len(), 100);
        assert_eq!((json["total"].as_u64(), json["hasMore"].as_bool()), (Some(150), Some(true)));
    }

    #[test]
    fn prompt_messages_write_and_read_back_as_the_spec_shapes_them() {
        let prompt = PromptMessages::new()
            .description("d")
            .user("u")
            .assistant("a")
            .user_resource("notes://1", Contents::text("body"));
        let json = serde_json::to_string(&prompt).unwrap();
        assert!(
            json.starts_with(r#"{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"u"}},"#),
            "{json}"
        );
        assert!(json.contains(r#"{"role":"assistant","content":{"type":"text","text":"a"}}"#), "{json}");
        assert!(json.contains(r#""content":{"type":"resource","resource":{"#), "{json}");
        assert_eq!(serde_json::from_str::<PromptMessages>(&json).unwrap(), prompt);
    }
}
