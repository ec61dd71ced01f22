//! A web page calling the service from another origin: axum serves the
//! page on one port, the JSON-RPC service listens on another with CORS for
//! the page's origin (`Http::cors`, which also lets that origin open
//! WebSockets). The page calls `hello` with `fetch` (a JSON body, so the
//! browser sends a CORS preflight first) and over a `WebSocket`. Pages
//! from any other origin are refused with 403, both ways.
//!
//! It prints both URLs and serves until Ctrl-C (it does not stop by
//! itself): open the page's URL in a browser.
//!
//! ```text
//! cargo run --example browser
//! cargo run --example browser --no-default-features --features cors,ws,axum
//! ```

use axum::response::Html;
use axum::routing::get;
use rpc_runtime::transport::http::Http;
use rpc_runtime::{rpc, Server};

/// A greeter.
#[rpc]
pub trait Hello {
    /// Answers `Hello, {name}!`.
    fn hello(&self, name: String) -> String;
}

struct Greeter;

impl Hello for Greeter {
    fn hello(&self, name: String) -> String {
        format!("Hello, {name}!")
    }
}

/// The page; `RPC_ADDR` is replaced with the service's address.
const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>JSON-RPC from a web page</title>
<h1>JSON-RPC from another origin</h1>
<pre id="log"></pre>
<script>
const log = (line) => { document.getElementById("log").textContent += line + "\n"; };
const request = (name, id) => JSON.stringify({ jsonrpc: "2.0", method: "hello", params: [name], id });
(async () => {
  const response = await fetch("http://RPC_ADDR/", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: request("fetch", 1),
  });
  log("fetch -> " + JSON.stringify(await response.json()));
  const socket = new WebSocket("ws://RPC_ADDR/");
  socket.onopen = () => socket.send(request("WebSocket", 2));
  socket.onmessage = (event) => { log("WebSocket -> " + event.data); socket.close(); };
  socket.onerror = () => log("WebSocket failed");
})().catch((error) => log("fetch failed: " + error));
</script>
"#;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // The page's origin is its scheme, host and port, as the browser
    // sends it in `Origin`: open the page at exactly this address.
    let pages = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let page_origin = format!("http://{}", pages.local_addr()?);

    // The service on a port of its own, open to that one origin.
    let rpc = Http::default().cors([page_origin.as_str()]).bind("127.0.0.1:0").await?;
    let rpc_addr = rpc.local_addr()?;

    let page = PAGE.replace("RPC_ADDR", &rpc_addr.to_string());
    let app = axum::Router::new().route("/", get(move || std::future::ready(Html(page.clone()))));

    println!("page:    {page_origin}/  (open it in a browser)");
    println!("service: http://{rpc_addr}/ and ws://{rpc_addr}/");
    println!("Ctrl-C stops");

    let ctrl_c = || async {
        tokio::signal::ctrl_c().await.ok();
    };
    let server = Server::new(Greeter.into_rpc());
    let (pages, service) = tokio::join!(
        axum::serve(pages, app).with_graceful_shutdown(ctrl_c()),
        server.serve(rpc).with_graceful_shutdown(ctrl_c()),
    );
    pages.and(service)
}
