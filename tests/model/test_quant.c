/* test_quant — the number formats priced as they are: block FP8 (fp32
 * scales per 128×128 weight tile and 1×128 activation slice, a CUDA-core
 * promotion every 128 of K on Hopper), MXFP8 (E8M0 per 32, Blackwell
 * only), NVFP4 (E4M3 per 16). Also the fit of the Hopper promotion
 * fraction (model_dtype_promote_frac) from the shared H100 GEMM tables,
 * read with calib_optable: TensorRT-LLM's fp8_block kernel over its
 * per-tensor fp8 kernel at compute-bound shapes. */
#include "calib_optable.h"
#include "model_catalog.h"
#include "model_cost.h"
#include "model_dtype.h"
#include "test_util.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    long m, n, k;
    double lat;
} gemm_row;

/* Median over shapes with m, n, k >= 4096 of latency(fp8_block) /
 * latency(fp8) in one table; -1 when the table cannot be read. */
static double block_over_tensor(const char *path, int *pairs)
{
    calib_optable *t = NULL;
    sim_err e = {{0}};
    *pairs = 0;
    if (calib_optable_open(path, &t, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    gemm_row *rows[2] = {NULL, NULL};
    size_t n[2] = {0, 0}, cap[2] = {0, 0};
    int rc;
    while ((rc = calib_optable_next(t, &e)) == 1) {
        const char *dt = NULL;
        gemm_row r;
        if (calib_optable_str(t, "gemm_dtype", &dt, &e) || calib_optable_long(t, "m", &r.m, &e) ||
            calib_optable_long(t, "n", &r.n, &e) || calib_optable_long(t, "k", &r.k, &e) ||
            calib_optable_double(t, "latency", &r.lat, &e)) {
            rc = -1;
            break;
        }
        int which = !strcmp(dt, "fp8") ? 0 : !strcmp(dt, "fp8_block") ? 1 : -1;
        if (which < 0 || r.m < 4096 || r.n < 4096 || r.k < 4096 || !(r.lat > 0)) continue;
        if (n[which] == cap[which]) {
            cap[which] = cap[which] ? 2 * cap[which] : 256;
            gemm_row *g = realloc(rows[which], cap[which] * sizeof *g);
            if (!g) {
                rc = -1;
                break;
            }
            rows[which] = g;
        }
        rows[which][n[which]++] = r;
    }
    if (rc < 0) fprintf(stderr, "%s\n", e.msg);
    calib_optable_close(t);
    double med = -1;
    double *ratio = rc < 0 ? NULL : malloc((n[1] + 1) * sizeof *ratio);
    if (ratio) {
        size_t q = 0;
        for (size_t i = 0; i < n[1]; i++)
            for (size_t j = 0; j < n[0]; j++)
                if (rows[1][i].m == rows[0][j].m && rows[1][i].n == rows[0][j].n && rows[1][i].k == rows[0][j].k) {
                    ratio[q++] = rows[1][i].lat / rows[0][j].lat;
                    break;
                }
        if (q > 0) {
            gsl_sort(ratio, 1, q);
            med = gsl_stats_median_from_sorted_data(ratio, 1, q);
        }
        *pairs = (int)q;
    }
    free(ratio);
    free(rows[0]);
    free(rows[1]);
    return med;
}

static model_cost *make(const char *model, const char *gpu, model_dtype d, sim_err *e)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    if (model_catalog_model(model, &m, e) || model_catalog_gpu(gpu, &g, e)) return NULL;
    model_layout l = {.tp = 1, .pp = 1, .dtype = d, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    if (model_cost_create(&m, &g, &l, &c, e)) return NULL;
    return c;
}

static double op_time(const model_cost *c, const char *name)
{
    model_op ops[256];
    int32_t n = 0;
    model_chunk big = {8192, 0};
    model_batch pb = {1, &big, 0, 0, 0};
    model_cost_breakdown(c, &pb, ops, 256, &n, NULL);
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(ops[i].name, name)) return ops[i].time_s;
    return -1;
}

static void test_bytes(void)
{
    /* Weights: block FP8 one fp32 per 128×128 (4/16384 B per value),
     * MXFP8 one e8m0 byte per 32, NVFP4 one e4m3 byte per 16. */
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_FP8_BLOCK), 1.0 + 4.0 / 16384.0, 1e-15);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_MXFP8), 1.03125, 1e-15);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_NVFP4), 0.5625, 1e-15);
    CHECK(model_dtype_bytes(MODEL_DTYPE_MXFP8) > model_dtype_bytes(MODEL_DTYPE_FP8_BLOCK));
    /* Activations: block FP8 one fp32 per 1×128 slice, MXFP8 one byte per 32:
     * the same 1.03125 bytes, by different roads. */
    model_gpu b200;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_gpu("b200", &b200, &e) == 0, return);
    CHECK_NEAR(model_dtype_act_bytes(&b200, MODEL_DTYPE_FP8_BLOCK), 1.0 + 4.0 / 128.0, 1e-15);
    CHECK_NEAR(model_dtype_act_bytes(&b200, MODEL_DTYPE_MXFP8), 1.0 + 1.0 / 32.0, 1e-15);

    /* A whole model: Qwen3-32B on B200 weighs more in MXFP8 than in block
     * FP8 by about (1/32 − 4/16384) of its quantised layer bytes. */
    model_cost *mx = make("qwen3-32b", "b200", MODEL_DTYPE_MXFP8, &e);
    model_cost *bl = make("qwen3-32b", "b200", MODEL_DTYPE_FP8_BLOCK, &e);
    CHECK_MSG(mx && bl, "%s", e.msg);
    if (mx && bl) {
        double r = model_cost_weight_bytes_per_gpu(mx) / model_cost_weight_bytes_per_gpu(bl);
        CHECK_MSG(r > 1.02 && r < 1.031, "mxfp8 / fp8_block weights %.4f", r);
    }
    model_cost_destroy(mx);
    model_cost_destroy(bl);
}

