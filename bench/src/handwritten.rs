//! The practical floor: a lean hand-written serde_json handler for the
//! service. The envelope is parsed once into a struct that borrows from the
//! message (`Cow<str>` method, `&RawValue` params and id, an absent `id`
//! told apart from `null`), the method is chosen by a `match` on its name,
//! params are decoded straight from their raw text into a tuple (`[`) or a
//! struct (`{`), and the answer is written into the caller's buffer with
//! the id's bytes copied through. A batch is answered element by element as
//! it is parsed. It checks what a correct server must check (version, id
//! type, params shape) but knows its methods statically.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer as _};
use serde_json::value::RawValue;

use crate::{Record, VERSION};

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    /// `None` when the member is absent (a notification); `Some("null")`
    /// for `"id":null`, which is a request and gets an answer.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// Deserializes a string member, borrowed from the message unless it has
/// escapes. (`Option<Cow<str>>` alone would always allocate: serde borrows
/// only a bare `Cow<str>` field.)
fn borrowed_str<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct CowStr;
    impl<'de> Visitor<'de> for CowStr {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(text))
        }
        fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(text.to_owned()))
        }
    }
    deserializer.deserialize_str(CowStr).map(Some)
}

/// Deserializes a member that is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
struct AddNamed {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
struct EchoNamed {
    record: Record,
}

const PARSE_ERROR: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#;
const INVALID_REQUEST: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":"#;
const METHOD_NOT_FOUND: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"#;

/// Handles one message (a request, a notification or a batch), appending
/// the answer, if any, to `out`. Never inlined: `stream_instructions.sh`
/// counts the requests a server answered as the calls to this function.
#[inline(never)]
pub fn handle(message: &[u8], out: &mut Vec<u8>) {
    let Ok(text) = std::str::from_utf8(message) else {
        return out.extend_from_slice(PARSE_ERROR);
    };
    if text.trim_ascii_start().starts_with('[') {
        handle_batch(text, out);
    } else {
        handle_request(text, out);
    }
}

/// Answers the entries of a batch one by one as the array is parsed; the
/// entries' answers go straight into `out`, joined into one array.
fn handle_batch(text: &str, out: &mut Vec<u8>) {
    struct Entries<'o> {
        out: &'o mut Vec<u8>,
        start: usize,
    }
    impl<'de> Visitor<'de> for Entries<'_> {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a batch")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut entries: A) -> Result<usize, A::Error> {
            let mut count = 0;
            while let Some(entry) = entries.next_element::<&'de RawValue>()? {
                count += 1;
                let before = self.out.len();
                self.out.push(if before == self.start { b'[' } else { b',' });
                handle_request(entry.get(), self.out);
                if self.out.len() == before + 1 {
                    self.out.pop(); // a notification: no separator either
                }
            }
            Ok(count)
        }
    }
    let start = out.len();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed =
        deserializer.deserialize_seq(Entries { out, start }).and_then(|count| deserializer.end().map(|()| count));
    match parsed {
        Ok(0) => {
            out.extend_from_slice(INVALID_REQUEST);
            out.extend_from_slice(b"null}");
        }
        Ok(_) if out.len() > start => out.push(b']'),
        Ok(_) => {}
        Err(_) => {
            out.truncate(start);
            out.extend_from_slice(PARSE_ERROR);
        }
    }
}

/// Answers one request or notification.
fn handle_request(text: &str, out: &mut Vec<u8>) {
    let request: Request<'_> = match serde_json::from_str(text) {
        Ok(request) => request,
        Err(err) if err.is_data() => return invalid_request(out, "null"),
        Err(_) => return out.extend_from_slice(PARSE_ERROR),
    };
    let id = match request.id {
        Some(id) if matches!(id.get().as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n') => Some(id.get()),
        Some(_) => return invalid_request(out, "null"),
        None => None,
    };
    let reply_id = id.unwrap_or("null");
    if request.jsonrpc.as_deref() != Some("2.0") {
        return invalid_request(out, reply_id);
    }
    let Some(method) = request.method else {
        return invalid_request(out, reply_id);
    };
    let params = request.params.map(RawValue::get);
    let start = out.len();
    let outcome = match &*method {
        "add" => decode::<(i64, i64), AddNamed>(params, |n| (n.a, n.b))
            .map(|(a, b)| write_result(out, &a.wrapping_add(b), reply_id)),
        "version" => match params {
            Some("[]" | "{}") | None => {
                write_result(out, &VERSION, reply_id);
                Ok(())
            }
            Some(_) => Err(serde::de::Error::custom("version takes no params")),
        },
        "echo" => decode::<(Record,), EchoNamed>(params, |n| (n.record,))
            .map(|(record,)| write_result(out, &record, reply_id)),
        _ => {
            if id.is_some() {
                out.extend_from_slice(METHOD_NOT_FOUND);
                out.extend_from_slice(reply_id.as_bytes());
                out.push(b'}');
            }
            return;
        }
    };
    match outcome {
        Ok(()) if id.is_none() => out.truncate(start),
        Ok(()) => {}
        Err(err) if id.is_some() => invalid_params(out, &err, reply_id),
        Err(_) => {}
    }
}

/// Decodes params given by position into `P`, or by name into `N` and then
/// into `P`.
fn decode<'a, P: Deserialize<'a>, N: Deserialize<'a>>(
    params: Option<&'a str>,
    by_name: impl FnOnce(N) -> P,
) -> serde_json::Result<P> {
    match params {
        Some(p) if p.starts_with('{') => serde_json::from_str::<N>(p).map(by_name),
        Some(p) => serde_json::from_str::<P>(p),
        None => Err(serde::de::Error::custom("missing params")),
    }
}

fn write_result<T: Serialize>(out: &mut Vec<u8>, result: &T, id: &str) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","result":"#);
    serde_json::to_writer(&mut *out, result).expect("benchmark results serialize");
    out.extend_from_slice(br#","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

fn invalid_request(out: &mut Vec<u8>, id: &str) {
    out.extend_from_slice(INVALID_REQUEST);
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// -32602 with serde_json's reason, escaped as it is formatted (no
/// intermediate `String`).
#[cold]
fn invalid_params(out: &mut Vec<u8>, err: &serde_json::Error, id: &str) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"#);
    serde_json::Serializer::new(&mut *out)
        .collect_str(&format_args!("Invalid params: {err}"))
        .expect("strings serialize");
    out.extend_from_slice(br#"},"id":"#);
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}
