//! Third-party clients driving our binaries: vscode-jsonrpc, a headless
//! Chromium page, Python's `websockets`, Neovim and pygls.

pub mod browser;
pub mod client_vscode;
pub mod interop_web;
pub mod lsp_neovim;
pub mod lsp_pygls;
pub mod subscriptions_python;
pub mod trace_context;
