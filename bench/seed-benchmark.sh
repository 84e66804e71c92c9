#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed change's own benchmark, reproduced on this machine (issue 36, docs/validation.md "The
# threshold change's benchmark"): the two development commits on either side of "embedded-string
# threshold 64 -> 128" (2026-04-06 and 2026-04-07, which differ in object.c alone), built optimized,
# GETs of VALUES-byte values at pipeline 10, the builds alternating over ROUNDS rounds, at each of
# IO_THREADS (the servers' --io-threads), beside layoutlab's predicted change for the same keyspace
# (`sweep --layout valkey-9.1 --thresholds 64,128 --cache --latency`). Each run is
# bench/get-throughput-pair.sh; this script builds the pair and runs it for every value size and thread
# count.
#
# The seed reported +5.4 ± 0.7% and +6.0 ± 0.8% at one I/O thread, +30-31% at nine, with
# valkey-benchmark, 96-byte values, pipeline 10 and 1,600 clients on a large aarch64 machine. The load
# generator here is Debian's redis-benchmark (the same GETs over the same protocol; valkey-benchmark is
# its fork).
#
# usage: bench/seed-benchmark.sh [BUILD_DIR]
#   VALUES="96 80 32"   ROUNDS=9   IO_THREADS="1 2"   KEYS=950000   GETS=3000000   CLIENTS=50
#   ENGINES=../shared/engines/more
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
engines=${ENGINES:-../shared/engines/more}
before=$engines/valkey-unstable-2026-04-06.tar.xz
after=$engines/valkey-unstable-2026-04-07.tar.xz
for archive in "$before" "$after"; do
  [[ -f $archive ]] || { echo "seed-benchmark: no $archive (the engines/more folder beside the project)" >&2; exit 2; }
done

# Optimized (the engines' own -O3 and link-time optimisation): throughput is measured on release builds.
binary_a=$(scripts/build-engine "$before")
binary_b=$(scripts/build-engine "$after" --from "$before")
echo "A: $binary_a ($(basename "$before"), threshold 64)"
echo "B: $binary_b ($(basename "$after"), threshold 128)"
echo "this machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n1), L3 $(lscpu | sed -n 's/^L3 cache: *//p')"

for value in ${VALUES:-96 80 32}; do
  for threads in ${IO_THREADS:-1 2}; do
    echo
    echo "## ${value}-byte values, --io-threads $threads, pipeline 10"
    echo
    BINARY_A=$binary_a BINARY_B=$binary_b LAYOUT=valkey-9.1 THRESHOLDS=64,128 VALUE=$value PIPELINE=10 \
      IO_THREADS=$threads ROUNDS=${ROUNDS:-9} KEYS=${KEYS:-950000} GETS=${GETS:-3000000} CLIENTS=${CLIENTS:-50} \
      bench/get-throughput-pair.sh "$build_dir"
  done
done
