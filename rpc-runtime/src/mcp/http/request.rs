//! What the Streamable HTTP transport reads of a request before handing
//! its message to the engine: the MCP headers, and the few members of the
//! JSON-RPC message that decide the era, the session and the answer's form.

use std::borrow::Cow;

use http::header::{self, HeaderMap};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::mcp::session::Meta;
use crate::wire::message::MethodMember;
use crate::wire::{self, ErrorObject};

/// The session header (legacy revisions).
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// The revision header.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The method header (2026-07-28).
pub(crate) const METHOD: &str = "mcp-method";
/// The name header of `tools/call`, `prompts/get`, `resources/read` (2026-07-28).
pub(crate) const NAME: &str = "mcp-name";

/// MCP's `HeaderMismatch` (2026-07-28): the HTTP headers do not match the
/// body, or a required one is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;

/// The MCP headers of a request, read before its body.
pub(crate) struct Headers {
    pub(crate) session_id: Option<String>,
    /// `MCP-Protocol-Version`; `Err` when it is not a visible-ASCII value.
    pub(crate) version: Option<Result<String, ()>>,
    method: Option<Result<String, ()>>,
    name: Option<Result<String, ()>>,
    /// A routing header that came more than once.
    duplicated: Option<&'static str>,
    pub(crate) accepts_json: bool,
    pub(crate) accepts_events: bool,
}

/// A header's one value: `None` if absent, `Err` if not visible ASCII.
fn single(headers: &HeaderMap, name: &'static str) -> Option<Result<String, ()>> {
    headers.get(name).map(|value| value.to_str().map(str::to_owned).map_err(|_| ()))
}

impl Headers {
    pub(crate) fn read(headers: &HeaderMap) -> Headers {
        let duplicated =
            [PROTOCOL_VERSION, METHOD, NAME].into_iter().find(|name| headers.get_all(*name).iter().nth(1).is_some());
        let (accepts_json, accepts_events) = accepts(headers);
        Headers {
            session_id: headers.get(SESSION_ID).and_then(|value| value.to_str().ok()).map(str::to_owned),
            version: single(headers, PROTOCOL_VERSION),
            method: single(headers, METHOD),
            name: single(headers, NAME),
            duplicated,
            accepts_json,
            accepts_events,
        }
    }

    /// The 2026-07-28 check that the headers mirror the body: the revision
    /// header equals `_meta`'s revision, `Mcp-Method` the method, and
    /// `Mcp-Name` (after Base64 sentinel decoding) the `name` (`uri` for
    /// `resources/read`) of the methods that have one. `-32020` otherwise.
    pub(crate) fn mismatch(&self, message: &Message<'_>) -> Option<ErrorObject> {
        if let Some(name) = self.duplicated {
            return Some(mismatch(format!("the `{name}` header is given more than once")));
        }
        let body_version =
            message.meta.requested_version().and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        match (&self.version, &body_version) {
            (None, _) => return Some(mismatch("the `MCP-Protocol-Version` header is missing".to_owned())),
            (Some(Ok(header)), Some(body)) if header == body => {}
            (Some(Ok(header)), _) => {
                return Some(mismatch(format!(
                    "the `MCP-Protocol-Version` header `{header}` does not match `_meta.io.modelcontextprotocol/protocolVersion` of the body"
                )));
            }
            (Some(Err(())), _) => return Some(mismatch("the `MCP-Protocol-Version` header is malformed".to_owned())),
        }
        let method = message.method.as_deref().unwrap_or("");
        match &self.method {
            None => return Some(mismatch("the `Mcp-Method` header is missing".to_owned())),
            Some(Ok(header)) if header == method => {}
            Some(Ok(header)) => {
                return Some(mismatch(format!(
                    "the `Mcp-Method` header `{header}` does not match the body's method `{method}`"
                )));
            }
            Some(Err(())) => return Some(mismatch("the `Mcp-Method` header is malformed".to_owned())),
        }
        let body_name = message.name?;
        let key = if method == "resources/read" { "uri" } else { "name" };
        let body_name = serde_json::from_str::<String>(body_name.get()).ok();
        let header = match &self.name {
            None => return Some(mismatch("the `Mcp-Name` header is missing".to_owned())),
            Some(Err(())) => return Some(mismatch("the `Mcp-Name` header is malformed".to_owned())),
            Some(Ok(header)) => header,
        };
        let Some(decoded) = decode_header_value(header) else {
            return Some(mismatch(format!("the `Mcp-Name` header `{header}` is not valid `=?base64?...?=`")));
        };
        if body_name.as_deref() != Some(decoded.as_ref()) {
            return Some(mismatch(format!("the `Mcp-Name` header `{header}` does not match the body's `{key}`")));
        }
        None
    }
}

