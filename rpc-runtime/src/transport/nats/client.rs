//! Calling a service on a NATS subject: [`NatsConnect`], a connection
//! whose requests are publishes with a reply subject under a private
//! inbox, and whose incoming messages are the answers on that inbox.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::client::PublishErrorKind;
use async_nats::{Client, HeaderMap, StatusCode, Subject, Subscriber};
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{NO_RESPONDERS, ids_of, next, other, write_errors};
use crate::peer::{MessageSink, MessageSource, Peer, PeerBuilder, Received};
use crate::sync::lock;
use crate::transport::listener::Connect;
use crate::wire::{ErrorObject, INTERNAL_ERROR, INVALID_REQUEST};

/// A call still unanswered after this long (its caller gave up long ago)
/// is forgotten by the transport; a late answer still reaches the peer,
/// which drops it.
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// A service on a NATS subject (served with a [`NatsListener`](super::NatsListener) in any
/// number of processes), for [`PeerBuilder::connect`]: every request
/// and batch is published with a reply subject under a private inbox
/// of `client`, notifications are plain publishes, and the answers
/// come back as on any other connection, so generated clients, typed
/// batches and timeouts work as everywhere.
///
/// A call when nothing is subscribed to `subject` fails at once with
/// the broker's "no responders", as [`ClientError::Server`](crate::ClientError::Server)
/// with code [`NO_RESPONDERS`] and `data` `{"transport": "nats"}` (made
/// here: it displays as its message, not as a server's answer); a request larger than the broker's
/// `max_payload` fails with -32600 without being sent. A call whose
/// server dies before answering waits for its timeout: set one
/// ([`PeerBuilder::timeout`]). Cancellation notifications, if
/// configured, would reach any member of the queue group, so they are
/// of no use here; calls back from the server are not possible.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use std::time::Duration;
/// use rpc_runtime::{Peer, transport::nats::{async_nats, NatsConnect}};
///
/// let client = async_nats::connect("nats://127.0.0.1:4222").await.map_err(std::io::Error::other)?;
/// let peer = Peer::builder().timeout(Duration::from_secs(5)).connect(NatsConnect::new(client, "svc.calculator")).await?;
/// let difference: i64 = peer.call("subtract", [42, 23]).await.expect("a call");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct NatsConnect {
    client: Client,
    subject: String,
    headers: HeaderMap,
}

impl NatsConnect {
    /// The service on subject `subject`, called over `client`'s connection.
    pub fn new(client: Client, subject: impl Into<String>) -> Self {
        NatsConnect { client, subject: subject.into(), headers: HeaderMap::new() }
    }

    /// Sends `headers` with every message (a token for the server's
    /// connection hook, say).
    ///
    /// ```no_run
    /// # async fn run(client: rpc_runtime::transport::nats::async_nats::Client) -> std::io::Result<()> {
    /// use rpc_runtime::{Peer, transport::nats::{async_nats::HeaderMap, NatsConnect}};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("Authorization", "Bearer secret");
    /// let peer = Peer::builder().connect(NatsConnect::new(client, "svc.calculator").headers(headers)).await?;
    /// # Ok(()) }
    /// ```
    #[must_use = "a builder does nothing until used"]
    pub fn headers(self, headers: HeaderMap) -> Self {
        NatsConnect { headers, ..self }
    }
}

