/* test_splitk — split-K / stream-K for skinny GEMMs priced with its
 * reduction (fewer 128-wide output tiles than SMs), in the op model's GEMM
 * and in the cost model's roofline (no engine named), which share
 * model_gemm_split_pick.
 *
 * Each of s splits writes an fp32 partial tile (m×n×4 bytes) and the
 * reduction reads them all back: 2·s·m·n·4 more bytes of HBM traffic; the
 * kernel takes the fastest s of 1, 2, 4, … up to the splits that fill the
 * SMs (at least 256 k each). Checked against the hand calculation with unit
 * efficiencies and no floors on H100 (132 SMs, 989 TFLOP/s bf16, 3.35 TB/s,
 * the op model's HBM copy rate set to that datasheet rate for the hand):
 * a decode-sized GEMM whose partials are small against its weights still
 * splits 16 ways and pays about 12 %; one whose partials rival its
 * weights nearly doubles. The roofline (128×128 tiles, max of compute and
 * memory, the catalogue's efficiencies, half the launch floor per kernel
 * in a decode-only iteration) is checked the same way on Llama-3.1-8B's
 * decode GEMMs at 30 sequences. */
#include "model_catalog.h"
#include "model_cost.h"
#include "model_gemm_split.h"
#include "model_gemm_split_memo.h"
#include "model_op.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>
#include <string.h>

static double smax3(double a, double b) { return cbrt(a * a * a + b * b * b); }

/* The hand calculation: 16-row tiles (m ≤ 16) or 64-row (m ≤ 64), 128 wide. */
static double hand(const model_gpu *g, double m, double n, double k, double s, int reduce)
{
    double tm = m > 32 ? 64 : m > 16 ? 32 : 16;
    double tiles = ceil(m / tm) * ceil(n / 128), par = tiles * s / g->sms;
    double tc = 2.0 * ceil(m / tm) * tm * n * k / (g->flops_bf16 * par);
    double bytes = n * k * 2 + m * k * 2 + m * n * 2 + (reduce && s > 1 ? s * m * n * 4 * 2 : 0);
    return smax3(tc, bytes / (g->hbm_bw * sqrt(par)));
}

/* The fastest of hand()'s times with reduction over 1, 2, 4 … smax
 * splits (the first on a tie); *s_out gets its split count. */
static double hand_best(const model_gpu *g, double m, double n, double k, double smax, double *s_out)
{
    double best = -1;
    for (double s = 1; s <= smax; s *= 2) {
        double t = hand(g, m, n, k, s, 1);
        if (best < 0 || t < best) best = t, *s_out = s;
    }
    return best;
}

/* The op model's bf16 GEMM with unit efficiencies, no floors, and the
 * kernel limits given: cta_bw (× HBM/SMs, 0 = unbounded), split_max (0 =
 * no cap), split_us. */
static double priced_lim(const model_gpu *g, double m, double n, double k, double cta_bw, double split_max,
                         double split_us)
{
    model_op_query q;
    memset(&q, 0, sizeof q);
    q.kind = MODEL_OPK_GEMM;
    q.f[MODEL_OPF_M] = m, q.f[MODEL_OPF_N] = n, q.f[MODEL_OPF_K] = k;
    strcpy(q.dtype, "bfloat16");
    strcpy(q.variant, "fused_quant");
    /* floor, eff_tc, eff_mem, k_fill, quant_us, quant_mem, cta_bw, split_max, split_us */
    const double p[MODEL_OP_MAX_PARAMS] = {0, 1, 1, 0, 0, 1, cta_bw, split_max, split_us};
    sim_err e = {{0}};
    double t = model_op_time(g, &q, p, &e);
    CHECK_MSG(t > 0, "%s", e.msg);
    return t;
}

static double priced(const model_gpu *g, double m, double n, double k) { return priced_lim(g, m, n, k, 0, 0, 0); }

/* The roofline's hand calculation of one m×n×k bf16 GEMM with fewer
 * 128×128 tiles than SMs: the fastest s of 1, 2, 4, … up to the splits
 * that fill the SMs (≥ 256 k each); *s_out its split count, *bytes_out its
 * traffic with the partials, *ideal the old ideal split-K time. */
