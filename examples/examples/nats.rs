//! A service over NATS, its server and its client in one process: a
//! `NatsListener` serves the router on a subject as one replica of a queue
//! group, and a `NatsConnect` peer calls it through the broker with the
//! typed client. Then the replica drains: it leaves the queue group,
//! answers what it already received, and stops.
//!
//! It needs a NATS server running (`nats-server` from nats.io, or your
//! distribution's package):
//!
//! ```text
//! nats-server -a 127.0.0.1 -p 4222
//! cargo run --example nats --no-default-features --features nats [-- nats://127.0.0.1:4222]
//! ```
//!
//! In production the replicas are separate processes (any number, on any
//! machines, in one queue group: the broker gives each call to one of
//! them); `calculator --nats URL --subject SUBJECT` is such a replica and
//! `nats_client` calls it.

use std::time::Duration;

use rpc_runtime::transport::nats::{async_nats, NatsConnect, NatsListener, NO_RESPONDERS};
use rpc_runtime::{rpc, Peer, RpcError, Server};

/// The subject the service is served on (and the name of its queue group).
const SUBJECT: &str = "svc.calculator";

/// Integer arithmetic.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;

    /// Divides `dividend` by `divisor`.
    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;
}

/// The calculator's errors.
#[derive(Debug, RpcError)]
pub enum CalcError {
    /// The divisor was zero.
    #[rpc(code = 1, message = "Division by zero")]
    DivisionByZero,
}

struct Calc;

impl Calculator for Calc {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }

    fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError> {
        dividend.checked_div(divisor).ok_or(CalcError::DivisionByZero)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).unwrap_or_else(|| "nats://127.0.0.1:4222".to_owned());
    let connect = || async {
        async_nats::connect(&url).await.map_err(|err| {
            format!("cannot reach a NATS server at {url} ({err}); start one with `nats-server -a 127.0.0.1 -p 4222`")
        })
    };

    // The replica: serves SUBJECT in queue group SUBJECT until told to stop.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = NatsListener::new(connect().await?, SUBJECT, SUBJECT);
    let serving = tokio::spawn(Server::new(Calc.into_rpc()).serve(listener).with_graceful_shutdown(async {
        stopped.await.ok();
    }));

    // The client: every call is a NATS request on SUBJECT. Set a timeout:
    // a replica that dies before answering is never heard from again.
    let peer =
        Peer::builder().timeout(Duration::from_secs(5)).connect(NatsConnect::new(connect().await?, SUBJECT)).await?;
    let calc = CalculatorClient::new(peer);

    // Until the replica's subscription reaches the broker, a call fails at
    // once with "no responders" (as it does when no replica runs at all).
    let mut difference = calc.subtract(42, 23).await;
    for _ in 0..50 {
        match &difference {
            Err(err) if err.server_error().is_some_and(|error| error.code() == NO_RESPONDERS) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                difference = calc.subtract(42, 23).await;
            }
            _ => break,
        }
    }
    println!("42 - 23 = {}", difference?);

    match calc.divide(1, 0).await {
        Err(err) => println!("1 / 0: {err}"),
        Ok(quotient) => println!("1 / 0 = {quotient}?"),
    }

    // A batch is one NATS message each way.
    let mut batch = calc.batch();
    let (a, b) = (batch.subtract(10, 1), batch.divide(10, 2));
    batch.send().await?;
    println!("batch: 10 - 1 = {}, 10 / 2 = {}", a.await?, b.await?);

    // Graceful drain: leave the queue group, answer what was received.
    stop.send(()).ok();
    serving.await??;
    println!("drained: the replica answered every call and left the queue group");
    Ok(())
}
