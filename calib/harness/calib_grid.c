/* calib_grid — see calib_grid.h. Grids are cross products of per-axis
 * value lists, with a memory cap on the attention grids. */
#include "calib_grid.h"

#include <stdio.h>
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

/* Grouped GEMMs: every point at the balanced routing and at Zipf-skewed
 * ones (skew_milli: s = 1 on quick, 1 and 1.5 on full), both layouts
 * alike, so the two differ as in engines: contiguous packs the hot
 * expert's rows, masked runs each expert's slot and skips what is empty.
 * Tiny times one skewed point beside its two balanced ones. */
static int grid_grouped(calib_grid_kind g, calib_list *l)
{
    calib_shape s = {0};
    int rc = 0;
    if (g == CALIB_GRID_TINY) {
        static const int64_t ms[] = {4, 16, 16}, sk[] = {0, 0, 1000};
        for (int32_t a = 0; a < COUNT(ms) && !rc; a++)
            s.groups = 4, s.m = ms[a], s.n = 64, s.k = 128, s.skew_milli = sk[a], rc = calib_list_push(l, &s);
        return rc;
    }
    /* DeepSeek-V3-like expert shapes: gate_up (n 4096, k 7168), down (7168, 2048). */
    static const int64_t gq[] = {8, 32}, gf[] = {4, 8, 16, 32, 64, 128};
    static const int64_t mq[] = {8, 64, 512}, mf[] = {1, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};
    static const int64_t skq[] = {0, 1000}, skf[] = {0, 1000, 1500};
    static const int64_t nk[][2] = {{4096, 7168}, {7168, 2048}};
    const int quick = g == CALIB_GRID_QUICK;
    const int64_t *gs = quick ? gq : gf, *ms = quick ? mq : mf, *sks = quick ? skq : skf;
    int32_t ng = quick ? COUNT(gq) : COUNT(gf), nm = quick ? COUNT(mq) : COUNT(mf);
    int32_t nsk = quick ? COUNT(skq) : COUNT(skf);
    for (int32_t p = 0; p < COUNT(nk); p++)
        for (int32_t a = 0; a < ng; a++)
            for (int32_t b = 0; b < nm; b++)
                for (int32_t c = 0; c < nsk && !rc; c++) {
                    if (gs[a] * ms[b] > 65536) continue; /* tokens × top-k per rank beyond any batch */
                    s.groups = gs[a], s.m = ms[b], s.n = nk[p][0], s.k = nk[p][1], s.skew_milli = sks[c];
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
    const int coll = op != CALIB_OP_COPY;
    if (coll && ranks < 1) return 0;
    int64_t lo = g == CALIB_GRID_TINY ? 1 << 16 : 1 << 10, hi = g == CALIB_GRID_TINY ? 1 << 20 : 1 << 30;
    int step = g == CALIB_GRID_FULL ? 1 : 2; /* powers of 2 (full) or of 4 */
    if (op == CALIB_OP_COPY && g != CALIB_GRID_TINY) lo = 1 << 16;
    for (int64_t b = lo; b <= hi && !rc; b <<= step) {
        s.bytes = b, s.ranks = coll ? ranks : 0;
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
    case CALIB_OP_ALLREDUCE:
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL: rc = grid_bytes(g, op, ranks, &l); break;
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

/* Check cases. Small enough for the CPU references to be instant, and
 * each built to hit one edge (see calib_grid.h). */
#define CASE_GEMM(m_, n_, k_, what_) {{.m = m_, .n = n_, .k = k_}, CALIB_LAYOUT_TIMED, what_}
static const calib_check_case cases_gemm[] = {
    CASE_GEMM(77, 264, 384, "partial M and N tiles"),
    CASE_GEMM(1, 136, 200, "M = 1, K tail (K % 32 = 8)"),
    CASE_GEMM(130, 128, 1024, "one row past a tile, long K"),
    CASE_GEMM(40, 264, 2176, "skinny M, K split unevenly (8 splits of 34 slabs with 24+ SMs)"),
    CASE_GEMM(1100, 4096, 64, "more output tiles than SMs (144 of 128x256): persistent CTAs take several"),
    CASE_GEMM(1100, 1928, 128, "the fp8 rungs: more tiles than SMs (144 of 128x128, partial M and N); the ring's "
                               "stages carry on into a CTA's second tile"),
};
#define CASE_GROUPED(e_, m_, n_, k_, lay_, what_) {{.groups = e_, .m = m_, .n = n_, .k = k_}, lay_, what_}
#define CASE_SKEWED(e_, m_, n_, k_, sk_, what_)                                                                   \
    {{.groups = e_, .m = m_, .n = n_, .k = k_, .skew_milli = sk_}, CALIB_LAYOUT_TIMED, what_}
/* Both layouts: more work items than SMs, so persistent CTAs move on. */
#define CASE_GROUPED_PERSISTENT                                                                                    \
    CASE_GROUPED(48, 20, 1032, 136, CALIB_LAYOUT_TIMED,                                                           \
                 "more work items than SMs (240 of 128x256): persistent CTAs take tiles of several experts, the "  \
                 "ring's stages carry across them")
static const calib_check_case cases_contig[] = {
    CASE_GROUPED(5, 37, 136, 256, CALIB_LAYOUT_TIMED, "unequal groups as timed, partial tiles"),
    CASE_GROUPED(6, 20, 64, 200, CALIB_LAYOUT_EMPTY_GROUP, "an expert with no rows, K tail"),
    CASE_SKEWED(8, 100, 136, 256, 1000,
                "Zipf-skewed routing (s = 1), as timed: a hot expert over 3 tiles off the tile grid, cold ones partial"),
    CASE_SKEWED(16, 3, 64, 136, 1500, "Zipf s = 1.5 over few rows: cold experts left empty"),
    CASE_GROUPED_PERSISTENT,
};
static const calib_check_case cases_masked[] = {
    CASE_GROUPED(5, 37, 136, 256, CALIB_LAYOUT_TIMED, "every expert at its cap, as timed"),
    CASE_GROUPED(6, 40, 64, 256, CALIB_LAYOUT_MASKED_PARTIAL, "counts below the cap, an empty expert"),
    CASE_GROUPED(3, 130, 64, 200, CALIB_LAYOUT_MASKED_PARTIAL, "counts below a cap past one tile, K tail"),
    CASE_SKEWED(6, 300, 64, 136, 1000,
                "Zipf-skewed counts (s = 1), as timed: the hot expert's slot of 6 tiles full, the rest partial"),
    CASE_SKEWED(16, 3, 64, 136, 1500, "Zipf s = 1.5 over few rows: cold experts' slots empty"),
    CASE_GROUPED_PERSISTENT,
};
#define CASE_ATTN(b_, m_, c_, h_, kv_, d_, what_)                                                                \
    {{.batch = b_, .m = m_, .ctx = c_, .heads = h_, .kv_heads = kv_, .head_dim = d_}, CALIB_LAYOUT_TIMED, what_}
static const calib_check_case cases_prefill[] = {
    CASE_ATTN(2, 45, 0, 8, 2, 64, "d=64 group=4, no prefix"),
    CASE_ATTN(2, 45, 70, 8, 2, 64, "d=64 group=4, cached prefix"),
    CASE_ATTN(2, 40, 0, 8, 2, 128, "d=128 group=4, no prefix"),
    CASE_ATTN(1, 37, 50, 8, 2, 128, "d=128 group=4, cached prefix"),
    CASE_ATTN(1, 33, 0, 16, 2, 128, "d=128 group=8, no prefix"),
    CASE_ATTN(1, 19, 40, 8, 1, 128, "d=128 group=8, cached prefix"),
    CASE_ATTN(1, 35, 0, 4, 4, 64, "d=64 group=1 (MHA), no prefix"),
    CASE_ATTN(2, 20, 33, 4, 4, 64, "d=64 group=1 (MHA), cached prefix"),
    CASE_ATTN(1, 35, 0, 4, 4, 128, "d=128 group=1 (MHA), no prefix"),
    CASE_ATTN(1, 21, 45, 2, 2, 128, "d=128 group=1 (MHA), cached prefix"),
    /* The tensor-core prefill's tiles (64 query rows, 64 keys): */
    CASE_ATTN(1, 150, 0, 4, 1, 128, "d=128 group=4, two whole 64-row query tiles and a partial one, partial last KV tile"),
    CASE_ATTN(1, 100, 37, 4, 1, 64, "d=64 group=4, a prefix off the 64-key grid (the diagonal crosses two KV tiles)"),
    CASE_ATTN(1, 64, 200, 2, 2, 64, "d=64 group=1, one whole query tile behind 200 cached keys (unmasked KV tiles)"),
    CASE_ATTN(2, 130, 70, 8, 1, 64, "d=64 group=8, query tiles 64+64+2 after a cached prefix"),
    /* The Hopper prefill's tiles (128 query rows, 128 keys): */
    CASE_ATTN(1, 300, 100, 8, 2, 128,
              "d=128 group=4, query tiles 128+128+44 after a prefix off the 128-key grid (the diagonal crosses two KV tiles)"),
    CASE_ATTN(2, 140, 0, 4, 1, 64, "d=64 group=4, query tiles 128+12, partial last KV tile"),
};
#define CASE_DEC(b_, c_, h_, kv_, d_, what_)                                                                     \
    {{.batch = b_, .ctx = c_, .heads = h_, .kv_heads = kv_, .head_dim = d_}, CALIB_LAYOUT_TIMED, what_}
static const calib_check_case cases_decode[] = {
    CASE_DEC(3, 300, 8, 2, 128, "d=128 group=4, partial last page"),
    CASE_DEC(2, 70, 8, 2, 64, "d=64 group=4, 5 pages (empty splits at 4 splits)"),
    CASE_DEC(1, 1040, 8, 1, 128, "d=128 group=8, 65 pages (empty splits at 34-64 splits)"),
    CASE_DEC(2, 100, 4, 4, 64, "d=64 group=1 (MHA)"),
    CASE_DEC(2, 129, 4, 4, 128, "d=128 group=1 (MHA)"),
    CASE_DEC(1, 600, 16, 1, 64, "d=64 group=16 (all 16 mma rows), 2 splits of partial 64-key tiles (tensor-core plan)"),
};
static const calib_check_case cases_lse[] = {
    {{.m = 50, .head_dim = 128, .ranks = 5}, CALIB_LAYOUT_TIMED, "5 partials"},
    {{.m = 40, .head_dim = 64, .ranks = 3}, CALIB_LAYOUT_NEG_INF_LSE, "-inf partials, one row all -inf"},
    {{.m = 7, .head_dim = 128, .ranks = 40}, CALIB_LAYOUT_TIMED, "more partials than lanes"},
};
static const calib_check_case cases_rows[] = {
    {{.m = 33, .n = 1000}, CALIB_LAYOUT_TIMED, "columns not a multiple of 32"},
    {{.m = 5, .n = 20}, CALIB_LAYOUT_TIMED, "rows shorter than a warp"},
    {{.m = 9, .n = 1024}, CALIB_LAYOUT_TIMED, "the longest row a warp holds in registers (8 float4 per lane)"},
    {{.m = 4, .n = 1030}, CALIB_LAYOUT_TIMED, "columns not a multiple of 4 (the looping kernels)"},
    {{.m = 3, .n = 4096}, CALIB_LAYOUT_TIMED, "the longest row 256 threads hold (4 float4 each; the block kernel)"},
    {{.m = 2, .n = 9000}, CALIB_LAYOUT_TIMED, "a partial last vector sweep of 512 threads × 8 float4"},
    {{.m = 2, .n = 32768}, CALIB_LAYOUT_TIMED, "the longest row held in registers (512 threads × 16 float4)"},
    {{.m = 1, .n = 40000}, CALIB_LAYOUT_TIMED, "beyond the registers: the block kernel's two-read version"},
};
static const calib_check_case cases_rmsnorm[] = {
    {{.m = 33, .n = 1000}, CALIB_LAYOUT_TIMED, "columns not a multiple of the block (a warp per row, partial vectors)"},
    {{.m = 2, .n = 7168}, CALIB_LAYOUT_TIMED, "long rows (a CTA per row)"},
    {{.m = 5, .n = 1001}, CALIB_LAYOUT_TIMED, "columns not a multiple of 8 (the scalar kernel)"},
    {{.m = 11, .n = 4096}, CALIB_LAYOUT_TIMED, "a warp per row holding 16 vectors per lane, a partial CTA of rows"},
    {{.m = 1, .n = 16384}, CALIB_LAYOUT_TIMED, "the widest row held in registers (8 vectors per thread)"},
};
static const calib_check_case cases_quant[] = {
    {{.m = 9, .n = 512}, CALIB_LAYOUT_TIMED, "magnitudes over 2^-8..2^8"},
    {{.m = 1, .n = 7168}, CALIB_LAYOUT_TIMED, "one long row"},
};
static const calib_check_case cases_copy[] = {
    {{.bytes = 1 << 20}, CALIB_LAYOUT_TIMED, "1 MiB"},
    {{.bytes = 1000003}, CALIB_LAYOUT_TIMED, "an odd byte count"},
};

int32_t calib_check_cases(calib_op op, const calib_check_case **cases)
{
#define CASES(a) (*cases = (a), (int32_t)(sizeof(a) / sizeof((a)[0])))
    switch (op) {
    case CALIB_OP_GEMM: return CASES(cases_gemm);
    case CALIB_OP_GROUPED_CONTIG: return CASES(cases_contig);
    case CALIB_OP_GROUPED_MASKED: return CASES(cases_masked);
    case CALIB_OP_ATTN_PREFILL: return CASES(cases_prefill);
    case CALIB_OP_ATTN_DECODE: return CASES(cases_decode);
    case CALIB_OP_LSE_MERGE: return CASES(cases_lse);
    case CALIB_OP_SOFTMAX: return CASES(cases_rows);
    case CALIB_OP_RMSNORM: return CASES(cases_rmsnorm);
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: return CASES(cases_quant);
    case CALIB_OP_COPY: return CASES(cases_copy);
    default: *cases = NULL; return 0; /* the NCCL collectives: a library, not checked */
    }
#undef CASES
}

void calib_variant(calib_op op, const calib_shape *s, char *buf, size_t len)
{
    buf[0] = '\0';
    if (op == CALIB_OP_GROUPED_CONTIG || op == CALIB_OP_GROUPED_MASKED) {
        snprintf(buf, len, "%s", s->skew_milli > 0 ? "skewed routing" : "balanced routing");
        return;
    }
    if (op != CALIB_OP_ATTN_PREFILL && op != CALIB_OP_ATTN_DECODE) return;
    int64_t group = s->kv_heads > 0 ? s->heads / s->kv_heads : 0;
    snprintf(buf, len, "d=%lld group=%lld%s", (long long)s->head_dim, (long long)group,
             op == CALIB_OP_ATTN_PREFILL ? (s->ctx > 0 ? " cached" : " no-prefix") : "");
}
