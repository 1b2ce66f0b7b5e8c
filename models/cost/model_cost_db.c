/* model_cost_db — timing of one op: perf-db first, roofline otherwise.
 *
 * Sources, in order (docs/cost-model.md, "Latency sources"): (1) the perf-db tables of the deployment's
 * GPU (calib_table.h, built in memory once per scenario): on the measured
 * grid the measured median, between grid points the series' fitted floor +
 * rate model times the interpolated measured residual (source db), off the
 * grid the fitted model (source db-fit), never below the op's floor;
 * (2) with no series for the op and dtype, the roofline max(FLOPs/peak,
 * bytes/bandwidth) with the catalogue's efficiency factors, plus a launch
 * floor per kernel. Intra-node all-reduces, all-gathers, reduce-scatters
 * and all-to-alls are priced from the tables too when they hold rows of
 * that collective. A GEMM reads its part's weight format, the fused MoE
 * the routed experts' (cost_db_expert_dtype). Every op records which
 * source timed it.
 * Lookups read the tables only: no SQLite, no lock, no allocation. */
#include "model_cost_impl.h"
#include "model_gemm_split.h"
#include "model_gemm_split_memo.h"
#include "model_gpu_caps.h"

#include "calib_db.h"
#include "calib_table.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

_Static_assert(CALIB_OP_COUNT <= COST_DB_MAX_OPS, "COST_DB_MAX_OPS too small for calib_op");
_Static_assert(sizeof(calib_shape) == sizeof(((cost_op_desc *)0)->shape), "cost_op_desc.shape is a calib_shape");
_Static_assert(COST_SHAPE_FIELDS == CALIB_SHAPE_FIELDS, "COST_SHAPE_FIELDS is calib_shape's field count");

void cost_db_release(model_cost *c)
{
    calib_table_free(c->tab_owned);
    c->tab_owned = NULL;
    c->tab = NULL;
    c->memo = NULL;
    memset(c->series, 0, sizeof c->series);
}

/* Block-scaled fp8 with no rows of its own: per-tensor fp8 timings stand in
 * (the block scales add under 4 % to the bytes and nothing to the
 * tensor-core rate). */
static const calib_series *series_for(const struct calib_table *t, calib_op op, const char *dt)
{
    const calib_series *s = calib_table_series(t, op, dt);
    if (!s && strcmp(dt, "fp8_block") == 0) s = calib_table_series(t, op, "fp8");
    return s;
}

static void resolve_series(model_cost *c)
{
    const char *w = model_dtype_name(c->l.dtype);
    c->expert_fmt = calib_dtype_parse(cost_db_expert_dtype(c));
    for (int op = 0; op < CALIB_OP_COUNT; op++) {
        c->series[op][COST_DB_BF16] = series_for(c->tab, (calib_op)op, "bf16");
        c->series[op][COST_DB_WEIGHTS] = series_for(c->tab, (calib_op)op, w);
        c->series[op][COST_DB_FP16] = series_for(c->tab, (calib_op)op, "fp16");
        c->series[op][COST_DB_FP8] = series_for(c->tab, (calib_op)op, "fp8");
        c->series[op][COST_DB_EXPERT] = series_for(c->tab, (calib_op)op, cost_db_expert_dtype(c));
        for (int k = 0; k < MODEL_PART_COUNT; k++)
            c->series[op][COST_DB_PART + k] = series_for(c->tab, (calib_op)op, model_dtype_name(c->part_dt[k]));
    }
    /* The MLA module rows: only the deployment's own engine's (a module
     * times that engine's modeling code, not a kernel any engine runs). */
    if (c->mla_module_dt[0] && c->tab) {
        char want[40];
        snprintf(want, sizeof want, "%s-", model_layout_kernels(&c->l, MODEL_KERN_ATTENTION));
        static const calib_op mods[2] = {CALIB_OP_MLA_MODULE_PREFILL, CALIB_OP_MLA_MODULE_DECODE};
        for (int i = 0; i < 2; i++) {
            const calib_series *s = calib_table_series(c->tab, mods[i], c->mla_module_dt);
            calib_series_info info;
            if (s) calib_series_describe(s, NULL, NULL, &info);
            c->series[mods[i]][COST_DB_MLA_MODULE] = s && !strncmp(info.kernels, want, strlen(want)) ? s : NULL;
        }
    }
}

void model_cost_set_tables(model_cost *c, const struct calib_table *t, struct calib_memo *memo)
{
    cost_db_release(c);
    c->tab = t;
    c->memo = t ? memo : NULL;
    resolve_series(c);
}

void model_cost_set_split_memo(model_cost *c, struct model_gemm_split_memo *memo) { c->split_memo = memo; }

static int dtype_add(const char **out, int n, const char *d)
{
    for (int i = 0; i < n; i++)
        if (strcmp(out[i], d) == 0) return n;
    out[n] = d;
    return n + 1;
}

