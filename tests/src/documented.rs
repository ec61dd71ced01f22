//! A `#[rpc]` trait in a library under `#![deny(missing_docs)]`: the lint
//! only looks at a library's public items, so this module (not a trybuild
//! case, which is a binary) is what shows that the macro keeps the doc
//! comments of the trait and its methods and documents what it adds.

#![deny(missing_docs)]

use rpc_runtime::{rpc, wire::RpcResult, Context};

/// A documented service.
#[rpc(namespace = "docs", rename_all = "camelCase")]
pub trait Documented {
    /// Adds two numbers.
    fn add_numbers(&self, a: i64, b: i64) -> i64;

    /// Adds two numbers, later.
    async fn add_later(&self, a: i64, b: i64) -> RpcResult<i64>;

    /// Old name of `add_numbers`.
    #[deprecated(note = "use addNumbers")]
    fn add(&self, a: i64, b: i64) -> i64;

    /// Logs a value.
    #[rpc(notification)]
    fn log(&self, cx: Context, value: String);

    /// A provided method.
    fn version(&self) -> u32 {
        1
    }
}

/// A documented generic service: its client, batch and catalog are
/// generic too, and documented likewise.
#[rpc(namespace = "generic")]
pub trait DocumentedGeneric<Item> {
    /// Stores an item.
    fn put(&self, item: Item) -> bool;

    /// Reads every item, on the blocking pool.
    #[rpc(blocking)]
    fn all(&self) -> Vec<Item>;
}
