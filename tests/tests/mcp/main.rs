//! Integration tests: mcp (one test binary per area, so that
//! `cargo test --workspace` links a handful of binaries).

#[path = "../client_support/mod.rs"]
mod client_support;
#[path = "../common/mod.rs"]
mod common;
#[path = "../web_support/mod.rs"]
mod web_support;

pub mod mcp_features;
pub mod mcp_http;
pub mod mcp_http_session;
pub mod mcp_inspector;
pub mod mcp_live;
pub mod mcp_oauth;
pub mod mcp_permissions;
pub mod mcp_protocol;
pub mod mcp_python;
pub mod mcp_typescript;