const char *const *model_cost_db_dtypes(const model_cost *c, const char *out[MODEL_COST_DB_DTYPES_MAX])
{
    /* bf16 for activations and attention; the weights' dtype for GEMMs,
     * and each part's own (a model's parts may differ); fp8 standing in
     * for block-scaled fp8 (see op_db_time); fp16 collectives standing in
     * for bf16 ones (NCCL's tables are fp16). */
    int n = 0;
    n = dtype_add(out, n, "bf16");
    n = dtype_add(out, n, "fp16");
    const char *w = model_dtype_name(c->l.dtype);
    n = dtype_add(out, n, w);
    for (int k = 0; k < MODEL_PART_COUNT; k++) n = dtype_add(out, n, model_dtype_name(c->part_dt[k]));
    /* fp8: block-scaled fp8's stand-in, and the output of the activation
     * quantisation that fp8/fp4 GEMMs and fp8 collectives need. */
    if (n > 2 || c->l.comm_fp8) n = dtype_add(out, n, "fp8");
    /* The routed experts' format as the fused-MoE rows name it. */
    if (c->m.experts > 0) n = dtype_add(out, n, cost_db_expert_dtype(c));
    /* The MLA module rows' projections/KV pair (model_cost_mla.c). */
    if (c->mla_module_dt[0]) n = dtype_add(out, n, c->mla_module_dt);
    out[n] = NULL;
    return out;
}

int model_cost_set_db(model_cost *c, struct calib_db *db, const char *gpu_name, sim_err *err)
{
    cost_db_release(c);
    if (!db) return 0;
    char key[MODEL_NAME_MAX];
    /* Matched by catalogue name, only GPU-backend rows count; a device
     * named explicitly may be any backend (e.g. a CPU-reference run of the
     * harness, for testing the path end to end). */
    const char *backend = gpu_name && *gpu_name ? NULL : "gpu";
    if (!gpu_name || !*gpu_name) {
        /* "h100-sxm" → "h100", which device names ("NVIDIA H100 80GB HBM3") contain. */
        snprintf(key, sizeof key, "%s", c->g.name);
        char *dash = strchr(key, '-');
        if (dash) *dash = 0;
        gpu_name = key;
    }
    int64_t id = 0;
    int rc = calib_db_gpu_find(db, gpu_name, backend, &id, err);
    if (rc) return rc;
    const char *dts[MODEL_COST_DB_DTYPES_MAX];
    struct calib_table *t = NULL;
    /* The layout's engine (op_backend, as a scenario's scheduler.preset
     * sets it) prefers its own rows, as a cluster's tables do. */
    const char *engine = c->l.op_backend[0] && strcmp(c->l.op_backend, "auto") != 0 ? c->l.op_backend : NULL;
    rc = calib_table_build(db, id, engine, model_cost_db_dtypes(c, dts), c->g.sms, &t, err);
    if (rc < 0) return rc;
    c->tab = c->tab_owned = t;
    resolve_series(c);
    return 0;
}

/* Records one priced op: its class's time, the energy model's busy
 * seconds (flops at `peak`, 0 = none; bytes at the HBM bandwidth, a
 * collective's bytes counting as HBM traffic) and, with x->ops, its row. */
static void push_busy(cost_ctx *x, const char *name, model_op_class cls, double count, double flops, double bytes,
                      double cbusy, double mbusy, double time_s, double hidden_s, model_bound bound, model_source src,
                      const char *detail)
{
    x->r.compute_busy_s += cbusy;
    x->r.mem_busy_s += mbusy;
    switch (cls) {
    case MODEL_OPC_GEMM: x->r.gemm_s += time_s; break;
    case MODEL_OPC_ATTN: x->r.attn_s += time_s; break;
    case MODEL_OPC_COMM: x->r.comm_s += time_s; break;
    case MODEL_OPC_OTHER: x->r.other_s += time_s; break;
    case MODEL_OPC_OVERHEAD: x->r.overhead_s += time_s; break;
    }
    if (!x->ops) return;
    if (x->n < x->max) {
        model_op *o = &x->ops[x->n];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", name);
        o->cls = cls;
        o->count = (int32_t)llround(count);
        o->flops = flops;
        o->bytes = bytes;
        o->time_s = time_s;
        o->hidden_s = hidden_s;
        o->bound = bound;
        o->source = src;
        o->compute_busy_s = cbusy;
        o->mem_busy_s = mbusy;
        snprintf(o->detail, sizeof o->detail, "%s", detail ? detail : "");
    }
    x->n++;
}

