#!/usr/bin/env bash
# CPU time per in-process call, ours against the lean floor: `profile <case>
# <impl> N` under `perf stat -e task-clock` (software event; no hardware
# counters needed), minus the same with 0 iterations, divided by N; the two
# implementations alternate, RUNS rounds, pinned to one core (CORE=1), and
# the median of each is printed with their ratio. Run from bench/ after
# `cargo build --release --bin profile`. CASES=positional,... N=1000000
# (the echo and the batch run N/10). A second look at criterion's times:
# on a shared VM both move by 10-30% between runs, with code layout as
# much as with code.
set -euo pipefail
n_calls=${N:-1000000}
runs=${RUNS:-5}
core=${CORE:-1}
cases=${CASES:-positional,named,zero_params,echo_1kb,batch_10,unknown_method,invalid_params}
cpu_ms() {
  taskset -c "$core" perf stat -x, -e task-clock target/release/profile "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo '| case | ours | lean floor | ours / floor |'
echo '| --- | ---: | ---: | ---: |'
for case in ${cases//,/ }; do
  n=$n_calls
  if [[ $case == echo_1kb || $case == batch_10 ]]; then n=$((n_calls / 10)); fi
  ours=() floor=()
  for ((run = 1; run <= runs; run++)); do
    for impl in ours handwritten; do
      ns=$(awk -v a="$(cpu_ms "$case" "$impl" "$n")" -v b="$(cpu_ms "$case" "$impl" 0)" -v n="$n" 'BEGIN { print (a - b) * 1e6 / n }')
      if [[ $impl == ours ]]; then ours+=("$ns"); else floor+=("$ns"); fi
    done
  done
  o=$(printf '%s\n' "${ours[@]}" | median)
  f=$(printf '%s\n' "${floor[@]}" | median)
  awk -v c="$case" -v o="$o" -v f="$f" 'BEGIN { printf "| %s | %.0f ns | %.0f ns | %.2fx |\n", c, o, f, o / f }'
done
