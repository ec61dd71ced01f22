//! A notebook as a Model Context Protocol server: the trait below is the
//! whole definition of its tools (names, descriptions, argument and result
//! schemas, hints), its resources (each note is `notes://{id}`, listed by
//! title, read as Markdown; subscribers hear of changes), a prompt
//! (`summarize_note`) and the completion of its argument, served over
//! stdio the way MCP hosts launch servers. `clear_notes` asks the user to
//! confirm (elicitation), `suggest_title` asks the host's model (sampling),
//! and the calls' logs reach a client that asks for them.
//!
//! ```text
//! cargo build --release --example notes
//! target/release/examples/notes [--file notes.json] [--http ADDR [--oauth-issuer URL --audience URL]]
//! ```
//!
//! Notes live in memory, or in the JSON file given with `--file` (read at
//! start, written after every change). With `--http ADDR` it serves MCP's
//! Streamable HTTP there instead of stdio (printing `listening on
//! http://ADDR`), until Ctrl-C. Logs go to stderr (`RPC_LOG=debug`).
//!
//! Reading needs the permission `notes:read` and changing `notes:write`
//! (`#[rpc(requires = ...)]`). Over stdio, and over HTTP without OAuth,
//! the one local user holds both. With `--oauth-issuer URL --audience URL`
//! (Streamable HTTP only) the endpoint is an OAuth 2.1 resource server:
//! every request needs a JWT access token from that issuer for that
//! audience (the endpoint's URL, such as `http://127.0.0.1:8080/mcp`),
//! whose scopes are the permissions: an MCP host finds the issuer through
//! the endpoint's 401 and its metadata at
//! `/.well-known/oauth-protected-resource/mcp`, and sees only the tools
//! its token's scopes allow.
//! See the README's "MCP" section for registering it with an MCP host.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rpc_runtime::mcp::{Changes, Elicit, Elicitation, McpServer, PromptMessages, Resource, Sampling};
use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::transport::http::oauth::ResourceServer;
use rpc_runtime::transport::http::Http;
use rpc_runtime::Permissions;
use rpc_runtime::{rpc, Context, ErrorObject, RpcError};

/// A notebook: short notes with a title, a body and tags. Search before
/// adding, to avoid duplicates; note ids are stable.
#[rpc]
pub trait Notes {
    /// Adds a note and answers it, with the id it was given.
    #[rpc(requires = "notes:write", mcp(title = "Add a note", destructive = false, open_world = false))]
    fn add_note(&self, title: String, body: String, tags: Option<Vec<String>>) -> Note;

    /// Finds the notes whose title, body or tags contain `query`
    /// (case-insensitive), newest first.
    #[rpc(requires = "notes:read", mcp(title = "Search notes", read_only, open_world = false))]
    fn search(
        &self,
        /// Text to look for; empty finds every note.
        query: String,
        /// At most this many notes (default 20).
        limit: Option<u32>,
    ) -> Matches;

    /// Reads one note.
    #[rpc(requires = "notes:read", mcp(title = "Read a note", read_only, open_world = false))]
    fn get_note(&self, id: u64) -> Result<Note, NotesError>;

    /// Deletes a note.
    #[rpc(requires = "notes:write", mcp(title = "Delete a note", destructive, idempotent, open_world = false))]
    fn delete_note(&self, id: u64) -> Result<(), NotesError>;

    /// Rebuilds the search index, reporting progress note by note.
    #[rpc(
        requires = "notes:write",
        mcp(title = "Rebuild the index", destructive = false, idempotent, open_world = false)
    )]
    async fn reindex(&self, cx: Context) -> IndexReport;

    /// One note as Markdown: its title as a heading, then its body.
    #[rpc(
        requires = "notes:read",
        mcp(resource = "notes://{id}", mime_type = "text/markdown", name = "note", title = "A note")
    )]
    fn note(&self, id: u64) -> Result<String, NotesError>;

    /// Every note, by title.
    #[rpc(requires = "notes:read", mcp(resource_list))]
    fn list_notes(&self) -> Vec<Resource>;

    /// Asks the model for a short summary of one note.
    #[rpc(requires = "notes:read", mcp(prompt, title = "Summarize a note"))]
    fn summarize_note(
        &self,
        /// The note's id (`search` finds it).
        id: u64,
    ) -> Result<PromptMessages, NotesError>;

    /// The ids of notes that start with what was typed, for the
    /// `summarize_note` prompt.
    #[rpc(requires = "notes:read", mcp(complete(prompt = "summarize_note", argument = "id")))]
    fn complete_note_id(&self, value: String) -> Vec<String>;

    /// The same, for the `notes://{id}` template.
    #[rpc(requires = "notes:read", mcp(complete(resource = "notes://{id}", argument = "id")))]
    fn complete_note_uri(&self, value: String) -> Vec<String>;

    /// Deletes every note, once the user confirms; answers how many were
    /// deleted.
    #[rpc(requires = "notes:write", mcp(title = "Delete every note", destructive, idempotent, open_world = false))]
    async fn clear_notes(&self, cx: Context) -> Result<u64, ErrorObject>;

    /// Asks the host's model for a better title for a note; answers its
    /// suggestion (the note is not changed).
    #[rpc(requires = "notes:read", mcp(title = "Suggest a title", read_only))]
    async fn suggest_title(&self, id: u64, cx: Context) -> Result<String, ErrorObject>;
}

