/* calib_grid — see calib_grid.h. Grids are cross products of per-axis
 * value lists, with a memory cap on the attention grids. */
#include "calib_grid.h"

#include <stdlib.h>
#include <string.h>

#define COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

typedef struct {
    calib_shape *v;
    int64_t n, cap;
} calib_list;

static int calib_list_push(calib_list *l, const calib_shape *s)
{
    if (l->n == l->cap) {
        int64_t nc = l->cap ? l->cap * 2 : 64;
        calib_shape *nv = realloc(l->v, (size_t)nc * sizeof *nv);
        if (!nv) return SIM_ENOMEM;
        l->v = nv, l->cap = nc;
    }
    l->v[l->n++] = *s;
    return 0;
}

int calib_grid_from_name(const char *name, calib_grid_kind *out, sim_err *err)
{
    if (strcmp(name, "tiny") == 0) *out = CALIB_GRID_TINY;
    else if (strcmp(name, "quick") == 0) *out = CALIB_GRID_QUICK;
    else if (strcmp(name, "full") == 0) *out = CALIB_GRID_FULL;
    else return sim_err_set(err, SIM_EINVAL, "unknown grid '%s' (tiny, quick or full)", name);
    return 0;
}

const char *calib_grid_name(calib_grid_kind g)
{
    return g == CALIB_GRID_TINY ? "tiny" : g == CALIB_GRID_QUICK ? "quick" : "full";
}

/* GEMM n×k pairs: square, QKV-like (wide n), down-projection-like (wide k),
 * gate_up-like (very wide n). */
static const int64_t gemm_nk_quick[][2] = {{4096, 4096}, {12288, 4096}, {4096, 12288}, {28672, 4096}};
static const int64_t gemm_nk_full[][2] = {{1024, 1024}, {4096, 4096}, {6144, 4096}, {12288, 4096},
                                          {4096, 12288}, {28672, 4096}, {4096, 14336}, {8192, 8192},
                                          {7168, 2048}, {4096, 7168}, {24576, 7168}, {7168, 16384}};

