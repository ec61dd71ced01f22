//! A small LSP-style pair over one connection, both ends in this process:
//! the language server pushes notifications to the editor and calls back
//! into it while answering a request; the editor drives the server through
//! the typed client `#[rpc]` generates.
//!
//! ```text
//! cargo run --example lsp_pair [-- --framing ndjson|content-length]
//! ```
//!
//! Prints, in order, what each side saw.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{rpc, Cancellation, ClientError, Context, ErrorObject, Framing, Peer, Server};

/// What the language server answers (the editor calls these).
#[rpc(rename_all = "camelCase")]
pub trait LanguageServer {
    /// Starts a session for the project at `root_uri`.
    async fn initialize(&self, root_uri: String, cx: Context) -> Result<ServerInfo, ErrorObject>;

    /// A document was opened; diagnostics are pushed back as a notification.
    ///
    /// A plain `fn`: it runs on the connection's reader, before the next
    /// message is read, so a hover sent after it sees the document (`async`
    /// methods run concurrently, in no particular order).
    #[rpc(notification, name = "textDocument/didOpen")]
    fn did_open(&self, uri: String, text: String, cx: Context);

    /// Hover text for `line` of `uri`, formatted as the editor's
    /// configuration asks (the server asks the editor for it).
    #[rpc(name = "textDocument/hover")]
    async fn hover(&self, uri: String, line: u32, cx: Context) -> Result<Option<String>, ErrorObject>;
}

/// What the editor answers (the language server calls these).
#[rpc]
pub trait LanguageClient {
    /// Shows a message in the editor's log.
    #[rpc(notification, name = "window/logMessage")]
    fn log_message(&self, kind: u8, message: String);

    /// Diagnostics for a document.
    #[rpc(notification, name = "textDocument/publishDiagnostics")]
    fn publish_diagnostics(&self, uri: String, diagnostics: Vec<String>);

    /// A configuration section of the editor.
    #[rpc(name = "workspace/configuration")]
    fn configuration(&self, section: String) -> Result<String, ErrorObject>;
}

/// The server's answer to `initialize`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct ServerInfo {
    /// The server's name.
    pub name: String,
    /// Whether it answers hovers.
    pub hover: bool,
}

/// The documents the server knows, shared by all requests.
#[derive(Default)]
struct Server_ {
    documents: Mutex<Vec<(String, String)>>,
}

/// The editor as the server sees it: the typed client over the connection
/// the request came in on.
fn editor(cx: &Context) -> Result<LanguageClientClient, ErrorObject> {
    let peer = cx.peer().ok_or_else(|| ErrorObject::internal_error("not on a connection"))?;
    Ok(LanguageClientClient::new(peer.clone()))
}

fn failed<E: std::fmt::Debug + std::fmt::Display>(err: ClientError<E>) -> ErrorObject {
    ErrorObject::internal_error(format!("calling the editor failed: {err}"))
}

impl LanguageServer for Arc<Server_> {
    async fn initialize(&self, root_uri: String, cx: Context) -> Result<ServerInfo, ErrorObject> {
        editor(&cx)?.log_message(3, format!("server: initializing {root_uri}")).await.map_err(failed)?;
        Ok(ServerInfo { name: "lsp_pair".to_owned(), hover: true })
    }

