#!/usr/bin/env bash
# Time per in-process call, ours against the lean floor, measured in one
# process: `profile <case> pair N` runs batches of 2,000 calls of each,
# taking turns (the order swapped every round), so that both see the same
# moment of a noisy machine, and prints the median of the per-batch
# ratios. This script runs it RUNS times per case (pinned to CORE) and
# prints the median of those medians, with the range. Separate processes
# (`inprocess_cpu.sh`) moved by more than the gap being measured on this
# VM; this does not. Run from bench/ after `cargo build --release --bin
# profile`. CASES=positional,... N=2000000 (the echo and the batch N/10).
set -euo pipefail
n_calls=${N:-2000000}
runs=${RUNS:-5}
core=${CORE:-1}
cases=${CASES:-positional,named,zero_params,echo_1kb,batch_10,unknown_method,invalid_params}
echo '| case | ours | lean floor | ours / floor (median of runs) | range |'
echo '| --- | ---: | ---: | ---: | ---: |'
for case in ${cases//,/ }; do
  n=$n_calls
  if [[ $case == echo_1kb || $case == batch_10 ]]; then n=$((n_calls / 10)); fi
  for ((run = 1; run <= runs; run++)); do
    taskset -c "$core" target/release/profile "$case" pair "$n"
  done | sort -k3 -g | awk -v c="$case" '
    { ours[NR] = $1; floor[NR] = $2; ratio[NR] = $3 }
    END {
      m = int((NR + 1) / 2)
      printf "| %s | %.0f ns | %.0f ns | %.2fx | %.2fx-%.2fx |\n", c, ours[m], floor[m], ratio[m], ratio[1], ratio[NR]
    }'
done
