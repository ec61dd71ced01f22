//! MCP beyond tools, in process and byte for byte: resources (fixed,
//! templates, listed by a method; text, binary and JSON contents),
//! prompts and completion, declared on one trait, in the handshake
//! revisions and in 2026-07-28.

use std::collections::HashMap;

use rpc_runtime::mcp::{Completion, Contents, McpServer, PromptMessages, Resource, RESOURCE_NOT_FOUND};
use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::{Deserialize, Serialize};
use rpc_runtime::{rpc, Peer, RpcError};
use serde_json::{json, Value};

/// A small library.
#[rpc]
pub trait Library {
    /// Adds a book; answers its id.
    fn add_book(&self, title: String) -> u64;

    /// The library's rules.
    #[rpc(mcp(resource = "library://rules", mime_type = "text/plain", title = "House rules"))]
    fn rules(&self) -> String;

    /// One book, as Markdown.
    #[rpc(mcp(resource = "library://books/{id}", mime_type = "text/markdown", name = "book", title = "A book"))]
    fn book(&self, id: u64) -> Result<String, LibraryError>;

    /// A file on a shelf: its text and its cover.
    #[rpc(mcp(resource = "library://shelf/{+path}"))]
    fn shelf(&self, path: String) -> Contents;

    /// Counts, as JSON.
    #[rpc(mcp(resource = "library://stats"))]
    fn stats(&self) -> Stats;

    /// Every book.
    #[rpc(mcp(resource_list))]
    async fn books(&self) -> Vec<Resource>;

    /// Asks for a review of a book.
    #[rpc(mcp(prompt, title = "Review a book"))]
    fn review(
        &self,
        /// The book's id.
        id: u64,
        /// How the review should sound.
        tone: Option<String>,
    ) -> Result<PromptMessages, LibraryError>;

    /// Greets a reader.
    #[rpc(mcp(prompt))]
    fn greet(&self, name: String) -> String;

    /// Book ids that start with what was typed.
    #[rpc(mcp(complete(prompt = "review", argument = "id")))]
    fn complete_review_id(&self, value: String) -> Vec<String>;

    /// Book ids for the book template, knowing the other arguments.
    #[rpc(mcp(complete(resource = "library://books/{id}", argument = "id")))]
    async fn complete_book_id(&self, value: String, arguments: HashMap<String, String>) -> Completion;
}

/// Counts.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Stats {
    /// Books held.
    pub books: u64,
}

/// The library's errors.
#[derive(Debug, RpcError)]
pub enum LibraryError {
    /// No book has this id.
    #[rpc(code = 1001, message = "No such book")]
    NoSuchBook,
}

struct Shelves;

const TITLES: [&str; 3] = ["Dune", "Emma", "Ulysses"];

impl Library for Shelves {
    fn add_book(&self, _title: String) -> u64 {
        4
    }

    fn rules(&self) -> String {
        "Be quiet.".into()
    }

    fn book(&self, id: u64) -> Result<String, LibraryError> {
        let title = TITLES.get((id as usize).wrapping_sub(1)).ok_or(LibraryError::NoSuchBook)?;
        Ok(format!("# {title}"))
    }

    fn shelf(&self, path: String) -> Contents {
        Contents::text(format!("on the shelf: {path}"))
            .and(Contents::blob([1u8, 2, 3]).mime_type("image/png").uri("library://covers/1"))
    }

    fn stats(&self) -> Stats {
        Stats { books: TITLES.len() as u64 }
    }

    async fn books(&self) -> Vec<Resource> {
        (1..=TITLES.len())
            .map(|id| Resource::new(format!("library://books/{id}"), format!("book-{id}")).title(TITLES[id - 1]))
            .collect()
    }

    fn review(&self, id: u64, tone: Option<String>) -> Result<PromptMessages, LibraryError> {
        let text = self.book(id)?;
        let tone = tone.unwrap_or_else(|| "kind".into());
        Ok(PromptMessages::new()
            .description(format!("A {tone} review"))
            .user(format!("Review this book, in a {tone} tone:"))
            .user_resource(&format!("library://books/{id}"), Contents::text(text).mime_type("text/markdown")))
    }

    fn greet(&self, name: String) -> String {
        format!("Say hello to {name}.")
    }

