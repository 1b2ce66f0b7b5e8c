/* test_op_family — per-family op speedups (model_layout.op_speedup,
 * model_op_family.h): names, that speedup 1 leaves every op's time bit for
 * bit, and that a speedup s takes exactly (1 − 1/s) of its family's time
 * off an iteration and nothing off the other families, on a compute-bound
 * prefill (dense GEMMs), a MoE model's routed experts and a TP all-reduce. */
#include "test_util.h"
#include "test_model_util.h"

#include "model_op_family.h"

#include <string.h>

#define MAX_OPS 512

static model_cost *make(const char *model, int tp, int ep, int dp, const double *speedup)
{
    model_layout l = {.tp = tp, .pp = 1, .dp = dp, .ep = ep, .dtype = MODEL_DTYPE_BF16,
                      .kv_dtype = MODEL_DTYPE_BF16, .overhead_s = 100e-6, .gpus_per_node = 8};
    if (speedup) memcpy(l.op_speedup, speedup, sizeof l.op_speedup);
    return test_cost_layout(model, "h100-sxm", &l);
}

typedef struct {
    double total;
    int32_t n;
    model_op ops[MAX_OPS];
} iter;

static void price(const model_cost *c, const model_batch *b, iter *it)
{
    model_iter_cost ic;
    it->total = model_cost_breakdown(c, b, it->ops, MAX_OPS, &it->n, &ic);
    CHECK(it->n <= MAX_OPS);
}

static void case_names(void)
{
    for (int f = 0; f < MODEL_FAM_COUNT; f++) {
        const char *n = model_op_family_name((model_op_family)f);
        CHECK_MSG(model_op_family_from_name(n) == f, "%s", n);
        CHECK_CONTAINS(model_op_family_list(), n);
    }
    CHECK(model_op_family_from_name("all-reduce") == MODEL_FAM_ALL_REDUCE);
    CHECK(model_op_family_from_name("GEMM") == MODEL_FAM_GEMM);
    CHECK(model_op_family_from_name("gem") == -1);
    CHECK(model_op_family_from_name("") == -1);
    CHECK(model_op_family_from_name(NULL) == -1);
    CHECK(strcmp(model_op_family_name(MODEL_FAM_COUNT), "?") == 0);
}

/* Explicit 1 everywhere prices exactly as the default 0s. */
static void case_unit_speedup_identical(void)
{
    double ones[MODEL_FAM_COUNT];
    for (int f = 0; f < MODEL_FAM_COUNT; f++) ones[f] = 1;
    model_cost *a = make("llama-3.1-70b", 4, 0, 0, NULL), *b = make("llama-3.1-70b", 4, 0, 0, ones);
    REQUIRE(a && b);
    model_chunk ch = {3000, 500};
    model_batch bt = {.n_chunks = 1, .chunks = &ch, .n_decode = 40, .decode_ctx_sum = 40 * 2000};
    static iter x, y;
    price(a, &bt, &x);
    price(b, &bt, &y);
    CHECK(x.total == y.total);
    CHECK(x.n == y.n);
    for (int32_t i = 0; i < x.n && i < y.n && i < MAX_OPS; i++)
        CHECK_MSG(x.ops[i].time_s == y.ops[i].time_s, "%s", x.ops[i].name);
    model_cost_destroy(a);
    model_cost_destroy(b);
}

/* Σ time of the ops in the breakdown whose name contains one of names. */
static double sum_named(const iter *it, const char *const *names, int n_names)
{
    double s = 0;
    for (int32_t i = 0; i < it->n && i < MAX_OPS; i++)
        for (int k = 0; k < n_names; k++)
            if (strstr(it->ops[i].name, names[k])) {
                s += it->ops[i].time_s;
                break;
            }
    return s;
}

/* A compute-bound 8192-token prefill of Llama-3.1-8B on one H100: the
 * dense GEMMs are most of it; twice as fast GEMMs take half their time
 * off, every other op unchanged. */
