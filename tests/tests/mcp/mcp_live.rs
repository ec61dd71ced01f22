//! MCP while a server runs, byte for byte over an in-process stdio-like
//! pipe: changes the application reports reach the clients that asked
//! (list changes, subscribed resources; `subscriptions/listen` in
//! 2026-07-28), and handlers ask the client for input mid-call
//! (elicitation, sampling) as each era defines it: server-to-client
//! requests in the handshake revisions, `input_required` rounds in
//! 2026-07-28.

use crate::common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{Conn, Wire};
use rpc_runtime::mcp::{Changes, Elicit, Elicitation, McpServer, Sampling};
use rpc_runtime::serde::Deserialize;
use rpc_runtime::{rpc, Context, ErrorObject};
use serde_json::{json, Value};

/// A desk of numbered pages.
#[rpc]
pub trait Desk {
    /// A page.
    #[rpc(mcp(resource = "desk://pages/{n}"))]
    fn page(&self, n: u64) -> String;

    /// Writes a page: its subscribers hear of it.
    fn write(&self, n: u64) -> bool;

    /// Adds a page: everyone hears the list changed.
    fn add(&self) -> u64;

    /// Hides (or shows again) a tool.
    fn toggle(&self, tool: String, hide: bool) -> bool;

    /// Clears the desk once the user confirms.
    async fn clear(&self, cx: Context) -> Result<String, ErrorObject>;

    /// Asks the host's model for a title.
    async fn title(&self, cx: Context) -> Result<String, ErrorObject>;

    /// Asks the user, then the model.
    async fn twice(&self, cx: Context) -> Result<String, ErrorObject>;
}

/// Whether to clear.
#[derive(Deserialize, Elicit)]
#[serde(crate = "rpc_runtime::serde")]
struct Confirm {
    /// Clear every page?
    confirm: bool,
}

/// Who is asking.
#[derive(Deserialize, Elicit)]
#[serde(crate = "rpc_runtime::serde")]
struct Name {
    /// Your name.
    name: String,
}

struct Pages {
    changes: Changes,
    count: AtomicU64,
}

impl Desk for Pages {
    fn page(&self, n: u64) -> String {
        format!("page {n}")
    }

    fn write(&self, n: u64) -> bool {
        self.changes.resource_updated(format!("desk://pages/{n}"));
        true
    }