static double roof_hand(const model_gpu *g, double m, double n, double k, double *s_out, double *bytes_out,
                        double *ideal)
{
    const double peak = g->flops_bf16 * g->eff_gemm, bw = g->hbm_bw * g->eff_mem;
    double tiles = ceil(m / 128) * ceil(n / 128), fl = 2.0 * m * n * k;
    double by = n * k * 2 + m * k * 2 + m * n * 2, partial = 2.0 * m * n * 4;
    double smax_k = floor(g->sms / tiles);
    if (smax_k > floor(k / 256)) smax_k = floor(k / 256);
    *ideal = fmax(fl / peak, by / bw);
    double best = -1;
    for (double s = 1; s <= smax_k; s *= 2) {
        double par = tiles * s / g->sms, b = by + (s > 1 ? s * partial : 0);
        double t = fmax(fl / (peak * par), b / (bw * sqrt(par)));
        if (best < 0 || t < best) best = t, *s_out = s, *bytes_out = b;
        if (s * 2 > smax_k && s < smax_k) s = smax_k / 2; /* the last try: the most that fit */
    }
    return best;
}

/* No engine named: Llama-3.1-8B on one H100, 30 decode sequences of 1200
 * tokens, priced by the roofline alone. */
static void test_roofline(const model_gpu *g)
{
    model_spec m;
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    model_cost *c = NULL;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_model("llama-3.1-8b", &m, &e) == 0 && model_cost_create(&m, g, &l, &c, &e) == 0, return);
    model_op ops[128];
    int32_t n = 0;
    model_batch b = {0, NULL, 30, 30 * 1200, 0};
    model_cost_breakdown(c, &b, ops, 128, &n, NULL);
    /* qkv_proj 48 tiles: 1 or 2 splits; o_proj and down_proj 32 tiles: up
     * to 4. Hand: the splits each takes, and its cost over ideal split-K. */
    const struct {
        const char *name;
        double n, k, s;
    } want[] = {{"qkv_proj", 6144, 4096, 2}, {"o_proj", 4096, 4096, 4}, {"down_proj", 4096, 14336, 4}};
    for (int i = 0; i < 3; i++) {
        const model_op *o = test_find_op(ops, n, want[i].name);
        REQUIRE_OR(o != NULL, continue);
        double s = 0, by = 0, ideal = 0, t = roof_hand(g, 30, want[i].n, want[i].k, &s, &by, &ideal);
        double t_op = 32 * (t + 0.5 * g->launch_s), t_ideal = 32 * (ideal + 0.5 * g->launch_s);
        printf("roofline %s m=30 n=%g k=%g: %.1f us (hand %.1f us, %g splits), ideal split-K %.1f us: +%.1f %%\n",
               want[i].name, want[i].n, want[i].k, o->time_s * 1e6, t_op * 1e6, s, t_ideal * 1e6,
               100 * (o->time_s / t_ideal - 1));
        CHECK(o->source == MODEL_SRC_ROOFLINE && o->count == 32);
        CHECK(s == want[i].s);
        CHECK_NEAR(o->time_s, t_op, 1e-9 * t_op);
        CHECK_NEAR(o->bytes, 32 * by, 1e-9 * 32 * by); /* the partials are in the op's traffic */
        CHECK(o->time_s > t_ideal * 1.04);
    }
    /* gate_up_proj (224 tiles) fills the SMs: no split, no partials. */
    const model_op *gu = test_find_op(ops, n, "gate_up_proj");
    REQUIRE_OR(gu != NULL, goto out);
    {
        double by = 28672.0 * 4096 * 2 + 30.0 * 4096 * 2 + 30.0 * 28672 * 2;
        CHECK_NEAR(gu->bytes, 32 * by, 1e-9 * 32 * by);
    }
out:
    model_cost_destroy(c);
}

static void case_h100_sms(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    CHECK(g.sms == 132);
}

static void case_decode(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    g.hbm_copy_bw = g.hbm_bw; /* the hand calculation's unit eff_mem: of the datasheet rate */
    /* Decode: m = 16, n = 1024, k = 8192: 8 tiles, up to 16 splits. The
     * 16 partials are 16 × 131 kB = 2.1 MB against 16.8 MB of weights. */
    double best_s = 0, best = hand_best(&g, 16, 1024, 8192, 16, &best_s);
    double t = priced(&g, 16, 1024, 8192), ideal = hand(&g, 16, 1024, 8192, 16, 0);
    printf("m=16 n=1024 k=8192: %.2f us (hand %.2f us at %g splits), ideal split-K %.2f us: +%.1f %%\n", t * 1e6,
           best * 1e6, best_s, ideal * 1e6, 100 * (t / ideal - 1));
    CHECK_NEAR(t, best, 1e-9 * best);
    CHECK(best_s == 16);
    CHECK(t > ideal * 1.05 && t < ideal * 1.20); /* the reduction's bytes: +12.5 % of the traffic */
}

