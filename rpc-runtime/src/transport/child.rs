//! Child processes: a client that launches its server and talks to it over
//! the child's stdin and stdout, as LSP and MCP hosts do.

use std::io;

use tokio::process::{Child, Command};

use crate::peer::{Peer, PeerBuilder};

impl PeerBuilder {
    /// Spawns `command` as a child process and talks to it over its stdin
    /// and stdout, as LSP and MCP hosts do. Its stderr is inherited. The
    /// child is killed when the returned [`Child`] is dropped; closing the
    /// connection closes its stdin, which a well-behaved server takes as
    /// the signal to exit.
    pub fn spawn_child(self, command: &mut Command) -> io::Result<(Peer, Child)> {
        command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn()?;
        let missing = |what| io::Error::other(format!("the child's {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        Ok((self.start_stream(stdout, stdin), child))
    }
}