static void op_push(cost_ctx *x, const char *name, model_op_class cls, double count, double flops, double peak,
                    double bytes, double time_s, double hidden_s, model_bound bound, model_source src,
                    const char *detail)
{
    const double cbusy = peak > 0 ? flops / peak * x->time_scale : 0, mbusy = bytes / x->c->bw * x->time_scale;
    push_busy(x, name, cls, count, flops, bytes, cbusy, mbusy, time_s, hidden_s, bound, src, detail);
}

void cost_push_busy(cost_ctx *x, const char *name, model_op_class cls, double count, double flops, double bytes,
                    double cbusy, double mbusy, double time_s, model_bound bound, model_source src,
                    const char *detail)
{
    push_busy(x, name, cls, count, flops, bytes, cbusy, mbusy, time_s, 0, bound, src, detail);
}

/* Perf-db timing of one execution of shape sh for op in dtype dt (the
 * column of c->series, COST_DB_*); 0 when the tables have no series for
 * it. */
static double table_time(const model_cost *c, calib_op op, int dt, const calib_shape *sh, model_source *src)
{
    if ((int)op < 0 || op >= CALIB_OP_COUNT) return 0;
    const calib_series *s = c->series[op][dt];
    if (!s) return 0;
    calib_table_status st;
    double t = calib_series_lookup_memo(s, sh, c->memo, &st);
    if (!(t > 0)) return 0;
    *src = st == CALIB_TABLE_FIT ? MODEL_SRC_DB_FIT : MODEL_SRC_DB;
    return t;
}

/* The desc's engine op first (has_db_op), then its calib_op. Measured
 * activation quantisation is the scale's computation (quant_scale rows,
 * where the tables have them: vLLM's are dynamic minus static
 * quantisation) plus applying it (quant_fp8). */
static double op_db_time(cost_ctx *x, const cost_op_desc *d, model_source *src)
{
    calib_shape s;
    if (d->has_db_op) {
        memcpy(&s, d->db_shape, sizeof s);
        double t = table_time(x->c, (calib_op)d->db_op, d->db_dt, &s, src);
        if (t > 0 && d->db_op == CALIB_OP_QUANT_FP8) {
            model_source s2 = MODEL_SRC_DB;
            double ts = table_time(x->c, CALIB_OP_QUANT_SCALE, d->db_dt, &s, &s2);
            if (ts > 0) {
                t += ts;
                if (s2 == MODEL_SRC_DB_FIT) *src = s2;
            }
        }
        if (t > 0) return t;
    }
    if (d->calib_op < 0) return 0;
    memcpy(&s, d->shape, sizeof s); /* the same twelve fields in the same order */
    return table_time(x->c, (calib_op)d->calib_op, d->calib_wdt, &s, src);
}

double cost_db_time(const model_cost *c, int32_t op, int32_t dt, const int64_t s[COST_SHAPE_FIELDS], model_source *src)
{
    calib_shape sh;
    memcpy(&sh, s, sizeof sh);
    return table_time(c, (calib_op)op, dt, &sh, src);
}

void cost_db_alt(cost_op_desc *d, int32_t op, int32_t dt, const int64_t s[COST_SHAPE_FIELDS])
{
    d->has_db_op = 1;
    d->db_op = op;
    d->db_dt = dt;
    memcpy(d->db_shape, s, sizeof d->db_shape);
}

double cost_moe_db(cost_ctx *x, double count, double tokens, double width, double launches)
{
    const model_cost *c = x->c;
    if (!c->tab || !(count > 0) || !(tokens > 0)) return 0;
    calib_shape s;
    memset(&s, 0, sizeof s);
    s.m = (int64_t)ceil(tokens);
    s.k = (int64_t)width;
    s.n = c->m.expert_intermediate;
    s.batch = c->m.top_k;
    s.groups = c->m.experts;
    s.ranks = c->l.ep;
    s.heads = c->moe_tp;
    model_source src = MODEL_SRC_DB;
    double t = table_time(c, CALIB_OP_MOE, COST_DB_EXPERT, &s, &src);
    if (!(t > 0)) return 0;
    x->used_db = 1;
    double total = count * t * x->time_scale;
    if (c->fam_scaled) total *= c->fam_time[MODEL_FAM_MOE];
    x->launches += count * launches * x->time_scale;
    char detail[64] = "";
    if (x->ops) snprintf(detail, sizeof detail, "fused tokens=%lld experts=%lld", (long long)s.m, (long long)s.groups);
    op_push(x, "experts_fused", MODEL_OPC_GEMM, count, count * calib_op_flops(CALIB_OP_MOE, &s), c->peak_gemm,
            count * calib_op_bytes(CALIB_OP_MOE, c->expert_fmt, &s), total, 0, MODEL_BOUND_COMPUTE, src,
            detail);
    return total;
}

