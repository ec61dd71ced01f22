//! Serving a NATS subject as a member of a queue group: [`NatsListener`],
//! which answers each message on its own and drains without losing one.

use std::borrow::Cow;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use async_nats::{Client, Message, Subject, Subscriber};
use bytes::Bytes;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::{REFUSED, ids_of, next, other, write_errors};
use crate::dispatch::context::Context;
use crate::dispatch::engine::Engine;
use crate::dispatch::pending::PendingResponse;
use crate::transport::hook::{Admission, ConnectionInfo, HookFuture, Refused};
use crate::transport::listener::{Listener, Shutdown};
use crate::transport::server::Server;
use crate::wire::response::write_error;
use crate::wire::{ErrorObject, INTERNAL_ERROR, INVALID_REQUEST};

/// When told to stop, the subscription stays for at least this
/// many more messages, or as many as arrived in the last quarter second
/// if more (see [`Replica::drain`]).
const MIN_DRAIN_WINDOW: u64 = 1024;
/// Where `max_concurrent_requests` holds over NATS, for its refusal.
const REPLICA: &str = "in this replica";

/// How long a rate bucket lasts (see [`Traffic`]).
const RATE_BUCKET: Duration = Duration::from_millis(250);

/// A draining replica that received nothing for this long leaves
/// the queue group at once (see [`Replica::drain`]).
const DRAIN_QUIET: Duration = Duration::from_millis(50);

/// A NATS subject served as a member of a queue group, for
/// [`Server::serve`]: any number of processes share the calls (the broker
/// picks one member per message). Serving ends with an error when the
/// client's connection closes for good.
///
/// ```no_run
/// # async fn run(router: rpc_runtime::Router) -> std::io::Result<()> {
/// use rpc_runtime::{Server, transport::nats::{async_nats, NatsListener}};
///
/// let client = async_nats::connect("nats://127.0.0.1:4222").await.map_err(std::io::Error::other)?;
/// Server::new(router).serve(NatsListener::new(client, "svc.calculator", "svc.calculator")).await
/// # }
/// ```
///
/// On graceful shutdown it drains: leaves the queue group (the broker
/// sends the next calls to the other members), answers every message it
/// already received, and returns.
///
/// - Each message is handled on its own, like an HTTP request: it is
///   answered on its reply subject; a notification (no `id`), or a
///   message without a reply subject, is never answered; a batch is
///   answered with one message. `Context::peer` is `None` (there is
///   no connection to call the client back on).
/// - The connection hook ([`Server::on_connect`]) runs once per
///   message, with a [`ConnectionInfo`] of transport `"nats"` whose
///   parts are the message's [`HeaderMap`](async_nats::HeaderMap)
///   (empty without headers) and its [`Subject`]: a token in a header
///   authenticates each call. A
///   refused message is answered with [`REFUSED`] for each of its ids.
///   Cost: without a hook nothing is built; with one, each message
///   costs a `ConnectionInfo` (two small allocations) and the hook's
///   call; a hook whose future is ready at once runs inline, one that
///   waits runs on a task of its own.
/// - An answer larger than the broker's `max_payload` is replaced by
///   a -32603 error for each id it answers (never dropped silently);
///   a message over [`Limits::max_message_size`](crate::Limits) is
///   answered with -32600. [`Limits::max_concurrent_requests`](crate::Limits)
///   bounds the `async` requests running at once in this replica.
///
/// Draining is exact under load: the broker is told to stop after a
/// number of further messages counted on both sides, so nothing it
/// already routed here is lost. When the subject has been quiet for
/// 50 ms it leaves at once (async-nats drops a subscription's messages
/// still on the wire once it unsubscribes, so a call arriving in that
/// very instant could be lost; its caller times out).
#[derive(Clone, Debug)]
pub struct NatsListener {
    client: Client,
    subject: String,
    queue_group: String,
}

