#!/usr/bin/env bash
# What a span per call costs, in instructions per call (callgrind), with a
# registry as the subscriber so that every call's `rpc.call` span is made,
# entered and closed (`SPANS=1 profile`), next to the same with no
# subscriber. Run from bench/ with the `profile` binaries to compare as
# arguments, e.g. one built before a change and one after:
#
#   cargo build --release --bin profile && cp target/release/profile /tmp/profile-after
#   bench/span_instructions.sh /tmp/profile-before /tmp/profile-after
#
# CASES and N as in inprocess_instructions.sh. The ratio columns divide
# each later binary's count by the first's.
set -euo pipefail
n=${N:-20000}
cases=${CASES:-positional,named,echo_1kb}
out=$(mktemp -d)
total() { # binary spans case iterations
  env ${2:+SPANS=1} valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$1" "$3" ours "$4" >/dev/null 2>&1
  grep -m1 '^summary' "$out/cg" | awk '{print $2}'
}
printf '| case | spans |'; for bin in "$@"; do printf ' %s |' "$(basename "$bin")"; done
for bin in "${@:2}"; do printf ' %s/%s |' "$(basename "$bin")" "$(basename "$1")"; done; printf '\n'
printf '| --- | --- |'; for _ in "$@" "${@:2}"; do printf ' ---: |'; done; printf '\n'
for case in ${cases//,/ }; do
  for spans in "" 1; do
    printf '| %s | %s |' "$case" "$([ -n "$spans" ] && echo on || echo off)"
    counts=()
    for bin in "$@"; do
      counts+=($(( ($(total "$bin" "$spans" "$case" "$n") - $(total "$bin" "$spans" "$case" 0)) / n )))
      printf ' %s |' "${counts[-1]}"
    done
    for count in "${counts[@]:1}"; do awk -v a="${counts[0]}" -v b="$count" 'BEGIN{printf " %.3fx |", b/a}'; done
    printf '\n'
  done
done
rm -rf "$out"