model_op_family cost_op_family(const cost_op_desc *d)
{
    switch (d->cls) {
    case MODEL_OPC_ATTN: return MODEL_FAM_ATTENTION;
    case MODEL_OPC_GEMM:
        /* The routed experts: grouped GEMMs (their perf-db ops) or the engine's fused-MoE op. */
        if (d->calib_op == CALIB_OP_GROUPED_CONTIG || d->calib_op == CALIB_OP_GROUPED_MASKED ||
            d->calib_op == CALIB_OP_MOE || (d->has_op && d->op.kind == MODEL_OPK_MOE))
            return MODEL_FAM_MOE;
        return MODEL_FAM_GEMM;
    default: return MODEL_FAM_OTHER;
    }
}

model_op_family cost_coll_family(model_coll op)
{
    switch (op) {
    case MODEL_COLL_ALL_REDUCE: return MODEL_FAM_ALL_REDUCE;
    case MODEL_COLL_ALL_GATHER: return MODEL_FAM_ALL_GATHER;
    case MODEL_COLL_REDUCE_SCATTER: return MODEL_FAM_REDUCE_SCATTER;
    case MODEL_COLL_ALL_TO_ALL: return MODEL_FAM_ALL_TO_ALL;
    default: return MODEL_FAM_SEND_RECV;
    }
}

/* Counts op d's launches and records it with its time (total − hidden of
 * it): busy at the whole GPU's rates (SMs a partial wave or a split leaves
 * idle, and the HBM rate such a grid cannot reach, draw no power). */
static void op_account(cost_ctx *x, const cost_op_desc *d, double total, double hidden, model_bound bound,
                       model_source src, const char *detail)
{
    if (!d->in_fused_op) x->launches += d->count * d->kernels * x->time_scale;
    op_push(x, d->name, d->cls, d->count, d->count * d->flops, d->peak_full > 0 ? d->peak_full : d->peak,
            d->count * d->bytes, total - hidden, hidden, bound, src, detail);
}

double cost_op(cost_ctx *x, const cost_op_desc *d, double hide)
{
    if (!(d->count > 0)) return 0;
    if (x->work_only) {
        /* Work and launches only: no lookup, no op model, no time. */
        op_account(x, d, 0, 0, MODEL_BOUND_COMPUTE, MODEL_SRC_ROOFLINE, "");
        return 0;
    }
    double tc = d->peak > 0 ? d->flops / d->peak : 0, tm = d->bw > 0 ? d->bytes / d->bw : 0;
    double roof = tc > tm ? tc : tm, fl = d->kernels * x->launch;
    double t = roof + fl;
    model_source src = MODEL_SRC_ROOFLINE;
    model_bound bound = fl > roof ? MODEL_BOUND_LATENCY : tc >= tm ? MODEL_BOUND_COMPUTE : MODEL_BOUND_MEMORY;
    int from_db = 0;
    if (x->c->tab && (d->calib_op >= 0 || d->has_db_op)) {
        double tdb = op_db_time(x, d, &src);
        if (tdb > 0) {
            t = tdb;
            x->used_db = 1;
            from_db = 1;
        }
    }
    if (!from_db && d->has_op) {
        double top = d->op.kind == MODEL_OPK_MOE ? cost_op_model_moe(x->c, &d->op, &d->moe_load)
                                                 : cost_op_model_time(x->c, d->opv, &d->op);
        if (top > 0) {
            t = top;
            src = MODEL_SRC_OP_MODEL;
            bound = fl > roof ? MODEL_BOUND_LATENCY : bound;
        }
    }
    double total = d->count * t * x->time_scale;
    if (x->c->fam_scaled) total *= x->c->fam_time[cost_op_family(d)];
    double hidden = hide > 0 ? (hide < total ? hide : total) : 0;
    char detail[64] = "";
    if (x->ops) {
        if (d->cls == MODEL_OPC_GEMM)
            snprintf(detail, sizeof detail, "m=%.0f n=%.0f k=%.0f", ceil(d->m), d->n, d->k);
        else if (d->m > 0)
            snprintf(detail, sizeof detail, "tokens=%.0f", ceil(d->m));
    }
    op_account(x, d, total, hidden, bound, src, detail);
    return total - hidden;
}

/* The perf-db op of a collective: all-reduce, all-gather, reduce-scatter
 * and all-to-all have the same byte convention in both (calib_op.h,
 * model_comm.h: the whole buffer of a rank, all-gather's output,
 * reduce-scatter's input, all-to-all's send buffer); -1 for send/recv. */
static calib_op coll_calib_op(model_coll op)
{
    switch (op) {
    case MODEL_COLL_ALL_REDUCE: return CALIB_OP_ALLREDUCE;
    case MODEL_COLL_ALL_GATHER: return CALIB_OP_ALLGATHER;
    case MODEL_COLL_REDUCE_SCATTER: return CALIB_OP_REDUCE_SCATTER;
    case MODEL_COLL_ALL_TO_ALL: return CALIB_OP_ALLTOALL;
    default: return (calib_op)-1;
    }
}

