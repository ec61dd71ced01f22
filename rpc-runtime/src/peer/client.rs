//! The calling side of the clients `#[rpc]` generates: the futures of a
//! call and a notification, encoding params and decoding results, and the
//! helpers generated code reaches through `__private`. The errors a call
//! ends with are in `error.rs`, batches in `batch.rs`; both are re-exported
//! here, where generated code and the crate root find them.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

pub use super::batch::{Batch, BatchReply};
pub use super::error::{ClientError, FromErrorObject};
use super::state::Reply;
use crate::peer::{Peer, request_bytes};
use crate::wire::error::ErrorObject;

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

pub(super) fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(text)
}

pub(super) fn decode<T, E>(
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
