//! The service with `rpc-runtime`'s `#[rpc]`.

use rpc_runtime::{dispatch::Engine, rpc, Context, Limits, Router};

use crate::{Record, VERSION};

/// The benchmark service.
#[rpc]
pub trait BenchApi {
    /// `a + b`.
    fn add(&self, a: i64, b: i64) -> i64;
    /// A constant; takes no params.
    fn version(&self) -> u32;
    /// Returns `record` (decoded and encoded again).
    fn echo(&self, record: Record) -> Record;
}

/// The implementation.
pub struct Service;

impl BenchApi for Service {
    fn add(&self, a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    fn version(&self) -> u32 {
        VERSION
    }
    fn echo(&self, record: Record) -> Record {
        record
    }
}

/// The router for [`Service`].
pub fn router() -> Router {
    Service.into_rpc()
}

/// An engine for [`Service`] with default limits.
pub fn engine() -> Engine {
    Engine::new(router(), Limits::default())
}

/// Handles one message into `out` (cleared first). Every method here is
/// synchronous, so the answer is always ready; the async path is taken
/// anyway should that ever change.
pub fn call(engine: &Engine, cx: &Context, message: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if let Some(pending) = engine.process(message, cx, out) {
        *out = crate::block_on(pending.run());
    }
}
