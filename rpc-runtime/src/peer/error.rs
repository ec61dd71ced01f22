//! How a call ends when it produces no value: [`ClientError`], and
//! [`FromErrorObject`], which turns the error object a server sent back
//! into the method's own error type.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::dispatch::permissions;
use crate::wire::error::{ErrorObject, INVALID_PARAMS, METHOD_NOT_FOUND, PERMISSION_DENIED, TRANSPORT_ERROR};

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
///
/// To branch on what went wrong without reading raw JSON:
/// [`http_status`](Self::http_status) (a request the HTTP server refused:
/// 401, 403, 413, 429, 503...), [`is_permission_denied`](Self::is_permission_denied)
/// and [`required_permissions`](Self::required_permissions) (-32003),
/// [`is_method_not_found`](Self::is_method_not_found) (-32601),
/// [`is_invalid_params`](Self::is_invalid_params) (-32602), and
/// [`code`](Self::code) for any other code. They read the error object of
/// [`ClientError::Server`]; an error the method's own type recognised is
/// a [`ClientError::App`], matched through [`app_error`](Self::app_error)
/// (the error object it came from is not kept).
///
/// A call that failed on the way rather than being answered is
/// [`Transport`](ClientError::Transport), [`Closed`](ClientError::Closed) or
/// [`Timeout`](ClientError::Timeout); and, when a transport makes up the
/// answer for a call it could not deliver, a
/// [`Server`](ClientError::Server) error object with code
/// [`TRANSPORT_ERROR`] (an HTTP status other than 200/204, an HTTP request
/// that could not be sent, a WebSocket connection lost under a
/// reconnecting client). Those display as what they are ("the server
/// refused the request: HTTP 401 Unauthorized...", "the WebSocket
/// connection was lost..."), not as an answer of the server.
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
    /// The server answered with an error object that is not an `E`; or
    /// the transport made one up on this side, with code
    /// [`TRANSPORT_ERROR`], for a call it could not deliver (see there).
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
    /// Not an end: the connection a subscription was made on was lost and
    /// re-made (a reconnecting client), and the subscription was made
    /// again on the new one. Items the server sent in between were
    /// missed; the items after this one come from the new subscription
    /// (which may start over, as a fresh one would). The stream goes on.
    Resubscribed,
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

    /// The code of the error object the call ended with
    /// ([`ClientError::Server`]): the server's, or [`TRANSPORT_ERROR`] for
    /// one the transport made up. `None` for every other variant, an
    /// [`App`](ClientError::App) error included (its object is not kept:
    /// match the `E` instead).
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject};
    ///
    /// let err: ClientError = ClientError::Server(ErrorObject::new(-32001, "disk full"));
    /// assert_eq!(err.code(), Some(-32001));
    /// assert_eq!(ClientError::<ErrorObject>::Closed.code(), None);
    /// ```
    pub fn code(&self) -> Option<i64> {
        self.server_error().map(ErrorObject::code)
    }

    /// The HTTP status of a request the HTTP server refused: `Some(401)`,
    /// `Some(403)`, `Some(413)`, `Some(429)`, `Some(503)`... when the answer
    /// to the `POST` was not 200 or 204 and so carried no JSON-RPC answer
    /// (a connection hook's [`Refused`](crate::Refused), a body over the
    /// server's limit, a proxy's refusal). The call then never reached the
    /// method. `None` otherwise: for an error the server answered in a
    /// 200 (a permission refusal is -32003, see
    /// [`is_permission_denied`](Self::is_permission_denied)), and for every
    /// transport but HTTP (a refused WebSocket upgrade fails
    /// [`connect`](crate::PeerBuilder::connect) instead).
    ///
    /// It is read from the [`TRANSPORT_ERROR`] object the HTTP client
    /// makes up (`data`: `{"httpStatus": 401}`). With the `http` feature,
    /// `http::StatusCode::from_u16` turns it into a `StatusCode`.
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject, wire::TRANSPORT_ERROR};
    ///
    /// fn advice(err: &ClientError) -> &'static str {
    ///     match err.http_status() {
    ///         Some(401) => "sign in",
    ///         Some(403) => "ask for access",
    ///         Some(429 | 503) => "retry later",
    ///         Some(_) => "the server refused the request",
    ///         None => "see the error",
    ///     }
    /// }
    ///
    /// // What the HTTP client makes of a 401.
    /// let refused = ErrorObject::new(TRANSPORT_ERROR, "HTTP 401 Unauthorized")
    ///     .with_data(&serde_json::json!({"httpStatus": 401}));
    /// let err: ClientError = ClientError::Server(refused);
    /// assert_eq!(err.http_status(), Some(401));
    /// assert_eq!(advice(&err), "sign in");
    /// assert_eq!(err.to_string(), "the server refused the request: HTTP 401 Unauthorized");
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        match made_here(self.server_error()?)? {
            MadeHere::Refused(status) => Some(status),
            MadeHere::Lost => None,
        }
    }

    /// Whether the server refused the call for want of a permission: an
    /// error object with code -32003
    /// ([`PERMISSION_DENIED`](crate::wire::PERMISSION_DENIED)), as a method
    /// declared `#[rpc(requires = "...")]` answers a caller whose
    /// [`Permissions`](crate::dispatch::Permissions) do not meet it (and as
    /// middleware may answer). [`required_permissions`](Self::required_permissions)
    /// says what was required.
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject, wire::PERMISSION_DENIED};
    ///
    /// let denied = ErrorObject::new(PERMISSION_DENIED, "Permission denied: method `wipe` requires the permission `admin`")
    ///     .with_data(&serde_json::json!({"requires": "admin"}));
    /// let err: ClientError = ClientError::Server(denied);
    /// assert!(err.is_permission_denied());
    /// assert_eq!(err.required_permissions(), Some(vec!["admin".to_owned()]));
    /// ```
    pub fn is_permission_denied(&self) -> bool {
        self.code() == Some(PERMISSION_DENIED)
    }

    /// The permissions named by a permission refusal (see
    /// [`is_permission_denied`](Self::is_permission_denied)), read from its
    /// `data.requires`: `["admin"]` for `requires = "admin"`, every
    /// permission listed for `requires(any(..))` or `requires(all(..))`
    /// (`{"anyOf": [..]}`, `{"allOf": [..]}`; to tell the two apart, read
    /// [`server_error`](Self::server_error)`.data_as::<serde_json::Value>()`).
    /// With OAuth these are the scopes to ask for.
    ///
    /// `None` when the error is not a permission refusal, or one that
    /// names no requirement (a middleware's own -32003, say).
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject, wire::PERMISSION_DENIED};
    ///
    /// let denied = ErrorObject::new(PERMISSION_DENIED, "Permission denied")
    ///     .with_data(&serde_json::json!({"requires": {"anyOf": ["admin", "ops"]}}));
    /// let err: ClientError = ClientError::Server(denied);
    /// assert_eq!(err.required_permissions(), Some(vec!["admin".to_owned(), "ops".to_owned()]));
    ///
    /// let bare: ClientError = ClientError::Server(ErrorObject::new(PERMISSION_DENIED, "Sign in first"));
    /// assert!(bare.is_permission_denied());
    /// assert_eq!(bare.required_permissions(), None);
    /// ```
    pub fn required_permissions(&self) -> Option<Vec<String>> {
        let error = self.server_error().filter(|error| error.code() == PERMISSION_DENIED)?;
        permissions::named_in(error.data()?)
    }

    /// Whether the server has no such method (-32601,
    /// [`METHOD_NOT_FOUND`](crate::wire::METHOD_NOT_FOUND)): a misspelt
    /// name, a server of another version, or a method it does not list
    /// for this caller.
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject};
    ///
    /// let err: ClientError = ClientError::Server(ErrorObject::method_not_found());
    /// assert!(err.is_method_not_found());
    /// assert!(!err.is_invalid_params());
    /// ```
    pub fn is_method_not_found(&self) -> bool {
        self.code() == Some(METHOD_NOT_FOUND)
    }

    /// Whether the server refused the params (-32602,
    /// [`INVALID_PARAMS`](crate::wire::INVALID_PARAMS)): missing, of the
    /// wrong type, or rejected by the method itself; the
    /// [`server_error`](Self::server_error)'s message says which and why.
    ///
    /// ```
    /// use rpc_runtime::{ClientError, ErrorObject};
    ///
    /// let err: ClientError = ClientError::Server(ErrorObject::invalid_params("`count`: expected u64"));
    /// assert!(err.is_invalid_params());
    /// ```
    pub fn is_invalid_params(&self) -> bool {
        self.code() == Some(INVALID_PARAMS)
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
            ClientError::Resubscribed => ClientError::Resubscribed,
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
            ClientError::Server(error) => match made_here(error) {
                Some(MadeHere::Refused(_)) => write!(f, "the server refused the request: {}", error.message()),
                Some(MadeHere::Lost) => f.write_str(error.message()),
                None => write!(f, "the server answered with an error: {error}"),
            },
            ClientError::App(error) => write!(f, "the method failed: {error}"),
            ClientError::Decode(err) => write!(f, "the answer did not decode: {err}"),
            ClientError::Lagged(capacity) => {
                write!(
                    f,
                    "the subscription's items were not read fast enough ({capacity} were waiting); it was unsubscribed"
                )
            }
            ClientError::Resubscribed => f.write_str(
                "the connection was lost and re-made, and the subscription made again: items sent in between were missed",
            ),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for ClientError<E> {}

/// What a [`TRANSPORT_ERROR`] object made up on this side stands for.
enum MadeHere {
    /// The HTTP server answered with this status (not 200 or 204).
    Refused(u16),
    /// The request could not be delivered or its answer read (an HTTP
    /// request that failed, a WebSocket connection lost).
    Lost,
}

/// What `error` stands for, if a transport of this crate made it up:
/// code [`TRANSPORT_ERROR`] with `data` `{"httpStatus": N}`, or
/// `{"transport": "http"}` / `{"transport": "ws"}` / ...; or, with any
/// code, `{"transport": "nats"}` (the NATS client's errors from the
/// broker's status, such as no responders). `None` for an error object a
/// server sent, -32099 ones included (a server may use the code for its
/// own errors).
fn made_here(error: &ErrorObject) -> Option<MadeHere> {
    #[derive(Deserialize)]
    struct Data {
        #[serde(rename = "httpStatus")]
        http_status: Option<u16>,
        transport: Option<String>,
    }
    let data = error.data_as::<Data>()?.ok()?;
    match (error.code() == TRANSPORT_ERROR, data) {
        (true, Data { http_status: Some(status), .. }) => Some(MadeHere::Refused(status)),
        (true, Data { transport: Some(_), .. }) => Some(MadeHere::Lost),
        (false, Data { transport: Some(transport), .. }) if transport == "nats" => Some(MadeHere::Lost),
        _ => None,
    }
}

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