double cost_comm(cost_ctx *x, const char *name, double count, model_coll op, int32_t n, int32_t stride, double bytes,
                 double hide)
{
    if (!(count > 0) || n <= 1 || !(bytes > 0)) return 0;
    model_comm_cost cc;
    double t = model_comm_time(&x->c->net, op, n, stride, bytes, &cc);
    model_source src = MODEL_SRC_ROOFLINE;
    const calib_op cop = coll_calib_op(op);
    if (x->c->tab && (int)cop >= 0 && cc.link == MODEL_LINK_NVLINK) {
        /* Measured collective rows (bytes per rank as model_comm counts
         * them, ranks) are single-node; keyed by bytes, so fp16 (NCCL's
         * tables) stands in for bf16. */
        calib_shape s;
        memset(&s, 0, sizeof s);
        s.bytes = (int64_t)ceil(bytes), s.ranks = n;
        double tdb = table_time(x->c, cop, COST_DB_BF16, &s, &src);
        if (!(tdb > 0)) tdb = table_time(x->c, cop, COST_DB_FP16, &s, &src);
        if (tdb > 0) {
            t = tdb;
            x->used_db = 1;
        }
    }
    if (src == MODEL_SRC_ROOFLINE && cc.link == MODEL_LINK_NVLINK && x->c->l.op_backend[0]) {
        double top = cost_op_model_comm(x->c, op, n, bytes);
        if (top > 0) {
            t = top;
            src = MODEL_SRC_OP_MODEL;
        }
    }
    double total = count * t * x->time_scale;
    if (x->c->fam_scaled) total *= x->c->fam_time[cost_coll_family(op)];
    double hidden = hide > 0 ? (hide < total ? hide : total) : 0;
    x->launches += count * x->time_scale;
    char detail[64] = "";
    if (x->ops)
        snprintf(detail, sizeof detail, "%s %s %s n=%d %.0fB", model_coll_name(op), model_comm_algo_name(cc.algo),
                 model_comm_link_name(cc.link), n, bytes);
    op_push(x, name, MODEL_OPC_COMM, count, 0, 0, count * bytes, total - hidden, hidden, MODEL_BOUND_COMM, src,
            detail);
    return total - hidden;
}

void cost_fixed(cost_ctx *x, const char *name, model_op_class cls, model_bound bound, double count, double time_s,
                double bytes, const char *detail)
{
    if (!(time_s > 0)) return;
    op_push(x, name, cls, count, 0, 0, bytes, time_s, 0, bound, MODEL_SRC_ROOFLINE, detail); /* bytes: already × count */
}

/* The perf-db column of a GEMM whose weights take wbytes per value at
 * peak: bf16 weights read the bf16 rows; the layout dtype's bytes and peak
 * its column; else the part whose format has these bytes and peak (a
 * model's parts may differ: DeepSeek-V4-Flash's fp8_block attention beside
 * mxfp4 experts; bytes alone do not tell nvfp4 from int4, the peak does). */
static int32_t gemm_db_column(const model_cost *c, double wbytes, double peak)
{
    if (!(wbytes < COST_ACT_BYTES)) return COST_DB_BF16;
    if (wbytes == c->wb && peak == c->peak_gemm) return COST_DB_WEIGHTS;
    for (int k = 0; k < MODEL_PART_COUNT; k++)
        if (wbytes == c->wb_part[k] && peak == c->peak_part[k]) return COST_DB_PART + k;
    return COST_DB_WEIGHTS;
}

