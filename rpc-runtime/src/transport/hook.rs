//! The connection hook: what a server knows about a connection when it
//! arrives, and the user code that may attach per-connection data to it or
//! refuse it. The same for every transport; authentication lives here.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use crate::dispatch::context::Context;

/// What a server knows about a connection (or, over HTTP, a request) when
/// it arrives; handed to the hook set with [`Server::on_connect`](crate::Server::on_connect).
///
/// Transport-specific parts (HTTP headers, say) are typed values read with
/// [`ConnectionInfo::part`].
#[derive(Clone)]
pub struct ConnectionInfo {
    transport: &'static str,
    peer_addr: Option<SocketAddr>,
    local_addr: Option<SocketAddr>,
    parts: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl ConnectionInfo {
    /// A connection over `transport` (`"tcp"`, `"stdio"`, `"memory"`,
    /// `"stream"`, `"nats"`, ...), with nothing else known yet.
    pub fn new(transport: &'static str) -> Self {
        ConnectionInfo { transport, peer_addr: None, local_addr: None, parts: HashMap::new() }
    }

    /// The same, with the remote address.
    #[must_use = "a builder does nothing until used"]
    pub fn with_peer_addr(mut self, addr: SocketAddr) -> Self {
        self.peer_addr = Some(addr);
        self
    }

    /// The same, with the local address the connection arrived on.
    #[must_use = "a builder does nothing until used"]
    pub fn with_local_addr(mut self, addr: SocketAddr) -> Self {
        self.local_addr = Some(addr);
        self
    }

    /// The same, with a transport-specific part (replacing one of the same
    /// type).
    #[must_use = "a builder does nothing until used"]
    pub fn with_part<T: Send + Sync + 'static>(mut self, part: T) -> Self {
        self.parts.insert(TypeId::of::<T>(), Arc::new(part));
        self
    }

    /// The transport's name: `"tcp"`, `"stdio"`, `"memory"`, `"stream"`,
    /// `"http"` (one per request), `"ws"`, `"nats"` (one per message).
    /// Each call's `tracing` span carries it as `network.transport`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// The remote address, when the transport has one.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer_addr
    }

    /// The local address the connection arrived on, when known.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// A transport-specific part of type `T`, if the transport gave one.
    pub fn part<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.parts.get(&TypeId::of::<T>())?.downcast_ref()
    }
}

impl fmt::Debug for ConnectionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionInfo")
            .field("transport", &self.transport)
            .field("peer_addr", &self.peer_addr)
            .field("local_addr", &self.local_addr)
            .field("parts", &self.parts.len())
            .finish()
    }
}

/// Why a connection hook turned a connection away. The connection is
/// closed without being served (over HTTP: 401 for
/// [`Refused::unauthorized`], 403 otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    unauthorized: bool,
    reason: Cow<'static, str>,
}

impl Refused {
    /// Refused: the caller may not use this service (HTTP 403).
    pub fn forbidden(reason: impl Into<Cow<'static, str>>) -> Self {
        Refused { unauthorized: false, reason: reason.into() }
    }

    /// Refused: the caller did not prove who it is (HTTP 401).
    pub fn unauthorized(reason: impl Into<Cow<'static, str>>) -> Self {
        Refused { unauthorized: true, reason: reason.into() }
    }

    /// Whether the caller failed to authenticate (rather than being
    /// forbidden).
    pub fn is_unauthorized(&self) -> bool {
        self.unauthorized
    }

    /// The reason given, for logs (not sent to the other side).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.unauthorized { "unauthorized" } else { "forbidden" };
        write!(f, "connection refused ({kind}): {}", self.reason)
    }
}

impl std::error::Error for Refused {}

/// The future a connection hook returns.
pub type HookFuture = Pin<Box<dyn Future<Output = Result<Context, Refused>> + Send>>;

/// A connection hook, type-erased: sees the connection's information and
/// its base context; returns the context (with extensions attached) or a
/// refusal.
pub(crate) type Hook = Arc<dyn Fn(&ConnectionInfo, Context) -> HookFuture + Send + Sync>;

/// Runs `hook` (if any) for a new connection: the context built on `cx`,
/// with the transport and peer address set, or the refusal.
pub(crate) async fn admit(hook: Option<&Hook>, info: &ConnectionInfo, cx: Context) -> Result<Context, Refused> {
    let mut cx = cx.with_transport(info.transport());
    if let Some(addr) = info.peer_addr() {
        cx = cx.with_peer_addr(addr);
    }
    match hook {
        Some(hook) => hook(info, cx).await,
        None => Ok(cx),
    }
}
