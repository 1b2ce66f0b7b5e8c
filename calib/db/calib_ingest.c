/* calib_ingest — measured per-op tables into perf-db points; see the header. */
#include "calib_ingest.h"

#include "calib_optable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *calib_ingest_dtype(const char *d)
{
    static const char *const map[][2] = {
        {"bfloat16", "bf16"}, {"bf16", "bf16"},       {"half", "fp16"},     {"float16", "fp16"},
        {"fp16", "fp16"},     {"float32", "fp32"},    {"fp8", "fp8"},       {"fp8_e4m3", "fp8"},
        {"float8_e4m3fn", "fp8"}, {"fp8_block", "fp8_block"}, {"int8", "int8"}, {"nvfp4", "nvfp4"},
        {"w4afp8", "w4afp8"}, {"int4_wo", "int4_wo"}, {"mxfp4", "mxfp4"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(d, map[i][0]) == 0) return map[i][1];
    return d;
}

/* What a table's rows become. */
typedef enum {
    TB_GEMM,
    TB_ATTN_CTX,
    TB_ATTN_GEN,
    TB_COMM,
    TB_MOE,
    TB_MLA_CTX,
    TB_MLA_GEN,
    TB_MODULE_CTX,
    TB_MODULE_GEN,
    TB_MLA_BMM,
    TB_GDN,
    TB_QUANT
} table_kind;

typedef struct {
    const char *table;
    table_kind kind;
    calib_op op;  /* for kinds with one op (others decide per row) */
} table_desc;

static const table_desc tables[] = {
    {"gemm_perf", TB_GEMM, CALIB_OP_GEMM},
    {"context_attention_perf", TB_ATTN_CTX, CALIB_OP_ATTN_PREFILL},
    {"generation_attention_perf", TB_ATTN_GEN, CALIB_OP_ATTN_DECODE},
    {"nccl_perf", TB_COMM, CALIB_OP_ALLREDUCE},
    {"custom_allreduce_perf", TB_COMM, CALIB_OP_ALLREDUCE},
    {"moe_perf", TB_MOE, CALIB_OP_MOE},
    {"context_mla_perf", TB_MLA_CTX, CALIB_OP_MLA_PREFILL},
    {"generation_mla_perf", TB_MLA_GEN, CALIB_OP_MLA_DECODE},
    {"mla_context_module_perf", TB_MODULE_CTX, CALIB_OP_MLA_MODULE_PREFILL},
    {"mla_generation_module_perf", TB_MODULE_GEN, CALIB_OP_MLA_MODULE_DECODE},
    {"dsa_context_module_perf", TB_MODULE_CTX, CALIB_OP_DSA_PREFILL},
    {"dsa_generation_module_perf", TB_MODULE_GEN, CALIB_OP_DSA_DECODE},
    {"mla_bmm_perf", TB_MLA_BMM, CALIB_OP_MLA_BMM_PRE},
    {"gdn_perf", TB_GDN, CALIB_OP_GDN_PREFILL},
    {"scale_matrix_perf", TB_QUANT, CALIB_OP_QUANT_FP8},
    {"computescale_perf", TB_QUANT, CALIB_OP_QUANT_SCALE},
};

typedef struct {
    calib_db *db;
    const calib_ingest_opts *o;
    calib_ingest_stats *st;
    int64_t gpu_id;
    char device[256];
    calib_point *pts;
    size_t n, cap;
} ingest_ctx;

static int in_list(const char *const *list, const char *s)
{
    if (!list) return 1;
    for (; *list; list++)
        if (strcmp(*list, s) == 0) return 1;
    return 0;
}

/* "a" or "a/b" when b differs. */
static void dtype_pair(char *out, size_t len, const char *a, const char *b)
{
    const char *x = calib_ingest_dtype(a), *y = b ? calib_ingest_dtype(b) : x;
    if (strcmp(x, y) == 0) snprintf(out, len, "%s", x);
    else snprintf(out, len, "%s/%s", x, y);
}

typedef struct {
    calib_optable *t;
    sim_err *err;
    int rc;
} row_rd;

static long rl(row_rd *r, const char *col)
{
    long v = 0;
    if (r->rc == 0 && (r->rc = calib_optable_long(r->t, col, &v, r->err)) == 0 && v < 0)
        r->rc = sim_err_set(r->err, SIM_EINVAL, "%s:%ld: column '%s' is %ld (expected ≥ 0)", calib_optable_path(r->t),
                            calib_optable_line(r->t), col, v);
    return v;
}

static const char *rs(row_rd *r, const char *col)
{
    const char *s = "";
    if (r->rc == 0) r->rc = calib_optable_str(r->t, col, &s, r->err);
    return r->rc == 0 ? s : "";
}

/* Bytes of a collective's message of `count` elements of dtype. */
static int64_t message_bytes(long count, const char *dtype)
{
    return (int64_t)llround((double)count * calib_dtype_bytes(calib_dtype_parse(dtype)));
}

/* The row helpers below return 1 when the row is a point, else what
 * row_point returns: 0 (row skipped) or the error. */

/* An attention row: beam 1 and full attention only (older tables have no
 * beam or window columns). */
static int row_attn(const table_desc *td, row_rd *r, calib_shape *s, char *dt, size_t dtlen)
{
    if ((calib_optable_has(r->t, "beam_width") && rl(r, "beam_width") != 1) ||
        (calib_optable_has(r->t, "window_size") && rl(r, "window_size") != 0))
        return r->rc ? r->rc : 0;
    dtype_pair(dt, dtlen, rs(r, "attn_dtype"), rs(r, "kv_cache_dtype"));
    s->batch = rl(r, "batch_size"), s->heads = rl(r, "num_heads");
    s->kv_heads = rl(r, "num_key_value_heads"), s->head_dim = rl(r, "head_dim");
    if (td->kind == TB_ATTN_CTX) s->m = rl(r, "isl"), s->ctx = rl(r, "step");
    else s->ctx = rl(r, "isl") + rl(r, "step");
    return 1;
}

/* A collective's row: the op by its name (others skipped), the message in
 * bytes and the ranks. */
static int row_comm(row_rd *r, calib_point *p, char *dt, size_t dtlen)
{
    calib_shape *s = &p->shape;
    const char *op = rs(r, "op_name");
    const char *cdt = calib_optable_has(r->t, "nccl_dtype") ? rs(r, "nccl_dtype") : rs(r, "allreduce_dtype");
    if (r->rc) return r->rc;
    if (strcmp(op, "all_reduce") == 0) p->op = CALIB_OP_ALLREDUCE;
    else if (strcmp(op, "all_gather") == 0) p->op = CALIB_OP_ALLGATHER;
    else if (strcmp(op, "reduce_scatter") == 0) p->op = CALIB_OP_REDUCE_SCATTER;
    else if (strcmp(op, "alltoall") == 0 || strcmp(op, "all_to_all") == 0) p->op = CALIB_OP_ALLTOALL;
    else return 0;
    snprintf(dt, dtlen, "%s", calib_ingest_dtype(cdt));
    s->bytes = message_bytes(rl(r, "message_size"), dt);
    s->ranks = rl(r, "num_gpus");
    return 1;
}

/* An MLA kernel's or a whole attention module's row; a module's kernel
 * name carries its model. */
static void row_mla_module(const table_desc *td, row_rd *r, calib_shape *s, const char *ks, char *kernel,
                           size_t klen, char *dt, size_t dtlen)
{
    int module = td->kind == TB_MODULE_CTX || td->kind == TB_MODULE_GEN;
    dtype_pair(dt, dtlen, rs(r, module ? "gemm_type" : "mla_dtype"), rs(r, "kv_cache_dtype"));
    s->batch = rl(r, "batch_size"), s->heads = rl(r, "num_heads");
    /* The kernels' num_heads are already one rank's heads (tp_size
     * only records the layout they came from); modules keep tp_size,
     * their projections depend on it. */
    long tp = rl(r, "tp_size");
    s->ranks = module ? tp : 0;
    if (td->kind == TB_MLA_CTX || td->kind == TB_MODULE_CTX) s->m = rl(r, "isl"), s->ctx = rl(r, "step");
    else s->ctx = rl(r, "isl") + rl(r, "step");
    if (module) {
        const char *model = rs(r, "model"), *slash = strrchr(model, '/');
        snprintf(kernel, klen, "%s@%s", ks, slash ? slash + 1 : model);
    }
}

/* An MLA batched-GEMM row: the pre or post BMM (others skipped). */
static int row_mla_bmm(row_rd *r, calib_point *p, char *dt, size_t dtlen)
{
    const char *op = rs(r, "op_name");
    if (strcmp(op, "mla_gen_pre") == 0) p->op = CALIB_OP_MLA_BMM_PRE;
    else if (strcmp(op, "mla_gen_post") == 0) p->op = CALIB_OP_MLA_BMM_POST;
    else return r->rc ? r->rc : 0;
    snprintf(dt, dtlen, "%s", calib_ingest_dtype(rs(r, "bmm_dtype")));
    p->shape.m = rl(r, "num_tokens"), p->shape.heads = rl(r, "num_heads");
    return 1;
}

/* A Gated DeltaNet row: two kernels per phase, the causal conv1d
 * (causal_conv1d_fn / _update) and the delta rule (chunk_… /
 * fused_recurrent_…). */
static int row_gdn(row_rd *r, calib_point *p, const char *ks, char *dt, size_t dtlen)
{
    calib_shape *s = &p->shape;
    const char *phase = rs(r, "phase");
    int conv = strstr(ks, "conv1d") != NULL;
    if (strcmp(phase, "context") == 0) p->op = conv ? CALIB_OP_GDN_CONV_PREFILL : CALIB_OP_GDN_PREFILL;
    else if (strcmp(phase, "generation") == 0) p->op = conv ? CALIB_OP_GDN_CONV_DECODE : CALIB_OP_GDN_DECODE;
    else return r->rc ? r->rc : 0;
    snprintf(dt, dtlen, "bf16");
    s->batch = rl(r, "batch_size"), s->m = rl(r, "num_tokens"), s->ctx = rl(r, "seq_len");
    s->n = rl(r, "d_model"), s->k = rl(r, "d_conv"), s->heads = rl(r, "num_v_heads");
    s->kv_heads = rl(r, "num_k_heads"), s->head_dim = rl(r, "head_v_dim"), s->groups = rl(r, "head_k_dim");
    return 1;
}

/* The row's latency (0.0 rows were not measured: skipped), dtype and
 * kernel name into p. */
static int row_latency(row_rd *r, const calib_optable_entry *e, calib_point *p, const char *dt, const char *kernel)
{
    double ms = 0;
    if (r->rc == 0) r->rc = calib_optable_double(r->t, "latency", &ms, r->err);
    if (r->rc) return r->rc;
    if (strlen(dt) >= sizeof p->dtype)
        return sim_err_set(r->err, SIM_EINVAL, "%s:%ld: dtype '%s' is longer than the %zu characters a perf-db point "
                           "holds", calib_optable_path(r->t), calib_optable_line(r->t), dt, sizeof p->dtype - 1);
    memcpy(p->dtype, dt, strlen(dt) + 1);
    /* Six significant digits: beyond the tables' timing resolution (CUDA
     * events, averaged), and a compact dump. */
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", ms * 1e-3);
    double sec = strtod(buf, NULL);
    if (!(sec >= CALIB_MIN_LATENCY_S && sec <= CALIB_MAX_LATENCY_S)) return 0; /* 0.0 rows: not measured */
    snprintf(p->kernel, sizeof p->kernel, "%s-%s:%s", e->backend, e->version, kernel);
    p->reps = 1;
    p->median_s = p->p10_s = p->p90_s = sec;
    p->tflops = p->gbps = p->frac_of_peak = p->check_err = NAN;
    return 1;
}

/* Fills p from the current row; 1 = a point, 0 = row skipped, < 0 error. */
static int row_point(const table_desc *td, const calib_optable_entry *e, calib_optable *t, calib_point *p,
                     sim_err *err)
{
    row_rd r = {t, err, 0};
    int got = 1;
    memset(p, 0, sizeof *p);
    p->op = td->op;
    const char *ks = rs(&r, "kernel_source");
    char kernel[sizeof p->kernel - 16]; /* room for "<backend>-<version>:" */
    snprintf(kernel, sizeof kernel, "%s", ks);
    calib_shape *s = &p->shape;
    char dt[64] = ""; /* the dtype, checked against the point's room below */
    switch (td->kind) {
    case TB_GEMM:
        snprintf(dt, sizeof dt, "%s", calib_ingest_dtype(rs(&r, "gemm_dtype")));
        s->m = rl(&r, "m"), s->n = rl(&r, "n"), s->k = rl(&r, "k");
        break;
    case TB_ATTN_CTX:
    case TB_ATTN_GEN: got = row_attn(td, &r, s, dt, sizeof dt); break;
    case TB_COMM: got = row_comm(&r, p, dt, sizeof dt); break;
    case TB_MOE:
        if (strcmp(rs(&r, "distribution"), "balanced") != 0) return r.rc ? r.rc : 0;
        snprintf(dt, sizeof dt, "%s", calib_ingest_dtype(rs(&r, "moe_dtype")));
        s->m = rl(&r, "num_tokens"), s->k = rl(&r, "hidden_size"), s->n = rl(&r, "inter_size");
        s->batch = rl(&r, "topk"), s->groups = rl(&r, "num_experts");
        s->ranks = rl(&r, "moe_ep_size"), s->heads = rl(&r, "moe_tp_size");
        break;
    case TB_MLA_CTX:
    case TB_MLA_GEN:
    case TB_MODULE_CTX:
    case TB_MODULE_GEN: row_mla_module(td, &r, s, ks, kernel, sizeof kernel, dt, sizeof dt); break;
    case TB_MLA_BMM: got = row_mla_bmm(&r, p, dt, sizeof dt); break;
    case TB_GDN: got = row_gdn(&r, p, ks, dt, sizeof dt); break;
    case TB_QUANT:
        snprintf(dt, sizeof dt, "%s", calib_ingest_dtype(rs(&r, "quant_dtype")));
        s->m = rl(&r, "m"), s->n = rl(&r, "k");
        break;
    }
    if (got != 1) return got;
    return row_latency(&r, e, p, dt, kernel);
}

/* Orders by op, dtype, shape, then latency: the first of a run is the fastest. */
static int fastest_cmp(const void *va, const void *vb)
{
    const calib_point *a = va, *b = vb;
    if (a->op != b->op) return a->op < b->op ? -1 : 1;
    int c = strcmp(a->dtype, b->dtype);
    if (c) return c;
    if ((c = calib_shape_cmp(&a->shape, &b->shape))) return c;
    if (a->median_s != b->median_s) return a->median_s < b->median_s ? -1 : 1;
    return strcmp(a->kernel, b->kernel);
}

static const table_desc *table_of(const char *name)
{
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (strcmp(tables[i].table, name) == 0) return &tables[i];
    return NULL;
}

static int ensure_gpu(ingest_ctx *x, const char *device, sim_err *err)
{
    if (x->gpu_id) {
        if (strcmp(device, x->device) != 0)
            return sim_err_set(err, SIM_EINVAL, "tables of one GPU name two devices: '%s' and '%s'", x->device, device);
        return SIM_OK;
    }
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "%s", device);
    snprintf(x->device, sizeof x->device, "%s", device);
    id.sms = x->o->sms;
    snprintf(id.cc, sizeof id.cc, "%s", x->o->cc ? x->o->cc : "");
    snprintf(id.driver, sizeof id.driver, "ingested");
    snprintf(id.backend, sizeof id.backend, "gpu");
    return calib_db_gpu_ensure(x->db, &id, &x->gpu_id, err);
}