fn mismatch(reason: String) -> ErrorObject {
    ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {reason}"))
}

/// Whether `Accept` allows JSON and event streams (no `Accept`: both).
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let mut values = headers.get_all(header::ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return (true, true);
    }
    let (mut json, mut events) = (false, false);
    for value in values {
        for range in value.to_str().unwrap_or("").split(',') {
            let mut parts = range.split(';');
            let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            // `q=0` means "not acceptable".
            let refused = parts.any(|param| {
                let param = param.trim();
                param.strip_prefix("q=").is_some_and(|q| q.parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            if refused {
                continue;
            }
            match essence.as_str() {
                "*/*" => (json, events) = (true, true),
                "application/*" | "application/json" => json = true,
                "text/*" | "text/event-stream" => events = true,
                _ => {}
            }
        }
    }
    (json, events)
}

/// The inverse of MCP's header value encoding: the value as it is, or the
/// UTF-8 text of the Base64 between `=?base64?` and `?=`; `None` when that
/// is not canonical Base64 of UTF-8.
pub(crate) fn decode_header_value(value: &str) -> Option<Cow<'_, str>> {
    let Some(payload) = value.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) else {
        return Some(Cow::Borrowed(value));
    };
    let bytes = base64_decode(payload)?;
    String::from_utf8(bytes).ok().map(Cow::Owned)
}

/// Standard Base64 with padding; `None` for anything else, including
/// non-zero bits after the last byte (not canonical).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn sextet(byte: u8) -> Option<u32> {
        Some(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let last = index + 1 == bytes.len() / 4;
        let padding = chunk.iter().rev().take_while(|&&byte| byte == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut word = 0u32;
        for &byte in &chunk[..4 - padding] {
            word = (word << 6) | sextet(byte)?;
        }
        word <<= 6 * padding as u32;
        let decoded = [(word >> 16) as u8, (word >> 8) as u8, word as u8];
        let kept = 3 - padding;
        if word & ((1 << (8 * padding as u32)) - 1) != 0 {
            return None;
        }
        out.extend_from_slice(&decoded[..kept]);
    }
    Some(out)
}

/// What kind of message a POST body holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A request (it has an `id`, even `null`).
    Request,
    Notification,
    /// A response to a request of the server's.
    Response,
    /// A JSON array (legacy revisions 2024-11-05 and 2025-03-26).
    Batch,
}

/// The members of a POSTed message that the transport needs.
pub(crate) struct Message<'a> {
    pub(crate) kind: Kind,
    pub(crate) method: Option<Cow<'a, str>>,
    /// The raw `id` of a request.
    pub(crate) id: Option<&'a RawValue>,
    /// `params.name` (`params.uri` of `resources/read`).
    name: Option<&'a RawValue>,
    pub(crate) meta: Meta<'a>,
    /// `params.requestId` of `notifications/cancelled`.
    pub(crate) cancelled: Option<&'a RawValue>,
}

/// The members of `params` the transport reads: MCP's own (`name` or
/// `uri` for the `Mcp-Name` check, `_meta`, `requestId` of a
/// cancellation), which no JSON-RPC reader has; the message's own members
/// are read with the shared model ([`wire::message::Message`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    request_id: Option<&'a RawValue>,
}