void cost_gemm(cost_op_desc *d, const model_cost *c, const char *name, double count, double m, double n, double k,
               double wbytes, double abytes, double peak)
{
    /* Tile quantisation: a wave of tiles leaves SMs idle when the tile count
     * is not a multiple of the SM count. */
    double tiles = ceil(m / COST_TILE) * ceil(n / COST_TILE);
    double waves = ceil(tiles / c->g.sms);
    double wave_eff = tiles > c->g.sms ? tiles / (waves * c->g.sms) : 1;
    cost_roof_desc(d, c, name, MODEL_OPC_GEMM, count, m, 2.0 * m * n * k,
                   n * k * wbytes + m * k * abytes + m * n * COST_ACT_BYTES, peak * wave_eff, 1);
    d->peak_full = peak;
    d->n = n;
    d->k = k;
    /* With the perf-db's GEMM series attached the lookup prices this GEMM
     * (never below the series' floor), so the split-K search below, the
     * dearest part of the roofline descriptor, is skipped: the unsplit
     * ceilings then serve only the roofline overlap budgets. */
    const int32_t col = gemm_db_column(c, wbytes, peak);
    const int db_priced = c->tab && c->series[CALIB_OP_GEMM][col];
    if (!db_priced && tiles < c->g.sms && peak > 0 && c->bw > 0) {
        /* Fewer tiles than SMs: split-K / stream-K over the idle SMs, paying
         * its reduction (each split's fp32 partial written and read back),
         * at the fastest split count, as the op model prices it; the
         * roofline's max(FLOPs/peak, bytes/bandwidth) then gives the chosen
         * split's time. */
        model_gemm_split sp = model_gemm_split_pick_memo(c->split_memo, c->g.sms, tiles, k, d->flops / peak, d->bytes,
                                                         c->bw, 2.0 * m * n * 4.0, 0);
        d->peak = peak * sp.par;
        d->bw = c->bw * sp.mpar;
        d->bytes += sp.extra_bytes;
    }
    d->calib_op = CALIB_OP_GEMM;
    d->shape[0] = (int64_t)ceil(m);
    d->shape[1] = (int64_t)n;
    d->shape[2] = (int64_t)k;
    d->calib_wdt = col;
    /* The engine's kernel: the GEMM alone (its activation quantisation is
     * the norm's / o_quant's op here). */
    const char *odt = wbytes < COST_ACT_BYTES ? cost_op_dtype(c->l.dtype) : "bfloat16";
    if (c->l.op_backend[0] && odt) {
        memset(&d->op, 0, sizeof d->op);
        d->has_op = 1;
        d->opv = wbytes < COST_ACT_BYTES ? COST_OPV_GEMM_W : COST_OPV_GEMM_BF16;
        d->op.kind = MODEL_OPK_GEMM;
        d->op.f[MODEL_OPF_M] = ceil(m), d->op.f[MODEL_OPF_N] = n, d->op.f[MODEL_OPF_K] = k;
    }
}

const char *cost_op_dtype(model_dtype d)
{
    switch (d) {
    case MODEL_DTYPE_BF16: return "bfloat16";
    case MODEL_DTYPE_FP8: return "fp8";
    case MODEL_DTYPE_FP8_BLOCK: return "fp8_block";
    case MODEL_DTYPE_NVFP4: return "nvfp4";
    case MODEL_DTYPE_MXFP4: return "w4a16_mxfp4";
    case MODEL_DTYPE_INT4: return "int4_wo";
    default: return NULL;
    }
}

model_dtype cost_expert_dtype(const model_cost *c)
{
    model_dtype e = c->part_dt[MODEL_PART_EXPERT];
    if (e == MODEL_DTYPE_FP8 && c->m.wdtype_expert == MODEL_DTYPE_FP8_BLOCK) e = MODEL_DTYPE_FP8_BLOCK;
    return e;
}

const char *cost_db_expert_dtype(const model_cost *c)
{
    model_dtype e = cost_expert_dtype(c);
    switch (e) {
    case MODEL_DTYPE_MXFP4: return model_dtype_act_bytes(&c->g, e) < COST_ACT_BYTES ? "w4a8_mxfp4_mxfp8" : "w4a16_mxfp4";
    case MODEL_DTYPE_INT4: return "int4_wo";
    default: return model_dtype_name(e);
    }
}

/* The kernel part whose engine prices op variant v (layout.kernels);
 * MODEL_KERN_PARTS for the linear-attention (GDN) kernels, which stay the
 * layout's engine's: an engine's attention backend (SGLang's
 * --attention-backend trtllm_mha) picks the softmax attention of a hybrid
 * model, not its linear-attention layers' kernels. */
static model_kern_part opv_part(cost_opv v)
{
    switch (v) {
    case COST_OPV_GDN_CONV_CTX:
    case COST_OPV_GDN_CONV_GEN:
    case COST_OPV_GDN_DELTA_CTX:
    case COST_OPV_GDN_DELTA_GEN: return MODEL_KERN_PARTS;
    case COST_OPV_GEMM_BF16:
    case COST_OPV_GEMM_W: return MODEL_KERN_GEMM;
    case COST_OPV_MOE: return MODEL_KERN_MOE;
    case COST_OPV_CUSTOM_AR:
    case COST_OPV_NCCL_AR:
    case COST_OPV_NCCL_AG:
    case COST_OPV_NCCL_RS:
    case COST_OPV_NCCL_A2A: return MODEL_KERN_COMM;
    default: return MODEL_KERN_ATTENTION;
    }
}

/* The fitted set for q on this GPU of the engine that runs the kernel:
 * that engine's, else the set fitted on most rows; a GEMM set whose table
 * was host-bound gives way to another engine's set of the same variant
 * (model_op_lookup_serving). */
static const model_op_paramset *op_set_find(const model_cost *c, const char *engine, const char *v)
{
    const char *be = strcmp(engine, "auto") ? engine : NULL;
    if (!strncmp(v, "nccl:", 5)) be = "nccl";
    const model_op_paramset *s = model_op_lookup_serving(&c->g, be, v);
    if (!s && be && strncmp(v, "custom_allreduce:", 17)) s = model_op_lookup_serving(&c->g, NULL, v);
    return s;
}

