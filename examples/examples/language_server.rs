//! A small, real language server for plain text, over stdio as editors
//! launch one: the LSP lifecycle, documents edited incrementally
//! (positions in UTF-16 code units, as LSP counts them), diagnostics pushed
//! to the editor, hover, completion, and a slow command that asks the
//! editor for its settings, reports progress and can be cancelled. Every
//! param and result is an `lsp-types` type.
//!
//! ```text
//! cargo build --example language_server --no-default-features --features lsp
//! ```
//!
//! Point an editor's LSP client at `target/debug/examples/language_server`.
//! Hover shows how often the word under the cursor occurs, completion
//! offers the document's words, every `TODO` is a warning, and the command
//! `languageServer.countWords` (argument: a document's URI) counts words
//! one line at a time, pausing `delayMs` per line (from the editor's
//! `languageServer` settings; default 50). Stdout carries only LSP
//! messages, logs go to stderr (`RPC_LOG=debug`). It exits with 0 after
//! `shutdown` and `exit`, with 1 on `exit` (or the end of stdin) without
//! `shutdown`.

use std::collections::{BTreeSet, HashMap};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionOptions, CompletionParams, ConfigurationItem, ConfigurationParams,
    Diagnostic, DiagnosticSeverity, DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    ExecuteCommandOptions, ExecuteCommandParams, Hover, HoverContents, HoverParams, HoverProviderCapability,
    InitializeParams, InitializeResult, InitializedParams, LSPAny, MarkupContent, MarkupKind, NumberOrString, Position,
    ProgressParams, ProgressParamsValue, PublishDiagnosticsParams, Range, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, Uri, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use rpc_runtime::dispatch::MethodCall;
use rpc_runtime::transport::stdio::Stdio;
use rpc_runtime::wire::{INVALID_REQUEST, REQUEST_CANCELLED};
use rpc_runtime::{rpc, Cancellation, Context, ErrorObject, Framing, Limits, Server};
use tower::filter::FilterLayer;

/// The one command the server runs.
const COUNT_WORDS: &str = "languageServer.countWords";

/// LSP's error for a request that comes before `initialize`.
const SERVER_NOT_INITIALIZED: i64 = -32002;

/// What the language server answers (the editor calls these). LSP sends
/// each method's params as one object: `whole_params` hands it whole to
/// the method's one parameter, an `lsp-types` struct.
#[rpc]
pub trait LanguageServer {
    /// Starts the session: answers what the server can do.
    #[rpc(whole_params)]
    fn initialize(&self, params: InitializeParams) -> InitializeResult;

    /// The editor got the answer to `initialize`.
    #[rpc(notification, whole_params)]
    fn initialized(&self, params: InitializedParams);

    /// Ends the session. `exclusive` (see `did_open`): the requests read
    /// before it are answered, every one after it is refused.
    #[rpc(exclusive)]
    fn shutdown(&self);

    /// Stops the server.
    #[rpc(notification)]
    fn exit(&self);

    /// A document was opened. `exclusive`, as its siblings: it starts once
    /// every call read before it has finished, and the calls read after it
    /// wait for it, so a hover always sees the edits sent before it.
    #[rpc(notification, exclusive, whole_params, name = "textDocument/didOpen")]
    async fn did_open(&self, params: DidOpenTextDocumentParams, cx: Context);

    /// A document was edited.
    #[rpc(notification, exclusive, whole_params, name = "textDocument/didChange")]
    async fn did_change(&self, params: DidChangeTextDocumentParams, cx: Context);

    /// A document was closed.
    #[rpc(notification, exclusive, whole_params, name = "textDocument/didClose")]
    async fn did_close(&self, params: DidCloseTextDocumentParams, cx: Context);

    /// How often the word under the cursor occurs in the document.
    #[rpc(whole_params, name = "textDocument/hover")]
    async fn hover(&self, params: HoverParams) -> Option<Hover>;

    /// The document's words that start with the one being typed.
    #[rpc(whole_params, name = "textDocument/completion")]
    async fn completion(&self, params: CompletionParams) -> Vec<CompletionItem>;

    /// Runs `languageServer.countWords`: the number of words of a document.
    #[rpc(whole_params, name = "workspace/executeCommand")]
    async fn execute_command(&self, params: ExecuteCommandParams, cx: Context) -> Result<LSPAny, ErrorObject>;
}

/// What the editor answers (the server calls these through the generated
/// `LanguageClientClient`, over the connection a request came in on).
#[rpc]
pub trait LanguageClient {
    /// The diagnostics of a document, replacing the ones sent before.
    #[rpc(notification, whole_params, name = "textDocument/publishDiagnostics")]
    fn publish_diagnostics(&self, params: PublishDiagnosticsParams);

