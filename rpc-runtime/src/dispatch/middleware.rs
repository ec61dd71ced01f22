//! Middleware as tower layers: one method call is a
//! [`tower_service::Service`] request ([`MethodCall`]) answered with a
//! [`MethodResponse`], so tower's own timeout, concurrency-limit,
//! rate-limit and load-shed layers apply per call, and a user's async
//! middleware is an ordinary [`tower_layer::Layer`].
//!
//! Layers are set on the engine (`Server::layer`); without any, dispatch
//! takes its direct path (the router writes straight into the answer) and
//! pays nothing for this module. With layers, a result the router wrote is
//! carried as the bytes it wrote, never parsed again to be inspected.
//!
//! `tower-http`'s `TraceLayer` does not apply here: its service is defined
//! for `http::Request` only. A span per call takes a few lines of a layer
//! of one's own (see [`MethodCall`]'s example), or
//! `tower::util::MapRequestLayer`.

use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use serde_json::value::RawValue;
use tower_layer::Layer;
use tower_service::Service;

use crate::dispatch::context::Context;
use crate::dispatch::router::{Called, MethodFuture, MethodResult, Router, panicked, written_result};
use crate::wire::error::{ErrorObject, LIMIT_EXCEEDED, SERVER_OVERLOADED};

/// The error type tower's layers use (`tower::BoxError`).
type BoxError = Box<dyn StdError + Send + Sync>;

/// One method call on its way through the server's layers to the router:
/// the request of the [`Service`] every layer wraps.
///
/// It owns what it needs (the method name, a copy of the params, the
/// request's context), so a layer's future may outlive the message it came
/// from.
///
/// A layer of one's own, here one that runs every call in a `tracing`
/// span and refuses callers without an identity:
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context as TaskContext, Poll};
///
/// use rpc_runtime::dispatch::{MethodCall, MethodResponse};
/// use rpc_runtime::wire::PERMISSION_DENIED;
/// use rpc_runtime::ErrorObject;
/// use tracing::Instrument;
///
/// /// Who the connection's hook says the caller is.
/// struct User(String);
///
/// /// Wraps a service in [`Traced`].
/// #[derive(Clone)]
/// struct TraceLayer;
///
/// impl<S> tower_layer::Layer<S> for TraceLayer {
///     type Service = Traced<S>;
///     fn layer(&self, inner: S) -> Traced<S> {
///         Traced(inner)
///     }
/// }
///
/// /// A span per call; callers without a `User` are refused.
/// #[derive(Clone)]
/// struct Traced<S>(S);
///
/// impl<S> tower_service::Service<MethodCall> for Traced<S>
/// where
///     S: tower_service::Service<MethodCall, Response = MethodResponse>,
///     S::Future: Send + 'static,
/// {
///     type Response = MethodResponse;
///     type Error = S::Error;
///     type Future = Pin<Box<dyn Future<Output = Result<MethodResponse, S::Error>> + Send>>;
///
///     fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
///         self.0.poll_ready(cx)
///     }
///
///     fn call(&mut self, call: MethodCall) -> Self::Future {
///         if call.context().extension::<User>().is_none() {
///             let refused = ErrorObject::new(PERMISSION_DENIED, "Sign in first");
///             return Box::pin(async move { Ok(MethodResponse::error(refused)) });
///         }
///         let span = tracing::info_span!("rpc", rpc.method = call.method());
///         Box::pin(self.0.call(call).instrument(span))
///     }
/// }
/// ```
#[derive(Clone)]
pub struct MethodCall {
    method: Box<str>,
    params: Option<Box<RawValue>>,
    cx: Context,
    id: Option<Box<str>>,
}

impl fmt::Debug for MethodCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodCall")
            .field("method", &self.method)
            .field("params", &self.params)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl MethodCall {
    /// A call of `method` with `params` (an array or an object) in context
    /// `cx`; `id` is the request's id as raw JSON, `None` for a
    /// notification. The engine makes these; tests of a layer may too.
    pub fn new(method: impl Into<Box<str>>, params: Option<Box<RawValue>>, cx: Context, id: Option<Box<str>>) -> Self {
        MethodCall { method: method.into(), params, cx, id }
    }

    /// The method name, as the caller sent it.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params as raw JSON (an array or an object), if any.
    pub fn params(&self) -> Option<&RawValue> {
        self.params.as_deref()
    }

    /// The request's context: the caller's extensions (identity,
    /// [`Permissions`](crate::dispatch::Permissions)), peer address, cancellation.
    pub fn context(&self) -> &Context {
        &self.cx
    }

    /// The request's context, for a layer that adds extensions the method
    /// then reads.
    pub fn context_mut(&mut self) -> &mut Context {
        &mut self.cx
    }

    /// The request's id as it appeared on the wire (raw JSON: a string, a
    /// number or `null`); `None` for a notification.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// `true` for a notification: its outcome is never sent.
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
}

