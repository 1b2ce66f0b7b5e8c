/* model_cost_impl — internals shared by the files of the cost model
 * (model_cost.c: create, validation, memory; model_cost_eval.c: the op
 * graph of an iteration; model_cost_moe.c: routed experts and EP;
 * model_cost_db.c: op timing from the roofline or the perf-db). Not a
 * public interface. */
#ifndef MODEL_COST_IMPL_H
#define MODEL_COST_IMPL_H

#include "calib_dtype.h"
#include "model_comm.h"
#include "model_cost.h"
#include "model_op.h"
#include "model_op_family.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Activations and collectives travel in bf16 unless comm_fp8. */
#define COST_ACT_BYTES 2.0
/* Decode-only iterations replay a CUDA graph: fraction of launch_s left. */
#define COST_GRAPH_LAUNCH_FRACTION 0.5
/* GEMM output tile edge (tile quantisation against the SM count). */
#define COST_TILE 128.0
/* comm_overlap: SMs a collective occupies while it runs beside a GEMM (one
 * CTA per NCCL channel; NVLink nodes use about 16) and the most row chunks
 * a GEMM + collective fusion splits a GEMM into. */
#define COST_COMM_SMS 16.0
#define COST_OVERLAP_MAX_SPLIT 8
/* Grouped GEMM M tile of masked layouts (DeepGEMM masked decode: 64). */
#define COST_MASKED_TILE 64.0
/* Sampling reads/writes fp32 logits about three times (softmax, top-p, pick). */
#define COST_SAMPLE_PASSES 3.0
/* The fields of a perf-db shape (calib_shape, CALIB_SHAPE_FIELDS; the
 * last, 11, is the grouped GEMMs' routing skew in thousandths). */
#define COST_SHAPE_FIELDS 12

struct calib_table;
struct calib_series;

/* The op-model variants the cost model prices (c->op_sets). */
typedef enum {
    COST_OPV_GEMM_BF16 = 0,     /* gemm:bfloat16 */
    COST_OPV_GEMM_W,            /* gemm:<weights' dtype> */
    COST_OPV_CTX_ATTN,          /* context_attention:bfloat16/<kv dtype> */
    COST_OPV_GEN_ATTN,
    COST_OPV_CTX_MLA,
    COST_OPV_GEN_MLA,
    COST_OPV_GDN_CONV_CTX,      /* gdn:conv/context */
    COST_OPV_GDN_CONV_GEN,
    COST_OPV_GDN_DELTA_CTX,
    COST_OPV_GDN_DELTA_GEN,
    COST_OPV_CUSTOM_AR,         /* custom_allreduce:graph */
    COST_OPV_NCCL_AR,           /* nccl:all_reduce, all_gather, reduce_scatter, alltoall */
    COST_OPV_NCCL_AG,
    COST_OPV_NCCL_RS,
    COST_OPV_NCCL_A2A,
    COST_OPV_DSA_CTX_ATTN,      /* dsa_context_module:<kv dtype>/<weights' dtype>, its sparse attention */
    COST_OPV_DSA_GEN_ATTN,
    COST_OPV_DSA_CTX_IDX,       /* the same modules' lightning indexer */
    COST_OPV_DSA_GEN_IDX,
    COST_OPV_MOE,               /* moe:<experts' dtype>: the engine's fused-MoE op */
    COST_OPV_COUNT
} cost_opv;

/* One variant: its fitted set (NULL: none covers it, or the variant does
 * not apply to this deployment) and the query strings resolved. */
typedef struct {
    const model_op_paramset *set;
    model_op_resolved r;
} cost_op_set;

/* Room for the perf-db op kinds (calib_op.h CALIB_OP_COUNT). */
#define COST_DB_MAX_OPS 32
/* Perf-db dtype columns of an op (model_cost.series): bf16, the weights'
 * (layout dtype), fp16, fp8, the routed experts' (cost_db_expert_dtype),
 * then one per model part (COST_DB_PART + model_part: its weight format). */
enum { COST_DB_BF16 = 0, COST_DB_WEIGHTS = 1, COST_DB_FP16 = 2, COST_DB_FP8 = 3, COST_DB_EXPERT = 4, COST_DB_PART = 5 };
/* The MLA module rows' column (model_cost.mla_module_dt), after the parts'. */
#define COST_DB_MLA_MODULE (COST_DB_PART + MODEL_PART_COUNT)
#define COST_DB_DTYPES (COST_DB_MLA_MODULE + 1)