impl NatsListener {
    /// Serves subject `subject` on `client`'s connection as a member of
    /// queue group `queue_group`.
    pub fn new(client: Client, subject: impl Into<String>, queue_group: impl Into<String>) -> Self {
        NatsListener { client, subject: subject.into(), queue_group: queue_group.into() }
    }
}

impl Listener for NatsListener {
    async fn run(self, server: Server, shutdown: Shutdown) -> io::Result<()> {
        let NatsListener { client, subject, queue_group } = self;
        let mut subscriber = client.queue_subscribe(subject.clone(), queue_group).await.map_err(other)?;
        tracing::debug!(subject, "serving a NATS subject");
        #[cfg(feature = "metrics")]
        let _open = crate::dispatch::metrics::OpenConnection::new("nats");
        let mut replica = Replica::new(&server, client);
        let mut shutdown = pin!(shutdown.started());
        let ended = loop {
            let message = tokio::select! {
                biased;
                () = &mut shutdown => break false,
                message = next(&mut subscriber) => message,
            };
            match message {
                Some(message) => replica.serve(message).await,
                None => break true,
            }
        };
        if ended {
            replica.finish().await;
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the NATS connection closed"));
        }
        tracing::info!(subject, received = replica.traffic.received, "draining: leaving the queue group");
        let quiet = replica.drain(&mut subscriber).await;
        let received = replica.traffic.received;
        replica.finish().await;
        tracing::info!(subject, received, quiet, "drained: every message received was handled");
        Ok(())
    }
}

/// What answering needs, cheap to clone into a task.
#[derive(Clone)]
struct Responder {
    client: Client,
    engine: Engine,
    /// One permit per `async` request running (and per message waiting on
    /// an `async` hook); all of them back means nothing runs.
    running: Arc<Semaphore>,
    permits: usize,
}

/// One serving subscription: its responder, its hook and its traffic.
struct Replica<'s> {
    server: &'s Server,
    responder: Responder,
    base: Context,
    traffic: Traffic,
}

impl<'s> Replica<'s> {
    fn new(server: &'s Server, client: Client) -> Self {
        let limit = server.engine.limits().max_concurrent_requests;
        let permits = limit.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let responder =
            Responder { client, engine: server.engine.clone(), running: Arc::new(Semaphore::new(permits)), permits };
        Replica { server, responder, base: Context::new().with_transport("nats"), traffic: Traffic::new() }
    }

    /// Handles one message: inline when its hook and methods are ready at
    /// once, else on a task.
    async fn serve(&mut self, message: Message) {
        self.traffic.record();
        let Message { subject, reply, payload, headers, .. } = message;
        let max = self.responder.engine.limits().max_message_size;
        if payload.len() > max {
            let error = ErrorObject::new(
                INVALID_REQUEST,
                format!("Invalid Request: message of {} bytes exceeds the limit of {max} bytes", payload.len()),
            );
            self.responder.publish(reply, error_answer(&payload, &error)).await;
            return;
        }
        #[cfg(feature = "otel")]
        let trace = headers.as_ref().and_then(crate::otel::TraceContext::from_nats);
        let cx = match &self.server.hook {
            #[cfg(feature = "otel")]
            None if trace.is_some() => Cow::Owned(self.base.clone().with_trace(trace)),
            None => Cow::Borrowed(&self.base),
            Some(hook) => {
                let info =
                    ConnectionInfo::new("nats").with_part(headers.unwrap_or_default()).with_part(subject.clone());
                let base = Context::new().with_transport("nats");
                #[cfg(feature = "otel")]
                let base = base.with_trace(trace);
                let admitted = match hook.start(&info, base) {
                    Admission::Now(admitted) => admitted,
                    Admission::Later(mut admitted) => match poll_once(&mut admitted) {
                        Some(admitted) => admitted,
                        None => {
                            self.responder.spawn_admission(admitted, subject, reply, payload);
                            return;
                        }
                    },
                };
                match admitted {
                    Ok(cx) => Cow::Owned(cx),
                    Err(refused) => {
                        self.responder.publish(reply, refusal(&subject, &payload, &refused)).await;
                        return;
                    }
                }
            }
        };
        let mut out = Vec::new();
        if let Some(pending) = self.responder.engine.process(&payload, &cx, &mut out)
            && let Err(rejected) = self.responder.spawn_pending(pending, reply.clone())
        {
            out = rejected;
        }
        self.responder.publish(reply, out).await;
    }

