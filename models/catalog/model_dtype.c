/* model_quant — see model_dtype.h. */
#include "model_dtype.h"

#include "model_gpu_caps.h"
#include "model_spec.h"

#include <strings.h>

static const char *const dtype_names[MODEL_DTYPE_COUNT] = {"bf16",  "fp8",   "fp8_block", "mxfp8",
                                                           "nvfp4", "mxfp4", "int4"};

int model_dtype_from_name(const char *name, model_dtype *out, sim_err *err)
{
    for (int i = 0; name && i < MODEL_DTYPE_COUNT; i++)
        if (!strcasecmp(name, dtype_names[i])) {
            *out = (model_dtype)i;
            return 0;
        }
    return sim_err_set(err, SIM_EINVAL,
                       "unknown dtype '%s' (expected bf16, fp8, fp8_block, mxfp8, nvfp4, mxfp4 or int4)",
                       name ? name : "(null)");
}

const char *model_dtype_name(model_dtype d)
{
    return (int)d >= 0 && (int)d < MODEL_DTYPE_COUNT ? dtype_names[d] : "?";
}

double model_dtype_bytes(model_dtype d)
{
    switch (d) {
    case MODEL_DTYPE_BF16: return 2.0;
    case MODEL_DTYPE_FP8: return 1.0; /* one scale per tensor: negligible */
    case MODEL_DTYPE_FP8_BLOCK: return 1.0 + 4.0 / (128.0 * 128.0); /* fp32 per 128×128 weight tile */
    case MODEL_DTYPE_MXFP8: return 1.0 + 1.0 / 32.0;               /* e8m0 per 32 */
    case MODEL_DTYPE_NVFP4: return 0.5 + 1.0 / 16.0; /* e4m3 per 16; the fp32 tensor scale is negligible */
    case MODEL_DTYPE_MXFP4: return 0.5 + 1.0 / 32.0;
    case MODEL_DTYPE_INT4: return 0.5 + 2.0 / 32.0;
    }
    return 0;
}

static int has_fp4(const model_gpu *g)
{
    return g->flops_fp4 > 0;
}

/* FP8 weights on a GPU without FP8 tensor cores (Ampere) run weight-only:
 * the engines' FP8 Marlin kernels (vLLM's, SGLang's) dequantise them into
 * bf16 MMAs, as MXFP4 runs below Blackwell. (NVFP4 below Blackwell stays
 * refused: TensorRT-LLM has no such path.) */
static int weight_only(const model_gpu *g, model_dtype d)
{
    return (d == MODEL_DTYPE_FP8 || d == MODEL_DTYPE_FP8_BLOCK) && !(g->flops_fp8 > 0);
}

double model_dtype_peak(const model_gpu *g, model_dtype d)
{
    switch (d) {
    case MODEL_DTYPE_BF16:
    case MODEL_DTYPE_INT4: return g->flops_bf16;
    case MODEL_DTYPE_FP8:
    case MODEL_DTYPE_FP8_BLOCK: return weight_only(g, d) ? g->flops_bf16 : g->flops_fp8;
    case MODEL_DTYPE_MXFP8: return g->flops_fp8;
    case MODEL_DTYPE_NVFP4: return g->flops_fp4;
    case MODEL_DTYPE_MXFP4: return has_fp4(g) ? g->flops_fp8 : g->flops_bf16;
    }
    return 0;
}

/* Block FP8 on Hopper (DeepGEMM's design): the fp8 MMA has no scale
 * operands, so every 128 of K the partial sums are promoted to fp32 on the
 * CUDA cores and multiplied by the two blocks' scales. Ada's and RTX
 * Blackwell's block-fp8 kernels (mma.sync accumulating in registers; the
 * latter's block-scaled MMA takes only E8M0/E4M3 scales per 32/16, not
 * DeepSeek's fp32 per 128) do the same; only tcgen05 (datacenter
 * Blackwell) consumes the block scales in the MMA. That step costs this
 * fraction of the 128-K slice's tensor-core time, per slice, so for K >= 128
 * a constant fraction of the GEMM. Fitted by tests/model/test_quant.c from the
 * shared H100 GEMM tables: TensorRT-LLM's DeepGEMM fp8_block over its
 * per-tensor fp8 at compute-bound shapes (m, n, k >= 4096), median 1.103
 * (IQR 1.06-1.16); on B200 the same ratio is 0.92 (block scales consumed by
 * the tensor cores: no promotion). Dimensionless (s per s of MMA). */
#define MODEL_FP8_BLOCK_PROMOTE_HOPPER 0.10

double model_dtype_promote_frac(const model_gpu *g, model_dtype d)
{
    return d == MODEL_DTYPE_FP8_BLOCK && !model_gpu_has_tcgen05(g) && !weight_only(g, d)
               ? MODEL_FP8_BLOCK_PROMOTE_HOPPER
               : 0.0;
}

