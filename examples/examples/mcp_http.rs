//! A Model Context Protocol server over Streamable HTTP: the same
//! `McpServer` as over stdio, served on an HTTP endpoint that hosts
//! connect to by URL (one `POST` per message; sessions, event streams for
//! progress and both eras of MCP are handled by `McpHttp`).
//!
//! ```text
//! cargo run --example mcp_http --no-default-features --features mcp,http [-- ADDR]
//! ```
//!
//! It listens on ADDR (default `127.0.0.1:8080`; port 0 picks a free one),
//! prints the endpoint's URL and how to register it, and serves until
//! Ctrl-C, then answers the calls still running and exits. Register it
//! with Claude Code:
//!
//! ```text
//! claude mcp add --transport http units http://127.0.0.1:8080/mcp
//! ```
//!
//! or in VS Code's `.vscode/mcp.json`:
//!
//! ```json
//! { "servers": { "units": { "type": "http", "url": "http://127.0.0.1:8080/mcp" } } }
//! ```
//!
//! To see the first exchange by hand (the answer's `Mcp-Session-Id`
//! header names the session the next requests must carry):
//!
//! ```text
//! curl -si http://127.0.0.1:8080/mcp -H 'content-type: application/json' \
//!      -H 'accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"initialize",
//!      "params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
//! ```
//!
//! The listener serves every path; to give it one (`/mcp`) beside other
//! routes, mount `McpHttp::default().service(&server)` in axum. A server
//! on a loopback address answers only requests for a loopback host name
//! (against DNS rebinding); `McpHttp::http` takes other HTTP settings.

use rpc_runtime::mcp::{McpHttp, McpServer};
use rpc_runtime::rpc;

/// Converts between metric and imperial units.
#[rpc]
pub trait Units {
    /// Degrees Celsius in degrees Fahrenheit.
    #[rpc(mcp(title = "Celsius to Fahrenheit", read_only, idempotent, open_world = false))]
    fn celsius_to_fahrenheit(&self, celsius: f64) -> f64;

    /// Kilometres in miles.
    #[rpc(mcp(title = "Kilometres to miles", read_only, idempotent, open_world = false))]
    fn km_to_miles(&self, km: f64) -> f64;
}

struct Converter;

impl Units for Converter {
    fn celsius_to_fahrenheit(&self, celsius: f64) -> f64 {
        celsius * 9.0 / 5.0 + 32.0
    }

    fn km_to_miles(&self, km: f64) -> f64 {
        km / 1.609_344
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = McpServer::new(Converter.into_rpc()).name("units").into_server();
    let listener = McpHttp::default().bind(&addr).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    eprintln!("listening on {url}");
    eprintln!("Claude Code: claude mcp add --transport http units {url}");
    eprintln!(r#"VS Code (.vscode/mcp.json): {{ "servers": {{ "units": {{ "type": "http", "url": "{url}" }} }} }}"#);
    eprintln!("Ctrl-C stops");
    server
        .serve(listener)
        .with_graceful_shutdown(async {
            tokio::signal::ctrl_c().await.ok();
        })
        .await
}