    /// Leaves the queue group without losing a message the broker already
    /// routed here, answering every message received meanwhile.
    ///
    /// async-nats forgets a subscription as soon as it sent the
    /// unsubscription, before the broker confirmed it, so messages still
    /// on the wire would be dropped. Instead both sides are told to stop
    /// after the same count ("unsubscribe after N"): the broker sends at
    /// most N messages in all on this subscription, the client keeps it
    /// until it has N. N is what was received so far plus a window larger
    /// than what can be on the wire (at least [`MIN_DRAIN_WINDOW`], or a
    /// quarter second's worth of the recent traffic). Under load the count
    /// is reached quickly; when no message came for [`DRAIN_QUIET`], the
    /// subscription is drained at once instead (and this returns `true`).
    async fn drain(&mut self, subscriber: &mut Subscriber) -> bool {
        let stop_after = self.traffic.received + self.traffic.window();
        let mut leaving = subscriber.unsubscribe_after(stop_after).await.is_err();
        loop {
            let quiet = self.traffic.last + DRAIN_QUIET;
            let message = tokio::select! {
                biased;
                message = next(subscriber) => message,
                () = tokio::time::sleep_until(quiet), if !leaving => {
                    leaving = true;
                    let _ = subscriber.drain().await;
                    continue;
                }
            };
            match message {
                Some(message) => self.serve(message).await,
                None => return leaving,
            }
        }
    }

    /// Waits until every running request was answered, and the answers
    /// handed to the socket.
    async fn finish(self) {
        let Responder { client, running, permits, .. } = self.responder;
        let _all_done = running.acquire_many(permits as u32).await;
        if let Err(err) = client.flush().await {
            tracing::debug!(error = %err, "flushing the last answers failed");
        }
    }
}

impl Responder {
    /// Publishes `answer` (if any) on `reply`, or, if it is larger than
    /// the broker takes, an error for each id it answers.
    async fn publish(&self, reply: Option<Subject>, answer: Vec<u8>) {
        if answer.is_empty() {
            return;
        }
        let Some(reply) = reply else {
            tracing::debug!("dropped an answer: the message had no reply subject");
            return;
        };
        let limit = self.client.max_payload();
        let answer = if answer.len() > limit { too_large(&answer, limit) } else { answer };
        if let Err(err) = self.client.publish(reply, Bytes::from(answer)).await {
            tracing::warn!(error = %err, "publishing an answer failed");
        }
    }

    /// Runs the `async` part of an answer on a task, if the concurrency
    /// limit allows; else gives back the answer that turns it away.
    fn spawn_pending(&self, pending: PendingResponse, reply: Option<Subject>) -> Result<(), Vec<u8>> {
        let wanted = u32::try_from(pending.calls()).ok();
        match wanted.map(|n| Arc::clone(&self.running).try_acquire_many_owned(n)) {
            Some(Ok(slot)) => {
                let responder = self.clone();
                tokio::spawn(async move {
                    let answer = pending.run().await;
                    responder.publish(reply, answer).await;
                    drop(slot);
                });
                Ok(())
            }
            _ => {
                tracing::debug!(calls = pending.calls(), limit = self.permits, "refused: too many requests running");
                Err(pending.reject(&ErrorObject::overloaded(self.permits, REPLICA)))
            }
        }
    }

