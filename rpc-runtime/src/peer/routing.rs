//! What comes in for the connection itself rather than for the engine:
//! responses to its calls, cancellations of requests it runs, and the
//! items of subscriptions it made. A single message is sorted out by
//! [`Engine::process_incoming`] in the same decode that dispatches it;
//! what that leaves (batches, mostly) is routed here, entry by entry.
//! Whether a notification is the connection's own is decided in one place
//! for both, [`Takes::claimed`].
//!
//! [`Engine::process_incoming`]: crate::dispatch::engine::Engine::process_incoming

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;

use super::client::ClientError;
use super::connection::Connection;
use super::preview;
use crate::dispatch::engine::Takes;
use crate::wire::ErrorObject;
use crate::wire::message::{self, Message};

/// What [`Connection::route_batch`] left of a batch for the engine.
enum BatchRest {
    /// No entry was for the connection: the engine gets the batch as it
    /// came.
    Untouched,
    /// Every entry was for the connection: nothing is left to answer.
    AllTaken,
    /// Some entries were taken; these are the others, as a batch of their
    /// own (answered as an array, even of one).
    Rest(Vec<u8>),
}

impl Connection {
    /// Takes responses (to our calls) and claimed notifications off the
    /// incoming stream; returns what is left for the engine, if anything.
    /// The general way, for what [`Engine::process_incoming`] leaves
    /// (batches, and messages that do not decode as one object).
    ///
    /// [`Engine::process_incoming`]: crate::dispatch::engine::Engine::process_incoming
    pub(super) fn route<'m>(&self, message: &'m [u8]) -> Option<Cow<'m, [u8]>> {
        let cancel_method = self.shared.options.cancellation.method();
        let (maybe_response, maybe_cancel) = probe_keys(message, cancel_method);
        // Subscription items come one per message; in a batch they are
        // looked for only on a connection that made subscriptions.
        let maybe_claimed = maybe_cancel || self.shared.subscribed.watching();
        let engine = Some(Cow::Borrowed(message));
        if !maybe_response && !maybe_claimed {
            return engine;
        }
        let Some(text) = message::text(message) else { return engine };
        // Asked now, not once per burst: this path is rare, and a claim
        // made since the burst began is then seen too.
        let claim = |method: &str| self.claims(method);
        let takes = self.takes(&claim);
        if message::is_batch(text) {
            return match self.route_batch(text, &takes) {
                BatchRest::Untouched => engine,
                BatchRest::AllTaken => None,
                BatchRest::Rest(rest) => Some(Cow::Owned(rest)),
            };
        }
        let Ok(probe) = serde_json::from_str::<Message<'_>>(text) else { return engine };
        if !self.take(&probe, text, &takes) {
            return engine;
        }
        None
    }

    /// Takes `probe` (decoded from `text`) off the stream if it is for the
    /// connection itself (a response, or a notification `takes` claims);
    /// `false` if it is for the engine.
    fn take(&self, probe: &Message<'_>, text: &str, takes: &Takes<'_>) -> bool {
        if probe.is_response() {
            self.deliver(probe.id, probe.result, probe.error);
            return true;
        }
        match takes.claimed(self.engine.router(), probe.method, probe.id, text) {
            Some(method) => {
                self.claimed(&method, probe.params);
                true
            }
            None => false,
        }
    }

    /// Delivers the responses and claimed notifications of a batch
    /// (answers to a batch of ours, or mixed with requests by a peer that
    /// both answers and asks), and says what is left for the engine.
    fn route_batch(&self, text: &str, takes: &Takes<'_>) -> BatchRest {
        let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(text) else { return BatchRest::Untouched };
        let mut rest = Vec::new();
        let mut taken = false;
        for entry in entries {
            let text = entry.get();
            if serde_json::from_str::<Message<'_>>(text).is_ok_and(|probe| self.take(&probe, text, takes)) {
                taken = true;
            } else {
                rest.push(if rest.is_empty() { b'[' } else { b',' });
                rest.extend_from_slice(text.as_bytes());
            }
        }
        if !taken {
            return BatchRest::Untouched;
        }
        if rest.is_empty() {
            return BatchRest::AllTaken;
        }
        rest.push(b']');
        BatchRest::Rest(rest)
    }

    /// Hands a response (its `id`, `result` and `error` members) to the
    /// call waiting for it.
    pub(super) fn deliver(&self, id: Option<&RawValue>, result: Option<&RawValue>, error: Option<&RawValue>) {
        let Some(id) = id else {
            // Answering it would start an exchange of errors about errors.
            tracing::debug!("dropped a response without an `id`");
            return;
        };
        let reply = match (result, error) {
            (Some(result), None) => Ok(result.to_owned()),
            (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                Ok(error) => Err(ClientError::Server(error)),
                Err(err) => Err(ClientError::Decode(err)),
            },
            _ => {
                // Neither may be trusted, but the call must not hang.
                tracing::debug!(id = preview(id.get()), "a response has both `result` and `error`");
                Err(ClientError::Decode(serde::de::Error::custom(
                    "invalid response: it has both `result` and `error` (JSON-RPC 2.0 allows exactly one)",
                )))
            }
        };
        if id.get() == "null" {
            // The other side could not read one of our messages.
            tracing::debug!(response = ?reply.as_ref().err(), "the other side answered a message it could not read");
            return;
        }
        self.shared.deliver(id, reply);
    }

    /// A notification the connection took for itself (see
    /// [`Takes::claimed`]).
    pub(super) fn claimed(&self, method: &str, params: Option<&RawValue>) {
        if Some(method) == self.shared.options.cancellation.method() {
            self.cancel_incoming(params);
        } else {
            self.shared.subscribed.deliver(&self.shared, method, params);
        }
    }

    fn cancel_incoming(&self, params: Option<&RawValue>) {
        let field = self.shared.options.cancellation.id_member();
        let id = params
            .and_then(|params| serde_json::from_str::<HashMap<&str, &RawValue>>(params.get()).ok())
            .and_then(|params| params.get(field).copied());
        let Some(id) = id else {
            tracing::debug!("cancellation notification without a usable `{field}`");
            return;
        };
        if self.shared.link.cancel(id.get()) {
            tracing::debug!(id = preview(id.get()), "request cancelled by the caller");
        } else {
            tracing::debug!(id = preview(id.get()), "cancellation for a request that is not running");
        }
    }
}

