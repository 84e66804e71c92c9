#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates the bundled traces with `layoutlab gen`. The generator is deterministic for a seed, so the
# output must be byte-identical to the committed files (a test checks this).
set -euo pipefail
layoutlab=${1:?usage: regenerate.sh PATH/TO/layoutlab [OUTPUT_DIR]}
out=${2:-$(dirname "$0")}
"$layoutlab" gen -o "$out/seed-k16-v96.lltrace" --keys 100000 --ops 100000 --get-fraction 1 \
  --key-size 16 --value-size 96 --seed 1
"$layoutlab" gen -o "$out/mixed-sizes.lltrace" --keys 50000 --ops 150000 \
  --key-size lognormal:3.3:0.45:6:200 --value-size lognormal:4.3:1.2:1:100000 \
  --ttl-fraction 0.2 --int-values 0.05 --get-fraction 0.8 --delete-fraction 0.05 --popularity zipf:0.99 --seed 7
# The Dalli case at large sizes: 300 values of 100 kB to 1 MB, then 3,000 uniform GETs. `drive --engine
# memcached --framing ...` on it shows the slab-class shifts and GET throughput each framing gives.
"$layoutlab" gen -o "$out/dalli-large-values.lltrace" --keys 300 --ops 3000 --get-fraction 1 \
  --key-size 24 --value-size uniform:100000:1000000 --seed 11
