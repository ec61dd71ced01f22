//! Language servers: the LSP lifecycle and the editor as a typed client
//! (feature `lsp`, on the [`lsp_types`] crate, re-exported here).
//!
//! A language server is a `#[rpc]` trait whose methods carry LSP's names
//! and `lsp-types` params, served by [`LspServer`], which adds what every
//! language server needs and no method of yours should repeat:
//!
//! - `Content-Length` framing on stdio, and LSP's cancellation
//!   (`$/cancelRequest`, a cancelled request answered -32800);
//! - the lifecycle, checked before each call runs: a request before
//!   `initialize` is refused with -32002 ([`SERVER_NOT_INITIALIZED`]) and a
//!   notification dropped (but `exit`); a second `initialize` and every
//!   request after `shutdown` are refused with -32600; `shutdown` is
//!   answered `null` when your trait has no method of that name (declare
//!   one to release resources), and `exit` stops the server, whose exit
//!   code is 0 after `shutdown` and 1 without, as LSP says;
//! - a bound on calls waiting behind one another that editors' pipelining
//!   does not reach (see [`LspServer::new`]).
//!
//! [`Client`] is the editor, as a handler calls it back over the same
//! connection: any request or notification `lsp-types` defines, typed
//! ([`Client::request`], [`Client::notify`]), and the usual ones by name
//! (diagnostics, configuration, messages), with progress
//! ([`Client::progress`]) sent only to an editor that said it shows it.
//!
//! ```no_run
//! use rpc_runtime::lsp::lsp_types::{
//!     DidOpenTextDocumentParams, InitializeParams, InitializeResult, ServerCapabilities,
//!     TextDocumentSyncCapability, TextDocumentSyncKind,
//! };
//! use rpc_runtime::lsp::{Client, LspServer};
//! use rpc_runtime::{rpc, Context};
//!
//! #[rpc]
//! pub trait Server {
//!     #[rpc(whole_params)]
//!     fn initialize(&self, params: InitializeParams) -> InitializeResult;
//!
//!     #[rpc(notification, whole_params, name = "textDocument/didOpen")]
//!     async fn did_open(&self, params: DidOpenTextDocumentParams, cx: Context);
//! }
//!
//! struct Backend;
//!
//! impl Server for Backend {
//!     fn initialize(&self, _: InitializeParams) -> InitializeResult {
//!         let sync = TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL);
//!         let capabilities = ServerCapabilities { text_document_sync: Some(sync), ..Default::default() };
//!         InitializeResult { capabilities, server_info: None }
//!     }
//!
//!     async fn did_open(&self, params: DidOpenTextDocumentParams, cx: Context) {
//!         let Ok(editor) = Client::of(&cx) else { return };
//!         let document = params.text_document;
//!         let _ = editor.publish_diagnostics(document.uri, Vec::new(), Some(document.version)).await;
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     LspServer::new(Backend.into_rpc()).run()
//! }
//! ```
//!
//! The [language server guide](crate::guide::language_server) builds a
//! whole one (incremental edits, hover, completion, a command with
//! progress and cancellation), driven by Neovim in our tests.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

pub use lsp_types;

