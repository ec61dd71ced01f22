//! Results written straight into the response: MCP's members put around
//! the method's JSON by hand, the method's JSON copied as it came. It was
//! written by `serde_json` a moment before, so it is never parsed again,
//! and nothing is encoded twice (a result that went through a
//! `Box<RawValue>` on its way was checked, copied and reallocated twice).

use super::ToolServer;
use super::revision::Revision;
use crate::wire::ErrorObject;

/// What the end of a call gets: the method's result as the JSON it wrote,
/// or its error.
pub(crate) type Written<'a> = Result<&'a str, ErrorObject>;

/// A JSON object written member by member into a buffer.
pub(crate) struct Object<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Object<'o> {
    /// Opens an object at the end of `out`.
    pub(crate) fn open(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, empty: true }
    }

    /// Starts member `key` (a name of MCP's, which needs no escaping) and
    /// gives the buffer its value is written into.
    pub(crate) fn member(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// Member `key` with `value` as a JSON string.
    pub(crate) fn string(&mut self, key: &str, value: &str) {
        string(self.member(key), value);
    }

    /// Member `key` with `json`, JSON that `serde_json` wrote, as it is.
    pub(crate) fn json(&mut self, key: &str, json: &str) {
        self.member(key).extend_from_slice(json.as_bytes());
    }

    /// The members of another object (`json` without its braces), as they
    /// are.
    pub(crate) fn members(&mut self, json: &str) {
        if json.is_empty() {
            return;
        }
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(json.as_bytes());
    }

    /// The members every result of the modern revision carries.
    pub(crate) fn stamp(&mut self, server: &ToolServer, revision: Revision) {
        if revision.is_modern() {
            self.json("resultType", "\"complete\"");
            self.json("_meta", server.server_info_meta.get());
        }
    }

    /// `ttlMs` and `cacheScope`: the modern revision's cache hints (see
    /// [`NO_CACHE`]).
    pub(crate) fn uncached(&mut self, revision: Revision) {
        if revision.is_modern() {
            for (key, json) in NO_CACHE {
                self.json(key, json);
            }
        }
    }

    /// Closes the object.
    pub(crate) fn close(self) {
        self.out.push(b'}');
    }
}

/// The cache hints 2026-07-28 wants on lists, reads and discovery,
/// member and JSON: nothing here may be cached beyond this client's
/// request (the lists change with [`super::Changes`], reads are the
/// application's).
pub(crate) const NO_CACHE: [(&str, &str); 2] = [("ttlMs", "0"), ("cacheScope", "\"private\"")];

/// A page of a list result: `items` (JSON made once and kept) under
/// `key`, then the next page's cursor, the cache hints and the stamp.
pub(crate) fn list_page(
    out: &mut Vec<u8>,
    server: &ToolServer,
    revision: Revision,
    key: &str,
    items: &[Box<serde_json::value::RawValue>],
    next_cursor: Option<&str>,
) {
    let mut object = Object::open(out);
    let list = object.member(key);
    list.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            list.push(b',');
        }
        list.extend_from_slice(item.get().as_bytes());
    }
    list.push(b']');
    if let Some(next_cursor) = next_cursor {
        object.string("nextCursor", next_cursor);
    }
    object.uncached(revision);
    object.stamp(server, revision);
    object.close();
}

/// `text` as a JSON string.
pub(crate) fn string(out: &mut Vec<u8>, text: &str) {
    if let Err(err) = serde_json::to_writer(out, text) {
        unreachable!("a string is written into memory: {err}");
    }
}

/// `value` encoded into `out`: the error a value that fails to encode
/// gets (a map with keys that are not strings, say).
pub(crate) fn value(out: &mut Vec<u8>, value: &impl serde::Serialize) -> Result<(), ErrorObject> {
    crate::dispatch::router::encode_into(out, value)
}

/// A text message from the user, `text` written by `write`.
pub(crate) fn user_text(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(br#"{"role":"user","content":{"type":"text","text":"#);
    write(out);
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::{Object, string};

    #[test]
    fn objects_are_written_with_commas_between_members_and_strings_escaped() {
        let mut out = Vec::new();
        let mut object = Object::open(&mut out);
        object.string("a", "say \"hi\"\n");
        object.members("");
        object.members(r#""b":[1,2],"c":null"#);
        object.json("d", "{}");
        let inner = object.member("e");
        let mut nested = Object::open(inner);
        nested.string("f", "g");
        nested.close();
        object.close();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"{"a":"say \"hi\"\n","b":[1,2],"c":null,"d":{},"e":{"f":"g"}}"#);
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["e"]["f"], "g");

        let mut out = Vec::new();
        let mut object = Object::open(&mut out);
        object.members(r#""only":1"#);
        object.close();
        assert_eq!(out, br#"{"only":1}"#);

        let mut out = Vec::new();
        string(&mut out, "\u{1}é");
        assert_eq!(out, "\"\\u0001é\"".as_bytes());
    }
}
