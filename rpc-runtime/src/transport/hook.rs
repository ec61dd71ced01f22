//! The connection hook: what a server knows about a connection when it
//! arrives, and the user code that may attach per-connection data to it or
//! refuse it. The same for every transport; authentication lives here.

use std::any::{Any, TypeId};
use std::borrow::Cow;
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
    parts: Parts,
    /// An HTTP request's head, kept inline: over HTTP the hook runs for
    /// every request, and this part costs no allocation this way.
    #[cfg(feature = "http")]
    request: Option<http::request::Parts>,
}

/// One transport-specific part, by its type.
type Part = (TypeId, Arc<dyn Any + Send + Sync>);

/// The parts of a [`ConnectionInfo`], one per type. A transport gives one
/// or two (an HTTP request's `Parts`, a NATS message's headers and
/// subject), so a linear search over them costs less than a hash table
/// (no hasher to seed, no table to allocate and free), and the first is
/// kept inline: one part costs one allocation, its `Arc`. Over HTTP this
/// runs for every request (hence the builders' `#[inline]`: a request's
/// `Parts` and the information are built in place instead of copied
/// through each call).
#[derive(Clone, Default)]
struct Parts {
    first: Option<Part>,
    rest: Vec<Part>,
}

impl Parts {
    /// Adds `part`, replacing the one of the same type.
    #[inline]
    fn insert(&mut self, part: Part) {
        if let Some(slot) = self.first.iter_mut().chain(&mut self.rest).find(|(id, _)| *id == part.0) {
            *slot = part;
        } else if self.first.is_none() {
            self.first = Some(part);
        } else {
            self.rest.push(part);
        }
    }

    /// The part of type `id`.
    fn get(&self, id: TypeId) -> Option<&(dyn Any + Send + Sync)> {
        self.first.iter().chain(&self.rest).find(|(each, _)| *each == id).map(|(_, part)| &**part)
    }

    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
}

impl ConnectionInfo {
    /// A connection over `transport` (`"tcp"`, `"stdio"`, `"memory"`,
    /// `"stream"`, `"nats"`, ...), with nothing else known yet.
    #[inline]
    pub fn new(transport: &'static str) -> Self {
        ConnectionInfo {
            transport,
            peer_addr: None,
            local_addr: None,
            parts: Parts::default(),
            #[cfg(feature = "http")]
            request: None,
        }
    }

    /// The information of one HTTP request, built in place (over HTTP the
    /// hook runs for every request: no builder moves its head around).
    #[cfg(feature = "http")]
    #[inline]
    pub(crate) fn of_request(
        transport: &'static str,
        peer_addr: Option<SocketAddr>,
        local_addr: Option<SocketAddr>,
        request: http::request::Parts,
    ) -> Self {
        ConnectionInfo { transport, peer_addr, local_addr, parts: Parts::default(), request: Some(request) }
    }