/// What `clear_notes` asks the user.
#[derive(Debug, Deserialize, Elicit)]
#[serde(crate = "rpc_runtime::serde")]
struct Confirm {
    /// Delete every note? This cannot be undone.
    confirm: bool,
}

/// One note.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Note {
    /// Its number, unique in this notebook.
    pub id: u64,
    /// A short title.
    pub title: String,
    /// The text.
    pub body: String,
    /// Labels to find it by.
    pub tags: Vec<String>,
}

/// What a search found.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Matches {
    /// The notes found, newest first.
    pub matches: Vec<Note>,
    /// How many notes matched in all (beyond `limit` too).
    pub total: u64,
}

/// What a rebuild of the index did.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct IndexReport {
    /// Notes indexed.
    pub notes: u64,
}

/// The notebook's errors.
#[derive(Debug, RpcError)]
pub enum NotesError {
    /// No note has this id.
    #[rpc(code = 1001, message = "No such note")]
    NotFound {
        /// The id asked for.
        id: u64,
    },
}

struct Notebook {
    notes: Mutex<BTreeMap<u64, Note>>,
    file: Option<PathBuf>,
    /// Tells subscribed clients what changed.
    changes: Changes,
}

impl Notebook {
    fn open(file: Option<PathBuf>) -> std::io::Result<Self> {
        let notes = match &file {
            Some(path) if path.exists() => {
                let list: Vec<Note> = rpc_runtime::serde_json::from_slice(&std::fs::read(path)?)?;
                list.into_iter().map(|note| (note.id, note)).collect()
            }
            _ => BTreeMap::new(),
        };
        Ok(Notebook { notes: Mutex::new(notes), file, changes: Changes::new() })
    }

    fn notes(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Note>> {
        self.notes.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes the notes to the file, if there is one.
    fn save(&self, notes: &BTreeMap<u64, Note>) {
        let Some(path) = &self.file else { return };
        let list: Vec<&Note> = notes.values().collect();
        let written = rpc_runtime::serde_json::to_vec_pretty(&list)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(path, bytes));
        if let Err(err) = written {
            tracing::error!(path = %path.display(), error = %err, "could not save the notes");
        }
    }
}

impl Notes for Notebook {
    fn add_note(&self, title: String, body: String, tags: Option<Vec<String>>) -> Note {
        let mut notes = self.notes();
        let id = notes.keys().next_back().map_or(1, |last| last + 1);
        let note = Note { id, title, body, tags: tags.unwrap_or_default() };
        notes.insert(id, note.clone());
        self.save(&notes);
        tracing::info!(id, "note added");
        self.changes.resources_list_changed();
        note
    }

    fn search(&self, query: String, limit: Option<u32>) -> Matches {
        let query = query.to_lowercase();
        let notes = self.notes();
        let found: Vec<&Note> = notes
            .values()
            .rev()
            .filter(|note| {
                note.title.to_lowercase().contains(&query)
                    || note.body.to_lowercase().contains(&query)
                    || note.tags.iter().any(|tag| tag.to_lowercase().contains(&query))
            })
            .collect();
        let limit = limit.unwrap_or(20) as usize;
        tracing::debug!(query, found = found.len(), "searched the notes");
        Matches { total: found.len() as u64, matches: found.into_iter().take(limit).cloned().collect() }
    }

    fn get_note(&self, id: u64) -> Result<Note, NotesError> {
        self.notes().get(&id).cloned().ok_or(NotesError::NotFound { id })
    }

    fn delete_note(&self, id: u64) -> Result<(), NotesError> {
        let mut notes = self.notes();
        notes.remove(&id).ok_or(NotesError::NotFound { id })?;
        self.save(&notes);
        tracing::info!(id, "note deleted");
        self.changes.resource_updated(format!("notes://{id}"));
        self.changes.resources_list_changed();
        Ok(())
    }

    async fn reindex(&self, cx: Context) -> IndexReport {
        let count = self.notes().len() as u64;
        let total = count.max(1) as f64;
        for done in 1..=count.max(1) {
            // Stands for real work on each note.
            tokio::time::sleep(Duration::from_millis(10)).await;
            if cx.is_cancelled() {
                break;
            }
            tracing::debug!(done, "indexed a note");
            cx.report_progress(done as f64, Some(total), Some("indexing")).await;
        }
        tracing::info!(notes = count, "index rebuilt");
        IndexReport { notes: count }
    }

    fn note(&self, id: u64) -> Result<String, NotesError> {
        let note = self.get_note(id)?;
        Ok(format!("# {}\n\n{}\n", note.title, note.body))
    }

    fn list_notes(&self) -> Vec<Resource> {
        let notes = self.notes();
        notes
            .values()
            .map(|note| {
                Resource::new(format!("notes://{}", note.id), format!("note-{}", note.id))
                    .title(note.title.clone())
                    .mime_type("text/markdown")
            })
            .collect()
    }