struct model_cost {
    model_spec m;
    model_gpu g;
    model_layout l;             /* resolved (no zero defaults) */
    model_comm_net net;
    double peak_gemm, peak_bf16, peak_attn, bw, launch;
    double wb, ab, kvb;         /* bytes per value: weights, GEMM activations, KV (main part) */
    model_dtype part_dt[MODEL_PART_COUNT];   /* weight format of each part (model_dtype.h) */
    double wb_part[MODEL_PART_COUNT], ab_part[MODEL_PART_COUNT], peak_part[MODEL_PART_COUNT];
    int mla;
    double heads_r, kv_r, hd;   /* per attention rank (kv_r: heads stored, 1 latent for MLA) */
    double kv_layer_r;          /* KV bytes per token per layer on one rank (before dcp) */
    double kv_rep;              /* how many tp ranks hold the same KV head (dcp shards these) */
    double n_layers, n_full, n_sw, n_dense, n_moe;
    double n_lin;               /* Gated DeltaNet / KDA layers (their own ops, state instead of KV) */
    double n_mamba;             /* Mamba-2 layers (their own ops, state instead of KV) */
    double n_mix_only;          /* blocks with a mixer and no FFN (their TP reduce comes after the mixer) */
    double n_dense_nomix, n_moe_nomix; /* FFN blocks without a mixer (Nemotron-H MLP/MoE, NAS skipped attention) */
    double n_dense_w[16];       /* dense layers of each FFN width class (model_spec.ffn_widths) */
    double state_seq_gpu;       /* recurrent-state bytes per sequence per GPU (heaviest stage) */
    int32_t stage_layers_max;
    /* MoE: experts ordered by the rank that holds them (ep ranks, E/ep each). */
    int32_t moe_tp, experts_local;
    int uniform;                /* expert_skew 0: every expert equally loaded */
    double *p;                  /* routing probability of each expert (Σ = 1) */
    double *log_miss;           /* log(1 − min(1, top_k·p)): a token misses the expert */
    /* Memory. */
    int32_t n_stages;
    double *stage_weights;      /* bytes per GPU of each stage */
    double *stage_kv_tok;       /* KV bytes per token per GPU of each stage */
    double kv_tok_instance;
    double expert_buf;          /* model_cost_expert_buffer_bytes, on every stage with MoE layers */
    int32_t *stage_moe;         /* MoE layers of each stage */
    /* Perf-db tables, read-only while timing: borrowed (model_cost_set_tables)
     * or owned (tab_owned, built by model_cost_set_db). */
    const struct calib_table *tab;
    struct calib_table *tab_owned;
    /* Memo of table lookups (calib_memo): the caller's, one per thread (a
     * cluster and its cost models run on one thread); NULL = none. */
    struct calib_memo *memo;
    /* Memo of the GEMM descriptors' split-K picks (model_gemm_split_memo):
     * the caller's, one per thread, like memo; NULL = none. */
    struct model_gemm_split_memo *split_memo;
    /* The tables' series resolved per calib_op: [op][0] bf16, [op][1] the
     * weights' dtype (fp8 standing in for fp8_block), [op][2] fp16 (NCCL's
     * tables), [op][3] fp8 (activation quantisation's output), [op][4] the
     * routed experts' format as the engines' tables name it
     * (cost_db_expert_dtype), [op][5 + part] each part's weight format,
     * so that a lookup does no string work. */
    const struct calib_series *series[COST_DB_MAX_OPS][COST_DB_DTYPES];
    /* The routed experts' perf-db dtype parsed (the work model's bytes of
     * a fused-MoE op), with the series. */
    calib_dtype expert_fmt;
    /* Fitted op-model sets of the variants this instance prices and their
     * strings resolved, at create (read-only while timing; cost_op_sets_init),
     * so that pricing an op does no string work. */
    cost_op_set op_sets[COST_OPV_COUNT];
    /* The MLA attention block as one module (model_cost_mla.c): the rows'
     * dtype in the perf-db ("fp8_block/bf16": projections / KV; "" = this
     * deployment never prices the block as a module) and the engine's own
     * fitted module sets, [0] prefill, [1] decode (set NULL: none). */
    char mla_module_dt[24];
    cost_op_set mla_module_sets[2];
    /* Time multiplier of each op family: 1 / layout.op_speedup, applied only
     * when some family is scaled (fam_scaled), so an unscaled model prices
     * every op bit for bit and at the same cost as without the feature. */
    double fam_time[MODEL_FAM_COUNT];
    int fam_scaled;
};

