#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Valkey and Redis builds the integration tests drive: every archive in ARCHIVE_DIR and its more/,
# plus the what-if builds engines.tsv lists, built once (at -O1, build-engine --quick: the release
# build's memory layout, built about as fast as -O0, and serving the tests' commands twice as fast) into
# the cache outside the clone (scripts/build-engine), and a valkey-server on PATH if there is one. Writes MANIFEST: one line per server, "binary<TAB>layout<TAB>label<TAB>engine", where
# layout is what the build is known to be (empty when engines.tsv does not know the archive) and engine
# is valkey or redis. No archives and no valkey-server: an empty manifest, and the tests skip.
set -euo pipefail
archive_dir=$1
manifest=$2
here=$(cd "$(dirname "$0")" && pwd)
build_engine=$here/../../scripts/build-engine
table=$here/engines.tsv
tmp=$manifest.tmp
: >"$tmp"

engine_of() { [[ $(basename "$1") == redis-server ]] && echo redis || echo valkey; }
if [[ -d $archive_dir ]]; then
  for archive in "$archive_dir"/*.tar.xz "$archive_dir"/*.tar.gz "$archive_dir"/more/*.tar.xz "$archive_dir"/more/*.tar.gz; do
    [[ -f $archive ]] || continue
    dir=$(dirname "$archive")
    name=$(basename "$archive")
    name=${name%.tar.*}
    sha=$(sha256sum "$archive" | cut -c1-16)
    if [[ -f $dir/SHA256SUMS ]] && grep -q "$(basename "$archive")" "$dir/SHA256SUMS"; then
      (cd "$dir" && grep " $(basename "$archive")\$" SHA256SUMS | sha256sum --check --status) ||
        { echo "build-test-engines: $(basename "$archive") does not match SHA256SUMS" >&2; exit 1; }
    fi
    known=0
    while read -r prefix settings layout from; do
      [[ -z $prefix || $prefix == \#* || $prefix != "$sha" ]] && continue
      known=1
      args=()
      label=$name
      if [[ $settings != - ]]; then
        IFS=, read -ra sets <<<"$settings"
        for s in "${sets[@]}"; do args+=(--set "$s"); done
        label="$name+$settings"
      fi
      # A neighbouring commit starts from its neighbour's build, when that archive is here.
      [[ ${from:--} == - || ! -f $dir/$from ]] || args+=(--from "$dir/$from")
      binary=$("$build_engine" "$archive" --quick "${args[@]}")
      printf '%s\t%s\t%s\t%s\n' "$binary" "$layout" "$label" "$(engine_of "$binary")" >>"$tmp"
    done <"$table"
    if [[ $known -eq 0 ]]; then
      binary=$("$build_engine" "$archive" --quick)
      printf '%s\t\t%s\t%s\n' "$binary" "$name" "$(engine_of "$binary")" >>"$tmp"
    fi
  done
fi
if path=$(command -v valkey-server); then
  printf '%s\t\t%s\tvalkey\n' "$path" "valkey-server on PATH" >>"$tmp"
fi
mv "$tmp" "$manifest"
echo "build-test-engines: $(wc -l <"$manifest") server build(s) for the tests:"
cut -f3 "$manifest" | sed 's/^/  /'
