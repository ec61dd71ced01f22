//! Middleware around every call: `Server::layer` takes any tower `Layer`.
//! Here tower's own concurrency limit and timeout, and a small layer of
//! our own that logs each call's method, outcome and duration. The same
//! layers apply on every transport; this example calls in process.
//!
//! ```text
//! cargo run --example middleware
//! cargo run --example middleware --no-default-features --features tower
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use rpc_runtime::dispatch::{MethodCall, MethodResponse};
use rpc_runtime::wire::LIMIT_EXCEEDED;
use rpc_runtime::{rpc, ErrorObject, Peer, Server};
use tower::{Layer, Service, ServiceBuilder};

/// A service whose calls take as long as asked.
#[rpc]
pub trait Slow {
    /// Waits `ms` milliseconds, then answers them.
    async fn wait(&self, ms: u64) -> u64;
}

struct Waiter;

impl Slow for Waiter {
    async fn wait(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
}

/// Logs every call that passes through it.
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
    S::Error: std::fmt::Display,
    S::Future: Send + 'static,
{
    type Response = MethodResponse;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<MethodResponse, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    // Called once the inner layers are ready (the concurrency limit gave
    // a slot): the time below runs from there.
    fn call(&mut self, call: MethodCall) -> Self::Future {
        let method = call.method().to_owned();
        let started = Instant::now();
        let response = self.0.call(call);
        Box::pin(async move {
            let response = response.await;
            let outcome = match &response {
                Ok(answer) => answer.error_object().map_or_else(|| "ok".to_owned(), |e| format!("error {}", e.code())),
                Err(error) => format!("failed: {error}"), // the timeout's error, made -32005 later
            };
            println!("  [log] {method}: {outcome} after {} ms", started.elapsed().as_millis());
            response
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // A `ServiceBuilder` reads top down: the first layer is outermost, so
    // the log sees the timeout's error too.
    let server = Server::new(Waiter.into_rpc()).layer(
        ServiceBuilder::new()
            .layer(LogLayer)
            .concurrency_limit(2) // at most 2 calls at once; the next ones wait
            .timeout(Duration::from_millis(300)), // a call running longer: -32005
    );
    let slow = SlowClient::new(Peer::builder().connect(server).await?);

    println!("one call of 10 ms:");
    slow.wait(10).await?;

    // Four calls of 100 ms at once: two run, two wait for a slot, so the
    // last answer comes after about 200 ms.
    println!("four calls of 100 ms at once, two at a time:");
    let started = Instant::now();
    let (a, b, c, d) = tokio::join!(slow.wait(100), slow.wait(100), slow.wait(100), slow.wait(100));
    for answer in [a, b, c, d] {
        answer?;
    }
    println!("all four answered after {} ms", started.elapsed().as_millis());

    println!("one call of 1 s, over the timeout:");
    let error = slow.wait(1_000).await.expect_err("the call times out");
    let code = error.server_error().map(ErrorObject::code);
    println!("error {code:?} (LIMIT_EXCEEDED is {LIMIT_EXCEEDED}): {error}");
    assert_eq!(code, Some(LIMIT_EXCEEDED));
    Ok(())
}
