/* test_af — attention/FFN disaggregation: with one micro-batch an
 * iteration is the serial sum of attention, two transfers and FFN per
 * layer; with more micro-batches a layer costs max(m·max term, serial sum),
 * so per micro-batch it approaches the largest term; more FFN instances
 * shorten the FFN side; and AF runs end to end with conservation. */
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_af.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_model_util.h"

static model_cost *make_cost(const char *model, int tp)
{
    return test_cost_model(model, "h200-sxm", tp, 1000);
}

static void test_pipeline_formula(void)
{
    model_cost *a = make_cost("llama-3.1-8b", 1), *f = make_cost("llama-3.1-8b", 1);
    if (!a || !f) return;
    model_batch b = {.n_decode = 64, .decode_ctx_sum = 64 * 2000};
    sim_af *af = NULL;
    sim_err err;
    sim_af_parts p;
    CHECK(sim_af_create(a, f, 2, 1, 1, 50e9, 5e-6, &af, &err) == 0);
    double t = sim_af_parts_get(af, &b, &p);
    CHECK(p.a > 0 && p.f > 0 && p.c > 5e-6);
    CHECK_NEAR(t, 32 * (p.a + 2 * p.c + p.f) + p.once, 1e-12);
    /* The byte count: 64 tokens of 4096 bf16 values, both ways, per layer. */
    CHECK_NEAR(p.bytes, 2.0 * 32 * 64 * 4096 * 2, 1e-6);
    sim_af_destroy(af);

    /* Two micro-batches: a layer costs max(2·max term, serial sum). */
    CHECK(sim_af_create(a, f, 2, 1, 2, 50e9, 5e-6, &af, &err) == 0);
    t = sim_af_parts_get(af, &b, &p);
    double mx = fmax(p.a, fmax(p.c, p.f)), serial = p.a + 2 * p.c + p.f;
    CHECK_NEAR(p.layer, fmax(2 * mx, serial), 1e-15);
    CHECK_NEAR(t, 32 * p.layer + p.once, 1e-12);
    sim_af_destroy(af);

    /* Negligible transfers and many micro-batches: per micro-batch and layer
     * the time is the largest term. */
    CHECK(sim_af_create(a, f, 1, 1, 8, 1e15, 0, &af, &err) == 0);
    sim_af_parts_get(af, &b, &p);
    CHECK_NEAR(p.layer / 8, fmax(p.a, p.f), 1e-15);
    sim_af_destroy(af);

    /* More FFN instances: each sees fewer tokens. */
    sim_af_parts p1, p4;
    CHECK(sim_af_create(a, f, 4, 1, 1, 50e9, 5e-6, &af, &err) == 0);
    sim_af_parts_get(af, &b, &p1);
    sim_af_destroy(af);
    CHECK(sim_af_create(a, f, 4, 4, 1, 50e9, 5e-6, &af, &err) == 0);
    sim_af_parts_get(af, &b, &p4);
    sim_af_destroy(af);
    CHECK_MSG(p4.f < p1.f, "FFN side %.3g s with 4 FFN instances vs %.3g with 1", p4.f, p1.f);
    CHECK(sim_af_create(a, f, 0, 1, 1, 50e9, 0, &af, &err) == SIM_EINVAL && af == NULL);
    CHECK(sim_af_op_is_ffn("down_proj") && sim_af_op_is_ffn("ep_dispatch") && !sim_af_op_is_ffn("qkv_proj"));
    model_cost_destroy(a);
    model_cost_destroy(f);
}

static void test_af_cluster(void)
{
    for (int pd = 0; pd < 2; pd++) {
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "h200-sxm");
        sc.workload.requests = 300;
        sc.workload.arrival.rate = 20;
        sc.deployment.mode = pd ? SIM_MODE_PD_AF : SIM_MODE_AF;
        int k = 0;
        if (pd) {
            sc.deployment.pools[k].role = SIM_ROLE_PREFILL;
            sc.deployment.pools[k++].instances = 1;
        }
        sc.deployment.pools[k].role = SIM_ROLE_ATTENTION;
        sc.deployment.pools[k++].instances = 2;
        sc.deployment.pools[k].role = SIM_ROLE_FFN;
        sc.deployment.pools[k++].instances = 1;
        sc.deployment.n_pools = k;
        sim_cluster *c = NULL;
        sim_err err = {{0}};
        int rc = sim_cluster_create(&sc, &c, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc) continue;
        sim_summary s;
        CHECK(sim_cluster_run(c, &s, &err) == 0);
        sim_cluster_state st;
        sim_cluster_state_get(c, &st);
        CHECK(st.completed == 300 && st.kv_blocks_used == 0 && st.outstanding_tokens == 0);
        CHECK(s.af.enabled && s.af.ffn_util > 0 && s.af.attention_util > 0 && s.af.activation_bytes > 0);
        CHECK(s.n_gpus == (pd ? 4 : 3));
        CHECK(pd ? s.pd.enabled : !s.pd.enabled);
        sim_cluster_destroy(c);
    }
}

static const test_case cases[] = {
    {"pipeline_formula", test_pipeline_formula},
    {"af_cluster", test_af_cluster},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_af", cases);
}