static void test_hopper_gemm(void)
{
    sim_err e = {{0}};
    model_gpu h100, b200;
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &h100, &e) == 0 && model_catalog_gpu("b200", &b200, &e) == 0, return);
    CHECK_NEAR(model_dtype_promote_frac(&h100, MODEL_DTYPE_FP8_BLOCK), 0.10, 1e-12);
    CHECK(model_dtype_promote_frac(&b200, MODEL_DTYPE_FP8_BLOCK) == 0);
    CHECK(model_dtype_promote_frac(&h100, MODEL_DTYPE_FP8) == 0);

    /* MXFP8 on Hopper: a clear refusal naming the alternative. */
    model_cost *mxh = make("qwen3-32b", "h100-sxm", MODEL_DTYPE_MXFP8, &e);
    CHECK(mxh == NULL);
    CHECK_CONTAINS(e.msg, "mxfp8 needs Blackwell");
    CHECK_CONTAINS(e.msg, "use fp8_block");
    model_cost_destroy(mxh);

    /* Hand calculation: Qwen3-32B gate_up_proj of an 8192-token prefill is
     * 2·8192·51200·5120 = 4.29 TFLOP; at H100's 1979 TFLOP/s fp8 peak ×
     * eff_gemm_fp8 it is compute-bound (weights 0.27 GB, 0.08 ms at 3.35
     * TB/s, against ≈ 3 ms of math), so block FP8 takes 1 + 0.10 times the
     * per-tensor fp8 time, less the small fixed launch floor both pay. */
    model_cost *f8 = make("qwen3-32b", "h100-sxm", MODEL_DTYPE_FP8, &e);
    model_cost *bl = make("qwen3-32b", "h100-sxm", MODEL_DTYPE_FP8_BLOCK, &e);
    CHECK_MSG(f8 && bl, "%s", e.msg);
    if (f8 && bl) {
        double t8 = op_time(f8, "gate_up_proj"), tb = op_time(bl, "gate_up_proj");
        double math = 2.0 * 8192 * 51200 * 5120 / (h100.flops_fp8 * h100.eff_gemm_fp8) * 64; /* 64 layers */
        CHECK_MSG(t8 > 0.95 * math && t8 < 1.10 * math, "fp8 gate_up %.4g s vs hand %.4g s", t8, math);
        CHECK_MSG(tb / t8 > 1.08 && tb / t8 < 1.101, "block/per-tensor %.4f", tb / t8);
    }
    model_cost_destroy(f8);
    model_cost_destroy(bl);
    /* On Blackwell the block scales go to the tensor cores: no promotion. */
    f8 = make("qwen3-32b", "b200", MODEL_DTYPE_FP8, &e);
    bl = make("qwen3-32b", "b200", MODEL_DTYPE_FP8_BLOCK, &e);
    model_cost *mx = make("qwen3-32b", "b200", MODEL_DTYPE_MXFP8, &e);
    CHECK_MSG(f8 && bl && mx, "%s", e.msg);
    if (f8 && bl && mx) {
        double t8 = op_time(f8, "gate_up_proj"), tb = op_time(bl, "gate_up_proj"), tm = op_time(mx, "gate_up_proj");
        CHECK_MSG(tb / t8 < 1.01 && tm / t8 < 1.01, "b200 block %.4f mx %.4f", tb / t8, tm / t8);
    }
    model_cost_destroy(f8);
    model_cost_destroy(bl);
    model_cost_destroy(mx);
}

