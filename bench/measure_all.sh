#!/usr/bin/env bash
# Every ratio BENCHMARKS.md reports, measured in one run on one machine, as
# Markdown on stdout (progress on stderr). From bench/, after
# `cargo build --release --bins`; needs valgrind, taskset and nats-server
# on PATH (and perf for section 16). Takes about 40 minutes; nothing else
# should run meanwhile.
#   ./measure_all.sh > /tmp/ratios.md
#   QUICK=1 (one short pass of each), FROM=N (start at section N, from 1),
#   ONLY=1,3 (just those sections)
set -euo pipefail
cd "$(dirname "$0")"
runs=${QUICK:+1}
secs=${QUICK:+2}
items=${QUICK:+200000}
n=0
section() {
  n=$((n + 1))
  if (( n < ${FROM:-1} )); then return 1; fi
  if [[ -n ${ONLY:-} && ",$ONLY," != *",$n,"* ]]; then return 1; fi
  printf '\n### %s\n\n' "$1"
  echo "measure_all: $n. $1" >&2
}
pinned() { LOAD_SERVER_WRAPPER="taskset -c 0" target/release/load --seconds "${secs:-5}" "$@" 2>/dev/null; }
if section "In process, instructions per call (callgrind)"; then ./inprocess_instructions.sh; fi
if section "In process, time per call (criterion medians)"; then
  cargo bench --quiet --bench dispatch >/dev/null 2>&1
  cargo run --quiet --release --bin ratios
fi
if section "TCP NDJSON stream, instructions per request (callgrind)"; then TARGETS=ours,handwritten ./stream_instructions.sh; fi
if section "TCP NDJSON stream, time and server CPU per request"; then
  # In turns, the load on the other core: one pass per target moved by
  # more than the gap between them.
  LOAD_SERVER_WRAPPER="taskset -c 0" taskset -c 1 target/release/load --seconds "${secs:-3}" --rounds "${runs:-11}" \
    --targets ours,handwritten 2>/dev/null
fi
if section "NATS request/reply"; then
  target/release/load --targets ours-nats,handwritten-nats --connections 8 --depth 16 --seconds "${secs:-5}" 2>/dev/null
fi
if section "HTTP/1.1, instructions per request (callgrind)"; then TARGETS=ours-http,hyper-http ./stream_instructions.sh; fi
if section "HTTP/1.1, time and server CPU per request"; then pinned --targets ours-http,hyper-http,jsonrpsee-http; fi
if section "HTTP/1.1, batch of 10, time and server CPU per request"; then
  pinned --targets ours-http,hyper-http,jsonrpsee-http --batch 10
fi
if section "h2c, time and server CPU per request"; then pinned --targets ours-h2c,jsonrpsee-h2c; fi
if section "HTTPS against HTTP, instructions per request (callgrind; single and batch of 10)"; then
  TARGETS=ours-http,ours-https ./stream_instructions.sh
  TARGETS=ours-http,ours-https ./stream_instructions.sh --batch 10
fi
if section "WebSocket, instructions per request (callgrind)"; then TARGETS=ours-ws,ours,handwritten ./stream_instructions.sh; fi
if section "WebSocket, time and server CPU per request"; then pinned --targets ours-ws,jsonrpsee-ws,handwritten; fi
if section "Memory per idle TCP connection"; then target/release/idle --connections 2000 --rounds "${runs:-3}"; fi
if section "Subscriptions"; then
  target/release/subscriptions --items "${items:-1000000}" --runs "${runs:-5}" 2>/dev/null
fi
if section "Compile time of a 50-method trait"; then compile/run.sh "${runs:-3}" 2>/dev/null; fi
if section "In process, CPU time per call (perf stat, alternating)"; then RUNS=${runs:-7} ./inprocess_cpu.sh; fi
if section "In process, time per call, ours and the floor taking turns in one process"; then
  RUNS=${runs:-7} ./inprocess_pair.sh
fi
if section "In process, time per call over code layouts (lld --shuffle-sections)"; then
  SEEDS=${runs:-7} RUNS=3 ./inprocess_shuffled.sh 2>/dev/null
fi