static int visit(const calib_optable_entry *e, void *vctx, sim_err *err)
{
    ingest_ctx *x = vctx;
    const table_desc *td = table_of(e->table);
    if (!td) {
        x->st->tables_skipped++;
        if (x->o->log) fprintf(x->o->log, "skip  %s/%s-%s/%s: not a table servesim reads\n", e->family, e->backend,
                               e->version, e->table);
        return 0;
    }
    calib_optable *t = NULL;
    int rc = calib_optable_open(e->path, &t, err);
    if (rc < 0) return rc;
    x->n = 0;
    int64_t rows = 0, skipped = 0;
    while ((rc = calib_optable_next(t, err)) == 1) {
        rows++;
        if (!x->gpu_id) {
            const char *dev;
            if ((rc = calib_optable_str(t, "device", &dev, err)) < 0 || (rc = ensure_gpu(x, dev, err)) < 0) break;
        }
        calib_point p;
        int got = row_point(td, e, t, &p, err);
        if (got < 0) {
            rc = got;
            break;
        }
        if (!got || !in_list(x->o->ops, calib_op_name(p.op)) || !in_list(x->o->dtypes, p.dtype)) {
            skipped++;
            continue;
        }
        if (x->n == x->cap) {
            size_t nc = x->cap ? x->cap * 2 : 4096;
            calib_point *np = realloc(x->pts, nc * sizeof *np);
            if (!np) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory reading %s", e->path);
                break;
            }
            x->pts = np, x->cap = nc;
        }
        x->pts[x->n++] = p;
    }
    calib_optable_close(t);
    if (rc < 0) return rc;
    size_t n = x->n;
    if (x->o->fastest_only && n > 1) {
        qsort(x->pts, n, sizeof *x->pts, fastest_cmp);
        size_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (u == 0 || x->pts[u - 1].op != x->pts[i].op || strcmp(x->pts[u - 1].dtype, x->pts[i].dtype) != 0 ||
                calib_shape_cmp(&x->pts[u - 1].shape, &x->pts[i].shape) != 0)
                x->pts[u++] = x->pts[i];
        n = u;
    }
    int64_t added = 0;
    if (n > 0 && (rc = calib_db_points_insert(x->db, x->gpu_id, x->pts, n, &added, err)) < 0)
        return sim_err_wrap(err, rc, "%s", e->path);
    x->st->tables++;
    x->st->rows += rows;
    x->st->rows_skipped += skipped;
    x->st->points += (int64_t)n;
    x->st->added += added;
    if (x->o->log)
        fprintf(x->o->log, "read  %s/%s-%s/%s: %lld rows, %zu points (%lld new), %lld rows skipped\n", e->family,
                e->backend, e->version, e->table, (long long)rows, n, (long long)added, (long long)skipped);
    return 0;
}

int calib_ingest(calib_db *db, const char *root, const char *gpu, const calib_ingest_opts *o,
                 calib_ingest_stats *st, sim_err *err)
{
    calib_ingest_opts none = {0};
    calib_ingest_stats local;
    if (!o) o = &none;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    ingest_ctx x = {db, o, st, 0, "", NULL, 0, 0};
    size_t n = 0;
    int rc = calib_optable_walk(root, gpu, visit, &x, &n, err);
    free(x.pts);
    if (rc == 0 && st->tables == 0)
        rc = sim_err_set(err, SIM_EINVAL, "%s/%s: no per-op table servesim reads (%zu files looked at)", root, gpu, n);
    return rc;
}