impl Connect for NatsConnect {
    async fn connect(self, builder: PeerBuilder) -> io::Result<Peer> {
        let NatsConnect { client, subject, headers } = self;
        let wildcard = subject.split('.').any(|token| token == "*" || token == ">");
        if wildcard || !Subject::from(subject.as_str()).is_valid() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{subject}` is not a NATS subject one can publish to"),
            ));
        }
        let subject = Subject::from(subject);
        let prefix = client.new_inbox();
        let inbox = client.subscribe(format!("{prefix}.*")).await.map_err(other)?;
        let (local_tx, local_rx) = mpsc::unbounded_channel();
        let calls = Arc::new(Mutex::new(Outstanding::default()));
        let source = NatsSource {
            inbox,
            local: local_rx,
            calls: Arc::clone(&calls),
            subject: subject.clone(),
            current: Bytes::new(),
        };
        let sink = NatsSink {
            client,
            subject,
            headers: (!headers.is_empty()).then_some(headers),
            prefix,
            next_seq: 1,
            scratch: Vec::new(),
            next_headers: None,
            queue: VecDeque::new(),
            queued: 0,
            local: local_tx,
            calls,
        };
        Ok(builder.start(source, sink))
    }
}

/// The requests published and not answered yet, by the sequence number
/// ending their reply subject: what to answer for them if the broker
/// says nobody will.
#[derive(Default)]
struct Outstanding {
    by_seq: BTreeMap<u64, Expected>,
}

struct Expected {
    sent: Instant,
    batch: bool,
    ids: Vec<Box<str>>,
}

/// The receiving half of a NATS peer: answers on its inbox, and answers
/// made up by the sending half (for requests that could not be sent).
struct NatsSource {
    inbox: Subscriber,
    local: mpsc::UnboundedReceiver<Vec<u8>>,
    calls: Arc<Mutex<Outstanding>>,
    subject: Subject,
    current: Bytes,
}

impl MessageSource for NatsSource {
    async fn recv(&mut self) -> io::Result<Option<Received<'_>>> {
        loop {
            let message = tokio::select! {
                biased;
                Some(local) = self.local.recv() => {
                    self.current = Bytes::from(local);
                    return Ok(Some(Received::Message(&self.current)));
                }
                message = next(&mut self.inbox) => message,
            };
            let Some(message) = message else { return Ok(None) };
            let seq = message.subject.rsplit('.').next().and_then(|seq| seq.parse::<u64>().ok());
            let expected = seq.and_then(|seq| lock(&self.calls).by_seq.remove(&seq));
            match message.status {
                None | Some(StatusCode::OK) => {
                    self.current = message.payload;
                    return Ok(Some(Received::Message(&self.current)));
                }
                Some(status) => {
                    let Some(expected) = expected else { continue };
                    // Made here from the broker's status, not sent by a
                    // JSON-RPC server: `data` says so, for `ClientError`'s
                    // display.
                    let error = if status == StatusCode::NO_RESPONDERS {
                        ErrorObject::new(
                            NO_RESPONDERS,
                            format!(
                                "No responders: nothing is subscribed to NATS subject `{}` (is a server running?)",
                                self.subject
                            ),
                        )
                    } else {
                        let description = message.description.as_deref().unwrap_or("");
                        ErrorObject::new(
                            INTERNAL_ERROR,
                            format!("the NATS server answered with status {status} {description}"),
                        )
                    }
                    .with_data(&serde_json::json!({ "transport": "nats" }));
                    let mut answer = Vec::new();
                    write_errors(&mut answer, expected.batch, expected.ids.iter().map(|id| &**id), &error);
                    if answer.is_empty() {
                        continue;
                    }
                    self.current = Bytes::from(answer);
                    return Ok(Some(Received::Message(&self.current)));
                }
            }
        }
    }
}

/// One message waiting to be published.
struct Outbound {
    /// The reply subject and sequence number of a message with ids.
    reply: Option<(u64, Subject)>,
    payload: Bytes,
    /// The client's headers with this message's own (its span's trace
    /// context), when it has some.
    headers: Option<HeaderMap>,
}

/// The sending half of a NATS peer: each message is one publish to the
/// service's subject.
struct NatsSink {
    client: Client,
    subject: Subject,
    /// Sent with every message, if any.
    headers: Option<HeaderMap>,
    prefix: String,
    next_seq: u64,
    scratch: Vec<u8>,
    /// The headers of the message appended next, if it has its own.
    next_headers: Option<HeaderMap>,
    queue: VecDeque<Outbound>,
    queued: usize,
    local: mpsc::UnboundedSender<Vec<u8>>,
    calls: Arc<Mutex<Outstanding>>,
}

impl NatsSink {
    /// Queues a message: with a reply subject when it expects answers
    /// (it has ids), as a plain publish otherwise.
    fn enqueue(&mut self, message: Vec<u8>) {
        let reply = match ids_of(&message) {
            Some((batch, ids)) if !ids.is_empty() => {
                let seq = self.next_seq;
                self.next_seq += 1;
                let ids = ids.into_iter().map(|id| Box::<str>::from(id.get())).collect();
                let now = Instant::now();
                let mut calls = lock(&self.calls);
                while calls.by_seq.first_key_value().is_some_and(|(_, old)| now.duration_since(old.sent) > FORGET_AFTER)
                {
                    calls.by_seq.pop_first();
                }
                calls.by_seq.insert(seq, Expected { sent: now, batch, ids });
                Some((seq, Subject::from(format!("{}.{seq}", self.prefix))))
            }
            _ => None,
        };
        self.queued += message.len();
        let headers = self.next_headers.take();
        self.queue.push_back(Outbound { reply, payload: Bytes::from(message), headers });
    }

    /// Fails the calls of a message too large to publish, through the
    /// receiving half.
    fn refuse_too_large(&mut self, outbound: Outbound, limit: usize) {
        let size = outbound.payload.len();
        tracing::debug!(size, limit, "a request exceeds the NATS server's max_payload; not sent");
        let Some((seq, _)) = outbound.reply else { return };
        let Some(expected) = lock(&self.calls).by_seq.remove(&seq) else { return };
        let error = ErrorObject::new(
            INVALID_REQUEST,
            format!(
                "Invalid Request: the request of {size} bytes exceeds the NATS server's max_payload of {limit} bytes; it was not sent"
            ),
        );
        let mut answer = Vec::new();
        write_errors(&mut answer, expected.batch, expected.ids.iter().map(|id| &**id), &error);
        let _ = self.local.send(answer);
    }
}

impl MessageSink for NatsSink {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn commit(&mut self, start: usize) {
        if self.scratch.len() > start {
            let message = if start == 0 { std::mem::take(&mut self.scratch) } else { self.scratch.split_off(start) };
            self.enqueue(message);
        }
    }

    fn send(&mut self, message: &[u8]) {
        self.enqueue(message.to_vec());
    }

    #[cfg(feature = "otel")]
    fn trace_next(&mut self, trace: &crate::otel::TraceContext) {
        let mut headers = self.headers.clone().unwrap_or_default();
        trace.write_nats(&mut headers);
        self.next_headers = Some(headers);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    async fn flush(&mut self) -> io::Result<()> {
        let limit = self.client.max_payload();
        while let Some(front) = self.queue.front() {
            let size = front.payload.len();
            if size > limit {
                if let Some(outbound) = self.queue.pop_front() {
                    self.queued -= size;
                    self.refuse_too_large(outbound, limit);
                }
                continue;
            }
            // Published before it leaves the queue: a flush dropped while
            // waiting sends it next time, never twice.
            let (client, subject, payload) = (&self.client, self.subject.clone(), front.payload.clone());
            let published = match (&front.reply, front.headers.as_ref().or(self.headers.as_ref())) {
                (Some((_, reply)), None) => client.publish_with_reply(subject, reply.clone(), payload).await,
                (None, None) => client.publish(subject, payload).await,
                (Some((_, reply)), Some(headers)) => {
                    client.publish_with_reply_and_headers(subject, reply.clone(), headers.clone(), payload).await
                }
                (None, Some(headers)) => client.publish_with_headers(subject, headers.clone(), payload).await,
            };
            let outbound = self.queue.pop_front();
            self.queued -= size;
            match published {
                Ok(()) => {}
                // The headers took it over the limit.
                Err(err) if err.kind() == PublishErrorKind::MaxPayloadExceeded => {
                    if let Some(outbound) = outbound {
                        self.refuse_too_large(outbound, limit);
                    }
                }
                Err(err) => return Err(other(err)),
            }
        }
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        self.flush().await
    }
}