    /// Adds a part in place (see [`ConnectionInfo::with_part`]).
    #[cfg(all(feature = "tls", feature = "http"))]
    pub(crate) fn add_part<T: Send + Sync + 'static>(&mut self, part: T) {
        self.parts.insert((TypeId::of::<T>(), Arc::new(part)));
    }

    /// The same, with the remote address.
    #[inline]
    #[must_use = "a builder does nothing until used"]
    pub fn with_peer_addr(mut self, addr: SocketAddr) -> Self {
        self.peer_addr = Some(addr);
        self
    }

    /// The same, with the local address the connection arrived on.
    #[inline]
    #[must_use = "a builder does nothing until used"]
    pub fn with_local_addr(mut self, addr: SocketAddr) -> Self {
        self.local_addr = Some(addr);
        self
    }

    /// The same, with a transport-specific part (replacing one of the same
    /// type).
    #[inline]
    #[must_use = "a builder does nothing until used"]
    pub fn with_part<T: Send + Sync + 'static>(mut self, part: T) -> Self {
        #[cfg(feature = "http")]
        {
            let mut slot = Some(part);
            if let Some(request) = (&mut slot as &mut dyn Any).downcast_mut::<Option<http::request::Parts>>() {
                self.request = request.take();
                return self;
            }
            let Some(part) = slot else { return self };
            self.parts.insert((TypeId::of::<T>(), Arc::new(part)));
        }
        #[cfg(not(feature = "http"))]
        self.parts.insert((TypeId::of::<T>(), Arc::new(part)));
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
        #[cfg(feature = "http")]
        if TypeId::of::<T>() == TypeId::of::<http::request::Parts>() {
            return (self.request.as_ref()? as &dyn Any).downcast_ref();
        }
        self.parts.get(TypeId::of::<T>())?.downcast_ref()
    }

    /// The token of the request's `Authorization: Bearer <token>` header,
    /// over HTTP and on a WebSocket's upgrade request (the one place that
    /// reads it: the OAuth resource server reads it the same way).
    ///
    /// The scheme matches in any case (`Bearer`, `bearer`, `BEARER`: HTTP
    /// auth schemes are case-insensitive, RFC 9110 section 11.1) and spaces
    /// around the token are dropped. `None` without the header, with
    /// another scheme (`Basic`), with two `Authorization` headers, with an
    /// empty token or one with a space in it, with a token that is not
    /// UTF-8, and on transports without HTTP headers. The token is
    /// otherwise not checked: compare it or verify it whole.
    ///
    /// ```
    /// use rpc_runtime::{ConnectionInfo, Context, Permissions, Refused};
    ///
    /// fn admit(info: &ConnectionInfo, cx: Context) -> Result<Context, Refused> {
    ///     match info.bearer_token() {
    ///         Some("admin-token") => Ok(cx.with_extension(Permissions::new(["read", "write"]))),
    ///         Some("reader-token") => Ok(cx.with_extension(Permissions::new(["read"]))),
    ///         Some(_) => Err(Refused::unauthorized("unknown token")),
    ///         None => Err(Refused::unauthorized("an Authorization: Bearer token is required")),
    ///     }
    /// }
    ///
    /// let request = rpc_runtime::http::Request::post("/")
    ///     .header("authorization", "bearer reader-token")
    ///     .body(())
    ///     .unwrap();
    /// let info = ConnectionInfo::new("http").with_part(request.into_parts().0);
    /// assert_eq!(info.bearer_token(), Some("reader-token"));
    /// assert!(admit(&info, Context::default()).is_ok());
    /// assert!(admit(&ConnectionInfo::new("tcp"), Context::default()).is_err());
    /// ```
    #[cfg(feature = "http")]
    pub fn bearer_token(&self) -> Option<&str> {
        std::str::from_utf8(bearer_bytes(&self.request.as_ref()?.headers)?).ok()
    }
}

/// The token of `Authorization: Bearer <token>` in `headers`, as bytes
/// (not checked for UTF-8): see [`ConnectionInfo::bearer_token`]. No
/// byte of the token is checked here: a token is compared or verified
/// whole anyway, and checking each byte of a kilobyte-long JWT would cost
/// more than the rest of an admission.
#[cfg(feature = "http")]
#[inline]
pub(crate) fn bearer_bytes(headers: &http::HeaderMap) -> Option<&[u8]> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let value = values.next()?.as_bytes();
    if values.next().is_some() {
        return None;
    }
    let space = memchr::memchr(b' ', value)?;
    if !value[..space].eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = value[space..].trim_ascii();
    (!token.is_empty() && memchr::memchr(b' ', token).is_none()).then_some(token)
}

impl ConnectionInfo {
    /// How many HTTP request heads it holds (0 or 1).
    fn http_parts(&self) -> usize {
        #[cfg(feature = "http")]
        return usize::from(self.request.is_some());
        #[cfg(not(feature = "http"))]
        0
    }
}

impl fmt::Debug for ConnectionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionInfo")
            .field("transport", &self.transport)
            .field("peer_addr", &self.peer_addr)
            .field("local_addr", &self.local_addr)
            .field("parts", &(self.parts.len() + self.http_parts()))
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
/// refusal, at once ([`Server::on_connect`](crate::Server::on_connect):
/// no future to allocate) or later.
#[derive(Clone)]
pub(crate) enum Hook {
    Ready(Arc<ReadyHook>),
    Waiting(Arc<WaitingHook>),
}

/// A hook that answers at once ([`Server::on_connect`](crate::Server::on_connect)).
pub(crate) type ReadyHook = dyn Fn(&ConnectionInfo, Context) -> Result<Context, Refused> + Send + Sync;

/// A hook that may wait ([`Server::on_connect_async`](crate::Server::on_connect_async)).
pub(crate) type WaitingHook = dyn Fn(&ConnectionInfo, Context) -> HookFuture + Send + Sync;

