//! The call of a request with something around it: cancellation
//! tracking, its turn on an ordered connection, tower layers. The engine's
//! direct call (`Engine::call_direct`) has none of these.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde_json::value::RawValue;

use super::Engine;
use crate::dispatch::context::Context;
use crate::dispatch::inflight;
use crate::dispatch::middleware::Stack;
use crate::dispatch::order;
use crate::dispatch::pending::SilentCancel;
use crate::dispatch::router::{Called, MethodFuture, Router, panicked, written_result};
use crate::wire::error::{ErrorObject, REQUEST_CANCELLED};

impl Engine {
    /// The call of a request registered for cancellation, ordered on its
    /// connection, or through layers, with a context of its own. A call
    /// that waits keeps the registration's guard in its future (see
    /// `inflight::track`), which comes back with the signal that silences
    /// its answer; any other call is over, and the guard is dropped here.
    #[inline(never)]
    pub(super) fn call_wrapped(
        &self,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&str>,
        cx: &Context,
        out: &mut Vec<u8>,
    ) -> (Called, SilentCancel) {
        let (cx, guard) = cx.for_request(id);
        let mut ticket = None;
        if let (true, Some(link)) = (self.router.ordered(), &cx.link)
            && let Some(found) = self.router.find(method)
        {
            let admission = link.gate().admit(found.spec.exclusive);
            if !admission.now() {
                let future = self.deferred(method, params, id, cx.into_owned(), admission);
                let (future, silent_cancel) = inflight::track(future, guard);
                return (Called::Pending(future), silent_cancel);
            }
            ticket = Some(admission.ticket);
        }
        let called = call_through(&self.router, self.layers.as_ref(), method, params, id, cx, out);
        // On an ordered connection an `async` call is first polled here,
        // on the reader: one that finishes without waiting (an edit that
        // only queues a notification) is answered now and gives its place
        // back at once, so the calls after it need not wait on a task. A
        // call that waits holds its place until it ends.
        let called = match (called, ticket) {
            (Called::Pending(future), Some(ticket)) => match poll_once(future, method, out) {
                Called::Pending(future) => Called::Pending(Box::pin(async move {
                    let result = future.await;
                    drop(ticket);
                    result
                })),
                done => done,
            },
            (called, _) => called,
        };
        match called {
            Called::Pending(future) => {
                let (future, silent_cancel) = inflight::track(future, guard);
                (Called::Pending(future), silent_cancel)
            }
            called => (called, SilentCancel::default()),
        }
    }
}

/// Calls `method` on `router`, through `layers` when there are any (which
/// take the context owned).
fn call_through(
    router: &Router,
    layers: Option<&Stack>,
    method: &str,
    params: Option<&RawValue>,
    id: Option<&str>,
    cx: Cow<'_, Context>,
    out: &mut Vec<u8>,
) -> Called {
    match layers {
        None => router.call(method, router.find(method), params, id.is_none(), &cx, out),
        Some(layers) => layers.call(method, params, cx.into_owned(), id, out),
    }
}

/// Polls `future` (method `method`'s) once, with a waker that does
/// nothing: a result is written into `out` (or becomes the failure), and a
/// future that waits is handed back, to be polled again where it will run
/// (its first poll there registers the real waker, so a wake-up in between
/// is not lost). A panic is answered as any method's panic is.
fn poll_once(mut future: MethodFuture, method: &str, out: &mut Vec<u8>) -> Called {
    let mut context = TaskContext::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut context))) {
        Ok(Poll::Pending) => Called::Pending(future),
        Ok(Poll::Ready(Ok(result))) => {
            out.extend_from_slice(result.get().as_bytes());
            Called::Written
        }
        Ok(Poll::Ready(Err(error))) => Called::Failed(error),
        Err(panic) => Called::Failed(panicked(method, &*panic)),
    }
}

impl Engine {
    /// Whether calls on `cx`'s connection are admitted through its order
    /// (a method is `exclusive`, and the call came over a connection).
    #[inline]
    pub(super) fn ordered_on(&self, cx: &Context) -> bool {
        self.router.ordered() && cx.link.is_some()
    }

    /// A call that must wait for its turn on its connection (see
    /// `dispatch::order`): its params are copied, and it is made, through
    /// the layers like any other, once what it waits for has ended. Until
    /// then its cancellation, or the connection's end, drops it unrun.
    #[cold]
    #[inline(never)]
    fn deferred(
        &self,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&str>,
        cx: Context,
        admission: order::Admission,
    ) -> MethodFuture {
        let router = Arc::clone(&self.router);
        let layers = self.layers.clone();
        let method: Box<str> = method.into();
        let params: Option<Box<RawValue>> = params.map(ToOwned::to_owned);
        let id: Option<Box<str>> = id.map(Into::into);
        Box::pin(async move {
            let order::Admission { ticket, after } = admission;
            tokio::select! {
                biased;
                () = order::wait(&after) => {}
                () = cx.cancelled() => {
                    return Err(ErrorObject::new(REQUEST_CANCELLED, "Request cancelled before it started"));
                }
            }
            let mut out = Vec::new();
            let (params, id) = (params.as_deref(), id.as_deref());
            let called = call_through(&router, layers.as_ref(), &method, params, id, Cow::Owned(cx), &mut out);
            let result = match called {
                Called::Written => written_result(out),
                Called::Failed(error) => Err(error),
                Called::Pending(future) => future.await,
                Called::NotFound => Err(ErrorObject::method_not_found()),
            };
            drop(ticket);
            result
        })
    }
}
