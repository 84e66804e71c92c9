#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every example of the given Markdown files as a reader would type it:
#   - each ```sh block as a bash script (`make` lines aside: they are what runs this);
#   - the `$ ` lines of each ```console transcript (the output shown is not compared), on a fresh
#     results database, since a transcript's run ids start from 1;
#   - ```text blocks (synopses, output) are not run.
# They run in order, from one scratch directory laid out like the project's root (datasets/, scripts/,
# build/cli/layoutlab, ../shared beside it), with `layoutlab` on the PATH and the results database in
# the scratch directory. A failing example prints its block and output and fails the test.
#
# usage: run-doc-examples.sh LAYOUTLAB REPO FILE.md...
set -euo pipefail
layoutlab=$(realpath "$1")
repo=$(realpath "$2")
shift 2

scratch=$(mktemp -d "${TMPDIR:-/tmp}/layoutlab-docs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
root=$scratch/project
mkdir -p "$root/build/cli" "$scratch/bin"
ln -s "$layoutlab" "$root/build/cli/layoutlab"
ln -s "$layoutlab" "$scratch/bin/layoutlab"
ln -s "$repo/datasets" "$root/datasets"
ln -s "$repo/scripts" "$root/scripts"
[[ -e $repo/../shared ]] && ln -s "$(realpath "$repo/../shared")" "$scratch/shared"
export PATH="$scratch/bin:$PATH"

failed=0
ran=0
# run_block KIND FILE LINE SCRIPT: runs one block from the project root.
run_block() {
  local kind=$1 where=$2 script=$3 db
  db=$root/layoutlab.db
  if [[ $kind == console ]]; then
    db=$(mktemp -u "$scratch/transcript.XXXXXX.db")
  fi
  ran=$((ran + 1))
  local started=$SECONDS
  if ! (cd "$root" && LAYOUTLAB_DB=$db bash -euo pipefail -c "$script") >"$scratch/out" 2>&1; then
    failed=$((failed + 1))
    echo "FAILED: $where ($kind block)"
    sed 's/^/    | /' <<<"$script"
    echo "  output (last 30 lines):"
    tail -30 "$scratch/out" | sed 's/^/    > /'
  else
    echo "ok: $where ($kind block, $((SECONDS - started)) s)"
  fi
}

for file in "$@"; do
  kind="" start=0 script="" n=0
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    if [[ $line == '```'* ]]; then
      if [[ -z $kind ]]; then
        kind=${line#\`\`\`}
        kind=${kind:-text}
        start=$n
        script=""
      else
        if [[ ($kind == sh || $kind == console) && -n $script ]]; then
          run_block "$kind" "$(basename "$file"):$start" "$script"
        fi
        kind=""
      fi
      continue
    fi
    case $kind in
    sh)
      [[ $line =~ ^make[[:space:]] ]] && continue
      script+="$line"$'\n'
      ;;
    console)
      [[ $line == '$ '* ]] && script+="${line#\$ }"$'\n'
      ;;
    esac
  done <"$file"
done
echo "$ran examples run, $failed failed"
[[ $failed -eq 0 ]]
