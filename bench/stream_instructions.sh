#!/usr/bin/env bash
# Instructions per request of each stream server, by callgrind, under the
# load of `load` (16 connections x 32 pipelined requests; HTTP targets one
# request in flight per connection), the server pinned to one core. Two
# runs of different lengths per target; the difference of their totals
# over the difference of their request counts
# leaves out start-up. Requests are counted exactly, as the calls callgrind
# saw to the function that answers one message (summed over every place
# that calls it: a caller the compiler inlined in two places calls it from
# both). Run from bench/ after
# `cargo build --release --bin load`. Also for the HTTP and WebSocket
# targets: TARGETS=ours-http,hyper-http, TARGETS=ours-http,ours-http-hook,hyper-http
# (the connection hook's cost), TARGETS=ours-http,ours-h2c or TARGETS=ours-ws,ours; extra
# arguments go to `load` (--batch 10, --ws-client tungstenite).
# Each line also splits the count: the answering function's inclusive
# instructions per request (the handler, or our engine) and the rest (the
# transport: reading, framing, queueing and writing, waking up).
set -euo pipefail
short=${SHORT:-3}
long=${LONG:-10}
targets=${TARGETS:-ours,handwritten}
out=$(mktemp -d)
declare -A instr requests inside
for secs in "$short" "$long"; do
  rm -f "$out"/cg.*
  report=$(LOAD_SERVER_WRAPPER="taskset -c 0 valgrind --tool=callgrind --callgrind-out-file=$out/cg.%p" \
    target/release/load --targets "$targets" --seconds "$secs" "$@" 2>/dev/null)
  files=($(ls -tr "$out"/cg.*))
  i=0
  for target in ${targets//,/ }; do
    case $target in
      handwritten|hyper-http) answer='rpc_bench::handwritten::handle' ;;
      ours-http|ours-http-hook|ours-http-token|ours-http-oauth|ours-h2c|ours-https) answer='rpc_runtime::dispatch::engine::Engine::process' ;;
      *) answer='rpc_runtime::dispatch::engine::incoming::<impl rpc_runtime::dispatch::engine::Engine>::process_incoming' ;;
    esac
    instr[$target,$secs]=$(grep -m1 '^summary' "${files[$i]}" | awk '{print $2}')
    requests[$target,$secs]=$(callgrind_annotate --inclusive=yes --tree=calling "${files[$i]}" 2>/dev/null |
      grep -E '^ *[0-9,]+ \([ 0-9.]+%\) +> ' | grep -F ":$answer (" | grep -oE '\([0-9,]+x\)' | tr -d '(),x' |
      awk '{n+=$1} END{print n}')
    inside[$target,$secs]=$(callgrind_annotate --inclusive=yes "${files[$i]}" 2>/dev/null |
      grep -F ":$answer [" | awk '{gsub(",", "", $1); n+=$1} END{print n+0}')
    i=$((i+1))
  done
done
for target in ${targets//,/ }; do
  awk -v t="$target" -v a="${instr[$target,$long]}" -v b="${instr[$target,$short]}" \
      -v c="${requests[$target,$long]}" -v d="${requests[$target,$short]}" \
      -v e="${inside[$target,$long]}" -v f="${inside[$target,$short]}" \
      'BEGIN{n=c-d; printf "%s: %.0f instructions per request (answering %.0f, transport %.0f)\n", t, (a-b)/n, (e-f)/n, (a-b-e+f)/n}'
done
rm -rf "$out"