/* Resolves c->op_sets for the layout's op_backend (model_cost_create). */
void cost_op_sets_init(model_cost *c);

/* Detaches the perf-db tables, freeing them when owned (model_cost_destroy). */
void cost_db_release(model_cost *c);

/* Batch aggregates on the busiest rank. */
typedef struct {
    double T;                   /* tokens through the linear layers */
    double Tp, nd;              /* prefill tokens, decode requests */
    double n_chunks;
    double pairs, pairs_sw;     /* causal query·key pairs of prefill (full / sliding layers) */
    double kvpf, kvpf_sw;       /* KV tokens prefill attention reads */
    double cached;              /* cached-context tokens of the chunks */
    double ctx, ctx_sw;         /* Σ decode context (sliding layers capped at the window) */
    double sampled;             /* rows through the LM head */
    double dw;                  /* decode width: rows per decode request (speculative verify; 1 = plain decode) */
    double Tp_seq;              /* prefill tokens of the whole sequence group (before sp split) */
    double T_all;               /* tokens of all dp ranks of one sp group: what the experts see */
    double pad_all;             /* of T_all, CUDA-graph padding rows (model_batch.n_pad): copies of one dummy
                                 * token, so they route to one top-k set of experts between them */
    int prefill;                /* any prefill: eager launches */
} cost_agg;

/* Description of one op for cost_op(). cost_desc_init zeroes what every
 * op reads (everything before db_shape, about 200 of its 800 bytes);
 * the parts after it are read only under their flags and written whole by
 * whoever sets the flag: db_shape with has_db_op (cost_db_alt), op with
 * has_op (zeroed, then filled), moe_load with op.kind MOE. */
typedef struct {
    const char *name;
    model_op_class cls;
    double count;               /* executions per iteration */
    double flops, bytes;        /* per execution */
    double peak, bw;            /* roofline ceilings */
    double peak_full;           /* the peak with every SM busy (before tile waves and split-K
                                 * occupancy): the energy model's busy time, model_iter_cost */
    double kernels;             /* launches per execution */
    int in_fused_op;            /* its kernels are launched by a fused op's host call (the MoE
                                 * permute inside the engines' fused-MoE op): launch floors on
                                 * the GPU, but no host launches of their own (eager bound) */
    int32_t calib_op;           /* calib_op, −1 = not in the perf-db */
    int32_t calib_wdt;          /* its perf-db dtype column (COST_DB_*: c->series[op][calib_wdt]) */
    /* A serving engine's measured op that prices this one ahead of
     * calib_op when the tables hold it (an MLA kernel for MLA attention,
     * the GDN kernels, the MLA absorb BMMs, quantisation rows in fp8):
     * db_op (calib_op) with its own shape (db_shape) and dtype column (COST_DB_*). */
    int has_db_op;
    int32_t db_op, db_dt;
    double m, n, k;             /* shown as detail for GEMMs */
    int has_op;                 /* op is the kernel as model_op prices it (layout.op_backend set) */
    cost_opv opv;               /* its variant: op's strings are not filled, c->op_sets[opv] resolves them */
    int64_t shape[COST_SHAPE_FIELDS]; /* calib_shape fields in order */
    /* Read only under their flags (see above). */
    int64_t db_shape[COST_SHAPE_FIELDS];
    model_op_query op;
    model_op_moe_load moe_load; /* op.kind MOE: the busiest rank's load under the layout's routing */
} cost_op_desc;

/* Zeroes what every op reads (the fields before db_shape). */
static inline void cost_desc_init(cost_op_desc *d) { memset(d, 0, offsetof(cost_op_desc, db_shape)); }

/* Fills *d with an op of class cls over rows tokens with its roofline
 * inputs (flops at peak, bytes at the HBM bandwidth) and no calibrated op
 * (calib_op -1). Through a pointer: a descriptor is about 800 bytes. */
