//! Branching on a call's error with `ClientError`'s accessors, against
//! real servers over HTTP and WebSocket: the HTTP status of a refused
//! request (401, 403 from a connection hook), a permission refusal and
//! what it requires (with a hook, and with OAuth's 403 that carries the
//! -32003), method not found, invalid params; a typed error stays the
//! method's own; and errors made up on the calling side
//! (`TRANSPORT_ERROR`) display as what they are, not as the server's.

use crate::web_support::{cuttable_proxy, listener, serve, Http, HANG_GUARD};

use std::net::SocketAddr;
use std::time::Duration;

use rpc_runtime::dispatch::Permissions;
use rpc_runtime::transport::http::oauth::{Grant, InvalidToken, ResourceServer};
use rpc_runtime::transport::http::HttpConnect;
use rpc_runtime::transport::ws::{Reconnect, WsConnect};
use rpc_runtime::wire::TRANSPORT_ERROR;
use rpc_runtime::{rpc, ClientError, ErrorObject, Peer, Refused, RpcError, Server};
use serde_json::json;

/// The method's own error, read back as `ClientError::App`.
#[derive(Debug, PartialEq, RpcError)]
pub enum TillError {
    #[rpc(code = -32010, message = "The till is empty")]
    Empty,
}

/// A service with methods that fail in each way a caller branches on.
#[rpc]
pub trait Till {
    /// Anyone may call it.
    fn echo(&self, text: String) -> String;

    /// Only callers holding `admin`.
    #[rpc(requires = "admin")]
    fn wipe(&self) -> bool;

    /// Callers holding `admin` or `ops`.
    #[rpc(requires(any("admin", "ops")))]
    fn restart(&self) -> bool;

    /// Fails with the method's own error.
    fn withdraw(&self, amount: u64) -> Result<u64, TillError>;

    /// Fails with -32099, the code the clients use for transport errors.
    fn own_minus_32099(&self) -> Result<(), ErrorObject>;

    /// Waits `ms`, then answers it.
    async fn sleep(&self, ms: u64) -> u64;
}

struct TillImpl;

impl Till for TillImpl {
    fn echo(&self, text: String) -> String {
        text
    }

    fn wipe(&self) -> bool {
        true
    }

    fn restart(&self) -> bool {
        true
    }

    fn withdraw(&self, _amount: u64) -> Result<u64, TillError> {
        Err(TillError::Empty)
    }

    fn own_minus_32099(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::new(TRANSPORT_ERROR, "the server's own -32099"))
    }

    async fn sleep(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
}

/// The till behind a bearer-token hook: no token is 401, an unknown one
/// 403; `alice` holds `admin`, `bob` nothing.
fn till() -> Server {
    Server::new(TillImpl.into_rpc()).on_connect(|info, cx| match info.bearer_token() {
        None => Err(Refused::unauthorized("no bearer token")),
        Some("alice") => Ok(cx.with_extension(Permissions::new(["admin"]))),
        Some("bob") => Ok(cx),
        Some(_) => Err(Refused::forbidden("unknown token")),
    })
}

async fn http_client(addr: SocketAddr, token: Option<&str>) -> TillClient {
    let connect = HttpConnect::new(format!("http://{addr}/"));
    let connect = match token {
        Some(token) => connect.header("authorization", format!("Bearer {token}")),
        None => connect,
    };
    TillClient::new(Peer::builder().timeout(HANG_GUARD).connect(connect).await.unwrap())
}

async fn ws_client(addr: SocketAddr, token: &str) -> TillClient {
    let connect = WsConnect::new(format!("ws://{addr}/")).header("authorization", format!("Bearer {token}"));
    TillClient::new(Peer::builder().timeout(HANG_GUARD).connect(connect).await.unwrap())
}