    fn did_open(&self, uri: String, text: String, cx: Context) {
        let diagnostics: Vec<String> = text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.contains("TODO"))
            .map(|(n, _)| format!("line {n}: unfinished work"))
            .collect();
        self.documents.lock().unwrap_or_else(|e| e.into_inner()).push((uri.clone(), text));
        // Pushing diagnostics waits on the writer: do it on its own task.
        if let Ok(editor) = editor(&cx) {
            tokio::spawn(async move {
                if let Err(err) = editor.publish_diagnostics(uri, diagnostics).await {
                    tracing::warn!(error = %err, "could not publish diagnostics");
                }
            });
        }
    }

    async fn hover(&self, uri: String, line: u32, cx: Context) -> Result<Option<String>, ErrorObject> {
        let text = {
            let documents = self.documents.lock().unwrap_or_else(|e| e.into_inner());
            documents.iter().find(|(known, _)| *known == uri).map(|(_, text)| text.clone())
        };
        let Some(line) = text.and_then(|text| text.lines().nth(line as usize).map(str::to_owned)) else {
            return Ok(None);
        };
        // A typed call back into the editor, answered before we answer.
        let style = editor(&cx)?.configuration("hover.style".to_owned()).await.map_err(failed)?;
        Ok(Some(match style.as_str() {
            "shout" => line.to_uppercase(),
            _ => line,
        }))
    }
}

/// The editor: records what the server pushed.
#[derive(Clone, Default)]
struct Editor {
    seen: Arc<AtomicUsize>,
    diagnostics: Arc<tokio::sync::Notify>,
}

impl Editor {
    fn record(&self, event: String) {
        println!("editor <- {event}");
        self.seen.fetch_add(1, Ordering::Relaxed);
    }
}

impl LanguageClient for Editor {
    fn log_message(&self, kind: u8, message: String) {
        self.record(format!("window/logMessage ({kind}) {message}"));
    }

    fn publish_diagnostics(&self, uri: String, diagnostics: Vec<String>) {
        self.record(format!("textDocument/publishDiagnostics {uri} {diagnostics:?}"));
        self.diagnostics.notify_one();
    }

    fn configuration(&self, section: String) -> Result<String, ErrorObject> {
        self.record(format!("workspace/configuration {section} -> \"shout\""));
        match section.as_str() {
            "hover.style" => Ok("shout".to_owned()),
            other => Err(ErrorObject::new(-32099, format!("no configuration section `{other}`"))),
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let _log = examples::init_logging();
    let framing = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => Ok(Framing::ContentLength),
        [flag, value] if flag == "--framing" => value.parse(),
        _ => Err("usage: lsp_pair [--framing ndjson|content-length]".to_owned()),
    };
    let ran = match framing {
        Ok(framing) => run(framing).await,
        Err(message) => {
            eprintln!("{message}");
            return std::process::ExitCode::from(2);
        }
    };
    if let Err(err) = ran {
        eprintln!("lsp_pair: {err}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

async fn run(framing: Framing) -> Result<(), Box<dyn std::error::Error>> {
    let editor = Editor::default();
    let server = Server::new(Arc::new(Server_::default()).into_rpc()).cancellation(Cancellation::Lsp);
    // The editor's end: serves `LanguageClient`, calls `LanguageServer`.
    let peer = Peer::builder()
        .framing(framing)
        .cancellation(Cancellation::Lsp)
        .router(editor.clone().into_rpc())
        .connect(server)
        .await?;
    let language = LanguageServerClient::new(peer);

    let info = language.initialize("file:///project".to_owned()).await?;
    println!("editor -> initialize: {info:?}");

    let uri = "file:///project/main.rs".to_owned();
    language.did_open(uri.clone(), "fn main() {\n    // TODO: greet\n}\n".to_owned()).await?;
    println!("editor -> textDocument/didOpen {uri}");

    let hover = language.hover(uri.clone(), 1).await?;
    println!("editor -> textDocument/hover: {hover:?}");

    // Two hovers in one JSON-RPC batch.
    let mut batch = language.batch();
    let first = batch.hover(uri.clone(), 0);
    let missing = batch.hover("file:///nowhere".to_owned(), 0);
    batch.send().await?;
    println!("editor -> batch: {:?} {:?}", first.await?, missing.await?);

    // The didOpen notification is handled on its own task; its diagnostics
    // come when they come. Wait for them before saying goodbye.
    editor.diagnostics.notified().await;
    println!("done: the editor saw {} messages from the server", editor.seen.load(Ordering::Relaxed));
    Ok(())
}
