#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Valkey builds the integration tests drive: every archive in ARCHIVE_DIR, plus the what-if builds
# engines.tsv lists, built once (unoptimized: half the build time, the same memory layout) into the
# cache outside the clone (scripts/build-engine), and a valkey-server on PATH if there is one. Writes
# MANIFEST: one line per server, "binary<TAB>layout<TAB>label", where layout is what the build is known
# to be (empty when engines.tsv does not know the archive). No archives and no valkey-server: an empty
# manifest, and the Valkey tests skip.
set -euo pipefail
archive_dir=$1
manifest=$2
here=$(cd "$(dirname "$0")" && pwd)
build_engine=$here/../../scripts/build-engine
table=$here/engines.tsv
tmp=$manifest.tmp
: >"$tmp"

if [[ -d $archive_dir ]]; then
  for archive in "$archive_dir"/*.tar.xz "$archive_dir"/*.tar.gz; do
    [[ -f $archive ]] || continue
    name=$(basename "$archive")
    name=${name%.tar.*}
    sha=$(sha256sum "$archive" | cut -c1-16)
    if [[ -f $archive_dir/SHA256SUMS ]] && grep -q "$(basename "$archive")" "$archive_dir/SHA256SUMS"; then
      (cd "$archive_dir" && grep " $(basename "$archive")\$" SHA256SUMS | sha256sum --check --status) ||
        { echo "build-test-engines: $(basename "$archive") does not match SHA256SUMS" >&2; exit 1; }
    fi
    known=0
    while read -r prefix settings layout; do
      [[ -z $prefix || $prefix == \#* || $prefix != "$sha" ]] && continue
      known=1
      args=()
      label=$name
      if [[ $settings != - ]]; then
        IFS=, read -ra sets <<<"$settings"
        for s in "${sets[@]}"; do args+=(--set "$s"); done
        label="$name+$settings"
      fi
      binary=$("$build_engine" "$archive" --unoptimized "${args[@]}")
      printf '%s\t%s\t%s\n' "$binary" "$layout" "$label" >>"$tmp"
    done <"$table"
    if [[ $known -eq 0 ]]; then
      binary=$("$build_engine" "$archive" --unoptimized)
      printf '%s\t\t%s\n' "$binary" "$name" >>"$tmp"
    fi
  done
fi
if path=$(command -v valkey-server); then
  printf '%s\t\t%s\n' "$path" "valkey-server on PATH" >>"$tmp"
fi
mv "$tmp" "$manifest"
echo "build-test-engines: $(wc -l <"$manifest") Valkey server(s) for the tests:"
cut -f3 "$manifest" | sed 's/^/  /'
