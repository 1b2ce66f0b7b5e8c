/* model_quant — number formats of weights, activations and the KV cache.
 *
 * A model_dtype names a storage format: bf16, fp8 with one per-tensor scale,
 * fp8 with a 4-byte scale per 128 values (DeepSeek-style block-128), MXFP8
 * (OCP microscaling: a 1-byte E8M0 scale per 32 values) and NVFP4 (4-bit
 * E2M1 values with a 1-byte E4M3 scale per 16). This module says what a
 * format costs: bytes per value with its scales amortised, which tensor-core
 * peak a GEMM in it runs at, whether the GPU has that peak (SIM_ENOTSUP with
 * the reason otherwise) and whether activations must be quantised before a
 * GEMM. Units: bytes per value, FLOP/s. Pure functions, no state. */
#ifndef MODEL_QUANT_H
#define MODEL_QUANT_H

#include "../sim/sim_err.h"
#include "model_catalog.h"

typedef enum {
    MODEL_DTYPE_BF16 = 0,
    MODEL_DTYPE_FP8 = 1,       /* e4m3, per-tensor scale */
    MODEL_DTYPE_FP8_BLOCK = 2, /* e4m3, fp32 scale per 128 values */
    MODEL_DTYPE_MXFP8 = 3,     /* e4m3, e8m0 scale per 32 values */
    MODEL_DTYPE_NVFP4 = 4      /* e2m1, e4m3 scale per 16 values */
} model_dtype;

#define MODEL_DTYPE_COUNT 5

/* Parses bf16 | fp8 | fp8_block | mxfp8 | nvfp4 (case-insensitive). */
int model_dtype_from_name(const char *name, model_dtype *out, sim_err *err);
const char *model_dtype_name(model_dtype d);

/* Bytes one value occupies, scales included (bf16 2, fp8 1, fp8_block
 * 1 + 4/128, mxfp8 1 + 1/32, nvfp4 0.5 + 1/16). 0 for an unknown value. */
double model_dtype_bytes(model_dtype d);

/* Dense tensor-core peak (FLOP/s) of a GEMM whose operands are in d:
 * bf16 → bf16 peak, fp8 kinds → fp8 peak, nvfp4 → fp4 peak; 0 when the GPU
 * lacks it. */
double model_dtype_peak(const model_gpu *g, model_dtype d);

/* 0 when GEMMs in d run on g; SIM_ENOTSUP with the reason otherwise
 * (no fp8/fp4 tensor cores; MX block scaling before Blackwell); `model`
 * names the model in the message. */
int model_dtype_check(const model_gpu *g, model_dtype d, const char *model, sim_err *err);

/* 1 when GEMMs in d take quantised activations (all but bf16). */
int model_dtype_quantises_acts(model_dtype d);

#endif
