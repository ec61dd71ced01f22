#!/usr/bin/env bash
# Time per in-process call over code layouts: `profile` linked SEEDS
# times with its functions in a different order each time (lld's
# `--shuffle-sections`, rustc's default linker on x86_64 Linux), each
# measured as `inprocess_pair.sh` does (ours and the lean floor taking
# turns in one process, RUNS runs per case). Prints, per case, the median
# over the layouts of each layout's median and their range. The time of
# the smallest calls moved with the layout by more than the gaps being
# measured (zero params, one source: 1.07x in the usual link, 1.07x-1.17x
# over 8 orders); this says what a call costs whatever the layout.
# Run from bench/ after `cargo build --release --bins`; leaves
# target/release/profile linked as usual again.
# SEEDS=8 RUNS=3 CASES=positional,... N=2000000 CORE=1
set -euo pipefail
seeds=${SEEDS:-8}
cases=${CASES:-positional,named,zero_params,echo_1kb,batch_10,unknown_method,invalid_params}
work=$(mktemp -d)
mkdir -p "$work/target/release"
trap 'rm -rf "$work"' EXIT
for ((seed = 1; seed <= seeds; seed++)); do
  echo "inprocess_shuffled: layout $seed of $seeds" >&2
  cargo rustc --quiet --release --bin profile -- -C link-arg=-Wl,--shuffle-sections="*=$seed"
  cp target/release/profile "$work/target/release/profile"
  (cd "$work" && RUNS=${RUNS:-3} CASES=$cases "$OLDPWD/inprocess_pair.sh") |
    awk -v seed="$seed" -F'|' 'NR > 2 { gsub(/ |x/, "", $5); print $2, seed, $5 }' >>"$work/ratios"
done
cargo build --quiet --release --bin profile
echo '| case | ours / floor, median of the layouts | range over the layouts | every layout |'
echo '| --- | ---: | ---: | --- |'
for case in ${cases//,/ }; do
  awk -v c="$case" '$1 == c { print $3 }' "$work/ratios" | sort -g | awk -v c="$case" '
    { r[NR] = $1; all = all (NR > 1 ? ", " : "") sprintf("%.2f", $1) }
    END {
      m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
      printf "| %s | %.2fx | %.2fx-%.2fx | %s |\n", c, m, r[1], r[NR], all
    }'
done
