#!/usr/bin/env bash
# Regenerates calib/data/engines/<gpu>.sql.gz: the rows of the serving
# engines' measured per-op tables (../shared/validation/ops, public
# measurements of TensorRT-LLM, vLLM, SGLang and NCCL kernels) that the cost
# model prices from — GEMMs and fused MoE in the catalogue's weight dtypes
# (fused MoE also in the engines' mxfp4 and int4 expert formats), bf16
# prefill and decode attention, MLA kernels, MLA absorb BMMs,
# gated-delta-net kernels, fp8 activation quantisation, all-reduce,
# all-gather, reduce-scatter and all-to-all, and the whole MLA attention
# modules of DeepSeek-V3's geometry (every projection format and KV dtype
# the tables hold) —
# keeping per engine version and shape the fastest kernel (servesim db
# ingest --fastest). Usage:
#   scripts/ingest-engines.sh [OPS_DIR] [GPU...]   (default ../shared/validation/ops, every GPU there)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ops=${1:-$root/../shared/validation/ops}
shift || true
bin=${SERVESIM_BIN:-$root/build/servesim}
gpus=("$@")
[ ${#gpus[@]} -gt 0 ] || mapfile -t gpus < <(ls "$ops")
mkdir -p "$root/calib/data/engines"
for g in "${gpus[@]}"; do
  cat=${g//_/-}
  tmp=$(mktemp -d)
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops gemm --dtypes bf16,fp8,fp8_block,nvfp4
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops attn_prefill,attn_decode,allreduce,allgather,reduce_scatter,alltoall --dtypes bf16,fp16
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops moe,mla_bmm_pre,mla_bmm_post --dtypes bf16,fp8,fp8_block,nvfp4
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops moe --dtypes w4a16_mxfp4,w4a8_mxfp4_mxfp8,int4_wo
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops mla_prefill,mla_decode,gdn_prefill,gdn_decode,gdn_conv_prefill,gdn_conv_decode --dtypes bf16
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops quant_fp8,quant_scale --dtypes fp8
  "$bin" db ingest "$ops" --gpu "$g" --db "$tmp/p.db" --fastest --quiet \
    --ops mla_module_prefill,mla_module_decode
  "$bin" db export "$tmp/p.db" - | gzip -n9 > "$root/calib/data/engines/$cat.sql.gz"
  rm -rf "$tmp"
  echo "wrote calib/data/engines/$cat.sql.gz ($(du -h "$root/calib/data/engines/$cat.sql.gz" | cut -f1))"
done
