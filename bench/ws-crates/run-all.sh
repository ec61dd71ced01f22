#!/usr/bin/env bash
# Runs every measurement for every server; results go to results/*.txt.
# Usage: bash run-all.sh   (from bench/ws-crates; builds first)
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="$PWD/target"
cargo build --release -j2
bin=target/release/ws-crates
servers="tungstenite tungstenite-tuned tokio-websockets tokio-websockets-interleaved fastwebsockets fastwebsockets-batched"
mkdir -p results
: > results/callgrind.txt; : > results/syscalls.txt; : > results/bench.txt
for s in $servers; do $bin callgrind "$s" 50 150 | tee -a results/callgrind.txt; done
for s in $servers; do $bin syscalls "$s" 200 | tee -a results/syscalls.txt; done
for round in 1 2 3; do
  for s in $servers; do $bin bench "$s" --bursts 2000 2>&1 | grep -v "connection ended with error" | tee -a results/bench.txt; done
done
