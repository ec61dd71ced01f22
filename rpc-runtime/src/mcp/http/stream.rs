//! What a session of the handshake revisions exchanges besides requests
//! and their answers: `DELETE`, which ends it; the `GET` event stream, where the server sends what
//! relates to no request of the client's (list changes, updates of
//! subscribed resources, logs of calls whose answer was not a stream; one
//! per session, a new one replaces the old, it ends with the session;
//! 2026-07-28 has no such stream: 405), and the responses the client
//! `POST`s to the server's requests for input.

use http::header;
use http::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::request::{Headers, SESSION_ID};
use super::sessions::owner_of;
use super::{EVENT_BACKLOG, McpBody, McpHttpService, Unusable, event_stream, json_error, not_allowed, plain};
use crate::dispatch::context::Context;
use crate::mcp::revision::Revision;
use crate::mcp::session::Session;
use crate::transport::http::{HttpAddrs, Inner, own_host};
use crate::wire::{ErrorObject, INVALID_REQUEST};

impl McpHttpService {
    /// `GET`: opens the stream of the session its `Mcp-Session-Id` names.
    pub(super) async fn get<B>(
        &self,
        inner: &Inner,
        request: Request<B>,
        addrs: Option<HttpAddrs>,
    ) -> Response<McpBody> {
        if let Some(refusal) = refused_origin(inner, &request) {
            return refusal;
        }
        let id = session_id(&request);
        let headers = Headers::read(request.headers());
        let modern =
            matches!(&headers.version, Some(Ok(version)) if Revision::parse(version).is_some_and(Revision::is_modern));
        let Some(id) = id else {
            // No session: nothing to stream (as in 2026-07-28, which has
            // no `GET` at all).
            return not_allowed(&Method::GET);
        };
        if modern {
            return not_allowed(&Method::GET);
        }
        if !headers.accepts_events {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: a session's GET stream is text/event-stream; list it in Accept",
            );
        }
        let cx = match admitted(inner, request, addrs).await {
            Ok(cx) => cx,
            Err(refusal) => return refusal,
        };
        // Not held: an open stream does not keep an idle session alive.
        let in_use = match self.session(&id, owner_of(&cx)).await {
            Ok(in_use) => in_use,
            Err(unusable) => return unusable.response(None),
        };
        let Some(session) = in_use.0.state() else {
            return Unusable::NotFound.response(None);
        };
        drop(in_use);
        let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
        session.attach_stream(sender);
        event_stream(receiver, None)
    }

    /// `DELETE`: ends the session its `Mcp-Session-Id` names.
    pub(super) async fn delete<B>(
        &self,
        inner: &Inner,
        request: Request<B>,
        addrs: Option<HttpAddrs>,
    ) -> Response<McpBody> {
        if let Some(refusal) = refused_origin(inner, &request) {
            return refusal;
        }
        let Some(id) = session_id(&request) else {
            let error =
                ErrorObject::new(INVALID_REQUEST, "Bad Request: DELETE ends a session: give its Mcp-Session-Id");
            return json_error(StatusCode::BAD_REQUEST, None, &error);
        };
        let cx = match admitted(inner, request, addrs).await {
            Ok(cx) => cx,
            Err(refusal) => return refusal,
        };
        let ended = match &self.store {
            None => self.sessions.end(&id, owner_of(&cx)),
            Some(store) => {
                if let Err(unusable) = self.session(&id, owner_of(&cx)).await {
                    return unusable.response(None);
                }
                let removed = match store.remove(&id).await {
                    Ok(removed) => removed,
                    Err(err) => return Unusable::StoreFailed(err).response(None),
                };
                self.sessions.discard(&id);
                removed
            }
        };
        if !ended {
            let error = ErrorObject::new(INVALID_REQUEST, "Not Found: no such session (unknown, ended or expired)");
            return json_error(StatusCode::NOT_FOUND, None, &error);
        }
        tracing::debug!("MCP session ended by the client");
        let mut response = Response::new(McpBody::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        response
    }
}

/// The refusal of a `GET` or `DELETE` from an origin the server does not
/// take.
fn refused_origin<B>(inner: &Inner, request: &Request<B>) -> Option<Response<McpBody>> {
    let refusal = inner.check_origin(request.headers().get(header::ORIGIN), own_host(request))?;
    Some(refusal.map(McpBody::from))
}

/// The session that `request`'s `Mcp-Session-Id` names.
fn session_id<B>(request: &Request<B>) -> Option<String> {
    request.headers().get(SESSION_ID).and_then(|value| value.to_str().ok()).map(str::to_owned)
}

/// The context of `request` as the bearer token (with OAuth) and the
/// connection hook make it, or their refusal.
async fn admitted<B>(
    inner: &Inner,
    request: Request<B>,
    addrs: Option<HttpAddrs>,
) -> Result<Context, Response<McpBody>> {
    let (parts, _) = request.into_parts();
    inner.admit("http", parts, addrs).await.map_err(|refusal| refusal.map(McpBody::from))
}

/// Hands the client's response `body` to the request for input it answers
/// (unknown ids are ignored: the call may have ended).
pub(super) fn answer_input(session: &Session, body: &[u8]) {
    #[derive(Deserialize)]
    struct Response<'a> {
        id: Option<u64>,
        #[serde(borrow, default)]
        result: Option<&'a RawValue>,
        #[serde(default)]
        error: Option<ErrorObject>,
    }
    let Ok(response) = serde_json::from_slice::<Response<'_>>(body) else { return };
    let Some(id) = response.id else { return };
    let answer = match (response.result, response.error) {
        (Some(result), None) => Ok(result.to_owned()),
        (None, Some(error)) => Err(error),
        _ => Err(ErrorObject::new(INVALID_REQUEST, "the client's response has neither `result` nor `error`")),
    };
    if !session.answer(id, answer) {
        tracing::debug!(id, "a response from the MCP client matches no request for input (ended, or never sent)");
    }
}
