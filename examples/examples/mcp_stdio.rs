//! The smallest Model Context Protocol server: an `#[rpc]` trait served
//! over stdio, the way MCP hosts launch servers. Each method is a tool of
//! the same name; its doc comment is the tool's description, its params
//! are the tool's arguments (with their JSON Schema), and
//! `#[rpc(mcp(...))]` adds the tool's title and hints.
//!
//! ```text
//! cargo build --release --example mcp_stdio --no-default-features --features mcp
//! ```
//!
//! Register the binary with a host as a stdio server. Claude Desktop
//! (`claude_desktop_config.json`):
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "text-tools": { "command": "/absolute/path/to/target/release/examples/mcp_stdio" }
//!   }
//! }
//! ```
//!
//! VS Code (`.vscode/mcp.json`):
//!
//! ```json
//! {
//!   "servers": {
//!     "text-tools": { "type": "stdio", "command": "/absolute/path/to/target/release/examples/mcp_stdio" }
//!   }
//! }
//! ```
//!
//! Claude Code: `claude mcp add text-tools -- /absolute/path/to/target/release/examples/mcp_stdio`.
//!
//! The host starts it, lists its tools and calls them (to try it without
//! a host: `npx @modelcontextprotocol/inspector
//! target/release/examples/mcp_stdio`). It serves until stdin ends (the
//! host closes it), answering the calls still running first. Stdout
//! carries only MCP messages: anything else a server writes (logs) goes
//! to stderr.

use rpc_runtime::mcp::McpServer;
use rpc_runtime::rpc;
use rpc_runtime::transport::stdio::Stdio;

/// Small tools for text: count its words, find a word in it.
#[rpc]
pub trait TextTools {
    /// Counts the words of `text` (runs of characters between whitespace).
    #[rpc(mcp(title = "Count words", read_only, idempotent, open_world = false))]
    fn count_words(&self, text: String) -> usize;

    /// The numbers (counted from 1) of the lines of `text` that contain
    /// `word`, in any case.
    #[rpc(mcp(title = "Find a word", read_only, idempotent, open_world = false))]
    fn find_word(
        &self,
        /// The text to search.
        text: String,
        /// The word to look for.
        word: String,
    ) -> Vec<usize>;
}

struct Tools;

impl TextTools for Tools {
    fn count_words(&self, text: String) -> usize {
        text.split_whitespace().count()
    }

    fn find_word(&self, text: String, word: String) -> Vec<usize> {
        let word = word.to_lowercase();
        text.lines().enumerate().filter(|(_, line)| line.to_lowercase().contains(&word)).map(|(n, _)| n + 1).collect()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    McpServer::new(Tools.into_rpc()).name("text-tools").into_server().serve(Stdio).await
}
