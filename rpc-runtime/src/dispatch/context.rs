//! What a handler may know about the connection its request came in on.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::dispatch::inflight::{InflightGuard, Link};
use crate::dispatch::signal::Signal;

/// Per-request context handed to every handler by the engine.
///
/// A method receives it by declaring a parameter of type `Context` (or
/// `rpc_runtime::Context`); the macro injects it instead of decoding it
/// from the params (see [the rule](crate::attributes#the-runtimes-context)
/// that tells it from a type of your own named `Context`). Through it a
/// handler reaches:
///
/// - the connection its request came in on (`Context::peer`), to send
///   notifications to the caller or call it back while the request runs;
/// - the request's cancellation ([`Context::is_cancelled`],
///   [`Context::cancelled`]);
/// - per-connection data set when the connection was created
///   ([`Context::extension`]), such as an authenticated identity.
///
/// ```
/// use rpc_runtime::Context;
///
/// #[derive(Debug, PartialEq)]
/// struct User(String);
///
/// let cx = Context::new().with_extension(User("ada".into()));
/// assert_eq!(cx.extension::<User>(), Some(&User("ada".into())));
/// assert!(!cx.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct Context {
    pub(crate) peer_addr: Option<SocketAddr>,
    /// The name of the transport the connection came over (as
    /// [`ConnectionInfo::transport`](crate::transport::hook::ConnectionInfo::transport)
    /// says it), for each call's span.
    pub(crate) transport: Option<&'static str>,
    /// The connection, as far as dispatch needs it (see [`Link`]).
    pub(crate) link: Option<Arc<Link>>,
    /// The peer layer's handle on the connection (a `Peer`), type-erased so
    /// that this layer does not depend on it; `Context::peer` is defined
    /// next to `Peer`.
    pub(crate) peer: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) cancel: Option<Arc<Signal>>,
    /// The server's drain (graceful shutdown) signal, where the transport
    /// has one: calls that would run forever (MCP's subscriptions) end
    /// when it is raised.
    pub(crate) drain: Option<Arc<Signal>>,
    /// The request's id, as the table of running requests keys it, on
    /// connections that track requests for cancellation (MCP, LSP).
    pub(crate) request_key: Option<Arc<str>>,
    pub(crate) extensions: Extensions,
    /// The caller's span, when the transport carried W3C Trace Context
    /// (HTTP and WebSocket-upgrade headers, NATS message headers).
    #[cfg(feature = "otel")]
    pub(crate) trace: Option<Arc<crate::otel::TraceContext>>,
}

/// Typed per-connection values, at most one per type.
#[derive(Clone, Default)]
pub(crate) struct Extensions(pub(crate) Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl Context {
    /// An empty context: no connection, no extensions.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context with `value` stored as per-connection data,
    /// replacing any earlier value of the same type. Handlers read it with
    /// [`Context::extension`].
    pub fn with_extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        let mut map = self.extensions.0.take().map(|map| (*map).clone()).unwrap_or_default();
        map.insert(TypeId::of::<T>(), Arc::new(value));
        self.extensions = Extensions(Some(Arc::new(map)));
        self
    }

    /// The same context with the remote address set.
    pub fn with_peer_addr(mut self, addr: SocketAddr) -> Self {
        self.peer_addr = Some(addr);
        self
    }

    /// The same context, its calls the children of `trace` (the caller's
    /// span, as the transport carried it).
    #[cfg(all(feature = "otel", any(feature = "http", feature = "nats")))]
    pub(crate) fn with_trace(mut self, trace: Option<crate::otel::TraceContext>) -> Self {
        self.trace = trace.map(Arc::new);
        self
    }

    /// The same context, its connection come over `transport`.
    pub(crate) fn with_transport(mut self, transport: &'static str) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The per-connection value of type `T`, if one was set.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.0.as_ref()?.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// The remote address, for TCP connections.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer_addr
    }

    /// Whether the caller cancelled this request (see
    /// [`crate::Cancellation`]), or the connection stopped so that nobody
    /// can receive the answer: closed with [`Peer::close`](crate::Peer::close), its last handle
    /// dropped, or writing to it failed. The end of the caller's input is
    /// not a cancellation: running requests finish and are answered.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|signal| signal.is_raised())
            || self.link.as_ref().is_some_and(|link| link.stop.is_raised())
    }

    /// Completes when [`Context::is_cancelled`] becomes true; never
    /// completes outside a connection. Use it in a `tokio::select!` to stop
    /// long work early.
    pub async fn cancelled(&self) {
        let request = async {
            match &self.cancel {
                Some(signal) => signal.raised().await,
                None => std::future::pending().await,
            }
        };
        let connection = async {
            match &self.link {
                Some(link) => link.stop.raised().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = request => {}
            () = connection => {}
        }
    }

    /// State that a protocol spoken on top of JSON-RPC keeps for the
    /// connection this request came in on (an MCP session, say), made by
    /// `init` on the first call and kept until the connection ends. A
    /// [`Dialect`](crate::dispatch::Dialect) reads it in
    /// [`check_batch`](crate::dispatch::Dialect::check_batch), its methods
    /// in their handlers.
    ///
    /// Each connection has one such slot: `None` when another type holds
    /// it, or outside a connection (for example with
    /// [`Engine::handle`](crate::dispatch::Engine::handle) called directly).
    pub fn connection_state<T: Send + Sync + 'static>(&self, init: impl FnOnce() -> T) -> Option<Arc<T>> {
        self.link.as_ref()?.protocol_state(init)
    }

    /// Whether a request with id `id` (`None` for a notification) is
    /// registered for cancellation: see [`Context::for_request`].
    #[inline]
    pub(crate) fn tracks(&self, id: Option<&str>) -> bool {
        id.is_some() && self.link.as_ref().is_some_and(|link| link.tracks_requests())
    }

    /// The context of one request with id `id` (raw JSON, `None` for a
    /// notification): registers it for cancellation when the connection
    /// has cancellation enabled. Borrows `self` otherwise, so plain
    /// servers pay nothing: the check is inlined into the caller, the
    /// registration is not.
    #[inline]
    pub(crate) fn for_request(&self, id: Option<&str>) -> (Cow<'_, Context>, Option<InflightGuard>) {
        match (&self.link, id) {
            (Some(link), Some(id)) if link.tracks_requests() => self.for_tracked_request(link, id),
            _ => (Cow::Borrowed(self), None),
        }
    }

    /// The id of the request (raw JSON), on connections that track
    /// requests for cancellation (MCP, LSP) or whose transport said it.
    /// Read by protocols whose long-lived requests are named by their id
    /// (MCP's subscriptions); unused in builds without one.
    #[allow(dead_code)]
    pub(crate) fn request_id(&self) -> Option<Box<serde_json::value::RawValue>> {
        self.request_key.as_deref().and_then(super::inflight::id_of_key)
    }

    /// The registering half of [`Context::for_request`].
    fn for_tracked_request(&self, link: &Arc<Link>, id: &str) -> (Cow<'_, Context>, Option<InflightGuard>) {
        match link.track(id) {
            Some((signal, guard)) => {
                let mut cx = self.clone();
                cx.cancel = Some(signal);
                cx.request_key = Some(Arc::clone(guard.key()));
                (Cow::Owned(cx), Some(guard))
            }
            None => (Cow::Borrowed(self), None),
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("peer_addr", &self.peer_addr)
            .field("transport", &self.transport)
            .field("connected", &self.link.is_some())
            .field("cancelled", &self.is_cancelled())
            .field("extensions", &self.extensions.0.as_ref().map_or(0, |map| map.len()))
            .finish()
    }
}
