//! The JSON-RPC 2.0 error object and the codes the specification reserves.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::wire::words::{has_below, has_byte, word_at};

/// Invalid JSON was received by the server.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid Request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameter(s).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// Implementation-defined server error: a per-connection limit was hit.
pub const SERVER_OVERLOADED: i64 = -32000;
/// Implementation-defined server error: a subscription ended because its
/// reader fell too far behind (see [`Limits::subscription_buffer`](crate::Limits)).
pub const SUBSCRIPTION_LAGGED: i64 = -32040;
/// The request was cancelled (LSP's `RequestCancelled`; outside the ranges
/// JSON-RPC 2.0 reserves, as LSP defines it).
pub const REQUEST_CANCELLED: i64 = -32800;
/// Implementation-defined server error: the caller lacks the permission
/// the method requires (`#[rpc(requires = "...")]`).
pub const PERMISSION_DENIED: i64 = -32003;
/// Implementation-defined server error: a rate or quota limit was hit
/// (the code EIP-1474 uses for "limit exceeded").
pub const LIMIT_EXCEEDED: i64 = -32005;
/// Implementation-defined code the clients of this crate use for an
/// answer made up on the calling side, when the transport could not get
/// a JSON-RPC answer for a call. The call ends with it as
/// [`ClientError::Server`](crate::ClientError::Server), and its `data`
/// says what happened:
///
/// - `{"httpStatus": N}`: the HTTP server answered the `POST` with status
///   `N`, not 200 or 204 (a connection hook's 401 or 403, a 413, a 429, a
///   503...), so the call never reached the method; the message is
///   `HTTP <status>` and the start of the body.
///   [`ClientError::http_status`](crate::ClientError::http_status) reads it.
/// - `{"transport": "http"}`: the HTTP request could not be sent, or its
///   answer not read (connection refused or reset, an answer over the
///   size limit).
/// - `{"transport": "ws"}`: the WebSocket connection was lost before the
///   answer came, under a client that reconnects (`WsConnect::reconnect`,
///   feature `ws`).
/// - `{"transport": "tcp"}`: the same for a TCP client that reconnects
///   ([`Tcp::reconnect`](crate::transport::tcp::Tcp::reconnect)).
///
/// In the last three cases the call may or may not have run. These display
/// as what they are ("the server refused the request: HTTP 401
/// Unauthorized...", "the WebSocket connection was lost..."), not as an
/// answer of the server. A server may still send -32099 for errors of its
/// own (the code is in the range JSON-RPC 2.0 leaves to
/// implementations): such an object has none of the `data` above, and
/// reads as the server's error.
pub const TRANSPORT_ERROR: i64 = -32099;

/// A JSON-RPC 2.0 error object: `{"code": .., "message": .., "data": ..}`.
///
/// Every error a method returns is converted into one of these; implement
/// `From<YourError> for ErrorObject` to use your own error type in
/// `Result<T, YourError>`.
///
/// ```
/// use rpc_runtime::ErrorObject;
/// let e = ErrorObject::new(-32001, "disk full").with_data(&serde_json::json!({"free": 0}));
/// assert_eq!(e.code(), -32001);
/// assert_eq!(e.data().unwrap().get(), r#"{"free":0}"#);
/// ```
#[derive(Clone)]
pub struct ErrorObject {
    code: i64,
    message: Cow<'static, str>,
    data: Option<Box<RawValue>>,
}

impl ErrorObject {
    /// The refusal of requests past `max_concurrent_requests` (-32000):
    /// at most `limit` may run at once `scope` ("on this connection", "in
    /// this replica", "in one MCP session").
    pub(crate) fn overloaded(limit: usize, scope: &str) -> Self {
        Self::new(
            SERVER_OVERLOADED,
            format!(
                "Server overloaded: at most {limit} requests may run at once {scope} (max_concurrent_requests); retry later"
            ),
        )
    }

