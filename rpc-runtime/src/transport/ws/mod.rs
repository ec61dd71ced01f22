#![doc = include_str!("../../../docs/transport-ws.md")]

// One job per file: the server's upgrade (`server`), the client and its
// handshake (`client`), the socket both halves share (`socket`), the
// receiving and sending halves (`source`, `sink`), pings (`keepalive`)
// and reconnecting (`reconnect`). The `Http` setters for WebSocket are
// with `Http`, in `transport::http`.
mod client;
mod keepalive;
mod reconnect;
mod server;
mod sink;
mod socket;
mod source;

pub use crate::transport::reconnect::Reconnect;
pub use client::WsConnect;
pub(crate) use server::{WsServerOptions, is_upgrade, upgrade};
pub use sink::WsSink;
pub use source::WsSource;
