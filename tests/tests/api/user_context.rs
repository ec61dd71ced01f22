//! A user's type named `Context` is an ordinary param: decoded by the
//! server, sent by the client, listed by the catalog. Only the runtime's
//! `Context` (written `Context`, `rpc_runtime::Context` or
//! `::rpc_runtime::Context`) is injected; see `tests/ui` for a bare
//! `Context` that is the user's (a compile error that names the fix).

use rpc_runtime::{rpc, Context, Peer, Server};
use serde_json::{json, Value};

/// The user's model, with a type of the runtime's name.
pub mod model {
    use rpc_runtime::schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The caller's settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct Context {
        /// A language tag.
        pub locale: String,
    }
}

/// Greets in the caller's language.
#[rpc]
pub trait Greeter {
    /// The user's `Context` is a param like any other.
    fn greet(&self, context: model::Context) -> String;

    /// The user's and the runtime's, side by side.
    fn greet_from(&self, context: model::Context, cx: Context) -> String;

    /// The runtime's, by its path.
    fn connected(&self, cx: rpc_runtime::Context, other: ::rpc_runtime::Context) -> bool;
}

#[derive(Debug)]
struct Polyglot;

impl Greeter for Polyglot {
    fn greet(&self, context: model::Context) -> String {
        match context.locale.as_str() {
            "fr" => "bonjour".into(),
            _ => "hello".into(),
        }
    }

    fn greet_from(&self, context: model::Context, cx: Context) -> String {
        format!("{} via {}", self.greet(context), if cx.is_cancelled() { "nothing" } else { "a connection" })
    }

    fn connected(&self, cx: rpc_runtime::Context, other: ::rpc_runtime::Context) -> bool {
        !cx.is_cancelled() && !other.is_cancelled()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_type_named_context_is_decoded_and_sent() {
    let peer = Peer::builder().connect(Server::new(Polyglot.into_rpc())).await.unwrap();
    let client = GreeterClient::new(peer);
    let french = model::Context { locale: "fr".into() };
    assert_eq!(client.greet(french.clone()).await.unwrap(), "bonjour");
    assert_eq!(client.greet(model::Context { locale: "en".into() }).await.unwrap(), "hello");
    assert_eq!(client.greet_from(french).await.unwrap(), "bonjour via a connection");
    assert!(client.connected().await.unwrap());
    // On the wire, as any client sends it: a param named `context`.
    let answer: String = client.peer().call("greet", json!({"context": {"locale": "fr"}})).await.unwrap();
    assert_eq!(answer, "bonjour");
    let answer: String = client.peer().call("greet_from", json!([{"locale": "fr"}])).await.unwrap();
    assert_eq!(answer, "bonjour via a connection");
    // Missing, it is a missing param.
    let err = client.peer().call::<String, _>("greet", json!({})).await.unwrap_err();
    assert_eq!(err.server_error().map(rpc_runtime::ErrorObject::code), Some(rpc_runtime::wire::INVALID_PARAMS));
}

#[test]
fn the_catalog_lists_the_user_context_and_not_the_runtime_one() {
    let document = serde_json::to_value(GreeterCatalog::catalog().document()).unwrap();
    let params = |name: &str| -> Vec<Value> {
        let methods = document["methods"].as_array().unwrap();
        let method = methods.iter().find(|method| method["name"] == name).unwrap();
        method["params"].as_array().unwrap().iter().map(|param| param["name"].clone()).collect()
    };
    assert_eq!(params("greet"), [json!("context")]);
    assert_eq!(params("greet_from"), [json!("context")]);
    assert!(params("connected").is_empty());
    assert_eq!(document["components"]["schemas"]["Context"]["properties"]["locale"]["type"], "string");
}
