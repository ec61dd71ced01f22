//! Integration, interop and trybuild tests for rpc-runtime; see `tests/`.

pub mod documented;
pub mod interop;
pub mod nats;
