#!/usr/bin/env bash
# Copies the Hugging Face model configs of a folder (default ../shared/hf-configs:
# `org--name.json`, ModelOpt quantisation configs as `org--name.hf_quant.json`)
# into models/hf/ as gzip files (gzip -9n: no name or time stamp, so the bytes
# are reproducible), which the build embeds into servesim (models/catalog/CMakeLists.txt).
# Run it again after adding configs to the source folder; it removes files of
# models/hf/ whose source is gone. `zcat models/hf/X.json.gz` shows one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$root/../shared/hf-configs}
dst=$root/models/hf
[ -d "$src" ] || { echo "import-hf-configs: no folder $src" >&2; exit 2; }
mkdir -p "$dst"
n=0
for f in "$src"/*.json; do
  b=$(basename "$f")
  case "$b" in *--*) ;; *) echo "import-hf-configs: $b is not named org--name.json" >&2; exit 2 ;; esac
  gzip -9n -c "$f" >"$dst/$b.gz.tmp" && mv "$dst/$b.gz.tmp" "$dst/$b.gz"
  n=$((n + 1))
done
for g in "$dst"/*.json.gz; do
  [ -e "$src/$(basename "$g" .gz)" ] || rm -f "$g"
done
echo "import-hf-configs: $n files in $dst" >&2
