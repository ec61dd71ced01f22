//! Dispatch: the engine (JSON-RPC 2.0 rules), the router (method name to
//! handler), params decoding and the per-request context. Knows nothing of
//! transports or of the calling side.
//!
//! A protocol built on JSON-RPC 2.0 plugs in here: a [`Dialect`] narrows
//! what the engine accepts (ids, batches) and says how a request is
//! cancelled ([`Cancellation`](crate::Cancellation)); MCP is one, defined with this public API.

pub(crate) mod context;
pub(crate) mod dialect;
pub(crate) mod engine;
pub(crate) mod inflight;
#[cfg(feature = "metrics")]
pub mod metrics;
pub(crate) mod middleware;
pub(crate) mod params;
pub(crate) mod permissions;
pub(crate) mod router;
pub(crate) mod signal;
mod span;
mod strict;

pub use crate::spec::{MethodSpec, ParamSpec, ParamStructure, Requirement};
pub use dialect::Dialect;
pub use engine::{Engine, PendingResponse};
pub use middleware::{MethodCall, MethodResponse, MethodService, MethodServiceFuture};
pub use params::{named_to_positional, Params};
pub use permissions::Permissions;
pub use router::{
    encode, DuplicateMethod, IntoErrorObject, IntoMethodResult, MethodFuture, MethodOutcome, MethodResult,
};
