//! MCP and per-method permissions (`#[rpc(requires(...))]`): every list
//! shows a caller only what it may call (tools, fixed resources, listed
//! resources, templates, prompts), a refused call is a protocol error
//! (-32003) rather than a tool result, and over Streamable HTTP with OAuth
//! the refusal is a 403 `insufficient_scope` in both eras, even when the
//! session has its calls answered as event streams.

use crate::web_support;

use std::net::SocketAddr;

use rpc_runtime::dispatch::Permissions;
use rpc_runtime::mcp::{Changes, McpHttp, McpServer, Resource};
use rpc_runtime::transport::http::oauth::{Grant, InvalidToken, ResourceServer};
use rpc_runtime::transport::http::Http;
use rpc_runtime::wire::PERMISSION_DENIED;
use rpc_runtime::{rpc, Peer, Server};
use serde_json::{json, Value};
use web_support::{exchange, listener, post_json};

/// An archive: reading needs `read`, writing `write`, the vault `secret`.
#[rpc]
pub trait Archive {
    /// Says hello; anyone may.
    fn hello(&self) -> String;

    /// Looks at the archive.
    #[rpc(requires = "read")]
    fn look(&self) -> String;

    /// Stores a text; answers its number.
    #[rpc(requires = "write")]
    fn store(&self, text: String) -> u64;

    /// The index.
    #[rpc(requires = "read", mcp(resource = "archive://index"))]
    fn index(&self) -> String;

    /// A vault entry.
    #[rpc(requires = "secret", mcp(resource = "archive://vault/{id}"))]
    fn vault(&self, id: u64) -> String;

    /// The entries.
    #[rpc(requires = "read", mcp(resource_list))]
    fn entries(&self) -> Vec<Resource>;

    /// Drafts a text.
    #[rpc(requires = "write", mcp(prompt))]
    fn draft(&self, topic: String) -> String;

    /// Greets.
    #[rpc(mcp(prompt))]
    fn greet(&self, name: String) -> String;
}

struct Shelf;

impl Archive for Shelf {
    fn hello(&self) -> String {
        "hello".into()
    }
    fn look(&self) -> String {
        "dusty".into()
    }
    fn store(&self, text: String) -> u64 {
        text.len() as u64
    }
    fn index(&self) -> String {
        "1. letters".into()
    }
    fn vault(&self, id: u64) -> String {
        format!("secret {id}")
    }
    fn entries(&self) -> Vec<Resource> {
        vec![Resource::new("archive://entries/1", "letters")]
    }
    fn draft(&self, topic: String) -> String {
        format!("Draft about {topic}")
    }
    fn greet(&self, name: String) -> String {
        format!("Hello {name}")
    }
}

fn server() -> Server {
    McpServer::new(Shelf.into_rpc()).name("archive").changes(Changes::new()).into_server()
}

/// A session of a caller holding `permissions`, initialized.
async fn session(permissions: &'static [&'static str]) -> Peer {
    let server = server().on_connect(move |_, cx| Ok(cx.with_extension(Permissions::new(permissions.iter().copied()))));
    let peer = Peer::builder().connect(server).await.unwrap();
    let _: Value = peer
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    peer.notify("notifications/initialized", json!({})).await.unwrap();
    peer
}

