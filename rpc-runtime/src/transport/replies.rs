//! Answers made up on the calling side, for transports that can lose a
//! request without the other side ever answering it (an HTTP status other
//! than 200, a WebSocket or TCP connection lost): one error response per request
//! id in the message, so that each call fails at once with a clear error
//! instead of waiting for its timeout.
//!
//! Messages are read through the shared model ([`Message`]): the text
//! without its byte-order mark, batch or not, and the members decoded as
//! every other reader decodes them.

use crate::wire::ErrorObject;
use crate::wire::message::{self, Message};
use crate::wire::response::write_error;

/// The ids (raw JSON) of the requests in `message`, a request or a batch;
/// notifications and responses have none.
pub(crate) fn request_ids(message: &[u8]) -> Vec<Box<str>> {
    // A request with a null id is left out: the connection drops every
    // response with a null id (it answers a message the other side could
    // not read), so an answer made up for it would reach no call.
    ids(message, |entry| entry.method.is_some() && entry.id.is_some_and(|id| id.get() != "null"))
}

/// The ids of the responses in `message`, a response or a batch of them:
/// of every entry without a `method`, with or without a `result` or an
/// `error` (wider than [`Message::is_response`]): the other side meant it
/// as the answer to that id, so no error is made up for the id later.
pub(crate) fn response_ids(message: &[u8]) -> Vec<Box<str>> {
    ids(message, |entry| entry.method.is_none())
}

/// The ids of the entries of `message` (one object, or a batch) that are
/// `wanted`; none when it is not JSON-RPC.
fn ids(message: &[u8], wanted: fn(&Message<'_>) -> bool) -> Vec<Box<str>> {
    let Some(text) = message::text(message) else { return Vec::new() };
    let id = |entry: Message<'_>| entry.id.filter(|_| wanted(&entry)).map(|id| Box::from(id.get()));
    if message::is_batch(text) {
        serde_json::from_str::<Vec<Message<'_>>>(text)
            .map_or_else(|_| Vec::new(), |batch| batch.into_iter().filter_map(id).collect())
    } else {
        serde_json::from_str::<Message<'_>>(text).ok().and_then(id).into_iter().collect()
    }
}

/// One error response carrying `error` for request id `id`.
pub(crate) fn error_reply(id: &str, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::new();
    write_error(&mut out, id, error);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_of_requests_are_read_past_a_byte_order_mark_in_a_batch() {
        let batch = "\u{feff} [{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1},\
            {\"jsonrpc\":\"2.0\",\"method\":\"n\"},\
            {\"jsonrpc\":\"2.0\",\"method\":\"z\",\"id\":null},\
            {\"jsonrpc\":\"2.0\",\"result\":2,\"id\":2},\
            {\"jsonrpc\":\"2.0\",\"method\":\"b\",\"id\":\"x\"}]";
        assert_eq!(request_ids(batch.as_bytes()), [Box::from("1"), Box::from("\"x\"")]);
        assert_eq!(request_ids(br#"{"jsonrpc":"2.0","method":"a","params":[],"id":7}"#), [Box::from("7")]);
        assert!(request_ids(b"not json").is_empty());
    }

    #[test]
    fn the_ids_of_responses_are_those_of_entries_without_a_method() {
        let batch = br#"[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":2},
            {"jsonrpc":"2.0","method":"m","id":3},{"jsonrpc":"2.0","id":4}]"#;
        assert_eq!(response_ids(batch), [Box::from("1"), Box::from("2"), Box::from("4")]);
        assert!(response_ids(br#"{"jsonrpc":"2.0","result":1}"#).is_empty());
    }
}
