//! Health checks beside the service in an axum app: the JSON-RPC service
//! at `/rpc`, liveness at `/livez`, readiness at `/readyz`. Readiness
//! turns to 503 as soon as graceful shutdown starts, so a load balancer
//! stops sending work while the server still answers what it has. The
//! example serves, probes and calls itself, then shuts down.
//!
//! ```text
//! cargo run --example axum_health
//! cargo run --example axum_health --no-default-features --features axum
//! ```

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::get;
use rpc_runtime::transport::http::{Http, HttpConnect};
use rpc_runtime::{rpc, Peer, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a stopping server keeps serving after readiness turned 503,
/// for the balancer to notice (a few of its probe intervals, in practice).
const DRAIN: Duration = Duration::from_millis(500);

/// A calculator.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
}

struct Calc;

impl Calculator for Calc {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let server = Server::new(Calc.into_rpc());
    let ready = Arc::new(AtomicBool::new(true));
    let readiness = Arc::clone(&ready);
    let app = axum::Router::new()
        // Liveness: the process answers.
        .route("/livez", get(|| async { "ok" }))
        // Readiness: 503 once shutdown has begun.
        .route(
            "/readyz",
            get(move || {
                let ready = readiness.load(Ordering::Relaxed);
                std::future::ready(if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE })
            }),
        )
        .route_service("/rpc", Http::default().service(&server));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                stopping.await.ok(); // Ctrl-C or SIGTERM, in a real service
                ready.store(false, Ordering::Relaxed);
                tokio::time::sleep(DRAIN).await; // then stop accepting
            })
            .await
    });
    println!("serving http://{addr}/rpc, /livez and /readyz");

    println!("GET /livez  -> {}", get_status(addr, "/livez").await?);
    println!("GET /readyz -> {}", get_status(addr, "/readyz").await?);
    let calc = CalculatorClient::new(Peer::builder().connect(HttpConnect::new(format!("http://{addr}/rpc"))).await?);
    println!("POST /rpc subtract(42, 23) -> {}", calc.subtract(42, 23).await?);

    stop.send(()).ok();
    let mut status = get_status(addr, "/readyz").await?;
    while status.contains(" 200 ") {
        tokio::time::sleep(Duration::from_millis(10)).await;
        status = get_status(addr, "/readyz").await?;
    }
    println!("shutting down: GET /readyz -> {status}");
    println!("POST /rpc still served: subtract(1, 2) -> {}", calc.subtract(1, 2).await?);
    serving.await??;
    println!("stopped");
    Ok(())
}

/// The status line of a plain `GET` (HTTP/1.1, one request per
/// connection), as a probe sends it.
async fn get_status(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response.lines().next().unwrap_or_default().to_owned())
}
