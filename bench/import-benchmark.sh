#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Import speed, measured in one run (issue 3's figures for docs/performance.md):
#   - a Twitter-format CSV of >= 1 GB (made by `gen` + `export`, cached in BUILD_DIR/bench-data) imported into
#     layoutlab's binary trace, keys hashed to dense ids included, against `wc -l` on the same file;
#   - re-reading the binary trace against importing the CSV (both with --stats, so both do the same
#     statistics work and only the parsing differs).
# Usage: bench/import-benchmark.sh [BUILD_DIR]    (RUNS=3 by default; medians)
set -euo pipefail
cd "$(dirname "$0")/.."
runs_default=3
source bench/lib.sh
trace="$data/import-25m.lltrace"
csv="$data/import-25m.twitter.csv"
if [[ ! -f $csv ]]; then
  gen_mixed_trace "$trace" 2000000 25000000 5
  "$layoutlab" export "$trace" --to twitter -o "$csv"
fi

median() {
  local times=() out="$data/time.out"
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -o "$out" -f "%e" "$@" >/dev/null 2>&1
    times+=("$(tail -1 "$out")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

cat "$csv" >/dev/null # warm the page cache for every contender alike
wc_s=$(median wc -l "$csv")
import_s=$(median "$layoutlab" import "$csv" --no-db -o "$data/import-25m.reimported.lltrace")
stats_csv_s=$(median "$layoutlab" import "$csv" --no-db --stats)
stats_bin_s=$(median "$layoutlab" import "$data/import-25m.reimported.lltrace" --no-db --stats)
bytes=$(stat -c %s "$csv")
lines=$(wc -l <"$csv")
python3 - "$bytes" "$lines" "$wc_s" "$import_s" "$stats_csv_s" "$stats_bin_s" "$runs" <<'PY'
import sys
size, lines, wc, imp, scsv, sbin, runs = int(sys.argv[1]), int(sys.argv[2]), *map(float, sys.argv[3:7]), int(sys.argv[7])
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| Twitter CSV, {size/1e9:.2f} GB, {lines/1e6:.0f}M lines: `wc -l` (median of {runs}) | {wc:.2f} s ({size/wc/1e9:.2f} GB/s) | |")
print(f"| `import` to binary, keys interned (median of {runs}) | {imp:.2f} s ({size/imp/1e6:.0f} MB/s, {lines/imp/1e6:.1f}M lines/s) | |")
print(f"| import speed / `wc -l` speed | 1/{imp/wc:.1f} | >= 1/10 |")
print(f"| re-reading the binary / importing the CSV, both `--stats` | {scsv/sbin:.1f}x faster ({sbin:.2f} s vs {scsv:.2f} s) | >= 10x |")
PY
