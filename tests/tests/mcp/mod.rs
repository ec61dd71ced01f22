//! MCP: the protocol in every revision, Streamable HTTP and its sessions,
//! permissions and OAuth, and the official SDKs and Inspector as clients.

pub mod mcp_features;
pub mod mcp_http;
pub mod mcp_http_session;
pub mod mcp_inspector;
pub mod mcp_live;
pub mod mcp_oauth;
pub mod mcp_permissions;
pub mod mcp_protocol;
pub mod mcp_python;
pub mod mcp_replicas;
pub mod mcp_typescript;
