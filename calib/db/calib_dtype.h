/* calib_dtype — the number format of a perf-db dtype name, parsed once.
 *
 * Perf-db dtype names are an open set: the harness writes bf16, fp8, mxfp8
 * and fp32; calib_ingest_dtype maps engine tables' names onto servesim's
 * and keeps the ones it does not know ("u8", "w4a16_mxfp4"); attention rows
 * carry "<weights>/<kv>" pairs ("fp8_block/bf16"). The names stay strings
 * where they key the database (calib_point, calib_table_series); what the
 * work model reads of a name (bytes per value, the tensor-core peak it runs
 * at) is this enum, which calib_dtype_parse gives once per name. Pure
 * functions, no state; the parser never fails (unknown names are
 * CALIB_DTYPE_OTHER). */
#ifndef CALIB_DTYPE_H
#define CALIB_DTYPE_H

typedef enum {
    CALIB_DTYPE_OTHER = 0,        /* any other name (fp16, u8, "bf16/fp8", "nvfp4/fp8"): 2 bytes, no known peak */
    CALIB_DTYPE_BF16 = 1,
    CALIB_DTYPE_FP32 = 2,         /* 4 bytes; peak half the bf16 tensor rate (tf32-class, a bound) */
    CALIB_DTYPE_FP8 = 3,          /* "fp8": per-tensor E4M3 */
    CALIB_DTYPE_FP8_OTHER = 4,    /* other names starting "fp8" (fp8_block, "fp8/bf16"): 1 byte, no known peak */
    CALIB_DTYPE_MXFP8 = 5,        /* E4M3 + E8M0 scale per 32: 1 byte (scales not counted), fp8 peak */
    CALIB_DTYPE_INT8 = 6,         /* 1 byte, no known peak */
    CALIB_DTYPE_NVFP4 = 7,        /* E2M1 + E4M3 scale per 16 (0.5 + 1/16); activations NVFP4 too */
    CALIB_DTYPE_MXFP4 = 8,        /* E2M1 + E8M0 scale per 32 (0.5 + 1/32); bf16 activations */
    CALIB_DTYPE_W4A16_MXFP4 = 9,  /* mxfp4 weights, bf16 activations, bf16 peak */
    CALIB_DTYPE_W4A8_MXFP4_MXFP8 = 10, /* mxfp4 weights, MXFP8 activations (1 + 1/32), fp8 peak */
    CALIB_DTYPE_INT4 = 11,        /* int4_wo and any name starting "int4": fp16 scale per 128 (0.5 + 2/128) */
    CALIB_DTYPE_W4AFP8 = 12,      /* TensorRT-LLM's W4A8 AWQ: int4 weights as INT4, fp8 activations */
    CALIB_DTYPE_COUNT = 13
} calib_dtype;

/* The tensor-core peak a format runs at (calib_peak_flops). */
typedef enum {
    CALIB_PEAK_NONE = 0, /* not known by name: no fraction of peak */
    CALIB_PEAK_BF16 = 1, /* bf16, and weight-only 4-bit formats (dequantised to bf16 in the mainloop) */
    CALIB_PEAK_FP32 = 2, /* half the bf16 rate */
    CALIB_PEAK_FP8 = 3,
    CALIB_PEAK_FP4 = 4
} calib_peak_kind;

/* The format of a whole name: exact names first (a KV pair is its own name,
 * so "nvfp4/fp8" is OTHER), then the prefixes "int4" (INT4) and "fp8"
 * (FP8_OTHER). name NULL is OTHER. */
calib_dtype calib_dtype_parse(const char *name);
/* Bytes per stored value (weights, KV), block scales amortised. */
double calib_dtype_bytes(calib_dtype d);
/* Bytes per value of the activations a GEMM in this format reads. */
double calib_dtype_act_bytes(calib_dtype d);
calib_peak_kind calib_dtype_peak(calib_dtype d);

#endif
