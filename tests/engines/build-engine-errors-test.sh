#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/build-engine refuses what it cannot build with one line naming what failed, and leaves
# nothing in its cache but the log: an archive that is not a Valkey tree, a tree whose make fails, a
# setting the source does not have, a setting it does not know.
set -uo pipefail
build_engine=$1
work=$2
rm -rf "$work"
mkdir -p "$work/src"
export LAYOUTLAB_ENGINE_CACHE=$work/cache
failures=0

expect_refusal() { # name, expected text, command...
  local name=$1 expected=$2
  shift 2
  local err
  err=$("$@" 2>&1 >/dev/null)
  local status=$?
  if [[ $status -eq 0 ]]; then
    echo "FAIL $name: succeeded" && failures=$((failures + 1))
  elif [[ $err != *"$expected"* ]]; then
    echo "FAIL $name: expected '$expected' in: $err" && failures=$((failures + 1))
  elif [[ $(grep -c '^build-engine:' <<<"$err") -ne 1 ]]; then
    echo "FAIL $name: not one error line: $err" && failures=$((failures + 1))
  else
    echo "ok   $name: $(grep '^build-engine:' <<<"$err")"
  fi
}

# Not a Valkey tree.
mkdir -p "$work/not-valkey/readme"
echo hello >"$work/not-valkey/readme/README"
tar -cJf "$work/not-valkey.tar.xz" -C "$work" not-valkey
expect_refusal not-valkey "not a Valkey or Redis source tree" "$build_engine" "$work/not-valkey.tar.xz"

# A tree whose make fails.
mkdir -p "$work/broken/src"
printf 'if (size <= 64) {\n#define OBJ_ENCODING_EMBSTR_SIZE_LIMIT 44\n' >"$work/broken/src/object.c"
printf 'valkey-server:\n\t@echo "object.c:1: error: this tree does not build" >&2; exit 2\n' >"$work/broken/src/Makefile"
tar -cJf "$work/broken.tar.xz" -C "$work" broken
expect_refusal make-fails "make failed for broken.tar.xz" "$build_engine" "$work/broken.tar.xz"

# A constant this source does not have (8.0 has no embed threshold).
mkdir -p "$work/old/src"
printf '#define OBJ_ENCODING_EMBSTR_SIZE_LIMIT 44\n' >"$work/old/src/object.c"
printf 'valkey-server:\n\texit 1\n' >"$work/old/src/Makefile"
tar -cJf "$work/old.tar.xz" -C "$work" old
expect_refusal no-such-constant "setting embed-threshold" "$build_engine" "$work/old.tar.xz" --set embed-threshold=128

expect_refusal unknown-setting "unknown setting 'page-size=65536'" "$build_engine" "$work/broken.tar.xz" \
  --set page-size=65536
expect_refusal bad-value "needs a byte count" "$build_engine" "$work/broken.tar.xz" --set embstr-limit=lots
expect_refusal no-archive "no such archive" "$build_engine" "$work/missing.tar.xz"

# Nothing half-built stays in the cache: only logs.
leftover=$(find "$work/cache" -mindepth 1 -maxdepth 1 ! -name logs ! -name '.lock-*' | head -n 5)
if [[ -n $leftover ]]; then
  echo "FAIL the cache holds partial builds: $leftover" && failures=$((failures + 1))
fi
echo "$((6 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