#[tokio::test]
async fn a_401_or_403_from_the_hook_is_an_http_status_and_says_the_server_refused() {
    let (addr, _stop, _task) = serve(&till(), Http::default()).await;
    for (token, status, reason) in [(None, 401, "Unauthorized"), (Some("stranger"), 403, "Forbidden")] {
        let till = http_client(addr, token).await;
        let err = till.echo("hi".into()).await.unwrap_err();
        assert_eq!(err.http_status(), Some(status), "{err:?}");
        assert_eq!(err.code(), Some(TRANSPORT_ERROR));
        assert!(!err.is_permission_denied() && !err.is_method_not_found() && !err.is_invalid_params());
        assert_eq!(err.required_permissions(), None);
        // It says what happened, not that the server answered an error.
        let shown = err.to_string();
        assert!(shown.starts_with(&format!("the server refused the request: HTTP {status} {reason}")), "{shown}");
        assert!(!shown.contains("-32099") && !shown.contains("answered with an error"), "{shown}");
        // A method with a typed error gets the same: the refusal is no `E`.
        let err = till.withdraw(1).await.unwrap_err();
        assert_eq!(err.http_status(), Some(status), "{err:?}");
        assert_eq!(err.app_error(), None);
    }
    // Every call of a refused batch carries the status.
    let till = http_client(addr, None).await;
    let mut batch = till.batch();
    let (one, two) = (batch.echo("1".into()), batch.wipe());
    batch.send().await.unwrap();
    assert_eq!(one.await.unwrap_err().http_status(), Some(401));
    assert_eq!(two.await.unwrap_err().http_status(), Some(401));
    // An admitted caller's errors carry no status.
    let err = http_client(addr, Some("bob")).await.wipe().await.unwrap_err();
    assert_eq!(err.http_status(), None);
}

#[tokio::test]
async fn a_permission_refusal_names_what_it_requires_over_http_and_websocket() {
    let (addr, _stop, _task) = serve(&till(), Http::default()).await;
    for (transport, till) in [("http", http_client(addr, Some("bob")).await), ("ws", ws_client(addr, "bob").await)] {
        let err = till.wipe().await.unwrap_err();
        assert!(err.is_permission_denied(), "{transport}: {err:?}");
        assert_eq!(err.required_permissions(), Some(vec!["admin".to_owned()]), "{transport}");
        assert_eq!(err.code(), Some(rpc_runtime::wire::PERMISSION_DENIED));
        assert_eq!(err.http_status(), None, "{transport}: a refusal in a 200, not a status");
        assert!(!err.is_method_not_found() && !err.is_invalid_params());
        assert!(err.to_string().starts_with("the server answered with an error: Permission denied"), "{err}");

        let err = till.restart().await.unwrap_err();
        assert!(err.is_permission_denied(), "{transport}: {err:?}");
        assert_eq!(err.required_permissions(), Some(vec!["admin".to_owned(), "ops".to_owned()]), "{transport}");
    }
    // A caller holding the permission is served.
    assert!(http_client(addr, Some("alice")).await.wipe().await.unwrap());
    assert!(ws_client(addr, "alice").await.restart().await.unwrap());
}

#[tokio::test]
async fn an_oauth_403_with_the_refusal_in_its_body_is_that_refusal() {
    // A resource server answers a single call its scopes do not allow with
    // 403 and the -32003 as the body: the client hands on the refusal.
    let verifier = |token: &str| match token {
        "t-plain" => Ok(Grant::new(Vec::<String>::new())),
        "t-admin" => Ok(Grant::new(["admin"])),
        _ => Err(InvalidToken::new("not a test token")),
    };
    let oauth = ResourceServer::new("https://api.example.com/rpc", verifier).unwrap();
    let (addr, _stop, _task) = serve(&Server::new(TillImpl.into_rpc()), Http::default().oauth(oauth)).await;
    let plain = http_client(addr, Some("t-plain")).await;
    let err = plain.wipe().await.unwrap_err();
    assert!(err.is_permission_denied(), "{err:?}");
    assert_eq!(err.required_permissions(), Some(vec!["admin".to_owned()]));
    assert_eq!(err.http_status(), None);
    // In a batch the refusal is one answer among others, in a 200.
    let mut batch = plain.batch();
    let (wipe, echo) = (batch.wipe(), batch.echo("b".into()));
    batch.send().await.unwrap();
    assert_eq!(wipe.await.unwrap_err().required_permissions(), Some(vec!["admin".to_owned()]));
    assert_eq!(echo.await.unwrap(), "b");
    // No token: the 401 has no JSON-RPC body, and stays a status.
    let err = http_client(addr, None).await.echo("x".into()).await.unwrap_err();
    assert_eq!(err.http_status(), Some(401), "{err:?}");
    assert!(http_client(addr, Some("t-admin")).await.wipe().await.unwrap());
}

