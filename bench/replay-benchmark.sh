#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 7's replay figures, measured in one run:
#   - `sim` of a 50M-request trace with 5M distinct keys (target >= 25M requests/s on one core) and with
#     1M keys (>= 40M requests/s), as it runs (replay and decode-ahead threads) and pinned to one core;
#   - a 32-threshold `sweep` against a single-threshold `sim` of the 5M-key trace (<= 1.2x);
#   - peak RSS per live key (<= 64 bytes), whatever the trace's length.
# The traces are generated once into BUILD_DIR/bench-data (about 400 MB each).
# Usage: bench/replay-benchmark.sh [BUILD_DIR]    (RUNS=5 by default; medians)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
big="$data/mixed-50m-5m.lltrace"
small="$data/mixed-50m-1m.lltrace"
gen_mixed_trace "$big" 5000000 50000000 5
gen_mixed_trace "$small" 1000000 50000000 5

# measure NAME ARGS...: appends "seconds maxrss_kb" of each of RUNS runs to NAME's list.
declare -A results
measure() {
  local name=$1
  shift
  /usr/bin/time -o "$data/time.out" -f "%e %M" "$@" >"$data/last.out" 2>/dev/null
  results[$name]+="$(tail -1 "$data/time.out");"
}
for ((i = 0; i < runs; i++)); do
  measure sim5m "$layoutlab" sim "$big" --layout valkey-9.1 --no-db
  measure sweep5m "$layoutlab" sweep "$big" --layout valkey-9.1 --thresholds 16:512:16 --no-db
  measure sim1m "$layoutlab" sim "$small" --layout valkey-9.1 --no-db
  # "On one core": both of sim's threads (replay, decode-ahead) pinned to CPU 0.
  measure one5m taskset -c 0 "$layoutlab" sim "$big" --layout valkey-9.1 --no-db
  measure one1m taskset -c 0 "$layoutlab" sim "$small" --layout valkey-9.1 --no-db
done
live5m=$("$layoutlab" sim "$big" --layout valkey-9.1 --no-db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["replay"]["live_keys"])')
live1m=$("$layoutlab" sim "$small" --layout valkey-9.1 --no-db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["replay"]["live_keys"])')
python3 - "${results[sim5m]}" "${results[sweep5m]}" "${results[sim1m]}" "$live5m" "$live1m" "$runs" \
  "${results[one5m]}" "${results[one1m]}" <<'PY'
import statistics, sys
def parse(s):
    rows = [r.split() for r in s.split(";") if r.strip()]
    return [float(r[0]) for r in rows], [int(r[1]) for r in rows]
(s5, m5), (w5, mw5), (s1, m1) = parse(sys.argv[1]), parse(sys.argv[2]), parse(sys.argv[3])
live5, live1, runs = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
(o5, _), (o1, _) = parse(sys.argv[7]), parse(sys.argv[8])
med = statistics.median
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| `sim`, 50M requests, {live5/1e6:.2f}M live keys (5M distinct), median of {runs} (best) | **{50/med(s5):.1f}M requests/s**, {med(s5):.2f} s ({50/min(s5):.1f}M/s) | >= 25M/s |")
print(f"| `sim`, 50M requests, {live1/1e6:.2f}M live keys (1M distinct), median of {runs} (best) | **{50/med(s1):.1f}M requests/s**, {med(s1):.2f} s ({50/min(s1):.1f}M/s) | >= 40M/s |")
print(f"| the same, on one core (`taskset -c 0`): 5M keys, median (best) | **{50/med(o5):.1f}M requests/s** ({50/min(o5):.1f}M/s) | >= 25M/s |")
print(f"| the same, on one core: 1M keys, median (best) | **{50/med(o1):.1f}M requests/s** ({50/min(o1):.1f}M/s) | >= 40M/s |")
print(f"| 32-threshold `sweep` / `sim`, 5M keys, medians | **{med(w5)/med(s5):.2f}x** ({med(w5):.2f} s / {med(s5):.2f} s) | <= 1.2x |")
print(f"| peak RSS per live key, 5M keys (sweep) | **{max(mw5)*1024/live5:.1f} B** ({max(mw5)/1024:.0f} MiB) | <= 64 B |")
print(f"| peak RSS per live key, 1M keys (sim) | {max(m1)*1024/live1:.1f} B ({max(m1)/1024:.0f} MiB) | <= 64 B |")
PY
