//! What a handshake session exchanges over Streamable HTTP besides its
//! calls and their answers, byte by byte over real sockets: the `GET`
//! event stream (changes reach it; a second `GET` replaces the first; an
//! open stream does not keep an idle session alive), and elicitation (a
//! request the server sends on the call's event stream, answered by a
//! `POST` of the client's response).

use crate::web_support;

use std::net::SocketAddr;
use std::time::Duration;

use rpc_runtime::mcp::{Changes, Elicit, Elicitation, McpHttp, McpServer};
use rpc_runtime::serde::Deserialize;
use rpc_runtime::{rpc, Context, ErrorObject};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use web_support::{exchange, listener, post_json, Reply, HANG_GUARD};

#[derive(Deserialize, Elicit)]
#[serde(crate = "rpc_runtime::serde")]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// A tool that asks the user.
#[rpc]
pub trait Board {
    /// Asks the user to confirm; answers what they did.
    async fn confirm(&self, cx: Context) -> Result<String, ErrorObject>;
}

struct Desk;

impl Board for Desk {
    async fn confirm(&self, cx: Context) -> Result<String, ErrorObject> {
        Ok(match cx.elicit::<Confirm>("Go ahead?").await? {
            Elicitation::Accept(Confirm { confirm }) => format!("accepted, confirm: {confirm}"),
            Elicitation::Decline => "declined".into(),
            Elicitation::Cancel => "cancelled".into(),
        })
    }
}

/// Serves the board with `settings` and `changes` on a free port.
async fn serve(settings: McpHttp, changes: Changes) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = McpServer::new(Desk.into_rpc()).name("board").changes(changes).into_server();
    let (listener, addr) = listener().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(settings.listener(listener)).with_graceful_shutdown(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

const ACCEPT_BOTH: &str = "Accept: application/json, text/event-stream";

async fn post(addr: SocketAddr, body: &str, headers: &[&str]) -> Reply {
    exchange(addr, &post_json(addr, body, headers)).await
}

/// A new 2025-11-25 session whose client declares `capabilities`: its id.
async fn open_session(addr: SocketAddr, capabilities: Value) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = post(addr, &initialize.to_string(), &[ACCEPT_BOTH]).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, initialized, &[&format!("Mcp-Session-Id: {id}")]).await.status, 202);
    id
}

/// An HTTP response read as it arrives: its status, then its events.
struct Events {
    tcp: TcpStream,
    /// What was read and not yet taken.
    buf: String,
}

impl Events {
    /// Sends `request` on a new connection and reads the response's head.
    async fn open(addr: SocketAddr, request: &str) -> (u16, Events) {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.write_all(request.as_bytes()).await.expect("write");
        let mut events = Events { tcp, buf: String::new() };
        let head = events.read_until("\r\n\r\n").await.expect("a response head");
        let status = head.split(' ').nth(1).and_then(|status| status.parse().ok()).expect("a status");
        (status, events)
    }

    /// A session's `GET` stream.
    async fn get(addr: SocketAddr, session: &str) -> (u16, Events) {
        let request =
            format!("GET / HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n");
        Events::open(addr, &request).await
    }

    /// The next event's JSON message; `None` once the response has ended
    /// (its last chunk, or the connection closed).
    async fn next(&mut self) -> Option<Value> {
        loop {
            let event = self.read_until("\n\n").await?;
            // Chunk sizes sit between events: the `data:` lines are the message.
            let data: Vec<&str> = event.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
            if !data.is_empty() {
                return Some(serde_json::from_str(&data.join("\n")).expect("JSON data"));
            }
        }
    }

