//! A service on HTTP and WebSocket with the security controls on: bearer
//! tokens checked by the connection hook, a method only admins may call,
//! and middleware (tower layers) that logs every call and rate-limits each
//! caller.
//!
//! ```text
//! cargo run --example web_service
//! curl -s localhost:8080 -H 'content-type: application/json' -H 'authorization: Bearer admin-token' \
//!      -d '{"jsonrpc":"2.0","method":"reset","params":[],"id":1}'
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use rpc_runtime::{
    dispatch::{MethodCall, MethodResponse, Permissions},
    rpc,
    wire::LIMIT_EXCEEDED,
    Context, ErrorObject, Refused, Server,
};
use tower::{Layer, Service};

/// A counter anyone signed in may read and bump; only admins may reset it.
#[rpc]
pub trait Counter {
    /// Adds one and returns the new value.
    fn bump(&self) -> u64;
    /// Sets the counter back to zero.
    #[rpc(requires = "admin")]
    fn reset(&self);
}

struct Count(std::sync::atomic::AtomicU64);

impl Counter for Count {
    fn bump(&self) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }
    fn reset(&self) {
        self.0.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Who the caller is, as the hook established it.
#[derive(Clone, Debug)]
struct Caller(String);

/// The future of a call through one of this example's layers.
type CallFuture<E> = Pin<Box<dyn Future<Output = Result<MethodResponse, E>> + Send>>;

/// Logging: method, caller and outcome of every call, when it is known.
#[derive(Clone)]
struct LogLayer;

impl<S> Layer<S> for LogLayer {
    type Service = Log<S>;
    fn layer(&self, inner: S) -> Log<S> {
        Log(inner)
    }
}

/// The service [`LogLayer`] puts around the calls.
#[derive(Clone)]
struct Log<S>(S);

impl<S> Service<MethodCall> for Log<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = CallFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        let method = call.method().to_owned();
        let caller = call.context().extension::<Caller>().map_or("?", |caller| caller.0.as_str()).to_owned();
        let started = Instant::now();
        let response = self.0.call(call);
        Box::pin(async move {
            let response = response.await?;
            let error = response.error_object().map(ErrorObject::code);
            tracing::info!(%method, %caller, ?error, elapsed = ?started.elapsed(), "call");
            Ok(response)
        })
    }
}

/// Rate limiting: at most `per_second` calls per caller per second,
/// answered with a JSON-RPC error (not an HTTP error) beyond that. (tower's
/// own `RateLimitLayer` counts all callers together and waits rather than
/// refuses.)
#[derive(Clone)]
struct RateLimitLayer {
    per_second: u32,
    windows: Arc<Mutex<HashMap<String, (Instant, u32)>>>,
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;
    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit { inner, limit: self.clone() }
    }
}

/// The service [`RateLimitLayer`] puts around the calls.
#[derive(Clone)]
struct RateLimit<S> {
    inner: S,
    limit: RateLimitLayer,
}

impl RateLimitLayer {
    /// Counts a call of `caller`; `false` once over the limit.
    fn allows(&self, caller: String) -> bool {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (start, count) = windows.entry(caller).or_insert((now, 0));
        if now.duration_since(*start) >= Duration::from_secs(1) {
            (*start, *count) = (now, 0);
        }
        *count += 1;
        *count <= self.per_second
    }
}

impl<S> Service<MethodCall> for RateLimit<S>
where
    S: Service<MethodCall, Response = MethodResponse>,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = CallFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: MethodCall) -> Self::Future {
        let caller = call.context().extension::<Caller>().map_or_else(String::new, |caller| caller.0.clone());
        if !self.limit.allows(caller) {
            let message = format!("Limit exceeded: at most {} calls per second", self.limit.per_second);
            let refused = MethodResponse::error(ErrorObject::new(LIMIT_EXCEEDED, message));
            return Box::pin(async move { Ok(refused) });
        }
        Box::pin(self.inner.call(call))
    }
}

/// The hook: `Authorization: Bearer <token>`; admins get `admin`.
fn authenticate(info: &rpc_runtime::ConnectionInfo, cx: Context) -> Result<Context, Refused> {
    let headers =
        &info.part::<rpc_runtime::http::request::Parts>().ok_or_else(|| Refused::forbidden("HTTP only"))?.headers;
    let token = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .ok_or_else(|| Refused::unauthorized("no bearer token"))?;
    match token {
        "admin-token" => Ok(cx.with_extension(Caller("admin".into())).with_extension(Permissions::new(["admin"]))),
        "user-token" => Ok(cx.with_extension(Caller("user".into()))),
        _ => Err(Refused::forbidden("unknown token")),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let _log = examples::init_logging();
    let server = Server::new(Count(0.into()).into_rpc())
        .on_connect(authenticate)
        .layer(RateLimitLayer { per_second: 20, windows: Arc::default() })
        .layer(LogLayer);
    eprintln!("listening on http://127.0.0.1:8080 (and ws://127.0.0.1:8080); Ctrl-C stops");
    let listener = rpc_runtime::transport::http::Http::default().bind("127.0.0.1:8080").await?;
    server
        .serve(listener)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
