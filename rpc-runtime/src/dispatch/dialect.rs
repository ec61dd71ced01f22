//! Protocol dialects: the rules of a protocol built on JSON-RPC 2.0 (MCP,
//! LSP, one of your own) that change what the engine accepts and how a
//! request is cancelled. The engine stays a plain JSON-RPC 2.0 engine
//! when none is set.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::dispatch::context::Context;
use crate::wire::ErrorObject;

/// The rules of a protocol built on JSON-RPC 2.0, as far as they change
/// what the engine does with a message.
///
/// Install one with [`Server::dialect`](crate::Server::dialect) (or
/// [`Engine::with_dialect`](crate::dispatch::Engine::with_dialect) for an engine fed
/// by hand). Every method has a default that keeps plain JSON-RPC 2.0, so
/// a dialect implements only what its protocol changes:
///
/// - [`Dialect::check_id`]: ids a request may not carry (MCP refuses
///   `null` and fractional numbers);
/// - [`Dialect::check_batch`]: whether a batch may arrive at all, which
///   may depend on the connection's state (MCP allows batches only in
///   sessions of some revisions; keep such state with
///   [`Context::connection_state`]);
/// - [`Dialect::check_call`]: whether a call may run now, which may
///   depend on the connection's state too (LSP refuses requests before
///   `initialize` and after `shutdown`);
/// - [`Dialect::cancellation`]: the notification that cancels a running
///   request, and whether a cancelled request is still answered.
///
/// A refusal is answered as it is (the dialect chooses the error object,
/// usually -32600) and nothing of the request, or of the batch, runs; a
/// refused notification is dropped. The error shape of every other answer
/// is JSON-RPC 2.0's. Without a dialect the engine makes no dynamic call
/// for it; with one, one call per request that carries an id, one per
/// valid call and one per batch.
///
/// A dialect of string ids only, defined outside this crate:
///
/// ```
/// use rpc_runtime::dispatch::Dialect;
/// use rpc_runtime::serde_json::value::RawValue;
/// use rpc_runtime::{Context, ErrorObject, Limits, Router, dispatch::Engine};
///
/// /// Ids must be strings, as some message brokers require.
/// struct StringIds;
///
/// impl Dialect for StringIds {
///     fn check_id(&self, id: &RawValue) -> Result<(), ErrorObject> {
///         if id.get().starts_with('"') {
///             Ok(())
///         } else {
///             Err(ErrorObject::invalid_request().with_data(&"ids must be strings"))
///         }
///     }
/// }
///
/// # async fn demo() {
/// let engine = Engine::new(Router::new(), Limits::default()).with_dialect(StringIds);
/// let cx = Context::new();
/// let refused = engine.handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#, &cx).await;
/// assert!(String::from_utf8(refused).unwrap().contains("-32600"));
/// let served = engine.handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":"a"}"#, &cx).await;
/// assert!(String::from_utf8(served).unwrap().contains("\"result\""));
/// # }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(demo());
/// ```
pub trait Dialect: Send + Sync + 'static {
    /// Whether a request may carry the id `id` (raw JSON: a string, a
    /// number or `null`; other types were refused already). Called for
    /// every request with an id, before it runs; an error is the answer,
    /// sent with the id echoed. Accepts every id by default.
    fn check_id(&self, id: &RawValue) -> Result<(), ErrorObject> {
        let _ = id;
        Ok(())
    }

    /// Whether a (non-empty) batch may be received on the connection, or in
    /// the session, that `cx` belongs to. Called once per batch before any
    /// entry runs; an error is the whole answer (with id `null`). Accepts
    /// every batch by default.
    fn check_batch(&self, cx: &Context) -> Result<(), ErrorObject> {
        let _ = cx;
        Ok(())
    }

    /// Whether the call of `method` with `params` (a notification when
    /// `notification`) may run now on the connection, or in the session,
    /// that `cx` belongs to. Called for every valid request and
    /// notification, after [`Dialect::check_id`] and before the method is
    /// looked up; an error answers a request and drops a notification (a
    /// notification is never answered). Accepts every call by default.
    fn check_call(
        &self,
        method: &str,
        params: Option<&RawValue>,
        notification: bool,
        cx: &Context,
    ) -> Result<(), ErrorObject> {
        let _ = (method, params, notification, cx);
        Ok(())
    }

    /// How the protocol cancels a request: the notification understood
    /// (and sent for abandoned calls back to the client), and whether a
    /// cancelled request is still answered. `None` (the default) leaves the
    /// server's own [`cancellation`](crate::Server::cancellation) setting.
    fn cancellation(&self) -> Option<Cancellation> {
        None
    }
}

