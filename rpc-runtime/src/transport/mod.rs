//! Transports: the media a connection runs over, each a small piece that
//! turns its medium into whole messages and back ([`MessageSource`](crate::peer::MessageSource) and
//! [`MessageSink`](crate::peer::MessageSink)), and the server that accepts
//! connections on them.
//!
//! - `stream`: any byte stream with a [`Framing`](crate::Framing);
//! - `tcp`, `stdio`, `child`: byte streams from sockets, this
//!   process's stdio, a child process;
//! - `memory`: an in-process pair of message channels;
//! - `http` (feature `http`): the HTTP server (a tower service) and client;
//! - `ws` (feature `ws`): WebSocket messages (tokio-tungstenite's
//!   framing) as messages, server and client;
//! - `deadline`: the write timeout of network connections;
//! - `replies`: error answers made up for calls a transport lost;
//! - `tls` (feature `tls`): TLS with rustls, for framed TCP and (with
//!   `http`/`ws`) HTTPS and WSS, servers and clients;
//! - `nats` (feature `nats`): subjects and queue groups on a NATS broker;
//! - `server`: the server, its connection hook and connection controls;
//! - [`Listener`] and [`Connect`]: the one way to serve
//!   ([`Server::serve`](crate::Server::serve)) and the one way to connect
//!   ([`PeerBuilder::connect`](crate::PeerBuilder::connect)), each open to
//!   transports outside this crate.

pub(crate) mod child;
pub(crate) mod deadline;
pub(crate) mod hook;
#[cfg(feature = "http")]
pub mod http;
pub(crate) mod listener;
pub mod memory;
#[cfg(feature = "nats")]
pub mod nats;
#[cfg(any(feature = "http", feature = "ws"))]
pub(crate) mod replies;
pub(crate) mod server;
pub mod stdio;
pub mod stream;
pub mod tcp;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(feature = "ws")]
pub mod ws;

pub use hook::HookFuture;
pub use listener::{Connect, Listener, Serve, Shutdown, Transport, WithGracefulShutdown};
pub use server::DEFAULT_MAX_CONNECTIONS;