    /// The editor's settings, one value per item asked for.
    #[rpc(whole_params, name = "workspace/configuration")]
    fn configuration(&self, params: ConfigurationParams) -> Vec<LSPAny>;

    /// Asks the editor to show progress under a new token.
    #[rpc(whole_params, name = "window/workDoneProgress/create")]
    fn create_work_done_progress(&self, params: WorkDoneProgressCreateParams);

    /// Progress under a token the editor accepted.
    #[rpc(notification, whole_params, name = "$/progress")]
    fn progress(&self, params: ProgressParams);
}

/// Where the session is in LSP's lifecycle: before `initialize`, until
/// `shutdown`, after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Starting,
    Running,
    ShuttingDown,
}

/// The server's state, shared by every call.
#[derive(Default)]
struct Backend {
    phase: Mutex<Phase>,
    /// The editor shows `$/progress` (it said so in `initialize`).
    work_done_progress: AtomicBool,
    /// The open documents' text.
    documents: Mutex<HashMap<Uri, String>>,
    /// For `countWords-<n>` progress tokens.
    tokens: AtomicU64,
    /// Notified by `exit`: the server stops serving.
    exit: tokio::sync::Notify,
}

impl Backend {
    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn documents(&self) -> MutexGuard<'_, HashMap<Uri, String>> {
        self.documents.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lifecycle, for every call before it reaches its method (a tower
    /// filter on the server): requests before `initialize` and after
    /// `shutdown` are refused, and so are notifications (but `exit`), which
    /// drops them: a notification is never answered.
    fn admit(&self, call: MethodCall) -> Result<MethodCall, ErrorObject> {
        match (*self.phase(), call.method()) {
            (_, "exit") | (Phase::Starting, "initialize") | (Phase::Running, _) => Ok(call),
            (Phase::Starting, method) => Err(ErrorObject::new(
                SERVER_NOT_INITIALIZED,
                format!("server not initialized: `{method}` came before `initialize`"),
            )),
            (_, method) => Err(ErrorObject::new(
                INVALID_REQUEST,
                format!("the server is shutting down: `{method}` came after `shutdown`"),
            )),
        }
    }
}

/// The editor, as the server calls it: the typed client over the
/// connection the call `cx` belongs to came in on.
fn editor(cx: &Context) -> Result<LanguageClientClient, ErrorObject> {
    let peer = cx.peer().ok_or_else(|| ErrorObject::internal_error("not on a connection"))?;
    Ok(LanguageClientClient::new(peer.clone()))
}

/// Sends `uri`'s diagnostics; a failure (the editor is gone) is logged.
async fn publish(cx: &Context, uri: Uri, version: Option<i32>, diagnostics: Vec<Diagnostic>) {
    let Ok(editor) = editor(cx) else { return };
    if let Err(err) = editor.publish_diagnostics(PublishDiagnosticsParams { uri, diagnostics, version }).await {
        tracing::warn!(error = %err, "could not publish diagnostics");
    }
}

/// Sends `value` as progress under `token`; a failure is logged.
async fn report(editor: &LanguageClientClient, token: &NumberOrString, value: WorkDoneProgress) {
    let params = ProgressParams { token: token.clone(), value: ProgressParamsValue::WorkDone(value) };
    if let Err(err) = editor.progress(params).await {
        tracing::warn!(error = %err, "could not report progress");
    }
}

impl LanguageServer for Arc<Backend> {
    fn initialize(&self, params: InitializeParams) -> InitializeResult {
        let progress = params.capabilities.window.and_then(|window| window.work_done_progress);
        self.work_done_progress.store(progress == Some(true), Ordering::Relaxed);
        *self.phase() = Phase::Running;
        let sync = TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..TextDocumentSyncOptions::default()
        };
        InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(sync)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions::default()),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![COUNT_WORDS.to_owned()],
                    ..ExecuteCommandOptions::default()
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo { name: "language_server".to_owned(), version: None }),
        }
    }

    fn initialized(&self, _params: InitializedParams) {}

    fn shutdown(&self) {
        *self.phase() = Phase::ShuttingDown;
    }

    fn exit(&self) {
        self.exit.notify_one();
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams, cx: Context) {
        let item = params.text_document;
        let found = diagnostics(&item.text);
        self.documents().insert(item.uri.clone(), item.text);
        publish(&cx, item.uri, Some(item.version), found).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams, cx: Context) {
        let (uri, version) = (params.text_document.uri, params.text_document.version);
        let found = {
            let mut documents = self.documents();
            let Some(text) = documents.get_mut(&uri) else { return };
            for change in params.content_changes {
                match change.range {
                    Some(range) => {
                        let (start, end) = (offset(text, range.start), offset(text, range.end));
                        text.replace_range(start..end.max(start), &change.text);
                    }
                    None => *text = change.text,
                }
            }
            diagnostics(text)
        };
        // `exclusive`: the calls read after this one wait until it ends, so
        // a hover sees this edit whatever the handler awaits first (the
        // editor's settings, a parse on the blocking pool). Publishing only
        // queues the notification: the edit usually ends here, on the
        // connection's reader, and the next call runs at once.
        publish(&cx, uri, Some(version), found).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams, cx: Context) {
        let uri = params.text_document.uri;
        self.documents().remove(&uri);
        publish(&cx, uri, None, Vec::new()).await;
    }

    async fn hover(&self, params: HoverParams) -> Option<Hover> {
        let at = params.text_document_position_params;
        let documents = self.documents();
        let text = documents.get(&at.text_document.uri)?;
        let cursor = offset(text, at.position);
        let (start, end) = (word_start(text, cursor), word_end(text, cursor));
        let word = text.get(start..end).filter(|word| !word.is_empty())?;
        let count = words(text).filter(|other| *other == word).count();
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: format!("`{word}`: {count} occurrence(s)"),
            }),
            range: Some(Range::new(position(text, start), position(text, end))),
        })
    }

    async fn completion(&self, params: CompletionParams) -> Vec<CompletionItem> {
        let at = params.text_document_position;
        let documents = self.documents();
        let Some(text) = documents.get(&at.text_document.uri) else { return Vec::new() };
        let cursor = offset(text, at.position);
        let prefix = &text[word_start(text, cursor)..cursor];
        let found: BTreeSet<&str> = words(text).filter(|word| word.starts_with(prefix) && *word != prefix).collect();
        found
            .into_iter()
            .map(|word| CompletionItem {
                label: word.to_owned(),
                kind: Some(CompletionItemKind::TEXT),
                ..CompletionItem::default()
            })
            .collect()
    }

    async fn execute_command(&self, params: ExecuteCommandParams, cx: Context) -> Result<LSPAny, ErrorObject> {
        if params.command != COUNT_WORDS {
            return Err(ErrorObject::invalid_params(format!("unknown command `{}`", params.command)));
        }
        let uri = params.arguments.first().and_then(LSPAny::as_str).unwrap_or_default();
        let text = uri.parse::<Uri>().ok().and_then(|uri| self.documents().get(&uri).cloned());
        let text = text.ok_or_else(|| ErrorObject::invalid_params(format!("unknown document `{uri}`")))?;

        // A request to the editor, answered before we go on.
        let editor = editor(&cx)?;
        let section = ConfigurationItem { scope_uri: None, section: Some("languageServer".to_owned()) };
        let settings = editor.configuration(ConfigurationParams { items: vec![section] }).await;
        let settings =
            settings.map_err(|err| ErrorObject::internal_error(format!("asking the editor failed: {err}")))?;
        let delay = settings.first().and_then(|settings| settings.get("delayMs")?.as_u64()).unwrap_or(50);

        // Progress, if the editor shows it and accepts our token.
        let mut token = None;
        if self.work_done_progress.load(Ordering::Relaxed) {
            let name = format!("countWords-{}", self.tokens.fetch_add(1, Ordering::Relaxed) + 1);
            let create = WorkDoneProgressCreateParams { token: NumberOrString::String(name) };
            if editor.create_work_done_progress(create.clone()).await.is_ok() {
                let begin = WorkDoneProgressBegin { title: "Counting words".to_owned(), ..Default::default() };
                report(&editor, &create.token, WorkDoneProgress::Begin(begin)).await;
                token = Some(create.token);
            }
        }

        let lines: Vec<&str> = text.lines().collect();
        let mut total = 0;
        for (done, line) in (1..).zip(&lines) {
            // Cancellation is cooperative: stop at once when it comes.
            tokio::select! {
                () = cx.cancelled() => break,
                () = tokio::time::sleep(Duration::from_millis(delay)) => {}
            }
            total += words(line).count();
            if let Some(token) = &token {
                let message = Some(format!("line {done}/{}", lines.len()));
                let line = WorkDoneProgressReport {
                    message,
                    percentage: Some(done * 100 / lines.len() as u32),
                    ..Default::default()
                };
                report(&editor, token, WorkDoneProgress::Report(line)).await;
            }
        }
        if let Some(token) = &token {
            report(&editor, token, WorkDoneProgress::End(WorkDoneProgressEnd { message: None })).await;
        }
        if cx.is_cancelled() {
            // What LSP cancellation answers in any case.
            return Err(ErrorObject::new(REQUEST_CANCELLED, "Request cancelled"));
        }
        Ok(total.into())
    }
}

