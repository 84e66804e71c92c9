# SPDX-License-Identifier: MIT
# Shared by the end-to-end benchmark scripts; sourced, not run. Sets build, runs, layoutlab and data from
# the script's arguments and environment.
build=${1:-build}
runs=${RUNS:-${runs_default:-5}}
layoutlab="$build/cli/layoutlab"
data="$build/bench-data"
mkdir -p "$data"

# The benchmarks' mixed workload (lognormal key and value sizes, 20% with TTLs, 80% GETs, zipf 0.99),
# written to OUT unless it is already there in the current trace format (version 3, the u32 at byte 8):
# gen_mixed_trace OUT KEYS REQUESTS SEED
gen_mixed_trace() {
  local out=$1 keys=$2 requests=$3 seed=$4
  [[ -f $out && $(od -An -tu4 -j8 -N4 "$out" | tr -d ' ') == 3 ]] && return 0
  echo "generating $out ($requests requests over $keys keys) ..." >&2
  # gen writes one SET per key first, then the remaining requests.
  "$layoutlab" gen -o "$out" --keys "$keys" --ops "$((requests - keys))" --key-size lognormal:3.3:0.45:6:200 \
    --value-size lognormal:4.3:1.2:1:100000 --ttl-fraction 0.2 --get-fraction 0.8 --delete-fraction 0.02 \
    --popularity zipf:0.99 --seed "$seed" >/dev/null
}

# timed NAME COMMAND...: one timing of COMMAND in seconds (to the microsecond: /usr/bin/time's hundredths are
# too coarse), appended as "NAME SECONDS" to the file named by $times.
timed() {
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$name $(echo "$end - $start" | bc -l)" >>"$times"
}
