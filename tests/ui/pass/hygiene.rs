//! Generated code names everything by absolute path: it compiles next to
//! user items that shadow the prelude and common std names, and inside a
//! `#![no_implicit_prelude]` module.

#![allow(dead_code, non_camel_case_types, non_snake_case, non_upper_case_globals, unused_macros)]

mod shadowed {
    use ::rpc_runtime::rpc;

    // Dummies with the names generated code could be tempted to use bare.
    pub struct Result;
    pub struct Option;
    pub struct Vec;
    pub struct String;
    pub struct Box;
    pub struct Arc;
    pub struct Future;
    pub struct Pin;
    pub struct Send;
    pub struct Sync;
    pub struct Sized;
    pub struct Clone;
    pub struct Default;
    pub struct Into;
    pub struct From;
    pub struct Serialize;
    pub struct Deserialize;
    pub struct Router;
    pub struct Context;
    pub struct Params;
    pub struct SubscriptionSink;
    pub trait Iterator {}
    pub fn Ok() {}
    pub fn Err() {}
    pub fn Some() {}
    pub const None: () = ();
    pub mod core {}
    pub mod std {}
    pub mod rpc_runtime {}
    pub mod serde {}
    pub mod serde_json {}
    macro_rules! unimplemented {
        () => {
            compile_error!("generated code used a bare `unimplemented!`")
        };
    }
    macro_rules! vec {
        () => {
            compile_error!("generated code used a bare `vec!`")
        };
    }

    /// A service whose types are spelled out, since the short names are taken.
    #[rpc(namespace = "h")]
    pub trait Shadowed {
        fn plain(&self, a: ::std::string::String, b: ::std::option::Option<u8>) -> ::std::vec::Vec<u8>;
        fn fallible(&self, a: u8) -> ::std::result::Result<u8, ::rpc_runtime::ErrorObject>;
        fn alias(&self) -> ::rpc_runtime::wire::RpcResult<()>;
        async fn asynchronous(&self, a: ::std::boxed::Box<u8>) -> u8;
        async fn asynchronous_fallible(&self) -> ::rpc_runtime::wire::RpcResult<u8>;
        fn context(&self, cx: ::rpc_runtime::Context) -> bool;
        #[rpc(notification)]
        fn notify(&self, a: u8);
        #[rpc(whole_params)]
        fn whole(&self, all: ::std::vec::Vec<u8>) -> usize;
        /// A user type whose name ends in `Result` is a plain return value.
        fn search(&self) -> SearchResult;
        /// A user type named `S`, the name the dispatch gave its service
        /// type parameter until it was shadowed by it.
        fn named_s(&self, s: S) -> u8;
        #[rpc(unsubscribe = "unsubscribe_ticks")]
        async fn ticks(&self, n: u8, sink: ::rpc_runtime::SubscriptionSink<u8>) -> ::rpc_runtime::wire::RpcResult<()>;
    }

    /// A generic service next to the shadowing names, with a blocking
    /// method.
    #[rpc(namespace = "g")]
    pub trait ShadowedGeneric<T, E>
    where
        T: ::core::clone::Clone,
    {
        fn get(&self, key: T) -> ::std::result::Result<::std::vec::Vec<T>, E>;
        #[rpc(blocking)]
        fn heavy(&self, key: T, cx: ::rpc_runtime::Context) -> T;
        #[rpc(unsubscribe = "stop")]
        async fn watch(&self, sink: ::rpc_runtime::SubscriptionSink<T>) -> ::std::result::Result<(), E>;
    }

    impl ShadowedGeneric<u8, ::rpc_runtime::ErrorObject> for Impl {
        fn get(&self, key: u8) -> ::std::result::Result<::std::vec::Vec<u8>, ::rpc_runtime::ErrorObject> {
            ::std::result::Result::Ok(::std::vec![key])
        }
        fn heavy(&self, key: u8, _: ::rpc_runtime::Context) -> u8 {
            key
        }
        async fn watch(
            &self,
            _: ::rpc_runtime::SubscriptionSink<u8>,
        ) -> ::std::result::Result<(), ::rpc_runtime::ErrorObject> {
            ::std::result::Result::Ok(())
        }
    }

    #[derive(
        ::rpc_runtime::serde::Serialize, ::rpc_runtime::serde::Deserialize, ::rpc_runtime::schemars::JsonSchema,
    )]
    #[serde(crate = "::rpc_runtime::serde")]
    #[schemars(crate = "::rpc_runtime::schemars")]
    pub struct SearchResult {
        pub ok: bool,
    }

    #[derive(
        ::rpc_runtime::serde::Serialize, ::rpc_runtime::serde::Deserialize, ::rpc_runtime::schemars::JsonSchema,
    )]
    #[serde(crate = "::rpc_runtime::serde")]
    #[schemars(crate = "::rpc_runtime::schemars")]
    pub struct S {
        pub x: u8,
    }

    pub struct Impl;

    impl Shadowed for Impl {
        fn plain(&self, a: ::std::string::String, _: ::std::option::Option<u8>) -> ::std::vec::Vec<u8> {
            a.into_bytes()
        }
        fn fallible(&self, a: u8) -> ::std::result::Result<u8, ::rpc_runtime::ErrorObject> {
            ::std::result::Result::Ok(a)
        }
        fn alias(&self) -> ::rpc_runtime::wire::RpcResult<()> {
            ::std::result::Result::Ok(())
        }
        async fn asynchronous(&self, a: ::std::boxed::Box<u8>) -> u8 {
            *a
        }
        async fn asynchronous_fallible(&self) -> ::rpc_runtime::wire::RpcResult<u8> {
            ::std::result::Result::Ok(1)
        }
        fn context(&self, _: ::rpc_runtime::Context) -> bool {
            true
        }
        fn notify(&self, _: u8) {}
        fn whole(&self, all: ::std::vec::Vec<u8>) -> usize {
            all.len()
        }
        fn search(&self) -> SearchResult {
            SearchResult { ok: true }
        }
        fn named_s(&self, s: S) -> u8 {
            s.x
        }
        async fn ticks(&self, n: u8, sink: ::rpc_runtime::SubscriptionSink<u8>) -> ::rpc_runtime::wire::RpcResult<()> {
            sink.send(n).await?;
            ::std::result::Result::Ok(())
        }
    }
}