    /// Text up to and with `end`; `None` if the response ends first.
    async fn read_until(&mut self, end: &str) -> Option<String> {
        tokio::time::timeout(HANG_GUARD, async {
            loop {
                if let Some(at) = self.buf.find(end) {
                    let taken: String = self.buf.drain(..at + end.len()).collect();
                    return Some(taken);
                }
                if self.buf.contains("\r\n0\r\n\r\n") || self.buf.starts_with("0\r\n\r\n") {
                    return None;
                }
                let mut chunk = [0u8; 4096];
                let n = self.tcp.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    return None;
                }
                self.buf.push_str(std::str::from_utf8(&chunk[..n]).expect("UTF-8"));
            }
        })
        .await
        .expect("the stream moves on")
    }
}

#[tokio::test]
async fn changes_reach_the_get_stream_and_a_new_get_replaces_the_old() {
    let changes = Changes::new();
    let (addr, _stop) = serve(McpHttp::default(), changes.clone()).await;
    let session = open_session(addr, json!({})).await;

    let (status, mut first) = Events::get(addr, &session).await;
    assert_eq!(status, 200);
    changes.tools_list_changed();
    let heard = first.next().await.expect("the change");
    assert_eq!(heard, json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}));

    let (status, mut second) = Events::get(addr, &session).await;
    assert_eq!(status, 200);
    assert_eq!(first.next().await, None, "the first stream ends once replaced");
    changes.resources_list_changed();
    changes.tools_list_changed();
    let heard = second.next().await.expect("the change, on the new stream");
    assert_eq!(heard["method"], "notifications/tools/list_changed", "the board has no resources: {heard}");

    // Without a session, or for another one, there is no stream.
    let (status, _) = Events::get(addr, "no-such-session").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_open_get_stream_does_not_keep_an_idle_session_alive() {
    let settings = McpHttp::default().session_idle_timeout(Duration::from_millis(300));
    let (addr, _stop) = serve(settings, Changes::new()).await;
    let session = open_session(addr, json!({})).await;
    let (status, mut stream) = Events::get(addr, &session).await;
    assert_eq!(status, 200);

    tokio::time::sleep(Duration::from_millis(600)).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let reply = post(addr, ping, &[&format!("Mcp-Session-Id: {session}")]).await;
    assert_eq!(reply.status, 404, "expired while its stream was open: {reply:?}");
    assert_eq!(stream.next().await, None, "the stream ends with its session");
}

#[tokio::test]
async fn elicitation_goes_out_on_the_calls_stream_and_the_posted_response_answers_it() {
    let (addr, _stop) = serve(McpHttp::default(), Changes::new()).await;
    let session = open_session(addr, json!({"elicitation": {}})).await;
    let session_header = format!("Mcp-Session-Id: {session}");

    for (answer, told) in [
        (json!({"action": "accept", "content": {"confirm": true}}), "accepted, confirm: true"),
        (json!({"action": "decline"}), "declined"),
        (json!({"action": "cancel"}), "cancelled"),
    ] {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "confirm", "arguments": {}}});
        let body = call.to_string();
        let request = post_json(addr, &body, &[ACCEPT_BOTH, &session_header]);
        let (status, mut events) = Events::open(addr, &request).await;
        assert_eq!(status, 200);

        let asked = events.next().await.expect("the request for input");
        assert_eq!(asked["method"], "elicitation/create", "{asked}");
        assert_eq!(asked["params"]["message"], "Go ahead?");
        assert_eq!(asked["params"]["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
        let response = json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer});
        let reply = post(addr, &response.to_string(), &[&session_header]).await;
        assert_eq!(reply.status, 202, "{reply:?}");

        let result = events.next().await.expect("the call's answer");
        assert_eq!(result["id"], 7, "{result}");
        assert_eq!(result["result"]["content"][0]["text"], format!("\"{told}\""), "{result}");
        assert_eq!(events.next().await, None, "the stream ends with the answer");
    }

    // A client without the capability gets a tool error saying so.
    let other = open_session(addr, json!({})).await;
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "confirm"}});
    let reply = post(addr, &call.to_string(), &["Accept: application/json", &format!("Mcp-Session-Id: {other}")]).await;
    let answer = reply.json();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("elicitation"), "{text}");
}
