//! Logs to the client: the `tracing` events of a call, at or above the
//! level the client asked for, become `notifications/message`.
//!
//! The client asks with `logging/setLevel` for the rest of its session
//! (the handshake revisions), or per request with
//! `_meta["io.modelcontextprotocol/logLevel"]` (2026-07-28, where
//! `logging/setLevel` no longer exists). A call that has a level runs with
//! a [`CallLog`] in a task-local; [`McpLogLayer`], added to the
//! application's `tracing` subscriber, hands it the events emitted on the
//! call's task. Each call sends at most [`MAX_LOG_MESSAGES`] messages of
//! at most [`MAX_LOG_DATA`] bytes of text each, and drops what the client
//! does not read fast enough; the dropped ones are counted in one last
//! message.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::outlet::{Outlet, notification};
use super::session::{Caller, Meta, session_of};
use super::{ToolServer, read};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::router::{MethodOutcome, encode};
use crate::wire::{ErrorObject, INVALID_PARAMS, METHOD_NOT_FOUND};

/// The most log messages one call sends.
pub const MAX_LOG_MESSAGES: usize = 100;

/// The most bytes of text one log message carries (longer ones are cut).
pub const MAX_LOG_DATA: usize = 8 * 1024;

/// Messages waiting for a slow client before more are dropped.
const BACKLOG: usize = 32;

/// MCP's log levels (those of syslog, RFC 5424), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

const LEVELS: [(LogLevel, &str); 8] = [
    (LogLevel::Debug, "debug"),
    (LogLevel::Info, "info"),
    (LogLevel::Notice, "notice"),
    (LogLevel::Warning, "warning"),
    (LogLevel::Error, "error"),
    (LogLevel::Critical, "critical"),
    (LogLevel::Alert, "alert"),
    (LogLevel::Emergency, "emergency"),
];

impl LogLevel {
    pub(crate) fn parse(name: &str) -> Option<LogLevel> {
        LEVELS.iter().find(|(_, text)| *text == name).map(|(level, _)| *level)
    }

    pub(crate) fn as_str(self) -> &'static str {
        LEVELS.iter().find(|(level, _)| *level == self).map_or("info", |(_, text)| text)
    }

    /// The MCP level of a `tracing` level (trace and debug are `debug`).
    fn of(level: &tracing::Level) -> LogLevel {
        match *level {
            tracing::Level::ERROR => LogLevel::Error,
            tracing::Level::WARN => LogLevel::Warning,
            tracing::Level::INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }

    /// `level` read from JSON; -32602 naming the levels otherwise.
    pub(crate) fn read(raw: &RawValue) -> Result<LogLevel, ErrorObject> {
        serde_json::from_str::<&str>(raw.get()).ok().and_then(LogLevel::parse).ok_or_else(|| {
            let names: Vec<&str> = LEVELS.iter().map(|(_, name)| *name).collect();
            ErrorObject::new(
                INVALID_PARAMS,
                format!("Invalid params: unknown log level {}; MCP's levels are: {}", raw.get(), names.join(", ")),
            )
        })
    }
}

#[derive(Deserialize)]
struct SetLevelParams<'a> {
    #[serde(borrow, default)]
    level: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `logging/setLevel` (the handshake revisions): the level of the logs
/// the session's calls send from now on.
pub(crate) fn set_level(_: &Arc<ToolServer>, params: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: SetLevelParams<'_> = read(&params, "logging/setLevel")?;
    let meta = Meta::read(request.meta);
    if meta.is_modern() {
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            "Method not found: MCP 2026-07-28 has no `logging/setLevel`; give `_meta.io.modelcontextprotocol/logLevel` on each request instead",
        ));
    }
    meta.revision(cx)?;
    let Some(level) = request.level else {
        return Err(ErrorObject::new(INVALID_PARAMS, "Invalid params: `logging/setLevel` needs the `level`"));
    };
    let level = LogLevel::read(level)?;
    if let Some(session) = session_of(cx) {
        session.set_log_level(level);
    }
    Ok(MethodOutcome::Ready(encode(&Map::new())))
}

/// The logs of one call: the client's level, and the channel to the task
/// that sends them.
pub(crate) struct CallLog {
    level: LogLevel,
    sender: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    sent: AtomicUsize,
    dropped: AtomicUsize,
}

tokio::task_local! {
    static CALL_LOG: Arc<CallLog>;
}

