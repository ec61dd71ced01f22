//! Prints the in-process ratios from criterion's last run as a Markdown
//! table: ours/handwritten and ours/jsonrpsee (median time per call).
//!
//! `cargo run --release --bin ratios` (from `bench/`, after `cargo bench`).

use std::path::{Path, PathBuf};

fn median_ns(root: &Path, case: &str, implementation: &str) -> Option<f64> {
    let path = root.join(case).join(implementation).join("new").join("estimates.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["median"]["point_estimate"].as_f64()
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/criterion"));
    println!("| case | ours | handwritten | jsonrpsee | ours/handwritten | ours/jsonrpsee |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let mut missing = true;
    for case in rpc_bench::cases::all() {
        let times = ["ours", "handwritten", "jsonrpsee"].map(|i| median_ns(&root, case.name, i));
        let [Some(ours), Some(hand), Some(jrs)] = times else {
            eprintln!("no complete criterion results for `{}` under {}", case.name, root.display());
            continue;
        };
        missing = false;
        println!(
            "| {} | {:.0} ns | {:.0} ns | {:.0} ns | {:.2}x | {:.2}x |",
            case.name,
            ours,
            hand,
            jrs,
            ours / hand,
            ours / jrs
        );
    }
    if missing {
        eprintln!("run `cargo bench --bench dispatch` first");
        std::process::exit(1);
    }
}
