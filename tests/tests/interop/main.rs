//! Integration tests: interop (one test binary per area, so that
//! `cargo test --workspace` links a handful of binaries).

#[path = "../client_support/mod.rs"]
mod client_support;
#[path = "../common/mod.rs"]
mod common;

pub mod browser;
pub mod client_vscode;
pub mod interop_web;
pub mod lsp_neovim;
pub mod lsp_pygls;
pub mod subscriptions_python;