/// What a hook gave: its answer, or the future of it.
pub(crate) enum Admission {
    Now(Result<Context, Refused>),
    Later(HookFuture),
}

impl Hook {
    /// Runs the hook (its synchronous part) for `info`, on `cx`.
    #[inline]
    pub(crate) fn start(&self, info: &ConnectionInfo, cx: Context) -> Admission {
        match self {
            Hook::Ready(hook) => Admission::Now(hook(info, cx)),
            Hook::Waiting(hook) => Admission::Later(hook(info, cx)),
        }
    }
}

/// `cx` with the transport and peer address of `info` set.
#[inline]
pub(crate) fn based(info: &ConnectionInfo, cx: Context) -> Context {
    let cx = cx.with_transport(info.transport());
    match info.peer_addr() {
        Some(addr) => cx.with_peer_addr(addr),
        None => cx,
    }
}

/// Runs `hook` (if any) for a new connection: the context built on `cx`,
/// with the transport and peer address set, or the refusal.
pub(crate) async fn admit(hook: Option<&Hook>, info: &ConnectionInfo, cx: Context) -> Result<Context, Refused> {
    let cx = based(info, cx);
    let Some(hook) = hook else {
        return Ok(cx);
    };
    match hook.start(info, cx) {
        Admission::Now(admitted) => admitted,
        Admission::Later(admitted) => admitted.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Headers(&'static str);

    #[derive(Debug, PartialEq)]
    struct Subject(String);

    #[test]
    fn no_parts() {
        let info = ConnectionInfo::new("tcp");
        assert_eq!(info.transport(), "tcp");
        assert_eq!(info.part::<Headers>(), None);
        assert_eq!(info.peer_addr(), None);
        assert_eq!(info.local_addr(), None);
    }

    #[test]
    fn addresses() {
        let (peer, local) = ("127.0.0.1:1234".parse().unwrap(), "127.0.0.1:80".parse().unwrap());
        let info = ConnectionInfo::new("http").with_peer_addr(peer).with_local_addr(local);
        assert_eq!((info.peer_addr(), info.local_addr()), (Some(peer), Some(local)));
    }

    #[test]
    fn several_parts_each_by_its_type() {
        let info = ConnectionInfo::new("nats").with_part(Headers("h")).with_part(Subject("s".into())).with_part(7u32);
        assert_eq!(info.part::<Headers>(), Some(&Headers("h")));
        assert_eq!(info.part::<Subject>(), Some(&Subject("s".into())));
        assert_eq!(info.part::<u32>(), Some(&7));
        assert_eq!(info.part::<u64>(), None);
    }

    #[test]
    fn a_part_replaces_the_one_of_its_type() {
        // The first part (kept inline) and a later one (in the rest).
        let info = ConnectionInfo::new("nats")
            .with_part(Headers("old"))
            .with_part(Subject("old".into()))
            .with_part(Headers("new"))
            .with_part(Subject("new".into()));
        assert_eq!(info.part::<Headers>(), Some(&Headers("new")));
        assert_eq!(info.part::<Subject>(), Some(&Subject("new".into())));
        assert_eq!(info.parts.len(), 2);
        assert!(format!("{info:?}").contains("parts: 2"), "{info:?}");
    }

    #[test]
    fn a_clone_shares_the_parts_and_grows_apart() {
        let info = ConnectionInfo::new("http").with_part(Headers("h"));
        let clone = info.clone().with_part(Subject("s".into())).with_part(Headers("other"));
        assert_eq!(info.part::<Headers>(), Some(&Headers("h")));
        assert_eq!(info.part::<Subject>(), None);
        assert_eq!(clone.part::<Headers>(), Some(&Headers("other")));
        assert_eq!(clone.part::<Subject>(), Some(&Subject("s".into())));
        assert_eq!(clone.transport(), "http");
        let same = info.clone();
        assert!(std::ptr::eq(info.part::<Headers>().unwrap(), same.part::<Headers>().unwrap()));
    }

    #[test]
    fn debug_counts_the_parts() {
        let info = ConnectionInfo::new("tcp").with_part(1u8).with_part(2u16);
        let text = format!("{info:?}");
        assert!(text.contains(r#"transport: "tcp""#) && text.contains("parts: 2"), "{text}");
    }
}