fn names(list: &Value, key: &str, member: &str) -> Vec<String> {
    let mut names: Vec<String> =
        list[key].as_array().unwrap().iter().map(|item| item[member].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn every_list_shows_only_what_the_caller_may_call() {
    let everything = session(&["read", "write", "secret"]).await;
    let reader = session(&["read"]).await;
    let nobody = session(&[]).await;

    let tools = |peer: Peer| async move {
        let list: Value = peer.call("tools/list", json!({})).await.unwrap();
        names(&list, "tools", "name")
    };
    assert_eq!(tools(everything.clone()).await, ["hello", "look", "store"]);
    assert_eq!(tools(reader.clone()).await, ["hello", "look"]);
    assert_eq!(tools(nobody.clone()).await, ["hello"]);

    let resources = |peer: Peer| async move {
        let list: Value = peer.call("resources/list", json!({})).await.unwrap();
        names(&list, "resources", "uri")
    };
    assert_eq!(resources(everything.clone()).await, ["archive://entries/1", "archive://index"]);
    assert_eq!(resources(reader.clone()).await, ["archive://entries/1", "archive://index"]);
    assert!(resources(nobody.clone()).await.is_empty());

    let templates = |peer: Peer| async move {
        let list: Value = peer.call("resources/templates/list", json!({})).await.unwrap();
        names(&list, "resourceTemplates", "uriTemplate")
    };
    assert_eq!(templates(everything.clone()).await, ["archive://vault/{id}"]);
    assert!(templates(reader.clone()).await.is_empty());

    let prompts = |peer: Peer| async move {
        let list: Value = peer.call("prompts/list", json!({})).await.unwrap();
        names(&list, "prompts", "name")
    };
    assert_eq!(prompts(everything.clone()).await, ["draft", "greet"]);
    assert_eq!(prompts(reader.clone()).await, ["greet"]);
}

#[tokio::test]
async fn a_refused_call_is_a_permission_error_not_a_tool_result() {
    let reader = session(&["read"]).await;
    let looked: Value = reader.call("tools/call", json!({"name": "look", "arguments": {}})).await.unwrap();
    assert!(looked["content"][0]["text"].as_str().unwrap().contains("dusty"), "{looked}");
    assert_eq!(looked.get("isError"), None);

    for (method, params) in [
        ("tools/call", json!({"name": "store", "arguments": {"text": "x"}})),
        ("resources/read", json!({"uri": "archive://vault/7"})),
        ("prompts/get", json!({"name": "draft", "arguments": {"topic": "t"}})),
    ] {
        let err = reader.call::<Value, _>(method, params).await.unwrap_err();
        let err = err.server_error().unwrap_or_else(|| panic!("{method}: {err}"));
        assert_eq!(err.code(), PERMISSION_DENIED, "{method}: {err:?}");
    }
}

#[tokio::test]
async fn a_caller_may_only_subscribe_to_what_it_may_read() {
    let reader = session(&["read"]).await;
    let _: Value = reader.call("resources/subscribe", json!({"uri": "archive://index"})).await.unwrap();
    let err = reader.call::<Value, _>("resources/subscribe", json!({"uri": "archive://vault/1"})).await.unwrap_err();
    assert_eq!(err.server_error().map(|err| err.code()), Some(PERMISSION_DENIED), "{err}");
}

const ACCEPT_BOTH: &str = "Accept: application/json, text/event-stream";

/// The archive over Streamable HTTP, tokens `reader` (scope read) and
/// `writer` (read, write).
async fn serve_oauth() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let verifier = |token: &str| match token {
        "reader" => Ok(Grant::new(["read"]).subject("alice")),
        "writer" => Ok(Grant::new(["read", "write"]).subject("alice")),
        "mallory" => Ok(Grant::new(["read", "write"]).subject("mallory")),
        _ => Err(InvalidToken::new("unknown")),
    };
    let resource = ResourceServer::new("http://127.0.0.1/mcp", verifier).unwrap();
    let settings = McpHttp::default().http(Http::default().oauth(resource));
    let (listener, addr) = listener().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server().serve(settings.listener(listener)).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

#[tokio::test]
async fn over_streamable_http_a_missing_scope_is_403_insufficient_scope_in_both_eras() {
    let (addr, _stop) = serve_oauth().await;
    // A session that takes elicitation has its calls answered as event
    // streams: the refusal still comes as a 403 before any stream.
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let reply = exchange(addr, &post_json(addr, &initialize, &[ACCEPT_BOTH, "Authorization: Bearer reader"])).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").unwrap());
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    exchange(addr, &post_json(addr, initialized, &[&session, "Authorization: Bearer reader"])).await;

    let store = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "store", "arguments": {"text": "x"}}})
    .to_string();
    let reply =
        exchange(addr, &post_json(addr, &store, &[ACCEPT_BOTH, &session, "Authorization: Bearer reader"])).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    let challenge = reply.header("www-authenticate").unwrap();
    assert!(challenge.starts_with(r#"Bearer error="insufficient_scope", scope="write""#), "{challenge}");
    assert_eq!(reply.json()["error"]["code"], PERMISSION_DENIED);

    let reply =
        exchange(addr, &post_json(addr, &store, &[ACCEPT_BOTH, &session, "Authorization: Bearer writer"])).await;
    assert_eq!(reply.status, 200, "{reply:?}");

    // 2026-07-28: no session; the same 403.
    let modern = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "store", "arguments": {"text": "x"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        ACCEPT_BOTH,
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: store",
        "Authorization: Bearer reader",
    ];
    let reply = exchange(addr, &post_json(addr, &modern, &headers)).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    assert!(reply.header("www-authenticate").unwrap().contains(r#"scope="write""#));

    // The metadata names the scopes of the user's methods.
    let metadata =
        exchange(addr, &format!("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n"))
            .await;
    assert_eq!(metadata.json()["scopes_supported"], json!(["read", "secret", "write"]));
}

#[tokio::test]
async fn a_session_opened_with_a_token_belongs_to_its_subject() {
    let (addr, _stop) = serve_oauth().await;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let reply = exchange(addr, &post_json(addr, &initialize, &[ACCEPT_BOTH, "Authorization: Bearer reader"])).await;
    let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").unwrap());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    // Another subject with the session's id: as if there were no such
    // session, for POST, GET and DELETE alike.
    let mallory = "Authorization: Bearer mallory";
    let reply = exchange(addr, &post_json(addr, ping, &[ACCEPT_BOTH, &session, mallory])).await;
    assert_eq!(reply.status, 404, "{reply:?}");
    let get = |token: &str| {
        format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{session}\r\nAuthorization: Bearer {token}\r\n\r\n")
    };
    assert_eq!(exchange(addr, &get("mallory")).await.status, 404);
    let delete = |token: &str| {
        format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}\r\nAuthorization: Bearer {token}\r\n\r\n")
    };
    assert_eq!(exchange(addr, &delete("mallory")).await.status, 404);

    // The same subject with another token of its own is served.
    let reply = exchange(addr, &post_json(addr, ping, &[ACCEPT_BOTH, &session, "Authorization: Bearer writer"])).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(exchange(addr, &delete("reader")).await.status, 204);
}