/// Whether `message` may be a response (it has a `"result"` or `"error"`
/// string) and whether it may be a cancellation (a string starts with the
/// cancel method's name), in one pass over its quotes. Run on the
/// messages [`Engine::process_incoming`] leaves to [`Connection::route`]
/// (batches, mostly), before any of them is parsed.
///
/// [`Engine::process_incoming`]: crate::dispatch::engine::Engine::process_incoming
fn probe_keys(message: &[u8], cancel_method: Option<&str>) -> (bool, bool) {
    let cancel_method = cancel_method.map(str::as_bytes).filter(|method| !method.is_empty());
    let cancel_first = cancel_method.and_then(|method| method.first().copied());
    let (mut response, mut cancel) = (false, false);
    // A plain loop: messages are short and quotes frequent, so memchr's
    // per-call setup would cost more than it saves. The byte after a quote
    // decides which comparison, if any, is worth making.
    for (quote, _) in message.iter().enumerate().filter(|&(_, &byte)| byte == b'"') {
        let rest = &message[quote + 1..];
        match rest.first().copied() {
            Some(b'r') if rest.starts_with(b"result\"") => response = true,
            Some(b'e') if rest.starts_with(b"error\"") => response = true,
            first if first.is_some() && first == cancel_first => {
                cancel |= cancel_method.is_some_and(|method| rest.starts_with(method));
            }
            _ => {}
        }
        if response && (cancel || cancel_method.is_none()) {
            break;
        }
    }
    (response, cancel)
}

#[cfg(test)]
mod tests {
    use super::probe_keys;
    use crate::wire::message::Message;

    #[test]
    fn responses_and_cancellations_are_spotted_by_their_strings() {
        let cancel = Some("$/cancelRequest");
        let cases: [(&str, (bool, bool)); 6] = [
            (r#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}"#, (false, false)),
            (r#"{"jsonrpc":"2.0","result":3,"id":1}"#, (true, false)),
            (r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m"},"id":1}"#, (true, false)),
            (r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4}}"#, (false, true)),
            (r#"{"jsonrpc":"2.0","method":"say","params":["a \"result\" in text"],"id":2}"#, (false, false)),
            (r#"[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","method":"$/cancelRequest"}]"#, (true, true)),
        ];
        for (message, expected) in cases {
            assert_eq!(probe_keys(message.as_bytes(), cancel), expected, "{message}");
        }
        assert_eq!(probe_keys(br#"{"method":"$/cancelRequest"}"#, None), (false, false));
    }

    #[test]
    fn responses_are_told_from_requests() {
        let probe = |text: &str| serde_json::from_str::<Message<'_>>(text).unwrap().is_response();
        assert!(probe(r#"{"jsonrpc":"2.0","result":null,"id":1}"#));
        assert!(probe(r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":1}"#));
        assert!(!probe(r#"{"jsonrpc":"2.0","method":"m","params":{"result":1},"id":1}"#));
        // Without an id it cannot be matched, but it is still a response.
        assert!(probe(r#"{"jsonrpc":"2.0","result":1}"#));
        assert!(!probe(r#"{"jsonrpc":"2.0","method":"m","result":1}"#));
    }
}
