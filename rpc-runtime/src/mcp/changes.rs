//! What changes while the server runs, and who is told: the lists of
//! tools, prompts and resources, and each resource's contents.
//!
//! The application holds a [`Changes`] and says what changed; the server
//! tells the clients that asked, in the form their revision defines. In
//! the handshake revisions a session hears every list change
//! (`notifications/*/list_changed`) and the updates of the resources it
//! subscribed to (`resources/subscribe`), on its connection or, over
//! Streamable HTTP, its `GET` stream. In 2026-07-28 a client opens
//! `subscriptions/listen` with the kinds it wants and hears them on that
//! request's stream, each stamped with the subscription's id.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use super::outlet::{Outlet, notification};
use super::session::{MAX_SUBSCRIPTIONS, Meta, Session, session_of};
use super::{ToolServer, read};
use crate::dispatch::context::Context;
use crate::dispatch::inflight::Link;
use crate::dispatch::params::Params;
use crate::dispatch::router::{MethodOutcome, encode};
use crate::wire::{ErrorObject, INVALID_PARAMS, METHOD_NOT_FOUND};

/// Changes not yet sent to a slow client before it is told "everything
/// may have changed" instead.
const BACKLOG: usize = 256;

/// The `_meta` key with the subscription a 2026-07-28 notification
/// belongs to.
const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Tells MCP clients what changed while the server runs: give one to
/// [`McpServer::changes`](super::McpServer::changes), keep a clone in the
/// service, and call it after each change. Cheap to clone; every clone is
/// the same handle.
///
/// With it the server declares `listChanged` for tools, prompts and
/// resources, and `subscribe` for resources; without it, nothing changes
/// and it declares neither.
///
/// ```
/// use rpc_runtime::mcp::{Changes, McpServer};
/// use rpc_runtime::rpc;
///
/// #[rpc]
/// pub trait Notes {
///     /// One note.
///     #[rpc(mcp(resource = "notes://{id}"))]
///     fn note(&self, id: u64) -> String;
///     /// Changes a note.
///     fn edit(&self, id: u64, text: String);
/// }
///
/// struct Notebook {
///     changes: Changes,
/// }
///
/// impl Notes for Notebook {
///     fn note(&self, id: u64) -> String {
///         format!("note {id}")
///     }
///     fn edit(&self, id: u64, _text: String) {
///         // ... store it, then tell the subscribers:
///         self.changes.resource_updated(format!("notes://{id}"));
///     }
/// }
///
/// let changes = Changes::new();
/// let notebook = Notebook { changes: changes.clone() };
/// let server = McpServer::new(notebook.into_rpc()).changes(changes).into_server();
/// # drop(server);
/// ```
#[derive(Clone)]
pub struct Changes {
    inner: Arc<Inner>,
}

struct Inner {
    sender: broadcast::Sender<Change>,
    /// Tools taken out of the served set ([`Changes::hide_tool`]).
    hidden: RwLock<HashSet<String>>,
}

/// One change.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
    Updated(Arc<str>),
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("listeners", &self.inner.sender.receiver_count()).finish()
    }
}

impl Changes {
    /// A handle nobody listens to yet.
    pub fn new() -> Self {
        let (sender, _) = broadcast::channel(BACKLOG);
        Changes { inner: Arc::new(Inner { sender, hidden: RwLock::default() }) }
    }

    /// The resource at `uri` changed: its subscribers are told
    /// (`notifications/resources/updated`).
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.send(Change::Updated(uri.into().into()));
    }

    /// Resources were added or removed (`resources/list` answers
    /// differently): every client is told.
    pub fn resources_list_changed(&self) {
        self.send(Change::Resources);
    }

    /// Prompts were added or removed.
    pub fn prompts_list_changed(&self) {
        self.send(Change::Prompts);
    }

    /// The tools changed (what `tools/list` answers): every client is told.
    /// [`Changes::hide_tool`] and [`Changes::show_tool`] call it.
    pub fn tools_list_changed(&self) {
        self.send(Change::Tools);
    }

    /// Takes the tool `name` out of the served set: not listed, and a call
    /// of it is an unknown tool; clients are told the list changed.
    /// Returns whether it was served.
    pub fn hide_tool(&self, name: &str) -> bool {
        let hidden = self.inner.hidden.write().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(name.to_owned());
        if hidden {
            self.tools_list_changed();
        }
        hidden
    }

    /// Serves the tool `name` again (after [`Changes::hide_tool`]);
    /// clients are told the list changed. Returns whether it was hidden.
    pub fn show_tool(&self, name: &str) -> bool {
        let shown = self.inner.hidden.write().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(name);
        if shown {
            self.tools_list_changed();
        }
        shown
    }

    /// Whether tool `name` is hidden.
    pub(crate) fn is_hidden(&self, name: &str) -> bool {
        self.inner.hidden.read().unwrap_or_else(|poisoned| poisoned.into_inner()).contains(name)
    }

    /// Whether any tool is hidden.
    pub(crate) fn hides_any(&self) -> bool {
        !self.inner.hidden.read().unwrap_or_else(|poisoned| poisoned.into_inner()).is_empty()
    }

    fn send(&self, change: Change) {
        // No listener: nobody to tell.
        let _ = self.inner.sender.send(change);
    }

    pub(crate) fn listen(&self) -> broadcast::Receiver<Change> {
        self.inner.sender.subscribe()
    }
}