impl<'a> Message<'a> {
    /// Reads a POST body; `None` when it is not a JSON object or array
    /// (the engine says what is wrong with it).
    pub(crate) fn read(body: &'a [u8]) -> Option<Message<'a>> {
        let text = wire::message::text(body)?;
        if wire::message::is_batch(text) {
            serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
            return Some(Message {
                kind: Kind::Batch,
                method: None,
                id: None,
                name: None,
                meta: Meta::default(),
                cancelled: None,
            });
        }
        let envelope: wire::message::Message<'a> = serde_json::from_str(text).ok()?;
        // Unlike the engine, this transport takes `"method": null` for no
        // method (a response with it is accepted), and refuses to read a
        // method of another type (the engine then says what is wrong).
        let method = match envelope.method {
            None => None,
            Some(MethodMember::NotString) if wire::message::method_is_null(text) => None,
            Some(MethodMember::NotString) => return None,
            Some(member) => wire::message::method_name(member, text),
        };
        let params = envelope
            .params
            .and_then(|raw| serde_json::from_str::<Params<'a>>(raw.get()).ok())
            .unwrap_or(Params { name: None, uri: None, meta: None, request_id: None });
        let kind = match (&method, envelope.id) {
            (Some(_), Some(_)) => Kind::Request,
            (Some(_), None) => Kind::Notification,
            (None, _) if envelope.result.is_some() || envelope.error.is_some() => Kind::Response,
            // Neither: the engine answers it as an invalid request.
            (None, _) => Kind::Request,
        };
        let name = match method.as_deref() {
            Some("resources/read") => params.uri,
            _ => params.name,
        }
        .filter(|raw| raw.get() != "null");
        Some(Message {
            kind,
            id: envelope.id,
            name,
            meta: Meta::read(params.meta),
            cancelled: params.request_id,
            method,
        })
    }

    /// Whether the request asked for progress notifications.
    /// Whether the request's answer must be an event stream: it asked for
    /// progress or (2026-07-28) logs, or it is a subscription.
    pub(crate) fn wants_stream(&self) -> bool {
        self.meta.progress_token.is_some()
            || self.meta.log_level.is_some()
            || self.method.as_deref() == Some("subscriptions/listen")
    }

    /// Whether the server may send more than the answer while the request
    /// runs (logs, requests for input): the calls of user methods.
    pub(crate) fn may_send_more(&self) -> bool {
        matches!(self.method.as_deref(), Some("tools/call" | "prompts/get" | "resources/read"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode_as_mcp_encodes_them() {
        assert_eq!(decode_header_value("us-west1").as_deref(), Some("us-west1"));
        assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(), Some("Hello, 世界"));
        assert_eq!(decode_header_value("=?base64?IHBhZGRlZCA=?=").as_deref(), Some(" padded "));
        assert_eq!(decode_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").as_deref(), Some("=?base64?literal?="));
        assert_eq!(decode_header_value("=?base64?YQ==?=").as_deref(), Some("a"));
        assert_eq!(decode_header_value("=?base64?YR==?="), None, "non-canonical trailing bits");
        assert_eq!(decode_header_value("=?base64?Y===?="), None);
        assert_eq!(decode_header_value("=?base64?not base64?="), None);
    }

    #[test]
    fn accept_headers_are_read_with_wildcards_and_q_zero() {
        let read = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, value.parse().unwrap());
            accepts(&headers)
        };
        assert_eq!(accepts(&HeaderMap::new()), (true, true));
        assert_eq!(read("application/json, text/event-stream"), (true, true));
        assert_eq!(read("application/json"), (true, false));
        assert_eq!(read("text/event-stream;q=0.5"), (false, true));
        assert_eq!(read("*/*"), (true, true));
        assert_eq!(read("text/html, application/json;q=0"), (false, false));
    }

    #[test]
    fn messages_are_classified() {
        let read = |text: &'static str| Message::read(text.as_bytes()).map(|message| message.kind);
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":"ping","id":1}"#), Some(Kind::Request));
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":"ping","id":null}"#), Some(Kind::Request));
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Some(Kind::Notification));
        assert_eq!(read(r#"{"jsonrpc":"2.0","result":{},"id":1}"#), Some(Kind::Response));
        assert_eq!(read(r#"[{"jsonrpc":"2.0","method":"ping","id":1}]"#), Some(Kind::Batch));
        assert_eq!(read("{nope"), None);
        // `"method": null` is no method; a method of another type is unread.
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":null,"result":{},"id":1}"#), Some(Kind::Response));
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":null,"id":1}"#), Some(Kind::Request));
        assert_eq!(read(r#"{"jsonrpc":"2.0","method":5,"id":1}"#), None);
        // A member given twice is the engine's to refuse, as on every transport.
        assert_eq!(read(r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"ping","id":1}"#), None);
        let escaped = Message::read(br#"{"jsonrpc":"2.0","method":"tools\/call","id":1}"#).unwrap();
        assert_eq!(escaped.method.as_deref(), Some("tools/call"));
        let call =
            br#"{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"name":"x","_meta":{"progressToken":7}}}"#;
        let message = Message::read(call).unwrap();
        assert_eq!(message.name.map(RawValue::get), Some("\"x\""));
        assert!(message.wants_stream());
    }
}
