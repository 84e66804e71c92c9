#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RDB import speed (issue 38's target: a file of 1M keys mixed across types imports at >= 1/10 the speed of
# `cat`-ing it), measured in one run:
#   - an RDB of 1M keys, made once into BUILD_DIR/bench-data by Debian's redis-server (on PATH): 70% strings
#     of 1 to 2,000 bytes (a tenth integers, a fifth with TTLs), 10% hashes of 1 to 40 fields, 7% lists,
#     7% sets, 6% sorted sets, each of 1 to 40 elements, a few of 200 (their big encodings);
#   - `cat FILE > /dev/null`, `import FILE -o OUT` and `import FILE --stats`, timed in turn RUNS rounds
#     (3 by default); the figures are medians.
# Usage: bench/rdb-import-benchmark.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs_default=3
source bench/lib.sh
rdb="$data/rdb-1m.rdb"

make_rdb() {
  local dir pid
  dir=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' RETURN
  redis-server --port 0 --unixsocket "$dir/s.sock" --dir "$dir" --save "" --appendonly no \
    --daemonize no >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do [[ -S $dir/s.sock ]] && break; sleep 0.1; done
  echo "making $rdb (1M keys through redis-server) ..." >&2
  awk 'BEGIN {
    srand(38);
    for (i = 0; i < 1000000; i++) {
      r = rand(); n = 1 + int(rand() * 40); if (rand() < 0.01) n = 200;
      if (r < 0.70) {
        if (rand() < 0.1) v = int(rand() * 1000000000); else { v = sprintf("%0" (1 + int(rand() * rand() * 2000)) "d", i); }
        if (rand() < 0.2) printf "SET s:%d %s EX 1000000\n", i, v; else printf "SET s:%d %s\n", i, v;
      } else {
        cmd = r < 0.80 ? "HSET h:" : r < 0.87 ? "RPUSH l:" : r < 0.94 ? "SADD t:" : "ZADD z:";
        line = cmd i;
        for (j = 0; j < n; j++) {
          if (r < 0.80) line = line " f" j " value-" (i * j % 977);
          else if (r < 0.94) line = line " m" (j * 7919 + i) % 100003;
          else line = line " " j " m" j;
        }
        print line;
      }
    }
  }' | redis-cli -s "$dir/s.sock" --pipe >/dev/null
  redis-cli -s "$dir/s.sock" SAVE >/dev/null
  mv "$dir/dump.rdb" "$rdb"
}
[[ -f $rdb ]] || make_rdb

times="$data/rdb-import-times"
: >"$times"
cat "$rdb" >/dev/null # warm the page cache for every contender alike
for ((i = 0; i < runs; i++)); do
  timed cat cat "$rdb"
  timed import "$layoutlab" import "$rdb" --no-db -o "$data/rdb-1m.lltrace"
  sync
  timed stats "$layoutlab" import "$rdb" --no-db --stats
done
median() { awk -v n="$1" '$1 == n { print $2 }' "$times" | sort -n | sed -n "$(((runs + 1) / 2))p"; }
bytes=$(stat -c %s "$rdb")
python3 - "$bytes" "$(median cat)" "$(median import)" "$(median stats)" "$runs" <<'PY'
import sys
size, cat, imp, stats, runs = int(sys.argv[1]), *map(float, sys.argv[2:5]), int(sys.argv[5])
print("| figure | measured | target |")
print("|---|---|---|")
print(f"| RDB of 1M keys, {size / 1e6:.1f} MB: `cat` | {cat:.3f} s ({size / cat / 1e6:.0f} MB/s) | |")
print(f"| `import -o` | {imp:.3f} s ({size / imp / 1e6:.0f} MB/s): 1/{imp / cat:.1f} of `cat` | >= 1/10 |")
print(f"| `import --stats` | {stats:.3f} s: 1/{stats / cat:.1f} of `cat` | |")
print(f"(medians of {runs} rounds)")
PY