static void case_gemm_prefill(void)
{
    double sp[MODEL_FAM_COUNT] = {0};
    sp[MODEL_FAM_GEMM] = 2;
    model_cost *a = make("llama-3.1-8b", 1, 0, 0, NULL), *b = make("llama-3.1-8b", 1, 0, 0, sp);
    REQUIRE(a && b);
    model_chunk ch = {8192, 0};
    model_batch bt = {.n_chunks = 1, .chunks = &ch};
    static iter x, y;
    price(a, &bt, &x);
    price(b, &bt, &y);
    double gemm = 0;
    for (int32_t i = 0; i < x.n; i++)
        if (x.ops[i].cls == MODEL_OPC_GEMM) {
            gemm += x.ops[i].time_s;
            /* every GEMM on the 8192 tokens (the LM head sees one row) */
            if (strcmp(x.ops[i].name, "lm_head"))
                CHECK_MSG(x.ops[i].bound == MODEL_BOUND_COMPUTE, "%s %s", x.ops[i].name,
                          model_bound_name(x.ops[i].bound));
        }
    printf("  prefill 8192: %.3f ms, GEMMs %.3f ms (%.0f %%); GEMMs x2: %.3f ms\n", 1e3 * x.total, 1e3 * gemm,
           100 * gemm / x.total, 1e3 * y.total);
    CHECK(gemm > 0.5 * x.total);
    CHECK_NEAR(y.total, x.total - gemm / 2, 1e-12 * x.total);
    for (int32_t i = 0; i < x.n && i < y.n; i++)
        CHECK_NEAR(y.ops[i].time_s, x.ops[i].cls == MODEL_OPC_GEMM ? x.ops[i].time_s / 2 : x.ops[i].time_s,
                   1e-15 + 1e-12 * x.ops[i].time_s);
    model_cost_destroy(a);
    model_cost_destroy(b);
}

/* Mixtral on TP2: moe scales the routed experts' GEMMs only (not the
 * router), all_reduce the TP all-reduces only. */
static void case_moe_and_all_reduce(void)
{
    double sm[MODEL_FAM_COUNT] = {0}, sa[MODEL_FAM_COUNT] = {0};
    sm[MODEL_FAM_MOE] = 4;
    sa[MODEL_FAM_ALL_REDUCE] = 1.5;
    model_cost *a = make("mixtral-8x7b", 2, 0, 0, NULL), *m = make("mixtral-8x7b", 2, 0, 0, sm),
               *r = make("mixtral-8x7b", 2, 0, 0, sa);
    REQUIRE(a && m && r);
    model_chunk ch = {2048, 0};
    model_batch bt = {.n_chunks = 1, .chunks = &ch, .n_decode = 16, .decode_ctx_sum = 16 * 1000};
    static iter x, y, z;
    price(a, &bt, &x);
    price(m, &bt, &y);
    price(r, &bt, &z);
    static const char *const experts[] = {"experts_"}, *const ar[] = {"all_reduce"};
    double ex = sum_named(&x, experts, 1), red = sum_named(&x, ar, 1);
    printf("  mixtral tp2: %.3f ms, routed experts %.3f ms, all-reduce %.3f ms\n", 1e3 * x.total, 1e3 * ex,
           1e3 * red);
    REQUIRE(ex > 0 && red > 0);
    CHECK(x.n == y.n && x.n == z.n);
    for (int32_t i = 0; i < x.n && i < y.n && i < z.n; i++) {
        const model_op *o = &x.ops[i];
        int is_expert_gemm = o->cls == MODEL_OPC_GEMM && strstr(o->name, "experts_") != NULL;
        int is_ar = o->cls == MODEL_OPC_COMM && strstr(o->detail, "all_reduce") == o->detail;
        CHECK_NEAR(y.ops[i].time_s, is_expert_gemm ? o->time_s / 4 : o->time_s, 1e-15 + 1e-12 * o->time_s);
        CHECK_NEAR(z.ops[i].time_s, is_ar ? o->time_s / 1.5 : o->time_s, 1e-15 + 1e-12 * o->time_s);
    }
    model_cost_destroy(a);
    model_cost_destroy(m);
    model_cost_destroy(r);
}

static void case_bad_speedup(void)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err err = {{0}};
    REQUIRE(model_catalog_model("llama-3.1-8b", &m, &err) == 0 && model_catalog_gpu("h100-sxm", &g, &err) == 0);
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16};
    l.op_speedup[MODEL_FAM_ATTENTION] = -2;
    CHECK(model_cost_create(&m, &g, &l, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "op_speedup.attention");
    CHECK(c == NULL);
}

static const test_case cases[] = {
    {"names", case_names},
    {"unit_speedup_identical", case_unit_speedup_identical},
    {"gemm_prefill", case_gemm_prefill},
    {"moe_and_all_reduce", case_moe_and_all_reduce},
    {"bad_speedup", case_bad_speedup},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_op_family", cases);
}
