/* model_cost_db — timing of one op: perf-db first, roofline otherwise.
 *
 * Sources, in order (design §6): (1) perf-db rows of the same GPU, op and
 * dtype, interpolated in log space on the measured grid (calib_db_lookup);
 * (2) outside the grid, the roofline scaled by what the nearest measured
 * point reached: t = t_nearest · roof(shape)/roof(nearest shape), i.e. the
 * analytic estimate divided by the nearest point's efficiency; (3) with no
 * rows, the roofline max(FLOPs/peak, bytes/bandwidth) with the catalogue's
 * efficiency factors, plus a launch floor per kernel. Every op records
 * which source timed it. */
#include "model_cost_impl.h"

#include "../calib/calib_db.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static struct cost_db_memo *memo_new(void);

int model_cost_set_db(model_cost *c, struct calib_db *db, const char *gpu_name, sim_err *err)
{
    c->db = NULL;
    c->db_gpu = 0;
    cost_db_memo_free(c->memo);
    c->memo = NULL;
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
    c->db = db;
    c->db_gpu = id;
    c->memo = memo_new(); /* NULL only costs speed: lookups go straight to the db */
    return 0;
}

static void op_push(cost_ctx *x, const char *name, model_op_class cls, double count, double flops, double bytes,
                    double time_s, double hidden_s, model_bound bound, model_source src, const char *detail)
{
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
        snprintf(o->detail, sizeof o->detail, "%s", detail ? detail : "");
    }
    x->n++;
}

static double roof_of(double flops, double peak, double bytes, double bw)
{
    double a = peak > 0 ? flops / peak : 0, b = bw > 0 ? bytes / bw : 0;
    return a > b ? a : b;
}

/* Memo of perf-db answers keyed by everything op_db_time reads, so a long
 * simulation asks SQLite once per distinct op shape, not once per op per
 * iteration. Open addressing, doubled at half load, cleared past a cap. */
typedef struct {
    int32_t used, op;
    int64_t shape[11];
    char dtype[16];
    double peak, bw;
    double t;
    model_source src;
} memo_ent;

struct cost_db_memo {
    memo_ent *e;
    size_t cap, n;
};

#define MEMO_MAX ((size_t)1 << 20)

static struct cost_db_memo *memo_new(void) { return calloc(1, sizeof(struct cost_db_memo)); }

void cost_db_memo_free(struct cost_db_memo *m)
{
    if (!m) return;
    free(m->e);
    free(m);
}

static uint64_t memo_hash(const cost_op_desc *d, const char *dt)
{
    uint64_t h = 0xcbf29ce484222325ULL;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 0x100000001b3ULL)
    MIX(d->calib_op);
    for (int i = 0; i < 11; i++) MIX(d->shape[i]);
    for (const char *p = dt; *p; p++) MIX((unsigned char)*p);
    uint64_t pb, bb;
    memcpy(&pb, &d->peak, sizeof pb);
    memcpy(&bb, &d->bw, sizeof bb);
    MIX(pb);
    MIX(bb);
#undef MIX
    return h ^ (h >> 29);
}

static int memo_match(const memo_ent *e, const cost_op_desc *d, const char *dt)
{
    return e->op == d->calib_op && memcmp(e->shape, d->shape, sizeof e->shape) == 0 && e->peak == d->peak &&
           e->bw == d->bw && strcmp(e->dtype, dt) == 0;
}

/* The slot for d: its entry when cached, else the empty slot to fill. */
static memo_ent *memo_slot(struct cost_db_memo *m, const cost_op_desc *d, const char *dt)
{
    size_t i = (size_t)memo_hash(d, dt) & (m->cap - 1);
    while (m->e[i].used && !memo_match(&m->e[i], d, dt)) i = (i + 1) & (m->cap - 1);
    return &m->e[i];
}

