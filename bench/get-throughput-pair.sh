#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GET throughput of two real server builds, run alternately, beside the cache model's prediction of the
# change (issue 25, docs/validation.md "GET throughput"). By default the 2025-02-06 Valkey tree built
# optimized, plain (threshold 64) and with embed-threshold 128 and embstr-limit 108: the seed change.
#
# Each round starts each build in turn (the order flips every round, so that neither always runs first),
# loads KEYS keys "key:%012d" (the names redis-benchmark's __rand_int__ makes) of VALUE-byte values, and
# runs redis-benchmark's GETs over them (CLIENTS connections, PIPELINE GETs per round trip). The measured
# change is the median of the rounds' B/A ratios.
#
# The prediction: `layoutlab sweep --cache --latency --get-pipeline PIPELINE` of the same keyspace under
# LAYOUT (thresholds 64 and 128) gives the memory stall per GET that B saves (this host's load latencies,
# measured first; a Valkey 9 layout overlaps a pipeline's lookups, as the server prefetches them), and A's
# measured time per GET (1 / its median GETs/s) the base: B/A = t_A / (t_A + stall change).
#
# usage: bench/get-throughput-pair.sh [BUILD_DIR]
#   BINARY_A / BINARY_B   the two servers      LAYOUT   the model of both (default: valkey-8.1 with the
#   ROUNDS=3 KEYS=950000 VALUE=80 GETS=3000000 CLIENTS=50 PIPELINE=16      b build's embstr-limit=108)
#   IO_THREADS=1          the servers' --io-threads (Valkey: 1 is the main thread alone)
#   BENCH_THREADS=1       redis-benchmark's own --threads
#   THRESHOLDS=64,128     the thresholds of A and B, as the model sweeps them
#   SERVER_ARGS=""        more arguments for both servers (say "--prefetch-batch-max-size 0")
set -euo pipefail
cd "$(dirname "$0")/.."
layoutlab=$(realpath "${1:-build}/cli/layoutlab")
archive=../shared/engines/valkey-unstable-2025-02-06.tar.xz
for tool in redis-cli redis-benchmark python3; do
  command -v "$tool" >/dev/null || { echo "get-throughput-pair: needs $tool (Debian package redis-tools)" >&2; exit 2; }
done
binary_a=${BINARY_A:-$(scripts/build-engine "$archive")}
binary_b=${BINARY_B:-$(scripts/build-engine "$archive" --set embed-threshold=128 --set embstr-limit=108)}
layout=${LAYOUT:-valkey-8.1:embstr-limit=108}
rounds=${ROUNDS:-3}
keys=${KEYS:-950000}
value=${VALUE:-80}
gets=${GETS:-3000000}
clients=${CLIENTS:-50}
pipeline=${PIPELINE:-16}
io_threads=${IO_THREADS:-1}
bench_threads=${BENCH_THREADS:-1}
thresholds=${THRESHOLDS:-64,128}

work=$(mktemp -d)
server=""
trap '[[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# gets_per_second BINARY: one start, load and GET run of a build.
gets_per_second() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local threads=()
  [[ $io_threads -le 1 ]] || threads=(--io-threads "$io_threads")
  local extra=()
  read -ra extra <<<"${SERVER_ARGS:-}"
  "$1" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" "${threads[@]}" "${extra[@]}" \
    >"$work/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  python3 - "$keys" "$value" <<'PY' | redis-cli -p "$port" --pipe >/dev/null
import sys
n, v = int(sys.argv[1]), int(sys.argv[2])
value = "x" * v
out = sys.stdout
for i in range(n):
    key = "key:%012d" % i
    out.write("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, v, value))
PY
  redis-benchmark -p "$port" -t get -n "$gets" -r "$keys" -c "$clients" -P "$pipeline" --threads "$bench_threads" -q --csv 2>/dev/null |
    python3 -c 'import csv, sys; rows = [r for r in csv.reader(sys.stdin) if r and r[0] == "GET"]; print(rows[0][1])'
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$server" 2>/dev/null || true
  server=""
}

echo "| round | A GETs/s | B GETs/s | B/A |"
echo "|---|---|---|---|"
ratios=()
a_rates=()
for round in $(seq "$rounds"); do
  if ((round % 2)); then
    a=$(gets_per_second "$binary_a"); b=$(gets_per_second "$binary_b")
  else
    b=$(gets_per_second "$binary_b"); a=$(gets_per_second "$binary_a")
  fi
  ratio=$(python3 -c "print('%.4f' % ($b / $a))")
  ratios+=("$ratio")
  a_rates+=("$a")
  echo "| $round | $a | $b | $ratio |"
done

# The model: the same keyspace and uniform GETs.
"$layoutlab" gen -o "$work/pair.lltrace" --keys "$keys" --ops "$((keys / 2))" --key-size 16 --value-size "$value" \
  --get-fraction 1 --seed 25 >/dev/null
# The server's prefetch batch as SERVER_ARGS sets it, else the layout's engine's own; the pipeline's GETs are
# looked up together up to it (Valkey 9: networking.c prefetchCommandQueueKeys).
batch=()
if [[ ${SERVER_ARGS:-} =~ --prefetch-batch-max-size[[:space:]]+([0-9]+) ]]; then
  batch=(--prefetch-batch "${BASH_REMATCH[1]}")
fi
"$layoutlab" sweep "$work/pair.lltrace" --layout "$layout" --thresholds "$thresholds" --cache --latency \
  --get-pipeline "$pipeline" "${batch[@]}" --json --no-db 2>/dev/null >"$work/model.json"
python3 - "$work/model.json" "${ratios[*]}" "${a_rates[*]}" <<'PY'
import json, statistics, sys
model = json.load(open(sys.argv[1]))
ratios = [float(x) for x in sys.argv[2].split()]
a = statistics.median(float(x) for x in sys.argv[3].split())
change = model.get("stall_change")
overlapped = model.get("load_latencies", {}).get("overlapped_lookups", 1)
print()
def spread(xs):
    # The middle half of the rounds' ratios, and the mean's 95% interval (Student's t, small samples).
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    t = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}.get(len(xs) - 1, 2.0)
    half = t * statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) >= 2 else float("inf")
    return q[0], q[2], statistics.mean(xs), half
q1, q3, mean, half = spread(ratios)
print("measured B/A: median %.3f of %d rounds (%s)" % (statistics.median(ratios), len(ratios),
      ", ".join("%.3f" % r for r in ratios)))
print("spread: middle half %.3f to %.3f; mean %.3f ± %.3f (95%%)" % (q1, q3, mean, half))
if not change:
    sys.exit("the model gave no stall change (no cache model or latencies)")
t_a = 1e9 / a  # ns per GET of A, from its median throughput (one thread serves every GET)
d, u = change["ns_per_get"], change["uncertainty_ns"]
predicted = t_a / (t_a + d)
low, high = t_a / (t_a + d + u), t_a / (t_a + d - u) if t_a + d - u > 0 else float("inf")
print("predicted B/A: %.3f (%.3f to %.3f): a stall change of %+.0f ± %.0f ns per GET from threshold %d to %d, "
      "on A's %.0f ns per GET; %s" % (predicted, low, high, d, u, change["from_threshold"], change["to_threshold"], t_a,
      "%d GETs' lookups overlapped" % overlapped if overlapped > 1 else "one lookup at a time"))
PY