static void case_wide_skinny(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    g.hbm_copy_bw = g.hbm_bw; /* the hand calculation's unit eff_mem: of the datasheet rate */
    /* Wide skinny output: m = 64, n = 4096, k = 1024: 32 tiles, up to 4
     * splits; each split's partial (1 MB, written and read back) is a
     * quarter of the 8.4 MB of weights, so the reduction nearly doubles
     * the traffic; splitting less would leave the SMs idle, so 4 still wins.
     * (Partials that stay in L2 would cost less: not modelled.) */
    double best_s = 0, best = hand_best(&g, 64, 4096, 1024, 4, &best_s);
    double t = priced(&g, 64, 4096, 1024);
    double ideal = hand(&g, 64, 4096, 1024, 4, 0);
    printf("m=64 n=4096 k=1024: %.2f us (hand %.2f us at %g splits), ideal split-K %.2f us: +%.1f %%\n", t * 1e6,
           best * 1e6, best_s, ideal * 1e6, 100 * (t / ideal - 1));
    CHECK_NEAR(t, best, 1e-9 * best);
    CHECK(best_s == 4);
    CHECK(t > ideal * 1.5 && t < ideal * 2.1);
}

static void case_fills_sms(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    g.hbm_copy_bw = g.hbm_bw; /* the hand calculation's unit eff_mem: of the datasheet rate */
    /* A GEMM that fills the SMs does not split and pays nothing more. */
    double t = priced(&g, 4096, 4096, 4096);
    double tiles = 32.0 * 32, waves = ceil(tiles / 132), par = tiles / (waves * 132);
    double full = smax3(2.0 * 4096 * 4096 * 4096 / (g.flops_bf16 * par),
                        (3.0 * 4096 * 4096 * 2) / (g.hbm_bw * sqrt(par)));
    CHECK_NEAR(t, full, 1e-9 * full);
}

/* The kernel's limits, by hand on H100 (m = 16, n = 1024, k = 8192: 8
 * tiles of 16×128). Without split-K (split_max 1) each of the 8 CTAs
 * streams its 8192 × (128 + 16) × 2 bytes at cta_bw = 2 times the HBM
 * share of one SM (3.35 TB/s / 132): 46.5 µs, above the 20.7 µs the
 * grid's √(8/132) of HBM gives its 16.8 MB; with splits allowed the same bound falls by the split
 * count and a split pays split_us once. */
static void case_kernel_limits(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    g.hbm_copy_bw = g.hbm_bw; /* the hand calculation's unit eff_mem: of the datasheet rate */
    const double m = 16, n = 1024, k = 8192, cta_bw = 2;
    double cta_s = k * (128 * 2 + 16 * 2) / (cta_bw * g.hbm_bw / g.sms);
    double one = priced_lim(&g, m, n, k, cta_bw, 1, 0);
    double tc = 2.0 * m * n * k / (g.flops_bf16 * 8 / g.sms);
    double tm = (n * k * 2 + m * k * 2 + m * n * 2) / (g.hbm_bw * sqrt(8.0 / g.sms));
    printf("no split-K: %.2f us (CTA stream %.2f us, grid's HBM %.2f us)\n", one * 1e6, cta_s * 1e6, tm * 1e6);
    CHECK_NEAR(one, smax3(tc, fmax(tm, cta_s)), 1e-9 * one);
    CHECK(one > 45e-6 && one < 50e-6);
    /* Splits allowed, no fixed cost: 16 splits, the CTA bound 16 times smaller. */
    double split = priced_lim(&g, m, n, k, cta_bw, 0, 0);
    CHECK(split < one / 4);
    /* A fixed 3 µs per split: the same 16-way split plus 3 µs (splitting
     * still wins by far). */
    double fixed = priced_lim(&g, m, n, k, cta_bw, 0, 3);
    CHECK_NEAR(fixed, split + 3e-6, 1e-9);
    /* A cap of 4 splits: the CTA bound a quarter of the unsplit one. */
    double four = priced_lim(&g, m, n, k, cta_bw, 4, 0);
    CHECK(four >= cta_s / 4 * (1 - 1e-9) && four < one);
}

static void case_roofline(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    test_roofline(&g);
}

/* The memo of picks (model_gemm_split_memo) answers each pick as the pick
 * itself, bit for bit, over decode and prefill GEMM shapes on the H100's
 * 132 SMs, both combinations (max and smooth): the first time by searching,
 * the second from the memo; a 16-entry memo whose entries collide still
 * answers each pick its own; no memo is the pick; sizes out of range are
 * refused. */
