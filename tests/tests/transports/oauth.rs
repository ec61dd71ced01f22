//! An HTTP service as an OAuth 2.1 resource server (`Http::oauth`), over
//! real sockets, with a verifier of opaque tokens (a closure): the RFC 9728
//! metadata at both well-known paths, the 401 challenges (no token, a
//! rejected one, a hook's refusal), scopes as permissions with 403
//! `insufficient_scope` for a single call and the JSON-RPC error inside a
//! batch and over WebSocket, `rpc.discover` per caller, the connection hook
//! seeing the grant, and grants kept per token. JWT verification against a
//! real authorization server is `mcp_oauth` (the TypeScript MCP SDK's
//! OAuth flow against the notes example).

use crate::web_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rpc_runtime::dispatch::Permissions;
use rpc_runtime::transport::http::oauth::{bearer_token, Grant, InvalidToken, ResourceServer};
use rpc_runtime::wire::PERMISSION_DENIED;
use rpc_runtime::Refused;
use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use web_support::*;

const RESOURCE: &str = "https://api.example.com/rpc";
const METADATA: &str = "https://api.example.com/.well-known/oauth-protected-resource/rpc";

/// Tokens `t-admin` (scope `admin`, subject alice) and `t-plain` (no
/// scope); counts the verifier's calls.
fn protected(verified: Arc<AtomicUsize>) -> ResourceServer {
    let verifier = move |token: &str| {
        verified.fetch_add(1, Ordering::SeqCst);
        match token {
            "t-admin" => Ok(Grant::new(["admin"]).subject("alice")),
            "t-plain" => Ok(Grant::new(Vec::<String>::new()).subject("bob")),
            "t-brief" => {
                Ok(Grant::new(["admin"]).expires_at(std::time::SystemTime::now() + Duration::from_millis(1500)))
            }
            _ => Err(InvalidToken::new("not one of the test's tokens")),
        }
    };
    ResourceServer::new(RESOURCE, verifier).unwrap().authorization_server("https://auth.example.com")
}

async fn serve_protected(hook: bool) -> (std::net::SocketAddr, Arc<AtomicUsize>, impl Drop) {
    let verified = Arc::new(AtomicUsize::new(0));
    let (server, _) = vault();
    let server = if hook {
        // The hook runs after the token was accepted, and sees its grant.
        server.on_connect(|_, cx| {
            let grant = cx.extension::<Grant>().cloned().ok_or_else(|| Refused::forbidden("no grant"))?;
            if grant.subject_id() == Some("bob") && !Permissions::of(&cx).grants("admin") {
                return Err(Refused::unauthorized("bob is locked out"));
            }
            Ok(cx.with_extension(User(grant.subject_id().unwrap_or("?").to_owned())))
        })
    } else {
        server
    };
    let (addr, stop, _task) = serve(&server, Http::default().oauth(protected(Arc::clone(&verified)))).await;
    struct Stop(Option<tokio::sync::oneshot::Sender<()>>);
    impl Drop for Stop {
        fn drop(&mut self) {
            if let Some(stop) = self.0.take() {
                let _ = stop.send(());
            }
        }
    }
    (addr, verified, Stop(Some(stop)))
}

fn get(addr: std::net::SocketAddr, path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n")
}

fn call(method: &str, params: serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).to_string()
}

#[tokio::test]
async fn the_protected_resource_metadata_is_served_at_both_well_known_paths() {
    let (addr, _, _stop) = serve_protected(false).await;
    for path in ["/.well-known/oauth-protected-resource/rpc", "/.well-known/oauth-protected-resource"] {
        let reply = exchange(addr, &get(addr, path)).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(
            reply.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": ["https://auth.example.com"],
                // What the service's methods require (`wipe`: admin).
                "scopes_supported": ["admin"],
                "bearer_methods_supported": ["header"],
            })
        );
    }
    // Any other GET is still not served.
    let reply = exchange(addr, &get(addr, "/.well-known/oauth-protected-resource/other")).await;
    assert_eq!(reply.status, 405);
}

