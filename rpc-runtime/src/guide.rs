//! Guides: how to do things that span several modules. Each page is
//! doc-tested; the API reference is in the modules themselves.
//!
//! - [`subscriptions`]: streaming items to a caller, on both sides: the
//!   wire format, setup, unsubscribing, limits and slow readers, and a
//!   filtering subscription that ends when its client leaves;
//! - [`production`]: every timeout and its default, health checks, what
//!   to put in front of a server, log levels and one span per call;
//! - [`conformance`]: the JSON-RPC 2.0 rules the engine applies and how
//!   params are decoded, exactly, with wire transcripts;
//! - [`porting`]: from jsonrpsee, rmcp and tower-lsp, each construct and
//!   what it becomes here, side by side;
//! - [`language_server`] (feature `lsp`): writing a language server with
//!   `lsp-types`: the editor's calls and yours, edits in order
//!   (`exclusive`), the lifecycle and stdio (`LspServer`), testing in
//!   process, and an editor's setup;
//! - [`across_machines`]: a daemon's Unix socket and who may connect,
//!   clients that reconnect and make their subscriptions again, replicas
//!   behind one name, and what does not cross machines yet;
//! - [`protecting`]: who may call an HTTP service and what each caller
//!   may call, for plain JSON-RPC and MCP: a connection hook with tokens
//!   of your own, or an OAuth 2.1 resource server (feature `oauth`) with
//!   JWTs or opaque tokens, scopes as permissions, what clients see, axum,
//!   and operations.

#[doc = include_str!("../docs/subscriptions.md")]
pub mod subscriptions {}

#[doc = include_str!("../docs/production.md")]
pub mod production {}

#[doc = include_str!("../docs/conformance.md")]
pub mod conformance {}

#[doc = include_str!("../docs/porting.md")]
pub mod porting {}

#[cfg(feature = "lsp")]
#[doc = include_str!("../docs/language_server.md")]
pub mod language_server {}

#[doc = include_str!("../docs/protecting.md")]
pub mod protecting {}

#[doc = include_str!("../docs/across_machines.md")]
pub mod across_machines {}