/// What one call produced: the method's result as JSON, or an error
/// object. The response of the [`Service`] every layer wraps.
///
/// A result is kept as the JSON the method wrote; a layer reads it with
/// [`MethodResponse::result_json`] and the engine copies it into the
/// answer as it is.
pub struct MethodResponse {
    result: Result<Json, ErrorObject>,
}

/// A result's JSON text, as the router produced it.
enum Json {
    /// Written by a plain method's encoder (valid JSON, UTF-8).
    Written(Vec<u8>),
    /// Produced by an `async` method.
    Raw(Box<RawValue>),
}

impl Json {
    fn as_bytes(&self) -> &[u8] {
        match self {
            Json::Written(bytes) => bytes,
            Json::Raw(raw) => raw.get().as_bytes(),
        }
    }
}

impl fmt::Debug for MethodResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(json) => f.debug_tuple("Result").field(&String::from_utf8_lossy(json.as_bytes())).finish(),
            Err(error) => f.debug_tuple("Error").field(error).finish(),
        }
    }
}

impl MethodResponse {
    /// A successful response with `result`.
    pub fn result(result: Box<RawValue>) -> Self {
        MethodResponse { result: Ok(Json::Raw(result)) }
    }

    /// A failed response: the call is answered with `error`.
    pub fn error(error: ErrorObject) -> Self {
        MethodResponse { result: Err(error) }
    }

    /// `true` if the call succeeded.
    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    /// The result's JSON text, exactly as the method wrote it; `None` for
    /// an error.
    pub fn result_json(&self) -> Option<&[u8]> {
        self.result.as_ref().ok().map(Json::as_bytes)
    }

    /// The error object, if the call failed.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        self.result.as_ref().err()
    }

    /// Appends a result to `out` (the answer being written), or gives the
    /// error back: what the engine does with a response that is ready now.
    fn write_into(self, out: &mut Vec<u8>) -> Called {
        match self.result {
            Ok(json) => {
                out.extend_from_slice(json.as_bytes());
                Called::Written
            }
            Err(error) => Called::Failed(error),
        }
    }

    /// The result as a pending answer takes it. Only a plain method's
    /// result that a layer held back (a concurrency or rate limit waited)
    /// is checked again here, since its text must become a `RawValue`.
    fn into_method_result(self) -> MethodResult {
        match self.result? {
            Json::Raw(raw) => Ok(raw),
            Json::Written(bytes) => written_result(bytes),
        }
    }
}

impl From<ErrorObject> for MethodResponse {
    fn from(error: ErrorObject) -> Self {
        MethodResponse::error(error)
    }
}

impl From<MethodResult> for MethodResponse {
    fn from(result: MethodResult) -> Self {
        MethodResponse { result: result.map(Json::Raw) }
    }
}

/// The service that runs calls on the router, wrapped in every layer set
/// so far: what a server's [`Layer`]s wrap (`Server::layer`).
///
/// Its errors are JSON-RPC error objects; a layer's own errors become
/// one when the layer is added (see [`MethodService::new`]).
pub struct MethodService {
    inner: Box<dyn CloneService>,
}

impl fmt::Debug for MethodService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodService").finish_non_exhaustive()
    }
}

impl Clone for MethodService {
    fn clone(&self) -> Self {
        MethodService { inner: self.inner.clone_box() }
    }
}

/// The future of a [`MethodService`] call.
pub type MethodServiceFuture = Pin<Box<dyn Future<Output = Result<MethodResponse, ErrorObject>> + Send>>;

impl Service<MethodCall> for MethodService {
    type Response = MethodResponse;
    type Error = ErrorObject;
    type Future = MethodServiceFuture;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> MethodServiceFuture {
        self.inner.call(call)
    }
}

impl MethodService {
    /// Wraps `service`, a layered method service, behind one type. A
    /// layer's error becomes a JSON-RPC error object:
    ///
    /// - an [`ErrorObject`] (anywhere in the error's `source` chain) is
    ///   answered as it is, so a layer may refuse with its own error;
    /// - tower's timeout (`tower::timeout::error::Elapsed`) is
    ///   [`LIMIT_EXCEEDED`] "Request timed out";
    /// - tower's load shedding (`tower::load_shed::error::Overloaded`) is
    ///   [`SERVER_OVERLOADED`], to be retried later;
    /// - anything else is -32603, its message logged, not sent.
    ///
    /// tower's errors are recognized by their messages, since this crate
    /// depends on tower's traits only, not on tower.
    pub fn new<S>(service: S) -> Self
    where
        S: Service<MethodCall, Response = MethodResponse> + Clone + Send + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        MethodService { inner: Box::new(Erased(service)) }
    }

    /// The service that runs calls on `router`, with no layer.
    pub(crate) fn router(router: Arc<Router>) -> Self {
        MethodService { inner: Box::new(RouterService(router)) }
    }
}

/// A [`MethodService`] without its type: what the engine keeps.
trait CloneService: Send {
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>>;
    fn call(&mut self, call: MethodCall) -> MethodServiceFuture;
    fn clone_box(&self) -> Box<dyn CloneService>;
}

struct Erased<S>(S);

