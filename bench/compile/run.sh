#!/usr/bin/env bash
# Compile-time benchmark: a 50-method trait with our #[rpc] and with
# jsonrpsee's #[rpc(server, client)] (see gen.py), against the same trait
# with no macro.
#
#   bench/compile/run.sh [RUNS]      (default 5 runs per variant)
#
# For each variant: the median wall time of an incremental debug rebuild
# after touching the trait file (src/api.rs), of a full rebuild of the
# crate alone (`cargo clean -p`, dependencies kept), the lines of the macro
# expansion (`cargo rustc -- -Zunpretty=expanded`, with RUSTC_BOOTSTRAP=1)
# and the size of the compiled rlib. Then what each macro adds over the
# plain trait, per method, and ours/jsonrpsee.
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

declare -A BUILD FULL LINES RLIB
for variant in "${VARIANTS[@]}"; do
    dir="$OUT/$variant"
    echo "== $variant: first build (dependencies)" >&2
    cargo build --quiet --manifest-path "$dir/Cargo.toml"
    times=()
    for ((run = 1; run <= RUNS; run++)); do
        touch "$dir/src/api.rs"
        start=$(now)
        cargo build --quiet --manifest-path "$dir/Cargo.toml"
        end=$(now)
        times+=("$(echo "$end - $start" | bc -l)")
    done
    BUILD[$variant]=$(printf '%s\n' "${times[@]}" | median)
    echo "   incremental rebuilds: ${times[*]} -> median ${BUILD[$variant]} s" >&2
    times=()
    for ((run = 1; run <= RUNS; run++)); do
        cargo clean --quiet --manifest-path "$dir/Cargo.toml" -p "cb_$variant"
        start=$(now)
        cargo build --quiet --manifest-path "$dir/Cargo.toml"
        end=$(now)
        times+=("$(echo "$end - $start" | bc -l)")
    done
    FULL[$variant]=$(printf '%s\n' "${times[@]}" | median)
    echo "   full crate rebuilds: ${times[*]} -> median ${FULL[$variant]} s" >&2
    LINES[$variant]=$(RUSTC_BOOTSTRAP=1 cargo rustc --quiet --lib --manifest-path "$dir/Cargo.toml" \
        --profile check -- -Zunpretty=expanded 2>/dev/null | wc -l)
    rlib=$(ls -t "$CARGO_TARGET_DIR"/debug/libcb_"$variant".rlib)
    RLIB[$variant]=$(stat -c %s "$rlib")
done

echo
echo "| variant | incremental rebuild (median of $RUNS) | full crate build (median of $RUNS) | expanded lines | rlib bytes |"
echo "| --- | ---: | ---: | ---: | ---: |"
for variant in "${VARIANTS[@]}"; do
    printf '| %s | %.2f s | %.2f s | %d | %d |\n' "$variant" "${BUILD[$variant]}" "${FULL[$variant]}" "${LINES[$variant]}" "${RLIB[$variant]}"
done
echo
echo "What each macro adds over the plain trait:"
echo
echo "| variant | added incremental | added full | added lines per method | added rlib bytes |"
echo "| --- | ---: | ---: | ---: | ---: |"
for variant in ours ours_server jsonrpsee; do
    added=$(echo "${BUILD[$variant]} - ${BUILD[plain]}" | bc -l)
    added_full=$(echo "${FULL[$variant]} - ${FULL[plain]}" | bc -l)
    per_method=$(((LINES[$variant] - LINES[plain]) / METHODS))
    printf '| %s | %.2f s | %.2f s | %d | %d |\n' "$variant" "$added" "$added_full" "$per_method" \
        "$((RLIB[$variant] - RLIB[plain]))"
done
echo
jr_added=$(echo "${BUILD[jsonrpsee]} - ${BUILD[plain]}" | bc -l)
jr_added_full=$(echo "${FULL[jsonrpsee]} - ${FULL[plain]}" | bc -l)
for variant in ours ours_server; do
    added=$(echo "${BUILD[$variant]} - ${BUILD[plain]}" | bc -l)
    added_full=$(echo "${FULL[$variant]} - ${FULL[plain]}" | bc -l)
    printf '%s / jsonrpsee: added incremental build time %.2fx, added full build time %.2fx, added lines %.2fx\n' \
        "$variant" "$(echo "$added / $jr_added" | bc -l)" "$(echo "$added_full / $jr_added_full" | bc -l)" \
        "$(echo "(${LINES[$variant]} - ${LINES[plain]}) / (${LINES[jsonrpsee]} - ${LINES[plain]})" | bc -l)"
done
