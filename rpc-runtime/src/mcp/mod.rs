#![doc = include_str!("../../docs/mcp.md")]

mod arguments;
mod call;
mod changes;
mod completion;
mod content;
#[cfg(feature = "http")]
mod http;
pub(crate) mod input;
mod logging;
mod outlet;
mod progress;
mod prompts;
mod resources;
mod revision;
mod session;
mod template;
mod tools;
mod written;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

pub use changes::Changes;
pub use content::{Completion, Contents, PromptMessages, Resource};
#[cfg(feature = "http")]
pub use http::{
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, HEADER_MISMATCH, McpBody, McpHttp, McpHttpListener,
    McpHttpService, McpResponseFuture, MemoryStore, SessionRecord, SessionStore, SessionStoreFuture,
};
pub use input::{
    Elicit, ElicitField, Elicitation, INPUT_FAILED, InputError, MISSING_REQUIRED_CLIENT_CAPABILITY, Sampled, Sampling,
};
pub use logging::{MAX_LOG_DATA, MAX_LOG_MESSAGES, McpLogLayer};
pub use resources::RESOURCE_NOT_FOUND;
pub use revision::Revision;
pub use rpc_macros::Elicit;
pub use session::UNSUPPORTED_PROTOCOL_VERSION;

use crate::catalog::{Catalog, MethodInfo};
use crate::dispatch::context::Context;
use crate::dispatch::engine::Engine;
use crate::dispatch::limits::Limits;
use crate::dispatch::params::Params;
use crate::dispatch::permissions::Permissions;
use crate::dispatch::router::{MethodFuture, MethodOutcome, MethodResult, Router, encode};
use crate::spec::{MethodSpec, ParamSpec, ParamStructure};
use crate::transport::server::Server;
use crate::wire::{ErrorObject, Framing, INVALID_PARAMS, METHOD_NOT_FOUND};
use completion::Completions;
use prompts::Prompts;
use resources::Resources;
use session::{McpRules, Meta, SERVER_INFO_KEY, session_of};
use tools::Tools;

/// Tools listed per page of `tools/list` by default.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Serves a [`Router`] (one or more `#[rpc]` traits) as an MCP server: each
/// method is a tool of the same name, whose arguments are the method's
/// params by name, unless `#[rpc(mcp(..))]` makes it a resource, a
/// resource listing, a prompt or a completion (see the module docs).
///
/// ```no_run
/// use rpc_runtime::{rpc, mcp::McpServer};
///
/// /// Notes kept in memory.
/// #[rpc]
/// pub trait Notes {
///     /// Adds a note; answers its number.
///     #[rpc(mcp(title = "Add a note", destructive = false))]
///     fn add(&self, text: String) -> u64;
/// }
///
/// # struct MyNotes;
/// # impl Notes for MyNotes { fn add(&self, _: String) -> u64 { 0 } }
/// # async fn run() -> std::io::Result<()> {
/// McpServer::new(MyNotes.into_rpc()).name("notes").into_server().serve(rpc_runtime::transport::stdio::Stdio).await
/// # }
/// ```
///
/// Which methods are tools: every method in the router's catalog except
/// notifications (they have no result), aliases, methods of another kind
/// (`mcp(resource = ..)`, `mcp(prompt)`, ...), and methods marked
/// `#[rpc(mcp(hidden))]`; a trait with `#[rpc(catalog = false)]` has none.
/// `#[rpc(mcp(title = "..", read_only, destructive, idempotent,
/// open_world))]` sets a tool's title and hints.
///
/// Each tool's `inputSchema` is one self-contained JSON Schema 2020-12
/// object (named types under its own `$defs`); a `whole_params` method
/// whose parameter is not an object (a list, say) takes it as the one
/// argument named after the parameter. `outputSchema` describes the
/// result: as it is when it is an object, else (on the handshake
/// revisions, whose structured content must be an object) wrapped as
/// `{"result": ...}`, which the schema's description says.
///
/// A call answers with a text block holding the result's JSON and, from
/// 2025-06-18, `structuredContent`. The method's own errors, and from
/// 2025-11-25 invalid arguments, are results with `isError: true` (the
/// model can read them); an unknown tool is a protocol error (-32602).
#[derive(Debug)]
pub struct McpServer {
    router: Router,
    name: Option<String>,
    version: Option<String>,
    title: Option<String>,
    instructions: Option<String>,
    page_size: usize,
    changes: Option<Changes>,
}

