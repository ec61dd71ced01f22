//! A notebook as a Model Context Protocol server: the trait below is the
//! whole definition of its tools (names, descriptions, argument and result
//! schemas, hints), served over stdio the way MCP hosts launch servers.
//!
//! ```text
//! cargo build --release --example notes
//! target/release/examples/notes [--file notes.json] [--http ADDR]
//! ```
//!
//! Notes live in memory, or in the JSON file given with `--file` (read at
//! start, written after every change). With `--http ADDR` it serves MCP's
//! Streamable HTTP there instead of stdio (printing `listening on
//! http://ADDR`), until Ctrl-C. Logs go to stderr (`RPC_LOG=debug`).
//! See the README's "MCP" section for registering it with an MCP host.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{mcp::McpServer, rpc, Context, RpcError};

/// A notebook: short notes with a title, a body and tags. Search before
/// adding, to avoid duplicates; note ids are stable.
#[rpc]
pub trait Notes {
    /// Adds a note and answers it, with the id it was given.
    #[rpc(mcp(title = "Add a note", destructive = false, open_world = false))]
    fn add_note(&self, title: String, body: String, tags: Option<Vec<String>>) -> Note;

    /// Finds the notes whose title, body or tags contain `query`
    /// (case-insensitive), newest first.
    #[rpc(mcp(title = "Search notes", read_only, open_world = false))]
    fn search(
        &self,
        /// Text to look for; empty finds every note.
        query: String,
        /// At most this many notes (default 20).
        limit: Option<u32>,
    ) -> Matches;

    /// Reads one note.
    #[rpc(mcp(title = "Read a note", read_only, open_world = false))]
    fn get_note(&self, id: u64) -> Result<Note, NotesError>;

    /// Deletes a note.
    #[rpc(mcp(title = "Delete a note", destructive, idempotent, open_world = false))]
    fn delete_note(&self, id: u64) -> Result<(), NotesError>;

    /// Rebuilds the search index, reporting progress note by note.
    #[rpc(mcp(title = "Rebuild the index", destructive = false, idempotent, open_world = false))]
    async fn reindex(&self, cx: Context) -> IndexReport;
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
        Ok(Notebook { notes: Mutex::new(notes), file })
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
        Matches { total: found.len() as u64, matches: found.into_iter().take(limit).cloned().collect() }
    }

    fn get_note(&self, id: u64) -> Result<Note, NotesError> {
        self.notes().get(&id).cloned().ok_or(NotesError::NotFound { id })
    }

    fn delete_note(&self, id: u64) -> Result<(), NotesError> {
        let mut notes = self.notes();
        notes.remove(&id).ok_or(NotesError::NotFound { id })?;
        self.save(&notes);
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
            cx.report_progress(done as f64, Some(total), Some("indexing")).await;
        }
        IndexReport { notes: count }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let _log = examples::init_logging();
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut http = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
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
    let notebook = match Notebook::open(file) {
        Ok(notebook) => notebook,
        Err(err) => {
            eprintln!("notes: cannot read the notes file: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mcp = McpServer::new(notebook.into_rpc()).name("notes").title("Notes");
    let served = match http {
        Some(addr) => serve_http(mcp, &addr).await,
        None => mcp.into_server().serve(rpc_runtime::transport::stdio::Stdio).await,
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("notes: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// MCP's Streamable HTTP on `addr` until Ctrl-C.
async fn serve_http(mcp: McpServer, addr: &str) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let listener = rpc_runtime::mcp::McpHttp::default().listener(listener);
    mcp.into_server().serve(listener).with_graceful_shutdown(stop).await
}

fn usage(problem: &str) -> std::process::ExitCode {
    eprintln!("notes: {problem}\nusage: notes [--file notes.json] [--http ADDR]");
    std::process::ExitCode::from(2)
}
