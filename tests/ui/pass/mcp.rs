// `#[rpc(mcp(...))]` in every form it takes; the catalog records it.
use std::collections::HashMap;

use rpc_runtime::catalog::{CompletionTarget, McpKind, ToolInfo};
use rpc_runtime::rpc;

#[rpc]
pub trait Tools {
    #[rpc(mcp(title = "Add", read_only, idempotent = true, destructive = false, open_world = false))]
    fn add(&self, a: i64, b: i64) -> i64;

    #[rpc(mcp(hidden))]
    fn internal(&self);

    fn plain(&self);

    #[rpc(name = "items.list", mcp(name = "list_items"))]
    fn list(&self) -> Vec<u8>;
}

// Resources, prompts and completions, under a namespace: a prompt is
// named by its wire name (namespace included) unless `mcp(name)` says.
#[rpc(namespace = "notes")]
pub trait Notes {
    #[rpc(mcp(resource = "notes://{id}/{+path}", mime_type = "text/markdown", name = "note", title = "A note"))]
    fn read(&self, id: u64, #[rpc(name = "path")] file_path: String) -> String;

    #[rpc(mcp(resource = "notes://index"))]
    fn index(&self) -> String;

    #[rpc(mcp(resource_list))]
    fn all(&self, cx: rpc_runtime::Context) -> Vec<String>;

    #[rpc(mcp(prompt, title = "Review"))]
    fn review(&self, code: String, language: Option<String>) -> String;

    #[rpc(mcp(prompt, name = "summary"))]
    fn summarize(&self, id: u64) -> String;

    #[rpc(mcp(complete(prompt = "notes_review", argument = "language")))]
    fn languages(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(argument = "id", prompt = "summary")))]
    fn summary_ids(&self, value: String, arguments: HashMap<String, String>) -> Vec<String>;

    #[rpc(mcp(complete(resource = "notes://{id}/{+path}", argument = "path")))]
    fn paths(&self, value: String, arguments: HashMap<String, String>) -> Vec<String>;

    // A tool and a prompt may share a name: they are listed apart.
    #[rpc(mcp(name = "summary"))]
    fn summary_tool(&self, id: u64) -> String;
}

fn main() {
    let service = ToolsCatalog::service();
    let tool = |index: usize| service.methods[index].tool;
    let add = tool(0);
    assert!(!add.hidden);
    assert_eq!(add.kind, McpKind::Tool);
    assert_eq!((add.name, add.title), (None, Some("Add")));
    assert_eq!(
        (add.read_only, add.destructive, add.idempotent, add.open_world),
        (Some(true), Some(false), Some(true), Some(false))
    );
    assert!(tool(1).hidden);
    assert_eq!(tool(2), ToolInfo::DEFAULT);
    assert_eq!(tool(3).name, Some("list_items"));
    assert_eq!(service.methods[3].spec.name, "items.list");

    let notes = NotesCatalog::service();
    let tool = |index: usize| notes.methods[index].tool;
    let read = tool(0);
    assert_eq!(read.kind, McpKind::Resource { uri: "notes://{id}/{+path}", mime_type: Some("text/markdown") });
    assert_eq!((read.name, read.title), (Some("note"), Some("A note")));
    assert_eq!(tool(1).kind, McpKind::Resource { uri: "notes://index", mime_type: None });
    assert_eq!(tool(2).kind, McpKind::ResourceList);
    assert_eq!(tool(3).kind, McpKind::Prompt);
    assert_eq!(tool(3).title, Some("Review"));
    assert_eq!(notes.methods[3].spec.name, "notes_review");
    assert_eq!((tool(4).kind, tool(4).name), (McpKind::Prompt, Some("summary")));
    assert_eq!(
        tool(5).kind,
        McpKind::Complete { target: CompletionTarget::Prompt("notes_review"), argument: "language" }
    );
    assert_eq!(tool(6).kind, McpKind::Complete { target: CompletionTarget::Prompt("summary"), argument: "id" });
    assert_eq!(
        tool(7).kind,
        McpKind::Complete { target: CompletionTarget::Resource("notes://{id}/{+path}"), argument: "path" }
    );
    assert_eq!((tool(8).kind, tool(8).name), (McpKind::Tool, Some("summary")));
}
