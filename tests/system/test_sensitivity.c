/* test_sensitivity — `servesim sensitivity SCENARIO --op FAMILY --speedup ...`.
 *
 * identity: speedup 1 reproduces the base run exactly (every figure of the
 * JSON equal to the base's, every change 0).
 * prefill_by_hand: one 2048-token request on the M/D/1 scenario
 * (scenarios/replications-md1.yaml with one request: TTFT is one prefill
 * iteration, nothing queued). Its TTFT equals the cost model's iteration
 * for that chunk, and with GEMMs twice as fast it drops by exactly half of
 * that iteration's GEMM time (the dense GEMMs are most of a compute-bound
 * prefill), read from the same cost model's op breakdown.
 * usage: an unknown family names the valid ones; bad speedups are refused.
 * search: --search reports a recommendation per speedup, and faster GEMMs
 * never lower its score. */
#include "sim_loader.h"
#include "sim_pool_layout.h"
#include "test_util.h"
#include "test_model_util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *run_json(const char *args, int *status)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' sensitivity %s --json 2>/dev/null", test_src_dir(), test_servesim, args);
    *status = test_sh(cmd, &out);
    json_t *o = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    return o;
}

static double fig(json_t *point, const char *key)
{
    return json_real_value(json_object_get(json_object_get(point, "figures"), key));
}

static void case_identity(void)
{
    int st;
    json_t *o = run_json("scenarios/quickstart.yaml --set workload.requests=400 --op gemm --speedup 1,2", &st);
    REQUIRE(o);
    CHECK(st == 0);
    json_t *base = json_object_get(o, "base"), *pts = json_object_get(o, "speedups");
    REQUIRE(json_array_size(pts) == 2);
    json_t *one = json_array_get(pts, 0), *two = json_array_get(pts, 1);
    CHECK(json_real_value(json_object_get(one, "speedup")) == 1);
    CHECK(json_equal(json_object_get(one, "figures"), json_object_get(base, "figures")));
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(one, "change_pct"), key, v) CHECK_MSG(json_real_value(v) == 0, "%s", key);
    /* Faster GEMMs: lower TTFT and TPOT. */
    CHECK(fig(two, "ttft_ms.mean") < fig(base, "ttft_ms.mean"));
    CHECK(fig(two, "tpot_ms.mean") < fig(base, "tpot_ms.mean"));
    CHECK(strcmp(json_string_value(json_object_get(o, "family")), "gemm") == 0);
    json_decref(o);
}

static void case_prefill_by_hand(void)
{
    int st;
    json_t *o = run_json("scenarios/replications-md1.yaml --set workload.requests=1 --op gemm --speedup 2", &st);
    REQUIRE(o);
    CHECK(st == 0);
    double t1 = fig(json_object_get(o, "base"), "ttft_ms.mean"),
           t2 = fig(json_array_get(json_object_get(o, "speedups"), 0), "ttft_ms.mean");
    json_decref(o);
    /* The same iteration from the cost model the cluster builds for the pool. */
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/replications-md1.yaml", test_src_dir());
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    model_layout l;
    model_cost *c = NULL;
    int ok = sim_loader_load_file(path, NULL, 0, sc, &err) == 0 &&
             sim_pool_layout(sc, &sc->deployment.pools[0], &l, &err) == 0;
    if (ok) c = test_cost_layout(sc->model, sc->hardware.gpu, &l);
    int isl = (int)sc->workload.input_tokens.value;
    free(sc);
    REQUIRE_MSG(ok, "%s", err.msg);
    REQUIRE(c);
    model_chunk ch = {isl, 0};
    model_batch b = {.n_chunks = 1, .chunks = &ch};
    model_op ops[256];
    int32_t n = 0;
    double total = model_cost_breakdown(c, &b, ops, 256, &n, NULL), gemm = 0;
    model_cost_destroy(c);
    REQUIRE(n <= 256);
    for (int32_t i = 0; i < n; i++)
        if (ops[i].cls == MODEL_OPC_GEMM) gemm += ops[i].time_s;
    printf("  2048-token prefill: TTFT %.4f ms (iteration %.4f ms, GEMMs %.4f ms = %.0f %%); GEMMs x2: %.4f ms "
           "(hand: %.4f ms)\n",
           t1, 1e3 * total, 1e3 * gemm, 100 * gemm / total, t2, t1 - 1e3 * gemm / 2);
    CHECK(gemm > 0.5 * total);
    CHECK_NEAR(t1, 1e3 * total, 1e-6 * t1);
    CHECK_NEAR(t2, t1 - 1e3 * gemm / 2, 1e-6 * t1);
}

static void case_usage(void)
{
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"scenarios/quickstart.yaml --op gemmm --speedup 2",
         "--op 'gemmm': no such op family (valid: gemm, moe, attention, all_reduce, all_gather, reduce_scatter, "
         "all_to_all, send_recv, other)"},
        {"scenarios/quickstart.yaml --op gemm --speedup 0", "expected numbers > 0, got '0'"},
        {"scenarios/quickstart.yaml --op gemm --speedup 2,x", "got 'x'"},
        {"scenarios/quickstart.yaml --speedup 2", "missing --op FAMILY"},
        {"scenarios/quickstart.yaml --op moe", "missing --speedup LIST"},
        {"scenarios/quickstart.yaml --op moe --speedup 2 --serch", "did you mean '--search'"},
        {"scenarios/nope.yaml --op moe --speedup 2", "nope.yaml"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1024], *err = NULL;
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' sensitivity %s 2>&1 >/dev/null", test_src_dir(), test_servesim,
                 bad[i].args);
        int st = test_sh(cmd, &err);
        CHECK_MSG(st == 2, "%s: exit %d", bad[i].args, st);
        CHECK_MSG(err && strstr(err, bad[i].want), "%s: %s", bad[i].args, err ? err : "");
        free(err);
    }
}

static void case_search(void)
{
    int st;
    json_t *o = run_json("scenarios/sensitivity-llama70b-h100.yaml --op gemm --speedup 2 --search", &st);
    REQUIRE(o);
    CHECK(st == 0);
    json_t *bs = json_object_get(json_object_get(o, "base"), "search"),
           *ss = json_object_get(json_array_get(json_object_get(o, "speedups"), 0), "search");
    REQUIRE(json_is_object(bs) && json_is_object(ss));
    CHECK(json_string_value(json_object_get(bs, "best")) && json_string_value(json_object_get(ss, "best")));
    CHECK(json_is_boolean(json_object_get(ss, "changed")));
    double b = json_real_value(json_object_get(bs, "score")), s = json_real_value(json_object_get(ss, "score"));
    printf("  search score: base %.2f, GEMMs x2 %.2f\n", b, s);
    CHECK(b > 0 && s > b);
    json_decref(o);
}

static const test_case cases[] = {
    {"identity", case_identity},
    {"prefill_by_hand", case_prefill_by_hand},
    {"usage", case_usage},
    {"search", case_search},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_sensitivity", cases);
}
