#!/usr/bin/env bash
# Instructions per call of each in-process case, by callgrind: `profile
# <case> <impl> N` minus the same with 0 iterations (which leaves out
# start-up and setup), divided by N. Run from bench/ after
# `cargo build --release --bin profile`. IMPLS=ours,handwritten,jsonrpsee
# and CASES=positional,named,... choose what is measured; N=20000 by default.
# The last column divides the first implementation's count by the second's.
set -euo pipefail
n=${N:-20000}
impls=${IMPLS:-ours,handwritten}
cases=${CASES:-positional,named,zero_params,echo_1kb,batch_10,unknown_method,invalid_params}
out=$(mktemp -d)
total() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" target/release/profile "$1" "$2" "$3" >/dev/null 2>&1
  grep -m1 '^summary' "$out/cg" | awk '{print $2}'
}
read -r first second _ <<<"${impls//,/ }"
printf '| case |'; for impl in ${impls//,/ }; do printf ' %s |' "$impl"; done; printf ' %s/%s |\n' "$first" "$second"
printf '| --- |'; for impl in ${impls//,/ }; do printf ' ---: |'; done; printf ' ---: |\n'
for case in ${cases//,/ }; do
  printf '| %s |' "$case"
  counts=()
  for impl in ${impls//,/ }; do
    counts+=($(( ($(total "$case" "$impl" "$n") - $(total "$case" "$impl" 0)) / n )))
    printf ' %s |' "${counts[-1]}"
  done
  awk -v a="${counts[0]}" -v b="${counts[1]}" 'BEGIN{printf " %.2fx |\n", a/b}'
done
rm -rf "$out"
