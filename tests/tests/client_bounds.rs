//! What the generated client does with types it cannot fully handle: params
//! without `Serialize`, results without `Deserialize`, borrowed results; and
//! a transport that fails.

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

/// A server-only trait: it compiles although its client cannot encode
/// `Query` or decode `Report`.
#[rpc]
pub trait Index {
    /// Takes a param the client cannot encode.
    fn search(&self, query: Query) -> usize;
    /// Returns a result the client cannot decode.
    fn report(&self, text: String) -> Report;
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
    fn version(&self) -> &'static str {
        "1.0"
    }
}

fn client() -> IndexClient {
    IndexClient::new(Peer::builder().in_process(Server::new(IndexImpl.into_rpc())))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_param_without_serialize_is_an_encode_error_not_a_panic() {
    let err = client().search(Query { text: "abc".into() }).await.unwrap_err();
    assert!(matches!(&err, ClientError::Encode(e) if e.to_string().contains("Serialize")), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_result_without_deserialize_is_a_decode_error_not_a_panic() {
    let err = client().report("abcd".into()).await.unwrap_err();
    assert!(matches!(&err, ClientError::Decode(e) if e.to_string().contains("Deserialize")), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_borrowed_result_decodes_into_its_owned_form() {
    let version: String = client().version().await.unwrap();
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
    let peer = Peer::builder().connect(BrokenReader, tokio::io::sink());
    peer.closed().await;
    let err = IndexClient::new(peer).version().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(e) if e.kind() == io::ErrorKind::ConnectionReset),
        "expected a transport error, got {err:?}"
    );
}
