#!/usr/bin/env bash
# MCP in process (stdio framing): our `McpServer` beside the same server on
# rmcp, server CPU per request (`src/bin/mcp_cpu.rs`), and our `tools/call`
# on the working tree against an older commit (default 3028abb, before
# resources and prompts), the binaries taking turns.
#
#   ./mcp_compare.sh                      # ROUNDS=31 REQUESTS=5000 WARMUP=1000 WINDOW=32
#   BEFORE= ./mcp_compare.sh              # without the older commit
#   SKIP_BUILD=1 ./mcp_compare.sh         # the binaries in target/mcp as built
#
# Builds three binaries of the same source into target/mcp/:
#   mcp_cpu         features mcp,features39,rmcp: ours (echo tool, notes://{id}
#                   resource, summarize prompt) and rmcp, in process
#   mcp_cpu_tools   feature mcp: ours with the echo tool alone (the service
#                   the older tree can build)
#   mcp_cpu_39      features mcp,features39: ours with the resource and prompt
#                   too, without rmcp in the build (whose features of shared
#                   crates, tokio's say, would differ from the others')
#   mcp_cpu_before  feature mcp, built in a git worktree of $BEFORE (its
#                   rpc-runtime and rpc-macros; this folder's Cargo.toml,
#                   Cargo.lock and src/bin/mcp_cpu.rs copied in), then removed
# Builds run under `nice -n 10` (NICE=0 to not).
set -euo pipefail
cd "$(dirname "$0")"
bench=$PWD

ROUNDS=${ROUNDS:-31}
REQUESTS=${REQUESTS:-5000}
WARMUP=${WARMUP:-1000}
WINDOW=${WINDOW:-32}
BEFORE=${BEFORE-3028abb}
WORKTREE=${WORKTREE:-/tmp/bench-before}
nice=(nice -n "${NICE:-10}")
out=target/mcp
mkdir -p "$out"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ -n "$BEFORE" ]; then
        # One left by an interrupted run (git refuses any other folder).
        if [ -e "$WORKTREE" ]; then git worktree remove --force "$WORKTREE"; fi
        git worktree add --detach "$WORKTREE" "$BEFORE" >&2
        trap 'git -C "$bench" worktree remove --force "$WORKTREE"' EXIT
        cp Cargo.toml Cargo.lock "$WORKTREE/bench/"
        cp src/bin/mcp_cpu.rs "$WORKTREE/bench/src/bin/"
        # This target folder: the registry crates are built once for both
        # trees (path crates get artifacts of their own); the binary is
        # copied out before the working tree's builds replace it.
        (cd "$WORKTREE/bench" && CARGO_TARGET_DIR="$bench/target" "${nice[@]}" cargo build --release --bin mcp_cpu --features mcp >&2)
        cp target/release/mcp_cpu "$out/mcp_cpu_before"
        git -C "$bench" worktree remove --force "$WORKTREE"
        trap - EXIT
    fi
    "${nice[@]}" cargo build --release --bin mcp_cpu --features mcp >&2
    cp target/release/mcp_cpu "$out/mcp_cpu_tools"
    "${nice[@]}" cargo build --release --bin mcp_cpu --features mcp,features39 >&2
    cp target/release/mcp_cpu "$out/mcp_cpu_39"
    "${nice[@]}" cargo build --release --bin mcp_cpu --features mcp,features39,rmcp >&2
    cp target/release/mcp_cpu "$out/mcp_cpu"
fi

args=(--rounds "$ROUNDS" --requests "$REQUESTS" --warmup "$WARMUP" --window "$WINDOW")
rmcp=$(awk '/^name = "rmcp"$/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)
dirty=$(git status --porcelain -- ../rpc-runtime ../rpc-macros | grep -q . && echo ", working tree with uncommitted changes" || true)
echo "## MCP in process: ours vs rmcp $rmcp ($(git rev-parse --short HEAD)$dirty, $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "Server thread CPU per request; $REQUESTS requests per run after $WARMUP, windows of $WINDOW, $ROUNDS rounds."
"$out/mcp_cpu" "${args[@]}"

echo
echo "### rmcp: router kept vs made per call (rmcp-macros' README form)"
"$out/mcp_cpu" "${args[@]}" --impls rmcp,rmcp-unit --kinds echo,list

if [ -n "$BEFORE" ] && [ -x "$out/mcp_cpu_before" ]; then
    echo
    echo "### Our tools/call: working tree vs $BEFORE (one process per binary and round, in turns)"
    echo
    echo "after: the working tree, echo tool alone; before: $BEFORE, the same source; after+39: the working tree with the resource and prompt too."
    "$out/mcp_cpu" "${args[@]}" --kinds echo,echo1k \
        --versus "after=$out/mcp_cpu_tools,before=$out/mcp_cpu_before,after+39=$out/mcp_cpu_39"
fi
