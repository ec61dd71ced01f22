//! The calling side: errors a call can end with, typed application errors,
//! batches, and the helpers behind the clients `#[rpc]` generates.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::peer::{Peer, Reply, request_bytes};
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

/// Serializes `params` for an untyped call: `null` means no params; arrays
/// and objects are sent as they are.
pub(crate) fn encode_any_params<P: Serialize>(params: &P) -> Result<Option<Box<RawValue>>, serde_json::Error> {
    let raw = serde_json::value::to_raw_value(params)?;
    match raw.get().as_bytes().first() {
        Some(b'[' | b'{') => Ok(Some(raw)),
        _ if raw.get() == "null" => Ok(None),
        _ => Err(not_structured(raw.get())),
    }
}

#[cold]
fn not_structured(json: &str) -> serde_json::Error {
    serde::ser::Error::custom(format!("params must serialize to an array or an object, not `{json}`"))
}

/// Several calls and notifications sent as one JSON-RPC batch message.
///
/// Add calls (each returns a [`BatchReply`] to await later), then
/// [`Batch::send`] the whole batch at once; the server may answer the
/// entries in any order, and each reply resolves with its own typed
/// result. Generated clients have a typed batch too
/// (`client.batch()`), with one method per trait method.
///
/// ```no_run
/// # async fn run(peer: rpc_runtime::Peer) -> Result<(), rpc_runtime::ClientError> {
/// let mut batch = peer.batch();
/// let difference = batch.call::<i64, _>("subtract", [42, 23]);
/// let greeting = batch.call::<String, _>("greet", ["Ada"]);
/// batch.notify("notify_hello", [7]);
/// batch.send().await?;
/// assert_eq!(difference.await?, 19);
/// println!("{}", greeting.await?);
/// # Ok(()) }
/// ```
///
/// A server answers a batch with one message once every entry is done, so
/// the replies of a batch arrive together.
///
/// Each reply waits at most the connection's default timeout (or the
/// typed client's, for a batch from `client.batch()`), counted from when
/// it is first awaited. A reply that times out or is dropped before its
/// answer behaves like an abandoned call (its cancellation notification is
/// sent if the connection is configured for one). Replies of a batch that
/// is dropped unsent fail with [`ClientError::Closed`].
pub struct Batch {
    peer: Peer,
    timeout: Option<Duration>,
    entries: Vec<BatchEntry>,
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch").field("timeout", &self.timeout).field("entries", &self.entries.len()).finish()
    }
}

struct BatchEntry {
    method: Box<str>,
    params: Option<Box<RawValue>>,
    /// `None` for a notification.
    reply: Option<(oneshot::Sender<Reply>, Arc<AtomicU64>)>,
}

/// The id of a batch call once sent; 0 before.
const UNSENT: u64 = 0;

impl Batch {
    pub(crate) fn new(peer: Peer, timeout: Option<Duration>) -> Self {
        Batch { timeout: timeout.or(peer.default_timeout()), peer, entries: Vec::new() }
    }

    /// Adds a call of `method`; `params` as for [`Peer::call`].
    pub fn call<R: DeserializeOwned, P: Serialize>(&mut self, method: &str, params: P) -> BatchReply<R> {
        self.push_call(method, encode_any_params(&params), from_json::<R>, ClientError::Server)
    }

    /// Adds a notification of `method`. A notification whose params fail to
    /// serialize is left out (and logged).
    pub fn notify<P: Serialize>(&mut self, method: &str, params: P) {
        self.push_notification(method, encode_any_params(&params))
    }

