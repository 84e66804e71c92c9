#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The run phase's load generator against redis-benchmark, side by side on the same redis-server (issue 5):
# GETs of 16-byte keys that exist ("key:" + 12 digits, the names redis-benchmark's __rand_int__ makes),
# 4 connections, 16 GETs per round trip, RUNS alternating rounds, medians.
# Usage: bench/drive-benchmark.sh [BUILD_DIR]    (RUNS=5 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
runs_default=5
source bench/lib.sh
keys=200000
requests=2000000
connections=4
pipeline=16
trace="$data/drive-k16-v100.lltrace"
"$layoutlab" gen -o "$trace" --keys "$keys" --ops "$requests" --key-size 16 --value-size 100 --get-fraction 1 \
  --seed 9 >/dev/null

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --dir "$dir" \
  >"$dir/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

ours=() theirs=()
for ((i = 0; i < runs; i++)); do
  redis-cli -p "$port" flushall >/dev/null
  ours+=("$("$layoutlab" drive "$trace" --engine redis --connect "127.0.0.1:$port" --no-db --json --run-requests "$requests" \
    --connections "$connections" --run-pipeline "$pipeline" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops_per_sec"])')")
  # The keys are loaded now: redis-benchmark reads the same ones.
  theirs+=("$(redis-benchmark -p "$port" -t get -n "$requests" -c "$connections" -P "$pipeline" -r "$keys" -q \
    | tr '\r' '\n' | grep -o 'GET: [0-9.]*' | tail -1 | awk '{print $2}')")
done
python3 - "$runs" "${ours[*]}" "${theirs[*]}" <<'PY'
import statistics, sys
runs = int(sys.argv[1])
ours = [float(x) for x in sys.argv[2].split()]
theirs = [float(x) for x in sys.argv[3].split()]
o, t = statistics.median(ours), statistics.median(theirs)
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| `drive` run phase, 4 connections x pipeline 16, GETs/s (median of {runs}) | {o:,.0f} | |")
print(f"| `redis-benchmark -t get -c 4 -P 16`, GETs/s (median of {runs}) | {t:,.0f} | |")
print(f"| ratio | {o/t:.2f} | >= 0.9 |")
PY
