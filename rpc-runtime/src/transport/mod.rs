#![doc = include_str!("../../docs/transport.md")]

pub(crate) mod child;
pub(crate) mod deadline;
pub(crate) mod hook;
#[cfg(feature = "http")]
pub mod http;
pub(crate) mod listener;
pub mod memory;
#[cfg(feature = "nats")]
pub mod nats;
pub(crate) mod reconnect;
pub(crate) mod redial;
pub(crate) mod replies;
pub(crate) mod server;
pub mod stdio;
pub mod stream;
pub mod tcp;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(unix)]
pub mod unix;
#[cfg(feature = "ws")]
pub mod ws;

pub use hook::HookFuture;
pub use listener::{Connect, Listener, Serve, Shutdown, Transport, WithGracefulShutdown};
pub use reconnect::Reconnect;
pub use server::DEFAULT_MAX_CONNECTIONS;