    /// An error with `code` and `message` and no `data`.
    pub fn new(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Attaches `data`, serialized to JSON. A value that fails to serialize
    /// is replaced by a string that says so, never a panic.
    pub fn with_data<T: Serialize + ?Sized>(mut self, data: &T) -> Self {
        self.data = Some(match serde_json::value::to_raw_value(data) {
            Ok(raw) => raw,
            Err(err) => serde_json::value::to_raw_value(&format!("unserializable error data: {err}"))
                .expect("a string always serializes"),
        });
        self
    }

    /// Attaches `data` that is already JSON; it is sent byte for byte.
    pub fn with_raw_data(mut self, data: Box<RawValue>) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700 `Parse error`.
    pub fn parse_error() -> Self {
        Self::new(PARSE_ERROR, "Parse error")
    }

    /// -32600 `Invalid Request`.
    pub fn invalid_request() -> Self {
        Self::new(INVALID_REQUEST, "Invalid Request")
    }

    /// -32601 `Method not found`.
    pub fn method_not_found() -> Self {
        Self::new(METHOD_NOT_FOUND, "Method not found")
    }

    /// -32602 with a message that says which parameter is wrong and why.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// -32603 with the given message.
    pub fn internal_error(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// The error code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `data` member, if any, as raw JSON.
    pub fn data(&self) -> Option<&RawValue> {
        self.data.as_deref()
    }

    /// Decodes the `data` member into `T`.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        self.data.as_deref().map(|raw| serde_json::from_str(raw.get()))
    }
}

impl ErrorObject {
    /// Appends this error object's JSON to `out`: the very bytes its
    /// `Serialize` gives with serde_json (`{"code":..,"message":..}`, then
    /// `"data"` when set), written directly: every error answer is written
    /// here, a flood of bad requests included, and serde_json's serializer
    /// checks the message for escapes one byte at a time.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        // The errors a flood of bad requests gets, written whole.
        let known: Option<(&str, &[u8])> = match self.code {
            METHOD_NOT_FOUND => Some(("Method not found", br#"{"code":-32601,"message":"Method not found"}"#)),
            INVALID_REQUEST => Some(("Invalid Request", br#"{"code":-32600,"message":"Invalid Request"}"#)),
            PARSE_ERROR => Some(("Parse error", br#"{"code":-32700,"message":"Parse error"}"#)),
            _ => None,
        };
        if let Some((message, json)) = known
            && self.data.is_none()
            && self.message == message
        {
            out.extend_from_slice(json);
            return;
        }
        out.extend_from_slice(b"{\"code\":");
        write_integer(out, self.code);
        out.extend_from_slice(b",\"message\":");
        write_string(out, &self.message);
        if let Some(data) = &self.data {
            out.extend_from_slice(b",\"data\":");
            out.extend_from_slice(data.get().as_bytes());
        }
        out.push(b'}');
    }
}

/// Appends `n` in decimal.
fn write_integer(out: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[start..]);
}

/// Whether a byte goes into a JSON string as it is: anything but `"`, `\\`
/// and the control characters below 0x20.
const PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut byte = 0x20;
    while byte < 256 {
        plain[byte] = byte != b'"' as usize && byte != b'\\' as usize;
        byte += 1;
    }
    plain
};

/// Appends `text` as a JSON string, escaped as serde_json escapes (`"`,
/// `\\` and control characters only; `\b \t \n \f \r` by their short
/// forms, the others as `\u00xx`), the runs between escapes copied whole.
/// Eight bytes are checked at a time, and only a word that holds a byte to
/// escape is looked at byte by byte: messages name params and types, and
/// rarely hold anything to escape (the in-process `invalid params` case
/// of BENCHMARKS.md).
fn write_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.push(b'"');
    // `bytes[run..at]` is plain and not written yet.
    let mut run = 0;
    let mut at = 0;
    loop {
        while at + 8 <= bytes.len() && !needs_escape(word_at(bytes, at)) {
            at += 8;
        }
        let end = bytes.len().min(at + 8);
        if at == end {
            break;
        }
        for (offset, &byte) in bytes[at..end].iter().enumerate() {
            if !PLAIN[usize::from(byte)] {
                out.extend_from_slice(&bytes[run..at + offset]);
                run = at + offset + 1;
                write_escape(out, byte);
            }
        }
        at = end;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Whether any of these eight bytes is `"`, `\\` or below 0x20.
fn needs_escape(word: u64) -> bool {
    has_below(word, 0x20) | has_byte(word, b'"') | has_byte(word, b'\\')
}

/// Appends the escape of `byte`, one that is not [`PLAIN`].
#[cold]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\x08' => out.extend_from_slice(b"\\b"),
        b'\t' => out.extend_from_slice(b"\\t"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\x0c' => out.extend_from_slice(b"\\f"),
        b'\r' => out.extend_from_slice(b"\\r"),
        _ => {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]])
        }
    }
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl fmt::Debug for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ErrorObject");
        s.field("code", &self.code).field("message", &self.message);
        if let Some(data) = &self.data {
            s.field("data", &data.get());
        }
        s.finish()
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)?;
        if let Some(data) = &self.data {
            write!(f, ": {}", data.get())?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorObject {}

impl Serialize for ErrorObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = if self.data.is_some() { 3 } else { 2 };
        let mut s = serializer.serialize_struct("ErrorObject", len)?;
        s.serialize_field("code", &self.code)?;
        s.serialize_field("message", &self.message)?;
        if let Some(data) = &self.data {
            s.serialize_field("data", data)?;
        }
        s.end()
    }
}