    /// Number of entries so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was added yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a call whose params were encoded already.
    pub(crate) fn push_call<T, E>(
        &mut self,
        method: &str,
        params: Result<Option<Box<RawValue>>, serde_json::Error>,
        decode: Decoder<T>,
        convert: fn(ErrorObject) -> ClientError<E>,
    ) -> BatchReply<T, E> {
        let (tx, rx) = oneshot::channel();
        let id = Arc::new(AtomicU64::new(UNSENT));
        match params {
            Ok(params) => {
                self.entries.push(BatchEntry { method: method.into(), params, reply: Some((tx, Arc::clone(&id))) })
            }
            Err(err) => {
                let _ = tx.send(Err(ClientError::Encode(err)));
            }
        }
        BatchReply {
            reply: rx,
            decode,
            convert,
            peer: self.peer.clone(),
            id,
            timeout: self.timeout,
            sleep: None,
            done: false,
        }
    }

    pub(crate) fn push_notification(&mut self, method: &str, params: Result<Option<Box<RawValue>>, serde_json::Error>) {
        match params {
            Ok(params) => self.entries.push(BatchEntry { method: method.into(), params, reply: None }),
            Err(err) => {
                tracing::warn!(method, error = %err, "left a notification out of a batch: its params did not encode")
            }
        }
    }

    /// Sends every entry as one batch message and returns once it is
    /// written. An empty batch sends nothing. If the connection is closed,
    /// every reply fails with that error too. Writing waits at most the
    /// batch's timeout (see below); past it, the send and every reply fail
    /// with [`ClientError::Timeout`].
    pub async fn send(self) -> Result<(), ClientError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let mut message = Vec::new();
        let mut registered = Vec::new();
        for (index, entry) in self.entries.into_iter().enumerate() {
            let id = match entry.reply {
                None => None,
                Some((reply, slot)) => match self.peer.register_call(reply) {
                    Ok(id) => {
                        registered.push(id);
                        slot.store(id, Ordering::Release);
                        Some(id)
                    }
                    Err(err) => {
                        registered.iter().for_each(|id| self.peer.forget_call(*id));
                        return Err(err);
                    }
                },
            };
            message.push(if index == 0 { b'[' } else { b',' });
            message.extend_from_slice(&request_bytes(&entry.method, entry.params.as_deref(), id));
        }
        message.push(b']');
        let written = self.peer.write_and_wait(message, self.timeout).await;
        if let Err(err) = &written {
            // A timed-out send fails the replies with the same timeout.
            registered.iter().for_each(|id| match err {
                ClientError::Timeout(limit) => self.peer.fail_call(*id, ClientError::Timeout(*limit)),
                _ => self.peer.forget_call(*id),
            });
        }
        written
    }
}

/// The answer to one call of a [`Batch`]; await it after the batch was sent.
#[must_use = "await the reply to get the call's result"]
pub struct BatchReply<T, E = ErrorObject> {
    reply: oneshot::Receiver<Reply>,
    decode: Decoder<T>,
    convert: fn(ErrorObject) -> ClientError<E>,
    peer: Peer,
    id: Arc<AtomicU64>,
    timeout: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    done: bool,
}

impl<T, E> fmt::Debug for BatchReply<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchReply").field("done", &self.done).finish_non_exhaustive()
    }
}

impl<T, E> Future for BatchReply<T, E> {
    type Output = Result<T, ClientError<E>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(Err(ClientError::Closed));
        }
        let reply = match Pin::new(&mut this.reply).poll(cx) {
            Poll::Ready(reply) => reply.unwrap_or(Err(ClientError::Closed)),
            Poll::Pending => {
                let Some(limit) = this.timeout else { return Poll::Pending };
                let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.abandon("timed out");
                this.done = true;
                return Poll::Ready(Err(ClientError::Timeout(limit)));
            }
        };
        this.done = true;
        Poll::Ready(decode(reply, this.decode, this.convert))
    }
}

impl<T, E> BatchReply<T, E> {
    fn abandon(&self, reason: &str) {
        let id = self.id.load(Ordering::Acquire);
        if id != UNSENT {
            self.peer.abandon_call(id, reason);
        }
    }
}

impl<T, E> Drop for BatchReply<T, E> {
    fn drop(&mut self) {
        if !self.done {
            self.abandon("the caller gave up");
        }
    }
}

