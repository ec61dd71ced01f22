//! The body of an MCP answer over HTTP: one JSON document, or a stream of
//! Server-Sent Events carrying the messages about one request (progress
//! notifications, then its response).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

use crate::dispatch::signal::Signal;

/// The body of a [`McpHttpService`](super::McpHttpService) answer: a whole
/// JSON document (or plain-text reason), or a `text/event-stream` that
/// ends after the request's response.
pub struct McpBody {
    kind: Kind,
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            Kind::Full(_) => "json",
            Kind::Events { .. } => "event-stream",
        };
        f.debug_struct("McpBody").field("kind", &kind).finish()
    }
}

enum Kind {
    Full(Full<Bytes>),
    Events {
        messages: mpsc::Receiver<Vec<u8>>,
        /// Raised when the stream is dropped: the client closed it.
        _closed: Option<CancelOnDrop>,
    },
}

/// Raises a request's cancellation signal when dropped.
pub(crate) struct CancelOnDrop(pub(crate) Arc<Signal>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.raise();
    }
}

/// An empty body (what a CORS preflight is answered with).
impl Default for McpBody {
    fn default() -> Self {
        McpBody::empty()
    }
}

impl McpBody {
    /// A body of these bytes.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        McpBody { kind: Kind::Full(Full::new(bytes.into())) }
    }

    /// An empty body.
    pub(crate) fn empty() -> Self {
        McpBody { kind: Kind::Full(Full::default()) }
    }

    /// An event stream of the JSON-RPC messages `messages` receives, each
    /// one event; `closed` is raised if the stream is dropped (the client
    /// went away).
    pub(crate) fn events(messages: mpsc::Receiver<Vec<u8>>, closed: Option<CancelOnDrop>) -> Self {
        McpBody { kind: Kind::Events { messages, _closed: closed } }
    }
}

impl From<Full<Bytes>> for McpBody {
    fn from(full: Full<Bytes>) -> Self {
        McpBody { kind: Kind::Full(full) }
    }
}

/// One SSE `message` event with `json` as its data. JSON strings cannot
/// hold raw line breaks, so any in `json` are whitespace between tokens:
/// each line becomes a `data:` line, which the client joins again.
pub(crate) fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\n");
    for line in json.split(|&byte| byte == b'\n' || byte == b'\r') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
    Bytes::from(out)
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(full) => Pin::new(full).poll_frame(cx),
            Kind::Events { messages, .. } => {
                messages.poll_recv(cx).map(|message| message.map(|json| Ok(Frame::data(event(&json)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(full) => full.is_end_stream(),
            Kind::Events { .. } => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(full) => full.size_hint(),
            Kind::Events { .. } => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::event;

    #[test]
    fn events_keep_line_breaks_out_of_data_lines() {
        assert_eq!(&event(br#"{"a":1}"#)[..], b"event: message\ndata: {\"a\":1}\n\n");
        assert_eq!(&event(b"{\n\"a\":1\r\n}")[..], b"event: message\ndata: {\ndata: \"a\":1\ndata: \ndata: }\n\n");
    }
}
