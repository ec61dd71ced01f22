//! What the generated client does with the types it handles: a
//! `server_only` trait whose types the client could not encode or decode
//! (served, called untyped), borrowed results; and a transport that fails.
//! A client over types it cannot handle is a compile error
//! (`ui/fail/types/client_*.rs`).

use std::io;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{rpc, ClientError, Peer, Server};
use tokio::io::{AsyncRead, ReadBuf};

/// Decodable only: a server-side param type.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Query {
    pub text: String,
}

/// Encodable only: a server-side result type.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Report {
    pub length: usize,
}

/// A server-only trait: it compiles although a client could not encode
/// `Query` or decode `Report`, because none is generated.
#[rpc(server_only)]
pub trait Index {
    /// Takes a param a client could not encode.
    fn search(&self, query: Query) -> usize;
    /// Returns a result a client could not decode.
    fn report(&self, text: String) -> Report;
}

/// A trait with a client: a borrowed result decodes as its owned form.
#[rpc]
pub trait Versioned {
    /// Returns a borrowed result; the client decodes a `String`.
    fn version(&self) -> &'static str;
}

struct IndexImpl;

impl Index for IndexImpl {
    fn search(&self, query: Query) -> usize {
        query.text.len()
    }
    fn report(&self, text: String) -> Report {
        Report { length: text.len() }
    }
}

impl Versioned for IndexImpl {
    fn version(&self) -> &'static str {
        "1.0"
    }
}

async fn peer() -> Peer {
    let mut router = Index::into_rpc(IndexImpl);
    router.merge(Versioned::into_rpc(IndexImpl)).unwrap();
    Peer::builder().connect(Server::new(router)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_only_trait_serves_its_methods() {
    let peer = peer().await;
    let found: usize = peer.call("search", serde_json::json!({"query": {"text": "abc"}})).await.unwrap();
    assert_eq!(found, 3);
    let report: serde_json::Value = peer.call("report", serde_json::json!(["abcd"])).await.unwrap();
    assert_eq!(report, serde_json::json!({"length": 4}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_borrowed_result_decodes_into_its_owned_form() {
    let version: String = VersionedClient::new(peer().await).version().await.unwrap();
    assert_eq!(version, "1.0");
}

/// A reader whose stream breaks at once.
struct BrokenReader;

impl AsyncRead for BrokenReader {
    fn poll_read(self: Pin<&mut Self>, _: &mut TaskContext<'_>, _: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Err(io::Error::new(io::ErrorKind::ConnectionReset, "connection reset by the test")))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_transport_fails_calls_with_a_transport_error() {
    let peer = Peer::builder()
        .connect(rpc_runtime::transport::stream::Stream::new(BrokenReader, tokio::io::sink()))
        .await
        .unwrap();
    peer.closed().await;
    let err = VersionedClient::new(peer).version().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(e) if e.kind() == io::ErrorKind::ConnectionReset),
        "expected a transport error, got {err:?}"
    );
}
