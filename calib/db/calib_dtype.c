/* calib_dtype — see calib_dtype.h. One table per question, indexed by the
 * enum; one parser. The 4-bit formats' block scales:
 *   nvfp4             E2M1 values + one E4M3 scale per 16 (NVIDIA's NVFP4;
 *                     the fp32 per-tensor scale is negligible): 0.5 + 1/16;
 *                     its GEMMs quantise the activations to NVFP4 too (W4A4)
 *   mxfp4             E2M1 + one E8M0 scale per 32 (OCP Microscaling
 *                     Formats v1.0): 0.5 + 1/32
 *   w4a16_mxfp4       mxfp4 weights, bf16 activations
 *   w4a8_mxfp4_mxfp8  mxfp4 weights, MXFP8 activations (1 + 1/32)
 *   int4_wo / int4*   int4 weights with one fp16 scale per group of 128
 *                     along k (AWQ's and GPTQ's default group size, as
 *                     TensorRT-LLM's W4A16 AWQ and vLLM's Marlin run
 *                     them): 0.5 + 2/128; bf16 activations
 *   w4afp8            TensorRT-LLM's W4A8 AWQ: int4 weights, groups of 128,
 *                     fp8 activations */
#include "calib_dtype.h"

#include <stddef.h>
#include <string.h>

#define NVFP4_BYTES (0.5 + 1.0 / 16.0)
#define MXFP4_BYTES (0.5 + 1.0 / 32.0)
#define MXFP8_ACT_BYTES (1.0 + 1.0 / 32.0)
#define INT4_G128_BYTES (0.5 + 2.0 / 128.0)

static const struct {
    double bytes, act_bytes;
    calib_peak_kind peak;
} calib_dtype_info[CALIB_DTYPE_COUNT] = {
    [CALIB_DTYPE_OTHER] = {2, 2, CALIB_PEAK_NONE},
    [CALIB_DTYPE_BF16] = {2, 2, CALIB_PEAK_BF16},
    [CALIB_DTYPE_FP32] = {4, 4, CALIB_PEAK_FP32},
    [CALIB_DTYPE_FP8] = {1, 1, CALIB_PEAK_FP8},
    [CALIB_DTYPE_FP8_OTHER] = {1, 1, CALIB_PEAK_NONE},
    [CALIB_DTYPE_MXFP8] = {1, 1, CALIB_PEAK_FP8},
    [CALIB_DTYPE_INT8] = {1, 1, CALIB_PEAK_NONE},
    [CALIB_DTYPE_NVFP4] = {NVFP4_BYTES, NVFP4_BYTES, CALIB_PEAK_FP4},
    [CALIB_DTYPE_MXFP4] = {MXFP4_BYTES, 2, CALIB_PEAK_NONE},
    [CALIB_DTYPE_W4A16_MXFP4] = {MXFP4_BYTES, 2, CALIB_PEAK_BF16},
    [CALIB_DTYPE_W4A8_MXFP4_MXFP8] = {MXFP4_BYTES, MXFP8_ACT_BYTES, CALIB_PEAK_FP8},
    [CALIB_DTYPE_INT4] = {INT4_G128_BYTES, 2, CALIB_PEAK_BF16},
    [CALIB_DTYPE_W4AFP8] = {INT4_G128_BYTES, 1, CALIB_PEAK_FP8},
};

static const struct {
    const char *name;
    calib_dtype d;
} calib_dtype_names[] = {
    {"bf16", CALIB_DTYPE_BF16},   {"fp32", CALIB_DTYPE_FP32},
    {"fp8", CALIB_DTYPE_FP8},     {"mxfp8", CALIB_DTYPE_MXFP8},
    {"int8", CALIB_DTYPE_INT8},   {"nvfp4", CALIB_DTYPE_NVFP4},
    {"mxfp4", CALIB_DTYPE_MXFP4}, {"w4a16_mxfp4", CALIB_DTYPE_W4A16_MXFP4},
    {"w4a8_mxfp4_mxfp8", CALIB_DTYPE_W4A8_MXFP4_MXFP8}, {"w4afp8", CALIB_DTYPE_W4AFP8},
};

calib_dtype calib_dtype_parse(const char *name)
{
    if (!name) return CALIB_DTYPE_OTHER;
    for (size_t i = 0; i < sizeof calib_dtype_names / sizeof *calib_dtype_names; i++)
        if (strcmp(name, calib_dtype_names[i].name) == 0) return calib_dtype_names[i].d;
    if (strncmp(name, "int4", 4) == 0) return CALIB_DTYPE_INT4;
    if (strncmp(name, "fp8", 3) == 0) return CALIB_DTYPE_FP8_OTHER;
    return CALIB_DTYPE_OTHER;
}

static calib_dtype calib_dtype_valid(calib_dtype d)
{
    return (int)d >= 0 && d < CALIB_DTYPE_COUNT ? d : CALIB_DTYPE_OTHER;
}

double calib_dtype_bytes(calib_dtype d) { return calib_dtype_info[calib_dtype_valid(d)].bytes; }
double calib_dtype_act_bytes(calib_dtype d) { return calib_dtype_info[calib_dtype_valid(d)].act_bytes; }
calib_peak_kind calib_dtype_peak(calib_dtype d) { return calib_dtype_info[calib_dtype_valid(d)].peak; }
