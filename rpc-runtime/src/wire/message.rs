//! A JSON-RPC message as the runtime reads it, borrowed from the bytes it
//! came in: its text (UTF-8, without a byte-order mark), its shape (one
//! object or a batch) and the members each reader looks at. The engine,
//! the connection, the transports and the reply matching all read
//! messages through this module, so that they agree on what a message is.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The text of the message `bytes`: UTF-8, without a leading byte-order
/// mark; `None` when it is not UTF-8.
#[inline]
pub(crate) fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(without_bom(bytes)).ok()
}

/// Whether the message `text` is a batch: its first character past JSON's
/// whitespace (RFC 8259: space, tab, line feed, carriage return) is `[`.
#[inline]
pub(crate) fn is_batch(text: &str) -> bool {
    text.bytes().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')) == Some(b'[')
}

/// A request's members, as the engine reads them: a message with other
/// members (a response's `result` or `error`) is no request, and they are
/// skipped unread.
#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(default, deserialize_with = "version_member")]
    pub(crate) jsonrpc: Option<Version>,
    #[serde(borrow, default, deserialize_with = "method_member")]
    pub(crate) method: Option<MethodMember<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    /// The request object's text, set once decoded: read again only to
    /// say what is wrong with its `jsonrpc` member.
    #[serde(skip)]
    pub(crate) text: &'a str,
}

/// A single message's members with a response's too: `result` and `error`
/// only matter to a connection, which takes responses off the stream (see
/// [`Engine::process_incoming`](crate::dispatch::engine::Engine::process_incoming)).
#[derive(Deserialize)]
pub(crate) struct Message<'a> {
    #[serde(default, deserialize_with = "version_member")]
    pub(crate) jsonrpc: Option<Version>,
    #[serde(borrow, default, deserialize_with = "method_member")]
    pub(crate) method: Option<MethodMember<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) error: Option<&'a RawValue>,
}

impl<'a> Message<'a> {
    /// Response-shaped: no `method`, a `result` or an `error`. One without
    /// an `id` is still taken off the stream (and dropped), not answered.
    pub(crate) fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    /// The members the engine reads.
    pub(crate) fn into_request(self, text: &'a str) -> Envelope<'a> {
        Envelope { jsonrpc: self.jsonrpc, method: self.method, params: self.params, id: self.id, text }
    }
}

/// The `jsonrpc` member as written, read again only to say why it is wrong.
#[derive(Deserialize)]
pub(crate) struct VersionOnly<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) jsonrpc: Option<&'a RawValue>,
}

/// Used when the envelope as a whole does not decode, to still echo the id.
#[derive(Deserialize)]
pub(crate) struct IdOnly<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
}

/// A request's `method` member as serde reads a string, in the one pass
/// over the envelope: no raw value to take apart after, and nothing to
/// drop (a name with escapes is decoded again, from the message, only
/// then; see [`method_name`]).
#[derive(Clone, Copy)]
pub(crate) enum MethodMember<'a> {
    /// A string written without escapes: the text between its quotes.
    Plain(&'a str),
    /// A string with escapes.
    Escaped,
    /// Any other JSON value.
    NotString,
}

impl<'de> Deserialize<'de> for MethodMember<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MethodVisitor)
    }
}

/// The visitor methods of a member that is expected to be a string, for
/// every other JSON value: each is read past (its contents ignored) and
/// is `$other`.
macro_rules! not_a_string {
    ($other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($other)
        }
    };
}

struct MethodVisitor;

impl<'de> Visitor<'de> for MethodVisitor {
    type Value = MethodMember<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a method name")
    }
    fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Self::Value, E> {
        Ok(MethodMember::Plain(name))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(MethodMember::Escaped)
    }
    not_a_string!(MethodMember::NotString);
}

/// A present `method` member, `null` included (absent is `None`).
fn method_member<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<MethodMember<'de>>, D::Error> {
    MethodMember::deserialize(deserializer).map(Some)
}

/// The name a `method` member (of the request object `text`) holds, if it
/// is a string: a name with escapes is decoded again from `text`.
pub(crate) fn method_name<'a>(member: MethodMember<'a>, text: &'a str) -> Option<Cow<'a, str>> {
    match member {
        MethodMember::Plain(name) => Some(Cow::Borrowed(name)),
        MethodMember::Escaped => unescaped_method(text),
        MethodMember::NotString => None,
    }
}

/// The `method` of request object `text`, read again as a string.
#[cold]
fn unescaped_method(text: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct MethodOnly<'a> {
        #[serde(borrow)]
        method: Cow<'a, str>,
    }
    serde_json::from_str::<MethodOnly<'_>>(text).ok().map(|only| only.method)
}

/// Whether the `method` member of message `text` is `null`, read again:
/// [`MethodMember::NotString`] is any value but a string, and a reader
/// that takes `null` for an absent member (MCP's Streamable HTTP) tells
/// them apart only on that path.
#[cfg(all(feature = "mcp", feature = "http"))]
#[cold]
pub(crate) fn method_is_null(text: &str) -> bool {
    #[derive(Deserialize)]
    struct MethodRaw<'a> {
        #[serde(borrow, default, deserialize_with = "present")]
        method: Option<&'a RawValue>,
    }
    serde_json::from_str::<MethodRaw<'_>>(text).ok().and_then(|only| only.method).is_some_and(|raw| raw.get() == "null")
}

