//! The `language_server` example (`examples/examples/language_server.rs`,
//! contract in its docs) written with tower-lsp-server instead of `#[rpc]`,
//! for `lsp_load` and `lsp_compare.sh` to measure side by side: documents
//! with incremental UTF-16 edits, TODO diagnostics, hover, completion and the
//! `languageServer.countWords` command (configuration, progress,
//! cancellation). Speaks LSP over stdio; logs nothing.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Bounded, Client, LanguageServer, LspService, NotCancellable, OngoingProgress, Server};

const COUNT_WORDS: &str = "languageServer.countWords";

struct Document {
    text: String,
    version: i32,
}

struct Backend {
    client: Client,
    documents: DashMap<Uri, Document>,
    work_done_progress: AtomicBool,
    progress_tokens: AtomicU64,
    shut_down: Arc<AtomicBool>,
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let progress = params.capabilities.window.and_then(|window| window.work_done_progress);
        self.work_done_progress.store(progress == Some(true), Ordering::Relaxed);
        Ok(InitializeResult {
            server_info: Some(ServerInfo { name: "language_server".into(), version: None }),
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions::default()),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![COUNT_WORDS.into()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::Relaxed);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let TextDocumentItem { uri, text, version, .. } = params.text_document;
        let diagnostics = todo_diagnostics(&text);
        self.documents.insert(uri.clone(), Document { text, version });
        self.client.publish_diagnostics(uri, diagnostics, Some(version)).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let Some(mut document) = self.documents.get_mut(&uri) else { return };
        for change in params.content_changes {
            match change.range {
                Some(range) => {
                    let (start, end) = (offset(&document.text, range.start), offset(&document.text, range.end));
                    document.text.replace_range(start..end.max(start), &change.text);
                }
                None => document.text = change.text,
            }
        }
        document.version = params.text_document.version;
        let diagnostics = todo_diagnostics(&document.text);
        drop(document);
        self.client.publish_diagnostics(uri, diagnostics, Some(params.text_document.version)).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.documents.remove(&params.text_document.uri);
        self.client.publish_diagnostics(params.text_document.uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let TextDocumentPositionParams { text_document, position } = params.text_document_position_params;
        let Some(document) = self.documents.get(&text_document.uri) else { return Ok(None) };
        let Some((word, range)) = word_at(&document.text, position) else { return Ok(None) };
        let count = words(&document.text).filter(|w| *w == word).count();
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: format!("`{word}`: {count} occurrence(s)"),
            }),
            range: Some(range),
        }))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let TextDocumentPositionParams { text_document, position } = params.text_document_position;
        let Some(document) = self.documents.get(&text_document.uri) else { return Ok(None) };
        let at = offset(&document.text, position);
        let before = &document.text[..at];
        let prefix = &before[before.rfind(|c: char| !is_word_char(c)).map_or(0, |i| i + 1)..];
        let labels: BTreeSet<&str> = words(&document.text).filter(|w| w.starts_with(prefix) && *w != prefix).collect();
        let items = labels
            .into_iter()
            .map(|label| CompletionItem {
                label: label.into(),
                kind: Some(CompletionItemKind::TEXT),
                ..Default::default()
            })
            .collect();
        Ok(Some(CompletionResponse::Array(items)))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        if params.command != COUNT_WORDS {
            return Err(Error::invalid_params(format!("unknown command `{}`", params.command)));
        }
        let uri = params.arguments.first().and_then(Value::as_str).unwrap_or_default();
        let text = uri.parse().ok().and_then(|uri: Uri| self.documents.get(&uri).map(|d| d.text.clone()));
        let Some(text) = text else { return Err(Error::invalid_params(format!("unknown document `{uri}`"))) };
        let item = ConfigurationItem { scope_uri: None, section: Some("languageServer".into()) };
        let config = self.client.configuration(vec![item]).await?;
        let delay = config.first().and_then(|c| c.get("delayMs")).and_then(Value::as_u64).unwrap_or(50);
        let lines: Vec<&str> = text.lines().collect();
        let mut progress = None;
        if self.work_done_progress.load(Ordering::Relaxed) {
            let n = self.progress_tokens.fetch_add(1, Ordering::Relaxed) + 1;
            let token = NumberOrString::String(format!("countWords-{n}"));
            self.client.create_work_done_progress(token.clone()).await?;
            let begun = self.client.progress(token, "Counting words").with_percentage(0).begin().await;
            progress = Some(EndOnDrop(Some(begun)));
        }
        // A `$/cancelRequest` drops this future at its next `.await`; the
        // guard still ends the progress.
        let mut total = 0;
        for (i, line) in lines.iter().enumerate() {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            total += words(line).count();
            if let Some(EndOnDrop(Some(progress))) = &progress {
                let percentage = ((i + 1) * 100 / lines.len()) as u32;
                progress.report_with_message(format!("line {}/{}", i + 1, lines.len()), percentage).await;
            }
        }
        Ok(Some(total.into()))
    }
}

/// Sends the progress's `end` when dropped, finished or cancelled.
struct EndOnDrop(Option<OngoingProgress<Bounded, NotCancellable>>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(progress) = self.0.take() {
            tokio::spawn(progress.finish());
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c| !is_word_char(c)).filter(|w| !w.is_empty())
}

/// The byte offset of an LSP position (UTF-16 column), clamped to its line.
fn offset(text: &str, position: Position) -> usize {
    let line_start = match position.line {
        0 => 0,
        n => text.match_indices('\n').nth(n as usize - 1).map_or(text.len(), |(i, _)| i + 1),
    };
    let line = text[line_start..].split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_start + line.len()
}

/// The UTF-16 position of a byte offset.
fn position_of(text: &str, at: usize) -> Position {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() as u32;
    Position::new(line, text[line_start..at].encode_utf16().count() as u32)
}

/// The word at (or just before) `position`, and its range.
fn word_at(text: &str, position: Position) -> Option<(&str, Range)> {
    let at = offset(text, position);
    let start =
        text[..at].rfind(|c: char| !is_word_char(c)).map_or(0, |i| i + text[i..].chars().next().unwrap().len_utf8());
    let end = text[at..].find(|c: char| !is_word_char(c)).map_or(text.len(), |i| at + i);
    (start < end).then(|| (&text[start..end], Range::new(position_of(text, start), position_of(text, end))))
}

fn todo_diagnostics(text: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for (line_number, line) in text.split('\n').enumerate() {
        for (at, _) in line.match_indices("TODO") {
            let column = line[..at].encode_utf16().count() as u32;
            let range =
                Range::new(Position::new(line_number as u32, column), Position::new(line_number as u32, column + 4));
            diagnostics.push(Diagnostic {
                range,
                severity: Some(DiagnosticSeverity::WARNING),
                source: Some("language_server".into()),
                message: "TODO: unfinished work".into(),
                ..Default::default()
            });
        }
    }
    diagnostics
}

#[tokio::main]
async fn main() {
    let shut_down = Arc::new(AtomicBool::new(false));
    let (service, socket) = LspService::new(|client| Backend {
        client,
        documents: DashMap::new(),
        work_done_progress: AtomicBool::new(false),
        progress_tokens: AtomicU64::new(0),
        shut_down: shut_down.clone(),
    });
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
    std::process::exit(if shut_down.load(Ordering::Relaxed) { 0 } else { 1 });
}