    fn summarize_note(&self, id: u64) -> Result<PromptMessages, NotesError> {
        let note = self.note(id)?;
        Ok(PromptMessages::new()
            .description(format!("Summarize note {id}"))
            .user("Summarize this note in one sentence:")
            .user(note))
    }

    fn complete_note_id(&self, value: String) -> Vec<String> {
        let notes = self.notes();
        notes.keys().map(u64::to_string).filter(|id| id.starts_with(value.trim())).collect()
    }

    fn complete_note_uri(&self, value: String) -> Vec<String> {
        self.complete_note_id(value)
    }

    async fn clear_notes(&self, cx: Context) -> Result<u64, ErrorObject> {
        // Asked first: in MCP 2026-07-28 the call runs again with the answer.
        let count = self.notes().len();
        let question = format!("Delete all {count} notes? This cannot be undone.");
        match cx.elicit::<Confirm>(question).await? {
            Elicitation::Accept(Confirm { confirm: true }) => {}
            answer => {
                tracing::info!(?answer, "clearing the notes was not confirmed");
                return Ok(0);
            }
        }
        let mut notes = self.notes();
        let deleted: Vec<u64> = notes.keys().copied().collect();
        notes.clear();
        self.save(&notes);
        drop(notes);
        tracing::warn!(deleted = deleted.len(), "every note deleted");
        for id in &deleted {
            self.changes.resource_updated(format!("notes://{id}"));
        }
        self.changes.resources_list_changed();
        Ok(deleted.len() as u64)
    }

    async fn suggest_title(&self, id: u64, cx: Context) -> Result<String, ErrorObject> {
        let note = self.get_note(id).map_err(ErrorObject::from)?;
        let request = Sampling::new(60)
            .system_prompt("You suggest short, specific titles for notes. Answer with the title alone.")
            .user(format!("Current title: {}\n\n{}", note.title, note.body))
            .temperature(0.3);
        let answer = cx.sample(request).await?;
        tracing::debug!(model = answer.model, "the host's model suggested a title");
        answer
            .text()
            .map(|text| text.trim().to_owned())
            .ok_or_else(|| ErrorObject::new(-32050, "The model answered without text"))
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Logs go to stderr, and a call's events to the client that asked.
    let _log = examples::init_mcp_logging();
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut http = None;
    let (mut issuer, mut audience) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--oauth-issuer" => match args.next() {
                Some(url) => issuer = Some(url),
                None => return usage("--oauth-issuer needs the authorization server's issuer URL"),
            },
            "--audience" => match args.next() {
                Some(url) => audience = Some(url),
                None => return usage("--audience needs this endpoint's URL, such as http://127.0.0.1:8080/mcp"),
            },
            "--file" => match args.next() {
                Some(path) => file = Some(PathBuf::from(path)),
                None => return usage("--file needs a path"),
            },
            "--http" => match args.next() {
                Some(addr) => http = Some(addr),
                None => return usage("--http needs an address such as 127.0.0.1:8080"),
            },
            other => return usage(&format!("unknown argument `{other}`")),
        }
    }
    let oauth = match (issuer, audience, &http) {
        (None, None, _) => None,
        (Some(issuer), Some(audience), Some(_)) => match ResourceServer::jwt(audience, issuer) {
            Ok(resource) => Some(resource.resource_name("Notes")),
            Err(err) => return usage(&err.to_string()),
        },
        (Some(_), Some(_), None) => return usage("--oauth-issuer protects Streamable HTTP: give --http ADDR too"),
        _ => return usage("--oauth-issuer and --audience go together"),
    };
    let notebook = match Notebook::open(file) {
        Ok(notebook) => notebook,
        Err(err) => {
            eprintln!("notes: cannot read the notes file: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let changes = notebook.changes.clone();
    let mcp = McpServer::new(notebook.into_rpc()).name("notes").title("Notes").changes(changes);
    let server = mcp.into_server();
    // Without OAuth the one local user may read and change.
    let server = match oauth {
        Some(_) => server,
        None => server.on_connect(|_, cx| Ok(cx.with_extension(Permissions::new(["notes:read", "notes:write"])))),
    };
    let served = match http {
        Some(addr) => serve_http(server, &addr, oauth).await,
        None => server.serve(rpc_runtime::transport::stdio::Stdio).await,
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("notes: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// MCP's Streamable HTTP on `addr` until Ctrl-C, protected by `oauth`
/// when given.
async fn serve_http(server: rpc_runtime::Server, addr: &str, oauth: Option<ResourceServer>) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let http = match oauth {
        Some(resource) => Http::default().oauth(resource),
        None => Http::default(),
    };
    let listener = rpc_runtime::mcp::McpHttp::default().http(http).listener(listener);
    server.serve(listener).with_graceful_shutdown(stop).await
}

fn usage(problem: &str) -> std::process::ExitCode {
    eprintln!("notes: {problem}\nusage: notes [--file notes.json] [--http ADDR [--oauth-issuer URL --audience URL]]");
    std::process::ExitCode::from(2)
}
