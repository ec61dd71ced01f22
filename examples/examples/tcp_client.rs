//! A typed client over TCP: the client `#[rpc]` generates for a trait
//! (`StoreClient` here) calls the service, sends a batch, and gets the
//! method's own error type back; then the server shuts down gracefully.
//! Server and client run in this process, on a port the system picks.
//!
//! ```text
//! cargo run --example tcp_client
//! cargo run --example tcp_client --no-default-features
//! ```
//!
//! It needs no cargo feature: TCP is in the core of `rpc-runtime`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rpc_runtime::transport::tcp::Tcp;
use rpc_runtime::{rpc, ClientError, Peer, RpcError, Server};

/// A key-value store.
#[rpc]
pub trait Store {
    /// Stores `value` under `key`; answers the value it replaced.
    fn put(&self, key: String, value: String) -> Option<String>;
    /// The value under `key`.
    fn get(&self, key: String) -> Result<String, StoreError>;
}

/// The store's own errors: a code and message per variant, its fields as
/// the error's `data`. The client decodes them back into this type.
#[derive(Debug, RpcError)]
pub enum StoreError {
    /// Nothing is stored under `key`.
    #[rpc(code = -32004, message = "Not found")]
    NotFound {
        /// The key asked for.
        key: String,
    },
}

#[derive(Default)]
struct Memory(Mutex<HashMap<String, String>>);

impl Store for Memory {
    fn put(&self, key: String, value: String) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(key, value)
    }

    fn get(&self, key: String) -> Result<String, StoreError> {
        let values = self.0.lock().unwrap_or_else(|e| e.into_inner());
        values.get(&key).cloned().ok_or(StoreError::NotFound { key })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // The server: any `tokio::net::TcpListener`, port 0 for a free one.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = Server::new(Memory::default().into_rpc());
    let serving = tokio::spawn(server.serve(listener).with_graceful_shutdown(async {
        stopped.await.ok();
    }));
    println!("serving on {addr}");

    // The client: a connection (`Peer`) with a timeout on every call, and
    // the typed client over it.
    let peer = Peer::builder().timeout(Duration::from_secs(5)).connect(Tcp::new(addr)).await?;
    let store = StoreClient::new(peer);

    let replaced = store.put("greeting".to_owned(), "hello".to_owned()).await?;
    println!("put greeting = hello (replaced {replaced:?})");
    println!("get greeting -> {:?}", store.get("greeting".to_owned()).await?);

    // Several calls in one JSON-RPC batch: one message each way.
    let mut batch = store.batch();
    let put = batch.put("farewell".to_owned(), "goodbye".to_owned());
    let greeting = batch.get("greeting".to_owned());
    let farewell = batch.get("farewell".to_owned());
    batch.send().await?;
    println!("batch -> {:?}, {:?}, {:?}", put.await?, greeting.await?, farewell.await?);

    // The method's own error comes back typed.
    match store.get("nothing".to_owned()).await {
        Err(ClientError::App(StoreError::NotFound { key })) => println!("get {key} -> StoreError::NotFound"),
        other => return Err(format!("expected StoreError::NotFound, got {other:?}").into()),
    }

    // Graceful shutdown: stop accepting, answer what is running, close
    // every connection, return.
    stop.send(()).ok();
    serving.await??;
    println!("server stopped");
    Ok(())
}