/// A dialect held by a builder until it makes each connection's engine.
#[derive(Clone)]
pub(crate) struct SharedDialect(pub(crate) Arc<dyn Dialect>);

impl SharedDialect {
    pub(crate) fn new(dialect: impl Dialect) -> Self {
        SharedDialect(Arc::new(dialect))
    }
}

impl std::fmt::Debug for SharedDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dialect")
    }
}

/// How a cancelled call is announced to the other side, and which incoming
/// notification cancels a running handler.
///
/// The same setting governs both directions of a connection:
///
/// - outgoing: when a call times out or its future is dropped before the
///   answer came, this notification is sent for its id;
/// - incoming: this notification raises the cancellation of the running
///   request with that id, which its handler sees through
///   [`Context::is_cancelled`] / [`Context::cancelled`]. Cancellation is
///   cooperative: the handler decides when to stop. With
///   [`Cancellation::Lsp`] a cancelled request is still answered (LSP wants
///   every request answered), with -32800 `Request cancelled` whatever the
///   handler returned; with [`Cancellation::Mcp`] it is not answered at
///   all, as MCP asks of the receiver of `notifications/cancelled`.
///
/// If the local router itself has a method with the notification's name,
/// the router handles it instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cancellation {
    /// No cancellation notifications are sent or understood (the default).
    #[default]
    None,
    /// LSP style: `$/cancelRequest` with params `{"id": <id>}`.
    Lsp,
    /// MCP style: `notifications/cancelled` with params
    /// `{"requestId": <id>, "reason": "..."}`; a cancelled incoming request
    /// is not answered.
    Mcp,
    /// Another protocol's notification: `method` with params
    /// `{"<id_member>": <id>}`.
    Custom {
        /// The notification's method name.
        method: &'static str,
        /// The member of its params that holds the request's id.
        id_member: &'static str,
        /// Whether a cancelled request is still answered (with -32800) or
        /// not at all.
        answered: bool,
    },
}

impl Cancellation {
    /// The notification's method name, if any.
    pub fn method(self) -> Option<&'static str> {
        match self {
            Cancellation::None => None,
            Cancellation::Lsp => Some("$/cancelRequest"),
            Cancellation::Mcp => Some("notifications/cancelled"),
            Cancellation::Custom { method, .. } => Some(method),
        }
    }

    /// Whether a cancelled incoming request is still answered, with -32800
    /// `Request cancelled` (LSP), or not at all (MCP).
    pub fn answers_cancelled(self) -> bool {
        match self {
            Cancellation::Mcp => false,
            Cancellation::Custom { answered, .. } => answered,
            Cancellation::None | Cancellation::Lsp => true,
        }
    }

    /// The member of the notification's params that holds the id.
    pub(crate) fn id_member(self) -> &'static str {
        match self {
            Cancellation::Mcp => "requestId",
            Cancellation::Custom { id_member, .. } => id_member,
            Cancellation::None | Cancellation::Lsp => "id",
        }
    }

    /// The notification that cancels outgoing call `id`.
    pub(crate) fn notification(self, id: u64, reason: &str) -> Option<Vec<u8>> {
        let method = serde_json::Value::from(self.method()?);
        let mut params = serde_json::Map::new();
        params.insert(self.id_member().to_owned(), id.into());
        if self == Cancellation::Mcp {
            params.insert("reason".to_owned(), reason.into());
        }
        let notification = serde_json::json!({ "jsonrpc": "2.0", "method": method, "params": params });
        Some(notification.to_string().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancellation_notifications_follow_each_protocol() {
        assert_eq!(Cancellation::None.notification(3, "x"), None);
        let lsp = Cancellation::Lsp.notification(3, "x").unwrap();
        assert_eq!(
            String::from_utf8(lsp).unwrap(),
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#
        );
        let mcp: serde_json::Value =
            serde_json::from_slice(&Cancellation::Mcp.notification(4, "timed \"out\"").unwrap()).unwrap();
        assert_eq!(mcp["method"], "notifications/cancelled");
        assert_eq!(mcp["params"]["requestId"], 4);
        assert_eq!(mcp["params"]["reason"], "timed \"out\"");
    }

    #[test]
    fn a_custom_cancellation_names_its_method_and_id_member() {
        let custom = Cancellation::Custom { method: "x/cancel", id_member: "call", answered: false };
        let bytes = custom.notification(5, "ignored").unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), r#"{"jsonrpc":"2.0","method":"x/cancel","params":{"call":5}}"#);
        assert!(!custom.answers_cancelled());
        assert!(Cancellation::Lsp.answers_cancelled() && !Cancellation::Mcp.answers_cancelled());
    }
}