/// The MCP server as its methods see it: the user's router behind the
/// tools, resources, prompts and completions, their listings, and the
/// identity `initialize` answers with. (Not [`McpServer`], the builder
/// that makes it.)
pub(crate) struct ToolServer {
    /// The user's router: where tool calls (and resource reads, ...) go.
    pub(crate) router: Router,
    pub(crate) tools: Tools,
    pub(crate) resources: Resources,
    pub(crate) prompts: Prompts,
    pub(crate) completions: Completions,
    /// What the application says changed, when it can change anything.
    pub(crate) changes: Option<Changes>,
    name: String,
    version: String,
    title: Option<String>,
    instructions: Option<String>,
    page_size: usize,
    /// `{"io.modelcontextprotocol/serverInfo": {..}}`, for modern results.
    pub(crate) server_info_meta: Box<RawValue>,
}

/// The members MCP adds to every result of the modern revision.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Stamp<'a> {
    result_type: &'static str,
    #[serde(rename = "_meta")]
    meta: &'a RawValue,
}

impl ToolServer {
    /// What a result of `revision` carries besides its own members.
    fn stamp(&self, revision: Revision) -> Option<Stamp<'_>> {
        revision.is_modern().then_some(Stamp { result_type: "complete", meta: &self.server_info_meta })
    }

    /// The server's capabilities under `revision`: tools always; resources,
    /// prompts and completions when it has some (completions from
    /// 2025-03-26, the revision that names the capability); `listChanged`
    /// and `subscribe` when it has [`Changes`] to tell (in 2026-07-28
    /// they say what `subscriptions/listen` honors).
    fn capabilities(&self, revision: Revision) -> Map<String, Value> {
        let mut capabilities = Map::new();
        let live = self.changes.is_some();
        // 2026-07-28 servers say only what `subscriptions/listen` honors.
        let quiet = revision.is_modern() && !live;
        let lists = || if quiet { json!({}) } else { json!({ "listChanged": live }) };
        capabilities.insert("tools".into(), lists());
        if !self.resources.is_empty() {
            let resources = if quiet { json!({}) } else { json!({ "subscribe": live, "listChanged": live }) };
            capabilities.insert("resources".into(), resources);
        }
        if !self.prompts.is_empty() {
            capabilities.insert("prompts".into(), lists());
        }
        if !self.completions.is_empty() && revision >= Revision::V2025_03_26 {
            capabilities.insert("completions".into(), json!({}));
        }
        // Only when an `McpLogLayer` can hand calls' events over. Deprecated
        // in 2026-07-28 (SEP-2577) but still served there, per request.
        if logging::in_use() {
            capabilities.insert("logging".into(), json!({}));
        }
        capabilities
    }
}

/// The methods of `catalog` that MCP may offer as something: not
/// notifications, aliases, hidden methods, or names the router does not
/// serve.
fn offered<'a>(
    catalog: &'a Catalog,
    served: &'a impl Fn(&str) -> bool,
) -> impl Iterator<Item = &'static MethodInfo> + 'a {
    catalog.methods().filter(move |method| {
        !method.spec.notification && method.alias_of.is_none() && !method.tool.hidden && served(method.spec.name)
    })
}

/// The `name`, `title` (from 2025-06-18) and `description` of a resource,
/// template or prompt from its method.
fn describe(out: &mut Map<String, Value>, method: &MethodInfo, revision: Revision) {
    out.insert("name".into(), method.tool.name.unwrap_or(method.spec.name).into());
    if let (true, Some(title)) = (revision.has_structured_output(), method.tool.title) {
        out.insert("title".into(), title.into());
    }
    let description = [method.summary, method.description].into_iter().flatten().collect::<Vec<_>>().join("\n\n");
    if !description.is_empty() {
        out.insert("description".into(), description.into());
    }
}

