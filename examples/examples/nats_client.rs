//! Calls the calculator served over NATS by any number of replicas (see
//! the README's NATS section):
//!
//! ```text
//! cargo run --example nats_client -- [URL] [SUBJECT] [CALLS]
//! ```
//!
//! Defaults: `nats://127.0.0.1:4222`, `svc.calculator`, 1000 calls, made
//! from 8 tasks at once; prints the first answers and a summary.

use std::time::{Duration, Instant};

use rpc_runtime::transport::nats::async_nats;
use rpc_runtime::{rpc, Peer};

/// The calculator's `subtract`, as a client sees it.
#[rpc]
pub trait Calculator {
    /// Subtracts `subtrahend` from `minuend`.
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _log = examples::init_logging();
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "nats://127.0.0.1:4222".to_owned());
    let subject = args.next().unwrap_or_else(|| "svc.calculator".to_owned());
    let calls: i64 = args.next().map_or(Ok(1000), |n| n.parse())?;

    let client = async_nats::connect(&url).await?;
    let peer = Peer::builder()
        .timeout(Duration::from_secs(5))
        .connect(rpc_runtime::transport::nats::NatsConnect::new(client, &subject))
        .await?;
    let calc = CalculatorClient::new(peer);
    println!("42 - 23 = {}", calc.subtract(42, 23).await?);

    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..8 {
        let calc = calc.clone();
        tasks.spawn(async move {
            let mut failed = 0;
            for n in (task..calls).step_by(8) {
                match calc.subtract(n, 1).await {
                    Ok(answer) if answer == n - 1 => {}
                    Ok(answer) => panic!("{n} - 1 = {answer}?"),
                    Err(err) => {
                        eprintln!("call {n} failed: {err}");
                        failed += 1;
                    }
                }
            }
            failed
        });
    }
    let mut failed = 0;
    while let Some(done) = tasks.join_next().await {
        failed += done?;
    }
    println!("{calls} calls in {:?}, {failed} failed", started.elapsed());
    Ok(())
}
