/* calib_backend — what the calibration loop needs from a place that runs
 * kernels: its identity, the kernels it has per op, and prepare / run /
 * check / release on one shape at a time. Two implementations:
 *   cpu  times the C references (kernels/ref/kern_*_ref.c) — exercises the whole
 *        harness (grid, timing, database, resume, read-back) with no GPU;
 *   gpu  times the CUDA kernels and library references (cuBLAS, NCCL,
 *        device copies) with CUDA events over rotating buffers larger than
 *        L2. It lives in the plugin libservesim_gpu.so (built with
 *        -DSERVESIM_CUDA=ON), which calib_backend_gpu_create loads with
 *        dlopen: servesim and the tests link no CUDA library, and only
 *        `servesim calibrate --backend gpu` pays for loading CUDA.
 * The struct is a plain vtable over an opaque state the backend owns;
 * destroy() frees it. prepare() sets up one shape in one data layout
 * (CALIB_LAYOUT_*; SIM_EINVAL when the kernel does not take that shape, e.g.
 * the fp8 GEMM and a K that is no multiple of 128). run() times one
 * execution (seconds). check() runs the prepared point once on NaN-poisoned
 * outputs with guard canaries after every buffer and compares every output
 * element with an independent reference (calib_check.h); SIM_ENOTSUP when
 * the kernel has no check (a library reference) or cannot run on this
 * device. sample() (may be NULL) reports the device state right after the
 * last run(): clocks, throttle reasons, and whether the run read its data
 * from HBM (L2 flushed, buffers rotated) or partly from L2. Peaks (FLOP/s
 * per dtype, bytes/s) are 0 when unknown (no fraction of peak is then
 * stored). */
#ifndef CALIB_BACKEND_H
#define CALIB_BACKEND_H

#include "sim_err.h"
#include "calib_check.h"
#include "calib_db.h"
#include "calib_op.h"

typedef struct {
    const char *kernel; /* e.g. "kern_gemm_bf16_mma", "cublas_gemm_ex" */
    int32_t version;
    const char *dtype;  /* "bf16", "fp8", "fp32", "mxfp8" */
    int32_t is_library; /* a library reference rather than a bundled kernel */
} calib_kernel_desc;

typedef struct {
    int32_t valid;           /* 0: no device state known (then nothing is dropped) */
    int32_t sm_mhz, mem_mhz; /* current clocks */
    uint64_t reasons;        /* NVML clock-event (throttle) reason bits */
    int32_t throttled;       /* a slowdown reason (power cap, thermal, HW) was active */
    int32_t l2_cold;         /* 1: inputs and outputs came from HBM; 0: partly L2-resident; −1 unknown */
} calib_sample;

typedef struct {
    const char *name; /* "cpu" | "gpu" */
    void *state;
    int (*identity)(void *st, calib_gpu_id *id, sim_err *err);
    /* Kernels available for op (n may be 0: op not supported here, and
     * *why says why). */
    void (*kernels)(void *st, calib_op op, const calib_kernel_desc **list, int32_t *n, const char **why);
    int (*prepare)(void *st, calib_op op, int32_t kernel, const calib_shape *s, uint32_t layout, sim_err *err);
    int (*run)(void *st, double *seconds, sim_err *err);
    int (*check)(void *st, calib_check_result *r, sim_err *err);
    void (*sample)(void *st, calib_sample *out);
    void (*release)(void *st);
    void (*destroy)(void *st);
    double (*peak_flops)(void *st, calib_dtype dtype);
    double peak_bw;
    int32_t local_ranks; /* devices for collectives (0: none) */
    int32_t default_warmup, default_reps;
} calib_backend;

int calib_backend_cpu_create(calib_backend *b, sim_err *err);

/* Bumped whenever calib_backend or the types it passes change: a plugin
 * built for another ABI refuses to load. */
#define CALIB_BACKEND_ABI 3
#define CALIB_GPU_PLUGIN "libservesim_gpu.so"
#define CALIB_GPU_PLUGIN_ENTRY "calib_gpu_plugin_create"
typedef int (*calib_gpu_plugin_fn)(int32_t abi, calib_backend *b, sim_err *err);

/* Loads the GPU plugin — $SERVESIM_GPU_LIB when set, else
 * libservesim_gpu.so beside the running executable, else the dynamic
 * loader's search path — and creates its backend. The library stays loaded
 * for the life of the process (the CUDA runtime does not unload cleanly).
 * SIM_ENOTSUP with "no NVIDIA GPU found (reason); use --backend cpu …" when
 * the plugin is not built, cannot be loaded (a missing or broken CUDA
 * library), is not a servesim GPU plugin of this ABI, or finds no usable
 * GPU. */
int calib_backend_gpu_create(calib_backend *b, sim_err *err);

#endif
