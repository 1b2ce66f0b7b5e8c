/* kern_cuda — shared helpers of the .cu files: error mapping into sim_err,
 * bf16/fp8 conversions, shared-memory addresses, warp reductions. Header-only, CUDA C++. */
#ifndef KERN_CUDA_CUH
#define KERN_CUDA_CUH

#include "kern_gpu.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define KERN_CU_TRY(call, err)                                                           \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return sim_err_set((err), SIM_EIO, "%s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

/* After a launch: configuration errors show up here, execution errors at
 * the next synchronisation. */
static inline int kern_cu_launched(const char *what, sim_err *err)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return sim_err_set(err, SIM_EIO, "%s launch: %s", what, cudaGetErrorString(e));
    return 0;
}

#ifdef __CUDACC__
/* Raises the kernel's dynamic shared memory limit to smem bytes, launches
 * it (default stream) and checks the launch, named `what` in errors. */
template <typename... P, typename... A>
static inline int kern_cu_launch_smem(const char *what, void (*kernel)(P...), dim3 grid, int threads, int smem,
                                      sim_err *err, A... args)
{
    KERN_CU_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), err);
    kernel<<<grid, threads, smem>>>(args...);
    return kern_cu_launched(what, err);
}
#endif

static inline int kern_cu_device_cc(int *cc, sim_err *err)
{
    int dev = 0, mj = 0, mn = 0;
    KERN_CU_TRY(cudaGetDevice(&dev), err);
    KERN_CU_TRY(cudaDeviceGetAttribute(&mj, cudaDevAttrComputeCapabilityMajor, dev), err);
    KERN_CU_TRY(cudaDeviceGetAttribute(&mn, cudaDevAttrComputeCapabilityMinor, dev), err);
    *cc = mj * 10 + mn;
    return 0;
}

/* The shared-memory (shared::cta) address of a generic pointer into shared memory. */
__device__ __forceinline__ uint32_t kern_saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ float kern_bf2f(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }

__device__ __forceinline__ uint16_t kern_f2bf(float x)
{
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    return *reinterpret_cast<uint16_t *>(&h);
}

__device__ __forceinline__ uint8_t kern_f2e4m3(float x)
{
    return (uint8_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
}

__device__ __forceinline__ float kern_warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float kern_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Merge of online-softmax states (m, s), see kern_softmax_state_merge. */
__device__ __forceinline__ void kern_sm_merge(float &m, float &s, float m2, float s2)
{
    float mn = fmaxf(m, m2);
    if (mn == -INFINITY) return;
    s = s * __expf(m - mn) + s2 * __expf(m2 - mn);
    m = mn;
}

__device__ __forceinline__ void kern_warp_sm_reduce(float &m, float &s)
{
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        kern_sm_merge(m, s, m2, s2);
    }
}

#endif