impl CallLog {
    /// The level logs of the request of `cx` are sent at, if any: the
    /// request's own (2026-07-28), else its session's.
    pub(crate) fn level_of(meta: &Meta<'_>, caller: &Caller) -> Result<Option<LogLevel>, ErrorObject> {
        if meta.is_modern() {
            return meta.log_level.map(LogLevel::read).transpose();
        }
        Ok(caller.log_level)
    }

    /// One event of the call, if the client wants its level.
    fn record(&self, event: &tracing::Event<'_>) {
        let level = LogLevel::of(event.metadata().level());
        if level < self.level {
            return;
        }
        if self.sent.fetch_add(1, Ordering::Relaxed) >= MAX_LOG_MESSAGES {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let params = json!({ "level": level.as_str(), "logger": event.metadata().target(), "data": fields.data });
        self.push(notification("notifications/message", &params));
    }

    fn push(&self, message: Option<Vec<u8>>) {
        let sender = self.sender.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let sent = match (&*sender, message) {
            (Some(sender), Some(message)) => sender.try_send(message).is_ok(),
            _ => false,
        };
        if !sent {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Ends the call's logs: says how many were dropped, if any, and
    /// closes the channel.
    fn finish(&self) {
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 && self.level <= LogLevel::Warning {
            let text = format!(
                "{dropped} log message(s) of this call were not sent (at most {MAX_LOG_MESSAGES} per call, and none while the client is not reading)"
            );
            let params = json!({ "level": "warning", "logger": "rpc_runtime::mcp", "data": { "message": text } });
            self.push(notification("notifications/message", &params));
        }
        self.sender.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    }
}

/// Where the logs of the request of `cx` go: its own stream or its
/// connection, else (Streamable HTTP without an event stream for the
/// request) its session's `GET` stream.
pub(crate) fn log_outlet(cx: &Context) -> Option<Outlet> {
    Outlet::of_request(cx).or_else(|| session_of(cx).map(Outlet::Session))
}

/// Runs `call` (which calls a method) with its logs sent to `outlet` at
/// `level` and above; the answer comes once every log is sent. Without a
/// level (or anywhere to send to), just `call`.
pub(crate) fn logged(
    level: Option<LogLevel>,
    outlet: Option<Outlet>,
    call: impl FnOnce() -> MethodOutcome,
) -> MethodOutcome {
    let (Some(level), Some(outlet)) = (level, outlet) else { return call() };
    let (sender, mut receiver) = mpsc::channel(BACKLOG);
    let log = Arc::new(CallLog {
        level,
        sender: Mutex::new(Some(sender)),
        sent: AtomicUsize::new(0),
        dropped: AtomicUsize::new(0),
    });
    let outcome = CALL_LOG.sync_scope(Arc::clone(&log), call);
    MethodOutcome::Pending(Box::pin(async move {
        let call = async {
            let result = match outcome {
                MethodOutcome::Ready(result) => result,
                MethodOutcome::Pending(future) => CALL_LOG.scope(Arc::clone(&log), future).await,
            };
            log.finish();
            result
        };
        let send = async {
            while let Some(message) = receiver.recv().await {
                if !outlet.send(message).await {
                    break;
                }
            }
        };
        let (result, ()) = tokio::join!(call, send);
        result
    }))
}

/// A `tracing` layer that sends the events of MCP calls to the clients
/// that asked for logs (`logging/setLevel`, or 2026-07-28's per-request
/// `logLevel`), as `notifications/message`: level, target as `logger`,
/// and the fields as `data` (`message` first). Events outside MCP calls,
/// or below the client's level, are left alone; the layer changes nothing
/// else the subscriber does.
///
/// Add it to the application's subscriber, next to its own output:
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let subscriber = tracing_subscriber::registry().with(rpc_runtime::mcp::McpLogLayer::new());
/// tracing::subscriber::with_default(subscriber, || tracing::info!("not in an MCP call: not sent"));
/// ```
///
/// Only events that reach the layer are sent: a global filter (a
/// subscriber's max level, an `EnvFilter` layered under everything) that
/// drops `debug` drops it for clients too; filter the other layers
/// instead (`.with_filter(..)` on each) to send clients more than the log
/// file gets. Events are those of the call's own task: the handler and
/// what it awaits (a task it spawns is not the call's).
#[derive(Clone, Copy, Debug, Default)]
pub struct McpLogLayer {
    _private: (),
}

impl McpLogLayer {
    /// The layer.
    pub fn new() -> Self {
        McpLogLayer::default()
    }
}

/// Whether an [`McpLogLayer`] was added to a subscriber: servers declare
/// the `logging` capability only then.
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Whether logs can reach clients at all (an [`McpLogLayer`] is in use).
pub(crate) fn in_use() -> bool {
    IN_USE.load(Ordering::Relaxed)
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for McpLogLayer {
    fn on_layer(&mut self, _: &mut S) {
        IN_USE.store(true, Ordering::Relaxed);
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let _ = CALL_LOG.try_with(|log| log.record(event));
    }
}

/// An event's fields as a JSON object (`message` first), its text cut at
/// [`MAX_LOG_DATA`] bytes.
#[derive(Default)]
struct Fields {
    data: Map<String, Value>,
    size: usize,
}

impl Fields {
    fn put(&mut self, name: &str, value: Value) {
        let size = match &value {
            Value::String(text) => text.len(),
            _ => 16,
        };
        if self.size + size + name.len() > MAX_LOG_DATA {
            self.data.entry("truncated").or_insert(Value::Bool(true));
            return;
        }
        self.size += size + name.len();
        self.data.insert(name.to_owned(), value);
    }
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        if text.len() > MAX_LOG_DATA {
            let mut end = MAX_LOG_DATA;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        self.put(field.name(), Value::String(text));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }

    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.put(field.name(), value.into());
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.put(field.name(), value.into());
    }

    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.put(field.name(), value.into());
    }

    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.put(field.name(), value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    /// A call's log with room for everything, and what it sent.
    fn call_log(level: LogLevel) -> (Arc<CallLog>, mpsc::Receiver<Vec<u8>>) {
        let (sender, receiver) = mpsc::channel(10_000);
        let log = CallLog {
            level,
            sender: Mutex::new(Some(sender)),
            sent: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
        };
        (Arc::new(log), receiver)
    }

    fn sent(receiver: &mut mpsc::Receiver<Vec<u8>>) -> Vec<Value> {
        std::iter::from_fn(|| receiver.try_recv().ok()).map(|bytes| serde_json::from_slice(&bytes).unwrap()).collect()
    }

    #[test]
    fn events_at_or_above_the_level_are_sent_with_their_fields() {
        let subscriber = tracing_subscriber::registry().with(McpLogLayer::new());
        let (log, mut receiver) = call_log(LogLevel::Info);
        tracing::subscriber::with_default(subscriber, || {
            CALL_LOG.sync_scope(Arc::clone(&log), || {
                tracing::debug!("not sent");
                tracing::info!(id = 7, ok = true, "note added");
                tracing::error!(reason = "disk full", "not saved");
            });
            tracing::warn!("outside a call: not sent");
        });
        log.finish();
        let messages = sent(&mut receiver);
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert_eq!(messages[0]["method"], "notifications/message");
        assert_eq!(messages[0]["params"]["level"], "info");
        assert_eq!(messages[0]["params"]["data"], json!({"message": "note added", "id": 7, "ok": true}));
        assert_eq!(messages[0]["params"]["logger"], module_path!());
        assert_eq!(messages[1]["params"]["level"], "error");
        assert!(in_use());
    }

    #[test]
    fn a_call_sends_at_most_its_share_then_counts_the_rest() {
        let subscriber = tracing_subscriber::registry().with(McpLogLayer::new());
        let (log, mut receiver) = call_log(LogLevel::Debug);
        let long = "x".repeat(MAX_LOG_DATA * 2);
        tracing::subscriber::with_default(subscriber, || {
            CALL_LOG.sync_scope(Arc::clone(&log), || {
                tracing::info!(text = long.as_str(), "long");
                for n in 0..MAX_LOG_MESSAGES + 50 {
                    tracing::debug!(n, "again");
                }
            });
        });
        log.finish();
        let messages = sent(&mut receiver);
        assert_eq!(messages.len(), MAX_LOG_MESSAGES + 1);
        assert!(messages[0]["params"]["data"].to_string().len() <= MAX_LOG_DATA + 64, "cut at MAX_LOG_DATA");
        let last = &messages[MAX_LOG_MESSAGES]["params"];
        assert_eq!(last["level"], "warning");
        let text = last["data"]["message"].as_str().unwrap();
        assert!(text.starts_with("51 log message(s) of this call were not sent"), "{text}");
    }

    #[test]
    fn levels_are_ordered_as_syslog_orders_them() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Warning < LogLevel::Emergency);
        for name in ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] {
            assert_eq!(LogLevel::parse(name).map(LogLevel::as_str), Some(name));
        }
        assert_eq!(LogLevel::parse("warn"), None);
        assert!(LogLevel::read(&serde_json::value::RawValue::from_string("\"verbose\"".into()).unwrap()).is_err());
    }
}
