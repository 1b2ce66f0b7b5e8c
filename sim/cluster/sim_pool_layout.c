/* sim_pool_layout — see sim_pool_layout.h. */
#include "sim_pool_layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The parallel block's enums as the cost model's; -1 for a value outside
 * the enum (a scenario built in code). */
static int sp_kind_of(sim_sp_kind k)
{
    switch (k) {
    case SIM_SP_ULYSSES: return MODEL_SP_ULYSSES;
    case SIM_SP_RING: return MODEL_SP_RING;
    }
    return -1;
}

static int ep_mode_of(sim_ep_mode m)
{
    switch (m) {
    case SIM_EP_AUTO: return MODEL_EP_AUTO;
    case SIM_EP_NORMAL: return MODEL_EP_NORMAL;
    case SIM_EP_LOW_LATENCY: return MODEL_EP_LOW_LATENCY;
    case SIM_EP_ALLTOALL: return MODEL_EP_ALLTOALL;
    case SIM_EP_ALLGATHER: return MODEL_EP_ALLGATHER;
    }
    return -1;
}

/* A scenario dtype as the cost model's; -1 for auto (the checkpoint's) and
 * for a value outside the enum. */
static int dtype_of(sim_dtype d)
{
    switch (d) {
    case SIM_DTYPE_AUTO: return -1;
    case SIM_DTYPE_BF16: return MODEL_DTYPE_BF16;
    case SIM_DTYPE_FP8: return MODEL_DTYPE_FP8;
    case SIM_DTYPE_FP8_BLOCK: return MODEL_DTYPE_FP8_BLOCK;
    case SIM_DTYPE_MXFP8: return MODEL_DTYPE_MXFP8;
    case SIM_DTYPE_NVFP4: return MODEL_DTYPE_NVFP4;
    case SIM_DTYPE_MXFP4: return MODEL_DTYPE_MXFP4;
    case SIM_DTYPE_INT4: return MODEL_DTYPE_INT4;
    }
    return -1;
}

static int moe_gemm_of(sim_moe_gemm g)
{
    switch (g) {
    case SIM_MOE_GEMM_AUTO: return MODEL_MOE_GEMM_AUTO;
    case SIM_MOE_GEMM_CONTIGUOUS: return MODEL_MOE_GEMM_CONTIGUOUS;
    case SIM_MOE_GEMM_MASKED: return MODEL_MOE_GEMM_MASKED;
    }
    return -1;
}

/* The weight and KV formats (a scenario built in code with kv_dtype left 0
 * keeps its KV in bf16). */
static int layout_formats(const sim_scenario *sc, model_layout *l, sim_err *err)
{
    int i;
    if (sc->dtype == SIM_DTYPE_AUTO)
        l->dtype_checkpoint = 1;
    else if ((i = dtype_of(sc->dtype)) < 0)
        return sim_err_set(err, SIM_EINVAL, "dtype: expected one of the dtype names, got value %d", (int)sc->dtype);
    else
        l->dtype = (model_dtype)i;
    /* A scenario built in code with kv_dtype left 0 keeps its KV in bf16. */
    if ((i = dtype_of(sc->kv_dtype == SIM_DTYPE_AUTO ? SIM_DTYPE_BF16 : sc->kv_dtype)) < 0)
        return sim_err_set(err, SIM_EINVAL, "kv_dtype: expected one of the dtype names, got value %d",
                           (int)sc->kv_dtype);
    l->kv_dtype = (model_dtype)i;
    return 0;
}

/* The parallel degrees and modes, checked; the modes converted. */
static int layout_parallel_modes(const sim_parallel_cfg *p, model_layout *l, sim_err *err)
{
    int i;
    const int32_t deg[] = {p->tp, p->pp, p->dp, p->ep, p->dcp, p->sp};
    const char *deg_names[] = {"tp", "pp", "dp", "ep", "dcp", "sp"};
    for (i = 0; i < 6; i++)
        if (deg[i] < 1)
            return sim_err_set(err, SIM_EINVAL, "parallel.%s must be >= 1 (got %d)", deg_names[i], deg[i]);
    if (p->moe_tp < 0)
        return sim_err_set(err, SIM_EINVAL, "parallel.moe_tp must be >= 0 (0 = tp*dp/ep; got %d)", p->moe_tp);
    if (p->micro_batches < 0)
        return sim_err_set(err, SIM_EINVAL, "parallel.micro_batches must be >= 0 (got %d)", p->micro_batches);
    if (!(p->expert_skew >= 0) || !isfinite(p->expert_skew))
        return sim_err_set(err, SIM_EINVAL, "parallel.expert_skew must be a finite number >= 0 (got %g)",
                           p->expert_skew);
    if ((i = sp_kind_of(p->sp_kind)) < 0)
        return sim_err_set(err, SIM_EINVAL, "parallel.sp_kind: expected ulysses or ring, got value %d",
                           (int)p->sp_kind);
    l->sp_kind = (model_sp_kind)i;
    if ((i = ep_mode_of(p->ep_mode)) < 0)
        return sim_err_set(err, SIM_EINVAL,
                           "parallel.ep_mode: expected auto, normal, low_latency, alltoall or allgather, got value %d",
                           (int)p->ep_mode);
    l->ep_mode = (model_ep_mode)i;
    if ((i = moe_gemm_of(p->moe_gemm)) < 0)
        return sim_err_set(err, SIM_EINVAL, "parallel.moe_gemm: expected auto, contiguous or masked, got value %d",
                           (int)p->moe_gemm);
    l->moe_gemm = (model_moe_gemm)i;
    return 0;
}