mod no_prelude {
    #![no_implicit_prelude]

    use ::rpc_runtime::rpc;

    /// A service in a module without the prelude.
    #[rpc(rename_all = "camelCase")]
    pub trait Bare {
        fn plain(&self, a: ::std::string::String, b: ::std::option::Option<u8>) -> ::std::vec::Vec<u8>;
        fn fallible(&self) -> ::std::result::Result<u8, ::rpc_runtime::ErrorObject>;
        async fn asynchronous(&self, a: u8) -> ::rpc_runtime::wire::RpcResult<u8>;
        async fn asynchronous_plain(&self) -> u8;
        fn with_context(&self, cx: ::rpc_runtime::Context);
        #[rpc(notification)]
        fn notify(&self);
        #[rpc(whole_params)]
        fn whole(&self, all: ::std::vec::Vec<u8>) -> usize;
        /// Provided methods keep working too.
        async fn provided(&self) -> u8 {
            1
        }
        #[rpc(unsubscribe = "stopTicks")]
        async fn ticks(&self, sink: ::rpc_runtime::SubscriptionSink<u8>);
    }

    /// A generic service without the prelude.
    #[rpc]
    pub trait BareGeneric<T: ::core::marker::Copy> {
        fn get(&self, key: ::std::option::Option<T>) -> ::std::result::Result<T, BareError>;
        #[rpc(blocking)]
        fn heavy(&self) -> ::rpc_runtime::wire::RpcResult<::std::vec::Vec<T>>;
        #[rpc(blocking, notification)]
        fn forget(&self, key: T);
    }

    impl BareGeneric<u8> for Impl {
        fn get(&self, key: ::std::option::Option<u8>) -> ::std::result::Result<u8, BareError> {
            ::std::option::Option::ok_or(key, BareError::Unit)
        }
        fn heavy(&self) -> ::rpc_runtime::wire::RpcResult<::std::vec::Vec<u8>> {
            ::std::result::Result::Ok(::std::vec::Vec::new())
        }
        fn forget(&self, _: u8) {}
    }

    /// An error declared without the prelude: its `Display` and `Error`
    /// too name everything by absolute path.
    #[derive(::std::fmt::Debug, ::rpc_runtime::RpcError)]
    pub enum BareError {
        #[rpc(code = -32001, message = "Named")]
        Named { code: u8 },
        #[rpc(code = -32002, message = "Tuple")]
        Tuple(u8),
        #[rpc(code = -32003, message = "Unit")]
        Unit,
    }

    pub struct Impl;

    impl Bare for Impl {
        fn plain(&self, a: ::std::string::String, _: ::std::option::Option<u8>) -> ::std::vec::Vec<u8> {
            a.into_bytes()
        }
        fn fallible(&self) -> ::std::result::Result<u8, ::rpc_runtime::ErrorObject> {
            ::std::result::Result::Ok(1)
        }
        async fn asynchronous(&self, a: u8) -> ::rpc_runtime::wire::RpcResult<u8> {
            ::std::result::Result::Ok(a)
        }
        async fn asynchronous_plain(&self) -> u8 {
            0
        }
        fn with_context(&self, _: ::rpc_runtime::Context) {}
        fn notify(&self) {}
        fn whole(&self, all: ::std::vec::Vec<u8>) -> usize {
            all.len()
        }
        async fn ticks(&self, sink: ::rpc_runtime::SubscriptionSink<u8>) {
            let _ = sink.send(1).await;
        }
    }
}

use no_prelude::Bare;
use shadowed::Shadowed;

fn main() {
    let router = <shadowed::Impl as shadowed::ShadowedGeneric<u8, rpc_runtime::ErrorObject>>::into_rpc(shadowed::Impl);
    assert_eq!(router.method_names(), ["g_get", "g_heavy", "g_stop", "g_watch"]);
    let _ = shadowed::ShadowedGenericClient::<u8, rpc_runtime::ErrorObject>::new;
    let router = <no_prelude::Impl as no_prelude::BareGeneric<u8>>::into_rpc(no_prelude::Impl);
    assert_eq!(router.method_names(), ["forget", "get", "heavy"]);
    let _ = no_prelude::BareGenericCatalog::<u8>::catalog();

    let router = shadowed::Impl.into_rpc();
    assert_eq!(router.method_names().len(), 12);
    assert!(router.spec("h_unsubscribe_ticks").is_some());
    assert!(router.spec("h_plain").unwrap().params[1].optional);

    let errors =
        [no_prelude::BareError::Named { code: 1 }, no_prelude::BareError::Tuple(2), no_prelude::BareError::Unit];
    let shown: Vec<String> = errors.iter().map(|error| (error as &dyn std::error::Error).to_string()).collect();
    assert_eq!(shown, ["Named", "Tuple", "Unit"]);

    let router = no_prelude::Impl.into_rpc();
    assert_eq!(
        router.method_names(),
        [
            "asynchronous",
            "asynchronousPlain",
            "fallible",
            "notify",
            "plain",
            "provided",
            "stopTicks",
            "ticks",
            "whole",
            "withContext"
        ]
    );
}
