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
        let source = FrameReader::new(tokio::io::stdin(), server.framing, server.engine.limits().max_message_size);
        let sink = StreamSink::new(tokio::io::stdout(), server.framing);
        server.serve_connection(source, sink, ConnectionInfo::new("stdio"), &shutdown).await
    }
}