/// A call of a generated client (`client.method(..)`): await it for the
/// method's result. Its params were encoded when the method was called;
/// the request is sent when the call is first polled, and waits at most the
/// client's timeout (or the connection's default). Dropping it before the
/// answer abandons the call like any other.
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<T, E = ErrorObject> {
    state: CallState<Reply>,
    decode: Decoder<T>,
    convert: fn(ErrorObject) -> ClientError<E>,
}

/// A notification of a generated client: await it to send it; it resolves
/// once the message is written (there is no answer).
#[must_use = "a notification is not sent until it is awaited"]
pub struct Notify {
    state: CallState<Result<(), ClientError>>,
}

/// The request in flight, or why it could not be made (taken on the poll
/// that reports it).
pub(crate) enum CallState<O> {
    Sending(Pin<Box<dyn Future<Output = O> + Send>>),
    Failed(Option<serde_json::Error>),
}

impl<O> CallState<O> {
    /// The outcome of the request, or the error its params failed to
    /// encode with.
    pub(crate) fn poll_outcome(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<O, ClientError>> {
        match self {
            CallState::Sending(future) => future.as_mut().poll(cx).map(Ok),
            CallState::Failed(err) => Poll::Ready(Err(err.take().map_or(ClientError::Closed, ClientError::Encode))),
        }
    }
}

/// One boxed request future shared by every method of every generated
/// client (so that each method adds no state machine of its own).
fn start_call(
    peer: Peer,
    method: &'static str,
    params: Option<Box<RawValue>>,
    timeout: Option<Duration>,
) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
    Box::pin(async move { peer.call_owned(method, params, timeout).await })
}

fn start_notification(
    peer: Peer,
    method: &'static str,
    params: Option<Box<RawValue>>,
    timeout: Option<Duration>,
) -> Pin<Box<dyn Future<Output = Result<(), ClientError>> + Send>> {
    // The params are not held while the notification waits for room.
    let bytes = request_bytes(method, params.as_deref(), None);
    drop(params);
    Box::pin(async move { peer.queue(bytes, timeout).await })
}

impl<T, E> Future for Call<T, E> {
    type Output = Result<T, ClientError<E>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        this.state.poll_outcome(cx).map(|outcome| match outcome {
            Ok(reply) => decode(reply, this.decode, this.convert),
            Err(err) => Err(ClientError::typed(err, this.convert)),
        })
    }
}

impl Future for Notify {
    type Output = Result<(), ClientError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.state.poll_outcome(cx).map(|outcome| outcome.and_then(|written| written))
    }
}

impl<T, E> fmt::Debug for Call<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call").finish_non_exhaustive()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").finish_non_exhaustive()
    }
}

/// Decodes a result from its JSON text.
pub(crate) type Decoder<T> = fn(&str) -> Result<T, serde_json::Error>;

fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(text)
}

fn decode<T, E>(
    reply: Reply,
    decoder: Decoder<T>,
    convert: fn(ErrorObject) -> ClientError<E>,
) -> Result<T, ClientError<E>> {
    match reply {
        Ok(raw) => decoder(raw.get()).map_err(ClientError::Decode),
        Err(err) => Err(ClientError::typed(err, convert)),
    }
}

/// What generated clients are made of; public through `__private` only.
pub(crate) mod support {
    use super::*;
    use crate::peer::subscription::client::{Subscribe, start_subscribe};
    use crate::spec::{MethodSpec, ParamStructure};

    /// How a generated client sends a method's params.
    #[derive(Clone, Copy, Debug)]
    enum ParamMode {
        /// An object keyed by param name (the default).
        ByName,
        /// An array in declaration order.
        ByPosition,
        /// The single param is the whole params value.
        Whole,
    }

    /// One param of a generated call, encoded by [`encode_param`].
    pub type Encoded = Result<Box<RawValue>, serde_json::Error>;

