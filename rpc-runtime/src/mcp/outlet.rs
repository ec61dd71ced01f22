//! Where the server's own messages to a client go: notifications about a
//! request (progress, logs, a subscription's events) on that request's
//! stream when it has one (a Streamable HTTP event stream), else on the
//! connection (stdio); notifications about nothing in particular on the
//! connection, or on the session's `GET` stream over HTTP.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use super::session::Session;
use crate::dispatch::context::Context;
use crate::peer::Peer;

/// Where the notifications about one request go when that request has a
/// stream of its own (an SSE response over Streamable HTTP) rather than a
/// connection: whole JSON-RPC messages, in order. Only Streamable HTTP
/// (feature `http`) has such streams.
#[cfg(feature = "http")]
pub(crate) struct RequestStream(pub(crate) tokio::sync::mpsc::Sender<Vec<u8>>);

/// A notification as bytes.
pub(crate) fn notification(method: &str, params: &impl Serialize) -> Option<Vec<u8>> {
    #[derive(Serialize)]
    struct Notification<'a, P> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_vec(&Notification { jsonrpc: "2.0", method, params }).ok()
}

/// Where one request's notifications go.
#[derive(Clone)]
pub(crate) enum Outlet {
    /// The request's own event stream (Streamable HTTP).
    #[cfg(feature = "http")]
    Stream(tokio::sync::mpsc::Sender<Vec<u8>>),
    /// The connection (stdio, or any other connection).
    Peer(Peer),
    /// The session's `GET` stream (Streamable HTTP, handshake revisions),
    /// for what relates to no request with a stream of its own.
    Session(Arc<Session>),
}

impl Outlet {
    /// Where notifications about the request of `cx` go, if anywhere.
    pub(crate) fn of_request(cx: &Context) -> Option<Outlet> {
        #[cfg(feature = "http")]
        if let Some(stream) = cx.extension::<RequestStream>() {
            return Some(Outlet::Stream(stream.0.clone()));
        }
        cx.peer().cloned().map(Outlet::Peer)
    }

    /// Where notifications about nothing in particular go for the session
    /// of `cx`: its connection, else its `GET` stream.
    pub(crate) fn of_session(cx: &Context, session: &Arc<Session>) -> Outlet {
        match cx.peer() {
            Some(peer) => Outlet::Peer(peer.clone()),
            None => Outlet::Session(Arc::clone(session)),
        }
    }

    /// Sends `message` (a whole notification) and waits until it is
    /// written (on a connection) or queued (on a stream). `false` when it
    /// could not be: the connection or stream is gone, or (on a stream) a
    /// backlog the client has not read is full and it was dropped.
    pub(crate) async fn send(&self, message: Vec<u8>) -> bool {
        match self {
            #[cfg(feature = "http")]
            Outlet::Stream(stream) => stream.try_send(message).is_ok(),
            // Written before the call goes on: the response must not share
            // a read with it, or clients that handle a chunk's messages out
            // of order (the TypeScript SDK drops a progress notification
            // read with its request's response) lose it.
            Outlet::Peer(peer) => peer.write_and_wait(message, peer.default_timeout()).await.is_ok(),
            Outlet::Session(session) => session.send_standalone(message),
        }
    }

    /// Whether nothing can be sent here any more.
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            Outlet::Stream(stream) => stream.is_closed(),
            Outlet::Peer(peer) => peer.is_closed(),
            Outlet::Session(_) => false,
        }
    }
}

/// Sends notification `method` with `params` about the request of `cx`.
pub(crate) async fn notify_request(cx: &Context, method: &str, params: &RawValue) -> bool {
    let Some(outlet) = Outlet::of_request(cx) else { return false };
    let Some(message) = notification(method, &params) else { return false };
    outlet.send(message).await
}
