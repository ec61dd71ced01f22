//! Runs one in-process case many times with one implementation, for a
//! profiler: `valgrind --tool=callgrind target/release/profile positional ours 100000`.
//!
//! `profile <case> pair <iterations>` times ours against the lean floor in
//! one process instead: batches of calls of each, taking turns (the order
//! swapped every round), so that both see the same moment of a noisy
//! machine; it prints the median of the per-round ratios and the ratio of
//! the summed times (see `inprocess_pair.sh`).
//!
//! With `SPANS=1` a registry is the global subscriber, so that each call's
//! `rpc.call` span is made, entered and closed: what a span per call
//! costs when something listens (see `span_instructions.sh`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use rpc_bench::{cases, handwritten, jsonrpsee_impl, ours};
use rpc_runtime::Context;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, implementation, iterations] = args.as_slice() else {
        eprintln!("usage: profile <case> <ours|handwritten|jsonrpsee|pair> <iterations>");
        std::process::exit(2);
    };
    let Some(case) = cases::all().into_iter().find(|c| c.name == case) else {
        eprintln!("unknown case `{case}`");
        std::process::exit(2);
    };
    let iterations: u64 = iterations.parse().expect("iterations is a number");
    if std::env::var_os("SPANS").is_some() {
        use tracing_subscriber::util::SubscriberInitExt;
        tracing_subscriber::registry().init();
    }
    let message = case.message.as_bytes();
    let mut out = Vec::with_capacity(4096);
    match implementation.as_str() {
        "ours" => {
            let engine = ours::engine();
            let cx = Context::default();
            for _ in 0..iterations {
                ours::call(&engine, &cx, black_box(message), &mut out);
            }
        }
        "handwritten" => {
            for _ in 0..iterations {
                out.clear();
                handwritten::handle(black_box(message), &mut out);
            }
        }
        "pair" => pair(message, iterations, &mut out),
        "jsonrpsee" => {
            let module = jsonrpsee_impl::module();
            for _ in 0..iterations {
                if case.batch {
                    jsonrpsee_impl::call_batch(&module, &case.message, &mut out);
                } else {
                    black_box(jsonrpsee_impl::call(&module, &case.message));
                }
            }
        }
        other => {
            eprintln!("unknown implementation `{other}`");
            std::process::exit(2);
        }
    }
    black_box(out);
}

/// Calls per batch in `pair` mode: long enough that reading the clock is
/// noise (a batch takes 0.3 ms or more), short enough that both sides of a
/// round run at nearly the same moment.
const PAIR_BATCH: u64 = 2_000;

/// Ours and the floor, `iterations` calls each, in alternating batches;
/// prints `ours_ns floor_ns median_ratio sum_ratio` (per call).
fn pair(message: &[u8], iterations: u64, out: &mut Vec<u8>) {
    let engine = ours::engine();
    let cx = Context::default();
    let run_ours = |calls: u64, out: &mut Vec<u8>| {
        let start = Instant::now();
        for _ in 0..calls {
            ours::call(&engine, &cx, black_box(message), out);
        }
        start.elapsed()
    };
    let run_floor = |calls: u64, out: &mut Vec<u8>| {
        let start = Instant::now();
        for _ in 0..calls {
            out.clear();
            handwritten::handle(black_box(message), out);
        }
        start.elapsed()
    };
    // Warm both up (caches, branch predictors, the allocator).
    run_ours(PAIR_BATCH, out);
    run_floor(PAIR_BATCH, out);
    let rounds = (iterations / PAIR_BATCH).max(1);
    let (mut ours_total, mut floor_total) = (Duration::ZERO, Duration::ZERO);
    let mut ratios = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        let (ours_time, floor_time) = if round % 2 == 0 {
            let a = run_ours(PAIR_BATCH, out);
            (a, run_floor(PAIR_BATCH, out))
        } else {
            let b = run_floor(PAIR_BATCH, out);
            (run_ours(PAIR_BATCH, out), b)
        };
        ours_total += ours_time;
        floor_total += floor_time;
        ratios.push(ours_time.as_secs_f64() / floor_time.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let calls = (rounds * PAIR_BATCH) as f64;
    println!(
        "{:.1} {:.1} {:.3} {:.3}",
        ours_total.as_secs_f64() * 1e9 / calls,
        floor_total.as_secs_f64() * 1e9 / calls,
        ratios[ratios.len() / 2],
        ours_total.as_secs_f64() / floor_total.as_secs_f64()
    );
}
