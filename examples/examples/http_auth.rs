//! Bearer tokens over HTTP and WebSocket: the connection hook reads the
//! `Authorization` header, says who the caller is and what it may do
//! (`Permissions`), or refuses it; `#[rpc(requires = "admin")]` keeps a
//! method for admins. Server and clients run in this process.
//!
//! ```text
//! cargo run --example http_auth
//! cargo run --example http_auth --no-default-features --features http,ws
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use rpc_runtime::transport::http::{Http, HttpConnect};
use rpc_runtime::transport::ws::WsConnect;
use rpc_runtime::{rpc, ConnectionInfo, Context, Peer, Permissions, Refused, Server};

/// A counter anyone signed in may bump; only admins may reset it.
#[rpc]
pub trait Counter {
    /// Adds one; answers the new value and who bumped it.
    fn bump(&self, cx: Context) -> String;
    /// Sets the counter back to zero. Callers without the `admin`
    /// permission get error -32003 and the method does not run.
    #[rpc(requires = "admin")]
    fn reset(&self);
}

struct Count(AtomicU64);

impl Counter for Count {
    fn bump(&self, cx: Context) -> String {
        let count = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        let user = cx.extension::<User>().map_or("nobody", |user| user.0);
        format!("{count} (bumped by {user})")
    }

    fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// Who the caller is, as the hook found; handlers read it from their
/// `Context`.
struct User(&'static str);

/// The connection hook: runs for every HTTP request, and once for a
/// WebSocket connection (before the upgrade). `Refused::unauthorized` is
/// an HTTP 401, `Refused::forbidden` a 403; the reason is logged (at
/// debug level), not sent.
fn authenticate(info: &ConnectionInfo, cx: Context) -> Result<Context, Refused> {
    // `Authorization: Bearer <token>`, the scheme in any case.
    let token = info.bearer_token().ok_or_else(|| Refused::unauthorized("no bearer token"))?;
    match token {
        "admin-token" => Ok(cx.with_extension(User("admin")).with_extension(Permissions::new(["admin"]))),
        "user-token" => Ok(cx.with_extension(User("user"))),
        _ => Err(Refused::forbidden("unknown token")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // HTTP `POST` and WebSocket upgrades on one port.
    let listener = Http::default().bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = Server::new(Count(AtomicU64::new(0)).into_rpc()).on_connect(authenticate);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener).with_graceful_shutdown(async {
        stopped.await.ok();
    }));
    println!("serving http://{addr}/ and ws://{addr}/");

    // Headers go with every HTTP request, and with the WebSocket upgrade.
    let admin = HttpConnect::new(format!("http://{addr}/")).header("authorization", "Bearer admin-token");
    let admin = CounterClient::new(Peer::builder().connect(admin).await?);
    let user = WsConnect::new(format!("ws://{addr}/")).header("authorization", "bearer user-token");
    let user = CounterClient::new(Peer::builder().connect(user).await?);

    println!("user (WebSocket) bump -> {}", user.bump().await?);
    println!("admin (HTTP) bump -> {}", admin.bump().await?);

    // A signed-in caller without the permission: -32003.
    let denied = user.reset().await.expect_err("reset requires admin");
    assert!(denied.is_permission_denied());
    println!("user reset -> needs {:?}: {denied}", denied.required_permissions().unwrap_or_default());
    admin.reset().await?;
    println!("admin reset -> ok; user bump -> {}", user.bump().await?);

    // No token at all: the server answers HTTP 401, and the call fails
    // with it.
    let anonymous = CounterClient::new(Peer::builder().connect(HttpConnect::new(format!("http://{addr}/"))).await?);
    let refused = anonymous.bump().await.expect_err("no token");
    assert_eq!(refused.http_status(), Some(401));
    println!("anonymous bump -> {refused}");

    stop.send(()).ok();
    serving.await??;
    Ok(())
}