/// The cache hints 2026-07-28 wants ([`written::NO_CACHE`]), on a result
/// made as a map.
fn cacheable(result: &mut Map<String, Value>, revision: Revision) {
    if revision.is_modern() {
        for (key, json) in written::NO_CACHE {
            result.insert(key.into(), serde_json::from_str(json).unwrap_or_default());
        }
    }
}

impl McpServer {
    /// An MCP server for `router`. Its name, version and instructions
    /// default to the catalog's title, version and doc comments.
    pub fn new(router: Router) -> Self {
        McpServer {
            router,
            name: None,
            version: None,
            title: None,
            instructions: None,
            page_size: DEFAULT_PAGE_SIZE,
            changes: None,
        }
    }

    /// The server's name (`serverInfo.name`).
    #[must_use = "a builder does nothing until used"]
    pub fn name(self, name: impl Into<String>) -> Self {
        McpServer { name: Some(name.into()), ..self }
    }

    /// The server's version (`serverInfo.version`).
    #[must_use = "a builder does nothing until used"]
    pub fn version(self, version: impl Into<String>) -> Self {
        McpServer { version: Some(version.into()), ..self }
    }

    /// A human-readable name for the server (`serverInfo.title`).
    #[must_use = "a builder does nothing until used"]
    pub fn title(self, title: impl Into<String>) -> Self {
        McpServer { title: Some(title.into()), ..self }
    }

    /// Guidance on using the server, for the model (`instructions`).
    #[must_use = "a builder does nothing until used"]
    pub fn instructions(self, instructions: impl Into<String>) -> Self {
        McpServer { instructions: Some(instructions.into()), ..self }
    }

    /// At most `size` tools per page of `tools/list` (default
    /// [`DEFAULT_PAGE_SIZE`]); longer lists come with a `nextCursor`.
    #[must_use = "a builder does nothing until used"]
    pub fn page_size(self, size: usize) -> Self {
        McpServer { page_size: size.max(1), ..self }
    }

    /// Clients are told of the changes `changes` is told of (see
    /// [`Changes`]): the server then declares `listChanged` for its tools,
    /// prompts and resources, and `subscribe` for resources.
    #[must_use = "a builder does nothing until used"]
    pub fn changes(self, changes: Changes) -> Self {
        McpServer { changes: Some(changes), ..self }
    }

    /// The MCP methods as a router (`initialize`, `ping`,
    /// `server/discover`, `tools/list`, `tools/call`, ...).
    fn into_router(self) -> Router {
        let info = self.router.catalog().info();
        let name = self.name.unwrap_or(info.title);
        let version = self.version.unwrap_or(info.version);
        let mut identity = Map::new();
        identity.insert("name".into(), name.clone().into());
        identity.insert("version".into(), version.clone().into());
        if let Some(title) = &self.title {
            identity.insert("title".into(), title.clone().into());
        }
        let server_info_meta = serde_json::value::to_raw_value(&json!({ SERVER_INFO_KEY: identity }))
            .unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"));
        let catalog = self.router.catalog();
        let served = |name: &str| self.router.spec(name).is_some();
        let (resources, prompts) = (Resources::new(catalog, served), Prompts::new(catalog, served));
        let completions = Completions::new(catalog, served);
        let server = Arc::new(ToolServer {
            tools: Tools::new(&self.router),
            resources,
            prompts,
            completions,
            changes: self.changes,
            router: self.router,
            name,
            version,
            title: self.title,
            instructions: self.instructions.or(info.description),
            page_size: self.page_size,
            server_info_meta,
        });
        methods(server)
    }

    /// The message engine: MCP's methods and its narrowing of JSON-RPC
    /// (no `null` ids, batches only in sessions whose revision has them),
    /// for a transport that brings its own sessions (see the module docs).
    pub fn into_engine(self) -> Engine {
        Engine::new(self.into_router(), Limits::default()).with_dialect(McpRules)
    }

    /// A [`Server`] that speaks MCP on every connection: newline-delimited
    /// messages, `notifications/cancelled` understood (a cancelled call is
    /// not answered). Serve it over stdio as MCP hosts launch servers:
    /// `McpServer::new(router).into_server().serve(rpc_runtime::transport::stdio::Stdio).await`.
    pub fn into_server(self) -> Server {
        Server::new(self.into_router()).framing(Framing::NewlineDelimited).dialect(McpRules)
    }
}

