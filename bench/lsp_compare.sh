#!/usr/bin/env bash
# The language server side by side: ours (`examples/examples/language_server.rs`,
# `#[rpc]` + rpc-runtime) and the same server written with tower-lsp-server
# (`src/bin/lsp_tower.rs`). Builds both in release, counts their lines, and
# runs `lsp_load` on them (pipelined didChange + hover pairs, server CPU per
# pair, ordered hovers), the servers taking turns in one run.
#
#   ./lsp_compare.sh                 # PAIRS=2000 ROUNDS=9 LINES="40 1" PIN=1
#   PIN=0 ROUNDS=3 ./lsp_compare.sh  # without taskset
#
# LINES: the document's lines, one run each (40: hover's word count and the
# TODO scan are a good part of each pair; 1: mostly the server's framework).
# PIN=1 runs each server on core 0 (`taskset -c 0`) and the load on core 1,
# as the other load benchmarks do. SKIP_BUILD=1 uses the binaries as built.
set -euo pipefail
cd "$(dirname "$0")"

PAIRS=${PAIRS:-2000}
ROUNDS=${ROUNDS:-9}
LINES=${LINES:-40 1}
PIN=${PIN:-1}
OURS_SRC=../examples/examples/language_server.rs
TOWER_SRC=src/bin/lsp_tower.rs

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    # Built as a user builds a language server: with the `lsp` feature
    # only (the workspace would add every transport and `metrics`).
    (cd .. && cargo build --release -p examples --example language_server --no-default-features --features lsp)
    cargo build --release --bin lsp_tower --bin lsp_load
fi

# Lines of code: not blank and not only a comment (`//`, `///`, `//!`);
# ours also without its `#[cfg(test)]` module (the file's tail).
count() {
    awk -v stop="$2" '
        stop == 1 && /^#\[cfg\(test\)\]/ { exit }
        /^[[:space:]]*$/ { next }
        /^[[:space:]]*\/\// { next }
        { n++ }
        END { print n + 0 }' "$1"
}
ours_all=$(count "$OURS_SRC" 0)
ours_code=$(count "$OURS_SRC" 1)
tower_code=$(count "$TOWER_SRC" 0)

dirty=$(git status --porcelain -- "$OURS_SRC" ../rpc-runtime ../rpc-macros | grep -q . && echo ", with uncommitted changes to the example or the runtime" || true)
echo "## Language server: ours vs tower-lsp-server ($(git rev-parse --short HEAD)$dirty, $(date -u +%Y-%m-%d))"
echo
echo "| lines of code (not blank, not comment) | ours | tower-lsp-server | ours / tower |"
echo "| --- | ---: | ---: | ---: |"
awk -v o="$ours_code" -v t="$tower_code" -v a="$ours_all" 'BEGIN {
    printf "| the server (ours without its test module; %d with it) | %d | %d | %.2fx |\n", a, o, t, o / t }'

if [ "$PIN" = 1 ]; then
    export LSP_SERVER_WRAPPER="taskset -c 0"
    load=(taskset -c 1 target/release/lsp_load)
else
    load=(target/release/lsp_load)
fi
for lines in $LINES; do
    echo
    "${load[@]}" --pairs "$PAIRS" --rounds "$ROUNDS" --lines "$lines" \
        ours=../target/release/examples/language_server tower-lsp-server=target/release/lsp_tower
done
