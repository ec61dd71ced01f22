#!/usr/bin/env bash
# Instructions and allocations per request of the MCP server thread, by
# callgrind (one output per thread, `--separate-threads=yes`): `mcp_cpu`
# with one implementation and one kind, run with N and 2N requests after
# the same warm-up; the server thread's difference over N. Allocations are
# the calls of malloc, calloc, realloc and posix_memalign the thread made.
# Counts repeat to within a few instructions; they leave out system calls,
# cache misses and the load of the machine (see mcp_compare.sh for time).
#
#   ./mcp_instructions.sh       # after ./mcp_compare.sh (or SKIP_BUILD=0)
#   N=2000 IMPLS=ours,rmcp KINDS=echo,echo1k,read,prompt,list BIN=target/mcp/mcp_cpu
set -euo pipefail
cd "$(dirname "$0")"
n=${N:-2000}
impls=${IMPLS:-ours,rmcp}
kinds=${KINDS:-echo,echo1k,read,prompt,list}
bin=${BIN:-target/mcp/mcp_cpu}
if [ "${SKIP_BUILD:-1}" != 1 ]; then
    nice -n "${NICE:-10}" cargo build --release --bin mcp_cpu --features mcp,features39,rmcp >&2
    mkdir -p target/mcp && cp target/release/mcp_cpu "$bin"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# "instructions allocations" of the server thread (the second thread).
count() {
    rm -f "$out"/cg*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg" \
        "$bin" --impls "$1" --kinds "$2" --rounds 1 --requests "$3" --warmup 500 >/dev/null 2>&1
    local file="$out/cg-02"
    local instructions
    instructions=$(grep -m1 '^summary' "$file" | awk '{print $2}')
    local allocations
    allocations=$(awk '
        /^c?fn=\([0-9]+\) / { id = substr($1, index($1, "(") + 1); id = substr(id, 1, index(id, ")") - 1); names[id] = $2 }
        /^cfn=/ { id = substr($1, index($1, "(") + 1); id = substr(id, 1, index(id, ")") - 1); callee = names[id] }
        /^calls=/ { if (callee == "malloc" || callee == "calloc" || callee == "realloc" || callee == "posix_memalign") { split($1, c, "="); total += c[2] } }
        END { print total + 0 }' "$file")
    echo "$instructions $allocations"
}

read -r first second _ <<<"${impls//,/ } _"
printf '| request |'
for impl in ${impls//,/ }; do printf ' %s: instructions |' "$impl"; done
[ -n "$second" ] && [ "$second" != _ ] && printf ' %s / %s |' "$first" "$second"
for impl in ${impls//,/ }; do printf ' %s: allocations |' "$impl"; done
echo
printf '| --- |'
for impl in ${impls//,/ } ${impls//,/ }; do printf ' ---: |'; done
[ -n "$second" ] && [ "$second" != _ ] && printf ' ---: |'
echo
for kind in ${kinds//,/ }; do
    instructions=()
    allocations=()
    for impl in ${impls//,/ }; do
        read -r i1 a1 <<<"$(count "$impl" "$kind" "$n")"
        read -r i2 a2 <<<"$(count "$impl" "$kind" $((2 * n)))"
        instructions+=($(( (i2 - i1) / n )))
        allocations+=("$(awk -v a="$a1" -v b="$a2" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')")
    done
    printf '| %s |' "$kind"
    for i in "${instructions[@]}"; do printf ' %s |' "$i"; done
    if [ "${#instructions[@]}" -ge 2 ]; then
        awk -v a="${instructions[0]}" -v b="${instructions[1]}" 'BEGIN { printf " %.2fx |", a / b }'
    fi
    for a in "${allocations[@]}"; do printf ' %s |' "$a"; done
    echo
done
