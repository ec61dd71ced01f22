//! Answers made up on the calling side, for transports that can lose a
//! request without the other side ever answering it (an HTTP status other
//! than 200, a WebSocket connection lost): one error response per request
//! id in the message, so that each call fails at once with a clear error
//! instead of waiting for its timeout.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::ErrorObject;
use crate::wire::message;
use crate::wire::response::write_error;

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// The ids (raw JSON) of the requests in `message`, a request or a batch;
/// notifications and responses have none.
pub(crate) fn request_ids(message: &[u8]) -> Vec<Box<str>> {
    let Some(text) = message::text(message) else { return Vec::new() };
    let id = |entry: Entry<'_>| entry.method.and(entry.id).map(|id| Box::from(id.get()));
    if message::is_batch(text) {
        serde_json::from_str::<Vec<Entry<'_>>>(text)
            .map_or_else(|_| Vec::new(), |batch| batch.into_iter().filter_map(id).collect())
    } else {
        serde_json::from_str::<Entry<'_>>(text).ok().and_then(id).into_iter().collect()
    }
}

/// The ids of the responses in `message`, a response or a batch of them.
#[cfg(feature = "ws")]
pub(crate) fn response_ids(message: &[u8]) -> Vec<Box<str>> {
    #[derive(Deserialize)]
    struct Response<'a> {
        #[serde(borrow, default)]
        method: Option<&'a RawValue>,
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
    }
    let id = |response: Response<'_>| match response {
        Response { method: None, id: Some(id) } => Some(Box::from(id.get())),
        _ => None,
    };
    let Some(text) = message::text(message) else { return Vec::new() };
    if message::is_batch(text) {
        serde_json::from_str::<Vec<Response<'_>>>(text)
            .map_or_else(|_| Vec::new(), |batch| batch.into_iter().filter_map(id).collect())
    } else {
        serde_json::from_str::<Response<'_>>(text).ok().and_then(id).into_iter().collect()
    }
}

/// One error response carrying `error` for request id `id`.
pub(crate) fn error_reply(id: &str, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::new();
    write_error(&mut out, id, error);
    out
}