impl<S> CloneService for Erased<S>
where
    S: Service<MethodCall, Response = MethodResponse> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        self.0.poll_ready(cx).map_err(|error| layer_error(error.into()))
    }

    fn call(&mut self, call: MethodCall) -> MethodServiceFuture {
        let future = self.0.call(call);
        Box::pin(async move { future.await.map_err(|error| layer_error(error.into())) })
    }

    fn clone_box(&self) -> Box<dyn CloneService> {
        Box::new(Erased(self.0.clone()))
    }
}

/// The innermost service: runs the call on the router. A plain method
/// runs in `call`, an `async` one when the future is polled.
#[derive(Clone)]
struct RouterService(Arc<Router>);

impl CloneService for RouterService {
    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: MethodCall) -> MethodServiceFuture {
        let notification = call.is_notification();
        let mut out = Vec::new();
        let router = &self.0;
        let found = router.find(&call.method);
        let response = match router.call(&call.method, found, call.params.as_deref(), notification, &call.cx, &mut out)
        {
            Called::NotFound => MethodResponse::error(ErrorObject::method_not_found()),
            Called::Written => MethodResponse { result: Ok(Json::Written(out)) },
            Called::Failed(error) => MethodResponse::error(error),
            Called::Pending(future) => {
                return Box::pin(async move { Ok(MethodResponse::from(future.await)) });
            }
        };
        Box::pin(std::future::ready(Ok(response)))
    }

    fn clone_box(&self) -> Box<dyn CloneService> {
        Box::new(self.clone())
    }
}

/// The layers an engine runs every call through.
#[derive(Clone)]
pub(crate) struct Stack {
    /// The layered service; each call runs on a clone (tower's rule for
    /// sharing a service), taken under the lock so that the service need
    /// not be `Sync`.
    service: Arc<Mutex<MethodService>>,
}

impl Stack {
    /// The router alone, or `stack` with `layer` around it (outside every
    /// layer added before).
    pub(crate) fn wrap<L>(stack: Option<&Stack>, router: &Arc<Router>, layer: L) -> Stack
    where
        L: Layer<MethodService>,
        L::Service: Service<MethodCall, Response = MethodResponse> + Clone + Send + 'static,
        <L::Service as Service<MethodCall>>::Error: Into<BoxError>,
        <L::Service as Service<MethodCall>>::Future: Send + 'static,
    {
        let inner = match stack {
            Some(stack) => stack.service(),
            None => MethodService::router(Arc::clone(router)),
        };
        Stack { service: Arc::new(Mutex::new(MethodService::new(layer.layer(inner)))) }
    }

    fn service(&self) -> MethodService {
        self.service.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Runs a call of `method` through the layers to the router (`id` is
    /// the request's raw id, `None` for a notification). A call every
    /// layer lets through at once (and a plain method) is answered now,
    /// its result appended to `out`; one that waits (for a layer's
    /// readiness or an `async` method) becomes a future.
    pub(crate) fn call(
        &self,
        method: &str,
        params: Option<&RawValue>,
        cx: Context,
        id: Option<&str>,
        out: &mut Vec<u8>,
    ) -> Called {
        let call = MethodCall::new(method, params.map(ToOwned::to_owned), cx, id.map(Into::into));
        let mut service = self.service();
        let mut future: MethodServiceFuture = Box::pin(async move {
            poll_fn(|cx| service.poll_ready(cx)).await?;
            service.call(call).await
        });
        // One poll with a waker that does nothing: a future still pending
        // is polled again by its task, with the task's waker.
        let mut cx = TaskContext::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(Ok(response))) => response.write_into(out),
            Ok(Poll::Ready(Err(error))) => Called::Failed(error),
            Ok(Poll::Pending) => Called::Pending(into_method_future(future)),
            Err(panic) => Called::Failed(panicked(method, &*panic)),
        }
    }
}

fn into_method_future(future: MethodServiceFuture) -> MethodFuture {
    Box::pin(async move { future.await.and_then(MethodResponse::into_method_result) })
}

/// The JSON-RPC error for a layer's `error` (see [`MethodService::new`]).
fn layer_error(error: BoxError) -> ErrorObject {
    let error = match error.downcast::<ErrorObject>() {
        Ok(error) => return *error,
        Err(error) => error,
    };
    let mut cause: Option<&(dyn StdError + 'static)> = Some(&*error);
    while let Some(current) = cause {
        if let Some(error) = current.downcast_ref::<ErrorObject>() {
            return error.clone();
        }
        match current.to_string().as_str() {
            // tower::timeout::error::Elapsed
            "request timed out" => return ErrorObject::new(LIMIT_EXCEEDED, "Request timed out"),
            // tower::load_shed::error::Overloaded
            "service overloaded" => {
                return ErrorObject::new(SERVER_OVERLOADED, "Server overloaded: the call was shed; retry later");
            }
            _ => cause = current.source(),
        }
    }
    tracing::warn!(error = %error, "a server layer failed a call");
    ErrorObject::internal_error("Internal error")
}
