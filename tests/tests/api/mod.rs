//! The macro's generated code, the engine's rules and the in-process API:
//! dispatch, params, catalogs, clients, subscriptions, tower layers.

pub mod blocking;
pub mod catalog;
pub mod catalog_calculator;
pub mod catalog_compat;
pub mod client;
pub mod client_bounds;
pub mod declarations;
pub mod default_unsubscribe;
pub mod engine_rules;
mod examples_run;
pub mod exclusive;
pub mod generic_traits;
pub mod hostile_input;
pub mod language_server;
pub mod macro_dispatch;
pub mod peers;
pub mod ports_http;
pub mod ports_middleware;
pub mod ports_proc_macro;
pub mod properties;
pub mod spec_examples;
pub mod subscriptions;
pub mod tower_layers;
pub mod user_context;
