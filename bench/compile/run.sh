#!/usr/bin/env bash
# Compile-time benchmark: a 50-method trait with our #[rpc] and with
# jsonrpsee's #[rpc(server, client)] (see gen.py), against the same trait
# with no macro.
#
#   bench/compile/run.sh [RUNS]      (default 5 runs per variant)
#
# For each variant: the median wall time of an incremental debug rebuild
# after touching the trait file (src/api.rs), of a full rebuild of the
# crate alone (`cargo clean -p`, dependencies kept) and its CPU time (user
# + sys, which moves less than wall time on a busy machine), the lines of
# the macro expansion (`cargo rustc -- -Zunpretty=expanded`, with
# RUSTC_BOOTSTRAP=1) and the size of the compiled rlib. Then what each
# macro adds over the plain trait, per method, and ours/jsonrpsee. The
# variants take turns in each of the RUNS rounds.
set -euo pipefail

RUNS=${1:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=$(dirname "$HERE")
OUT="$BENCH/target/compile-bench"
export CARGO_TARGET_DIR="$OUT/target"
export CARGO_TERM_COLOR=never
VARIANTS=(plain ours ours_server jsonrpsee)
METHODS=50

python3 "$HERE/gen.py" "$OUT" "$BENCH/../rpc-runtime"

now() { date +%s.%N; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A BUILD FULL BUILD_CPU FULL_CPU LINES RLIB BUILD_TIMES FULL_TIMES BUILD_CPUS FULL_CPUS

# Wall time and CPU time (user + sys of cargo and the rustc it waits for)
# of one command, as "wall cpu".
timed() {
    local start end cpu
    start=$(now)
    /usr/bin/time -f "%U %S" -o "$OUT/time.txt" "$@"
    end=$(now)
    cpu=$(awk '{ print $1 + $2 }' "$OUT/time.txt")
    echo "$(echo "$end - $start" | bc -l) $cpu"
}

for variant in "${VARIANTS[@]}"; do
    echo "== $variant: first build (dependencies)" >&2
    cargo build --quiet --manifest-path "$OUT/$variant/Cargo.toml"
done
# The variants take turns in every round, so that a change of load on
# the machine weighs on all of them alike.
for ((run = 1; run <= RUNS; run++)); do
    for variant in "${VARIANTS[@]}"; do
        dir="$OUT/$variant"
        touch "$dir/src/api.rs"
        read -r wall cpu < <(timed cargo build --quiet --manifest-path "$dir/Cargo.toml")
        BUILD_TIMES[$variant]+="$wall "
        BUILD_CPUS[$variant]+="$cpu "
    done
done
for ((run = 1; run <= RUNS; run++)); do
    for variant in "${VARIANTS[@]}"; do
        dir="$OUT/$variant"
        cargo clean --quiet --manifest-path "$dir/Cargo.toml" -p "cb_$variant"
        read -r wall cpu < <(timed cargo build --quiet --manifest-path "$dir/Cargo.toml")
        FULL_TIMES[$variant]+="$wall "
        FULL_CPUS[$variant]+="$cpu "
    done
done
for variant in "${VARIANTS[@]}"; do
    dir="$OUT/$variant"
    BUILD[$variant]=$(printf '%s\n' ${BUILD_TIMES[$variant]} | median)
    BUILD_CPU[$variant]=$(printf '%s\n' ${BUILD_CPUS[$variant]} | median)
    FULL[$variant]=$(printf '%s\n' ${FULL_TIMES[$variant]} | median)
    FULL_CPU[$variant]=$(printf '%s\n' ${FULL_CPUS[$variant]} | median)
    echo "== $variant" >&2
    echo "   incremental rebuilds: ${BUILD_TIMES[$variant]}-> median ${BUILD[$variant]} s (CPU ${BUILD_CPUS[$variant]}-> ${BUILD_CPU[$variant]} s)" >&2
    echo "   full crate rebuilds: ${FULL_TIMES[$variant]}-> median ${FULL[$variant]} s (CPU ${FULL_CPUS[$variant]}-> ${FULL_CPU[$variant]} s)" >&2
    LINES[$variant]=$(RUSTC_BOOTSTRAP=1 cargo rustc --quiet --lib --manifest-path "$dir/Cargo.toml" \
        --profile check -- -Zunpretty=expanded 2>/dev/null | wc -l)
    rlib=$(ls -t "$CARGO_TARGET_DIR"/debug/libcb_"$variant".rlib)
    RLIB[$variant]=$(stat -c %s "$rlib")
done

echo
echo "| variant | incremental rebuild (median of $RUNS) | full crate build (median of $RUNS) | full build, CPU | expanded lines | rlib bytes |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for variant in "${VARIANTS[@]}"; do
    printf '| %s | %.2f s | %.2f s | %.2f s | %d | %d |\n' "$variant" "${BUILD[$variant]}" "${FULL[$variant]}" \
        "${FULL_CPU[$variant]}" "${LINES[$variant]}" "${RLIB[$variant]}"
done
echo
echo "What each macro adds over the plain trait:"
echo
echo "| variant | added incremental | added full | added full, CPU | added lines per method | added rlib bytes |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for variant in ours ours_server jsonrpsee; do
    added=$(echo "${BUILD[$variant]} - ${BUILD[plain]}" | bc -l)
    added_full=$(echo "${FULL[$variant]} - ${FULL[plain]}" | bc -l)
    added_cpu=$(echo "${FULL_CPU[$variant]} - ${FULL_CPU[plain]}" | bc -l)
    per_method=$(echo "(${LINES[$variant]} - ${LINES[plain]}) / $METHODS" | bc -l)
    printf '| %s | %.2f s | %.2f s | %.2f s | %.1f | %d |\n' "$variant" "$added" "$added_full" "$added_cpu" \
        "$per_method" "$((RLIB[$variant] - RLIB[plain]))"
done
echo
jr_added=$(echo "${BUILD[jsonrpsee]} - ${BUILD[plain]}" | bc -l)
jr_added_full=$(echo "${FULL[jsonrpsee]} - ${FULL[plain]}" | bc -l)
jr_added_cpu=$(echo "${FULL_CPU[jsonrpsee]} - ${FULL_CPU[plain]}" | bc -l)
for variant in ours ours_server; do
    added=$(echo "${BUILD[$variant]} - ${BUILD[plain]}" | bc -l)
    added_full=$(echo "${FULL[$variant]} - ${FULL[plain]}" | bc -l)
    added_cpu=$(echo "${FULL_CPU[$variant]} - ${FULL_CPU[plain]}" | bc -l)
    printf '%s / jsonrpsee: added incremental build time %.2fx, added full build time %.2fx (CPU %.2fx), added lines %.2fx\n' \
        "$variant" "$(echo "$added / $jr_added" | bc -l)" "$(echo "$added_full / $jr_added_full" | bc -l)" \
        "$(echo "$added_cpu / $jr_added_cpu" | bc -l)" \
        "$(echo "(${LINES[$variant]} - ${LINES[plain]}) / (${LINES[jsonrpsee]} - ${LINES[plain]})" | bc -l)"
done