/// What one listener asked to hear.
#[derive(Clone, Debug, Default)]
struct Wanted {
    tools: bool,
    prompts: bool,
    resources: bool,
    /// Updates of these URIs (a 2026-07-28 listen); a handshake session's
    /// own subscriptions are in its [`Session`].
    uris: Vec<String>,
}

/// The notifications a listener is sent for `change` (a lagging receiver
/// gets every kind it wanted, as "may have changed").
fn messages(
    change: Result<Change, broadcast::error::RecvError>,
    wanted: &Wanted,
    session: Option<&Session>,
    meta: Option<&Value>,
) -> Vec<Vec<u8>> {
    let params = |mut members: Map<String, Value>| {
        if let Some(meta) = meta {
            members.insert("_meta".into(), meta.clone());
        }
        Value::Object(members)
    };
    let subscribed = |uri: &str| {
        wanted.uris.iter().any(|wanted| wanted == uri) || session.is_some_and(|session| session.is_subscribed(uri))
    };
    let list = |kind: &Change| -> Option<&'static str> {
        match kind {
            Change::Tools if wanted.tools => Some("notifications/tools/list_changed"),
            Change::Prompts if wanted.prompts => Some("notifications/prompts/list_changed"),
            Change::Resources if wanted.resources => Some("notifications/resources/list_changed"),
            _ => None,
        }
    };
    let mut out = Vec::new();
    match change {
        Ok(Change::Updated(uri)) => {
            if subscribed(&uri) {
                let mut members = Map::new();
                members.insert("uri".into(), uri.as_ref().into());
                out.extend(notification("notifications/resources/updated", &params(members)));
            }
        }
        Ok(kind) => {
            if let Some(method) = list(&kind) {
                out.extend(notification(method, &params(Map::new())));
            }
        }
        Err(broadcast::error::RecvError::Lagged(missed)) => {
            tracing::debug!(missed, "an MCP client fell behind on changes; telling it everything may have changed");
            for kind in [Change::Tools, Change::Prompts, Change::Resources] {
                if let Some(method) = list(&kind) {
                    out.extend(notification(method, &params(Map::new())));
                }
            }
            let mut uris: Vec<String> = wanted.uris.clone();
            uris.extend(session.map(Session::subscribed).unwrap_or_default());
            for uri in uris {
                let mut members = Map::new();
                members.insert("uri".into(), uri.into());
                out.extend(notification("notifications/resources/updated", &params(members)));
            }
        }
        Err(broadcast::error::RecvError::Closed) => {}
    }
    out
}

/// Tells a handshake session (its connection, or its `GET` stream) every
/// change it may hear, until the connection or session ends. Started by
/// `initialize`.
pub(crate) fn forward(server: &ToolServer, changes: &Changes, session: Arc<Session>, link: Arc<Link>, outlet: Outlet) {
    let wanted = Wanted {
        tools: true,
        prompts: !server.prompts.is_empty(),
        resources: !server.resources.is_empty(),
        uris: Vec::new(),
    };
    let mut changes = changes.listen();
    tokio::spawn(async move {
        loop {
            let change = tokio::select! {
                () = link.stop.raised() => break,
                change = changes.recv() => change,
            };
            if matches!(change, Err(broadcast::error::RecvError::Closed)) {
                break;
            }
            for message in messages(change, &wanted, Some(&session), None) {
                if !outlet.send(message).await && outlet.is_closed() {
                    return;
                }
            }
        }
    });
}

