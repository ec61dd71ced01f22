//! What a method returns, as the wire wants it: its result encoded (into
//! a raw value, or straight into the response buffer), the traits its
//! return and error types meet, and the call of a `blocking` method.

use serde::Serialize;
use serde_json::value::RawValue;

use super::{MethodFuture, MethodResult};
use crate::wire::error::ErrorObject;

/// The call of a `#[rpc(blocking)]` method with its decoded params, and the
/// encoding of what it returns.
pub(crate) type BlockingCall = Box<dyn FnOnce() -> MethodResult + Send + 'static>;

/// The future of a `#[rpc(blocking)]` method: `call` runs on tokio's
/// blocking thread pool, so that the connection's reader goes on with the
/// next message meanwhile. The future is run as an `async fn` method's is
/// (a task within the connection's limit of requests in flight, answered
/// with -32800 if it was cancelled meanwhile); dropping it does not stop
/// `call`, which cannot be interrupted. A panic in `call` resumes here, so
/// that it is answered with -32603 as any method's panic is. Outside a
/// tokio runtime (a future polled by hand), `call` runs where it is polled.
pub(crate) fn blocking_future(call: BlockingCall) -> MethodFuture {
    Box::pin(run_blocking(call))
}

async fn run_blocking(call: BlockingCall) -> MethodResult {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return call();
    };
    match runtime.spawn_blocking(call).await {
        Ok(result) => result,
        Err(err) => match err.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // The runtime shut down before the call ran.
            Err(_) => Err(ErrorObject::internal_error("Internal error: the request was aborted")),
        },
    }
}

/// A result that [`Router::call`](super::Router::call) wrote into `out`
/// ([`Called::Written`](super::Called::Written)), as raw JSON.
pub(crate) fn written_result(out: Vec<u8>) -> MethodResult {
    String::from_utf8(out)
        .ok()
        .and_then(|text| RawValue::from_string(text).ok())
        .ok_or_else(|| ErrorObject::internal_error("Internal error: the result is not valid JSON"))
}

/// Serializes a method's return value. Inlined, and matched rather than
/// mapped: what generated code instantiates stays in its caller's code,
/// not in a codegen unit of this module (nor of `Result`'s) per crate.
#[inline(always)]
pub fn encode<T: Serialize>(value: &T) -> MethodResult {
    match serde_json::value::to_raw_value(value) {
        Ok(raw) => Ok(raw),
        Err(err) => Err(encode_failed(err)),
    }
}

/// Serializes a method's return value straight into a response buffer;
/// on failure the buffer is left as it was. Inlined and matched, as
/// [`encode`] is.
#[inline(always)]
pub(crate) fn encode_into<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), ErrorObject> {
    let start = out.len();
    match serde_json::to_writer(&mut *out, value) {
        Ok(()) => Ok(()),
        Err(err) => Err(encode_failed_into(out, start, err)),
    }
}

#[cold]
fn encode_failed(err: serde_json::Error) -> ErrorObject {
    ErrorObject::internal_error(format!("Internal error: the result failed to serialize: {err}"))
}

/// [`encode_failed`], with `out` cut back to `start`: what it was before
/// the result's partial encoding.
#[cold]
fn encode_failed_into(out: &mut Vec<u8>, start: usize, err: serde_json::Error) -> ErrorObject {
    out.truncate(start);
    encode_failed(err)
}

/// A method return type that is a `Result<T, E>` with `E` convertible into
/// an error object.
///
/// Sealed: implemented for `Result<T, E>` with `T: Serialize` and
/// `E: IntoErrorObject`, and nothing else.
pub trait IntoMethodResult: sealed::EncodeInto {
    /// Encodes `Ok` as the result, converts `Err` into an error object.
    fn into_method_result(self) -> MethodResult;
}

impl<T: Serialize, E: IntoErrorObject> IntoMethodResult for Result<T, E> {
    fn into_method_result(self) -> MethodResult {
        match self {
            Ok(value) => encode(&value),
            Err(err) => Err(err.into_error_object()),
        }
    }
}

/// What generated code needs of a method's result beyond the public
/// [`IntoMethodResult`]: writing it straight into the response buffer.
/// Public in a private module, so that users can neither name nor
/// implement it (which seals `IntoMethodResult`).
pub(crate) mod sealed {
    use super::*;

    /// Appends the encoded `Ok` value to a response buffer.
    pub trait EncodeInto {
        /// Appends the encoded `Ok` value to `out` (left as it was on
        /// `Err`, which becomes the error object).
        fn encode_into(self, out: &mut Vec<u8>) -> Result<(), ErrorObject>;
    }

    impl<T: Serialize, E: IntoErrorObject> EncodeInto for Result<T, E> {
        fn encode_into(self, out: &mut Vec<u8>) -> Result<(), ErrorObject> {
            match self {
                Ok(value) => super::encode_into(out, &value),
                Err(err) => Err(err.into_error_object()),
            }
        }
    }
}

/// An error type a method may return: anything that converts into an
/// [`ErrorObject`] (`ErrorObject` itself, an enum with
/// `#[derive(RpcError)]`, or a type with `From<E> for ErrorObject`).
///
/// Implemented for every such type; it exists so that a method returning
/// an error type without the conversion gets a compile error that says so
/// (and how to add it), rather than rustc's list of other `From` impls.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of an #[rpc] method: it does not convert into a JSON-RPC `ErrorObject`",
    label = "needs `From<{Self}> for ErrorObject`",
    note = "add `#[derive(RpcError)]` to the error enum (a code and message per variant), or implement `From<{Self}> for rpc_runtime::ErrorObject`; or return `Result<T, ErrorObject>`"
)]
pub trait IntoErrorObject {
    /// The error object sent for this error.
    fn into_error_object(self) -> ErrorObject;
}

// `do_not_recommend`: when `E` lacks the conversion, rustc reports the
// message above instead of digging into `From` and listing unrelated impls.
#[diagnostic::do_not_recommend]
impl<E: Into<ErrorObject>> IntoErrorObject for E {
    fn into_error_object(self) -> ErrorObject {
        self.into()
    }
}