    /// Builds the params of a call to `spec`'s method from `values`, one
    /// per entry of `spec.params`: sent by name (an object), by position
    /// (an array) for a method that accepts only that, or as the value
    /// itself for `whole_params`. Optional params that are `None` are left
    /// out (by name), or trimmed from the end (by position).
    pub(crate) fn spec_params(
        spec: &MethodSpec,
        values: &mut dyn Iterator<Item = Encoded>,
    ) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        let mode = if spec.whole {
            ParamMode::Whole
        } else if spec.structure == ParamStructure::ByPosition {
            ParamMode::ByPosition
        } else {
            ParamMode::ByName
        };
        let mut list = Vec::with_capacity(spec.params.len());
        for (param, value) in spec.params.iter().zip(values) {
            list.push((param.name, param.optional, value?));
        }
        encode_params(mode, list)
    }

    /// Builds a call's params from `(wire name, optional, value)`.
    fn encode_params(
        mode: ParamMode,
        mut values: Vec<(&str, bool, Box<RawValue>)>,
    ) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        let omitted = |(_, optional, value): &(&str, bool, Box<RawValue>)| *optional && value.get() == "null";
        let mut out = String::new();
        match mode {
            ParamMode::Whole => {
                return match values.pop() {
                    Some((_, _, value)) if matches!(value.get().as_bytes().first(), Some(b'[' | b'{')) => {
                        Ok(Some(value))
                    }
                    Some((_, true, value)) if value.get() == "null" => Ok(None),
                    Some((_, _, value)) => Err(not_structured(value.get())),
                    None => Ok(None),
                };
            }
            ParamMode::ByName => {
                if values.is_empty() {
                    return Ok(None);
                }
                out.push('{');
                for entry in values.iter().filter(|entry| !omitted(entry)) {
                    if out.len() > 1 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(entry.0)?);
                    out.push(':');
                    out.push_str(entry.2.get());
                }
                out.push('}');
            }
            ParamMode::ByPosition => {
                if values.is_empty() {
                    return Ok(None);
                }
                while values.last().is_some_and(omitted) {
                    values.pop();
                }
                out.push('[');
                for (index, (_, _, value)) in values.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    out.push_str(value.get());
                }
                out.push(']');
            }
        }
        RawValue::from_string(out).map(Some)
    }

    /// The state of a generated client: the connection and a timeout that
    /// overrides the connection's default.
    #[derive(Clone, Debug)]
    pub struct ClientCore {
        peer: Peer,
        timeout: Option<Duration>,
    }

    impl ClientCore {
        /// A client core over `peer`.
        pub fn new(peer: Peer) -> Self {
            ClientCore { peer, timeout: None }
        }

        /// The connection.
        pub fn peer(&self) -> &Peer {
            &self.peer
        }

        /// The same connection with another timeout for every call.
        pub fn with_timeout(&self, timeout: Duration) -> Self {
            ClientCore { peer: self.peer.clone(), timeout: Some(timeout) }
        }

        /// Calls a method and decodes its result; nothing is sent until
        /// the returned [`Call`] is first polled.
        pub fn call<T, E, const N: usize>(
            &self,
            spec: &'static MethodSpec,
            params: [Encoded; N],
            decode_result: Decoder<T>,
            convert: fn(ErrorObject) -> ClientError<E>,
        ) -> Call<T, E> {
            let state = match spec_params(spec, &mut params.into_iter()) {
                Ok(params) => CallState::Sending(start_call(self.peer.clone(), spec.name, params, self.timeout)),
                Err(err) => CallState::Failed(Some(err)),
            };
            Call { state, decode: decode_result, convert }
        }

        /// Sends a notification once the returned [`Notify`] is
        /// first polled.
        pub fn notify<const N: usize>(&self, spec: &'static MethodSpec, params: [Encoded; N]) -> Notify {
            let state = match spec_params(spec, &mut params.into_iter()) {
                Ok(params) => {
                    let timeout = self.timeout.or(self.peer.default_timeout());
                    CallState::Sending(start_notification(self.peer.clone(), spec.name, params, timeout))
                }
                Err(err) => CallState::Failed(Some(err)),
            };
            Notify { state }
        }

        /// Calls a subscribe method; nothing is sent until the returned
        /// [`Subscribe`] is first polled. Its items are notifications
        /// `notification`, decoded as `T`; `unsubscribe` ends it.
        #[allow(clippy::too_many_arguments)]
        pub fn subscribe<T, E, const N: usize>(
            &self,
            spec: &'static MethodSpec,
            params: [Encoded; N],
            notification: &'static str,
            unsubscribe: &'static str,
            decode_item: Decoder<T>,
            convert: fn(ErrorObject) -> ClientError<E>,
        ) -> Subscribe<T, E> {
            let state = match spec_params(spec, &mut params.into_iter()) {
                Ok(params) => CallState::Sending(start_subscribe(
                    self.peer.clone(),
                    spec.name,
                    params,
                    self.timeout,
                    notification,
                    unsubscribe,
                )),
                Err(err) => CallState::Failed(Some(err)),
            };
            Subscribe { state, decode: decode_item, convert }
        }

        /// A batch on this connection, with this client's timeout.
        pub fn batch(&self) -> Batch {
            Batch::new(self.peer.clone(), self.timeout)
        }
    }

    /// Adds a generated call to `batch`.
    pub fn batch_call<T, E, const N: usize>(
        batch: &mut Batch,
        spec: &'static MethodSpec,
        params: [Encoded; N],
        decode_result: Decoder<T>,
        convert: fn(ErrorObject) -> ClientError<E>,
    ) -> BatchReply<T, E> {
        batch.push_call(spec.name, spec_params(spec, &mut params.into_iter()), decode_result, convert)
    }

    /// Adds a generated notification to `batch`.
    pub fn batch_notification<const N: usize>(batch: &mut Batch, spec: &'static MethodSpec, params: [Encoded; N]) {
        batch.push_notification(spec.name, spec_params(spec, &mut params.into_iter()))
    }

    /// Picks how an error object becomes a `ClientError<E>`: through
    /// [`FromErrorObject`] when `E` implements it, or kept as
    /// [`ClientError::Server`] otherwise: `AppError::<E>::CONVERT` is the
    /// inherent constant when `E: FromErrorObject`, else
    /// [`ViaServerError::CONVERT`] (an inherent item whose bounds do not
    /// hold is skipped; the generated code names a concrete `E`).
    pub struct AppError<E>(PhantomData<fn() -> E>);

    impl<E> fmt::Debug for AppError<E> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_tuple("AppError").field(&std::any::type_name::<E>()).finish()
        }
    }

    impl<E: FromErrorObject> AppError<E> {
        /// The converter for `E`.
        pub const CONVERT: fn(ErrorObject) -> ClientError<E> = app_error::<E>;
    }

    fn app_error<E: FromErrorObject>(error: ErrorObject) -> ClientError<E> {
        match E::from_error_object(&error) {
            Some(app) => ClientError::App(app),
            None => ClientError::Server(error),
        }
    }

    /// Chosen when `E` does not implement [`FromErrorObject`].
    pub trait ViaServerError<E> {
        /// The converter for `E`.
        const CONVERT: fn(ErrorObject) -> ClientError<E>;
    }

    impl<E> ViaServerError<E> for AppError<E> {
        const CONVERT: fn(ErrorObject) -> ClientError<E> = ClientError::Server;
    }

    /// Encodes a param of a generated call. The bound is the check that
    /// the client can send `T`: generated code names the param's type, so a
    /// type without `Serialize` is a compile error at the user's type.
    #[inline]
    pub fn encode_param<T: Serialize>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
        serde_json::value::to_raw_value(value)
    }

    /// The decoder of a generated call's result (or a subscription's
    /// items). The bound is the check that the client can read `T`, at the
    /// user's type as [`encode_param`]'s is.
    #[inline]
    pub fn decoder<T: DeserializeOwned>() -> Decoder<T> {
        from_json::<T>
    }

    /// The `Ok` and `Err` types of a method returning a `Result` (or an
    /// alias of one).
    pub trait ResultTypes {
        /// The success type.
        type Ok;
        /// The error type.
        type Err;
    }

    impl<T, E> ResultTypes for Result<T, E> {
        type Ok = T;
        type Err = E;
    }
}

