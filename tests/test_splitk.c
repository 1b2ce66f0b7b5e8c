/* test_splitk — split-K / stream-K for skinny GEMMs priced with its
 * reduction (model_op's GEMM: fewer 128-wide output tiles than SMs).
 *
 * Each of s splits writes an fp32 partial tile (m×n×4 bytes) and the
 * reduction reads them all back: 2·s·m·n·4 more bytes of HBM traffic; the
 * kernel takes the fastest s of 1, 2, 4, … up to the splits that fill the
 * SMs (at least 256 k each). Checked against the hand calculation with unit
 * efficiencies and no floors on H100 (132 SMs, 989 TFLOP/s bf16, 3.35 TB/s):
 * a decode-sized GEMM whose partials are small against its weights still
 * splits 16 ways and pays about 12 %; one whose partials rival its
 * weights nearly doubles. */
#include "model_catalog.h"
#include "model_op.h"
#include "test_util.h"

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

static double priced(const model_gpu *g, double m, double n, double k)
{
    model_op_query q;
    memset(&q, 0, sizeof q);
    q.kind = MODEL_OPK_GEMM;
    q.f[MODEL_OPF_M] = m, q.f[MODEL_OPF_N] = n, q.f[MODEL_OPF_K] = k;
    strcpy(q.dtype, "bfloat16");
    strcpy(q.variant, "fused_quant");
    const double p[5] = {0, 1, 1, 0, 0}; /* floor, eff_tc, eff_mem, k_fill, quant */
    sim_err e = {{0}};
    double t = model_op_time(g, &q, p, &e);
    CHECK_MSG(t > 0, "%s", e.msg);
    return t;
}

int main(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &g, &e) == 0, return test_finish("test_splitk"));
    CHECK(g.sms == 132);

    /* Decode: m = 16, n = 1024, k = 8192: 8 tiles, up to 16 splits. The
     * 16 partials are 16 × 131 kB = 2.1 MB against 16.8 MB of weights. */
    double best = -1, best_s = 0;
    for (double s = 1; s <= 16; s *= 2) {
        double t = hand(&g, 16, 1024, 8192, s, 1);
        if (best < 0 || t < best) best = t, best_s = s;
    }
    double t = priced(&g, 16, 1024, 8192), ideal = hand(&g, 16, 1024, 8192, 16, 0);
    printf("m=16 n=1024 k=8192: %.2f us (hand %.2f us at %g splits), ideal split-K %.2f us: +%.1f %%\n", t * 1e6,
           best * 1e6, best_s, ideal * 1e6, 100 * (t / ideal - 1));
    CHECK_NEAR(t, best, 1e-9 * best);
    CHECK(best_s == 16);
    CHECK(t > ideal * 1.05 && t < ideal * 1.20); /* the reduction's bytes: +12.5 % of the traffic */

    /* Wide skinny output: m = 64, n = 4096, k = 1024: 32 tiles, up to 4
     * splits; each split's partial (1 MB, written and read back) is a
     * quarter of the 8.4 MB of weights, so the reduction nearly doubles
     * the traffic; splitting less would leave the SMs idle, so 4 still wins.
     * (Partials that stay in L2 would cost less: not modelled.) */
    best = -1;
    for (double s = 1; s <= 4; s *= 2) {
        double ts = hand(&g, 64, 4096, 1024, s, 1);
        if (best < 0 || ts < best) best = ts, best_s = s;
    }
    t = priced(&g, 64, 4096, 1024);
    ideal = hand(&g, 64, 4096, 1024, 4, 0);
    printf("m=64 n=4096 k=1024: %.2f us (hand %.2f us at %g splits), ideal split-K %.2f us: +%.1f %%\n", t * 1e6,
           best * 1e6, best_s, ideal * 1e6, 100 * (t / ideal - 1));
    CHECK_NEAR(t, best, 1e-9 * best);
    CHECK(best_s == 4);
    CHECK(t > ideal * 1.5 && t < ideal * 2.1);

    /* A GEMM that fills the SMs does not split and pays nothing more. */
    t = priced(&g, 4096, 4096, 4096);
    double tiles = 32.0 * 32, waves = ceil(tiles / 132), par = tiles / (waves * 132);
    double full = smax3(2.0 * 4096 * 4096 * 4096 / (g.flops_bf16 * par),
                        (3.0 * 4096 * 4096 * 2) / (g.hbm_bw * sqrt(par)));
    CHECK_NEAR(t, full, 1e-9 * full);
    return test_finish("test_splitk");
}
