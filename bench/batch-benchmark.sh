#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How `layoutlab batch` scales with cores (issue 7: `-j 2` on a 2-core machine >= 1.8x `-j 1`), measured in
# one run: a plan of 8 cells (4 layouts x 2 allocators, each a 32-threshold sweep of the 10M-request
# benchmark trace), run with -j 1 and -j 2 in turn, RUNS times each, each time into a fresh database.
# Usage: bench/batch-benchmark.sh [BUILD_DIR]    (RUNS=5 by default; medians)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
trace="$data/mixed-10m-500k.lltrace"
gen_mixed_trace "$trace" 500000 10000000 3
plan="$data/batch-plan.json"
cat >"$plan" <<JSON
{ "traces": ["$(realpath "$trace")"],
  "layouts": ["valkey-8.1", "valkey-9.1", "redis-7.0", "valkey:threshold=64,header=8"],
  "allocators": ["", "jemalloc:quantum=16,page=4096"],
  "thresholds": "16:512:16" }
JSON
db="$data/batch-bench.db"
declare -A times
for ((i = 0; i < runs; i++)); do
  for j in 1 2; do
    rm -f "$db" "$db-wal" "$db-shm"
    /usr/bin/time -o "$data/time.out" -f "%e" "$layoutlab" batch "$plan" -j "$j" --db "$db" >/dev/null 2>&1
    times[$j]+="$(tail -1 "$data/time.out") "
  done
done
python3 - "${times[1]}" "${times[2]}" "$runs" "$(nproc)" <<'PY'
import statistics, sys
one, two = ([float(x) for x in s.split()] for s in sys.argv[1:3])
runs, cores = int(sys.argv[3]), int(sys.argv[4])
m1, m2 = statistics.median(one), statistics.median(two)
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| `batch -j 1`, 8 cells of 10M requests (median of {runs}) | {m1:.2f} s (runs: {', '.join(f'{x:.2f}' for x in one)}) | |")
print(f"| `batch -j 2` (median of {runs}) | {m2:.2f} s (runs: {', '.join(f'{x:.2f}' for x in two)}) | |")
print(f"| speed-up on {cores} cores | **{m1 / m2:.2f}x** | >= 1.8x on 2 cores |")
PY
