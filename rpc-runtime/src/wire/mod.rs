//! The wire: JSON-RPC 2.0 error objects and the framing codecs that turn a
//! byte stream into messages and back. Knows nothing of methods or
//! connections.

pub(crate) mod error;
pub(crate) mod framing;
pub(crate) mod lexical;
pub(crate) mod message;
pub(crate) mod response;
pub(crate) mod words;

pub use error::*;
pub(crate) use framing::BorrowedFrame;
pub use framing::{Frame, FrameReader, Framing};
