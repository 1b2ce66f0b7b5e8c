/* kern_gpu_lib — the library references calibration times beside the
 * bundled kernels: cuBLAS bf16 GEMM (row-major C = A·B computed as the
 * column-major Cᵀ = Bᵀ·Aᵀ, fp32 compute) and the NCCL collectives
 * (all-reduce, all-gather, reduce-scatter, all-to-all) over the local
 * devices of this process (ncclCommInitAll, one communicator per device,
 * group launch). Handles and NCCL buffers are created on first use and
 * released by kern_gpu_lib_destroy. */
#include "kern_cuda.cuh"

#include <cublas_v2.h>
#include <stdlib.h>
#ifndef KERN_NO_NCCL
#include <nccl.h>
#endif

#define KERN_NCCL_MAX 16

#ifdef KERN_NO_NCCL
typedef void *ncclComm_t; /* built without NCCL: all-reduce reports SIM_ENOTSUP */
#endif

struct kern_gpu_lib {
    cublasHandle_t blas;
    int nccl_ranks;
    ncclComm_t comms[KERN_NCCL_MAX];
    cudaStream_t streams[KERN_NCCL_MAX];
    void *bufs[KERN_NCCL_MAX];  /* send (all-reduce: in place) */
    void *rbufs[KERN_NCCL_MAX]; /* receive */
    int64_t buf_bytes;
    cudaEvent_t ev0, ev1;
};

static void lib_nccl_release(kern_gpu_lib *l)
{
#ifndef KERN_NO_NCCL
    for (int r = 0; r < l->nccl_ranks; r++) {
        cudaSetDevice(r);
        if (l->bufs[r]) cudaFree(l->bufs[r]);
        if (l->rbufs[r]) cudaFree(l->rbufs[r]);
        l->rbufs[r] = NULL;
        if (l->streams[r]) cudaStreamDestroy(l->streams[r]);
        if (l->comms[r]) ncclCommDestroy(l->comms[r]);
        l->bufs[r] = NULL, l->streams[r] = NULL, l->comms[r] = NULL;
    }
    if (l->nccl_ranks) {
        cudaSetDevice(0);
        cudaEventDestroy(l->ev0);
        cudaEventDestroy(l->ev1);
    }
#endif
    l->nccl_ranks = 0, l->buf_bytes = 0;
}

extern "C" int kern_gpu_lib_create(kern_gpu_lib **lib, sim_err *err)
{
    kern_gpu_lib *l = (kern_gpu_lib *)calloc(1, sizeof *l);
    if (!l) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    cublasStatus_t st = cublasCreate(&l->blas);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(l);
        return sim_err_set(err, SIM_EIO, "cublasCreate: %s", cublasGetStatusString(st));
    }
    /* The per-thread default stream, like the bundled kernels: graph-capturable. */
    cublasSetStream(l->blas, cudaStreamPerThread);
    *lib = l;
    return 0;
}

extern "C" void kern_gpu_lib_destroy(kern_gpu_lib *l)
{
    if (!l) return;
    lib_nccl_release(l);
    cublasDestroy(l->blas);
    free(l);
}

extern "C" int kern_gpu_cublas_gemm_bf16(kern_gpu_lib *l, int64_t M, int64_t N, int64_t K, const uint16_t *d_A,
                                         const uint16_t *d_B, uint16_t *d_C, sim_err *err)
{
    const float one = 1.0f, zero = 0.0f;
    if (M > 2147483647 || N > 2147483647 || K > 2147483647) return sim_err_set(err, SIM_EINVAL, "cuBLAS GEMM: shape too large");
    cublasStatus_t st = cublasGemmEx(l->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, d_B, CUDA_R_16BF,
                                     (int)N, d_A, CUDA_R_16BF, (int)K, &zero, d_C, CUDA_R_16BF, (int)N,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return sim_err_set(err, SIM_EIO, "cublasGemmEx: %s", cublasGetStatusString(st));
    return 0;
}

#ifdef KERN_NO_NCCL
extern "C" int kern_gpu_nccl_collective(kern_gpu_lib *l, int kind, int32_t ranks, int64_t bytes, double *seconds,
                                        sim_err *err)
{
    (void)l, (void)kind, (void)ranks, (void)bytes, (void)seconds;
    return sim_err_set(err, SIM_ENOTSUP, "servesim was built without NCCL (nccl.h/libnccl not found by CMake)");
}
#else
#define KERN_NCCL_TRY(call)                                                                          \
    do {                                                                                             \
        ncclResult_t r_ = (call);                                                                    \
        if (r_ != ncclSuccess) {                                                                     \
            rc = sim_err_set(err, SIM_EIO, "%s: %s", #call, ncclGetErrorString(r_));                 \
            goto fail;                                                                               \
        }                                                                                            \
    } while (0)
#define KERN_CU_GO(call)                                                                             \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            rc = sim_err_set(err, SIM_EIO, "%s: %s", #call, cudaGetErrorString(e_));                 \
            goto fail;                                                                               \
        }                                                                                            \
    } while (0)

