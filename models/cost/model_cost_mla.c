/* model_cost_mla — a DeepSeek MLA attention block priced as one measured
 * module (docs/calibration.md, "MLA module rows").
 *
 * TensorRT-LLM's and vLLM's collectors time one DeepSeek-V3 layer's whole
 * attention module: the q_a/kv_a projections, their norms, q_b and kv_b
 * (prefill) or the absorb BMMs (decode), RoPE and the KV write, the
 * attention kernel, the output quantisation and o_proj — everything of the
 * block but the input norm and the TP collective, with num_heads one
 * rank's. Summing those ops as separately measured kernels counts each
 * kernel's launch and tail floor once more than the module pays (+50 % at
 * a 256-token prefill, +53 % at a one-request decode, a few % at large
 * shapes). So an iteration that is all prefill (no cached context: the
 * context module rows have none) or all decode (no speculative verify
 * width) prices the block of each layer as one op, "mla_module": the
 * engine's own module rows in the perf-db (measured or interpolated on the
 * grid, the series' fitted model off it, never below its floor), else the
 * engine's own fitted module set of the op model. Mixed iterations (a
 * chunked prefill beside decodes: no row measures both) keep the sum of
 * the ops. The ops the module replaces are still walked, quietly, for
 * their FLOPs, bytes, busy seconds (the energy model) and kernel launches
 * (the eager host bound: the module launches its kernels too), none of
 * which depends on an op's time: they are counted, not priced
 * (cost_ctx.work_only: no perf-db lookup, no op model), unless
 * hardware.op_speedup scales some family, whose mix needs their times.
 *
 * Applies to DeepSeek-V3's attention geometry only (hidden 7168, q_lora
 * 1536, kv_lora 512, rope 64, nope 128, v 128: R1, V3, V3.1, Kimi-K2's),
 * the one the rows measure, without sliding layers, DSA, SP or DCP, with
 * an engine named (scheduler.preset). Under hardware.op_speedup the module
 * is scaled as the ops it contains would be (their time-weighted mix of
 * the GEMM, attention and other families' factors), so a sensitivity run
 * moves it as it moves the op sum. */
#include "model_cost_impl.h"

#include "calib_op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Most ops one attention block records (10 in prefill, 11 in decode). */
#define MLA_BLOCK_MAX_OPS 24

/* The module tables' gemm_type of the attention weights; NULL when they
 * measure none. fp8 of a checkpoint that ships block-scaled fp8 runs the
 * block-scaled GEMMs (as the routed experts do, cost_expert_dtype). */
static const char *module_gemm_type(const model_cost *c)
{
    switch (c->part_dt[MODEL_PART_ATTN]) {
    case MODEL_DTYPE_BF16: return "bfloat16";
    case MODEL_DTYPE_FP8_BLOCK: return "fp8_block";
    case MODEL_DTYPE_FP8: return c->m.wdtype_attn == MODEL_DTYPE_FP8_BLOCK ? "fp8_block" : NULL;
    case MODEL_DTYPE_NVFP4: return "nvfp4";
    default: return NULL;
    }
}

/* The perf-db's name of a table dtype (calib_ingest_dtype: bfloat16 is bf16). */
static const char *db_name(const char *t) { return strcmp(t, "bfloat16") ? t : "bf16"; }

void cost_mla_module_init(model_cost *c)
{
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    c->mla_module_dt[0] = '\0';
    memset(c->mla_module_sets, 0, sizeof c->mla_module_sets);
    if (!c->mla || m->comp_attn || m->index_topk > 0 || c->n_sw > 0 || !(c->n_full > 0)) return;
    if (m->hidden != 7168 || m->q_lora_rank != 1536 || m->kv_lora_rank != 512 || m->rope_dim != 64 ||
        m->nope_dim != 128 || m->v_head_dim != 128)
        return;
    if (l->sp > 1 || l->dcp > 1 || !l->op_backend[0] || !strcmp(l->op_backend, "auto")) return;
    /* The module is one engine's projections and attention kernels
     * together: with those parts from different engines (layout.kernels),
     * each op is priced by its own part's engine instead. */
    const char *engine = model_layout_kernels(l, MODEL_KERN_ATTENTION);
    if (strcmp(engine, model_layout_kernels(l, MODEL_KERN_GEMM)) || !strcmp(engine, "auto")) return;
    const char *gt = module_gemm_type(c), *kv = cost_op_dtype(l->kv_dtype);
    if (!gt || !kv || (strcmp(kv, "bfloat16") && strcmp(kv, "fp8"))) return;
    const char *g = db_name(gt), *k = db_name(kv);
    if (!strcmp(g, k)) snprintf(c->mla_module_dt, sizeof c->mla_module_dt, "%s", g);
    else snprintf(c->mla_module_dt, sizeof c->mla_module_dt, "%s/%s", g, k);
    for (int i = 0; i < 2; i++) {
        model_op_query q;
        memset(&q, 0, sizeof q);
        q.kind = i ? MODEL_OPK_GEN_MLA_MODULE : MODEL_OPK_CTX_MLA_MODULE;
        snprintf(q.dtype, sizeof q.dtype, "bfloat16");
        snprintf(q.kv_dtype, sizeof q.kv_dtype, "%s", kv);
        snprintf(q.gemm_type, sizeof q.gemm_type, "%s", gt);
        char key[64];
        model_op_variant(&q, key, sizeof key);
        /* The engine's own set only: another engine's module is another
         * sequence of kernels. */
        c->mla_module_sets[i].set = model_op_lookup(&c->g, engine, key);
        model_op_resolve(&q, &c->mla_module_sets[i].r);
    }
}