use lsp_types::notification::{
    LogMessage, Notification, Progress as ProgressNotification, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{Request, WorkDoneProgressCreate, WorkspaceConfiguration};
use lsp_types::{
    ConfigurationItem, ConfigurationParams, Diagnostic, LSPAny, LogMessageParams, MessageType, NumberOrString,
    ProgressParams, ProgressParamsValue, PublishDiagnosticsParams, ShowMessageParams, Uri, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use serde_json::value::RawValue;

use crate::dispatch::context::Context;
use crate::dispatch::dialect::Cancellation;
use crate::dispatch::limits::Limits;
use crate::dispatch::router::Router;
use crate::dispatch::{Dialect, MethodOutcome, MethodSpec};
use crate::peer::Peer;
use crate::peer::client::ClientError;
use crate::transport::Listener;
use crate::transport::server::Server;
use crate::transport::stdio::Stdio;
use crate::wire::{ErrorObject, Framing, INVALID_REQUEST};

/// LSP's error for a request that comes before `initialize`
/// (`ServerNotInitialized`).
pub const SERVER_NOT_INITIALIZED: i64 = -32002;

/// How many calls may wait behind one another before a request is refused
/// and a notification dropped: editors send edits and requests without
/// waiting, and the calls behind an `exclusive` edit count as running.
pub const MAX_PENDING_CALLS: usize = 1 << 16;

/// A router served as a language server: LSP's framing, cancellation and
/// lifecycle around your methods (see the [module docs](self)).
///
/// It serves one editor: stdio with [`LspServer::run`], or one connection
/// of your own with [`LspServer::serve`] (a
/// [`Stream`](crate::transport::stream::Stream) over a socket the editor
/// opened, say).
#[derive(Debug)]
pub struct LspServer {
    server: Server,
    shared: Arc<Shared>,
}

impl LspServer {
    /// Serves `router` as a language server: `Content-Length` framing,
    /// [`Cancellation::Lsp`], the lifecycle, and
    /// [`Limits::max_concurrent_requests`] raised to
    /// [`MAX_PENDING_CALLS`]. A `shutdown` method is added if `router` has
    /// none.
    pub fn new(mut router: Router) -> Self {
        if router.spec("shutdown").is_none() {
            static SHUTDOWN: MethodSpec = MethodSpec::new("shutdown", &[]);
            let answered =
                router.register(&SHUTDOWN, |_params, _cx| Ok(MethodOutcome::Ready(Ok(RawValue::NULL.to_owned()))));
            debug_assert!(answered.is_ok(), "the name is free");
        }
        let shared = Arc::new(Shared::default());
        let server = Server::new(router)
            .framing(Framing::ContentLength)
            .limits(Limits::default().max_concurrent_requests(MAX_PENDING_CALLS))
            .dialect(Lifecycle(Arc::clone(&shared)));
        LspServer { server, shared }
    }

    /// The same server with `configure` applied to its
    /// [`Server`]: layers, limits, timeouts. Keep its framing and dialect:
    /// they are the protocol.
    ///
    /// ```no_run
    /// # fn demo(router: rpc_runtime::Router) {
    /// use std::time::Duration;
    /// use rpc_runtime::lsp::LspServer;
    ///
    /// let server = LspServer::new(router).configure(|server| server.call_timeout(Duration::from_secs(30)));
    /// # }
    /// ```
    #[must_use = "a builder does nothing until used"]
    pub fn configure(self, configure: impl FnOnce(Server) -> Server) -> Self {
        LspServer { server: configure(self.server), ..self }
    }

    /// The server with the lifecycle, for a connection of your own that
    /// [`LspServer::serve`] does not take (a [`Peer`] connected in
    /// process, in a test): `exit` then ends nothing, and there is no exit
    /// code.
    pub fn into_server(self) -> Server {
        self.server
    }

    /// Serves the editor on stdin and stdout until `exit` (answering the
    /// calls read before it) or the end of stdin, on a runtime of its own;
    /// returns the exit code LSP asks for: 0 if `shutdown` came, 1
    /// otherwise (or if serving failed, which is logged). The whole of a
    /// language server's `main`.
    ///
    /// The runtime is tokio's current-thread one: handlers take turns on
    /// one thread, which suits a server whose work is short per call (and
    /// costs least). For work that keeps a thread busy, use
    /// `tokio::task::spawn_blocking` in the handler, or call
    /// [`LspServer::serve`] with [`Stdio`] on a multi-thread runtime.
    pub fn run(self) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(err) => {
                tracing::error!(error = %err, "could not start a tokio runtime");
                return ExitCode::FAILURE;
            }
        };
        let served = runtime.block_on(self.serve(Stdio));
        // Stdin is read on a blocking thread that may wait for input
        // forever: do not wait for it.
        runtime.shutdown_background();
        served.unwrap_or_else(|err| {
            tracing::error!(error = %err, "serving the editor failed");
            ExitCode::FAILURE
        })
    }

    /// Serves the editor on `listener` (meant for one connection:
    /// [`Stdio`], or a [`Stream`](crate::transport::stream::Stream)) until
    /// `exit` or the end of its input; then the exit code, as
    /// [`LspServer::run`] says.
    pub async fn serve<L: Listener>(self, listener: L) -> std::io::Result<ExitCode> {
        let exit = Arc::clone(&self.shared);
        self.server.serve(listener).with_graceful_shutdown(async move { exit.exit.notified().await }).await?;
        Ok(if self.shared.shut_down.load(Ordering::Acquire) { ExitCode::SUCCESS } else { ExitCode::from(1) })
    }
}