/// A word: a maximal run of alphanumeric characters and `_`.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of `text`, in order, repeats included.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c)).filter(|word| !word.is_empty())
}

/// Where the word that ends at byte `at` starts (`at` if none does).
fn word_start(text: &str, at: usize) -> usize {
    text[..at].char_indices().rev().take_while(|&(_, c)| is_word_char(c)).last().map_or(at, |(start, _)| start)
}

/// Where the word that starts at byte `at` ends (`at` if none does).
fn word_end(text: &str, at: usize) -> usize {
    text[at..].find(|c: char| !is_word_char(c)).map_or(text.len(), |len| at + len)
}

/// The byte offset of an LSP position (a line, and a column in UTF-16 code
/// units). A column past the line's end means its end, as LSP says; a
/// line past the text's end, the text's end.
fn offset(text: &str, position: Position) -> usize {
    let mut start = 0;
    for _ in 0..position.line {
        match text[start..].find('\n') {
            Some(newline) => start += newline + 1,
            None => return text.len(),
        }
    }
    let line = text[start..].split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut units = 0;
    for (at, c) in line.char_indices() {
        if units >= position.character {
            return start + at;
        }
        units += c.len_utf16() as u32;
    }
    start + line.len()
}

/// The LSP position of byte offset `at` (which is on a character boundary).
fn position(text: &str, at: usize) -> Position {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let line = before.matches('\n').count() as u32;
    Position::new(line, before[line_start..].encode_utf16().count() as u32)
}