    fn complete_review_id(&self, value: String) -> Vec<String> {
        (1..=150).map(|n| n.to_string()).filter(|id| id.starts_with(&value)).collect()
    }

    async fn complete_book_id(&self, value: String, arguments: HashMap<String, String>) -> Completion {
        let values = (1..=TITLES.len()).map(|n| n.to_string()).filter(|id| id.starts_with(&value)).collect();
        Completion::new(values).total(arguments.len() as u64)
    }
}

/// A client of the library's MCP server, in one era.
struct Client {
    peer: Peer,
    /// `Some(_meta)` for 2026-07-28 requests.
    meta: Option<Value>,
}

impl Client {
    async fn legacy(version: &str) -> Client {
        let peer = Peer::builder().connect(McpServer::new(Shelves.into_rpc()).into_server()).await.expect("connect");
        let client =
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let init: Value = peer.call("initialize", client).await.expect("initialize");
        assert_eq!(init["protocolVersion"], version);
        peer.notify("notifications/initialized", json!({})).await.expect("initialized");
        Client { peer, meta: None }
    }

    async fn modern() -> Client {
        let peer = Peer::builder().connect(McpServer::new(Shelves.into_rpc()).into_server()).await.expect("connect");
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        Client { peer, meta: Some(meta) }
    }

    /// The result of `method` with `params`, or the error as `Err(code, message)`.
    async fn call(&self, method: &str, mut params: Value) -> Result<Value, (i64, String)> {
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        self.peer.call::<_, Value>(method, params).await.map_err(|err| match err {
            rpc_runtime::ClientError::Server(error) => (error.code(), error.message().to_owned()),
            other => panic!("{method}: {other}"),
        })
    }

    async fn ok(&self, method: &str, params: Value) -> Value {
        self.call(method, params).await.unwrap_or_else(|err| panic!("{method}: {err:?}"))
    }
}

fn names(list: &Value, key: &str, member: &str) -> Vec<String> {
    list[key].as_array().unwrap().iter().map(|item| item[member].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn capabilities_say_what_the_trait_declares_and_tools_are_only_tools() {
    let client = Client::legacy("2025-11-25").await;
    let init: Value = Peer::builder()
        .connect(McpServer::new(Shelves.into_rpc()).into_server())
        .await
        .unwrap()
        .call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        init["capabilities"],
        json!({"tools": {"listChanged": false}, "resources": {"subscribe": false, "listChanged": false},
               "prompts": {"listChanged": false}, "completions": {}})
    );
    let tools = client.ok("tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["add_book"]);

    // 2024-11-05 has no `completions` capability (the method exists).
    let old: Value = Peer::builder()
        .connect(McpServer::new(Shelves.into_rpc()).into_server())
        .await
        .unwrap()
        .call(
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    assert!(old["capabilities"].get("completions").is_none(), "{old}");

    let modern = Client::modern().await;
    let discover = modern.ok("server/discover", json!({})).await;
    assert_eq!(discover["capabilities"], json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}}));
}

#[tokio::test]
async fn resources_are_listed_with_templates_and_what_list_methods_answer() {
    let client = Client::legacy("2025-11-25").await;
    let list = client.ok("resources/list", json!({})).await;
    assert_eq!(
        names(&list, "resources", "uri"),
        ["library://rules", "library://stats", "library://books/1", "library://books/2", "library://books/3"]
    );
    let rules = &list["resources"][0];
    assert_eq!(
        rules,
        &json!({"uri": "library://rules", "name": "rules", "title": "House rules",
                "description": "The library's rules.", "mimeType": "text/plain"})
    );
    assert_eq!(list["resources"][2]["title"], "Dune");
    assert!(list.get("nextCursor").is_none() && list.get("ttlMs").is_none(), "{list}");

    let templates = client.ok("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"],
        json!([
            {"uriTemplate": "library://books/{id}", "name": "book", "title": "A book",
             "description": "One book, as Markdown.", "mimeType": "text/markdown"},
            {"uriTemplate": "library://shelf/{+path}", "name": "shelf",
             "description": "A file on a shelf: its text and its cover."},
        ])
    );

    // Before 2025-06-18 nothing has a title.
    let old = Client::legacy("2025-03-26").await;
    let list = old.ok("resources/list", json!({})).await;
    assert!(list["resources"].as_array().unwrap().iter().all(|r| r.get("title").is_none()), "{list}");
}