extern "C" int kern_gpu_nccl_collective(kern_gpu_lib *l, int kind, int32_t ranks, int64_t bytes, double *seconds,
                                        sim_err *err)
{
    static const char *const names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};
    int rc = 0, ndev = 0;
    float ms = 0.0f;
    if (kind < KERN_COLL_ALL_REDUCE || kind > KERN_COLL_ALL_TO_ALL)
        return sim_err_set(err, SIM_EINVAL, "unknown collective %d", kind);
    const char *name = names[kind];
    int64_t count = bytes / 2, part = ranks > 0 ? count / ranks : 0; /* bf16 elements: whole buffer, per peer */
    KERN_CU_TRY(cudaGetDeviceCount(&ndev), err);
    if (ranks < 1 || ranks > ndev || ranks > KERN_NCCL_MAX)
        return sim_err_set(err, SIM_ENOTSUP, "%s over %d ranks needs %d local GPUs (found %d)", name, ranks, ranks, ndev);
    if (count < 1 || (kind != KERN_COLL_ALL_REDUCE && part < 1))
        return sim_err_set(err, SIM_EINVAL, "%s of %lld bytes over %d ranks", name, (long long)bytes, ranks);
    if (l->nccl_ranks != ranks || l->buf_bytes < bytes) {
        int devs[KERN_NCCL_MAX];
        lib_nccl_release(l);
        for (int r = 0; r < ranks; r++) devs[r] = r;
        KERN_NCCL_TRY(ncclCommInitAll(l->comms, ranks, devs));
        l->nccl_ranks = ranks;
        for (int r = 0; r < ranks; r++) {
            KERN_CU_GO(cudaSetDevice(r));
            KERN_CU_GO(cudaStreamCreate(&l->streams[r]));
            KERN_CU_GO(cudaMalloc(&l->bufs[r], (size_t)bytes));
            KERN_CU_GO(cudaMemset(l->bufs[r], 0, (size_t)bytes));
            KERN_CU_GO(cudaMalloc(&l->rbufs[r], (size_t)bytes));
            KERN_CU_GO(cudaMemset(l->rbufs[r], 0, (size_t)bytes));
        }
        KERN_CU_GO(cudaSetDevice(0));
        KERN_CU_GO(cudaEventCreate(&l->ev0));
        KERN_CU_GO(cudaEventCreate(&l->ev1));
        l->buf_bytes = bytes;
    }
    KERN_CU_GO(cudaSetDevice(0));
    KERN_CU_GO(cudaEventRecord(l->ev0, l->streams[0]));
    KERN_NCCL_TRY(ncclGroupStart());
    for (int r = 0; r < ranks; r++) {
        uint16_t *snd = (uint16_t *)l->bufs[r], *rcv = (uint16_t *)l->rbufs[r];
        switch (kind) {
        case KERN_COLL_ALL_REDUCE:
            KERN_NCCL_TRY(ncclAllReduce(snd, snd, (size_t)count, ncclBfloat16, ncclSum, l->comms[r], l->streams[r]));
            break;
        case KERN_COLL_ALL_GATHER:
            KERN_NCCL_TRY(ncclAllGather(snd, rcv, (size_t)part, ncclBfloat16, l->comms[r], l->streams[r]));
            break;
        case KERN_COLL_REDUCE_SCATTER:
            KERN_NCCL_TRY(ncclReduceScatter(snd, rcv, (size_t)part, ncclBfloat16, ncclSum, l->comms[r], l->streams[r]));
            break;
        default:
            for (int p = 0; p < ranks; p++) {
                KERN_NCCL_TRY(ncclSend(snd + (size_t)p * (size_t)part, (size_t)part, ncclBfloat16, p, l->comms[r],
                                       l->streams[r]));
                KERN_NCCL_TRY(ncclRecv(rcv + (size_t)p * (size_t)part, (size_t)part, ncclBfloat16, p, l->comms[r],
                                       l->streams[r]));
            }
        }
    }
    KERN_NCCL_TRY(ncclGroupEnd());
    KERN_CU_GO(cudaSetDevice(0));
    KERN_CU_GO(cudaEventRecord(l->ev1, l->streams[0]));
    for (int r = 0; r < ranks; r++) {
        KERN_CU_GO(cudaSetDevice(r));
        KERN_CU_GO(cudaStreamSynchronize(l->streams[r]));
    }
    KERN_CU_GO(cudaSetDevice(0));
    KERN_CU_GO(cudaEventElapsedTime(&ms, l->ev0, l->ev1));
    *seconds = ms * 1e-3;
    return 0;
fail:
    cudaSetDevice(0);
    return rc;
}
#endif
