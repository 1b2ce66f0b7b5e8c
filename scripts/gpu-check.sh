#!/usr/bin/env bash
# gpu-check.sh OUTDIR — on a machine with an NVIDIA GPU: builds servesim and
# its GPU backend plugin (libservesim_gpu.so, -DSERVESIM_CUDA=ON) for the
# present GPU's architecture only, runs every kernel check against its CPU
# reference (every timed template variant and layout; see
# docs/calibration.md) in one process and, when that fails or hangs, each
# kernel still in doubt again in a process of its own (a fault's sticky CUDA
# error fails every check after it; a hang stops them all), so the kernels
# that fail or hang are named and only those that pass are timed
# (calibrate --kernels); calibrates the quick grid into a perf-db, one op at
# a time with a share of the grid time each (an op cut short resumes in a
# last pass with what is left); times the production-library references
# through PyTorch where it is installed (calib/torch_ref.py:
# FlashAttention/cuDNN attention, cuBLASLt fp8 GEMM, grouped GEMM); repeats
# the passing kernels' checks under compute-sanitizer's memcheck and
# racecheck when it is installed; and writes into OUTDIR: perf.db, its text
# dump perf.sql, kernels.txt (calibrate --list-kernels), check.log,
# check-isolated.log (the one-by-one checks, when they ran), memcheck.log,
# racecheck.log, calibrate.log (calibrate-OP.log per op), torch.log,
# build.log, sass.txt (the plugin's per-kernel registers and the GEMM
# ladder's and tensor-core attention's tensor-core and copy instructions,
# when cuobjdump is found) and
# summary.txt (each kernel vs its library reference and vs peak, the GEMM
# ladder's rungs vs cuBLAS and against the targets of docs/calibration.md,
# the grouped GEMMs vs torch._grouped_mm and the attention kernels against
# theirs, also printed at the end). On an
# H100/H200 the grid times the Hopper GEMM rungs (kern_gemm_bf16_wgmma and
# the fp8 block-scaled kern_gemm_fp8_block_wgmma, sm_90a), on a B200 the
# Blackwell rungs (kern_gemm_bf16_tcgen05 and the MXFP8 kern_gemm_mxfp8_tcgen05, sm_100a),
# beside the Ampere rung and cuBLAS; the tensor-core flash prefill and paged
# decode (kern_attn_prefill_mma, kern_decode_split_mma) are checked and
# timed beside the SIMT ones on every GPU, and on an H100/H200 the Hopper
# flash prefill (kern_attn_prefill_wgmma, sm_90a) beside them and the
# grouped GEMMs' Hopper rung (kern_grouped_{contig,masked}_wgmma, sm_90a)
# beside their Ampere rung. The grouped GEMMs are timed at the balanced
# routing and at Zipf s = 1 (skew_milli 1000). Budget: about 10 minutes in
# all (build <= 4, checks <= 1 (+ 20 s per kernel in doubt), grid <= 5,
# PyTorch references <= 2, sanitizers <= 3; a cut-short step is resumable
# by rerunning).
# Exit codes: 0 all passed, 1 a check or step failed, 2 usage, 3 no GPU (or
# a GPU the GPU backend cannot load or use).
# Environment: NVIDIA_SMI (default nvidia-smi), SERVESIM_BUILD_DIR (default
# build-gpucheck), GPU_CHECK_GRID (quick or full, default quick; full keeps
# the slow SIMT prefill kernel, and with it the tensor-core ones, on the
# quick grid's shapes),
# GPU_CHECK_GRID_S (seconds for the grid, default 300), GPU_CHECK_TORCH_S
# (seconds for the PyTorch references, default 120; 0 skips them),
# GPU_CHECK_CHECK_S (seconds for the all-kernel check, default 60),
# GPU_CHECK_KERNEL_S (seconds for one kernel's check on its own, default 20),
# GPU_CHECK_SANITIZER_S (seconds per compute-sanitizer tool, default 90),
# SERVESIM_BIN (a servesim already built with -DSERVESIM_CUDA=ON for this
# GPU, its libservesim_gpu.so beside it or named by SERVESIM_GPU_LIB: the
# build step is skipped, for GPU hosts that lack the -dev packages;
# scripts/gpu-bundle.sh packs such a binary with its libraries and a
# run-gpu-check.sh that sets this),
# GPU_CHECK_SANITIZER (0 skips compute-sanitizer; default: run it when found
# on the PATH or in $CUDA_HOME/bin).
set -uo pipefail
if [ $# -ne 1 ] || [ "${1:-}" = "--help" ]; then
  echo "usage: scripts/gpu-check.sh OUTDIR" >&2
  exit 2
fi
out=$1
grid=${GPU_CHECK_GRID:-quick}
case "$grid" in quick | full) ;; *) echo "gpu-check: GPU_CHECK_GRID is quick or full, not '$grid'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
smi=${NVIDIA_SMI:-nvidia-smi}
if ! command -v "$smi" >/dev/null 2>&1; then
  echo "gpu-check: '$smi' not found: this script needs a machine with an NVIDIA GPU and its driver" >&2
  echo "gpu-check: (without a GPU, 'servesim calibrate --backend cpu --db FILE' exercises the harness)" >&2
  exit 3
