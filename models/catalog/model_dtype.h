/* model_quant — number formats of weights, activations and the KV cache.
 *
 * A model_dtype names a storage format: bf16, fp8 with one per-tensor scale,
 * block fp8 (DeepSeek-style: an fp32 scale per 128×128 weight tile and per
 * 1×128 activation row slice; on Hopper the GEMM promotes partial sums on
 * the CUDA cores every 128 of K, see model_dtype_promote_frac), MXFP8
 * (OCP microscaling: a 1-byte E8M0 scale per 32 values), NVFP4 (4-bit
 * E2M1 values with a 1-byte E4M3 scale per 16), MXFP4 (E2M1 with an E8M0
 * scale per 32, as gpt-oss ships its experts) and int4 (group-wise
 * weight-only integers with a bf16 scale per 32 values, as compressed-tensors
 * packs Kimi-K2.5). mxfp4 and int4 are weight formats: GEMMs dequantise them
 * and take bf16 activations (W4A16), except mxfp4 on GPUs with FP4 tensor
 * cores (Blackwell), which run it natively against MXFP8 activations. This
 * module says what a
 * format costs: bytes per value with its scales amortised, which tensor-core
 * peak a GEMM in it runs at, whether the GPU has that peak (SIM_ENOTSUP with
 * the reason otherwise) and whether activations must be quantised before a
 * GEMM. Units: bytes per value, FLOP/s. Pure functions, no state. */
#ifndef MODEL_QUANT_H
#define MODEL_QUANT_H

#include "sim_err.h"
#include "model_catalog.h"

typedef enum {
    MODEL_DTYPE_BF16 = 0,
    MODEL_DTYPE_FP8 = 1,       /* e4m3, per-tensor scale */
    MODEL_DTYPE_FP8_BLOCK = 2, /* e4m3, fp32 scale per 128 values */
    MODEL_DTYPE_MXFP8 = 3,     /* e4m3, e8m0 scale per 32 values */
    MODEL_DTYPE_NVFP4 = 4,     /* e2m1, e4m3 scale per 16 values */
    MODEL_DTYPE_MXFP4 = 5,     /* e2m1, e8m0 scale per 32 values (weights) */
    MODEL_DTYPE_INT4 = 6       /* int4, bf16 scale per 32 values (weights only) */
} model_dtype;

#define MODEL_DTYPE_COUNT 7

/* Parses bf16 | fp8 | fp8_block | mxfp8 | nvfp4 | mxfp4 | int4
 * (case-insensitive). */
int model_dtype_from_name(const char *name, model_dtype *out, sim_err *err);
const char *model_dtype_name(model_dtype d);

/* Bytes one stored (weight) value occupies, scales included (bf16 2, fp8 1,
 * fp8_block 1 + 4/128² (fp32 per 128×128 tile), mxfp8 1 + 1/32, nvfp4 0.5 + 1/16, mxfp4 0.5 + 1/32, int4
 * 0.5 + 2/32). 0 for an unknown value. */
double model_dtype_bytes(model_dtype d);

/* Dense tensor-core peak (FLOP/s) of a GEMM with weights in d on g:
 * bf16 → bf16 peak, fp8 kinds → fp8 peak, nvfp4 → fp4 peak, int4 → bf16
 * peak (dequantised), mxfp4 → fp8 peak with FP4 tensor cores (MXFP4×MXFP8)
 * else bf16; fp8 and fp8_block without FP8 tensor cores (Ampere) run
 * weight-only (FP8 Marlin: dequantised into bf16 MMAs, bf16 peak and
 * activations); 0 when the GPU lacks it. */
double model_dtype_peak(const model_gpu *g, model_dtype d);

/* Fraction of that peak good kernels reach (the GPU's eff_gemm,
 * eff_gemm_fp8 or eff_gemm_fp4 by the tensor-core path d takes on g;
 * fp8_block on Hopper divided by 1 + model_dtype_promote_frac). */
double model_dtype_gemm_eff(const model_gpu *g, model_dtype d);

/* CUDA-core promotion time per unit of tensor-core time of a GEMM in d on
 * g: 0.10 for fp8_block below CC 10 (Hopper), 0 otherwise. */
double model_dtype_promote_frac(const model_gpu *g, model_dtype d);

/* Bytes per value of a GEMM's activations with weights in d on g: 2 (bf16)
 * for bf16 and the weight-only formats, the quantised size otherwise
 * (mxfp4 on FP4 tensor cores: MXFP8). */
double model_dtype_act_bytes(const model_gpu *g, model_dtype d);

/* 1 for the 4-bit formats (nvfp4, mxfp4, int4): what a measured table's
 * precision "fp4" means for a checkpoint stored in d. */
int model_dtype_is_fp4_class(model_dtype d);

/* The checkpoint's own format for a measured `precision` of fp4/fp8/bf16
 * (empty = the checkpoint's): "fp4" maps to the checkpoint's FP4 format
 * when it ships one (mxfp4 for gpt-oss) and to nvfp4 otherwise; "fp8" to
 * the checkpoint's fp8 kind when it ships one, else fp8; other names parse
 * as dtypes. ckpt is the checkpoint's main weight format. */
int model_dtype_for_precision(const char *precision, model_dtype ckpt, model_dtype *out, sim_err *err);

/* 0 when GEMMs in d run on g; SIM_EINVAL (bad input: the deployment asks
 * the GPU for what it cannot do) with the reason otherwise
 * (nvfp4 without FP4 tensor cores; MX block scaling before Blackwell;
 * fp8 and fp8_block run weight-only without FP8 tensor cores); `model`
 * names the model in the message. */
int model_dtype_check(const model_gpu *g, model_dtype d, const char *model, sim_err *err);

/* The formats the parts of a model's weights run in. */
typedef enum { MODEL_PART_ATTN = 0, MODEL_PART_DENSE = 1, MODEL_PART_EXPERT = 2, MODEL_PART_SHARED = 3 } model_part;
#define MODEL_PART_COUNT 4

/* Per part: the checkpoint's format (m->wdtype_*) when from_checkpoint or
 * when d is the checkpoint's main format (model_spec_main_dtype: naming it
 * runs the checkpoint as shipped, its bf16 parts included), else d for
 * every part. */
void model_part_dtypes(const model_spec *m, int from_checkpoint, model_dtype d, model_dtype out[MODEL_PART_COUNT]);

/* 1 when GEMMs in d take quantised activations (all but bf16 and the
 * weight-only formats; see model_dtype_act_bytes for mxfp4 on Blackwell). */
int model_dtype_quantises_acts(model_dtype d);

#endif