static inline void cost_roof_desc(cost_op_desc *d, const model_cost *c, const char *name, model_op_class cls,
                                  double count, double rows, double flops, double bytes, double peak, double kernels)
{
    cost_desc_init(d);
    d->name = name;
    d->cls = cls;
    d->count = count;
    d->flops = flops;
    d->bytes = bytes;
    d->peak = peak;
    d->peak_full = peak;
    d->bw = c->bw;
    d->kernels = kernels;
    d->m = rows;
    d->calib_op = -1;
}

/* Evaluation state: totals, optional op list. */
typedef struct {
    const model_cost *c;
    model_op *ops;
    int32_t max, n;
    model_iter_cost r;
    double launch;              /* per kernel in this iteration */
    double time_scale;          /* multiplier of every op's time (1: one pass of the batch) */
    double launches;            /* kernel launches so far (eager host-time bound) */
    int used_db;
    int work_only;              /* cost_op only counts work and launches: no op is priced (its time 0,
                                 * what the MLA module's replaced ops need, model_cost_mla.c) */
} cost_ctx;

/* Starts *x on cost model c: no ops yet, `launch` seconds per kernel, one
 * pass of the batch (time_scale 1); ops may be NULL (max then 0). */
static inline void cost_ctx_start(cost_ctx *x, const model_cost *c, model_op *ops, int32_t max, double launch)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->ops = ops;
    x->max = max;
    x->launch = launch;
    x->time_scale = 1;
}

/* Device seconds so far: GEMMs, attention, collectives and the other ops
 * (not the host overheads). */
static inline double cost_device_s(const cost_ctx *x) { return x->r.gemm_s + x->r.attn_s + x->r.comm_s + x->r.other_s; }

/* Time an eager iteration (or pipeline stage) adds to its device time dev
 * when its host spends `host` launching the kernels: the longer of the two
 * bounds it (the GPU cannot run a kernel before its launch, the host never
 * waits while it runs ahead), and the fraction eager_serial of the shorter
 * does not overlap the longer (synchronisations inside the forward make the
 * host wait for the GPU and the GPU then wait for the next launches):
 * max(host, dev) + s·min(host, dev) − dev. */
static inline double cost_eager_extra(const model_cost *c, double host, double dev)
{
    if (!(host > 0)) return 0;
    const double s = c->l.eager_serial;
    return (host > dev ? host - dev : 0) + s * (host < dev ? host : dev);
}

/* Closes *x: its total (device and overheads) and source; *n_ops and *out
 * as model_cost_breakdown (either may be NULL). Returns the total. */
static inline double cost_ctx_finish(cost_ctx *x, int32_t *n_ops, model_iter_cost *out)
{
    x->r.total_s = cost_device_s(x) + x->r.overhead_s;
    x->r.source = x->used_db ? "db" : "roofline";
    if (n_ops) *n_ops = x->n;
    if (out) *out = x->r;
    return x->r.total_s;
}

/* The family of op d as cost_op prices it (model_op_family.h). */
model_op_family cost_op_family(const cost_op_desc *d);
/* The family of a collective. */
model_op_family cost_coll_family(model_coll op);

/* Times one op (perf-db or roofline), adds it to the totals and the list.
 * hide: seconds of this op that overlap other work (taken off). Under
 * x->work_only: its FLOPs, bytes, busy seconds and launches alone, time 0. */
double cost_op(cost_ctx *x, const cost_op_desc *d, double hide);
/* Collective over n ranks `stride` apart; hide as above. */
double cost_comm(cost_ctx *x, const char *name, double count, model_coll op, int32_t n, int32_t stride,
                 double bytes, double hide);
/* A fixed time with no roofline (framework overhead, pipeline bubble). */
void cost_fixed(cost_ctx *x, const char *name, model_op_class cls, model_bound bound, double count,
                double time_s, double bytes, const char *detail);

/* The shared per-op tables' name of a servesim dtype ("bfloat16", "fp8",
 * "fp8_block", "nvfp4", "w4a16_mxfp4", "int4_wo"); NULL when none. */
const char *cost_op_dtype(model_dtype d);
/* The format the routed experts' kernels run: the experts' part format,
 * block-scaled fp8 for an "fp8" run of a checkpoint whose experts ship
 * block-scaled (the engines then run their block-scaled kernels). */
model_dtype cost_expert_dtype(const model_cost *c);
/* That format as the engines' measured MoE tables name it (perf-db
 * dtype): mxfp4 is w4a8_mxfp4_mxfp8 on GPUs with FP4 tensor cores (MXFP4
 * weights × MXFP8 activations), w4a16_mxfp4 elsewhere; int4 is int4_wo;
 * the others by their own names. */