/// What the server knows across its connection: `shutdown` came, `exit`
/// came.
#[derive(Debug, Default)]
struct Shared {
    shut_down: AtomicBool,
    exit: tokio::sync::Notify,
}

/// The lifecycle of one connection, and what `initialize` said of the
/// editor.
#[derive(Debug)]
struct Session {
    phase: AtomicU8,
    /// `capabilities.window.workDoneProgress` of `initialize`.
    work_done_progress: AtomicBool,
    /// Numbers the progress tokens of [`Client::progress`].
    tokens: AtomicU64,
}

const STARTING: u8 = 0;
const RUNNING: u8 = 1;
const SHUTTING_DOWN: u8 = 2;

impl Session {
    fn new() -> Self {
        Session {
            phase: AtomicU8::new(STARTING),
            work_done_progress: AtomicBool::new(false),
            tokens: AtomicU64::new(0),
        }
    }

    /// The connection's session, made on its first call.
    fn of(cx: &Context) -> Option<Arc<Session>> {
        cx.connection_state(Session::new)
    }
}

/// LSP's rules as a [`Dialect`]: its cancellation, and its lifecycle per
/// connection.
struct Lifecycle(Arc<Shared>);

impl Dialect for Lifecycle {
    fn check_call(
        &self,
        method: &str,
        params: Option<&RawValue>,
        notification: bool,
        cx: &Context,
    ) -> Result<(), ErrorObject> {
        let Some(session) = Session::of(cx) else { return Ok(()) };
        if method == "exit" {
            self.0.exit.notify_one();
            return Ok(());
        }
        match session.phase.load(Ordering::Acquire) {
            RUNNING if method == "initialize" => Err(ErrorObject::new(
                INVALID_REQUEST,
                "`initialize` came twice: the server is initialized already".to_owned(),
            )),
            RUNNING if method == "shutdown" && !notification => {
                session.phase.store(SHUTTING_DOWN, Ordering::Release);
                self.0.shut_down.store(true, Ordering::Release);
                Ok(())
            }
            RUNNING => Ok(()),
            STARTING if method == "initialize" && !notification => {
                session.work_done_progress.store(offers_progress(params), Ordering::Relaxed);
                session.phase.store(RUNNING, Ordering::Release);
                Ok(())
            }
            STARTING => Err(ErrorObject::new(
                SERVER_NOT_INITIALIZED,
                format!("server not initialized: `{method}` came before `initialize`"),
            )),
            _ => Err(ErrorObject::new(
                INVALID_REQUEST,
                format!("the server is shutting down: `{method}` came after `shutdown`"),
            )),
        }
    }

    fn cancellation(&self) -> Option<Cancellation> {
        Some(Cancellation::Lsp)
    }
}