/// A request's `jsonrpc` member: whether it is `"2.0"` (escaped or not);
/// what it is otherwise is read again from the message (see
/// `Why::Version` in `dispatch::validate`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version(pub(crate) bool);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(VersionVisitor)
    }
}

struct VersionVisitor;

impl<'de> Visitor<'de> for VersionVisitor {
    type Value = Version;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"2.0\"")
    }
    fn visit_str<E>(self, version: &str) -> Result<Self::Value, E> {
        Ok(Version(version == "2.0"))
    }
    not_a_string!(Version(false));
}

/// A present `jsonrpc` member, `null` included (absent is `None`).
fn version_member<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Version>, D::Error> {
    Version::deserialize(deserializer).map(Some)
}

/// Keeps `"id": null` (present) apart from a missing id.
pub(crate) fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(deserializer).map(Some)
}

/// `message` without a leading UTF-8 byte-order mark. Skipped here rather
/// than in the framing so that every transport (and both framings, where a
/// `Content-Length` counts the mark as part of the body) agree.
fn without_bom(message: &[u8]) -> &[u8] {
    // A slice pattern, so that the usual message is told apart by its
    // first byte alone.
    match message {
        [0xEF, 0xBB, 0xBF, rest @ ..] => rest,
        _ => message,
    }
}

/// How many entries of a batch are kept on the stack (more go to the heap).
pub(crate) const INLINE_ENTRIES: usize = 16;

/// The entries of a batch: the first [`INLINE_ENTRIES`] inline, so that
/// a usual batch is read without an allocation.
pub(crate) struct BatchEntries<'a> {
    inline: [Option<&'a RawValue>; INLINE_ENTRIES],
    more: Vec<&'a RawValue>,
}

impl<'a> BatchEntries<'a> {
    fn push(&mut self, entry: &'a RawValue, len: usize) {
        match self.inline.get_mut(len) {
            Some(slot) => *slot = Some(entry),
            None => self.more.push(entry),
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a RawValue> + '_ {
        self.inline.iter().map_while(|entry| *entry).chain(self.more.iter().copied())
    }
}

/// Splits a batch into its entries, keeping at most `max` of them: the rest
/// are only checked and counted, so that a huge batch of tiny entries costs
/// no memory beyond the limit before it is refused. Returns the kept entries
/// and the batch's length.
pub(crate) fn read_batch(text: &str, max: usize) -> Result<(BatchEntries<'_>, usize), serde_json::Error> {
    struct Entries {
        max: usize,
    }
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = (BatchEntries<'de>, usize);
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a batch of requests")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut entries = BatchEntries { inline: [None; INLINE_ENTRIES], more: Vec::new() };
            let mut len = 0;
            while len < self.max {
                match seq.next_element::<&'de RawValue>()? {
                    Some(entry) => {
                        entries.push(entry, len);
                        len += 1;
                    }
                    None => return Ok((entries, len)),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {
                len += 1;
            }
            Ok((entries, len))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let batch = de.deserialize_seq(Entries { max })?;
    de.end()?;
    Ok(batch)
}

/// String, number or null, as the spec requires.
pub(crate) fn is_valid_id(raw: &RawValue) -> bool {
    // `raw` is valid JSON: its first byte says its type.
    raw.get().as_bytes().first().is_some_and(|&byte| ID_START[usize::from(byte)])
}

/// The bytes a string, a number or null starts with: one load, where the
/// four ranges cost a comparison each.
const ID_START: [bool; 256] = {
    let mut starts = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        starts[byte] = matches!(byte as u8, b'"' | b'-' | b'0'..=b'9' | b'n');
        byte += 1;
    }
    starts
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reader of messages sees a batch behind a byte-order mark and
    /// JSON whitespace (the connection once took such a batch of responses
    /// for a request, as it did not strip the mark).
    #[test]
    fn a_batch_is_told_past_a_byte_order_mark_and_whitespace() {
        let text = text(b"\xEF\xBB\xBF \r\n\t[{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}]").unwrap();
        assert!(is_batch(text));
        assert!(!is_batch(" {\"jsonrpc\":\"2.0\"}"));
        assert!(!is_batch("\u{c}[]"), "form feed is no JSON whitespace");
        assert_eq!(super::text(b"\xFF["), None);
    }

    #[test]
    fn batch_entries_past_the_inline_ones_are_kept_in_order() {
        for len in [0, 1, INLINE_ENTRIES - 1, INLINE_ENTRIES, INLINE_ENTRIES + 1, 3 * INLINE_ENTRIES] {
            let text = format!("[{}]", (0..len).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
            let (entries, count) = read_batch(&text, 1_000).unwrap();
            let read: Vec<String> = entries.iter().map(|entry| entry.get().to_owned()).collect();
            assert_eq!((read, count), ((0..len).map(|i| i.to_string()).collect(), len));
            let (entries, count) = read_batch(&text, 2).unwrap();
            assert_eq!((entries.iter().count(), count), (len.min(2), len));
        }
    }
}