const char *cost_db_expert_dtype(const model_cost *c);

/* Time of op q (one execution, kind and fields) as variant v from the
 * fitted set of the layout's op_backend on this GPU; 0 when no set covers it. */
double cost_op_model_time(const model_cost *c, cost_opv v, const model_op_query *q);
/* The fused-MoE op q for the explicit load ld from the layout's
 * op_backend set (COST_OPV_MOE); 0 when no set covers it. */
double cost_op_model_moe(const model_cost *c, const model_op_query *q, const model_op_moe_load *ld);
/* A collective inside one NVLink domain from the fitted NCCL / custom
 * all-reduce sets; 0 when none covers it. */
double cost_op_model_comm(const model_cost *c, model_coll op, int32_t n, double bytes);

/* Fills *d with the GEMM descriptor: m×k times k×n with weights in wdt
 * bytes (through a pointer: a descriptor is about 800 bytes). */
void cost_gemm(cost_op_desc *d, const model_cost *c, const char *name, double count, double m, double n, double k,
               double wbytes, double abytes, double peak);

/* The MoE block of one layer class (count layers) on aggregates a; uniform:
 * every expert equally loaded (c->uniform, or 1 for hash-routed layers). */
void cost_moe(cost_ctx *x, const cost_agg *a, double count, int uniform);
/* d is priced by the engine op `op` of shape s (calib_shape's fields in
 * order) in dtype column dt
 * (COST_DB_*) when the perf-db tables hold it (cost_op_desc.has_db_op). */
void cost_db_alt(cost_op_desc *d, int32_t op, int32_t dt, const int64_t s[COST_SHAPE_FIELDS]);
/* The routed experts of count MoE layers — both grouped GEMMs, the
 * activation and the permutes around them, what the engines' fused-MoE op
 * runs — as one op priced from the tables' moe rows: tokens the expert
 * group routes, the experts' input width, the full expert intermediate,
 * top-k, experts, EP and expert-TP sizes, in the weights' dtype. Records
 * the op ("experts_fused", `launches` host launches each) and returns its
 * time; 0 (nothing recorded) when the tables have no moe rows for it. */
double cost_moe_db(cost_ctx *x, double count, double tokens, double width, double launches);
int cost_moe_init(model_cost *c, sim_err *err);

/* Perf-db time of one execution of op (calib_op) of shape s in dtype
 * column dt (COST_DB_*), its source in *src; 0 when the tables have no
 * series for it. */
double cost_db_time(const model_cost *c, int32_t op, int32_t dt, const int64_t s[COST_SHAPE_FIELDS], model_source *src);
/* Records an op whose energy busy seconds are given (cbusy compute, mbusy
 * HBM; already × count and time_scale) rather than derived from its FLOPs
 * and bytes: the MLA module, which is busy as the ops it contains are. */
void cost_push_busy(cost_ctx *x, const char *name, model_op_class cls, double count, double flops, double bytes,
                    double cbusy, double mbusy, double time_s, model_bound bound, model_source src,
                    const char *detail);

/* The ops of one attention block (all attention layers) on aggregates a. */
typedef void (*cost_block_fn)(cost_ctx *x, const cost_agg *a);
/* Decides at create whether c's MLA block may be one module and resolves
 * its sources (model_cost_mla.c). */
void cost_mla_module_init(model_cost *c);
/* Prices the attention block of `layers` MLA layers on aggregates a as one
 * op "mla_module" when the iteration is all prefill or all decode and the
 * engine's module rows or fitted module set cover it; block walks the
 * ops it replaces (for their busy seconds and launches). Returns 1 when
 * it did, 0 (nothing recorded) when the block is to be priced op by op. */
int cost_mla_module(cost_ctx *x, const cost_agg *a, double layers, cost_block_fn block);

/* Whole-iteration evaluation behind model_cost_iteration/_breakdown/_pipeline,
 * each decode request running `width` tokens (model_cost_verify_iteration;
 * 1 = plain decode). stage_s, hop_s, host_s may be NULL; see model_cost_pipeline. */
double cost_eval(const model_cost *c, const model_batch *b, int32_t width, model_op *ops, int32_t max,
                 int32_t *n_ops, model_iter_cost *out, double *stage_s, double *hop_s, double *host_s);

#endif