/* The query strings the cost model's ops of variant v carry (cost_gemm,
 * attn_op, gdn_op, cost_op_model_comm) for engine; 0 when the variant is
 * never priced (no dtype of the tables'). */
static int opv_query(const model_cost *c, cost_opv v, const char *engine, model_op_query *q)
{
    static const char *const nccl[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall"};
    const char *kv = cost_op_dtype(c->l.kv_dtype), *w = cost_op_dtype(c->l.dtype);
    memset(q, 0, sizeof *q);
    const char *dt = "bfloat16", *kvd = "", *var = "", *phase = "", *gt = "";
    switch (v) {
    case COST_OPV_GEMM_BF16: q->kind = MODEL_OPK_GEMM, var = "fused_quant"; break;
    case COST_OPV_GEMM_W: q->kind = MODEL_OPK_GEMM, dt = w, var = "fused_quant"; break;
    case COST_OPV_CTX_ATTN:
        q->kind = MODEL_OPK_CTX_ATTN, kvd = kv;
        /* SGLang's default backends, FlashAttention-3 on Hopper and
         * trtllm_mha on Blackwell (SM100: not on Ada or RTX
         * Blackwell, whose default FlashInfer backend keeps bf16
         * queries), cast the queries to an fp8 KV
         * cache's dtype: its fp8-KV prefill runs the fp8/fp8 kernel
         * (the tables' bfloat16/fp8 rows time its Triton and
         * FlashInfer backends, sets of their own). The sets without a
         * kernel (variant "") are each engine's default backend. */
        if (kv && !strcmp(kv, "fp8") && !strcmp(engine, "sglang") &&
            (model_gpu_arch_of(&c->g) == MODEL_ARCH_HOPPER || model_gpu_has_tcgen05(&c->g)))
            dt = "fp8";
        break;
    case COST_OPV_GEN_ATTN: q->kind = MODEL_OPK_GEN_ATTN, kvd = kv; break;
    case COST_OPV_CTX_MLA: q->kind = MODEL_OPK_CTX_MLA, kvd = kv; break;
    case COST_OPV_GEN_MLA: q->kind = MODEL_OPK_GEN_MLA, kvd = kv; break;
    case COST_OPV_GDN_CONV_CTX: q->kind = MODEL_OPK_GDN, var = "conv", phase = "context"; break;
    case COST_OPV_GDN_CONV_GEN: q->kind = MODEL_OPK_GDN, var = "conv", phase = "generation"; break;
    case COST_OPV_GDN_DELTA_CTX: q->kind = MODEL_OPK_GDN, var = "delta", phase = "context"; break;
    case COST_OPV_GDN_DELTA_GEN: q->kind = MODEL_OPK_GDN, var = "delta", phase = "generation"; break;
    /* Engines all-reduce through their own kernels; "auto" names no engine. */
    case COST_OPV_CUSTOM_AR:
        if (!strcmp(engine, "auto")) dt = NULL;
        q->kind = MODEL_OPK_CUSTOM_AR, var = "graph";
        break;
    case COST_OPV_NCCL_AR:
    case COST_OPV_NCCL_AG:
    case COST_OPV_NCCL_RS:
    case COST_OPV_NCCL_A2A: q->kind = MODEL_OPK_NCCL, dt = "half", var = nccl[v - COST_OPV_NCCL_AR]; break;
    /* DSA modules, keyed by KV and projection format; priced by part. */
    case COST_OPV_DSA_CTX_ATTN: q->kind = MODEL_OPK_CTX_DSA_MODULE, kvd = kv, gt = w, var = "attention"; break;
    case COST_OPV_DSA_GEN_ATTN: q->kind = MODEL_OPK_GEN_DSA_MODULE, kvd = kv, gt = w, var = "attention"; break;
    case COST_OPV_DSA_CTX_IDX: q->kind = MODEL_OPK_CTX_DSA_MODULE, kvd = kv, gt = w, var = "indexer"; break;
    case COST_OPV_DSA_GEN_IDX: q->kind = MODEL_OPK_GEN_DSA_MODULE, kvd = kv, gt = w, var = "indexer"; break;
    /* The routed experts' format. An fp8 run of a checkpoint whose
     * experts ship block-scaled fp8 runs the engine's block-scaled
     * kernels (the label "fp8" does not tell them apart; per-tensor fp8
     * MoE kernels are others, with other prices). */
    case COST_OPV_MOE: {
        model_dtype e = cost_expert_dtype(c);
        q->kind = MODEL_OPK_MOE, dt = c->m.experts > 0 ? cost_op_dtype(e) : NULL;
        /* MXFP4 experts where the activations run in MXFP8 (Blackwell:
         * the fp4 × fp8 tensor-core path; cost_db_expert_dtype) take
         * those kernels: 3.8× faster than the bf16-activation one at
         * 8192 tokens on gpt-oss-120b's shape, 1.3× at 32. */
        if (dt && e == MODEL_DTYPE_MXFP4) dt = cost_db_expert_dtype(c);
        break;
    }
    default: dt = NULL; break;
    }
    if (!dt || !kvd || !gt) return 0; /* never priced: no dtype of the tables' */
    snprintf(q->dtype, sizeof q->dtype, "%s", dt);
    snprintf(q->kv_dtype, sizeof q->kv_dtype, "%s", kvd);
    snprintf(q->variant, sizeof q->variant, "%s", var);
    snprintf(q->phase, sizeof q->phase, "%s", phase);
    snprintf(q->gemm_type, sizeof q->gemm_type, "%s", gt);
    return 1;
}

/* The fitted set for variant v's query q on this GPU (the MoE query's
 * variant is cleared when falling back past the engine). */
static const model_op_paramset *opv_set(const model_cost *c, cost_opv v, const char *engine, model_op_query *q)
{
    const model_op_paramset *set;
    if (v == COST_OPV_MOE) {
        /* The fused-MoE kernel the engine runs on this architecture
         * (model_op_lookup_moe: Marlin only for formats no other kernel
         * runs), its backend's set, else the set fitted on most rows. */
        const char *be = strcmp(engine, "auto") ? engine : NULL;
        set = model_op_lookup_moe(&c->g, NULL, be, q);
        if (!set && be) {
            q->variant[0] = '\0';
            set = model_op_lookup_moe(&c->g, NULL, NULL, q);
        }
    } else {
        char key[64];
        model_op_variant(q, key, sizeof key);
        set = op_set_find(c, engine, key);
    }
    return set;
}

void cost_op_sets_init(model_cost *c)
{
    memset(c->op_sets, 0, sizeof c->op_sets);
    if (!c->l.op_backend[0]) return;
    for (int v = 0; v < COST_OPV_COUNT; v++) {
        const model_kern_part part = opv_part((cost_opv)v);
        const char *engine = part == MODEL_KERN_PARTS ? c->l.op_backend : model_layout_kernels(&c->l, part);
        model_op_query q;
        if (!opv_query(c, (cost_opv)v, engine, &q)) continue;
        c->op_sets[v].set = opv_set(c, (cost_opv)v, engine, &q);
        model_op_resolve(&q, &c->op_sets[v].r);
    }
}

/* Time of q as variant v; *covered says whether a fitted set covers it. */
static double op_model_time(const model_cost *c, cost_opv v, const model_op_query *q, int *covered)
{
    const cost_op_set *o = (int)v >= 0 && v < COST_OPV_COUNT ? &c->op_sets[v] : NULL;
    *covered = o && o->set;
    return *covered ? model_op_time_resolved(&c->g, q, &o->r, o->set->p, NULL) : 0;
}

double cost_op_model_time(const model_cost *c, cost_opv v, const model_op_query *q)
{
    int covered;
    return op_model_time(c, v, q, &covered);
}

double cost_op_model_moe(const model_cost *c, const model_op_query *q, const model_op_moe_load *ld)
{
    const cost_op_set *o = &c->op_sets[COST_OPV_MOE];
    return o->set ? model_op_moe_time_load(&c->g, q, &o->r, o->set->p, ld, NULL) : 0;
}

double cost_op_model_comm(const model_cost *c, model_coll op, int32_t n, double bytes)
{
    model_op_query q;
    memset(&q, 0, sizeof q);
    q.f[MODEL_OPF_GPUS] = n;
    q.f[MODEL_OPF_MSG] = bytes / COST_ACT_BYTES;
    cost_opv v = op == MODEL_COLL_ALL_REDUCE ? COST_OPV_NCCL_AR : op == MODEL_COLL_ALL_GATHER ? COST_OPV_NCCL_AG
                 : op == MODEL_COLL_REDUCE_SCATTER ? COST_OPV_NCCL_RS : op == MODEL_COLL_ALL_TO_ALL ? COST_OPV_NCCL_A2A
                                                                                                  : COST_OPV_COUNT;
    if (v == COST_OPV_COUNT) return 0;
    int covered;
    /* Engines all-reduce through their own one-/two-shot kernels below
     * their size limit (8 MB in vLLM and SGLang), NCCL above. */
    if (op == MODEL_COLL_ALL_REDUCE && bytes <= 8e6) {
        q.kind = MODEL_OPK_CUSTOM_AR;
        double t = op_model_time(c, COST_OPV_CUSTOM_AR, &q, &covered);
        if (covered) return t;
    }
    q.kind = MODEL_OPK_NCCL;
    return op_model_time(c, v, &q, &covered);
}
