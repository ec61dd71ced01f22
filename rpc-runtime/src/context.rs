//! What a handler may know about the connection its request came in on.

use std::net::SocketAddr;

/// Per-request context handed to every handler by the engine.
///
/// A method receives it by declaring a parameter of type `Context`; the
/// macro injects it instead of decoding it from the params.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub(crate) peer_addr: Option<SocketAddr>,
}

impl Context {
    /// The remote address, for TCP connections.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer_addr
    }
}