    fn add(&self) -> u64 {
        self.changes.resources_list_changed();
        self.count.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn toggle(&self, tool: String, hide: bool) -> bool {
        if hide {
            self.changes.hide_tool(&tool)
        } else {
            self.changes.show_tool(&tool)
        }
    }

    async fn clear(&self, cx: Context) -> Result<String, ErrorObject> {
        Ok(match cx.elicit::<Confirm>("Clear the desk?").await? {
            Elicitation::Accept(Confirm { confirm: true }) => "cleared".into(),
            Elicitation::Accept(Confirm { confirm: false }) => "kept".into(),
            Elicitation::Decline => "declined".into(),
            Elicitation::Cancel => "cancelled".into(),
        })
    }

    async fn title(&self, cx: Context) -> Result<String, ErrorObject> {
        let answer = cx.sample(Sampling::new(50).system_prompt("You name pages.").user("Name page 1")).await?;
        Ok(format!("{} (by {})", answer.text().unwrap_or_default(), answer.model))
    }

    async fn twice(&self, cx: Context) -> Result<String, ErrorObject> {
        let name = match cx.elicit::<Name>("Who are you?").await? {
            Elicitation::Accept(Name { name }) => name,
            _ => return Ok("nobody".into()),
        };
        let answer = cx.sample(Sampling::new(50).user(format!("Greet {name}"))).await?;
        Ok(answer.text().unwrap_or_default())
    }
}

/// The client's end: messages read but not yet looked at wait in
/// `backlog`.
struct Client {
    conn: Conn,
    backlog: VecDeque<Value>,
}

impl Client {
    async fn send(&mut self, message: impl AsRef<[u8]>) {
        self.conn.send(message).await;
    }
}

fn serve(changes: Option<Changes>) -> Client {
    let pages = Pages { changes: changes.clone().unwrap_or_default(), count: AtomicU64::new(0) };
    let mut server = McpServer::new(pages.into_rpc()).name("desk");
    if let Some(changes) = changes {
        server = server.changes(changes);
    }
    let (conn, _task) = common::serve_in_process(server.into_server(), Wire::Ndjson);
    Client { conn, backlog: VecDeque::new() }
}

/// The next message (from the backlog first).
async fn recv(conn: &mut Client) -> Value {
    if let Some(next) = conn.backlog.pop_front() {
        return next;
    }
    let line = tokio::time::timeout(common::HANG_GUARD, conn.conn.recv()).await.expect("a message in time");
    serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

/// Sends `message`, then reads until the response with its id, returning
/// it and the messages read before it (which stay in the backlog too).
async fn exchange(conn: &mut Client, message: Value) -> (Value, Vec<Value>) {
    let id = message["id"].clone();
    conn.send(message.to_string()).await;
    let mut before = Vec::new();
    let mut kept = VecDeque::new();
    loop {
        let next = recv(conn).await;
        if next["id"] == id && next.get("method").is_none() {
            kept.extend(conn.backlog.drain(..));
            conn.backlog = kept;
            return (next, before);
        }
        before.push(next.clone());
        kept.push_back(next);
    }
}

async fn initialize(conn: &mut Client, version: &str, capabilities: Value) -> Value {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}});
    let (answer, _) = exchange(conn, init).await;
    conn.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;
    answer["result"].clone()
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

fn modern(mut message: Value, capabilities: Value) -> Value {
    message["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities});
    message
}

/// Reads until a notification of `method` (passing over others).
async fn notification(conn: &mut Client, method: &str) -> Value {
    loop {
        let next = recv(conn).await;
        if next["method"] == method && next.get("id").is_none() {
            return next;
        }
    }
}

#[tokio::test]
async fn sessions_hear_list_changes_and_the_updates_they_subscribed_to() {
    let mut conn = serve(Some(Changes::new()));
    let init = initialize(&mut conn, "2025-11-25", json!({})).await;
    assert_eq!(init["capabilities"]["resources"], json!({"subscribe": true, "listChanged": true}));
    assert_eq!(init["capabilities"]["tools"], json!({"listChanged": true}));

    for (id, uri) in [(1, "desk://pages/1"), (2, "desk://pages/3")] {
        let subscribe = json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}});
        assert_eq!(exchange(&mut conn, subscribe).await.0["result"], json!({}));
    }
    exchange(&mut conn, call(3, "write", json!({"n": 1}))).await;
    let updated = notification(&mut conn, "notifications/resources/updated").await;
    assert_eq!(updated["params"], json!({"uri": "desk://pages/1"}));

    // Not subscribed to page 2: the next update heard is page 3's.
    exchange(&mut conn, call(4, "write", json!({"n": 2}))).await;
    exchange(&mut conn, call(5, "write", json!({"n": 3}))).await;
    let updated = notification(&mut conn, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "desk://pages/3");

    let unsubscribe =
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/unsubscribe", "params": {"uri": "desk://pages/1"}});
    exchange(&mut conn, unsubscribe).await;
    exchange(&mut conn, call(7, "write", json!({"n": 1}))).await;
    exchange(&mut conn, call(8, "add", json!({}))).await;
    let next = notification_any(&mut conn).await;
    assert_eq!(next["method"], "notifications/resources/list_changed", "no update of page 1 any more: {next}");

    // A tool hidden: everyone hears the list changed, and it is gone.
    exchange(&mut conn, call(9, "toggle", json!({"tool": "clear", "hide": true}))).await;
    notification(&mut conn, "notifications/tools/list_changed").await;
    let (list, _) = exchange(&mut conn, json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})).await;
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"clear") && names.contains(&"title"), "{names:?}");
    let (answer, _) = exchange(&mut conn, call(11, "clear", json!({}))).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    exchange(&mut conn, call(12, "toggle", json!({"tool": "clear", "hide": false}))).await;
    notification(&mut conn, "notifications/tools/list_changed").await;
}

