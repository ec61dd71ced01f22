//! The service with jsonrpsee 0.26's `#[rpc(server)]`, called in process
//! through `RpcModule::raw_json_request`.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;
use jsonrpsee::RpcModule;
use serde_json::value::RawValue;

use crate::{Record, VERSION};

/// The benchmark service.
#[rpc(server)]
pub trait BenchApi {
    /// `a + b`.
    #[method(name = "add")]
    fn add(&self, a: i64, b: i64) -> RpcResult<i64>;
    /// A constant; takes no params.
    #[method(name = "version")]
    fn version(&self) -> RpcResult<u32>;
    /// Returns `record` (decoded and encoded again).
    #[method(name = "echo")]
    fn echo(&self, record: Record) -> RpcResult<Record>;
}

/// The implementation.
pub struct Service;

impl BenchApiServer for Service {
    fn add(&self, a: i64, b: i64) -> RpcResult<i64> {
        Ok(a.wrapping_add(b))
    }
    fn version(&self) -> RpcResult<u32> {
        Ok(VERSION)
    }
    fn echo(&self, record: Record) -> RpcResult<Record> {
        Ok(record)
    }
}

/// The module for [`Service`].
pub fn module() -> RpcModule<Service> {
    Service.into_rpc()
}

/// Handles one single (non-batch) request; the response is jsonrpsee's own
/// allocation.
pub fn call(module: &RpcModule<Service>, request: &str) -> Box<RawValue> {
    match crate::block_on(module.raw_json_request(request, 1)) {
        Ok((response, _subscriptions)) => response,
        Err(err) => panic!("jsonrpsee rejected a benchmark request: {err}"),
    }
}

/// `raw_json_request` takes single requests only (batches are split by
/// jsonrpsee's server crate, which is not in process). A batch is split
/// here with borrowed `RawValue`s, each entry called, and the responses
/// joined into `out`.
pub fn call_batch(module: &RpcModule<Service>, batch: &str, out: &mut Vec<u8>) {
    out.clear();
    let entries: Vec<&RawValue> = serde_json::from_str(batch).expect("benchmark batch is valid JSON");
    out.push(b'[');
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(call(module, entry.get()).get().as_bytes());
    }
    out.push(b']');
}
