//! The integration tests, in one binary: its tests run side by side, so
//! the ones that wait on another process (a server, an SDK, a browser)
//! overlap with the ones that keep the CPU busy, and the helpers below are
//! built and linked once.
//!
//! One area per module; run one with a filter, such as
//! `cargo test -p tests --test integration transports::faults::`.

mod catalog_util;
mod client_support;
mod common;
mod measure;
mod web_support;

pub mod api;
pub mod interop;
pub mod mcp;
pub mod transports;