/// The spec of an MCP method: its params are read whole, as an object.
macro_rules! mcp_spec {
    ($name:expr, $notification:expr) => {
        MethodSpec {
            name: $name,
            params: &[ParamSpec { name: "params", ty: "object", optional: true }],
            structure: ParamStructure::ByName,
            allow_extra: true,
            whole: true,
            notification: $notification,
            requires: None,
            exclusive: false,
        }
    };
}

static INITIALIZE: MethodSpec = mcp_spec!("initialize", false);
static INITIALIZED: MethodSpec = mcp_spec!("notifications/initialized", true);
static PING: MethodSpec = mcp_spec!("ping", false);
static DISCOVER: MethodSpec = mcp_spec!("server/discover", false);
static TOOLS_LIST: MethodSpec = mcp_spec!("tools/list", false);
static TOOLS_CALL: MethodSpec = mcp_spec!("tools/call", false);
static RESOURCES_LIST: MethodSpec = mcp_spec!("resources/list", false);
static RESOURCES_TEMPLATES_LIST: MethodSpec = mcp_spec!("resources/templates/list", false);
static RESOURCES_READ: MethodSpec = mcp_spec!("resources/read", false);
static PROMPTS_LIST: MethodSpec = mcp_spec!("prompts/list", false);
static PROMPTS_GET: MethodSpec = mcp_spec!("prompts/get", false);
static COMPLETION_COMPLETE: MethodSpec = mcp_spec!("completion/complete", false);
static LOGGING_SET_LEVEL: MethodSpec = mcp_spec!("logging/setLevel", false);
static RESOURCES_SUBSCRIBE: MethodSpec = mcp_spec!("resources/subscribe", false);
static RESOURCES_UNSUBSCRIBE: MethodSpec = mcp_spec!("resources/unsubscribe", false);
static SUBSCRIPTIONS_LISTEN: MethodSpec = mcp_spec!("subscriptions/listen", false);

/// The router of MCP methods over `server`. The lists of resources and
/// prompts are answered (empty) even without any, as hosts ask for them
/// regardless; `completion/complete` only exists with completion methods
/// (MCP: "method not found" when a server does not support it).
fn methods(server: Arc<ToolServer>) -> Router {
    let mut router = Router::new();
    router.set_discover(false);
    // The user's catalog (never served: `rpc.discover` is off): an OAuth
    // resource server publishes as scopes what its methods require, and
    // calls reach them through this router.
    router.catalog_mut().merge(server.router.catalog().clone());
    let mut handlers: Vec<(&'static MethodSpec, Handler)> = vec![
        (&INITIALIZE, initialize),
        (&INITIALIZED, initialized),
        (&PING, ping),
        (&DISCOVER, discover),
        (&LOGGING_SET_LEVEL, logging::set_level),
        (&RESOURCES_SUBSCRIBE, changes::subscribe),
        (&RESOURCES_UNSUBSCRIBE, changes::unsubscribe),
        (&SUBSCRIPTIONS_LISTEN, changes::listen),
    ];
    if !server.completions.is_empty() {
        handlers.push((&COMPLETION_COMPLETE, completion::complete));
    }
    for (spec, handler) in handlers {
        let server = Arc::clone(&server);
        if let Err(err) = router.register(spec, move |params, cx| {
            resume_changes(&server, cx);
            handler(&server, params, cx)
        }) {
            unreachable!("MCP method names are distinct: {err}");
        }
    }
    // The methods that list or call the user's: their answers are
    // written straight into the response, around JSON made once or the
    // method's JSON.
    let direct: [(&'static MethodSpec, DirectHandler); 7] = [
        (&TOOLS_LIST, tools_list),
        (&RESOURCES_LIST, resources::list),
        (&RESOURCES_TEMPLATES_LIST, resources::templates),
        (&PROMPTS_LIST, prompts::list),
        (&TOOLS_CALL, call::tools_call),
        (&RESOURCES_READ, resources::read_resource),
        (&PROMPTS_GET, prompts::get),
    ];
    for (spec, handler) in direct {
        let server = Arc::clone(&server);
        if let Err(err) = router.register_direct(
            spec,
            Box::new(move |params, cx, out| {
                resume_changes(&server, cx);
                handler(&server, params, cx, out)
            }),
        ) {
            unreachable!("MCP method names are distinct: {err}");
        }
    }
    router
}

/// Forwards the application's changes to a Streamable HTTP session that
/// another replica initialized (restored here from a session store), from
/// its first call on this replica on: `initialize` did it where it ran.
fn resume_changes(server: &ToolServer, cx: &Context) {
    let (Some(changes), Some(link), None) = (&server.changes, &cx.link, cx.peer()) else { return };
    let Some(session) = session_of(cx) else { return };
    if session.start_forwarding() {
        let outlet = outlet::Outlet::of_session(cx, &session);
        changes::forward(server, changes, Arc::clone(&session), Arc::clone(link), outlet);
    }
}

/// Names the current call's span `{method} {target}` for OpenTelemetry
/// (`tools/call add`, `prompts/get summary`), as MCP's semantic
/// conventions and the SDKs name these calls; feature `otel`. The span
/// has started (it is entered), so the name goes to OpenTelemetry's span
/// itself: `otel.name` is read only before.
#[cfg(feature = "otel")]
fn name_span(method: &str, target: &str) {
    use crate::otel::opentelemetry::trace::TraceContextExt;
    use crate::otel::tracing_opentelemetry::OpenTelemetrySpanExt;

    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.context().span().update_name(format!("{method} {target}"));
    }
}