    /// Finishes a message whose hook has to wait, on a task of its own.
    fn spawn_admission(&self, admitted: HookFuture, subject: Subject, reply: Option<Subject>, payload: Bytes) {
        let Ok(slot) = Arc::clone(&self.running).try_acquire_owned() else {
            let answer = error_answer(&payload, &ErrorObject::overloaded(self.permits, REPLICA));
            let responder = self.clone();
            tokio::spawn(async move { responder.publish(reply, answer).await });
            return;
        };
        let responder = self.clone();
        tokio::spawn(async move {
            let answer = match admitted.await {
                Err(refused) => refusal(&subject, &payload, &refused),
                Ok(cx) => {
                    let mut out = Vec::new();
                    match responder.engine.process(&payload, &cx, &mut out) {
                        None => out,
                        Some(pending) => {
                            let wanted = u32::try_from(pending.calls()).ok();
                            match wanted.map(|n| Arc::clone(&responder.running).try_acquire_many_owned(n)) {
                                Some(Ok(_more)) => pending.run().await,
                                _ => pending.reject(&ErrorObject::overloaded(responder.permits, REPLICA)),
                            }
                        }
                    }
                }
            };
            responder.publish(reply, answer).await;
            drop(slot);
        });
    }
}

/// Polls a hook's future once: its outcome if it is ready at once (the
/// common case of a hook that only looks at the headers).
fn poll_once(future: &mut HookFuture) -> Option<Result<Context, Refused>> {
    match future.as_mut().poll(&mut TaskContext::from_waker(Waker::noop())) {
        Poll::Ready(outcome) => Some(outcome),
        Poll::Pending => None,
    }
}

/// Messages received, for the drain window: a count, and the counts of
/// the current and the previous [`RATE_BUCKET`].
struct Traffic {
    received: u64,
    last: Instant,
    bucket_start: Instant,
    current: u64,
    previous: u64,
}

impl Traffic {
    fn new() -> Self {
        let now = Instant::now();
        Traffic { received: 0, last: now, bucket_start: now, current: 0, previous: 0 }
    }

    fn record(&mut self) {
        let now = Instant::now();
        self.received += 1;
        self.last = now;
        if now.duration_since(self.bucket_start) >= RATE_BUCKET {
            let stale = now.duration_since(self.bucket_start) >= 2 * RATE_BUCKET;
            self.previous = if stale { 0 } else { self.current };
            self.current = 0;
            self.bucket_start = now;
        }
        self.current += 1;
    }

    /// How many more messages a draining subscription takes.
    fn window(&self) -> u64 {
        MIN_DRAIN_WINDOW.max(self.current).max(self.previous)
    }
}

/// The answer to a message refused by the connection hook.
fn refusal(subject: &Subject, message: &[u8], refused: &Refused) -> Vec<u8> {
    tracing::debug!(%subject, %refused, "message refused");
    let text = if refused.is_unauthorized() { "Unauthorized" } else { "Forbidden" };
    error_answer(message, &ErrorObject::new(REFUSED, text))
}

/// An answer that stands in for one larger than the broker's
/// `max_payload`: the same error for each id it answers. When even that
/// is too large (a batch of many invalid entries answers as many errors
/// with id null), the errors nobody can match to a request (id null) are
/// left out first, so each request id still gets its error; only when
/// those alone do not fit is the answer one error with id null.
fn too_large(answer: &[u8], limit: usize) -> Vec<u8> {
    tracing::warn!(size = answer.len(), limit, "an answer exceeds the NATS server's max_payload");
    let error = ErrorObject::new(
        INTERNAL_ERROR,
        format!(
            "Internal error: the answer of {} bytes exceeds the NATS server's max_payload of {limit} bytes",
            answer.len()
        ),
    );
    let replaced = error_answer(answer, &error);
    if replaced.len() <= limit {
        return replaced;
    }
    if let Some((true, ids)) = ids_of(answer) {
        let mut matched = Vec::new();
        write_errors(&mut matched, true, ids.iter().map(|id| id.get()).filter(|id| *id != "null"), &error);
        if !matched.is_empty() && matched.len() <= limit {
            return matched;
        }
    }
    let mut single = Vec::new();
    write_error(&mut single, "null", &error);
    single
}

