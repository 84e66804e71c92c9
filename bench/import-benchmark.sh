#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Import speed, measured in one run (issue 3's figures for docs/performance.md):
#   - a Twitter-format CSV of >= 1 GB (made by `gen` + `export`, cached in BUILD_DIR/bench-data) imported into
#     layoutlab's binary trace, keys hashed to dense ids included, against `wc -l` on the same file;
#   - re-reading the binary trace against importing the CSV, both with --stats: both print the same
#     statistics, the CSV's counted from its parsed requests, the binary's from its columns (without
#     decoding requests; docs/performance.md gives the time of decoding them too).
# RUNS rounds (3 by default), each timing all four commands in turn; the figures are medians.
# Usage: bench/import-benchmark.sh [BUILD_DIR]
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

# The four contenders are timed in turn, round after round, so that a slow spell of the machine falls on
# all of them alike rather than on whichever was being timed; each figure is the median of its rounds.
times="$data/import-times"
: >"$times"
cat "$csv" >/dev/null # warm the page cache for every contender alike
# The trace re-read is written once, here; each round's import writes another file. After each import
# the kernel's writeback of its output is waited for, untimed, so that it does not compete for the CPUs
# with the next contender (the import's own time never included it: it ends before writeback does).
"$layoutlab" import "$csv" --no-db -o "$data/import-25m.reimported.lltrace" >/dev/null
sync
for ((i = 0; i < runs; i++)); do
  timed wc wc -l "$csv"
  timed import "$layoutlab" import "$csv" --no-db -o "$data/import-25m.round.lltrace"
  sync
  timed stats_csv "$layoutlab" import "$csv" --no-db --stats
  timed stats_bin "$layoutlab" import "$data/import-25m.reimported.lltrace" --no-db --stats
done
rm -f "$data/import-25m.round.lltrace"
median() { awk -v n="$1" '$1 == n { print $2 }' "$times" | sort -n | sed -n "$(((runs + 1) / 2))p"; }
wc_s=$(median wc)
import_s=$(median import)
stats_csv_s=$(median stats_csv)
stats_bin_s=$(median stats_bin)
bytes=$(stat -c %s "$csv")
lines=$(wc -l <"$csv")
python3 - "$bytes" "$lines" "$wc_s" "$import_s" "$stats_csv_s" "$stats_bin_s" "$runs" <<'PY'
import sys
size, lines, wc, imp, scsv, sbin, runs = int(sys.argv[1]), int(sys.argv[2]), *map(float, sys.argv[3:7]), int(sys.argv[7])
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| Twitter CSV, {size/1e9:.2f} GB, {lines/1e6:.0f}M lines: `wc -l` (median of {runs} rounds) | {wc:.3f} s ({size/wc/1e9:.2f} GB/s) | |")
print(f"| `import` to binary, keys interned (median of {runs} rounds) | {imp:.3f} s ({size/imp/1e6:.0f} MB/s, {lines/imp/1e6:.1f}M lines/s) | |")
print(f"| import speed / `wc -l` speed | 1/{imp/wc:.1f} | >= 1/10 |")
print(f"| re-reading the binary / importing the CSV, both `--stats` | {scsv/sbin:.1f}x faster ({sbin:.3f} s vs {scsv:.3f} s) | >= 10x |")
PY
