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
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

// Every LSP param and result, by its name in the specification.
use rpc_runtime::lsp::lsp_types::*;
use rpc_runtime::lsp::{Client, LspServer};
use rpc_runtime::{rpc, Context, ErrorObject};

/// The one command the server runs.
const COUNT_WORDS: &str = "languageServer.countWords";

/// What the server answers (the editor calls these). LSP sends each
/// method's params as one object: `whole_params` hands it whole to the
/// method's one parameter, an `lsp-types` struct. `LspServer` takes care
/// of the rest of the lifecycle (`shutdown`, `exit`, refusing calls before
/// `initialize` and after `shutdown`).
#[rpc]
pub trait LanguageServer {
    /// Starts the session: answers what the server can do.
    #[rpc(whole_params)]
    fn initialize(&self, params: InitializeParams) -> InitializeResult;

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

/// The server's state: the open documents' text.
#[derive(Default)]
struct Backend {
    documents: Mutex<HashMap<Uri, String>>,
}

impl Backend {
    fn documents(&self) -> MutexGuard<'_, HashMap<Uri, String>> {
        self.documents.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sends `uri`'s diagnostics to the editor; a failure (it is gone) is
/// logged. Publishing only queues the notification: an edit usually ends
/// on the connection's reader, and the next call runs at once.
async fn publish(cx: &Context, uri: Uri, version: Option<i32>, diagnostics: Vec<Diagnostic>) {
    let Ok(editor) = Client::of(cx) else { return };
    if let Err(err) = editor.publish_diagnostics(uri, diagnostics, version).await {
        tracing::warn!(error = %err, "could not publish diagnostics");
    }
}

impl LanguageServer for Backend {
    fn initialize(&self, _params: InitializeParams) -> InitializeResult {
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
        // a hover sees this edit whatever the handler awaits first.
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
        let editor = Client::of(&cx)?;
        let section = ConfigurationItem { scope_uri: None, section: Some("languageServer".to_owned()) };
        let settings = editor.configuration(vec![section]).await;
        let settings =
            settings.map_err(|err| ErrorObject::internal_error(format!("asking the editor failed: {err}")))?;
        let delay = settings.first().and_then(|settings| settings.get("delayMs")?.as_u64()).unwrap_or(50);

        // Progress, if the editor shows it (`None` otherwise).
        let progress = editor.progress("Counting words").await;
        let lines: Vec<&str> = text.lines().collect();
        let mut total = 0;
        for (done, line) in (1..).zip(&lines) {
            // Cancellation is cooperative: stop at once when it comes.
            tokio::select! {
                () = cx.cancelled() => break,
                () = tokio::time::sleep(Duration::from_millis(delay)) => {}
            }
            total += words(line).count();
            if let Some(progress) = &progress {
                let message = format!("line {done}/{}", lines.len());
                progress.report(Some(message), Some(done * 100 / lines.len() as u32)).await;
            }
        }
        if let Some(progress) = progress {
            progress.end(None).await;
        }
        // Cancelled, the request is answered -32800 (`LspServer` does that
        // whatever this returns).
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
    let start = match position.line {
        0 => 0,
        n => text.match_indices('\n').nth(n as usize - 1).map_or(text.len(), |(newline, _)| newline + 1),
    };
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
    // Serves stdio until `exit` or the end of stdin; 0 after `shutdown`.
    LspServer::new(Backend::default().into_rpc()).run()
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
