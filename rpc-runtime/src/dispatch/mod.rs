//! Dispatch: the engine (JSON-RPC 2.0 rules), the router (method name to
//! handler), params decoding and the per-request context. Knows nothing of
//! transports or of the calling side.

pub(crate) mod context;
pub(crate) mod engine;
pub(crate) mod inflight;
pub(crate) mod middleware;
pub(crate) mod params;
pub(crate) mod permissions;
pub(crate) mod router;
pub(crate) mod signal;
mod strict;
