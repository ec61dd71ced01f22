//! Stdio: a server on this process's stdin and stdout, as LSP and MCP
//! servers run when a host launches them.

use std::io;

use super::listener::{Listener, Shutdown};
use super::server::{ConnectionInfo, Server};
use super::stream::StreamSink;
use crate::wire::FrameReader;

/// This process's stdin and stdout as one connection, for
/// [`Server::serve`]: serves until stdin ends. Only protocol messages are
/// written to stdout. The connection hook sees a connection of transport
/// `"stdio"`; if it refuses, serving ends with an error of kind
/// [`io::ErrorKind::PermissionDenied`].
///
/// The client closing the connection (even while answers are on their
/// way) is the normal end, not an error. At the end of input, and on
/// graceful shutdown, the requests already received finish and are
/// answered first.
///
/// On Unix, when stdin or stdout is a pipe or a socket (as when an editor
/// or an MCP host launches the server), it is read or written through the
/// runtime's I/O driver, in non-blocking mode: no thread hands each read
/// and write over, which made about a third of a language server's CPU
/// under pipelined edits. The runtime must have I/O enabled then
/// (`#[tokio::main]` and `enable_all` do), and nothing else in the process
/// may write to stdout (it is the protocol's anyway): a `println!` into a
/// full pipe would fail. Otherwise (a file, a terminal, another platform)
/// tokio's `stdin()` and `stdout()` are used, which read and write on
/// blocking threads.
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Server, transport::stdio::Stdio};
/// Server::new(router).serve(Stdio).await
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Stdio;

impl Listener for Stdio {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let source = FrameReader::new(input(), server.framing, server.engine.limits().max_message_size);
        let sink = StreamSink::new(output(), server.framing);
        server.serve_connection(source, sink, ConnectionInfo::new("stdio"), &shutdown).await
    }
}

type Input = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Output = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// Stdin: a pipe or a socket through the I/O driver, else tokio's.
fn input() -> Input {
    #[cfg(unix)]
    if let Some(input) = unix::driven(
        std::io::stdin(),
        |fd| Ok(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?) as Input),
        |socket| Box::new(socket) as Input,
    ) {
        return input;
    }
    Box::new(tokio::io::stdin())
}

/// Stdout: a pipe or a socket through the I/O driver, else tokio's.
fn output() -> Output {
    #[cfg(unix)]
    if let Some(output) = unix::driven(
        std::io::stdout(),
        |fd| Ok(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?) as Output),
        |socket| Box::new(socket) as Output,
    ) {
        return output;
    }
    Box::new(tokio::io::stdout())
}

/// Telling pipes and sockets apart from files and terminals, safely: the
/// standard library's owned descriptors, tokio's pipe and Unix stream
/// types (which set non-blocking mode themselves, or are given it).
#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    /// `stdio` served by the runtime's I/O driver: a descriptor of our own
    /// for it (a `dup`: the same pipe or socket) made into `pipe`'s type
    /// if it is a pipe, a Unix stream given to `socket` if it is a socket
    /// (a `socketpair` end, as some hosts give their children); `None`
    /// for anything else, or if that fails.
    pub(super) fn driven<T>(
        stdio: impl AsFd,
        pipe: impl FnOnce(OwnedFd) -> io::Result<T>,
        socket: impl FnOnce(tokio::net::UnixStream) -> T,
    ) -> Option<T> {
        let fd = stdio.as_fd().try_clone_to_owned().ok()?;
        let kind = std::fs::File::from(fd.try_clone().ok()?).metadata().ok()?.file_type();
        if kind.is_fifo() {
            pipe(fd).ok()
        } else if kind.is_socket() {
            let stream = std::os::unix::net::UnixStream::from(fd);
            stream.set_nonblocking(true).ok()?;
            tokio::net::UnixStream::from_std(stream).ok().map(socket)
        } else {
            None
        }
    }
}
