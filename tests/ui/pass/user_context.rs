// Only the runtime's `Context` is injected: a bare `Context` (checked to be
// the runtime's) or the runtime's path to it. A user type named `Context`
// written with its path (`model::Context`, `crate::Context`,
// `self::Context`) is an ordinary param: decoded, sent by the client,
// listed by the catalog.
use rpc_runtime::serde_json::{self, json, Value};
use rpc_runtime::{dispatch::Engine, rpc, Limits, Router};

mod model {
    #[derive(rpc_runtime::serde::Serialize, rpc_runtime::serde::Deserialize, rpc_runtime::schemars::JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct Context {
        pub locale: String,
    }
}

/// The user's own, at the crate root.
#[derive(rpc_runtime::serde::Serialize, rpc_runtime::serde::Deserialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Context {
    pub verbose: bool,
}

#[rpc_runtime::rpc]
pub trait T {
    fn f(&self, context: model::Context) -> String;
}

mod nested {
    // Imported under the runtime's name: written `self::Context`, it is
    // the user's.
    use super::model::Context;

    #[rpc_runtime::rpc]
    pub trait Nested {
        fn g(&self, context: self::Context, cx: rpc_runtime::Context) -> String;
    }
}

#[rpc]
pub trait Rooted {
    fn h(&self, settings: crate::Context, cx: rpc_runtime::Context, again: ::rpc_runtime::Context) -> bool;
}

struct Impl;

impl T for Impl {
    fn f(&self, context: model::Context) -> String {
        context.locale
    }
}

impl nested::Nested for Impl {
    fn g(&self, context: model::Context, _: rpc_runtime::Context) -> String {
        context.locale
    }
}

impl Rooted for Impl {
    fn h(&self, settings: Context, _: rpc_runtime::Context, _: rpc_runtime::Context) -> bool {
        settings.verbose
    }
}

fn call(router: Router, request: Value) -> Value {
    let engine = Engine::new(router, Limits::default());
    let mut out = Vec::new();
    assert!(engine.process(request.to_string().as_bytes(), &rpc_runtime::Context::new(), &mut out).is_none());
    serde_json::from_slice(&out).unwrap()
}

fn main() {
    // The param is decoded...
    let answer = call(
        T::into_rpc(Impl),
        json!({"jsonrpc": "2.0", "method": "f", "params": {"context": {"locale": "fr"}}, "id": 1}),
    );
    assert_eq!(answer["result"], "fr");
    let answer = call(
        nested::Nested::into_rpc(Impl),
        json!({"jsonrpc": "2.0", "method": "g", "params": [{"locale": "de"}], "id": 1}),
    );
    assert_eq!(answer["result"], "de");
    let answer =
        call(Rooted::into_rpc(Impl), json!({"jsonrpc": "2.0", "method": "h", "params": [{"verbose": true}], "id": 1}));
    assert_eq!(answer["result"], true);
    // ...described...
    let spec = T::into_rpc(Impl).spec("f").unwrap();
    assert_eq!(spec.params.len(), 1);
    assert_eq!(spec.params[0].name, "context");
    assert_eq!(TCatalog::catalog().methods().next().unwrap().params.len(), 1);
    assert_eq!(nested::NestedCatalog::catalog().methods().next().unwrap().params.len(), 1);
    // ...and sent by the client.
    let _: fn(&TClient, model::Context) -> rpc_runtime::Call<String> = TClient::f;
    let _: fn(&nested::NestedClient, model::Context) -> rpc_runtime::Call<String> = nested::NestedClient::g;
    let _: fn(&RootedClient, Context) -> rpc_runtime::Call<bool> = RootedClient::h;
}
