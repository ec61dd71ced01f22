//! One small service implemented three ways, for side-by-side benchmarks:
//!
//! - [`ours`]: `#[rpc]` from `rpc-runtime`, driven through [`rpc_runtime::dispatch::Engine`];
//! - [`jsonrpsee_impl`]: jsonrpsee 0.26's `#[rpc(server)]`, driven through
//!   `RpcModule::raw_json_request`;
//! - [`handwritten`]: the practical floor, a serde_json handler that parses
//!   the envelope with borrowed `RawValue` params, matches the method name
//!   and writes the response into a reused buffer.
//!
//! The service: `add(a, b)`, `version()` (no params) and `echo(record)`
//! (a ~1 KB object decoded into a struct and encoded back).

use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

use serde::{Deserialize, Serialize};

pub mod cases;
pub mod feed;
pub mod handwritten;
pub mod jsonrpsee_impl;
pub mod ours;
pub mod process;
pub mod servers;
pub mod stats;

/// The version number `version()` answers with.
pub const VERSION: u32 = 7;

/// The ~1 KB object of the echo case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, rpc_runtime::schemars::JsonSchema)]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Record {
    /// A numeric key.
    pub id: u64,
    /// A name.
    pub name: String,
    /// Free-form labels.
    pub tags: Vec<String>,
    /// The bulk of the payload.
    pub items: Vec<Item>,
}

/// One entry of a [`Record`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, rpc_runtime::schemars::JsonSchema)]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Item {
    /// The entry's key.
    pub key: String,
    /// A number.
    pub value: f64,
    /// A flag.
    pub enabled: bool,
}

/// A record whose JSON encoding is about 1 KB.
pub fn sample_record() -> Record {
    Record {
        id: 42,
        name: "benchmark record".to_owned(),
        tags: vec!["alpha".into(), "beta".into(), "gamma".into()],
        items: (0..16)
            .map(|i| Item { key: format!("item-number-{i:02}"), value: i as f64 * 1.25, enabled: i % 2 == 0 })
            .collect(),
    }
}

/// Runs a future that never waits on I/O (every method here is
/// synchronous) to completion on the current thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::yield_now();
    }
}