fi
if ! gpu=$("$smi" --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1 | head -1) || [ -z "$gpu" ]; then
  echo "gpu-check: $smi found no usable GPU: $gpu" >&2
  exit 3
fi
cc=$(echo "$gpu" | awk -F', *' '{print $2}')
case "$cc" in
  9.0) arch=90a ;;
  10.0) arch=100a ;;
  10.3) arch=103a ;;
  [0-9]*.[0-9]*) arch=${cc/./} ;;
  *) echo "gpu-check: cannot read the compute capability from '$gpu'" >&2; exit 3 ;;
esac
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
# A relative SERVESIM_BIN is relative to where the script was started.
if [ -n "${SERVESIM_BIN:-}" ] && [ "${SERVESIM_BIN#/}" = "$SERVESIM_BIN" ] && [ -e "$SERVESIM_BIN" ]; then
  SERVESIM_BIN=$(cd "$(dirname "$SERVESIM_BIN")" && pwd)/$(basename "$SERVESIM_BIN")
fi
echo "gpu-check: $gpu → target sm_$arch" | tee "$out/summary.txt"

build=${SERVESIM_BUILD_DIR:-build-gpucheck}
cd "$root" || exit 1
if [ -n "${SERVESIM_BIN:-}" ]; then
  bin=$SERVESIM_BIN
  echo "gpu-check: using the prebuilt $bin (no build)" | tee -a "$out/summary.txt"
elif ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch" &&
       timeout 240 cmake --build "$build" -j "$(nproc)" --target servesim servesim_gpu; } >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  echo "gpu-check: build failed (log: $out/build.log)" >&2
  exit 1
else
  bin=$build/servesim
fi
if ! "$bin" calibrate --help >/dev/null 2>&1; then
  echo "gpu-check: $bin has no working 'calibrate' command ($bin calibrate --help failed)" >&2
  exit 1
fi

# What the compiler made of the kernels (no device time): registers and
# spills per kernel, and the instructions each GEMM and attention rung is
# meant to use.
plugin=${SERVESIM_GPU_LIB:-$(dirname "$bin")/libservesim_gpu.so}
if objdump=$("$root/scripts/cuda-tool.sh" cuobjdump) && [ -f "$plugin" ]; then
  {
    "$objdump" -res-usage "$plugin" 2>&1 | grep -E "arch =|Function|REG:"
    echo "== GEMM ladder and tensor-core attention instructions (count per architecture) =="
    "$objdump" -sass "$plugin" 2>/dev/null | awk '
      /code for sm_/ { arch = $3 }
      /Function :/ { fn = $3 }
      fn ~ /gemm|_mma_kernel|attn_prefill_sm90/ && match($0, /(HMMA|HGMMA|QGMMA|UTMALDG|UTMASTG|LDGSTS|LDSM|SYNCS|UTC[A-Z]*MMA|LDTM)[.A-Z0-9x]*/) {
        op = substr($0, RSTART, RLENGTH); sub(/\..*/, "", op); n[arch " " op]++
      }
      END { for (k in n) print k, n[k] }' | sort
  } >"$out/sass.txt"
  echo "gpu-check: SASS summary in $out/sass.txt" | tee -a "$out/summary.txt"
fi