type Handler = fn(&Arc<ToolServer>, Params<'_>, &Context) -> Result<MethodOutcome, ErrorObject>;
type DirectHandler = fn(&Arc<ToolServer>, &Params<'_>, &Context, &mut Vec<u8>) -> Answered;

/// Reads the params of MCP method `method`: an object (absent reads as `{}`).
fn read<'a, T: Deserialize<'a>>(params: &Params<'a>, method: &str) -> Result<T, ErrorObject> {
    let text = params.raw().map_or("{}", RawValue::get);
    if !text.starts_with('{') {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: `{method}` takes its params as an object"),
        ));
    }
    serde_json::from_str(text).map_err(|err| {
        let mut message = format!("Invalid params of `{method}`: ");
        crate::dispatch::params::errors::push_without_position(&mut message, &err);
        ErrorObject::new(INVALID_PARAMS, message)
    })
}

/// Params that only carry `_meta`.
#[derive(Deserialize)]
struct MetaOnly<'a> {
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// A result of `value`, stamped as the modern revision wants
/// (`resultType`, the server's identity) when it is modern.
fn answer(server: &ToolServer, revision: Revision, value: Map<String, Value>) -> Result<MethodOutcome, ErrorObject> {
    Ok(MethodOutcome::Ready(stamped(server, revision, value)))
}

/// `value`, stamped as the modern revision wants, encoded.
fn stamped(server: &ToolServer, revision: Revision, value: Map<String, Value>) -> MethodResult {
    #[derive(serde::Serialize)]
    struct Stamped<'a> {
        #[serde(flatten)]
        value: Map<String, Value>,
        #[serde(flatten)]
        stamp: Option<Stamp<'a>>,
    }
    encode(&Stamped { value, stamp: server.stamp(revision) })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams<'a> {
    #[serde(borrow)]
    protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    capabilities: Option<&'a RawValue>,
    #[serde(borrow)]
    client_info: Option<&'a RawValue>,
}