/// The next notification.
async fn notification_any(conn: &mut Client) -> Value {
    loop {
        let next = recv(conn).await;
        if next.get("id").is_none() {
            return next;
        }
    }
}

#[tokio::test]
async fn a_server_without_changes_has_nothing_to_subscribe_to() {
    let mut conn = serve(None);
    let init = initialize(&mut conn, "2025-11-25", json!({})).await;
    assert_eq!(init["capabilities"]["resources"], json!({"subscribe": false, "listChanged": false}));
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "desk://pages/1"}});
    assert_eq!(exchange(&mut conn, subscribe).await.0["error"]["code"], -32601);

    // 2026-07-28: the listen is acknowledged with nothing honored.
    let listen = json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true}}});
    conn.send(modern(listen, json!({})).to_string()).await;
    let ack = recv(&mut conn).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"], json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "l"}, "notifications": {}}));
}

#[tokio::test]
async fn listen_acknowledges_what_it_honors_then_sends_it_stamped() {
    let mut conn = serve(Some(Changes::new()));
    let listen = json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true, "promptsListChanged": true,
                          "resourceSubscriptions": ["desk://pages/1", "other://x"]}}});
    conn.send(modern(listen, json!({})).to_string()).await;
    let ack = recv(&mut conn).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "the ack comes first: {ack}");
    assert_eq!(
        ack["params"],
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
               "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["desk://pages/1"]}})
    );

    let (answer, _) = exchange(&mut conn, modern(call(2, "write", json!({"n": 1})), json!({}))).await;
    assert_eq!(answer["result"]["resultType"], "complete");
    let updated = notification(&mut conn, "notifications/resources/updated").await;
    assert_eq!(
        updated["params"],
        json!({"uri": "desk://pages/1", "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}})
    );
    // Resource list changes were not asked for; tool changes were.
    exchange(&mut conn, modern(call(3, "add", json!({})), json!({}))).await;
    exchange(&mut conn, modern(call(4, "toggle", json!({"tool": "add", "hide": true})), json!({}))).await;
    let next = notification_any(&mut conn).await;
    assert_eq!(next["method"], "notifications/tools/list_changed", "{next}");
    assert_eq!(next["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1");

    // Cancelled: not answered (MCP), and the connection goes on.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}});
    conn.send(cancel.to_string()).await;
    let (list, before) =
        exchange(&mut conn, modern(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}), json!({}))).await;
    assert!(list["result"]["tools"].is_array(), "{list}");
    assert!(before.iter().all(|message| message["id"] != "listen-1"), "{before:?}");

    // Only 2026-07-28 has listen; only sessions have subscribe.
    let listen = json!({"jsonrpc": "2.0", "id": 6, "method": "subscriptions/listen", "params": {"notifications": {}}});
    initialize(&mut conn, "2025-11-25", json!({})).await;
    assert_eq!(exchange(&mut conn, listen).await.0["error"]["code"], -32601);
}

/// Answers the server's request `request` with `result`.
async fn answer(conn: &mut Client, request: &Value, result: Value) {
    conn.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string()).await;
}

