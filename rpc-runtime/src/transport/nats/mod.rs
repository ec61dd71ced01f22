#![doc = include_str!("../../../docs/transport-nats.md")]

/// The NATS client the transport runs on, re-exported so that the versions
/// agree: connect with `async_nats::connect`; hooks read
/// `async_nats::HeaderMap`. Its types cross this API because the caller
/// brings a connected client (with its own authentication, TLS and
/// reconnection settings), so the `nats` feature follows async-nats' minor
/// versions.
pub use async_nats;

// Two jobs, one file each: serving a subject as a member of a queue
// group (`server`), and calling one through the broker (`client`). What
// both sides need is here: the error codes, reading a subscription, and
// the error answers made up for each id of a message (for a refused
// request or an oversized answer on one side, for "no responders" or an
// unsendable request on the other).
mod client;
mod server;

pub use client::NatsConnect;
pub use server::NatsListener;

use std::future::Future;
use std::io;
use std::pin::Pin;

use async_nats::{Message, Subscriber};
use futures_core::Stream;
use serde_json::value::RawValue;

use crate::wire::ErrorObject;
use crate::wire::message::{self, IdOnly};
use crate::wire::response::write_error;

/// The code of the error a call over NATS fails with at once when nothing
/// is subscribed to its subject (the broker's "no responders"): no server
/// is running, or none serves that subject.
pub const NO_RESPONDERS: i64 = -32001;

/// The code of the error a server over NATS answers a message with when
/// its connection hook refused it (message `Unauthorized` or `Forbidden`;
/// the hook's reason stays in the server's log).
pub const REFUSED: i64 = -32002;

fn other(err: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::other(err)
}

/// The next message of a subscription (cancel-safe).
fn next(subscriber: &mut Subscriber) -> impl Future<Output = Option<Message>> + '_ {
    std::future::poll_fn(move |cx| Pin::new(&mut *subscriber).poll_next(cx))
}

/// The ids in a message: of a single request or response, or of each
/// entry of a batch (`true`). `None` when it is not JSON of that shape.
fn ids_of(message: &[u8]) -> Option<(bool, Vec<&RawValue>)> {
    let text = message::text(message)?;
    if message::is_batch(text) {
        let entries: Vec<&RawValue> = serde_json::from_str(text).ok()?;
        let ids = entries
            .into_iter()
            .filter_map(|entry| serde_json::from_str::<IdOnly<'_>>(entry.get()).ok().and_then(|entry| entry.id))
            .collect();
        Some((true, ids))
    } else {
        let single: IdOnly<'_> = serde_json::from_str(text).ok()?;
        Some((false, single.id.into_iter().collect()))
    }
}

/// `error` for each of `ids`, as a batch or as one response.
fn write_errors<'a>(out: &mut Vec<u8>, batch: bool, ids: impl Iterator<Item = &'a str>, error: &ErrorObject) {
    for id in ids {
        if batch {
            out.push(if out.is_empty() { b'[' } else { b',' });
        }
        write_error(out, id, error);
        if !batch {
            return;
        }
    }
    if batch && !out.is_empty() {
        out.push(b']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_requests_and_batches() {
        let (batch, ids) = ids_of(br#"{"jsonrpc":"2.0","method":"m","params":[1],"id":7}"#).unwrap();
        assert!(!batch);
        assert_eq!(ids.iter().map(|id| id.get()).collect::<Vec<_>>(), ["7"]);
        let (batch, ids) = ids_of(br#"[{"method":"a","id":"x"},{"method":"n"},{"id":null},5]"#).unwrap();
        assert!(batch);
        assert_eq!(ids.iter().map(|id| id.get()).collect::<Vec<_>>(), ["\"x\"", "null"]);
        assert!(ids_of(b"{not json").is_none());
        assert_eq!(ids_of(br#"{"method":"n"}"#).unwrap().1.len(), 0);
    }
}