#[derive(Deserialize)]
struct UriParams<'a> {
    #[serde(default)]
    uri: Option<String>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `resources/subscribe` and `resources/unsubscribe` (the handshake
/// revisions): the session hears about `uri`'s updates, or no longer.
fn subscription(
    server: &ToolServer,
    params: &Params<'_>,
    cx: &Context,
    method: &str,
) -> Result<(Arc<Session>, String), ErrorObject> {
    let request: UriParams<'_> = read(params, method)?;
    let meta = Meta::read(request.meta);
    if meta.is_modern() {
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!(
                "Method not found: MCP 2026-07-28 has no `{method}`; open `subscriptions/listen` with `resourceSubscriptions` instead"
            ),
        ));
    }
    meta.revision(cx)?;
    if server.changes.is_none() {
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!(
                "Method not found: this server's resources do not change, so it has no `{method}` (its capabilities say `subscribe: false`)"
            ),
        ));
    }
    let Some(uri) = request.uri else {
        return Err(ErrorObject::new(INVALID_PARAMS, format!("Invalid params: `{method}` needs the resource's `uri`")));
    };
    let Some(session) = session_of(cx) else {
        return Err(ErrorObject::internal_error("Internal error: this request came in on no connection or session"));
    };
    Ok((session, uri))
}

pub(crate) fn subscribe(
    server: &Arc<ToolServer>,
    params: Params<'_>,
    cx: &Context,
) -> Result<MethodOutcome, ErrorObject> {
    let (session, uri) = subscription(server, &params, cx, "resources/subscribe")?;
    server.resources.may_read(&uri, cx)?;
    session.subscribe(uri)?;
    Ok(MethodOutcome::Ready(encode(&Map::new())))
}

pub(crate) fn unsubscribe(
    server: &Arc<ToolServer>,
    params: Params<'_>,
    cx: &Context,
) -> Result<MethodOutcome, ErrorObject> {
    let (session, uri) = subscription(server, &params, cx, "resources/unsubscribe")?;
    session.unsubscribe(&uri);
    Ok(MethodOutcome::Ready(encode(&Map::new())))
}

#[derive(Deserialize)]
struct ListenParams<'a> {
    #[serde(default)]
    notifications: Option<Filter>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Filter {
    #[serde(default)]
    tools_list_changed: bool,
    #[serde(default)]
    prompts_list_changed: bool,
    #[serde(default)]
    resources_list_changed: bool,
    #[serde(default)]
    resource_subscriptions: Vec<String>,
}

