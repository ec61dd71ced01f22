//! Transports: the media a connection runs over, and the server that
//! accepts connections.

pub(crate) mod server;