status=0
# Checks. Every kernel in one process first; when that fails, each kernel
# still in doubt (a FAIL or SKIP line, no line at all, or the last one logged
# before a hang or crash) is checked again in a process of its own, since a
# fault leaves a sticky CUDA error that fails every check after it and a hang
# stops them all. Only the kernels that pass are timed (--kernels).
if ! "$bin" calibrate --list-kernels >"$out/kernels.txt" 2>"$out/check.err"; then
  cat "$out/check.err" >&2
  if grep -q "no NVIDIA GPU found" "$out/check.err"; then
    # nvidia-smi sees a GPU but the GPU backend cannot use it (plugin not
    # built or not loadable, CUDA runtime vs driver mismatch): nothing to time.
    echo "gpu-check: the GPU backend cannot run here (see above); nothing measured" | tee -a "$out/summary.txt" >&2
    exit 3
  fi
  echo "gpu-check: cannot list the GPU backend's kernels" >&2
  exit 1
fi
timeout "${GPU_CHECK_CHECK_S:-60}" "$bin" calibrate --check --log "$out/check.log" --quiet 2>"$out/check.err"
rc=$?
cat "$out/check.err" >&2
good=""
bad=""
if [ $rc -eq 0 ]; then
  good=$(awk '{print $2}' "$out/kernels.txt" | paste -sd, -)
else
  what="failed (rc $rc)"
  [ $rc -eq 124 ] && what="hung (cut at ${GPU_CHECK_CHECK_S:-60} s)"
  echo "gpu-check: the checks $what; checking the kernels in doubt one by one" | tee -a "$out/summary.txt" >&2
  last=$(awk '/^check /{k=$3} END{print k}' "$out/check.log")
  : >"$out/check-isolated.log"
  while read -r op kernel _; do
    if [ "$kernel" != "$last" ] && grep -Eq "^check +$op +$kernel +PASS" "$out/check.log" &&
       ! grep -Eq "^check +$op +$kernel +(FAIL|SKIP)" "$out/check.log"; then
      good="$good,$kernel"
      continue
    fi
    timeout "${GPU_CHECK_KERNEL_S:-20}" "$bin" calibrate --check --ops "$op" --kernels "$kernel" \
      --log "$out/check-one.log" --quiet >/dev/null 2>"$out/check-one.err" </dev/null
    krc=$?
    cat "$out/check-one.log" >>"$out/check-isolated.log" 2>/dev/null
    case $krc in
      0) good="$good,$kernel"; verdict="passed on its own" ;;
      124) bad="$bad $kernel"; verdict="HUNG (cut at ${GPU_CHECK_KERNEL_S:-20} s)" ;;
      *) bad="$bad $kernel"; verdict="FAILED (rc $krc: $(grep -m1 -v '^$' "$out/check-one.err" | cut -c1-160))" ;;
    esac
    echo "gpu-check: $op $kernel $verdict" | tee -a "$out/summary.txt" "$out/check-isolated.log" >&2
  done <"$out/kernels.txt"
  rm -f "$out/check-one.log" "$out/check-one.err"
  good=${good#,}
  status=1
  echo "gpu-check: kernel checks failed, see $out/check.log and $out/check-isolated.log; not timed:${bad:- (none: each passed on its own)}" |
    tee -a "$out/summary.txt" >&2
fi

# The grid, one op at a time, each with a share of the time (what an op
# leaves unused passes to the next), then one pass over all ops with what
# is left, resuming any op cut short; only the kernels that passed.
ops_all=gemm,grouped_contig,grouped_masked,attn_prefill,attn_decode,lse_merge,softmax,rmsnorm,quant_fp8,quant_mxfp8,copy,allreduce
grid_s=${GPU_CHECK_GRID_S:-300}
grid_end=$((SECONDS + grid_s))
run_grid() { # run_grid OPS GRID SECONDS LOG: 124 when cut at SECONDS
  [ "$3" -lt 1 ] && return 124
  timeout "$3" "$bin" calibrate --grid "$2" --ops "$1" --kernels "$good" --db "$out/perf.db" --log "$out/$4" \
    --quiet >>"$out/calibrate.out" 2>>"$out/calibrate.err"
}
: >"$out/calibrate.out"
: >"$out/calibrate.err"
cut=0
if [ -z "$good" ]; then
  echo "gpu-check: no kernel passed its checks: nothing timed" | tee -a "$out/summary.txt" >&2
else
  for op in ${ops_all//,/ }; do
    # each op's share of the grid time, in percent
    case $op in gemm) pct=28 ;; grouped_contig | grouped_masked) pct=14 ;; attn_prefill) pct=13 ;; attn_decode) pct=10 ;; *) pct=3 ;; esac
    # an op none of whose kernels passed has nothing to time
    awk -v op="$op" '$1 == op {print $2}' "$out/kernels.txt" | grep -qxF -f <(tr , '\n' <<<"$good") || continue
    g=$grid
    # the SIMT prefill needs seconds per large point: on the full grid the
    # prefills get the quick grid's shapes (the PyTorch references cover the rest)
    [ "$op" = attn_prefill ] && [ "$grid" = full ] && g=quick
    left=$((grid_end - SECONDS))
    t=$((grid_s * pct / 100))
    [ $t -gt $left ] && t=$left
    run_grid "$op" "$g" "$t" "calibrate-$op.log"
    rc=$?
    if [ $rc -eq 124 ]; then
      cut=1
      echo "gpu-check: $op cut at its share of the grid time (${t} s)" >&2
    elif [ $rc -ne 0 ]; then
      status=1
      echo "gpu-check: calibrate $op failed (rc $rc), see $out/calibrate-$op.log" >&2
    fi
  done
  if [ $cut -eq 1 ]; then
    ops=$ops_all
    [ "$grid" = full ] && ops=${ops_all/attn_prefill,/}
    run_grid "$ops" "$grid" $((grid_end - SECONDS)) calibrate-resume.log
    rc=$?
    if [ $rc -eq 124 ]; then
      echo "gpu-check: $grid grid cut at its time limit (${grid_s} s); rerun to resume (points so far are kept)" |
        tee -a "$out/summary.txt" >&2
    elif [ $rc -ne 0 ]; then
      status=1
      echo "gpu-check: calibrate failed (rc $rc), see $out/calibrate-resume.log" >&2
    fi
  fi
  cat "$out"/calibrate-*.log >"$out/calibrate.log" 2>/dev/null
  tail -n 3 "$out/calibrate.err" >&2