impl<'de> Deserialize<'de> for ErrorObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ErrorVisitor;
        impl<'de> Visitor<'de> for ErrorVisitor {
            type Value = ErrorObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC error object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorObject, A::Error> {
                let mut code = None;
                let mut message: Option<String> = None;
                let mut data = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "code" => code = Some(map.next_value::<i64>()?),
                        "message" => message = Some(map.next_value()?),
                        "data" => data = Some(map.next_value::<Box<RawValue>>()?),
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(ErrorObject {
                    code: code.ok_or_else(|| de::Error::missing_field("code"))?,
                    message: message.ok_or_else(|| de::Error::missing_field("message"))?.into(),
                    data,
                })
            }
        }
        deserializer.deserialize_map(ErrorVisitor)
    }
}

impl From<std::convert::Infallible> for ErrorObject {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// `Result<T, ErrorObject>`, the usual return type of a fallible method.
pub type RpcResult<T> = Result<T, ErrorObject>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_json_is_what_serde_json_writes() {
        let data = serde_json::value::to_raw_value(&serde_json::json!({"why": ["a", 1]})).unwrap();
        for error in [
            ErrorObject::method_not_found(),
            ErrorObject::parse_error(),
            ErrorObject::invalid_request(),
            ErrorObject::new(METHOD_NOT_FOUND, "Method not found: nope"),
            ErrorObject::method_not_found().with_data("nope"),
            ErrorObject::new(0, "zero"),
            ErrorObject::new(7, ""),
            ErrorObject::new(i64::MIN, "min"),
            ErrorObject::new(i64::MAX, "max"),
            ErrorObject::new(-32602, "quote \" backslash \\ newline \n tab \t nul \0 del \u{7f} é ✓"),
            ErrorObject::new(1, "\u{8}\u{c}\r\u{1}\u{1f}\u{10}\"\"\\"),
            ErrorObject::new(-32000, "with data").with_raw_data(data),
            ErrorObject::invalid_request().with_data("text \"data\""),
            // Every ASCII character, each on its own and in runs.
            ErrorObject::new(2, (0u8..128).map(char::from).collect::<String>()),
            ErrorObject::new(3, (0u8..128).map(|byte| format!("ab{}c", char::from(byte))).collect::<String>()),
        ]
        .into_iter()
        // An escape (or a character of several bytes) at every place of
        // the eight-byte words, in texts of every length around them.
        .chain((0..40).flat_map(|len| {
            ["\"", "\\", "\n", "\u{1}", "\u{1f}", " ", "é", "✓", "\u{7f}"]
                .map(|odd| ErrorObject::new(4, format!("{}{odd}{}", "x".repeat(len), "y".repeat(len % 9))))
        })) {
            let mut written = Vec::new();
            error.write_json(&mut written);
            assert_eq!(String::from_utf8(written).unwrap(), serde_json::to_string(&error).unwrap());
        }
    }
}