/* The scheduler's host overheads and the node size are non-negative. */
static int layout_check_host(const sim_scenario *sc, const sim_pool_cfg *pool, sim_err *err)
{
    if (!(pool->scheduler.overhead_us >= 0) || !(pool->scheduler.overhead_per_seq_us >= 0) ||
        !(pool->scheduler.eager_launch_us >= 0))
        return sim_err_set(err, SIM_EINVAL,
                           "scheduler.overhead_us, overhead_per_seq_us and eager_launch_us must be >= 0");
    if (!(pool->scheduler.eager_serial >= 0 && pool->scheduler.eager_serial <= 1))
        return sim_err_set(err, SIM_EINVAL, "scheduler.eager_serial must be in [0, 1] (got %g)",
                           pool->scheduler.eager_serial);
    if (sc->hardware.gpus_per_node < 0)
        return sim_err_set(err, SIM_EINVAL, "hardware.gpus_per_node must be >= 0 (0 = 8; got %d)",
                           sc->hardware.gpus_per_node);
    return 0;
}

/* The degrees and the scheduler's overheads into l. */
static void layout_copy(const sim_pool_cfg *pool, model_layout *l)
{
    const sim_parallel_cfg *p = &pool->parallel;
    l->tp = p->tp;
    l->pp = p->pp;
    l->dp = p->dp;
    l->ep = p->ep;
    l->dcp = p->dcp;
    l->sp = p->sp;
    l->tp_sp = p->tp_sp != 0;
    l->comm_fp8 = p->comm_fp8 != 0;
    l->comm_overlap = p->comm_overlap != 0;
    l->ar_norm_fusion = p->ar_norm_fusion != 0;
    l->micro_batches = p->micro_batches;
    l->expert_skew = p->expert_skew;
    l->moe_tp = p->moe_tp;
    l->overhead_s = pool->scheduler.overhead_us * 1e-6;
    l->overhead_per_seq_s = pool->scheduler.overhead_per_seq_us * 1e-6;
    l->eager_launch_s = pool->scheduler.eager_launch_us * 1e-6;
    l->eager_serial = pool->scheduler.eager_serial;
    l->host_overlap = pool->scheduler.async_scheduling != 0;
    l->pad_one_token = pool->scheduler.cuda_graph_sizes == SIM_GRAPH_TRTLLM;
}

/* hardware.op_speedup, one finite factor > 0 per op family. */
static int layout_speedups(const sim_scenario *sc, model_layout *l, sim_err *err)
{
    _Static_assert(SIM_OP_FAMILIES == MODEL_FAM_COUNT, "hardware.op_speedup has one entry per op family");
    for (int f = 0; f < MODEL_FAM_COUNT; f++) {
        if (!(sc->hardware.op_speedup[f] > 0) || !isfinite(sc->hardware.op_speedup[f]))
            return sim_err_set(err, SIM_EINVAL, "hardware.op_speedup.%s must be a finite number > 0 (got %g)",
                               model_op_family_name((model_op_family)f), sc->hardware.op_speedup[f]);
        l->op_speedup[f] = sc->hardware.op_speedup[f];
    }
    return 0;
}

/* The engine whose kernels price the ops, and scheduler.kernels' parts
 * taken from another engine (only with a preset). */
static int layout_kernels(const sim_pool_cfg *pool, model_layout *l, sim_err *err)
{
    /* An engine preset names the kernels that price the ops; scheduler.kernels
     * takes a part's from another engine. */
    _Static_assert(SIM_KERNEL_PARTS == MODEL_KERN_PARTS, "scheduler.kernels has one entry per kernel part");
    if (pool->scheduler.preset != SIM_SCHED_PRESET_NONE)
        snprintf(l->op_backend, sizeof l->op_backend, "%s", sim_sched_preset_name(pool->scheduler.preset));
    for (int part = 0; part < SIM_KERNEL_PARTS; part++) {
        sim_sched_preset k = pool->scheduler.kernels[part];
        if (k == SIM_SCHED_PRESET_NONE) continue;
        if (pool->scheduler.preset == SIM_SCHED_PRESET_NONE)
            return sim_err_set(err, SIM_EINVAL,
                               "scheduler.kernels.%s: an engine's kernels price the ops only with scheduler.preset set",
                               sim_kernel_part_name((sim_kernel_part)part));
        snprintf(l->kernels[part], sizeof l->kernels[part], "%s", sim_sched_preset_name(k));
    }
    return 0;
}

int sim_pool_layout(const sim_scenario *sc, const sim_pool_cfg *pool, model_layout *out, sim_err *err)
{
    model_layout l;
    int rc;
    memset(&l, 0, sizeof l);
    if ((rc = layout_formats(sc, &l, err)) || (rc = layout_parallel_modes(&pool->parallel, &l, err)) ||
        (rc = layout_check_host(sc, pool, err)))
        return rc;
    layout_copy(pool, &l);
    if ((rc = layout_speedups(sc, &l, err)) || (rc = layout_kernels(pool, &l, err))) return rc;
    l.gpus_per_node = sc->hardware.gpus_per_node;
    *out = l;
    return 0;
}