/// `error` for each id of `message` (a batch of them for a batch); one
/// error with id null when the ids cannot be read; nothing when there are
/// none (notifications are never answered).
fn error_answer(message: &[u8], error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::new();
    match ids_of(message) {
        None => write_error(&mut out, "null", error),
        Some((batch, ids)) => write_errors(&mut out, batch, ids.iter().map(|id| id.get()), error),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_answers_follow_the_shape_of_the_message() {
        let error = ErrorObject::new(REFUSED, "Unauthorized");
        let single: serde_json::Value =
            serde_json::from_slice(&error_answer(br#"{"jsonrpc":"2.0","method":"m","id":3}"#, &error)).unwrap();
        assert_eq!(single["id"], 3);
        assert_eq!(single["error"]["code"], REFUSED);
        let batch: serde_json::Value = serde_json::from_slice(&error_answer(
            br#"[{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"m","id":2}]"#,
            &error,
        ))
        .unwrap();
        assert_eq!(batch.as_array().unwrap().len(), 2);
        assert_eq!(batch[1]["id"], 2);
        assert!(error_answer(br#"{"jsonrpc":"2.0","method":"n"}"#, &error).is_empty());
        assert!(error_answer(br#"[{"jsonrpc":"2.0","method":"n"}]"#, &error).is_empty());
        let unreadable: serde_json::Value = serde_json::from_slice(&error_answer(b"{", &error)).unwrap();
        assert_eq!(unreadable["id"], serde_json::Value::Null);
    }

    #[test]
    fn an_answer_over_max_payload_becomes_an_error_per_id() {
        let answer = format!(
            r#"[{{"jsonrpc":"2.0","result":"{}","id":1}},{{"jsonrpc":"2.0","result":2,"id":2}}]"#,
            "x".repeat(2_000)
        );
        let answer = answer.as_bytes();
        let replaced: serde_json::Value = serde_json::from_slice(&too_large(answer, 1_000)).unwrap();
        let entries = replaced.as_array().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0]["error"]["code"], INTERNAL_ERROR);
        assert!(entries[0]["error"]["message"].as_str().unwrap().contains("max_payload of 1000 bytes"));
        let tiny: serde_json::Value = serde_json::from_slice(&too_large(answer, 10)).unwrap();
        assert_eq!(tiny["id"], serde_json::Value::Null);
    }

    #[test]
    fn errors_with_id_null_are_dropped_before_the_ids_that_match_a_request() {
        // One call and 999 invalid entries: 999 errors with id null.
        let invalid = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}"#;
        let mut answer = format!(r#"[{{"jsonrpc":"2.0","result":"{}","id":77}}"#, "x".repeat(100));
        for _ in 0..999 {
            answer.push(',');
            answer.push_str(invalid);
        }
        answer.push(']');
        let replaced: serde_json::Value = serde_json::from_slice(&too_large(answer.as_bytes(), 4096)).unwrap();
        let entries = replaced.as_array().unwrap_or_else(|| panic!("a batch: {replaced}"));
        assert_eq!(entries.len(), 1, "{replaced}");
        assert_eq!(entries[0]["id"], 77);
        assert_eq!(entries[0]["error"]["code"], INTERNAL_ERROR);
    }

    #[test]
    fn the_drain_window_covers_recent_traffic() {
        let mut traffic = Traffic::new();
        assert_eq!(traffic.window(), MIN_DRAIN_WINDOW);
        for _ in 0..3000 {
            traffic.record();
        }
        assert_eq!(traffic.received, 3000);
        assert!(traffic.window() >= 3000);
    }
}