static int grid_gemm(calib_grid_kind g, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (g == CALIB_GRID_TINY) {
        static const int64_t ms[] = {1, 16, 64}, ns[] = {64, 128}, ks[] = {128, 256};
        for (int32_t a = 0; a < COUNT(ms); a++)
            for (int32_t b = 0; b < COUNT(ns); b++)
                for (int32_t c = 0; c < COUNT(ks) && !rc; c++) s.m = ms[a], s.n = ns[b], s.k = ks[c], rc = calib_list_push(l, &s);
        return rc;
    }
    static const int64_t mq[] = {1, 16, 64, 256, 1024, 4096, 8192};
    static const int64_t mf[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
    const int64_t *ms = g == CALIB_GRID_QUICK ? mq : mf;
    int32_t nm = g == CALIB_GRID_QUICK ? COUNT(mq) : COUNT(mf);
    const int64_t(*nk)[2] = g == CALIB_GRID_QUICK ? gemm_nk_quick : gemm_nk_full;
    int32_t nnk = g == CALIB_GRID_QUICK ? COUNT(gemm_nk_quick) : COUNT(gemm_nk_full);
    for (int32_t p = 0; p < nnk; p++)
        for (int32_t a = 0; a < nm && !rc; a++) s.m = ms[a], s.n = nk[p][0], s.k = nk[p][1], rc = calib_list_push(l, &s);
    return rc;
}

static int grid_grouped(calib_grid_kind g, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (g == CALIB_GRID_TINY) {
        static const int64_t ms[] = {4, 16};
        for (int32_t a = 0; a < COUNT(ms) && !rc; a++) s.groups = 4, s.m = ms[a], s.n = 64, s.k = 128, rc = calib_list_push(l, &s);
        return rc;
    }
    /* DeepSeek-V3-like expert shapes: gate_up (n 4096, k 7168), down (7168, 2048). */
    static const int64_t gq[] = {8, 32}, gf[] = {4, 8, 16, 32, 64, 128};
    static const int64_t mq[] = {8, 64, 512}, mf[] = {1, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};
    static const int64_t nk[][2] = {{4096, 7168}, {7168, 2048}};
    const int64_t *gs = g == CALIB_GRID_QUICK ? gq : gf, *ms = g == CALIB_GRID_QUICK ? mq : mf;
    int32_t ng = g == CALIB_GRID_QUICK ? COUNT(gq) : COUNT(gf), nm = g == CALIB_GRID_QUICK ? COUNT(mq) : COUNT(mf);
    for (int32_t p = 0; p < COUNT(nk); p++)
        for (int32_t a = 0; a < ng; a++)
            for (int32_t b = 0; b < nm && !rc; b++) {
                if (gs[a] * ms[b] > 65536) continue; /* tokens × top-k per rank beyond any batch */
                s.groups = gs[a], s.m = ms[b], s.n = nk[p][0], s.k = nk[p][1];
                rc = calib_list_push(l, &s);
            }
    return rc;
}

/* (heads, kv_heads, head_dim): Llama-8B-like, 70B-like per TP-1, MHA. */
static const int64_t attn_heads_quick[][3] = {{32, 8, 128}};
static const int64_t attn_heads_full[][3] = {{32, 8, 128}, {64, 8, 128}, {8, 1, 128}, {16, 16, 64}, {32, 32, 128}};

static int grid_attn(calib_grid_kind g, calib_op op, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (g == CALIB_GRID_TINY) {
        s.heads = 8, s.kv_heads = 2, s.head_dim = 64;
        static const int64_t a1[] = {1, 4}, a2[] = {16, 64}, c2[] = {0, 64}, cd[] = {64, 256};
        for (int32_t i = 0; i < 2; i++)
            for (int32_t j = 0; j < 2 && !rc; j++) {
                if (op == CALIB_OP_ATTN_PREFILL) s.batch = 1, s.m = a2[i], s.ctx = c2[j];
                else s.batch = a1[i], s.ctx = cd[j];
                rc = calib_list_push(l, &s);
            }
        return rc;
    }
    const int64_t(*hs)[3] = g == CALIB_GRID_QUICK ? attn_heads_quick : attn_heads_full;
    int32_t nh = g == CALIB_GRID_QUICK ? COUNT(attn_heads_quick) : COUNT(attn_heads_full);
    for (int32_t h = 0; h < nh && !rc; h++) {
        s.heads = hs[h][0], s.kv_heads = hs[h][1], s.head_dim = hs[h][2];
        if (op == CALIB_OP_ATTN_PREFILL) {
            static const int64_t mq[] = {128, 512, 2048, 8192}, mf[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
            static const int64_t cq[] = {0, 4096}, cf[] = {0, 1024, 4096, 16384, 65536};
            const int64_t *ms = g == CALIB_GRID_QUICK ? mq : mf, *cs = g == CALIB_GRID_QUICK ? cq : cf;
            int32_t nm = g == CALIB_GRID_QUICK ? COUNT(mq) : COUNT(mf), nc = g == CALIB_GRID_QUICK ? COUNT(cq) : COUNT(cf);
            for (int32_t a = 0; a < nm; a++)
                for (int32_t c = 0; c < nc && !rc; c++) {
                    s.batch = 1, s.m = ms[a], s.ctx = cs[c];
                    rc = calib_list_push(l, &s);
                }
        } else {
            static const int64_t bq[] = {1, 8, 32, 128}, bf[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
            static const int64_t cq[] = {512, 2048, 8192, 32768}, cf[] = {128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 131072};
            const int64_t *bs = g == CALIB_GRID_QUICK ? bq : bf, *cs = g == CALIB_GRID_QUICK ? cq : cf;
            int32_t nb = g == CALIB_GRID_QUICK ? COUNT(bq) : COUNT(bf), nc = g == CALIB_GRID_QUICK ? COUNT(cq) : COUNT(cf);
            for (int32_t a = 0; a < nb; a++)
                for (int32_t c = 0; c < nc && !rc; c++) {
                    /* Cap the KV cache at 2^20 tokens per point (≈ 4 GB at
                     * 8 KV heads × 128 × bf16 × K and V). */
                    if (bs[a] * cs[c] > (1 << 20)) continue;
                    s.batch = bs[a], s.ctx = cs[c];
                    rc = calib_list_push(l, &s);
                }
        }
    }
    return rc;
}

static int grid_rows(calib_grid_kind g, calib_op op, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (op == CALIB_OP_LSE_MERGE) {
        static const int64_t mt[] = {64}, mq[] = {32, 256, 4096}, mf[] = {8, 32, 128, 512, 2048, 8192, 32768};
        static const int64_t rt[] = {2, 4}, rq[] = {2, 8, 32}, rf[] = {2, 4, 8, 16, 32, 64};
        const int64_t *ms = g == CALIB_GRID_TINY ? mt : g == CALIB_GRID_QUICK ? mq : mf;
        const int64_t *rs = g == CALIB_GRID_TINY ? rt : g == CALIB_GRID_QUICK ? rq : rf;
        int32_t nm = g == CALIB_GRID_TINY ? COUNT(mt) : g == CALIB_GRID_QUICK ? COUNT(mq) : COUNT(mf);
        int32_t nr = g == CALIB_GRID_TINY ? COUNT(rt) : g == CALIB_GRID_QUICK ? COUNT(rq) : COUNT(rf);
        for (int32_t a = 0; a < nm; a++)
            for (int32_t b = 0; b < nr && !rc; b++) {
                s.m = ms[a], s.ranks = rs[b], s.head_dim = g == CALIB_GRID_TINY ? 64 : 128;
                rc = calib_list_push(l, &s);
            }
        return rc;
    }
    static const int64_t mt[] = {4, 16}, nt[] = {256, 1024};
    static const int64_t mq[] = {1, 64, 1024, 8192}, nq[] = {4096, 8192};
    static const int64_t mf[] = {1, 4, 16, 64, 256, 1024, 4096, 16384}, nf[] = {1024, 2048, 4096, 7168, 8192, 16384};
    const int64_t *ms = g == CALIB_GRID_TINY ? mt : g == CALIB_GRID_QUICK ? mq : mf;
    const int64_t *ns = g == CALIB_GRID_TINY ? nt : g == CALIB_GRID_QUICK ? nq : nf;
    int32_t nm = g == CALIB_GRID_TINY ? COUNT(mt) : g == CALIB_GRID_QUICK ? COUNT(mq) : COUNT(mf);
    int32_t nn = g == CALIB_GRID_TINY ? COUNT(nt) : g == CALIB_GRID_QUICK ? COUNT(nq) : COUNT(nf);
    for (int32_t a = 0; a < nm; a++)
        for (int32_t b = 0; b < nn && !rc; b++) s.m = ms[a], s.n = ns[b], rc = calib_list_push(l, &s);
    return rc;
}

static int grid_bytes(calib_grid_kind g, calib_op op, int32_t ranks, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (op == CALIB_OP_ALLREDUCE && ranks < 1) return 0;
    int64_t lo = g == CALIB_GRID_TINY ? 1 << 16 : 1 << 10, hi = g == CALIB_GRID_TINY ? 1 << 20 : 1 << 30;
    int step = g == CALIB_GRID_FULL ? 1 : 2; /* powers of 2 (full) or of 4 */
    if (op == CALIB_OP_COPY && g != CALIB_GRID_TINY) lo = 1 << 16;
    for (int64_t b = lo; b <= hi && !rc; b <<= step) {
        s.bytes = b, s.ranks = op == CALIB_OP_ALLREDUCE ? ranks : 0;
        rc = calib_list_push(l, &s);
    }
    return rc;
}

int calib_grid_build(calib_grid_kind g, calib_op op, int32_t ranks, calib_shape **shapes, int64_t *n, sim_err *err)
{
    calib_list l = {0};
    int rc;
    switch (op) {
    case CALIB_OP_GEMM: rc = grid_gemm(g, &l); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: rc = grid_grouped(g, &l); break;
    case CALIB_OP_ATTN_PREFILL:
    case CALIB_OP_ATTN_DECODE: rc = grid_attn(g, op, &l); break;
    case CALIB_OP_LSE_MERGE:
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM:
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: rc = grid_rows(g, op, &l); break;
    case CALIB_OP_COPY:
    case CALIB_OP_ALLREDUCE: rc = grid_bytes(g, op, ranks, &l); break;
    default: return sim_err_set(err, SIM_EINVAL, "no grid for op %d", (int)op);
    }
    if (rc) {
        free(l.v);
        return sim_err_set(err, rc, "out of memory building the %s grid of %s", calib_grid_name(g), calib_op_name(op));
    }
    *shapes = l.v;
    *n = l.n;
    return 0;
}

void calib_grid_check_shape(calib_op op, calib_shape *s)
{
    memset(s, 0, sizeof *s);
    switch (op) {
    case CALIB_OP_GEMM: s->m = 77, s->n = 264, s->k = 384; break; /* partial tiles in m and n */
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: s->groups = 5, s->m = 37, s->n = 136, s->k = 256; break;
    case CALIB_OP_ATTN_PREFILL: s->batch = 2, s->m = 45, s->ctx = 70, s->heads = 8, s->kv_heads = 2, s->head_dim = 64; break;
    case CALIB_OP_ATTN_DECODE: s->batch = 3, s->ctx = 300, s->heads = 8, s->kv_heads = 2, s->head_dim = 128; break;
    case CALIB_OP_LSE_MERGE: s->m = 50, s->head_dim = 128, s->ranks = 5; break;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM: s->m = 33, s->n = 1000; break;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: s->m = 9, s->n = 512; break;
    case CALIB_OP_COPY: s->bytes = 1 << 20; break;
    case CALIB_OP_ALLREDUCE: s->bytes = 1 << 20, s->ranks = 1; break;
    default: break;
    }
}
