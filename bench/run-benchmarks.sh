#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end speed and memory figures for docs/performance.md, measured in one run on this machine:
#   - `sim` of a 20M-request trace over 1M keys (requests per second, median of RUNS runs)
#   - a 32-threshold `sweep` of the same trace, as a ratio to the single-threshold `sim`
#   - peak resident memory per live key
#   - `sweep --cache` as a ratio to the same sweep without it, on the 20M trace and a 10M one
#   - the Google Benchmark micro-benchmarks
# Usage: bench/run-benchmarks.sh [BUILD_DIR]   (RUNS=5 by default; the trace is cached in BUILD_DIR/bench-data)
set -euo pipefail
cd "$(dirname "$0")/.."
runs_default=5
source bench/lib.sh
trace="$data/mixed-20m-1m.lltrace"
trace10m="$data/mixed-10m-500k.lltrace"
tiny="$data/tiny.lltrace"
gen_mixed_trace "$trace" 1000000 20000000 3
gen_mixed_trace "$trace10m" 500000 10000000 3
[[ -f $tiny ]] || "$layoutlab" gen -o "$tiny" --keys 10 --seed 1 2>/dev/null

# median and best wall seconds, and max RSS (KiB), of RUNS runs of a command
measure() {
  local times=() rss=0 out sorted
  for ((i = 0; i < runs; i++)); do
    out=$({ /usr/bin/time -f "%e %M" "$@" >/dev/null; } 2>&1 | tail -1)
    times+=("${out% *}")
    (( ${out#* } > rss )) && rss=${out#* }
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  printf '%s %s %s\n' "$(sed -n "$(( (runs + 1) / 2 ))p" <<<"$sorted")" "$(head -1 <<<"$sorted")" "$rss"
}

requests=$("$layoutlab" sim "$trace" --layout valkey-9.1 --json --no-db | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["replay"]["requests"], j["replay"]["max_live_keys"])')
read -r nreq maxlive <<<"$requests"
read -r sim_s sim_best sim_rss <<<"$(measure "$layoutlab" sim "$trace" --layout valkey-9.1 --no-db)"
read -r sweep_s sweep_best sweep_rss <<<"$(measure "$layoutlab" sweep "$trace" --layout valkey-9.1 --thresholds 16:512:16 --no-db)"
read -r tiny_s tiny_best tiny_rss <<<"$(measure "$layoutlab" sim "$tiny" --layout valkey-9.1 --no-db)"

python3 - "$nreq" "$maxlive" "$sim_s" "$sim_rss" "$sweep_s" "$sweep_rss" "$tiny_rss" "$runs" "$sim_best" "$sweep_best" <<'PY'
import sys
nreq, maxlive = int(sys.argv[1]), int(sys.argv[2])
sim_s, sim_rss, sweep_s, sweep_rss, tiny_rss, runs = float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
sim_best, sweep_best = float(sys.argv[9]), float(sys.argv[10])
print(f"| figure | measured | target |")
print(f"|---|---|---|")
print(f"| `sim` replay rate, {nreq/1e6:.0f}M requests, {maxlive/1e6:.2f}M live keys, median of {runs} (best) | {nreq/sim_s/1e6:.1f}M requests/s, {sim_s:.2f} s ({nreq/sim_best/1e6:.1f}M/s, {sim_best:.2f} s) | >= 30M/s |")
print(f"| 32-threshold `sweep` / single-threshold `sim`, medians (best) | {sweep_s/sim_s:.2f}x, {sweep_s:.2f} s ({sweep_best/sim_best:.2f}x) | <= 1.5x |")
print(f"| peak RSS per live key (whole process) | {sim_rss*1024/maxlive:.1f} B | <= 64 B |")
print(f"| peak RSS per live key above an empty run ({tiny_rss} KiB) | {(sim_rss-tiny_rss)*1024/maxlive:.1f} B | |")
PY
if [[ ${CALLGRIND:-0} == 1 ]]; then
  valgrind --tool=callgrind --callgrind-out-file="$data/callgrind.out" "$layoutlab" sim "$trace" --layout valkey-9.1 --no-db >/dev/null 2>&1
  total=$(callgrind_annotate "$data/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  echo "| instructions per request (callgrind, whole \`sim\` run) | $(( total / nreq )) | |"
fi
# The cache model's cost: the same 32-threshold sweep with and without --cache (host cache geometry).
for t in "$trace" "$trace10m"; do
  read -r plain_s _ _ <<<"$(measure "$layoutlab" sweep "$t" --layout valkey-9.1 --thresholds 16:512:16 --no-db)"
  read -r cache_s _ _ <<<"$(measure "$layoutlab" sweep "$t" --layout valkey-9.1 --thresholds 16:512:16 --cache --no-db)"
  python3 -c 'import sys; n, p, c = sys.argv[1:]; print(f"| `sweep --cache` / `sweep`, 32 thresholds, {n}, medians | {float(c)/float(p):.2f}x ({c} s / {p} s) | <= 4x on 10M |")' \
    "$(basename "$t" .lltrace)" "$plain_s" "$cache_s"
done
echo
"$build/bench/layoutlab_bench" --benchmark_repetitions="$runs" --benchmark_report_aggregates_only=true 2>/dev/null | grep -E "^(Benchmark|-|BM_.*_median)"