/* FP8 weights on Ampere (no FP8 tensor cores) run weight-only, as vLLM's
 * and SGLang's FP8 Marlin kernels do: half the bf16 weight bytes, bf16
 * activations and MMAs. Hand check on A100: Qwen3-32B's gate_up_proj of an
 * 8192-token prefill is compute-bound at the bf16 peak in both formats
 * (within 5 %), and a one-token decode step's reads about half the bytes. */
static void test_ampere_fp8(void)
{
    sim_err e = {{0}};
    model_gpu a100;
    REQUIRE_OR(model_catalog_gpu("a100-sxm-80g", &a100, &e) == 0, return);
    CHECK(model_dtype_check(&a100, MODEL_DTYPE_FP8, "m", &e) == 0);
    CHECK(model_dtype_check(&a100, MODEL_DTYPE_FP8_BLOCK, "m", &e) == 0);
    CHECK(model_dtype_check(&a100, MODEL_DTYPE_NVFP4, "m", &e) == SIM_EINVAL);
    CHECK(model_dtype_check(&a100, MODEL_DTYPE_MXFP8, "m", &e) == SIM_EINVAL);
    CHECK(model_dtype_peak(&a100, MODEL_DTYPE_FP8) == a100.flops_bf16);
    CHECK(model_dtype_act_bytes(&a100, MODEL_DTYPE_FP8_BLOCK) == 2.0);
    CHECK(model_dtype_promote_frac(&a100, MODEL_DTYPE_FP8_BLOCK) == 0);
    CHECK(model_dtype_gemm_eff(&a100, MODEL_DTYPE_FP8) == a100.eff_gemm);
    model_cost *f8 = make("qwen3-32b", "a100-sxm-80g", MODEL_DTYPE_FP8, &e);
    model_cost *bf = make("qwen3-32b", "a100-sxm-80g", MODEL_DTYPE_BF16, &e);
    CHECK_MSG(f8 && bf, "%s", e.msg);
    if (f8 && bf) {
        double r = op_time(f8, "gate_up_proj") / op_time(bf, "gate_up_proj");
        CHECK_MSG(r > 0.95 && r < 1.05, "a100 fp8 / bf16 prefill gate_up %.3f", r);
        double w = model_cost_weight_bytes_per_gpu(f8) / model_cost_weight_bytes_per_gpu(bf);
        CHECK_MSG(w > 0.48 && w < 0.56, "a100 fp8 / bf16 weights %.3f", w);
    }
    model_cost_destroy(f8);
    model_cost_destroy(bf);
}

/* The fit of the promotion fraction: median block/per-tensor latency of
 * TensorRT-LLM's kernels at compute-bound shapes, H100 (promotion) against
 * B200 (native block scales). The constant must stay within 0.03 of what
 * the H100 table says; B200 must show no promotion cost. */
static void test_promote_fit(void)
{
    const char *src = test_src_dir();
    char h[2048], b[2048];
    snprintf(h, sizeof h, "%s/../shared/validation/ops/h100_sxm/gemm/trtllm-1.3.0rc20/gemm_perf.csv.gz", src);
    snprintf(b, sizeof b, "%s/../shared/validation/ops/b200_sxm/gemm/trtllm-1.3.0rc20/gemm_perf.csv.gz", src);
    FILE *f = fopen(h, "rb");
    if (!f) {
        printf("shared GEMM tables not found (%s): promotion fit not checked\n", h);
        test_case_skip("the shared per-op GEMM tables are not beside the checkout");
        return;
    }
    fclose(f);
    int nh = 0, nb = 0;
    double rh = block_over_tensor(h, &nh), rb = block_over_tensor(b, &nb);
    printf("fp8_block / fp8 median at m,n,k >= 4096: h100 %.3f (%d shapes), b200 %.3f (%d shapes)\n", rh, nh, rb,
           nb);
    CHECK(nh > 100 && nb > 100);
    model_gpu h100;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &h100, &e) == 0, return);
    CHECK_MSG(fabs((rh - 1.0) - model_dtype_promote_frac(&h100, MODEL_DTYPE_FP8_BLOCK)) < 0.03, "h100 ratio %.3f",
              rh);
    CHECK_MSG(rb > 0 && rb < 1.0, "b200 ratio %.3f", rb);
}

static const test_case cases[] = {
    {"bytes", test_bytes},
    {"hopper_gemm", test_hopper_gemm},
    {"promote_fit", test_promote_fit},
    {"ampere_fp8", test_ampere_fp8},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_quant", cases);
}