static int memo_grow(struct cost_db_memo *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    if (nc > MEMO_MAX * 2) { /* cap reached: start over rather than grow without bound */
        memset(m->e, 0, m->cap * sizeof *m->e);
        m->n = 0;
        return 0;
    }
    memo_ent *old = m->e;
    size_t oc = m->cap;
    m->e = calloc(nc, sizeof *m->e);
    if (!m->e) {
        m->e = old;
        return -1;
    }
    m->cap = nc;
    m->n = 0;
    for (size_t i = 0; i < oc; i++) {
        if (!old[i].used) continue;
        cost_op_desc d = {.calib_op = old[i].op, .peak = old[i].peak, .bw = old[i].bw};
        memcpy(d.shape, old[i].shape, sizeof d.shape);
        *memo_slot(m, &d, old[i].dtype) = old[i];
        m->n++;
    }
    free(old);
    return 0;
}

static double op_db_lookup(cost_ctx *x, const cost_op_desc *d, model_source *src);

/* Perf-db timing of one execution (memoised); 0 when the db has nothing to say. */
static double op_db_time(cost_ctx *x, const cost_op_desc *d, model_source *src)
{
    struct cost_db_memo *m = x->c->memo;
    const char *dt = d->calib_dtype ? d->calib_dtype : "bf16";
    if (!m || strlen(dt) >= sizeof m->e[0].dtype || ((m->n + 1) * 2 > m->cap && memo_grow(m) < 0))
        return op_db_lookup(x, d, src);
    memo_ent *e = memo_slot(m, d, dt);
    if (e->used) {
        if (e->t > 0) *src = e->src;
        return e->t;
    }
    model_source s = *src;
    double t = op_db_lookup(x, d, &s);
    e->used = 1;
    e->op = d->calib_op;
    memcpy(e->shape, d->shape, sizeof e->shape);
    snprintf(e->dtype, sizeof e->dtype, "%s", dt);
    e->peak = d->peak;
    e->bw = d->bw;
    e->t = t;
    e->src = s;
    m->n++;
    if (t > 0) *src = s;
    return t;
}

/* The perf-db's answer for one execution; 0 when it has nothing to say. */
static double op_db_lookup(cost_ctx *x, const cost_op_desc *d, model_source *src)
{
    const model_cost *c = x->c;
    calib_shape s;
    calib_lookup_result res;
    memset(&s, 0, sizeof s);
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) calib_shape_set(&s, f, d->shape[f]);
    const char *dt = d->calib_dtype ? d->calib_dtype : "bf16";
    if (calib_db_lookup(c->db, c->db_gpu, (calib_op)d->calib_op, dt, NULL, &s, &res, NULL)) return 0;
    /* Block-scaled fp8 with no rows of its own: per-tensor fp8 timings stand
     * in (the block scales add under 4 % to the bytes and nothing to the
     * tensor-core rate). */
    if (res.status == CALIB_LOOKUP_NONE && strcmp(dt, "fp8_block") == 0) {
        dt = "fp8";
        if (calib_db_lookup(c->db, c->db_gpu, (calib_op)d->calib_op, dt, NULL, &s, &res, NULL)) return 0;
    }
    if (!(res.latency_s > 0)) return 0;
    if (res.status == CALIB_LOOKUP_EXACT || res.status == CALIB_LOOKUP_INTERP) {
        *src = MODEL_SRC_DB;
        return res.latency_s;
    }
    /* Nearest point (a hole in a sparse grid, such as GEMM (n, k) pairs) or
     * outside the grid: that point's measured efficiency carried over to this
     * shape's roofline, never its raw latency (a 24576×7168 GEMM's time is
     * not a 14336×8192 one's). */
    if (res.status != CALIB_LOOKUP_OUTSIDE && res.status != CALIB_LOOKUP_NEAREST) return 0;
    double want = roof_of(calib_op_flops((calib_op)d->calib_op, &s), d->peak,
                          calib_op_bytes((calib_op)d->calib_op, dt, &s), d->bw);
    double near = roof_of(calib_op_flops((calib_op)d->calib_op, &res.nearest), d->peak,
                          calib_op_bytes((calib_op)d->calib_op, dt, &res.nearest), d->bw);
    if (!(want > 0) || !(near > 0)) return 0;
    *src = MODEL_SRC_DB_SCALED;
    return res.latency_s * want / near;
}

