#!/usr/bin/env bash
# Installs servesim's build and runtime dependencies from Debian packages
# (only those missing; a no-op when all are present), then configures and
# builds into $SERVESIM_BUILD_DIR (default: build/).
# Environment: SERVESIM_SANITIZE=1 for an ASan+UBSan build, SERVESIM_WERROR=1
# for warnings as errors, SERVESIM_FUZZ=1 for the libFuzzer targets (clang),
# SERVESIM_CUDA=1 to build the GPU calibration backend plugin too
# (build/libservesim_gpu.so; needs nvcc, the CUDA toolkit and NCCL for the
# all-reduce reference; cuobjdump and nvdisasm are installed from PyPI when
# the toolkit lacks them), SERVESIM_TARGETS="servesim ..." to build only those
# targets (default: everything, i.e. the simulator, tests and benchmarks).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

pkgs=(build-essential cmake pkg-config libgsl-dev libyaml-dev libsqlite3-dev
      libjansson-dev zlib1g-dev gnuplot-nox sqlite3 libopenmpi-dev openmpi-bin)
if [ "${SERVESIM_FUZZ:-0}" = 1 ]; then pkgs+=(clang libclang-rt-dev); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The CUDA build's SASS check (tests/system/test_kern_sass.c) disassembles
# the plugin with cuobjdump: the toolkit has it, or the NVIDIA wheels do
# (found by scripts/cuda-tool.sh in Python's site-packages).
if [ "${SERVESIM_CUDA:-0}" = 1 ] && ! scripts/cuda-tool.sh cuobjdump >/dev/null; then
  echo "setup: installing cuobjdump and nvdisasm (pip: nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)" >&2
  python3 -m pip install --quiet nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2 ||
    echo "setup: pip could not install cuobjdump: test_kern_sass will fail until it is found (scripts/cuda-tool.sh)" >&2
fi

build=${SERVESIM_BUILD_DIR:-build}
args=(-DCMAKE_BUILD_TYPE=${SERVESIM_BUILD_TYPE:-Release})
[ "${SERVESIM_SANITIZE:-0}" = 1 ] && args+=(-DSERVESIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
[ "${SERVESIM_WERROR:-0}" = 1 ] && args+=(-DSERVESIM_WERROR=ON)
# Explicit either way, so a build folder configured once with CUDA does not
# keep building it when asked for the simulator alone.
if [ "${SERVESIM_CUDA:-0}" = 1 ]; then args+=(-DSERVESIM_CUDA=ON); else args+=(-DSERVESIM_CUDA=OFF); fi
if [ "${SERVESIM_FUZZ:-0}" = 1 ]; then args+=(-DSERVESIM_FUZZ=ON -DCMAKE_C_COMPILER=clang -DSERVESIM_CUDA=OFF); fi
cmake -S . -B "$build" "${args[@]}" >/dev/null
target=()
[ -n "${SERVESIM_TARGETS:-}" ] && read -r -a target <<<"--target ${SERVESIM_TARGETS}"
[ "${SERVESIM_FUZZ:-0}" = 1 ] && target=(--target fuzz)
cmake --build "$build" -j "$(nproc)" "${target[@]}" >&2