fi
torch_s=${GPU_CHECK_TORCH_S:-120}
if [ "$torch_s" != 0 ] && [ -f "$out/perf.db" ] && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  timeout $((torch_s + 60)) python3 "$root/calib/torch_ref.py" --servesim "$bin" --db "$out/perf.db" --grid "$grid" \
    --max-seconds "$torch_s" --log "$out/torch.log"
  rc=$?
  [ $rc -ne 0 ] && status=1 && echo "gpu-check: PyTorch references failed (rc $rc), see $out/torch.log" >&2
else
  echo "gpu-check: no PyTorch with CUDA here: attention and fp8 GEMM have only the bundled kernels" | tee -a "$out/summary.txt"
fi
# The same checks under compute-sanitizer: out-of-bounds and misaligned
# accesses (memcheck) and shared-memory races (racecheck) in every checked
# variant (cuBLAS runs under them too).
ops_bundled=gemm,grouped_contig,grouped_masked,attn_prefill,attn_decode,lse_merge,softmax,rmsnorm,quant_fp8,quant_mxfp8
san_kernels=$(awk -v ops=",$ops_bundled," -v good=",$good," 'index(ops, "," $1 ",") && index(good, "," $2 ",") {print $2}' \
  "$out/kernels.txt" | paste -sd, -)
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
if [ -z "$san_kernels" ]; then
  echo "gpu-check: no kernel passed its checks: compute-sanitizer not run" | tee -a "$out/summary.txt"
elif [ "${GPU_CHECK_SANITIZER:-1}" != 0 ] && [ -x "$sanitizer" ]; then
  for tool in memcheck racecheck; do
    timeout "${GPU_CHECK_SANITIZER_S:-90}" "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
      "$bin" calibrate --check --ops "$ops_bundled" --kernels "$san_kernels" \
      --log "$out/$tool-check.log" --quiet >"$out/$tool.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then echo "gpu-check: compute-sanitizer $tool: no errors" | tee -a "$out/summary.txt"
    elif [ $rc -eq 124 ]; then echo "gpu-check: compute-sanitizer $tool cut at ${GPU_CHECK_SANITIZER_S:-90} s (see $out/$tool.log)" | tee -a "$out/summary.txt"
    else
      status=1
      what="found errors"
      [ $rc -ne 9 ] && what="run failed (a check failing under it, or the tool)"
      echo "gpu-check: compute-sanitizer $tool $what (rc $rc), see $out/$tool.log" | tee -a "$out/summary.txt" >&2
    fi
  done