#[cfg(test)]
mod tests {
    use super::support::spec_params;
    use super::*;
    use crate::spec::{MethodSpec, ParamSpec, ParamStructure};

    fn raw(value: serde_json::Value) -> Result<Box<RawValue>, serde_json::Error> {
        serde_json::value::to_raw_value(&value)
    }

    fn encoded<const N: usize>(spec: &MethodSpec, values: [serde_json::Value; N]) -> Option<String> {
        spec_params(spec, &mut values.into_iter().map(raw)).unwrap().map(|raw| raw.get().to_owned())
    }

    static GREET: [ParamSpec; 2] =
        [ParamSpec::new("name", "String"), ParamSpec::new("greeting", "Option<String>").optional(true)];
    static THREE: [ParamSpec; 3] = [
        ParamSpec::new("a", "Option<i64>").optional(true),
        ParamSpec::new("b", "i64"),
        ParamSpec::new("c", "Option<i64>").optional(true),
    ];
    static ONE: [ParamSpec; 1] = [ParamSpec::new("n", "Vec<i64>")];
    static OPTIONAL_ONE: [ParamSpec; 1] = [ParamSpec::new("n", "Option<Vec<i64>>").optional(true)];

    #[test]
    fn by_name_leaves_out_absent_optional_params() {
        let spec = MethodSpec::new("greet", &GREET);
        let params = encoded(&spec, [serde_json::json!("Ada"), serde_json::Value::Null]);
        assert_eq!(params.as_deref(), Some(r#"{"name":"Ada"}"#));
        // `either` and `by-name` methods are both sent by name.
        let spec = spec.structure(ParamStructure::ByName);
        let params = encoded(&spec, [serde_json::json!("Ada"), serde_json::json!("hi")]);
        assert_eq!(params.as_deref(), Some(r#"{"name":"Ada","greeting":"hi"}"#));
    }

    #[test]
    fn by_position_trims_only_trailing_absent_optional_params() {
        let spec = MethodSpec::new("add", &THREE).structure(ParamStructure::ByPosition);
        let params = encoded(&spec, [serde_json::Value::Null, serde_json::json!(2), serde_json::Value::Null]);
        assert_eq!(params.as_deref(), Some("[null,2]"));
    }

    #[test]
    fn no_params_sends_no_params_member() {
        assert_eq!(encoded(&MethodSpec::new("version", &[]), []), None);
        assert_eq!(encoded(&MethodSpec::new("version", &[]).structure(ParamStructure::ByPosition), []), None);
    }

    #[test]
    fn whole_params_must_be_structured() {
        let spec = MethodSpec::new("sum", &ONE).whole(true);
        assert_eq!(encoded(&spec, [serde_json::json!([1, 2])]).as_deref(), Some("[1,2]"));
        assert!(spec_params(&spec, &mut [raw(serde_json::json!(5))].into_iter()).is_err());
        let spec = MethodSpec::new("sum", &OPTIONAL_ONE).whole(true);
        assert_eq!(encoded(&spec, [serde_json::Value::Null]), None);
    }

    #[test]
    fn a_param_that_failed_to_encode_fails_the_call() {
        let failed = Err(serde::ser::Error::custom("no"));
        assert!(spec_params(&MethodSpec::new("x", &ONE), &mut [failed].into_iter()).is_err());
    }

    #[test]
    fn untyped_params_are_arrays_objects_or_nothing() {
        assert_eq!(encode_any_params(&[1, 2]).unwrap().unwrap().get(), "[1,2]");
        assert!(encode_any_params(&()).unwrap().is_none());
        assert!(encode_any_params(&None::<u8>).unwrap().is_none());
        assert!(encode_any_params(&"text").is_err());
    }
}