double cost_op(cost_ctx *x, const cost_op_desc *d, double hide)
{
    if (!(d->count > 0)) return 0;
    double tc = d->peak > 0 ? d->flops / d->peak : 0, tm = d->bw > 0 ? d->bytes / d->bw : 0;
    double roof = tc > tm ? tc : tm, fl = d->kernels * x->launch;
    double t = roof + fl;
    model_source src = MODEL_SRC_ROOFLINE;
    model_bound bound = fl > roof ? MODEL_BOUND_LATENCY : tc >= tm ? MODEL_BOUND_COMPUTE : MODEL_BOUND_MEMORY;
    if (x->c->db && d->calib_op >= 0) {
        double tdb = op_db_time(x, d, &src);
        if (tdb > 0) {
            t = tdb;
            x->used_db = 1;
        }
    }
    double total = d->count * t * x->time_scale;
    double hidden = hide > 0 ? (hide < total ? hide : total) : 0;
    x->launches += d->count * d->kernels * x->time_scale;
    char detail[64] = "";
    if (x->ops) {
        if (d->cls == MODEL_OPC_GEMM)
            snprintf(detail, sizeof detail, "m=%.0f n=%.0f k=%.0f", ceil(d->m), d->n, d->k);
        else if (d->m > 0)
            snprintf(detail, sizeof detail, "tokens=%.0f", ceil(d->m));
    }
    op_push(x, d->name, d->cls, d->count, d->count * d->flops, d->count * d->bytes, total - hidden, hidden, bound,
            src, detail);
    return total - hidden;
}

double cost_comm(cost_ctx *x, const char *name, double count, model_coll op, int32_t n, int32_t stride, double bytes,
                 double hide)
{
    if (!(count > 0) || n <= 1 || !(bytes > 0)) return 0;
    model_comm_cost cc;
    double t = model_comm_time(&x->c->net, op, n, stride, bytes, &cc);
    double total = count * t * x->time_scale;
    double hidden = hide > 0 ? (hide < total ? hide : total) : 0;
    x->launches += count * x->time_scale;
    char detail[64] = "";
    if (x->ops)
        snprintf(detail, sizeof detail, "%s %s %s n=%d %.0fB", model_coll_name(op), model_comm_algo_name(cc.algo),
                 model_comm_link_name(cc.link), n, bytes);
    op_push(x, name, MODEL_OPC_COMM, count, 0, count * bytes, total - hidden, hidden, MODEL_BOUND_COMM,
            MODEL_SRC_ROOFLINE, detail);
    return total - hidden;
}

void cost_fixed(cost_ctx *x, const char *name, model_op_class cls, model_bound bound, double count, double time_s,
                double bytes, const char *detail)
{
    if (!(time_s > 0)) return;
    op_push(x, name, cls, count, 0, bytes, time_s, 0, bound, MODEL_SRC_ROOFLINE, detail);
}

cost_op_desc cost_gemm(const model_cost *c, const char *name, double count, double m, double n, double k,
                       double wbytes, double abytes, double peak)
{
    cost_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.cls = MODEL_OPC_GEMM;
    d.count = count;
    d.m = m;
    d.n = n;
    d.k = k;
    /* Tile quantisation: a wave of tiles leaves SMs idle when the tile count
     * is not a multiple of the SM count. */
    double tiles = ceil(m / COST_TILE) * ceil(n / COST_TILE);
    double waves = ceil(tiles / c->g.sms);
    /* Fewer tiles than SMs: kernels switch to split-K / stream-K, so only
     * multi-wave GEMMs pay for a ragged last wave. */
    double wave_eff = tiles > c->g.sms ? tiles / (waves * c->g.sms) : 1;
    d.flops = 2.0 * m * n * k;
    d.bytes = n * k * wbytes + m * k * abytes + m * n * COST_ACT_BYTES;
    d.peak = peak * wave_eff;
    d.bw = c->bw;
    d.kernels = 1;
    d.calib_op = CALIB_OP_GEMM;
    d.shape[0] = (int64_t)ceil(m);
    d.shape[1] = (int64_t)n;
    d.shape[2] = (int64_t)k;
    d.calib_dtype = wbytes < COST_ACT_BYTES ? model_dtype_name(c->l.dtype) : "bf16";
    return d;
}