void model_cost_mla_module_off(model_cost *c)
{
    c->mla_module_dt[0] = '\0';
    memset(c->mla_module_sets, 0, sizeof c->mla_module_sets);
}

/* The family cost_op scales an op of the block by (cost_op_family: the
 * block holds GEMMs, attention and elementwise ops). */
static model_op_family block_family(model_op_class cls)
{
    return cls == MODEL_OPC_GEMM ? MODEL_FAM_GEMM : cls == MODEL_OPC_ATTN ? MODEL_FAM_ATTENTION : MODEL_FAM_OTHER;
}

int cost_mla_module(cost_ctx *x, const cost_agg *a, double layers, cost_block_fn block)
{
    const model_cost *c = x->c;
    if (!c->mla_module_dt[0] || !(layers > 0)) return 0;
    const int prefill = a->Tp > 0;
    if (prefill == (a->nd > 0) || a->dw > 1 || (prefill && a->cached > 0)) return 0;
    /* The rows' shape: prefill batch, tokens each (m, the tables' isl);
     * decode batch, context (isl + step); this rank's heads; tp_size 1. */
    int64_t s[COST_SHAPE_FIELDS] = {0};
    model_op_query q;
    memset(&q, 0, sizeof q);
    if (prefill) {
        const double nch = a->n_chunks > 0 ? a->n_chunks : 1;
        s[3] = (int64_t)ceil(nch);
        s[0] = (int64_t)ceil(a->Tp_seq / nch);
        q.kind = MODEL_OPK_CTX_MLA_MODULE;
        q.f[MODEL_OPF_ISL] = (double)s[0];
    } else {
        s[3] = (int64_t)ceil(a->nd);
        s[4] = (int64_t)(a->ctx / a->nd);
        q.kind = MODEL_OPK_GEN_MLA_MODULE;
        q.f[MODEL_OPF_ISL] = 1;
        q.f[MODEL_OPF_STEP] = s[4] > 1 ? (double)(s[4] - 1) : 0;
    }
    s[5] = (int64_t)c->heads_r;
    s[10] = 1;
    q.f[MODEL_OPF_BATCH] = (double)s[3];
    q.f[MODEL_OPF_HEADS] = c->heads_r;
    const int32_t op = prefill ? CALIB_OP_MLA_MODULE_PREFILL : CALIB_OP_MLA_MODULE_DECODE;
    model_source src = MODEL_SRC_DB;
    double t = c->tab ? cost_db_time(c, op, COST_DB_MLA_MODULE, s, &src) : 0;
    if (!(t > 0)) {
        const cost_op_set *o = &c->mla_module_sets[prefill ? 0 : 1];
        t = o->set ? model_op_time_resolved(&c->g, &q, &o->r, o->set->p, NULL) : 0;
        src = MODEL_SRC_OP_MODEL;
    }
    if (!(t > 0) || !isfinite(t)) return 0;
    /* The ops the module replaces, walked aside: their work and launches;
     * their times only for the family mix of a scaled run. */
    model_op ops[MLA_BLOCK_MAX_OPS];
    const int list = x->ops || c->fam_scaled;
    cost_ctx in;
    cost_ctx_start(&in, c, list ? ops : NULL, list ? MLA_BLOCK_MAX_OPS : 0, x->launch);
    in.time_scale = x->time_scale;
    in.work_only = !c->fam_scaled;
    block(&in, a);
    double flops = 0, bytes = 0, scaled = 0, plain = 0;
    for (int32_t i = 0; list && i < in.n && i < MLA_BLOCK_MAX_OPS; i++) {
        flops += ops[i].flops, bytes += ops[i].bytes;
        scaled += ops[i].time_s;
        plain += ops[i].time_s / c->fam_time[block_family(ops[i].cls)];
    }
    x->launches += in.launches;
    if (src != MODEL_SRC_OP_MODEL) x->used_db = 1;
    double total = layers * t * x->time_scale;
    if (c->fam_scaled && plain > 0) total *= scaled / plain;
    char detail[64] = "";
    if (x->ops) {
        if (prefill)
            snprintf(detail, sizeof detail, "%d ops: batch=%lld isl=%lld heads=%lld", (int)in.n, (long long)s[3],
                     (long long)s[0], (long long)s[5]);
        else
            snprintf(detail, sizeof detail, "%d ops: batch=%lld ctx=%lld heads=%lld", (int)in.n, (long long)s[3],
                     (long long)s[4], (long long)s[5]);
    }
    const model_bound bound = in.r.compute_busy_s >= in.r.mem_busy_s ? MODEL_BOUND_COMPUTE : MODEL_BOUND_MEMORY;
    cost_push_busy(x, "mla_module", MODEL_OPC_ATTN, layers, flops, bytes, in.r.compute_busy_s, in.r.mem_busy_s, total,
                   bound, src, detail);
    return 1;
}
