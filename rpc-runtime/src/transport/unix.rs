//! Unix domain sockets (Unix only): a listener serving every connection
//! it accepts, as TCP's does, with the connecting process's credentials
//! for the connection hook; and the client's connect.
//!
//! A local daemon's usual front door: no port to guard, and the kernel
//! says who is calling. Serving one:
//!
//! ```no_run
//! # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
//! use rpc_runtime::transport::unix::PeerCredentials;
//! use rpc_runtime::{Refused, Server};
//!
//! let path = "/run/user/1000/calculator.sock";
//! let _ = std::fs::remove_file(path); // a socket left by an earlier run
//! let listener = tokio::net::UnixListener::bind(path)?;
//! let me = std::fs::metadata("/proc/self").map(|meta| std::os::unix::fs::MetadataExt::uid(&meta))?;
//! Server::new(router)
//!     .on_connect(move |info, cx| match info.part::<PeerCredentials>() {
//!         Some(caller) if caller.uid == me => Ok(cx),
//!         _ => Err(Refused::forbidden("only this user's processes")),
//!     })
//!     .serve(listener)
//!     .await
//! # }
//! ```
//!
//! and calling it: `Peer::builder().connect(Unix::new(path)).await?`.
//!
//! # Who may connect
//!
//! Connecting needs write permission on the socket file, which
//! [`UnixListener::bind`](tokio::net::UnixListener::bind) creates with the
//! process's umask (commonly `0o022`: writable by its owner only, but check
//! yours), and search permission on every directory above it. Put the
//! socket in a directory only the intended users can reach (such as
//! `$XDG_RUNTIME_DIR`, mode `0o700`) rather than changing the file's mode
//! after `bind`, which leaves a moment when it is open to all. The
//! credentials in [`PeerCredentials`] are the kernel's, taken when the
//! client connected: the hook can trust them, unlike anything the client
//! sends. Binding fails if the path exists: remove a stale socket first,
//! and remove yours when the server ends.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;

use super::deadline::WriteDeadline;
use super::listener::{Connect, Listener, Shutdown};
use super::reconnect::Reconnect;
use super::redial::{Medium, Reopen};
use super::server::{ConnectionInfo, Server};
use super::stream::StreamSink;
use super::tcp::{accept_with, refuse_overloaded};
use crate::dispatch::context::Context;
use crate::peer::{Controls, Peer, PeerBuilder};
use crate::wire::FrameReader;

/// The process at the other end of a Unix socket, as the kernel saw it
/// connect (`SO_PEERCRED`): a part of the [`ConnectionInfo`] of each
/// connection a [`UnixListener`] serves, read in the connection hook with
/// `info.part::<PeerCredentials>()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCredentials {
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
    /// Its process id, where the platform tells it (Linux and Android do).
    pub pid: Option<i32>,
}

/// A Unix listener serves every connection it accepts, as a
/// [`TcpListener`](tokio::net::TcpListener) does: each on its own task,
/// framed with the server's [`Framing`](crate::Framing), at most
/// [`Server::max_connections`] at once (one more is sent a -32000 error and
/// closed), each through the connection hook first, which sees transport
/// `"unix"` and the caller's [`PeerCredentials`]. On graceful shutdown it
/// stops accepting, lets the requests already received finish and be
/// answered, and returns once every connection is closed. The socket file
/// is left in place: remove it when the server ends.
impl Listener for UnixListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let limit = server.max_connections.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
        let slots = Arc::new(Semaphore::new(limit));
        while let Some((stream, _)) = accept_with(|| self.accept(), &shutdown.drain).await {
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                tracing::debug!(limit, "refused a Unix connection: at the connection limit");
                tokio::spawn(refuse_overloaded(stream, server.framing, limit));
                continue;
            };
            let server = server.clone();
            let drain = Some(Arc::clone(&shutdown.drain));
            let controls = Controls { idle_timeout: None, drain, at_eof: server.network_eof() };
            tokio::spawn(async move {
                let mut info = ConnectionInfo::new("unix");
                if let Ok(cred) = stream.peer_cred() {
                    info = info.with_part(PeerCredentials { uid: cred.uid(), gid: cred.gid(), pid: cred.pid() });
                }
                let (reader, writer) = stream.into_split();
                let source = FrameReader::new(reader, server.framing, server.engine.limits().max_message_size);
                let sink = StreamSink::new(WriteDeadline::new(writer, server.write_timeout), server.framing);
                if let Err(err) = server.run_connection(source, sink, &info, Context::new(), controls).await {
                    tracing::debug!(error = %err, "Unix connection ended with an error");
                }
                drop(slot);
            });
        }
        drop(self);
        // Every connection holds a slot until it is closed.
        let _all_closed = slots.acquire_many(limit as u32).await;
        Ok(())
    }
}

/// A server listening on a Unix socket at a path, for
/// [`PeerBuilder::connect`].
#[derive(Clone, Debug)]
pub struct Unix {
    path: PathBuf,
    reconnect: Option<Reconnect>,
}

impl Unix {
    /// The server listening at `path`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Unix { path: path.as_ref().to_owned(), reconnect: None }
    }

    /// Connects again to the socket at the same path when the connection
    /// is lost (a daemon restarted, say), as `policy` says; as
    /// [`Tcp::reconnect`](crate::transport::tcp::Tcp::reconnect) does over
    /// TCP: calls in flight fail at once with a
    /// [`TRANSPORT_ERROR`](crate::wire::TRANSPORT_ERROR) object ("the Unix
    /// socket connection was lost...", `data`: `{"transport": "unix"}`),
    /// calls made meanwhile wait for the new connection, subscriptions are
    /// made again (each stream yields
    /// [`ClientError::Resubscribed`](crate::ClientError::Resubscribed)),
    /// and once the attempts run out every call fails. The first
    /// connection is not retried.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use rpc_runtime::transport::{unix::Unix, Reconnect};
    ///
    /// let peer = rpc_runtime::Peer::builder()
    ///     .connect(Unix::new("/run/user/1000/notes.sock").reconnect(Reconnect::default()))
    ///     .await?;
    /// # let _ = peer;
    /// # Ok(()) }
    /// ```
    #[must_use = "a builder does nothing until used"]
    pub fn reconnect(self, policy: Reconnect) -> Self {
        Unix { reconnect: Some(policy), ..self }
    }
}

/// The medium of a reconnecting Unix socket client, as its messages name it.
const UNIX: Medium = Medium { name: "Unix socket", transport: "unix" };

impl Connect for Unix {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let first = UnixStream::connect(&self.path).await?;
        let Some(policy) = self.reconnect else {
            return first.connect(builder).await;
        };
        let path = Arc::new(self.path);
        let reopen: Reopen<OwnedReadHalf, OwnedWriteHalf> = Arc::new(move || {
            let path = Arc::clone(&path);
            Box::pin(async move { Ok(UnixStream::connect(&*path).await?.into_split()) })
        });
        Ok(builder.start_redialing(UNIX, first.into_split(), reopen, policy))
    }
}

/// A Unix socket connection already made (one end of a `socketpair`, say).
impl Connect for UnixStream {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let (reader, writer) = self.into_split();
        Ok(builder.start_stream(reader, writer))
    }
}
