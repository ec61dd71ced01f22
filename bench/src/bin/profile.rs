//! Runs one in-process case many times with one implementation, for a
//! profiler: `valgrind --tool=callgrind target/release/profile positional ours 100000`.

use std::hint::black_box;

use rpc_bench::{cases, handwritten, jsonrpsee_impl, ours};
use rpc_runtime::Context;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, implementation, iterations] = args.as_slice() else {
        eprintln!("usage: profile <case> <ours|handwritten|jsonrpsee> <iterations>");
        std::process::exit(2);
    };
    let Some(case) = cases::all().into_iter().find(|c| c.name == case) else {
        eprintln!("unknown case `{case}`");
        std::process::exit(2);
    };
    let iterations: u64 = iterations.parse().expect("iterations is a number");
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
