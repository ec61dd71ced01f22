//! The generated code is warning-free under strict lints, and calling a
//! `#[deprecated]` method from the generated dispatch does not warn.
//! (`missing_docs` only checks libraries: tests/src/documented.rs shows
//! that doc comments are kept.)

#![deny(warnings, unused_results, unused_qualifications, unreachable_pub)]
#![forbid(unsafe_code)]

use rpc_runtime::rpc;

/// A documented service.
#[rpc(namespace = "docs", rename_all = "camelCase")]
pub trait Documented {
    /// Adds two numbers.
    ///
    /// Second paragraph.
    fn add_numbers(&self, a: i64, b: i64) -> i64;

    /// Old name of `add_numbers`.
    #[deprecated(note = "use addNumbers")]
    fn add(&self, a: i64, b: i64) -> i64;

    /// Deprecated and async.
    #[deprecated]
    async fn old_async(&self) -> u8;

    /// A deprecated notification.
    #[deprecated]
    #[rpc(notification)]
    fn old_notification(&self);
}

struct Impl;

impl Documented for Impl {
    fn add_numbers(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    async fn old_async(&self) -> u8 {
        0
    }
    fn old_notification(&self) {}
}

fn main() {
    let router = Impl.into_rpc();
    assert_eq!(router.method_names(), ["docs_add", "docs_addNumbers", "docs_oldAsync", "docs_oldNotification"]);
}