else
  echo "gpu-check: compute-sanitizer not found (or GPU_CHECK_SANITIZER=0): memcheck/racecheck not run" | tee -a "$out/summary.txt"
fi
"$bin" db export "$out/perf.db" "$out/perf.sql" || status=1

{
  echo
  echo "== kernels no GPU had run before this check (docs/calibration.md, 'The kernel ladder'): their checks =="
  echo "(Ampere GEMM v2 with split-K, Hopper wgmma GEMMs (bf16 and fp8 block-scaled) on cc 9.0, Blackwell tcgen05 GEMMs (bf16 and MXFP8) on cc 10.0,"
  echo " RMSNorm, quantisation, warp and block softmax v2, tensor-core flash prefill (Ampere mma.sync; Hopper wgmma on cc 9.0)"
  echo " and paged decode,"
  echo " grouped GEMMs over a tile list: contiguous v3, masked v2; their Hopper wgmma rung v1 on cc 9.0)"
  grep -E '^check .*(kern_gemm_bf16_(mma|wgmma|tcgen05)|kern_gemm_fp8_block_wgmma|kern_gemm_mxfp8_tcgen05|kern_rmsnorm|kern_quant_|kern_softmax_(warp|block)|kern_attn_prefill_(mma|wgmma)|kern_decode_split_mma|kern_grouped_(contig|masked)_(mma|wgmma))' "$out/check.log" ||
    echo "(none of them was checked here)"
  echo
  echo "== checks (kernel vs CPU reference) =="
  grep '^check' "$out/check.log" || true
  [ -f "$out/torch.log" ] && grep -E '^(check|skip)' "$out/torch.log"
  [ -f "$out/torch.log" ] && tail -1 "$out/torch.log"
  if command -v sqlite3 >/dev/null 2>&1 && [ -f "$out/perf.db" ]; then
    echo
    echo "== per kernel: best rate and best fraction of the roofline peak =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT op, dtype, kernel, count(*) AS points, printf('%.1f', max(tflops)) AS max_tflops,
              printf('%.0f', max(gbps)) AS max_gbps, printf('%.1f%%', 100*max(frac_of_peak)) AS best_peak
         FROM points GROUP BY op, dtype, kernel ORDER BY op, dtype, kernel;"
    echo
    echo "== bundled bf16 GEMM rungs vs cuBLAS (speed ratio, >1 = ours faster; mma = Ampere rung, wgmma = Hopper) =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT a.m, a.n, a.k, replace(a.kernel, 'kern_gemm_bf16_', '') AS rung, printf('%.1f', a.tflops) AS ours_tflops,
              printf('%.1f', b.tflops) AS cublas_tflops, printf('%.0f', a.gbps) AS ours_gbps,
              printf('%.2f', b.median_s / a.median_s) AS vs_cublas
         FROM points a JOIN points b ON a.gpu_id = b.gpu_id AND a.m = b.m AND a.n = b.n AND a.k = b.k
        WHERE a.op = 'gemm' AND b.op = 'gemm' AND a.dtype = 'bf16' AND a.kernel LIKE 'kern_gemm_bf16_%'
          AND b.kernel = 'cublas_gemm_ex'
        ORDER BY a.n, a.k, a.m, a.kernel;"
    echo
    echo "== GEMM targets (docs/calibration.md): >= 0.70x cuBLAS at m, n, k >= 4096; m <= 64 as GB/s (HBM share = GB/s / peak) =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT replace(a.kernel, 'kern_gemm_bf16_', '') AS rung,
              printf('%.2f', min(b.median_s / a.median_s)) AS worst_vs_cublas_large,
              (SELECT printf('%.0f', min(c.gbps)) FROM points c WHERE c.gpu_id = a.gpu_id AND c.op = 'gemm'
                  AND c.kernel = a.kernel AND c.m <= 64) AS worst_gbps_m64
         FROM points a JOIN points b ON a.gpu_id = b.gpu_id AND a.m = b.m AND a.n = b.n AND a.k = b.k
        WHERE a.op = 'gemm' AND b.op = 'gemm' AND a.dtype = 'bf16' AND a.kernel LIKE 'kern_gemm_bf16_%'
          AND b.kernel = 'cublas_gemm_ex' AND a.m >= 4096 AND a.n >= 4096 AND a.k >= 4096
        GROUP BY a.kernel ORDER BY a.kernel;"
    echo
    echo "== fp8 GEMM target (docs/calibration.md): block-scaled >= 60 % of the fp8 dense peak at m, n, k >= 4096"
    echo "   (wgmma = the Hopper rung, mma = mma.sync) =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT replace(kernel, 'kern_gemm_fp8_block_', '') AS rung, count(*) AS points,
              printf('%.1f%%', 100*min(frac_of_peak)) AS worst_peak, printf('%.1f%%', 100*max(frac_of_peak)) AS best_peak,
              printf('%.1f', max(tflops)) AS max_tflops
         FROM points
        WHERE op = 'gemm' AND dtype = 'fp8' AND kernel LIKE 'kern_gemm_fp8_block_%' AND m >= 4096 AND n >= 4096
          AND k >= 4096
        GROUP BY kernel ORDER BY kernel;"
    echo
    echo "== grouped GEMM target (docs/calibration.md): >= 0.70x torch._grouped_mm at m >= 512 tokens per expert, both layouts"
    echo "   (speed ratio vs torch's contiguous layout at the same experts, m, n, k; torch times equal groups) =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT a.op, a.kernel, a.kernel_version AS version, count(*) AS points,
              printf('%.2f', min(b.median_s / a.median_s)) AS worst_vs_torch,
              printf('%.2f', max(b.median_s / a.median_s)) AS best_vs_torch, printf('%.1f', max(a.tflops)) AS max_tflops
         FROM points a JOIN points b ON a.gpu_id = b.gpu_id AND a.groups = b.groups AND a.m = b.m AND a.n = b.n
              AND a.k = b.k AND a.skew_milli = b.skew_milli
        WHERE a.op IN ('grouped_contig', 'grouped_masked') AND a.kernel LIKE 'kern_grouped_%'
          AND b.op = 'grouped_contig' AND b.kernel = 'torch_grouped_mm' AND a.m >= 512
        GROUP BY a.op, a.kernel, a.kernel_version ORDER BY a.op;"
    echo
    echo "== grouped GEMMs under skewed routing (Zipf s = 1, the same tokens): time over the balanced routing's"
    echo "   at the same experts, m, n, k, per layout (docs/calibration.md, 'Routing skew') =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT a.op, a.kernel, count(*) AS points, printf('%.2f', min(a.median_s / b.median_s)) AS min_skewed_vs_balanced,
              printf('%.2f', max(a.median_s / b.median_s)) AS max_skewed_vs_balanced
         FROM points a JOIN points b ON a.gpu_id = b.gpu_id AND a.op = b.op AND a.dtype = b.dtype
              AND a.kernel = b.kernel AND a.kernel_version = b.kernel_version AND a.groups = b.groups AND a.m = b.m
              AND a.n = b.n AND a.k = b.k
        WHERE a.op IN ('grouped_contig', 'grouped_masked') AND a.skew_milli = 1000 AND b.skew_milli = 0
        GROUP BY a.op, a.kernel ORDER BY a.op, a.kernel;"
    echo
    echo "== attention targets (docs/calibration.md): flash prefill >= 50 % of bf16 peak at 8k causal (m = 8192, no prefix);"
    echo "   paged decode >= 75 % of HBM at context >= 4096 (fraction of peak = the roofline's HBM share for decode) =="
    sqlite3 -column -header "$out/perf.db" \
      "SELECT op, kernel, count(*) AS points, printf('%.1f%%', 100*min(frac_of_peak)) AS worst_peak,
              printf('%.1f%%', 100*max(frac_of_peak)) AS best_peak, printf('%.1f', max(tflops)) AS max_tflops,
              printf('%.0f', max(gbps)) AS max_gbps
         FROM points
        WHERE (op = 'attn_prefill' AND m >= 8192 AND ctx = 0) OR (op = 'attn_decode' AND ctx >= 4096)
        GROUP BY op, kernel ORDER BY op, kernel;"
  else
    echo "(sqlite3 not installed: see 'servesim db show $out/perf.db')"
  fi
} | tee -a "$out/summary.txt"
echo "gpu-check: results in $out (status $status)"
exit $status