double model_dtype_gemm_eff(const model_gpu *g, model_dtype d)
{
    if (weight_only(g, d)) return g->eff_gemm;
    switch (d) {
    case MODEL_DTYPE_FP8_BLOCK: return g->eff_gemm_fp8 / (1.0 + model_dtype_promote_frac(g, d));
    case MODEL_DTYPE_BF16:
    case MODEL_DTYPE_INT4: return g->eff_gemm;
    case MODEL_DTYPE_NVFP4: return g->eff_gemm_fp4;
    case MODEL_DTYPE_MXFP4: return has_fp4(g) ? g->eff_gemm_fp8 : g->eff_gemm;
    default: return g->eff_gemm_fp8;
    }
}

double model_dtype_act_bytes(const model_gpu *g, model_dtype d)
{
    if (d == MODEL_DTYPE_MXFP4) return has_fp4(g) ? model_dtype_bytes(MODEL_DTYPE_MXFP8) : 2.0;
    if (weight_only(g, d)) return 2.0;
    /* Block FP8 activations carry an fp32 scale per 1×128 (weights per 128×128). */
    if (d == MODEL_DTYPE_FP8_BLOCK) return 1.0 + 4.0 / 128.0;
    return model_dtype_quantises_acts(d) ? model_dtype_bytes(d) : 2.0;
}

int model_dtype_check(const model_gpu *g, model_dtype d, const char *model, sim_err *err)
{
    if ((int)d < 0 || (int)d >= MODEL_DTYPE_COUNT)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown dtype %d", model, (int)d);
    /* Weight-only formats dequantise into bf16 GEMMs on any GPU; so do FP8
     * weights where there are no FP8 tensor cores (weight_only). */
    if (d == MODEL_DTYPE_BF16 || d == MODEL_DTYPE_INT4 || d == MODEL_DTYPE_MXFP4 || weight_only(g, d)) return 0;
    if (d == MODEL_DTYPE_NVFP4 && g->flops_fp4 <= 0)
        return sim_err_set(err, SIM_EINVAL,
                           "%s has no FP4 tensor cores (tflops.fp4 = 0); nvfp4 GEMMs need Blackwell (CC 10.x); run "
                           "%s in fp8 or bf16 on it",
                           g->name, model);
    if (d == MODEL_DTYPE_MXFP8 && g->flops_fp8 <= 0)
        return sim_err_set(err, SIM_EINVAL,
                           "%s has no FP8 tensor cores (tflops.fp8 = 0); run %s in fp8, fp8_block (weight-only "
                           "there) or bf16 on it, or pick a GPU with FP8 (Hopper or newer)",
                           g->name, model);
    /* Hopper's and Ada's fp8 MMAs have no block-scale operands: DeepGEMM
     * emulates block-128 by promoting partial sums on CUDA cores, but the
     * E8M0 microscaling of MXFP8 is a Blackwell tensor-core feature (CC
     * 10.x and 12.x). */
    if (d == MODEL_DTYPE_MXFP8 && !model_gpu_has_block_scaled_mma(g))
        return sim_err_set(err, SIM_EINVAL,
                           "%s (CC %.1f) has no MX block-scaled tensor cores; mxfp8 needs Blackwell (CC 10.x or "
                           "12.x); use fp8_block on it",
                           g->name, g->cc);
    return 0;
}

void model_part_dtypes(const model_spec *m, int from_checkpoint, model_dtype d, model_dtype out[MODEL_PART_COUNT])
{
    const int32_t ck[MODEL_PART_COUNT] = {m->wdtype_attn, m->wdtype_dense, m->wdtype_expert, m->wdtype_shared};
    /* Naming the checkpoint's own main format is running the checkpoint. */
    if ((int)d == model_spec_main_dtype(m)) from_checkpoint = 1;
    for (int p = 0; p < MODEL_PART_COUNT; p++)
        out[p] = from_checkpoint && ck[p] >= 0 && ck[p] < MODEL_DTYPE_COUNT ? (model_dtype)ck[p] : d;
}

int model_dtype_quantises_acts(model_dtype d)
{
    return d != MODEL_DTYPE_BF16 && d != MODEL_DTYPE_INT4 && d != MODEL_DTYPE_MXFP4;
}

int model_dtype_is_fp4_class(model_dtype d)
{
    return d == MODEL_DTYPE_NVFP4 || d == MODEL_DTYPE_MXFP4 || d == MODEL_DTYPE_INT4;
}

int model_dtype_for_precision(const char *precision, model_dtype ckpt, model_dtype *out, sim_err *err)
{
    if (!precision || !*precision || !strcasecmp(precision, "auto")) {
        *out = ckpt;
        return 0;
    }
    if (!strcasecmp(precision, "fp4")) {
        *out = model_dtype_is_fp4_class(ckpt) && ckpt != MODEL_DTYPE_INT4 ? ckpt : MODEL_DTYPE_NVFP4;
        return 0;
    }
    if (!strcasecmp(precision, "fp8")) {
        *out = ckpt == MODEL_DTYPE_FP8 || ckpt == MODEL_DTYPE_FP8_BLOCK || ckpt == MODEL_DTYPE_MXFP8 ? ckpt
                                                                                                  : MODEL_DTYPE_FP8;
        return 0;
    }
    return model_dtype_from_name(precision, out, err);
}