#[tokio::test]
async fn handshake_handlers_ask_the_user_by_a_request_to_the_client() {
    let mut conn = serve(None);
    initialize(&mut conn, "2025-11-25", json!({"elicitation": {}})).await;
    for (id, reply, expected) in [
        (1, json!({"action": "accept", "content": {"confirm": true}}), "cleared"),
        (2, json!({"action": "accept", "content": {"confirm": false}}), "kept"),
        (3, json!({"action": "decline"}), "declined"),
        (4, json!({"action": "cancel"}), "cancelled"),
    ] {
        conn.send(call(id, "clear", json!({})).to_string()).await;
        let request = recv(&mut conn).await;
        assert_eq!(request["method"], "elicitation/create", "{request}");
        assert_eq!(
            request["params"],
            json!({"message": "Clear the desk?", "requestedSchema": {"type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Clear every page?"}}, "required": ["confirm"]}})
        );
        answer(&mut conn, &request, reply).await;
        let result = recv(&mut conn).await;
        assert_eq!(result["id"], id);
        assert_eq!(result["result"]["structuredContent"]["result"], expected, "{result}");
    }

    // Content that does not fit the form: a tool error saying so.
    conn.send(call(5, "clear", json!({})).to_string()).await;
    let request = recv(&mut conn).await;
    answer(&mut conn, &request, json!({"action": "accept", "content": {"confirm": "yes"}})).await;
    let result = recv(&mut conn).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(result["result"]["content"][0]["text"].as_str().unwrap().contains("does not fit the form"), "{result}");
}

#[tokio::test]
async fn a_client_that_cannot_be_asked_gets_a_tool_error_naming_the_capability() {
    let mut conn = serve(None);
    initialize(&mut conn, "2025-11-25", json!({})).await;
    let (result, before) = exchange(&mut conn, call(1, "clear", json!({}))).await;
    assert!(before.is_empty(), "nothing asked: {before:?}");
    assert_eq!(result["result"]["isError"], true, "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`elicitation` capability") && text.contains("-32021"), "{text}");

    // 2025-03-26 has no elicitation, whatever the client declares.
    let mut conn = serve(None);
    initialize(&mut conn, "2025-03-26", json!({"elicitation": {}, "sampling": {}})).await;
    let (result, _) = exchange(&mut conn, call(1, "clear", json!({}))).await;
    assert!(result["result"]["content"][0]["text"].as_str().unwrap().contains("came in 2025-06-18"), "{result}");
}

#[tokio::test]
async fn handshake_handlers_ask_the_model_by_sampling() {
    let mut conn = serve(None);
    initialize(&mut conn, "2025-06-18", json!({"sampling": {}})).await;
    conn.send(call(1, "title", json!({})).to_string()).await;
    let request = recv(&mut conn).await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Name page 1"}}],
               "maxTokens": 50, "systemPrompt": "You name pages."})
    );
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "Overture"}, "model": "m-1", "stopReason": "endTurn"});
    answer(&mut conn, &request, reply).await;
    let result = recv(&mut conn).await;
    assert_eq!(result["result"]["structuredContent"]["result"], "Overture (by m-1)", "{result}");

    // The client's error is the tool's error.
    conn.send(call(2, "title", json!({})).to_string()).await;
    let request = recv(&mut conn).await;
    let refusal =
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "User rejected sampling"}});
    conn.send(refusal.to_string()).await;
    let result = recv(&mut conn).await;
    assert!(result["result"]["content"][0]["text"].as_str().unwrap().contains("User rejected sampling"), "{result}");
}