/// Whether `initialize`'s params say the editor shows `$/progress`
/// (`capabilities.window.workDoneProgress`); only that is read here, the
/// method decodes the params itself.
fn offers_progress(params: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    struct Params {
        capabilities: Capabilities,
    }
    #[derive(serde::Deserialize)]
    struct Capabilities {
        window: Option<Window>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Window {
        work_done_progress: Option<bool>,
    }
    params
        .and_then(|params| serde_json::from_str::<Params>(params.get()).ok())
        .and_then(|params| params.capabilities.window?.work_done_progress)
        .unwrap_or(false)
}

/// The editor, as a language server calls it back: requests and
/// notifications over the connection a call came in on.
#[derive(Clone, Debug)]
pub struct Client {
    peer: Peer,
    session: Option<Arc<Session>>,
}

impl Client {
    /// The editor that sent the call `cx` belongs to. An error (-32603)
    /// outside a connection (an engine fed by hand), which a handler
    /// returning `Result<_, ErrorObject>` passes on with `?`.
    pub fn of(cx: &Context) -> Result<Client, ErrorObject> {
        let peer = cx.peer().ok_or_else(|| ErrorObject::internal_error("not on a connection to an editor"))?;
        Ok(Client { peer: peer.clone(), session: Session::of(cx) })
    }

    /// The editor on `peer`, a connection of your own (a client that
    /// drives a language server, or a test).
    pub fn new(peer: Peer) -> Client {
        Client { peer, session: None }
    }

    /// The connection, for calls `lsp-types` does not define.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Sends request `R` (any of [`lsp_types::request`]) and waits for
    /// the editor's answer.
    ///
    /// ```no_run
    /// # async fn demo(editor: rpc_runtime::lsp::Client) -> Result<(), rpc_runtime::ClientError> {
    /// use rpc_runtime::lsp::lsp_types::{request::ShowDocument, ShowDocumentParams};
    ///
    /// let uri = "file:///tmp/notes.txt".parse().expect("a URI");
    /// let params = ShowDocumentParams { uri, external: None, take_focus: Some(true), selection: None };
    /// let shown = editor.request::<ShowDocument>(params).await?;
    /// # let _ = shown; Ok(()) }
    /// ```
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result, ClientError> {
        self.peer.call(R::METHOD, params).await
    }

    /// Sends notification `N` (any of [`lsp_types::notification`]).
    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), ClientError> {
        self.peer.notify(N::METHOD, params).await
    }

    /// `textDocument/publishDiagnostics`: `uri`'s diagnostics, replacing
    /// the ones sent before (`version`: the document's version they are
    /// of, if known).
    pub async fn publish_diagnostics(
        &self,
        uri: Uri,
        diagnostics: Vec<Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), ClientError> {
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams { uri, diagnostics, version }).await
    }

    /// `workspace/configuration`: the editor's settings, one value per
    /// item asked for.
    pub async fn configuration(&self, items: Vec<ConfigurationItem>) -> Result<Vec<LSPAny>, ClientError> {
        self.request::<WorkspaceConfiguration>(ConfigurationParams { items }).await
    }

    /// `window/logMessage`: a line in the editor's log.
    pub async fn log_message(&self, typ: MessageType, message: impl Into<String>) -> Result<(), ClientError> {
        self.notify::<LogMessage>(LogMessageParams { typ, message: message.into() }).await
    }

    /// `window/showMessage`: a message the editor shows its user.
    pub async fn show_message(&self, typ: MessageType, message: impl Into<String>) -> Result<(), ClientError> {
        self.notify::<ShowMessage>(ShowMessageParams { typ, message: message.into() }).await
    }

    /// Starts showing progress titled `title`: asks the editor for a new
    /// token (`window/workDoneProgress/create`) and begins it. `None` when
    /// the editor did not say in `initialize` that it shows progress
    /// (nothing is sent then, as LSP asks), when it refused the token, or
    /// outside a connection [`Client::of`] found.
    pub async fn progress(&self, title: impl Into<String>) -> Option<Progress> {
        let session = self.session.as_ref()?;
        if !session.work_done_progress.load(Ordering::Relaxed) {
            return None;
        }
        let number = session.tokens.fetch_add(1, Ordering::Relaxed) + 1;
        let token = NumberOrString::String(format!("rpc-runtime-progress-{number}"));
        let create = WorkDoneProgressCreateParams { token: token.clone() };
        self.request::<WorkDoneProgressCreate>(create).await.ok()?;
        let progress = Progress { client: self.clone(), token };
        let begin = WorkDoneProgressBegin { title: title.into(), ..WorkDoneProgressBegin::default() };
        progress.send(WorkDoneProgress::Begin(begin)).await;
        Some(progress)
    }
}

