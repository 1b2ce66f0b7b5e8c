/* kern_gpu_rt — device selection and identity, memory, random fills and
 * event timers for the calibration harness (see kern_gpu.h). */
#include "kern_cuda.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" int kern_gpu_count(int32_t *n, sim_err *err)
{
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    *n = 0;
    if (e != cudaSuccess) return sim_err_set(err, SIM_ENOTSUP, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    if (c == 0) return sim_err_set(err, SIM_ENOTSUP, "the CUDA runtime sees no device");
    *n = c;
    return 0;
}

extern "C" int kern_gpu_select(int32_t dev, kern_gpu_info *info, sim_err *err)
{
    cudaDeviceProp p;
    int v = 0;
    KERN_CU_TRY(cudaSetDevice(dev), err);
    KERN_CU_TRY(cudaGetDeviceProperties(&p, dev), err);
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->sms = p.multiProcessorCount;
    info->cc_major = p.major, info->cc_minor = p.minor;
    KERN_CU_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev), err);
    info->sm_clock_mhz = v / 1000;
    KERN_CU_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev), err);
    info->mem_clock_mhz = v / 1000;
    KERN_CU_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev), err);
    info->mem_bus_bits = v;
    info->l2_bytes = p.l2CacheSize;
    if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, dev) != cudaSuccess) info->pci_bus_id[0] = '\0';
    info->mem_bytes = (int64_t)p.totalGlobalMem;
    KERN_CU_TRY(cudaDriverGetVersion(&v), err);
    info->driver_version = v;
    KERN_CU_TRY(cudaRuntimeGetVersion(&v), err);
    info->runtime_version = v;
    return 0;
}

extern "C" int kern_gpu_malloc(void **d_ptr, size_t bytes, sim_err *err)
{
    *d_ptr = NULL;
    KERN_CU_TRY(cudaMalloc(d_ptr, bytes ? bytes : 1), err);
    return 0;
}

extern "C" void kern_gpu_free(void *d_ptr)
{
    if (d_ptr) cudaFree(d_ptr);
}

extern "C" int kern_gpu_h2d(void *d_dst, const void *src, size_t bytes, sim_err *err)
{
    KERN_CU_TRY(cudaMemcpy(d_dst, src, bytes, cudaMemcpyHostToDevice), err);
    return 0;
}

extern "C" int kern_gpu_d2h(void *dst, const void *d_src, size_t bytes, sim_err *err)
{
    KERN_CU_TRY(cudaMemcpy(dst, d_src, bytes, cudaMemcpyDeviceToHost), err);
    return 0;
}

extern "C" int kern_gpu_d2d(void *d_dst, const void *d_src, size_t bytes, sim_err *err)
{
    KERN_CU_TRY(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, 0), err);
    return 0;
}

extern "C" int kern_gpu_memset(void *d, int byte, size_t bytes, sim_err *err)
{
    KERN_CU_TRY(cudaMemsetAsync(d, byte, bytes, 0), err);
    return 0;
}

extern "C" int kern_gpu_sync(sim_err *err)
{
    KERN_CU_TRY(cudaDeviceSynchronize(), err);
    return 0;
}

/* Counter-based hash → uniform [0,1): the same seed gives the same data
 * regardless of launch shape. */
__device__ __forceinline__ float kern_hash_unit(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

template <int KIND>
__global__ void kern_fill_kernel(void *p, int64_t n, uint64_t seed, float amp)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = (2.0f * kern_hash_unit(seed, (uint64_t)i) - 1.0f) * amp;
        if (KIND == 0) ((float *)p)[i] = v;
        else if (KIND == 1) ((uint16_t *)p)[i] = kern_f2bf(v);
        else if (KIND == 2) ((uint8_t *)p)[i] = kern_f2e4m3(v);
        else ((uint8_t *)p)[i] = (uint8_t)(127 + __float2int_rn(v)); /* E8M0: 2^round(v) */
    }
}

