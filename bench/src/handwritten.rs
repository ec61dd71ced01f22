//! The practical floor: a hand-written serde_json handler for the service.
//! It parses the envelope with borrowed `RawValue` params, matches the
//! method name and writes the response into a reused buffer. It checks what
//! a correct server must check (version, id type, params shape) but knows
//! the methods statically.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::{Record, VERSION};

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
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

/// Handles one message (single or batch), appending the response to `out`.
pub fn handle(message: &[u8], out: &mut Vec<u8>) {
    let first = message.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let entries: Vec<&RawValue> = match serde_json::from_slice(message) {
            Ok(entries) => entries,
            Err(_) => return error(out, "null", -32700, "Parse error"),
        };
        if entries.is_empty() {
            return error(out, "null", -32600, "Invalid Request");
        }
        let start = out.len();
        for entry in entries {
            out.push(if out.len() == start { b'[' } else { b',' });
            let before = out.len();
            handle_single(entry.get().as_bytes(), out);
            if out.len() == before {
                out.pop(); // a notification: no separator either
            }
        }
        if out.len() > start {
            out.push(b']');
        }
    } else {
        handle_single(message, out);
    }
}

fn handle_single(message: &[u8], out: &mut Vec<u8>) {
    let request: Request<'_> = match serde_json::from_slice(message) {
        Ok(request) => request,
        Err(err) if err.is_data() => return error(out, "null", -32600, "Invalid Request"),
        Err(_) => return error(out, "null", -32700, "Parse error"),
    };
    let id = match request.id {
        Some(id) if matches!(id.get().as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n') => Some(id.get()),
        Some(_) => return error(out, "null", -32600, "Invalid Request"),
        None => None,
    };
    let reply_id = id.unwrap_or("null");
    if request.jsonrpc.as_deref() != Some("2.0") {
        return error(out, reply_id, -32600, "Invalid Request");
    }
    let Some(method) = request.method else {
        return error(out, reply_id, -32600, "Invalid Request");
    };
    let params = request.params.map(RawValue::get);
    let by_name = params.is_some_and(|p| p.starts_with('{'));
    let start = out.len();
    let outcome = match &*method {
        "add" => {
            let parsed = match params {
                Some(p) if by_name => serde_json::from_str::<AddNamed>(p).map(|n| (n.a, n.b)),
                Some(p) => serde_json::from_str::<(i64, i64)>(p),
                None => Err(serde::de::Error::custom("missing params")),
            };
            parsed.map(|(a, b)| write_result(out, &a.wrapping_add(b), reply_id))
        }
        "version" => match params {
            Some("[]" | "{}") | None => {
                write_result(out, &VERSION, reply_id);
                Ok(())
            }
            Some(_) => Err(serde::de::Error::custom("version takes no params")),
        },
        "echo" => {
            let parsed = match params {
                Some(p) if by_name => serde_json::from_str::<EchoNamed>(p).map(|n| n.record),
                Some(p) => serde_json::from_str::<(Record,)>(p).map(|(r,)| r),
                None => Err(serde::de::Error::custom("missing params")),
            };
            parsed.map(|record| write_result(out, &record, reply_id))
        }
        _ => {
            if id.is_some() {
                error(out, reply_id, -32601, "Method not found");
            }
            return;
        }
    };
    match outcome {
        Ok(()) if id.is_none() => out.truncate(start),
        Ok(()) => {}
        Err(err) => {
            if id.is_some() {
                let message = format!("Invalid params: {err}");
                error(out, reply_id, -32602, &message);
            }
        }
    }
}

fn write_result<T: serde::Serialize>(out: &mut Vec<u8>, result: &T, id: &str) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":");
    serde_json::to_writer(&mut *out, result).expect("benchmark results serialize");
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

fn error(out: &mut Vec<u8>, id: &str, code: i64, message: &str) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    serde_json::to_writer(&mut *out, message).expect("strings serialize");
    out.extend_from_slice(b"},\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}
