//! Stdio: a server on this process's stdin and stdout, as LSP and MCP
//! servers run when a host launches them.

use std::future::Future;
use std::io;
use std::sync::Arc;

use super::server::{until_shutdown, ConnectionInfo, Server};
use super::stream::StreamSink;
use crate::dispatch::context::Context;
use crate::dispatch::signal::Signal;
use crate::peer::Controls;
use crate::wire::FrameReader;

impl Server {
    /// Serves over this process's stdin and stdout until stdin ends. Only
    /// protocol messages are written to stdout. The connection hook sees a
    /// connection of transport `"stdio"`; if it refuses, this returns an
    /// error of kind [`io::ErrorKind::PermissionDenied`].
    ///
    /// The client closing the connection (even while answers are on their
    /// way) is the normal end, not an error.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.serve_stdio_with_shutdown(std::future::pending()).await
    }

    /// [`Server::serve_stdio`] until `shutdown` completes; then stops
    /// reading, lets the requests already received finish and be answered,
    /// and returns.
    pub async fn serve_stdio_with_shutdown(&self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let drain = Arc::new(Signal::default());
        let source = FrameReader::new(tokio::io::stdin(), self.framing, self.engine.limits().max_message_size);
        let sink = StreamSink::new(tokio::io::stdout(), self.framing);
        let controls = Controls { drain: Some(Arc::clone(&drain)), ..Controls::default() };
        let info = ConnectionInfo::new("stdio");
        let serve = self.serve_connection(source, sink, &info, Context::new(), controls);
        until_shutdown(serve, shutdown, &drain).await
    }
}
