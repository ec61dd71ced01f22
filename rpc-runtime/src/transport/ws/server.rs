//! The server side of WebSocket: an upgrade of the HTTP service (same
//! port, same checks, same connection hook), after which the connection
//! runs on its own task as a peer.
//!
//! The HTTP service calls [`is_upgrade`] and [`upgrade`] once its Host
//! and Origin checks passed; the settings ([`WsServerOptions`]) are part
//! of [`Http`](crate::transport::http::Http), set with
//! [`Http::websocket`](crate::transport::http::Http::websocket) and
//! [`Http::ws_ping_interval`](crate::transport::http::Http::ws_ping_interval).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::socket::{build, config};
use crate::peer::{Connection, Controls};
use crate::transport::http::{ConnectionSlot, HttpAddrs, Inner, status_response};

/// Default interval of the server's keep-alive pings.
const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(30);

/// WebSocket settings of the HTTP service.
#[derive(Clone, Debug)]
pub(crate) struct WsServerOptions {
    pub(crate) enabled: bool,
    pub(crate) ping_interval: Option<Duration>,
}

impl Default for WsServerOptions {
    fn default() -> Self {
        WsServerOptions { enabled: true, ping_interval: Some(DEFAULT_PING_INTERVAL) }
    }
}

/// Whether `request` asks for a WebSocket upgrade.
pub(crate) fn is_upgrade<B>(request: &Request<B>) -> bool {
    let has = |name: HeaderName, token: &str| {
        request.headers().get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|value| value.split(',').any(|part| part.trim().eq_ignore_ascii_case(token)))
        })
    };
    request.method() == http::Method::GET && has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade")
}

/// Answers a WebSocket upgrade: the handshake checks, the connection hook
/// (401/403 before the upgrade), then 101 and the connection on its own
/// task.
pub(crate) async fn upgrade<B>(
    inner: Arc<Inner>,
    mut request: Request<B>,
    addrs: Option<HttpAddrs>,
    slot: Option<ConnectionSlot>,
) -> Response<Full<Bytes>>
where
    B: Body + Send + 'static,
{
    if !inner.config.ws.enabled {
        return status_response(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: WebSocket is not served here");
    }
    if request.headers().get(header::SEC_WEBSOCKET_VERSION).is_none_or(|version| version != "13") {
        let mut response =
            status_response(StatusCode::UPGRADE_REQUIRED, "Upgrade Required: only WebSocket version 13 is served");
        response.headers_mut().insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        return response;
    }
    let Some(key) = request.headers().get(header::SEC_WEBSOCKET_KEY).map(|key| derive_accept_key(key.as_bytes()))
    else {
        return status_response(StatusCode::BAD_REQUEST, "Bad Request: Sec-WebSocket-Key is missing");
    };
    let Some(on_upgrade) = request.extensions_mut().remove::<hyper::upgrade::OnUpgrade>() else {
        return status_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: this HTTP server cannot hand the connection over to WebSocket",
        );
    };
    let (parts, _) = request.into_parts();
    let cx = match inner.admit("ws", parts, addrs).await {
        Ok(cx) => cx,
        Err(refusal) => return refusal,
    };
    let server = inner.server.clone();
    let ping_interval = inner.config.ws.ping_interval;
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(upgraded) => upgraded,
            Err(err) => {
                tracing::debug!(error = %err, "a WebSocket upgrade did not complete");
                return;
            }
        };
        let limits = server.engine.limits();
        let (max_message_size, budget) = (limits.max_message_size, limits.max_queued_bytes);
        let config = config(max_message_size, budget);
        let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        let (source, sink) = build(ws, ping_interval, max_message_size, budget, None);
        let server_drain = slot.as_ref().map(|slot| Arc::clone(&slot.drain));
        // A connection admitted with an expiring token closes when it
        // expires: it gets a drain of its own, raised then.
        #[cfg(feature = "oauth")]
        let expiring = crate::transport::http::oauth::time_left(&cx)
            .map(|left| (left, Arc::new(crate::dispatch::signal::Signal::default())));
        #[cfg(not(feature = "oauth"))]
        let expiring: Option<(std::time::Duration, Arc<crate::dispatch::signal::Signal>)> = None;
        let drain = match &expiring {
            Some((_, own)) => Some(Arc::clone(own)),
            None => server_drain.clone(),
        };
        let controls = Controls { idle_timeout: server.idle_timeout, drain, at_eof: server.network_eof() };
        #[cfg(feature = "metrics")]
        let _open = crate::dispatch::metrics::OpenConnection::new("ws");
        let (connection, _peer) = Connection::new(server.engine.clone(), server.peer, cx, controls);
        let run = connection.run(source, sink);
        let ended = match &expiring {
            #[cfg(feature = "oauth")]
            Some((left, own)) => {
                crate::transport::http::oauth::run_until_expiry(run, *left, own, server_drain.as_deref()).await
            }
            _ => run.await,
        };
        if let Err(err) = ended {
            tracing::debug!(peer = ?addrs.map(|a| a.peer), error = %err, "WebSocket connection ended with an error");
        }
        // Held until here: the connection counts against the limit and
        // graceful shutdown waits for it.
        drop(slot);
    });
    let mut response = Response::new(Full::default());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(key) = HeaderValue::from_str(&key) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, key);
    }
    response
}