/// A warning on every `TODO` of `text`.
fn diagnostics(text: &str) -> Vec<Diagnostic> {
    text.match_indices("TODO")
        .map(|(at, _)| position(text, at))
        .map(|start| Diagnostic {
            range: Range::new(start, Position::new(start.line, start.character + 4)),
            severity: Some(DiagnosticSeverity::WARNING),
            source: Some("language_server".to_owned()),
            message: "TODO: unfinished work".to_owned(),
            ..Diagnostic::default()
        })
        .collect()
}

fn main() -> ExitCode {
    let _log = examples::init_logging();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let backend = Arc::new(Backend::default());
    let lifecycle = Arc::clone(&backend);
    let server = Server::new(Arc::clone(&backend).into_rpc())
        .framing(Framing::ContentLength)
        .cancellation(Cancellation::Lsp)
        // Editors send edits and requests without waiting. The calls that
        // wait behind an edit count as running, and past this limit a
        // request is refused and a notification dropped (an edit lost).
        .limits(Limits::default().max_concurrent_requests(1 << 16))
        .layer(FilterLayer::new(move |call| lifecycle.admit(call)));
    // Serves until `exit` (then answers what was read already) or the end
    // of stdin.
    let exit = Arc::clone(&backend);
    let served =
        runtime.block_on(server.serve(Stdio).with_graceful_shutdown(async move { exit.exit.notified().await }));
    // Stdin is read on a blocking thread that may wait for input forever:
    // do not wait for it.
    runtime.shutdown_background();
    match served {
        Err(err) => {
            tracing::error!(error = %err, "serving stdio failed");
            ExitCode::FAILURE
        }
        Ok(()) if *backend.phase() == Phase::ShuttingDown => ExitCode::SUCCESS,
        Ok(()) => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_code_units() {
        // `é` is 2 bytes and 1 unit; `😀` is 4 bytes and 2 units.
        let text = "aé😀b\r\nsecond";
        assert_eq!(offset(text, Position::new(0, 2)), 3);
        assert_eq!(offset(text, Position::new(0, 4)), 7);
        assert_eq!(offset(text, Position::new(0, 99)), 8);
        assert_eq!(offset(text, Position::new(1, 3)), 13);
        assert_eq!(offset(text, Position::new(5, 0)), text.len());
        for at in [0, 1, 3, 7, 8, 10, 13, text.len()] {
            assert_eq!(offset(text, position(text, at)), at);
        }
    }

    #[test]
    fn words_and_todos() {
        let text = "alpha_1 beta, alpha_1!\n  TODO é";
        assert_eq!(words(text).collect::<Vec<_>>(), ["alpha_1", "beta", "alpha_1", "TODO", "é"]);
        assert_eq!((word_start(text, 3), word_end(text, 3)), (0, 7));
        assert_eq!(diagnostics(text)[0].range, Range::new(Position::new(1, 2), Position::new(1, 6)));
    }
}