#[tokio::test]
async fn resources_are_listed_page_by_page() {
    let peer = Peer::builder().connect(McpServer::new(Shelves.into_rpc()).page_size(2).into_server()).await.unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut uris = Vec::new();
    let mut cursor = Value::Null;
    for _ in 0..5 {
        let mut params = json!({"_meta": meta});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        let page: Value = peer.call("resources/list", params).await.unwrap();
        assert_eq!((page["ttlMs"].as_u64(), page["cacheScope"].as_str()), (Some(0), Some("private")));
        assert_eq!(page["resultType"], "complete");
        uris.extend(names(&page, "resources", "uri"));
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(uris.len(), 5, "{uris:?}");
    let junk: Result<Value, _> = peer.call("resources/list", json!({"_meta": meta, "cursor": "nope"})).await;
    assert!(junk.is_err());
}

#[tokio::test]
async fn reading_a_resource_runs_its_method_with_the_variables_as_params() {
    for client in [Client::legacy("2025-11-25").await, Client::modern().await] {
        let modern = client.meta.is_some();
        let book = client.ok("resources/read", json!({"uri": "library://books/2"})).await;
        assert_eq!(
            book["contents"],
            json!([{"uri": "library://books/2", "mimeType": "text/markdown", "text": "# Emma"}])
        );
        assert_eq!(book.get("ttlMs").is_some(), modern, "{book}");
        assert_eq!(book.get("resultType").is_some(), modern, "{book}");

        let shelf = client.ok("resources/read", json!({"uri": "library://shelf/a/b%20c.txt"})).await;
        assert_eq!(
            shelf["contents"],
            json!([
                {"uri": "library://shelf/a/b%20c.txt", "text": "on the shelf: a/b c.txt"},
                {"uri": "library://covers/1", "mimeType": "image/png", "blob": "AQID"},
            ])
        );

        let stats = client.ok("resources/read", json!({"uri": "library://stats"})).await;
        assert_eq!(
            stats["contents"],
            json!([{"uri": "library://stats", "mimeType": "application/json", "text": "{\"books\":3}"}])
        );

        // The method's own error is the answer's.
        let (code, message) = client.call("resources/read", json!({"uri": "library://books/9"})).await.unwrap_err();
        assert_eq!((code, message.as_str()), (1001, "No such book"));

        // A variable that is not a number for a number parameter: the
        // decoding error names the parameter.
        let (code, message) = client.call("resources/read", json!({"uri": "library://books/x"})).await.unwrap_err();
        assert_eq!(code, -32602);
        assert!(message.contains("id"), "{message}");

        // No resource: -32002 in the handshake era, -32602 in 2026-07-28.
        let (code, message) = client.call("resources/read", json!({"uri": "library://nothing"})).await.unwrap_err();
        assert_eq!(code, if modern { -32602 } else { RESOURCE_NOT_FOUND });
        assert!(message.contains("library://nothing"), "{message}");
        let (code, _) = client.call("resources/read", json!({})).await.unwrap_err();
        assert_eq!(code, -32602);
    }
}

#[tokio::test]
async fn prompts_list_their_arguments_and_get_runs_the_method() {
    for client in [Client::legacy("2025-11-25").await, Client::modern().await] {
        let modern = client.meta.is_some();
        let list = client.ok("prompts/list", json!({})).await;
        assert_eq!(
            list["prompts"][0],
            json!({"name": "review", "title": "Review a book", "description": "Asks for a review of a book.",
                   "arguments": [
                       {"name": "id", "description": "The book's id.", "required": true},
                       {"name": "tone", "description": "How the review should sound.", "required": false}]})
        );
        assert_eq!(list["prompts"][1]["name"], "greet");
        assert_eq!(list.get("cacheScope").is_some(), modern, "{list}");

        let review = client.ok("prompts/get", json!({"name": "review", "arguments": {"id": "1"}})).await;
        assert_eq!(review["description"], "A kind review");
        assert_eq!(
            review["messages"],
            json!([
                {"role": "user", "content": {"type": "text", "text": "Review this book, in a kind tone:"}},
                {"role": "user", "content": {"type": "resource", "resource":
                    {"uri": "library://books/1", "mimeType": "text/markdown", "text": "# Dune"}}},
            ])
        );
        assert_eq!(review.get("resultType").is_some(), modern, "{review}");
        assert!(review.get("ttlMs").is_none(), "prompts/get is not cacheable: {review}");

        let greet = client.ok("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
        assert_eq!(
            greet["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}])
        );
        assert_eq!(greet["description"], "Greets a reader.");

        let (code, message) = client.call("prompts/get", json!({"name": "review"})).await.unwrap_err();
        assert_eq!(code, -32602);
        assert!(message.contains("`review` needs the argument(s): id"), "{message}");
        let (code, message) =
            client.call("prompts/get", json!({"name": "review", "arguments": {"id": 1}})).await.unwrap_err();
        assert_eq!(code, -32602);
        assert!(message.contains("`id` must be a string"), "{message}");
        let (code, message) = client.call("prompts/get", json!({"name": "nope"})).await.unwrap_err();
        assert_eq!(code, -32602);
        assert!(message.contains("unknown prompt `nope`"), "{message}");
        let (code, message) =
            client.call("prompts/get", json!({"name": "review", "arguments": {"id": "7"}})).await.unwrap_err();
        assert_eq!((code, message.as_str()), (1001, "No such book"));
    }
}

#[tokio::test]
async fn completion_asks_the_arguments_method() {
    for client in [Client::legacy("2025-11-25").await, Client::modern().await] {
        let modern = client.meta.is_some();
        let review = json!({"type": "ref/prompt", "name": "review"});
        let found =
            client.ok("completion/complete", json!({"ref": review, "argument": {"name": "id", "value": "1"}})).await;
        // 1, 10-19, 100-150: 62 values, all sent.
        assert_eq!(found["completion"]["values"].as_array().unwrap().len(), 62);
        assert_eq!(
            (found["completion"]["total"].as_u64(), found["completion"]["hasMore"].as_bool()),
            (Some(62), Some(false))
        );
        assert_eq!(found.get("resultType").is_some(), modern, "{found}");

        let all =
            client.ok("completion/complete", json!({"ref": review, "argument": {"name": "id", "value": ""}})).await;
        assert_eq!(all["completion"]["values"].as_array().unwrap().len(), 100);
        assert_eq!(
            (all["completion"]["total"].as_u64(), all["completion"]["hasMore"].as_bool()),
            (Some(150), Some(true))
        );

        let book = json!({"type": "ref/resource", "uri": "library://books/{id}"});
        let found = client
            .ok(
                "completion/complete",
                json!({"ref": book, "argument": {"name": "id", "value": "2"}, "context": {"arguments": {"x": "y"}}}),
            )
            .await;
        assert_eq!(found["completion"], json!({"values": ["2"], "total": 1}));

        // An argument nothing completes: no values.
        let none =
            client.ok("completion/complete", json!({"ref": review, "argument": {"name": "tone", "value": "k"}})).await;
        assert_eq!(none["completion"]["values"], json!([]));

        let (code, _) = client
            .call(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "id", "value": ""}}),
            )
            .await
            .unwrap_err();
        assert_eq!(code, -32602);
        let (code, _) = client.call("completion/complete", json!({"ref": review})).await.unwrap_err();
        assert_eq!(code, -32602);
    }
}

/// A trait with tools only: no resource or prompt capability, empty
/// lists, and no `completion/complete` at all.
#[rpc]
pub trait OnlyTools {
    /// Adds.
    fn add(&self, a: i64, b: i64) -> i64;
}

struct Adder;

impl OnlyTools for Adder {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

#[tokio::test]
async fn a_server_of_tools_only_says_so() {
    let peer = Peer::builder().connect(McpServer::new(Adder.into_rpc()).into_server()).await.unwrap();
    let init: Value = peer
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(init["capabilities"], json!({"tools": {"listChanged": false}}));
    let resources: Value = peer.call("resources/list", json!({})).await.unwrap();
    assert_eq!(resources, json!({"resources": []}));
    let prompts: Value = peer.call("prompts/list", json!({})).await.unwrap();
    assert_eq!(prompts, json!({"prompts": []}));
    let complete: Result<Value, _> = peer
        .call(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        )
        .await;
    match complete {
        Err(rpc_runtime::ClientError::Server(error)) => assert_eq!(error.code(), -32601),
        other => panic!("{other:?}"),
    }
}