#[tokio::test]
async fn a_request_without_a_token_or_with_a_rejected_one_gets_401_with_a_challenge_and_no_reason() {
    let (addr, verified, _stop) = serve_protected(false).await;
    let reply = exchange(addr, &post_json(addr, &call("read", json!(["k"])), &[])).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer scope="admin", resource_metadata="{METADATA}""#).as_str())
    );
    assert_eq!(verified.load(Ordering::SeqCst), 0, "no token, nothing to verify");

    for header in ["Authorization: Bearer t-unknown", "Authorization: Basic dDp1", "Authorization: Bearer"] {
        let reply = exchange(addr, &post_json(addr, &call("read", json!(["k"])), &[header])).await;
        assert_eq!(reply.status, 401, "{header}");
        let challenge = reply.header("www-authenticate").unwrap();
        assert!(challenge.contains(&format!(r#"resource_metadata="{METADATA}""#)), "{challenge}");
        assert!(!reply.body.contains("test's tokens"), "the reason stays in the logs: {}", reply.body);
    }
    let reply =
        exchange(addr, &post_json(addr, &call("read", json!(["k"])), &["Authorization: Bearer t-unknown"])).await;
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer error="invalid_token", resource_metadata="{METADATA}""#).as_str())
    );
}

#[tokio::test]
async fn scopes_are_permissions_and_a_missing_scope_is_403_insufficient_scope_for_a_single_call() {
    let (addr, _, _stop) = serve_protected(false).await;
    // The scheme is case-insensitive (RFC 9110 section 11.1).
    let plain = "authorization: bearer t-plain";
    let reply = exchange(addr, &post_json(addr, &call("read", json!(["k"])), &[plain])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"], "value of k");

    let reply = exchange(addr, &post_json(addr, &call("wipe", json!([true])), &[plain])).await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer error="insufficient_scope", scope="admin", resource_metadata="{METADATA}""#).as_str())
    );
    assert_eq!(reply.json()["error"]["code"], PERMISSION_DENIED);

    let reply =
        exchange(addr, &post_json(addr, &call("wipe", json!([true])), &["Authorization: Bearer t-admin"])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"], true);

    // In a batch the refusal is one JSON-RPC error among the answers.
    let batch = json!([
        {"jsonrpc": "2.0", "method": "wipe", "params": [true], "id": 1},
        {"jsonrpc": "2.0", "method": "read", "params": ["b"], "id": 2},
    ])
    .to_string();
    let reply = exchange(addr, &post_json(addr, &batch, &[plain])).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("www-authenticate"), None);
    let answers = reply.json();
    assert_eq!(answers[0]["error"]["code"], PERMISSION_DENIED);
    assert_eq!(answers[1]["result"], "value of b");
}

#[tokio::test]
async fn rpc_discover_lists_only_what_the_caller_may_call() {
    let (addr, _, _stop) = serve_protected(false).await;
    let names = |document: &serde_json::Value| -> Vec<String> {
        document["result"]["methods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let discover = call("rpc.discover", json!([]));
    let plain = exchange(addr, &post_json(addr, &discover, &["Authorization: Bearer t-plain"])).await.json();
    let admin = exchange(addr, &post_json(addr, &discover, &["Authorization: Bearer t-admin"])).await.json();
    assert!(!names(&plain).contains(&"wipe".to_owned()), "{:?}", names(&plain));
    assert!(names(&plain).contains(&"read".to_owned()));
    assert!(names(&admin).contains(&"wipe".to_owned()), "{:?}", names(&admin));
    assert_eq!(names(&admin).len(), names(&plain).len() + 1);
}

#[tokio::test]
async fn the_connection_hook_runs_after_the_token_and_its_401_carries_the_challenge() {
    let (addr, _, _stop) = serve_protected(true).await;
    let reply = exchange(addr, &post_json(addr, &call("whoami", json!([])), &["Authorization: Bearer t-admin"])).await;
    assert_eq!(reply.json()["result"], "alice");
    let reply = exchange(addr, &post_json(addr, &call("whoami", json!([])), &["Authorization: Bearer t-plain"])).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer scope="admin", resource_metadata="{METADATA}""#).as_str())
    );
}

#[tokio::test]
async fn a_verified_token_is_verified_once_then_its_grant_is_kept() {
    let (addr, verified, _stop) = serve_protected(false).await;
    for _ in 0..5 {
        let reply =
            exchange(addr, &post_json(addr, &call("read", json!(["k"])), &["Authorization: Bearer t-admin"])).await;
        assert_eq!(reply.status, 200);
    }
    assert_eq!(verified.load(Ordering::SeqCst), 1);
    // Rejected tokens are not kept: each is checked again.
    for _ in 0..3 {
        let reply =
            exchange(addr, &post_json(addr, &call("read", json!(["k"])), &["Authorization: Bearer nope"])).await;
        assert_eq!(reply.status, 401);
    }
    assert_eq!(verified.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn over_websocket_the_upgrade_needs_a_token_and_a_missing_scope_is_a_json_rpc_error() {
    let (addr, _, _stop) = serve_protected(false).await;
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let refused = tokio_tungstenite::client_async(format!("ws://{addr}/"), stream).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401);
            assert!(response.headers().get("www-authenticate").is_some());
        }
        other => panic!("expected a 401 for an upgrade without a token, got {other:?}"),
    }

    let mut request = format!("ws://{addr}/").into_client_request().unwrap();
    request.headers_mut().insert("authorization", "Bearer t-plain".parse().unwrap());
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(request, stream).await.expect("upgrade with a token");
    ws.send(WsMessage::text(call("wipe", json!([true])))).await.unwrap();
    let answer = loop {
        match ws.next().await.expect("an answer").unwrap() {
            WsMessage::Text(text) => break serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            _ => continue,
        }
    };
    assert_eq!(answer["error"]["code"], PERMISSION_DENIED);
}

#[test]
fn bearer_tokens_are_read_with_any_case_of_the_scheme_and_only_from_one_header() {
    let headers = |values: &[&str]| {
        let mut map = rpc_runtime::http::HeaderMap::new();
        for value in values {
            map.append("authorization", value.parse().unwrap());
        }
        map
    };
    assert_eq!(bearer_token(&headers(&["Bearer abc.def-_~+/="])), Some("abc.def-_~+/="));
    assert_eq!(bearer_token(&headers(&["Bearer abc\t"])), Some("abc"));
    assert_eq!(bearer_token(&headers(&["BEARER  abc"])), Some("abc"));
    assert_eq!(bearer_token(&headers(&["bearer abc"])), Some("abc"));
    assert_eq!(bearer_token(&headers(&["Basic abc"])), None);
    assert_eq!(bearer_token(&headers(&["Bearer a b"])), None);
    assert_eq!(bearer_token(&headers(&["Bearer "])), None);
    assert_eq!(bearer_token(&headers(&["Bearer a", "Bearer b"])), None);
    assert_eq!(bearer_token(&headers(&[])), None);
}

#[test]
fn a_resource_must_be_an_absolute_http_url_without_query_or_fragment() {
    let verifier = |_: &str| Err(InvalidToken::new("never"));
    assert!(ResourceServer::new("https://api.example.com/mcp", verifier).is_ok());
    for bad in [
        "/mcp",
        "api.example.com",
        "ftp://api.example.com/",
        "https://api.example.com/mcp?x=1",
        "https://api.example.com/#f",
    ] {
        let err = ResourceServer::new(bad, verifier).unwrap_err();
        assert!(err.to_string().contains(bad), "{err}");
    }
    let resource = ResourceServer::new("https://api.example.com", verifier).unwrap();
    assert_eq!(resource.metadata_url(), "https://api.example.com/.well-known/oauth-protected-resource");
}

#[tokio::test]
async fn a_websocket_closes_when_the_token_it_was_opened_with_expires() {
    let (addr, _, _stop) = serve_protected(false).await;
    let mut request = format!("ws://{addr}/").into_client_request().unwrap();
    request.headers_mut().insert("authorization", "Bearer t-brief".parse().unwrap());
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(request, stream).await.expect("upgrade with a token");
    ws.send(WsMessage::text(call("read", json!(["k"])))).await.unwrap();
    let answer = loop {
        match ws.next().await.expect("an answer").unwrap() {
            WsMessage::Text(text) => break serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            _ => continue,
        }
    };
    assert_eq!(answer["result"], "value of k");
    // Past the token's expiry the server closes the connection.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(WsMessage::Close(_))) => break,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the connection outlived its token");
}
