//! Writing responses: every answer the runtime sends, a result or an
//! error, is written by these functions, straight into the buffer that
//! goes to the transport.

use serde_json::value::RawValue;

use crate::wire::error::ErrorObject;

/// The id an answer carries when the request's could not be read.
pub(crate) const NULL_ID: &str = "null";

/// An answer of -32601 `Method not found`, up to its id.
pub(crate) const METHOD_NOT_FOUND_HEAD: &[u8] =
    br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"#;

/// What a success response starts with, up to its result.
pub(crate) const RESULT_HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"result\":";

/// A whole response to request `id`: its result, or its error.
pub(crate) fn write_response(out: &mut Vec<u8>, id: &str, result: &Result<Box<RawValue>, ErrorObject>) {
    match result {
        Ok(value) => {
            out.extend_from_slice(RESULT_HEAD);
            out.extend_from_slice(value.get().as_bytes());
            write_response_tail(out, id);
        }
        Err(error) => write_error(out, id, error),
    }
}

/// Closes a success response whose result is already written.
pub(crate) fn write_response_tail(out: &mut Vec<u8>, id: &str) {
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// A whole error response to request `id` (raw JSON; [`NULL_ID`] when it
/// could not be read).
pub(crate) fn write_error(out: &mut Vec<u8>, id: &str, error: &ErrorObject) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"error\":");
    error.write_json(out);
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// Appends one batch response to `out`, which holds `[a,b,...` so far (or
/// nothing); a notification's `None` adds nothing. The caller closes with `]`
/// when anything was written (an all-notification batch sends nothing).
pub(crate) fn push_piece(out: &mut Vec<u8>, piece: Option<&[u8]>) {
    if let Some(piece) = piece {
        out.push(if out.is_empty() { b'[' } else { b',' });
        out.extend_from_slice(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_not_found_is_written_as_write_error_writes_it() {
        let mut written = Vec::new();
        write_error(&mut written, "7", &ErrorObject::method_not_found());
        assert_eq!(written, [METHOD_NOT_FOUND_HEAD, b"7}"].concat());
    }
}
