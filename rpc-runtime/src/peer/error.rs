//! How a call ends when it produces no value: [`ClientError`], and
//! [`FromErrorObject`], which turns the error object a server sent back
//! into the method's own error type.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::wire::error::ErrorObject;

/// Why a call did not produce a value.
///
/// `E` is the method's own error type (from `Result<T, E>` in the trait);
/// an error object the server sent is turned into an `E` when `E`
/// implements [`FromErrorObject`] and recognises it ([`ClientError::App`]),
/// and kept as is otherwise ([`ClientError::Server`]).
///
/// It is a [`std::error::Error`] whenever `E` is `Debug + Display` (every
/// `#[derive(RpcError)]` type is, and so is [`ErrorObject`]), so `?` moves
/// it into a `Box<dyn Error + Send + Sync>` or an `anyhow::Error`. Its
/// `Display` includes the inner error's, so it reports no `source`.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError<E = ErrorObject> {
    /// The params failed to serialize, or did not serialize to an array or
    /// an object. Nothing was sent.
    Encode(serde_json::Error),
    /// The transport failed (a write or read error); the connection is
    /// closed.
    Transport(Arc<std::io::Error>),
    /// The connection closed before the answer came.
    Closed,
    /// No answer within this time. The call was abandoned (and, if the
    /// connection is configured for it, a cancellation notification sent).
    Timeout(Duration),
    /// The server answered with an error object that is not an `E`.
    Server(ErrorObject),
    /// The server answered with an error object that decoded as the
    /// method's own error type.
    App(E),
    /// The server's answer did not decode as the expected type.
    Decode(serde_json::Error),
    /// A subscription's items were not read fast enough: this many were
    /// waiting ([`Limits::subscription_buffer`](crate::Limits)). It was
    /// unsubscribed.
    Lagged(usize),
}

impl<E> ClientError<E> {
    /// The error object the server sent, when it was not an `E`.
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Server(error) => Some(error),
            _ => None,
        }
    }

    /// The method's own error, when the server sent one.
    pub fn app_error(&self) -> Option<&E> {
        match self {
            ClientError::App(error) => Some(error),
            _ => None,
        }
    }

    /// Converts an untyped error, turning the server's error object into an
    /// `E` with `convert` where it can.
    pub(crate) fn typed(untyped: ClientError, convert: fn(ErrorObject) -> ClientError<E>) -> Self {
        match untyped {
            ClientError::Encode(err) => ClientError::Encode(err),
            ClientError::Transport(err) => ClientError::Transport(err),
            ClientError::Closed => ClientError::Closed,
            ClientError::Timeout(limit) => ClientError::Timeout(limit),
            ClientError::Server(error) | ClientError::App(error) => convert(error),
            ClientError::Decode(err) => ClientError::Decode(err),
            ClientError::Lagged(capacity) => ClientError::Lagged(capacity),
        }
    }
}

impl<E: fmt::Display> fmt::Display for ClientError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Encode(err) => write!(f, "the params could not be encoded: {err}"),
            ClientError::Transport(err) => write!(f, "the connection failed: {err}"),
            ClientError::Closed => f.write_str("the connection closed before the answer came"),
            ClientError::Timeout(limit) => write!(f, "no answer within {limit:?}"),
            ClientError::Server(error) => write!(f, "the server answered with an error: {error}"),
            ClientError::App(error) => write!(f, "the method failed: {error}"),
            ClientError::Decode(err) => write!(f, "the answer did not decode: {err}"),
            ClientError::Lagged(capacity) => {
                write!(
                    f,
                    "the subscription's items were not read fast enough ({capacity} were waiting); it was unsubscribed"
                )
            }
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for ClientError<E> {}

/// An application error that travels inside a JSON-RPC error object.
///
/// The server side converts the error into an object with
/// `From<E> for ErrorObject`; the client side turns the object back with
/// this trait, so a typed client returns [`ClientError::App`] with your
/// error instead of a bare code and message.
///
/// ```
/// use rpc_runtime::{ErrorObject, peer::FromErrorObject};
///
/// #[derive(Debug, PartialEq)]
/// enum BankError { Insufficient { missing: u64 } }
///
/// impl From<BankError> for ErrorObject {
///     fn from(err: BankError) -> Self {
///         match err {
///             BankError::Insufficient { missing } =>
///                 ErrorObject::new(1001, "insufficient funds").with_data(&missing),
///         }
///     }
/// }
///
/// impl FromErrorObject for BankError {
///     fn from_error_object(error: &ErrorObject) -> Option<Self> {
///         match error.code() {
///             1001 => Some(BankError::Insufficient { missing: error.data_as()?.ok()? }),
///             _ => None,
///         }
///     }
/// }
///
/// let object = ErrorObject::from(BankError::Insufficient { missing: 5 });
/// assert_eq!(BankError::from_error_object(&object), Some(BankError::Insufficient { missing: 5 }));
/// ```
pub trait FromErrorObject: Sized {
    /// The application error this object stands for, or `None` if it is
    /// not one (a protocol error such as -32602, say).
    fn from_error_object(error: &ErrorObject) -> Option<Self>;
}
