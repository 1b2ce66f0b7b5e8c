#!/usr/bin/env bash
# gpu-bundle.sh [--arch ARCH] [--from-build DIR] BUNDLE — packs servesim and
# its GPU backend plugin, built here for one GPU architecture, with the
# shared libraries they load (GSL, libyaml, SQLite, jansson, Open MPI, ...;
# not the C library, not the CUDA libraries) and the sqlite3 shell into the
# folder BUNDLE, for a GPU host that has the NVIDIA driver and CUDA
# libraries but not servesim's -dev packages (a rented node, a container
# without a compiler toolchain). BUNDLE/run-gpu-check.sh OUTDIR then runs
# scripts/gpu-check.sh there with the bundled binary: it puts BUNDLE/lib on
# the library path with the folders of the host's cuBLAS and NCCL when the
# dynamic loader does not know them, reports any library still missing,
# and passes the rest of gpu-check.sh's environment through;
# GPU_CHECK_PACK=FILE.tgz also packs OUTDIR into one archive.
#
# --arch ARCH   CMAKE_CUDA_ARCHITECTURES of the build (default 90a: H100,
#               H200; 100a for B200, 80 for A100)
# --from-build DIR  bundle an existing build (DIR/servesim and
#               DIR/libservesim_gpu.so) instead of building one in
#               build-bundle-ARCH/
# Exit codes: 0 bundled, 1 a build or copy failed, 2 usage.
# The bundle runs where the host's C library is at least as new as this
# machine's (the binaries are linked against it); the CUDA runtime is
# linked statically into the plugin, so the host's driver must support
# this machine's CUDA version.
set -uo pipefail
usage() {
  echo "usage: scripts/gpu-bundle.sh [--arch ARCH] [--from-build DIR] BUNDLE" >&2
  exit 2
}
arch=90a
from=""
bundle=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || usage; arch=$2; shift 2 ;;
    --from-build) [ $# -ge 2 ] || usage; from=$2; shift 2 ;;
    --help | -h) usage ;;
    -*) echo "gpu-bundle: unknown option '$1'" >&2; usage ;;
    *) [ -z "$bundle" ] || usage; bundle=$1; shift ;;
  esac
done
[ -n "$bundle" ] || usage
case "$arch" in *[!0-9a-z]* | "") echo "gpu-bundle: --arch is a CUDA architecture such as 90a, not '$arch'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "$from" ]; then
  from=$root/build-bundle-$arch
  echo "gpu-bundle: building servesim and the GPU plugin for sm_$arch in $from" >&2
  mkdir -p "$from" || exit 1
  if ! { cmake -S "$root" -B "$from" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch" &&
         cmake --build "$from" -j "$(nproc)" --target servesim servesim_gpu; } >"$from/bundle-build.log" 2>&1; then
    tail -20 "$from/bundle-build.log" >&2
    echo "gpu-bundle: build failed (log: $from.log)" >&2
    exit 1
  fi
fi
for f in servesim libservesim_gpu.so; do
  if [ ! -f "$from/$f" ]; then
    echo "gpu-bundle: no $from/$f (a build configured with -DSERVESIM_CUDA=ON has both)" >&2
    exit 1
  fi
done

mkdir -p "$bundle/lib" "$bundle/bin" || exit 1
cp "$from/servesim" "$from/libservesim_gpu.so" "$bundle/" || exit 1
tools=("$bundle/servesim" "$bundle/libservesim_gpu.so")
sq=$(command -v sqlite3 || true)
if [ -n "$sq" ]; then
  cp "$sq" "$bundle/bin/" && tools+=("$bundle/bin/sqlite3")
else
  echo "gpu-bundle: no sqlite3 shell here: gpu-check's summary tables will need one on the GPU host" >&2
fi
# Every library the binaries load but the C library's own and the CUDA
# libraries (the host's driver stack provides those).
libs=$(ldd "${tools[@]}" 2>/dev/null | awk '/=> \// {print $3}' | sort -u)
n=0
for l in $libs; do
  case $(basename "$l") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libgcc_s.so* | libstdc++.so*) ;;
    libcu* | libnccl* | libnv*) ;;
    *) cp -L "$l" "$bundle/lib/" || exit 1; n=$((n + 1)) ;;
  esac
done
if ldd "${tools[@]}" 2>/dev/null | grep -q "not found"; then
  echo "gpu-bundle: some library is missing here too:" >&2
  ldd "${tools[@]}" | grep "not found" >&2
  exit 1
fi

cat >"$bundle/run-gpu-check.sh" <<'EOF'
#!/usr/bin/env bash
# run-gpu-check.sh OUTDIR — runs servesim's scripts/gpu-check.sh with the
# servesim of this bundle (made by scripts/gpu-bundle.sh). SERVESIM_ROOT
# names the servesim checkout (default: the folder above this bundle).
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: run-gpu-check.sh OUTDIR" >&2
  exit 2
fi
b=$(cd "$(dirname "$0")" && pwd)
root=${SERVESIM_ROOT:-$(dirname "$b")}
if [ ! -f "$root/scripts/gpu-check.sh" ]; then
  echo "run-gpu-check: no scripts/gpu-check.sh under $root (set SERVESIM_ROOT to the servesim checkout)" >&2
  exit 2
fi
libdirs=$b/lib
for f in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  ldconfig -p 2>/dev/null | grep -q "$f" && continue
  p=$(find /usr/local /opt /usr/lib -name "$f" 2>/dev/null | head -1)
  [ -n "$p" ] && libdirs="$libdirs:$(dirname "$p")"
done
export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$b/bin:$PATH
if missing=$(ldd "$b/servesim" "$b/libservesim_gpu.so" 2>&1 | grep "not found"); then
  echo "run-gpu-check: libraries not found on this host:" >&2
  echo "$missing" >&2
fi
SERVESIM_BIN=$b/servesim SERVESIM_GPU_LIB=$b/libservesim_gpu.so bash "$root/scripts/gpu-check.sh" "$1"
rc=$?
# GPU_CHECK_PACK=FILE.tgz: the whole OUTDIR in one archive (for hosts that
# hand back only a few files), written whatever the check's outcome.
if [ -n "${GPU_CHECK_PACK:-}" ] && [ -d "$1" ]; then
  tar czf "$GPU_CHECK_PACK" -C "$(dirname "$1")" "$(basename "$1")" ||
    echo "run-gpu-check: could not write $GPU_CHECK_PACK" >&2
fi
exit $rc
EOF
chmod +x "$bundle/run-gpu-check.sh" || exit 1
size=$(du -sh "$bundle" | cut -f1)
echo "gpu-bundle: $bundle ($size): servesim, libservesim_gpu.so (sm_$arch), $n libraries, run-gpu-check.sh"
