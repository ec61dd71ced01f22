//! Transports: the media a connection runs over, each a small piece that
//! turns its medium into whole messages and back ([`MessageSource`](crate::MessageSource) and
//! [`MessageSink`](crate::MessageSink)), and the server that accepts
//! connections on them.
//!
//! - `stream`: any byte stream with a [`Framing`](crate::Framing);
//! - `tcp`, `stdio`, `child`: byte streams from sockets, this
//!   process's stdio, a child process;
//! - `memory`: an in-process pair of message channels;
//! - `nats` (feature `nats`): subjects and queue groups on a NATS broker;
//! - `server`: the server, its connection hook and connection controls.

pub(crate) mod child;
pub(crate) mod hook;
pub(crate) mod memory;
#[cfg(feature = "nats")]
pub(crate) mod nats;
pub(crate) mod server;
pub(crate) mod stdio;
pub(crate) mod stream;
pub(crate) mod tcp;
