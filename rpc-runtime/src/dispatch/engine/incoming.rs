//! A connection's look at what it reads: [`Engine::process_incoming`]
//! decodes a single message once and either dispatches it or hands it
//! back as a response to one of the connection's calls or a notification
//! the connection claims ([`Takes::claimed`], the one place that decides).

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::Engine;
use crate::dispatch::context::Context;
use crate::dispatch::pending::PendingResponse;
use crate::dispatch::router::Router;
use crate::wire::message::{self, Envelope, Message, MethodMember, method_name};

/// What a connection takes off its incoming stream for itself, for
/// [`Engine::process_incoming`].
#[derive(Clone, Copy)]
pub(crate) struct Takes<'c> {
    /// Which notifications (by method name) it claims; `None` when none.
    pub(crate) claims: Option<&'c dyn Fn(&str) -> bool>,
    /// Whether responses may come: it made calls.
    pub(crate) responses: bool,
}

impl Takes<'_> {
    /// The method of a message the connection takes for itself as a
    /// claimed notification: one without an `id`, of a method it claims
    /// (its cancellation method, or the method of a subscription's items)
    /// that `router` does not serve. `None` when the message is for the
    /// engine. The one place this is decided: the engine asks it of a
    /// single message, the connection of what it routes itself (each entry
    /// of a batch).
    ///
    /// `method` and `id` are the message's members, `text` the message
    /// they were decoded from (a name with escapes is read again from it).
    #[inline]
    pub(crate) fn claimed<'m>(
        &self,
        router: &Router,
        method: Option<MethodMember<'m>>,
        id: Option<&RawValue>,
        text: &'m str,
    ) -> Option<Cow<'m, str>> {
        // Cheapest first: most messages are requests (with an id), and
        // most connections claim nothing.
        let claims = self.claims.filter(|_| id.is_none())?;
        let method = method_name(method?, text)?;
        (claims(&method) && router.spec(&method).is_none()).then_some(method)
    }
}

/// What [`Engine::process_incoming`] made of a message.
///
/// With an explicit tag: the connection's check for the usual outcome
/// (`Handled(None)`) is then two compares, not a decode of a niche in
/// `Claimed`'s string and a jump table.
#[repr(u8)]
pub(crate) enum Incoming<'m> {
    /// A request or notification, handled as [`Engine::process`] does.
    Handled(Option<PendingResponse>),
    /// A response (no `method`; a `result` or an `error`), for the
    /// outgoing call with its id.
    Response { id: Option<&'m RawValue>, result: Option<&'m RawValue>, error: Option<&'m RawValue> },
    /// A notification (no `id`) of a method the connection claims (its
    /// cancellation method, or the method of a subscription's items) and
    /// the router does not serve, with its params.
    Claimed { method: Cow<'m, str>, params: Option<&'m RawValue> },
    /// A batch, or a message that does not decode as an object: nothing was
    /// done, the caller routes it the general way.
    Other,
}

impl Engine {
    /// [`Engine::process`] for a connection that also receives responses
    /// and notifications meant for itself (`takes`): a single message is
    /// decoded once, and either dispatched or handed back as a response or
    /// a claimed notification, so that the common case (a request) costs
    /// no separate look at the message.
    ///
    /// A connection that expects no responses (it made no call) has the
    /// message decoded as a request (four members, not six); one without a
    /// `method` is then decoded again with a response's members, so a
    /// stray response is still taken off the stream, never answered.
    pub(crate) fn process_incoming<'m>(
        &self,
        message: &'m [u8],
        cx: &Context,
        out: &mut Vec<u8>,
        takes: &Takes<'_>,
    ) -> Incoming<'m> {
        let Some(text) = message::text(message) else { return Incoming::Other };
        if message::is_batch(text) {
            return Incoming::Other;
        }
        let request = if takes.responses {
            let Ok(message) = serde_json::from_str::<Message<'m>>(text) else { return Incoming::Other };
            if message.is_response() {
                return Incoming::Response { id: message.id, result: message.result, error: message.error };
            }
            message.into_request(text)
        } else {
            let Ok(mut request) = serde_json::from_str::<Envelope<'m>>(text) else { return Incoming::Other };
            if request.method.is_none() {
                return self.process_incoming(message, cx, out, &Takes { responses: true, ..*takes });
            }
            request.text = text;
            request
        };
        if let Some(method) = takes.claimed(&self.router, request.method, request.id, text) {
            return Incoming::Claimed { method, params: request.params };
        }
        Incoming::Handled(self.dispatch_single(&request, cx, out))
    }
}