static void case_memo(void)
{
    model_gemm_split_memo *m = NULL, *small = NULL;
    sim_err e = {{0}};
    REQUIRE(model_gemm_split_memo_create(10, &m, &e) == 0);
    REQUIRE(model_gemm_split_memo_create(4, &small, &e) == 0);
    int n = 0, wrong = 0;
    for (int pass = 0; pass < 2; pass++)
        for (double rows = 1; rows <= 4096; rows *= 4)
            for (double nn = 512; nn <= 16384; nn *= 2)
                for (int smooth = 0; smooth < 2; smooth++) {
                    const double k = 7168, tiles = ceil(rows / 128) * ceil(nn / 128);
                    const double tc = 2 * rows * nn * k / 989e12, bytes = nn * k * 2 + rows * k * 2 + rows * nn * 2;
                    const double partial = 2 * rows * nn * 4;
                    model_gemm_split want = model_gemm_split_pick(132, tiles, k, tc, bytes, 3.35e12, partial, smooth);
                    model_gemm_split a = model_gemm_split_pick_memo(m, 132, tiles, k, tc, bytes, 3.35e12, partial, smooth);
                    model_gemm_split b = model_gemm_split_pick_memo(small, 132, tiles, k, tc, bytes, 3.35e12, partial, smooth);
                    model_gemm_split c = model_gemm_split_pick_memo(NULL, 132, tiles, k, tc, bytes, 3.35e12, partial, smooth);
                    wrong += memcmp(&a, &want, sizeof want) != 0 || memcmp(&b, &want, sizeof want) != 0 ||
                             memcmp(&c, &want, sizeof want) != 0;
                    n++;
                }
    CHECK_MSG(n == 2 * 7 * 6 * 2 && wrong == 0, "%d picks, %d not the pick's own answer", n, wrong);
    uint64_t hits = 0, misses = 0;
    model_gemm_split_memo_stats(m, &hits, &misses);
    /* 84 distinct picks in 1024 slots: nearly every repeat answered from the memo. */
    CHECK_MSG(hits + misses == 168 && misses >= 84 && hits >= 80, "%llu hits, %llu misses", (unsigned long long)hits,
              (unsigned long long)misses);
    model_gemm_split_memo_stats(small, &hits, &misses);
    CHECK(hits + misses == 168 && misses > 84); /* 84 picks in 16 slots: some replaced before their repeat */
    model_gemm_split_memo_free(small);
    model_gemm_split_memo_free(m);
    model_gemm_split_memo *bad = NULL;
    CHECK(model_gemm_split_memo_create(3, &bad, &e) == SIM_EINVAL && !bad);
    CHECK(model_gemm_split_memo_create(21, &bad, &e) == SIM_EINVAL && !bad);
    model_gemm_split_memo_free(NULL);
}

/* A cost model with the memo attached (model_cost_set_split_memo, as a
 * cluster attaches its own) prices Llama-3.1-8B's decode iteration at 30
 * sequences exactly as without it, op for op; the first evaluation
 * searches its split GEMMs, the second answers them from the memo. */
static void case_cost_memo(void)
{
    model_gpu g;
    model_spec m;
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    model_cost *c = NULL;
    model_gemm_split_memo *memo = NULL;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0 && model_catalog_model("llama-3.1-8b", &m, &e) == 0 &&
            model_cost_create(&m, &g, &l, &c, &e) == 0);
    REQUIRE(model_gemm_split_memo_create(10, &memo, &e) == 0);
    static model_op plain[128], first[128], second[128];
    int32_t n0 = 0, n1 = 0, n2 = 0;
    model_batch b = {0, NULL, 30, 30 * 1200, 0};
    double t0 = model_cost_breakdown(c, &b, plain, 128, &n0, NULL);
    model_cost_set_split_memo(c, memo);
    double t1 = model_cost_breakdown(c, &b, first, 128, &n1, NULL);
    uint64_t h1 = 0, m1 = 0, h2 = 0, m2 = 0;
    model_gemm_split_memo_stats(memo, &h1, &m1);
    double t2 = model_cost_breakdown(c, &b, second, 128, &n2, NULL);
    model_gemm_split_memo_stats(memo, &h2, &m2);
    CHECK(t1 == t0 && t2 == t0 && n1 == n0 && n2 == n0);
    CHECK(!memcmp(plain, first, (size_t)n0 * sizeof *plain) && !memcmp(plain, second, (size_t)n0 * sizeof *plain));
    CHECK_MSG(m1 >= 3 && m2 == m1 && h2 - h1 == m1 + h1, "first %llu hits %llu misses, then %llu / %llu",
              (unsigned long long)h1, (unsigned long long)m1, (unsigned long long)h2, (unsigned long long)m2);
    model_cost_set_split_memo(c, NULL);
    model_gemm_split_memo_free(memo);
    model_cost_destroy(c);
}

static const test_case cases[] = {
    {"memo", case_memo},
    {"cost_memo", case_cost_memo},
    {"h100_sms", case_h100_sms},
    {"decode", case_decode},
    {"wide_skinny", case_wide_skinny},
    {"fills_sms", case_fills_sms},
    {"kernel_limits", case_kernel_limits},
    {"roofline", case_roofline},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_splitk", cases);
}