template <int KIND>
static int kern_fill(void *p, int64_t n, uint64_t seed, float amp, sim_err *err)
{
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65535) blocks = 65535;
    if (blocks < 1) return 0;
    kern_fill_kernel<KIND><<<(unsigned)blocks, 256>>>(p, n, seed, amp);
    return kern_cu_launched("fill", err);
}

extern "C" int kern_gpu_fill_f32(float *d, int64_t n, uint64_t seed, float amp, sim_err *err)
{
    return kern_fill<0>(d, n, seed, amp, err);
}

extern "C" int kern_gpu_fill_bf16(uint16_t *d, int64_t n, uint64_t seed, float amp, sim_err *err)
{
    return kern_fill<1>(d, n, seed, amp, err);
}

extern "C" int kern_gpu_fill_e4m3(uint8_t *d, int64_t n, uint64_t seed, float amp, sim_err *err)
{
    return kern_fill<2>(d, n, seed, amp, err);
}

extern "C" int kern_gpu_fill_e8m0(uint8_t *d, int64_t n, uint64_t seed, float amp, sim_err *err)
{
    return kern_fill<3>(d, n, seed, amp, err);
}

struct kern_gpu_timer {
    cudaEvent_t start, stop;
};

extern "C" int kern_gpu_timer_create(kern_gpu_timer **t, sim_err *err)
{
    kern_gpu_timer *x = (kern_gpu_timer *)calloc(1, sizeof *x);
    if (!x) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    cudaError_t e = cudaEventCreate(&x->start);
    if (e == cudaSuccess) e = cudaEventCreate(&x->stop);
    if (e != cudaSuccess) {
        free(x);
        return sim_err_set(err, SIM_EIO, "cudaEventCreate: %s", cudaGetErrorString(e));
    }
    *t = x;
    return 0;
}

extern "C" void kern_gpu_timer_destroy(kern_gpu_timer *t)
{
    if (!t) return;
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    free(t);
}

extern "C" int kern_gpu_timer_start(kern_gpu_timer *t, sim_err *err)
{
    KERN_CU_TRY(cudaEventRecord(t->start, 0), err);
    return 0;
}

extern "C" int kern_gpu_timer_stop(kern_gpu_timer *t, double *seconds, sim_err *err)
{
    float ms = 0.0f;
    KERN_CU_TRY(cudaEventRecord(t->stop, 0), err);
    KERN_CU_TRY(cudaEventSynchronize(t->stop), err);
    KERN_CU_TRY(cudaEventElapsedTime(&ms, t->start, t->stop), err);
    *seconds = ms * 1e-3;
    return 0;
}

struct kern_gpu_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

extern "C" int kern_gpu_capture_begin(sim_err *err)
{
    KERN_CU_TRY(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal), err);
    return 0;
}

extern "C" int kern_gpu_capture_end(int ok, kern_gpu_graph **out, sim_err *err)
{
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(cudaStreamPerThread, &g);
    *out = NULL;
    if (!ok || e != cudaSuccess || !g) {
        if (g) cudaGraphDestroy(g);
        (void)cudaGetLastError(); /* clear the (non-sticky) error a failed capture leaves */
        return ok ? sim_err_set(err, SIM_EIO, "graph capture: %s", cudaGetErrorString(e)) : SIM_EIO;
    }
    kern_gpu_graph *x = (kern_gpu_graph *)calloc(1, sizeof *x);
    if (!x) {
        cudaGraphDestroy(g);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    x->graph = g;
    e = cudaGraphInstantiate(&x->exec, g, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(g);
        free(x);
        (void)cudaGetLastError();
        return sim_err_set(err, SIM_EIO, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
    }
    *out = x;
    return 0;
}

extern "C" int kern_gpu_graph_launch(kern_gpu_graph *g, sim_err *err)
{
    KERN_CU_TRY(cudaGraphLaunch(g->exec, cudaStreamPerThread), err);
    return 0;
}

extern "C" void kern_gpu_graph_destroy(kern_gpu_graph *g)
{
    if (!g) return;
    cudaGraphExecDestroy(g->exec);
    cudaGraphDestroy(g->graph);
    free(g);
}
