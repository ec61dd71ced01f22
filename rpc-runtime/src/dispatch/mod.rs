#![doc = include_str!("../../docs/dispatch.md")]

pub(crate) mod context;
pub(crate) mod dialect;
pub(crate) mod engine;
pub(crate) mod inflight;
pub(crate) mod limits;
#[cfg(feature = "metrics")]
pub mod metrics;
pub(crate) mod middleware;
pub(crate) mod order;
pub(crate) mod params;
pub(crate) mod pending;
pub(crate) mod permissions;
pub(crate) mod router;
pub(crate) mod signal;
mod span;
mod strict;
mod validate;

pub use crate::spec::{MethodSpec, ParamSpec, ParamStructure, Requirement};
pub use dialect::Dialect;
pub use engine::Engine;
pub use middleware::{MethodCall, MethodResponse, MethodService, MethodServiceFuture};
pub use params::{Params, named_to_positional};
pub use pending::PendingResponse;
pub use permissions::Permissions;
pub use router::{
    DuplicateMethod, IntoErrorObject, IntoMethodResult, MethodFuture, MethodOutcome, MethodResult, encode,
};
