//! [`PeerBuilder`]: the settings of a connection this side starts, and
//! starting it over a message transport. The transports add the ways to
//! connect (`connect`, `spawn_child`, ...) in `impl PeerBuilder` blocks of
//! their own.

use std::sync::Arc;
use std::time::Duration;

use super::connection::{Connection, Controls};
use super::transport::{MessageSink, MessageSource};
use super::{Cancellation, Lifeline, Peer, PeerOptions};
use crate::dispatch::context::Context;
use crate::dispatch::dialect::SharedDialect;
use crate::dispatch::engine::Engine;
use crate::dispatch::limits::Limits;
use crate::dispatch::router::Router;

/// Builds a connection and starts it over a transport.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use std::time::Duration;
/// use rpc_runtime::{Cancellation, Framing, Peer};
///
/// let peer = Peer::builder()
///     .framing(Framing::ContentLength)
///     .timeout(Duration::from_secs(30))
///     .cancellation(Cancellation::Lsp)
///     .connect(rpc_runtime::transport::tcp::Tcp::new("127.0.0.1:4000"))
///     .await?;
/// let answer: i64 = peer.call("subtract", [42, 23]).await.expect("a call");
/// # Ok(()) }
/// ```
///
/// [`PeerBuilder::connect`] takes any [`Connect`](crate::transport::Connect)
/// target: a TCP address, a byte stream, a message transport, a server in
/// this process, an HTTP or WebSocket endpoint, a NATS subject;
/// [`PeerBuilder::spawn_child`] launches a child process and returns its
/// handle with the peer.
#[derive(Default, Debug)]
pub struct PeerBuilder {
    pub(crate) router: Router,
    pub(crate) limits: Limits,
    pub(crate) framing: crate::wire::Framing,
    pub(crate) options: PeerOptions,
    pub(crate) cx: Context,
    pub(crate) dialect: Option<SharedDialect>,
}

impl PeerBuilder {
    /// Sets the framing used over byte streams (default newline-delimited).
    #[must_use = "a builder does nothing until used"]
    pub fn framing(mut self, framing: crate::wire::Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Serves `router` on this side: the other side may call its methods
    /// (server-to-client requests, in LSP terms). Without it, incoming
    /// requests are answered with -32601.
    #[must_use = "a builder does nothing until used"]
    pub fn router(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// Limits for incoming messages and queued answers (see [`Limits`]).
    #[must_use = "a builder does nothing until used"]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The default timeout of every outgoing call (none by default). A
    /// typed client can override it per call.
    #[must_use = "a builder does nothing until used"]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// How cancellation is announced and understood (none by default).
    #[must_use = "a builder does nothing until used"]
    pub fn cancellation(mut self, cancellation: Cancellation) -> Self {
        self.options.cancellation = cancellation;
        self
    }

    /// Holds the requests this side serves to the rules of a protocol
    /// built on JSON-RPC 2.0 (see [`Dialect`](crate::dispatch::Dialect)),
    /// and takes its way of cancelling a request when it has one (which
    /// replaces [`PeerBuilder::cancellation`]; a later call of that
    /// overrides it again).
    #[must_use = "a builder does nothing until used"]
    pub fn dialect(mut self, dialect: impl crate::dispatch::Dialect) -> Self {
        if let Some(cancellation) = dialect.cancellation() {
            self.options.cancellation = cancellation;
        }
        self.dialect = Some(SharedDialect::new(dialect));
        self
    }

    /// Per-connection data for handlers on this side (see
    /// [`Context::extension`]).
    #[must_use = "a builder does nothing until used"]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.cx = self.cx.with_extension(value);
        self
    }

    /// Starts the connection over any message transport, on a background
    /// task (call it inside a tokio runtime).
    pub(crate) fn start<S, K>(self, source: S, sink: K) -> Peer
    where
        S: MessageSource + 'static,
        K: MessageSink + 'static,
    {
        let engine = Engine::new(self.router, self.limits).with_shared_dialect(self.dialect);
        let (connection, peer) = Connection::new(engine, self.options, self.cx, Controls::default());
        tokio::spawn(async move {
            if let Err(err) = connection.run(source, sink).await {
                tracing::debug!(error = %err, "connection ended with an error");
            }
        });
        let life = Arc::new(Lifeline(Arc::clone(&peer.shared)));
        Peer { _life: Some(life), ..peer }
    }
}