#[tokio::test]
async fn method_not_found_and_invalid_params_over_http_and_websocket() {
    let (addr, _stop, _task) = serve(&till(), Http::default()).await;
    for (transport, till) in [("http", http_client(addr, Some("bob")).await), ("ws", ws_client(addr, "bob").await)] {
        let peer = till.peer();
        let err = peer.call::<String, _>("no_such_method", json!({})).await.unwrap_err();
        assert!(err.is_method_not_found(), "{transport}: {err:?}");
        assert!(!err.is_invalid_params() && !err.is_permission_denied());
        assert_eq!(err.http_status(), None);

        let err = peer.call::<String, _>("echo", json!({"text": 5})).await.unwrap_err();
        assert!(err.is_invalid_params(), "{transport}: {err:?}");
        assert!(!err.is_method_not_found());
        let err = peer.call::<String, _>("echo", json!({})).await.unwrap_err();
        assert!(err.is_invalid_params(), "{transport}: {err:?}");
        assert_eq!(till.echo("fine".into()).await.unwrap(), "fine");
    }
}

#[tokio::test]
async fn a_typed_error_is_the_methods_own_and_no_accessor_claims_it() {
    let (addr, _stop, _task) = serve(&till(), Http::default()).await;
    for (transport, till) in [("http", http_client(addr, Some("bob")).await), ("ws", ws_client(addr, "bob").await)] {
        let err = till.withdraw(10).await.unwrap_err();
        assert_eq!(err.app_error(), Some(&TillError::Empty), "{transport}: {err:?}");
        // The error object it came from is not kept.
        assert_eq!(err.code(), None);
        assert!(!err.is_permission_denied() && !err.is_method_not_found() && !err.is_invalid_params());
        assert_eq!(err.http_status(), None);
    }
}

#[tokio::test]
async fn a_servers_own_minus_32099_reads_as_the_servers_error() {
    let (addr, _stop, _task) = serve(&till(), Http::default()).await;
    for (transport, till) in [("http", http_client(addr, Some("bob")).await), ("ws", ws_client(addr, "bob").await)] {
        let err = till.own_minus_32099().await.unwrap_err();
        assert_eq!(err.code(), Some(TRANSPORT_ERROR), "{transport}");
        assert_eq!(err.http_status(), None);
        assert_eq!(
            err.to_string(),
            "the server answered with an error: the server's own -32099 (code -32099)",
            "{transport}"
        );
    }
}

#[tokio::test]
async fn a_request_that_could_not_be_sent_says_so() {
    let (gone, addr) = listener().await;
    drop(gone);
    let err = http_client(addr, None).await.echo("x".into()).await.unwrap_err();
    assert_eq!(err.code(), Some(TRANSPORT_ERROR), "{err:?}");
    assert_eq!(err.http_status(), None);
    let shown = err.to_string();
    assert!(shown.starts_with("the HTTP request failed: "), "{shown}");
    assert_eq!(
        err.server_error().unwrap().data_as::<serde_json::Value>().unwrap().unwrap(),
        json!({"transport": "http"})
    );
}

#[tokio::test]
async fn a_call_lost_with_its_websocket_connection_says_so() {
    let (addr, _stop, _task) = serve(&till(), Http::default().allow_any_host()).await;
    let (proxy_addr, cut) = cuttable_proxy(addr).await;
    let reconnect = Reconnect::default().initial(Duration::from_millis(20)).attempts(Some(50));
    let connect =
        WsConnect::new(format!("ws://{proxy_addr}/")).header("authorization", "Bearer bob").reconnect(reconnect);
    let till = TillClient::new(Peer::builder().connect(connect).await.unwrap());
    assert_eq!(till.echo("a".into()).await.unwrap(), "a");
    let in_flight = tokio::spawn({
        let till = till.clone();
        async move { till.sleep(60_000).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cut.send(()).unwrap();
    let err = tokio::time::timeout(HANG_GUARD, in_flight).await.expect("failed in time").unwrap().unwrap_err();
    assert!(matches!(err, ClientError::Server(_)), "{err:?}");
    assert_eq!(err.code(), Some(TRANSPORT_ERROR));
    assert_eq!(err.http_status(), None);
    let shown = err.to_string();
    assert!(shown.starts_with("the WebSocket connection was lost"), "{shown}");
    assert!(!shown.contains("answered with an error"), "{shown}");
    let again = tokio::time::timeout(HANG_GUARD, till.echo("b".into())).await.expect("answered in time");
    assert_eq!(again.unwrap(), "b");
}