/// `subscriptions/listen` (2026-07-28): acknowledges the kinds this server
/// honors (those it can change, and URIs it can read), then sends them
/// on the request's stream until the client cancels it (or closes the
/// stream, or, over stdio, its input), or the server shuts down, which
/// answers it.
pub(crate) fn listen(server: &Arc<ToolServer>, params: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: ListenParams<'_> = read(&params, "subscriptions/listen")?;
    let meta = Meta::read(request.meta);
    if !meta.is_modern() {
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            "Method not found: `subscriptions/listen` is MCP 2026-07-28's; in a session, use `resources/subscribe` and the list_changed notifications",
        ));
    }
    let revision = meta.modern_revision()?;
    let Some(filter) = request.notifications else {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            "Invalid params: `subscriptions/listen` needs `notifications` (what to hear: `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions`)",
        ));
    };
    if filter.resource_subscriptions.len() > MAX_SUBSCRIPTIONS {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: at most {MAX_SUBSCRIPTIONS} `resourceSubscriptions` per listen"),
        ));
    }
    for uri in &filter.resource_subscriptions {
        server.resources.may_read(uri, cx)?;
    }
    let Some(outlet) = Outlet::of_request(cx) else {
        return Err(ErrorObject::new(
            crate::wire::INVALID_REQUEST,
            "Invalid Request: `subscriptions/listen` answers with a stream of notifications: over HTTP, accept text/event-stream",
        ));
    };
    let Some(id) = cx.request_id() else {
        return Err(ErrorObject::internal_error("Internal error: `subscriptions/listen` came without its request id"));
    };
    let changing = server.changes.clone();
    let live = changing.is_some();
    let wanted = Wanted {
        tools: live && filter.tools_list_changed,
        prompts: live && filter.prompts_list_changed && !server.prompts.is_empty(),
        resources: live && filter.resources_list_changed && !server.resources.is_empty(),
        uris: if live {
            filter.resource_subscriptions.into_iter().filter(|uri| server.resources.reads(uri)).collect()
        } else {
            Vec::new()
        },
    };
    let mut honored = Map::new();
    for (key, on) in [
        ("toolsListChanged", wanted.tools),
        ("promptsListChanged", wanted.prompts),
        ("resourcesListChanged", wanted.resources),
    ] {
        if on {
            honored.insert(key.into(), true.into());
        }
    }
    if !wanted.uris.is_empty() {
        honored.insert("resourceSubscriptions".into(), wanted.uris.clone().into());
    }
    let stamp = json!({ SUBSCRIPTION_ID_KEY: id });
    let cx = cx.clone();
    let server = Arc::clone(server);
    let mut changes = changing.map(|changes| changes.listen());
    Ok(MethodOutcome::Pending(Box::pin(async move {
        let drain = cx.drain.clone();
        let drained = async {
            match &drain {
                Some(drain) => drain.raised().await,
                None => std::future::pending().await,
            }
        };
        // The client finished sending (stdio's end of input): the listen
        // ends, as the session does, rather than keep the server running
        // after its client left. Raced against the whole stream, the
        // acknowledgement's send included (one under way when the input
        // ends may wait for a flush that is no longer reported).
        let peer = cx.peer.as_ref().and_then(|peer| peer.downcast_ref::<crate::peer::Peer>()).cloned();
        let left = async {
            match &peer {
                Some(peer) => peer.closed().await,
                None => std::future::pending().await,
            }
        };
        let stream = async {
            let ack = json!({ "_meta": stamp, "notifications": honored });
            if let Some(message) = notification("notifications/subscriptions/acknowledged", &ack) {
                outlet.send(message).await;
            }
            loop {
                let change = match changes.as_mut() {
                    Some(changes) => changes.recv().await,
                    None => std::future::pending().await,
                };
                for message in messages(change, &wanted, None, Some(&stamp)) {
                    if !outlet.send(message).await && outlet.is_closed() {
                        return Err(ErrorObject::internal_error("the subscription's stream is closed"));
                    }
                }
            }
        };
        tokio::select! {
            result = stream => result?,
            () = cx.cancelled() => {}
            () = drained => {}
            () = left => {}
        }
        // Ends gracefully: the final result names the subscription.
        let mut meta: Map<String, Value> = serde_json::from_str(server.server_info_meta.get()).unwrap_or_default();
        meta.insert(SUBSCRIPTION_ID_KEY.into(), json!(id));
        debug_assert!(revision.is_modern());
        encode(&json!({ "resultType": "complete", "_meta": meta }))
    })))
}

/// `changes`' hold on the tool list: whether `name` is served now.
pub(crate) fn tool_served(changes: Option<&Changes>, name: &str) -> bool {
    changes.is_none_or(|changes| !changes.is_hidden(name))
}

#[cfg(test)]
mod tests {
    use super::{Change, Wanted, messages};
    use serde_json::{Value, json};
    use tokio::sync::broadcast::error::RecvError;

    fn sent(change: Result<Change, RecvError>, wanted: &Wanted, meta: Option<&Value>) -> Vec<Value> {
        let messages = messages(change, wanted, None, meta);
        messages.iter().map(|message| serde_json::from_slice(message).unwrap()).collect()
    }

    #[test]
    fn a_listener_hears_what_it_wanted_and_everything_it_wanted_after_falling_behind() {
        let wanted = Wanted { tools: true, prompts: false, resources: true, uris: vec!["notes://1".into()] };
        let meta = json!({"io.modelcontextprotocol/subscriptionId": "listen-1"});

        let heard = sent(Ok(Change::Prompts), &wanted, Some(&meta));
        assert!(heard.is_empty(), "prompts were not asked for: {heard:?}");
        let heard = sent(Ok(Change::Updated("notes://2".into())), &wanted, None);
        assert!(heard.is_empty(), "not subscribed: {heard:?}");
        let heard = sent(Ok(Change::Updated("notes://1".into())), &wanted, Some(&meta));
        assert_eq!(
            heard,
            [json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "notes://1", "_meta": meta}})]
        );

        // Missed changes may be anything it wanted: it is told so for each.
        let heard = sent(Err(RecvError::Lagged(7)), &wanted, Some(&meta));
        let methods: Vec<&str> = heard.iter().map(|message| message["method"].as_str().unwrap()).collect();
        assert_eq!(
            methods,
            [
                "notifications/tools/list_changed",
                "notifications/resources/list_changed",
                "notifications/resources/updated"
            ]
        );
        assert_eq!(heard[2]["params"]["uri"], "notes://1");
        assert!(heard.iter().all(|message| message["params"]["_meta"] == meta), "{heard:?}");
        assert!(sent(Err(RecvError::Closed), &wanted, None).is_empty());
    }
}