/// Progress the editor shows under one token (from [`Client::progress`]).
/// Sending it is best effort: a failure (the editor left) is logged, not
/// returned, so that reporting never stops the work it reports on.
#[derive(Debug)]
pub struct Progress {
    client: Client,
    token: NumberOrString,
}

impl Progress {
    /// The token, as the editor knows it.
    pub fn token(&self) -> &NumberOrString {
        &self.token
    }

    /// Reports how far the work got: a message, a percentage, or both.
    pub async fn report(&self, message: Option<String>, percentage: Option<u32>) {
        let report = WorkDoneProgressReport { message, percentage, ..WorkDoneProgressReport::default() };
        self.send(WorkDoneProgress::Report(report)).await;
    }

    /// Ends the progress, with a last message if any.
    pub async fn end(self, message: Option<String>) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd { message })).await;
    }

    async fn send(&self, value: WorkDoneProgress) {
        let params = ProgressParams { token: self.token.clone(), value: ProgressParamsValue::WorkDone(value) };
        if let Err(err) = self.client.notify::<ProgressNotification>(params).await {
            tracing::warn!(error = %err, "could not report progress to the editor");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

    use super::*;
    use crate::dispatch::router::MethodOutcome as Outcome;
    use crate::transport::stream::Stream;

    /// An editor's end of a connection to an `LspServer` of one method
    /// `initialize` (answers `{"capabilities":{}}`) and one notification
    /// `note` (counted).
    struct Editor {
        reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
        writer: tokio::io::WriteHalf<DuplexStream>,
        served: tokio::task::JoinHandle<std::io::Result<ExitCode>>,
        notes: Arc<AtomicUsize>,
    }

    impl Editor {
        fn start(with_shutdown: bool) -> Editor {
            static INITIALIZE: MethodSpec = MethodSpec { whole: true, ..MethodSpec::new("initialize", &[]) };
            static NOTE: MethodSpec = MethodSpec { notification: true, ..MethodSpec::new("note", &[]) };
            static SHUTDOWN: MethodSpec = MethodSpec::new("shutdown", &[]);
            let notes = Arc::new(AtomicUsize::new(0));
            let mut router = Router::new();
            let answer = || RawValue::from_string(r#"{"capabilities":{}}"#.to_owned()).expect("JSON");
            router.register(&INITIALIZE, move |_, _| Ok(Outcome::Ready(Ok(answer())))).expect("free");
            let counted = Arc::clone(&notes);
            router
                .register(&NOTE, move |_, _| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    Ok(Outcome::Ready(Ok(RawValue::NULL.to_owned())))
                })
                .expect("free");
            if with_shutdown {
                let own = || RawValue::from_string(r#""mine""#.to_owned()).expect("JSON");
                router.register(&SHUTDOWN, move |_, _| Ok(Outcome::Ready(Ok(own())))).expect("free");
            }
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            let (reader, writer) = tokio::io::split(theirs);
            let served = tokio::spawn(LspServer::new(router).serve(Stream::new(reader, writer)));
            let (reader, writer) = tokio::io::split(ours);
            Editor { reader: BufReader::new(reader), writer, served, notes }
        }

        async fn send(&mut self, message: Value) {
            let body = message.to_string();
            let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
            self.writer.write_all(frame.as_bytes()).await.expect("write");
        }

        async fn recv(&mut self) -> Value {
            let mut length = 0;
            loop {
                let mut line = String::new();
                self.reader.read_line(&mut line).await.expect("read a header");
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = value.parse().expect("a length");
                }
            }
            let mut body = vec![0; length];
            self.reader.read_exact(&mut body).await.expect("read a body");
            serde_json::from_slice(&body).expect("JSON")
        }

        /// A request; `params` null: without params (as `shutdown` is sent).
        async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
            let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
            if !params.is_null() {
                request["params"] = params;
            }
            self.send(request).await;
            self.recv().await
        }

        async fn notify(&mut self, method: &str) {
            self.send(json!({"jsonrpc": "2.0", "method": method})).await;
        }

        async fn exit_code(self) -> ExitCode {
            self.served.await.expect("not panicked").expect("served")
        }
    }

    #[tokio::test]
    async fn requests_before_initialize_are_refused_and_notifications_dropped() {
        let mut editor = Editor::start(false);
        editor.notify("note").await;
        let refused = editor.call(1, "note", json!({})).await;
        assert_eq!(refused["error"]["code"], SERVER_NOT_INITIALIZED);
        assert_eq!(refused["error"]["message"], "server not initialized: `note` came before `initialize`");
        assert_eq!(editor.notes.load(Ordering::SeqCst), 0, "the notification was dropped");

        let initialized = editor.call(2, "initialize", json!({"capabilities": {}})).await;
        assert_eq!(initialized["result"], json!({"capabilities": {}}));
        editor.notify("note").await;
        let again = editor.call(3, "initialize", json!({"capabilities": {}})).await;
        assert_eq!(again["error"]["code"], INVALID_REQUEST);
        assert_eq!(editor.notes.load(Ordering::SeqCst), 1, "served once initialized");
    }

    #[tokio::test]
    async fn shutdown_is_answered_then_only_exit_counts_and_the_exit_code_is_zero() {
        let mut editor = Editor::start(false);
        editor.call(1, "initialize", json!({"capabilities": {}})).await;
        assert_eq!(editor.call(2, "shutdown", json!(null)).await["result"], Value::Null);
        let late = editor.call(3, "initialize", json!({})).await;
        assert_eq!(late["error"]["code"], INVALID_REQUEST);
        assert_eq!(late["error"]["message"], "the server is shutting down: `initialize` came after `shutdown`");
        editor.notify("note").await;
        editor.notify("exit").await;
        assert_eq!(editor.notes.load(Ordering::SeqCst), 0);
        assert_eq!(editor.exit_code().await, ExitCode::SUCCESS);
    }

    #[tokio::test]
    async fn a_shutdown_method_of_your_own_is_called() {
        let mut editor = Editor::start(true);
        editor.call(1, "initialize", json!({"capabilities": {}})).await;
        let answer = editor.call(2, "shutdown", json!(null)).await;
        assert_eq!(answer["result"], "mine", "{answer}");
        editor.notify("exit").await;
        assert_eq!(editor.exit_code().await, ExitCode::SUCCESS);
    }

    #[tokio::test]
    async fn exit_without_shutdown_is_exit_code_one_and_so_is_the_end_of_input() {
        let mut editor = Editor::start(false);
        editor.call(1, "initialize", json!({"capabilities": {}})).await;
        editor.notify("exit").await;
        assert_eq!(editor.exit_code().await, ExitCode::from(1));

        let editor = Editor::start(false);
        let Editor { writer, served, reader, .. } = editor;
        drop((writer, reader));
        assert_eq!(served.await.expect("not panicked").expect("served"), ExitCode::from(1));
    }

    #[test]
    fn progress_is_offered_only_when_initialize_says_so() {
        let raw = |text: &str| RawValue::from_string(text.to_owned()).expect("JSON");
        assert!(offers_progress(Some(&raw(r#"{"capabilities":{"window":{"workDoneProgress":true}}}"#))));
        assert!(!offers_progress(Some(&raw(r#"{"capabilities":{"window":{}}}"#))));
        assert!(!offers_progress(Some(&raw(r#"{"capabilities":{}}"#))));
        assert!(!offers_progress(Some(&raw(r#"[1]"#))));
        assert!(!offers_progress(None));
    }
}
