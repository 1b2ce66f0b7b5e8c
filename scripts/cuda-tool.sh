#!/usr/bin/env bash
# cuda-tool.sh NAME — prints the path of a CUDA binary tool (cuobjdump,
# nvdisasm, ...) and exits 0, or exits 1 when none is found. Looks, in
# order, at $SERVESIM_<NAME> (e.g. SERVESIM_CUOBJDUMP), the PATH,
# $CUDA_HOME/bin, /usr/local/cuda/bin, and the bin/ folders of the NVIDIA
# wheels Python sees (`pip install nvidia-cuda-cuobjdump
# nvidia-cuda-nvdisasm`, which scripts/setup.sh runs for the CUDA build,
# puts them in site-packages/nvidia/cu13/bin, not on the PATH).
set -uo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/cuda-tool.sh NAME" >&2
  exit 2
fi
name=$1
var=SERVESIM_$(echo "$name" | tr '[:lower:]-' '[:upper:]_')
cands=("${!var:-}" "$(command -v "$name" 2>/dev/null)" "${CUDA_HOME:-/nonexistent}/bin/$name" "/usr/local/cuda/bin/$name")
if command -v python3 >/dev/null 2>&1; then
  while IFS= read -r p; do cands+=("$p"); done < <(python3 - "$name" 2>/dev/null <<'PY'
import glob, os, sys
try:
    import nvidia
except ImportError:
    sys.exit(0)
for d in nvidia.__path__:
    for p in sorted(glob.glob(os.path.join(d, "*", "bin", sys.argv[1]))):
        print(p)
PY
  )
fi
for c in "${cands[@]}"; do
  if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then
    echo "$c"
    exit 0
  fi
done
exit 1
