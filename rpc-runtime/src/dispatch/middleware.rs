//! A point around every call: code that sees the method name, the params
//! and the context before the method runs, may answer instead of it
//! (a rate limit, say), and sees its result after (logging, metrics).
//!
//! Middleware is set on the engine (`Server::middleware`); without any,
//! dispatch takes its usual path and pays nothing for this module.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::dispatch::context::Context;
use crate::dispatch::router::{Called, MethodOutcome, MethodResult, Router};
use crate::wire::error::ErrorObject;

/// One call as middleware sees it.
#[derive(Clone, Copy, Debug)]
pub struct MethodCall<'a> {
    /// The method name, as the caller sent it.
    pub method: &'a str,
    /// The params as raw JSON (an array or an object), if any.
    pub params: Option<&'a RawValue>,
    /// The request's context: the caller's extensions (identity,
    /// [`Permissions`](crate::dispatch::Permissions)), peer address, cancellation.
    pub cx: &'a Context,
    /// `true` for a notification (its outcome is never sent).
    pub notification: bool,
}

/// Code around every call. Implement [`Middleware::call`]; call
/// `next.run()` to go on to the method (or the next middleware), or
/// answer without it.
///
/// ```
/// use rpc_runtime::{ErrorObject, MethodCall, Middleware, Next, dispatch::MethodOutcome, wire::LIMIT_EXCEEDED};
///
/// /// Refuses every call to `expensive` with a JSON-RPC error.
/// struct NoExpensive;
///
/// impl Middleware for NoExpensive {
///     fn call(&self, call: &MethodCall<'_>, next: Next<'_>) -> MethodOutcome {
///         if call.method == "expensive" {
///             return MethodOutcome::Ready(Err(ErrorObject::new(LIMIT_EXCEEDED, "Limit exceeded")));
///         }
///         let method = call.method.to_owned();
///         next.run().inspect(move |result| println!("{method}: ok = {}", result.is_ok()))
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles `call`; `next.run()` runs the rest of the chain.
    fn call(&self, call: &MethodCall<'_>, next: Next<'_>) -> MethodOutcome;
}

/// The rest of the chain after a middleware: the next middleware, or the
/// method itself.
pub struct Next<'a> {
    call: MethodCall<'a>,
    rest: &'a [Arc<dyn Middleware>],
    router: &'a Router,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("call", &self.call).field("middleware_left", &self.rest.len()).finish()
    }
}

impl Next<'_> {
    /// Runs the rest of the chain: the method's outcome, ready or pending.
    /// An unknown method is -32601, as without middleware.
    pub fn run(self) -> MethodOutcome {
        match self.rest.split_first() {
            Some((first, rest)) => first.call(&self.call, Next { rest, ..self }),
            None => {
                let MethodCall { method, params, cx, notification } = self.call;
                let mut out = Vec::new();
                match self.router.call_into(method, params, notification, cx, &mut out) {
                    None => MethodOutcome::Ready(Err(ErrorObject::method_not_found())),
                    Some(Called::Failed(err)) => MethodOutcome::Ready(Err(err)),
                    Some(Called::Pending(future)) => MethodOutcome::Pending(future),
                    Some(Called::Written) => MethodOutcome::Ready(raw(out)),
                }
            }
        }
    }
}

impl MethodOutcome {
    /// The same outcome, with `inspect` called on the result once it is
    /// known: now for a plain method, when the future completes for an
    /// `async` one.
    pub fn inspect<F>(self, inspect: F) -> MethodOutcome
    where
        F: FnOnce(&MethodResult) + Send + 'static,
    {
        match self {
            MethodOutcome::Ready(result) => {
                inspect(&result);
                MethodOutcome::Ready(result)
            }
            MethodOutcome::Pending(future) => MethodOutcome::Pending(Box::pin(async move {
                let result = future.await;
                inspect(&result);
                result
            })),
        }
    }
}

/// The chain of middleware an engine runs around every call.
pub(crate) type Stack = Arc<[Arc<dyn Middleware>]>;

/// Runs `call` through `stack` to `router`; the outcome as the engine
/// wants it (a ready result appended to `out`).
pub(crate) fn call_through(stack: &Stack, router: &Router, call: MethodCall<'_>, out: &mut Vec<u8>) -> Called {
    match (Next { call, rest: stack, router }).run() {
        MethodOutcome::Ready(Ok(value)) => {
            out.extend_from_slice(value.get().as_bytes());
            Called::Written
        }
        MethodOutcome::Ready(Err(err)) => Called::Failed(err),
        MethodOutcome::Pending(future) => Called::Pending(future),
    }
}

fn raw(json: Vec<u8>) -> MethodResult {
    // The router wrote valid JSON; re-checking it costs a parse but keeps
    // this free of `unsafe`.
    let text =
        String::from_utf8(json).map_err(|_| ErrorObject::internal_error("Internal error: result is not UTF-8"))?;
    RawValue::from_string(text).map_err(|err| ErrorObject::internal_error(format!("Internal error: {err}")))
}