/// `initialize`: negotiates a handshake revision for the session (the
/// client's when this server speaks it, else the newest), whatever its
/// `_meta` says (the handshake does not exist in the modern revision).
fn initialize(server: &Arc<ToolServer>, params: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: InitializeParams<'_> = read(&params, "initialize")?;
    let missing = session::absent([
        (request.protocol_version, "protocolVersion"),
        (request.capabilities, "capabilities"),
        (request.client_info, "clientInfo"),
    ]);
    if !missing.is_empty() {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: `initialize` needs {}", missing.join(", ")),
        ));
    }
    let Some(requested) = request.protocol_version.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
    else {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            "Invalid params: `protocolVersion` must be a string such as \"2025-11-25\"",
        ));
    };
    let revision =
        Revision::parse(&requested).filter(|revision| !revision.is_modern()).unwrap_or(Revision::LATEST_LEGACY);
    let Some(session) = session_of(cx) else {
        return Err(ErrorObject::internal_error("Internal error: this request came in on no connection or session"));
    };
    session.start(revision)?;
    if let Some(capabilities) = request.capabilities.and_then(|raw| serde_json::from_str(raw.get()).ok()) {
        session.set_capabilities(capabilities);
    }
    if let (Some(changes), Some(link), true) = (&server.changes, &cx.link, session.start_forwarding()) {
        let outlet = outlet::Outlet::of_session(cx, &session);
        changes::forward(server, changes, Arc::clone(&session), Arc::clone(link), outlet);
    }
    tracing::debug!(requested, negotiated = revision.as_str(), "MCP session initialized");
    let mut server_info = Map::new();
    server_info.insert("name".into(), server.name.clone().into());
    server_info.insert("version".into(), server.version.clone().into());
    if let (Some(title), true) = (&server.title, revision.has_structured_output()) {
        server_info.insert("title".into(), title.clone().into());
    }
    let mut result = Map::new();
    result.insert("protocolVersion".into(), revision.as_str().into());
    result.insert("capabilities".into(), server.capabilities(revision).into());
    result.insert("serverInfo".into(), server_info.into());
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), instructions.clone().into());
    }
    answer(server, revision, result)
}

/// `notifications/initialized`: the client is ready (nothing waits on it).
fn initialized(_: &Arc<ToolServer>, _: Params<'_>, cx: &Context) -> Result<MethodOutcome, ErrorObject> {
    if let Some(session) = session_of(cx) {
        session.mark_initialized();
    }
    Ok(MethodOutcome::Ready(encode(&())))
}

/// `ping`: answered at any time in the handshake era; the modern revision
/// has no `ping`.
fn ping(_: &Arc<ToolServer>, params: Params<'_>, _: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: MetaOnly<'_> = read(&params, "ping")?;
    if Meta::read(request.meta).is_modern() {
        return Err(ErrorObject::new(METHOD_NOT_FOUND, "Method not found: MCP 2026-07-28 has no `ping`"));
    }
    Ok(MethodOutcome::Ready(encode(&Map::new())))
}

/// `server/discover` (2026-07-28): the revisions, capabilities and
/// identity of the server.
fn discover(server: &Arc<ToolServer>, params: Params<'_>, _: &Context) -> Result<MethodOutcome, ErrorObject> {
    let request: MetaOnly<'_> = read(&params, "server/discover")?;
    let revision = Meta::read(request.meta).modern_revision()?;
    let supported: Vec<&str> = Revision::MODERN.iter().map(|revision| revision.as_str()).collect();
    let mut result = Map::new();
    result.insert("supportedVersions".into(), supported.into());
    result.insert("capabilities".into(), server.capabilities(revision).into());
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), instructions.clone().into());
    }
    cacheable(&mut result, revision);
    answer(server, revision, result)
}

#[derive(Deserialize)]
struct ListParams<'a> {
    #[serde(default)]
    cursor: Option<String>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// What a handler that writes its answer into the response gives back: a
/// future when the answer comes later.
pub(crate) type Answered = Result<Option<MethodFuture>, ErrorObject>;

/// The cursor of list method `method`'s request, and its revision.
fn list_request(params: &Params<'_>, cx: &Context, method: &str) -> Result<(Option<String>, Revision), ErrorObject> {
    let request: ListParams<'_> = read(params, method)?;
    let revision = Meta::read(request.meta).revision(cx)?;
    Ok((request.cursor, revision))
}

/// `tools/list`: one page of tools, as the request's revision describes
/// them (their JSON is made once per revision; a page only copies it).
fn tools_list(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let (cursor, revision) = list_request(params, cx, "tools/list")?;
    let permissions = Permissions::of(cx);
    let (tools, next_cursor) = server.tools.page_served(
        revision,
        cursor.as_deref(),
        server.page_size,
        server.changes.as_ref(),
        permissions,
    )?;
    written::list_page(out, server, revision, "tools", &tools, next_cursor.as_deref());
    Ok(None)
}