#[tokio::test]
async fn modern_handlers_ask_by_input_required_rounds() {
    let mut conn = serve(None);
    let capabilities = json!({"elicitation": {}, "sampling": {}});
    let (first, before) = exchange(&mut conn, modern(call(1, "twice", json!({})), capabilities.clone())).await;
    assert!(before.is_empty(), "no request is sent to the client in 2026-07-28: {before:?}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({"input-0": {"method": "elicitation/create", "params": {"message": "Who are you?", "requestedSchema":
            {"type": "object", "properties": {"name": {"type": "string", "description": "Your name."}}, "required": ["name"]}}}})
    );
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(), "{first}");
    let state = result["requestState"].clone();

    // Round 2: the name answered; the model is asked next.
    let mut retry = modern(call(2, "twice", json!({})), capabilities.clone());
    retry["params"]["inputResponses"] = json!({"input-0": {"action": "accept", "content": {"name": "Ada"}}});
    retry["params"]["requestState"] = state;
    let (second, _) = exchange(&mut conn, retry).await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert_eq!(second["result"]["inputRequests"]["input-1"]["method"], "sampling/createMessage");
    assert_eq!(second["result"]["inputRequests"]["input-1"]["params"]["messages"][0]["content"]["text"], "Greet Ada");
    assert!(second["result"]["inputRequests"].get("input-0").is_none(), "{second}");

    // Round 3: only this round's answer is sent; the state has the rest.
    let mut retry = modern(call(3, "twice", json!({})), capabilities.clone());
    retry["params"]["inputResponses"] =
        json!({"input-1": {"role": "assistant", "content": {"type": "text", "text": "Hello, Ada"}, "model": "m"}});
    retry["params"]["requestState"] = second["result"]["requestState"].clone();
    let (third, _) = exchange(&mut conn, retry).await;
    assert_eq!(third["result"]["resultType"], "complete", "{third}");
    assert_eq!(third["result"]["structuredContent"], "Hello, Ada");

    // A state of another call, or of nothing: -32602.
    let mut forged = modern(call(4, "clear", json!({})), capabilities.clone());
    forged["params"]["requestState"] = second["result"]["requestState"].clone();
    let (refused, _) = exchange(&mut conn, forged).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");
    let mut junk = modern(call(5, "clear", json!({})), capabilities.clone());
    junk["params"]["requestState"] = json!("junk");
    assert_eq!(exchange(&mut conn, junk).await.0["error"]["code"], -32602);

    // Without the capability in this request's `_meta`: a tool error.
    let (result, _) = exchange(&mut conn, modern(call(6, "clear", json!({})), json!({}))).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(result["result"]["content"][0]["text"].as_str().unwrap().contains("`elicitation` capability"));
}

#[tokio::test]
async fn a_draining_server_ends_its_listens_with_their_final_result() {
    let pages = Pages { changes: Changes::new(), count: AtomicU64::new(0) };
    let server = McpServer::new(pages.into_rpc()).changes(Changes::new()).into_server();
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server
            .serve(rpc_runtime::transport::stream::Stream::new(read, write))
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    let (client_read, client_write) = tokio::io::split(client);
    let mut conn = Client { conn: Conn::new(client_read, client_write, Wire::Ndjson), backlog: VecDeque::new() };
    let listen = json!({"jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true}}});
    conn.send(modern(listen, json!({})).to_string()).await;
    let ack = recv(&mut conn).await;
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41, "{ack}");

    stop.send(()).expect("the server runs");
    let end = recv(&mut conn).await;
    assert_eq!(end["id"], 41, "{end}");
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41);
    tokio::time::timeout(common::HANG_GUARD, task).await.expect("the server stops").expect("joins").expect("serves");
}

#[tokio::test]
async fn subscriptions_are_bounded_per_session_and_per_listen() {
    let mut conn = serve(Some(Changes::new()));
    initialize(&mut conn, "2025-11-25", json!({})).await;
    let subscribe = |id: usize| json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": format!("desk://pages/{id}")}});
    for id in 1..=1024 {
        conn.send(subscribe(id).to_string()).await;
    }
    for _ in 1..=1024 {
        let answer = recv(&mut conn).await;
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    let (refused, _) = exchange(&mut conn, subscribe(1025)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("1024 resources already"), "{refused}");
    // Subscribing again to one it has is not one more.
    assert_eq!(exchange(&mut conn, subscribe(7)).await.0["result"], json!({}));

    let uris: Vec<String> = (0..1025).map(|n| format!("desk://pages/{n}")).collect();
    let listen = json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": uris}}});
    let (refused, _) = exchange(&mut conn, modern(listen, json!({}))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}
