//! The smallest server: one trait, one method, served over stdio (one
//! JSON-RPC message per line). It serves until stdin ends.
//!
//! ```text
//! echo '{"jsonrpc":"2.0","method":"hello","params":["world"],"id":1}' | cargo run --example hello
//! {"jsonrpc":"2.0","result":"Hello, world!","id":1}
//! ```
//!
//! It needs no cargo feature: `cargo run --example hello --no-default-features`
//! builds only the core of `rpc-runtime`.

use rpc_runtime::transport::stdio::Stdio;
use rpc_runtime::{rpc, Server};

/// A greeter. Doc comments become the method catalog's descriptions
/// (`rpc.discover`).
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

#[tokio::main]
async fn main() {
    let served = Server::new(Greeter.into_rpc()).serve(Stdio).await;
    if let Err(err) = &served {
        eprintln!("hello: {err}");
    }
    // Exit rather than return from main: tokio reads stdin on a blocking
    // thread, which would hold up the runtime's shutdown.
    std::process::exit(i32::from(served.is_err()));
}
