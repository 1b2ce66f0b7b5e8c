/* test_search_encode — the images' encode pool as a search dimension
 * (search.encode_instances).
 *
 * The cases are built on Qwen3-VL-2B at tp1 on an H100 priced by the
 * roofline, each request a 200-token text with two 2048 x 2048 images
 * (4,096 tokens each) and 100 output tokens: the vision tower's pass over
 * the two images takes about 136 ms on one GPU, more than twice the
 * language model's prefill of the 8,392-token prompt (about 58 ms).
 *
 * Heavy images, 6 req/s, TTFT p90 <= 300 ms, at most 4 GPUs: colocated, a
 * request's first token waits for its own pass and prefill on its
 * instance (194 ms idle) behind every other request's on that instance;
 * three colocated instances on three GPUs miss the bound, and one
 * instance behind two encoders (three GPUs: the passes run beside the
 * prefills, split over two encoders) meets it, so the search answers 1x
 * tp1 + 2 encoders, ahead of four colocated instances (4 GPUs).
 * Few images (one 512 x 512 image, 256 tokens, a pass of about 2 ms): a
 * single colocated instance meets the SLO and every encoder only adds a
 * GPU, so the search answers 1x tp1 without an encode pool.
 *
 * The bound against closed forms: an encode pool of N encoders caps the
 * rate at N / the tower's one-GPU pass over a request's two images
 * (model_cost_encode, computed here), and colocated encoding adds that
 * pass to the prefill work: 1 / bound(colocated with images) - 1 /
 * bound(the same prompt as text) = the pass. The GPU budget counts the
 * encoders (the serving pools fill what is left), the price averages
 * them in at their GPU type's, the recommended scenario writes
 * deployment.encode and replays the winner's figures exactly (the launch
 * files name the encoders in a NOTE), under
 * search.objective energy the winner's joules per token are the replay's
 * with the encoders' idle power in them, and the refusals name their
 * keys. */
#include "test_util.h"
#include "test_model_util.h"
#include "test_search_util.h"

#include "model_catalog.h"
#include "model_cost.h"
#include "model_vision.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base_yaml =
    "name: t-search-encode\n"
    "model: Qwen/Qwen3-VL-2B-Instruct\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8, perf_db: none}\n"
    "workload:\n"
    "  requests: 400\n"
    "  arrival: {process: poisson, rate: 6}\n"
    "  input_tokens: {dist: fixed, value: 200}\n"
    "  output_tokens: {dist: fixed, value: 100}\n"
    "  images:\n"
    "    per_request: {dist: fixed, value: 2}\n"
    "    width: 2048\n"
    "    height: 2048\n"
    "deployment:\n"
    "  mode: colocated\n"
    "  pools:\n"
    "    - role: colocated\n"
    "      instances: 1\n"
    "      scheduler: {max_seqs: 64, max_batched_tokens: 8192, chunk_tokens: 8192}\n"
    "routing: {policy: least_loaded}\n"
    "slo: {ttft_ms: 300, tpot_ms: 100}\n"
    "search:\n"
    "  max_gpus: 4\n"
    "  rate: 6\n"
    "  modes: colocated\n"
    "  layouts: tp1\n"
    "  max_seqs: \"64\"\n"
    "  max_batched_tokens: \"8192\"\n"
    "  chunk_tokens: \"8192\"\n"
    "  encode_instances: \"0,1,2\"\n"
    "  requests: 400\n";

static int load(const char *const *sets, int n, sim_scenario *sc, sim_err *err)
{
    return sim_loader_load_string(base_yaml, strlen(base_yaml), "test", sets, n, sc, err);
}

/* Creates (and with run, runs) the search of scenario sc; NULL on failure. */
static sim_search *search_sc(const sim_scenario *sc, int run)
{
    sim_err err = {{0}};
    sim_search *s = NULL;
    sim_search_opts o = {.threads = 2, .quiet = 1, .no_prune = 1};
    int rc = sim_search_create(sc, &o, &s, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc == 0 && run) rc = sim_search_run(s, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    if (rc) {
        sim_search_destroy(s);
        return NULL;
    }
    return s;
}

/* The same for base_yaml with sets. */
static sim_search *search_of(const char *const *sets, int n, int run)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    REQUIRE_OR(sc, return NULL);
    int rc = load(sets, n, sc, &err);
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    sim_search *s = rc == 0 ? search_sc(sc, run) : NULL;
    free(sc);
    return s;
}

/* base_yaml with sets, its requests sent as text (no images). */
static int load_text(const char *const *sets, int n, sim_scenario *sc, sim_err *err)
{
    int rc = load(sets, n, sc, err);
    if (rc == 0) {
        sc->workload.images.per_request.value = 0;
        sc->workload.images.width = sc->workload.images.height = 0;
    }
    return rc;
}

static int32_t winner(const sim_search *s)
{
    int32_t w = -1;
    return sim_search_ranking(s, &w, 1) > 0 ? w : -1;
}

/* The candidate with `inst` colocated instances and `enc` encoders, -1 if none. */
static int32_t find(const sim_search *s, int32_t inst, int32_t enc)
{
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        if (c->pools[0].instances == inst && c->encode_instances == enc) return i;
    }
    return -1;
}

/* The tower's seconds over `items` images of side x side on one H100 GPU (Qwen3-VL-2B). */
static double tower_s(int32_t items, int32_t side)
{
    model_cost *c = test_cost_model("Qwen/Qwen3-VL-2B-Instruct", "h100-sxm", 1, 0);
    REQUIRE_OR(c, return -1);
    const model_vision *v = &model_cost_model(c)->vision;
    model_media_grid grid;
    sim_err e = {{0}};
    double t = -1;
    if (model_vision_grid(v, side, side, 0, &grid, "x", &e) == 0)
        t = model_cost_encode(c, v, &grid, items, 1, NULL, 0, NULL, NULL);
    CHECK_MSG(t > 0, "tower: %s", e.msg);
    model_cost_destroy(c);
    return t;
}

/* Heavy images: three colocated GPUs miss the TTFT bound, one instance and two encoders meet it. */
static void case_pool_wins(void)
{
    sim_search *s = search_of(NULL, 0, 1);
    REQUIRE(s);
    /* Fixed rate: every count that fits; 4 + 3 + 2 candidates for 0, 1, 2 encoders. */
    CHECK(sim_search_count(s) == 9);
    const int32_t w = winner(s);
    REQUIRE(w >= 0);
    const sim_search_cand *c = sim_search_cand_get(s, w);
    const sim_search_result *r = sim_search_result_get(s, w);
    CHECK(c->encode_instances == 2 && c->pools[0].instances == 1 && c->gpus == 3);
    CHECK_CONTAINS(c->label, "| enc 2");
    CHECK(r->ttft_ms <= 300);
    printf("  winner %s: %d GPUs, TTFT p90 %.1f ms, %.1f tok/s/GPU\n", c->label, (int)c->gpus, r->ttft_ms,
           r->goodput_per_gpu);
    /* One to three colocated instances miss it (one is overloaded outright: 6 x 194 ms > 1 s a second). */
    for (int32_t k = 1; k <= 3; k++) {
        const int32_t i = find(s, k, 0);
        REQUIRE(i >= 0);
        const sim_search_result *q = sim_search_result_get(s, i);
        CHECK_MSG(q->status == SIM_CAND_SLO_MISSED && strstr(q->reason, k == 1 ? "overloaded" : "TTFT"),
                  "%d colocated: %d (%s)", (int)k, (int)q->status, q->reason);
        if (k == 3) printf("  3 colocated (3 GPUs): %s\n", q->reason);
    }
    const int32_t four = find(s, 4, 0);
    REQUIRE(four >= 0);
    CHECK(sim_search_result_get(s, four)->status == SIM_CAND_OK);
    sim_search_destroy(s);
}

/* Few, small images: the encoders' GPUs buy nothing. */
static void case_pool_loses(void)
{
    const char *sets[] = {"workload.images.per_request.value=1", "workload.images.width=512",
                          "workload.images.height=512"};
    sim_search *s = search_of(sets, 3, 1);
    REQUIRE(s);
    const int32_t w = winner(s);
    REQUIRE(w >= 0);
    const sim_search_cand *c = sim_search_cand_get(s, w);
    CHECK(c->encode_instances == 0 && c->pools[0].instances == 1 && c->gpus == 1);
    CHECK_CONTAINS(c->label, "| enc 0");
    /* The same instance with one encoder meets the SLO too, at half the goodput per GPU. */
    const int32_t e1 = find(s, 1, 1);
    REQUIRE(e1 >= 0);
    CHECK(sim_search_result_get(s, e1)->status == SIM_CAND_OK);
    CHECK_NEAR(sim_search_result_get(s, e1)->goodput_per_gpu, sim_search_result_get(s, w)->goodput_per_gpu / 2, 1e-9);
    printf("  winner %s; the pass over one 512 x 512 image: %.3f ms\n", c->label, tower_s(1, 512) * 1e3);
    sim_search_destroy(s);
}

/* The bound's encoder capacity and colocated pass against closed forms. */
static void case_bound_closed_form(void)
{
    const double pass = tower_s(2, 2048);
    REQUIRE(pass > 0);
    /* One instance, N encoders: the serving instance's bound is far above N / pass for N = 1, 2. */
    const char *sets[] = {"search.max_gpus=3"};
    sim_search *s = search_of(sets, 1, 1);
    REQUIRE(s);
    for (int32_t n = 1; n <= 2; n++) {
        const int32_t i = find(s, 3 - n, n);
        REQUIRE(i >= 0);
        const sim_search_result *r = sim_search_result_get(s, i);
        CHECK_NEAR(r->bound_rate, n / pass, 1e-9 * r->bound_rate);
        CHECK_CONTAINS(r->bound_by, "encode of");
        printf("  %d encoder(s): bound %.4f req/s = %d / %.3f ms\n", (int)n, r->bound_rate, (int)n, pass * 1e3);
    }
    /* Colocated: the pass joins the prefill work of the same prompt as text. */
    const int32_t c3 = find(s, 3, 0);
    REQUIRE(c3 >= 0);
    const sim_search_result *rc = sim_search_result_get(s, c3);
    CHECK_CONTAINS(rc->bound_by, "prefill");
    const double with_images = rc->bound_rate;
    sim_search_destroy(s);
    const char *text[] = {"search.max_gpus=3", "workload.input_tokens.value=8392", "search.encode_instances=''",
                          "search.rate=0.1"};
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    CHECK_MSG(load_text(text, 4, sc, &err) == 0, "%s", err.msg);
    s = search_sc(sc, 1);
    free(sc);
    REQUIRE(s);
    const int32_t t3 = find(s, 3, -1);
    REQUIRE(t3 >= 0);
    const sim_search_result *rt = sim_search_result_get(s, t3);
    CHECK_CONTAINS(rt->bound_by, "prefill");
    /* Per instance: 1 / (8392 tokens x s/token + pass) against 1 / (8392 x s/token). */
    CHECK_NEAR(3 / with_images - 3 / rt->bound_rate, pass, 1e-9);
    printf("  colocated: 3 / %.4f - 3 / %.4f req/s = %.3f ms, the pass\n", with_images, rt->bound_rate, pass * 1e3);
    sim_search_destroy(s);
}

/* Budget, price, label, JSON fields, a deployment.encode.gpu no pool runs. */
static void case_budget_and_price(void)
{
    const char *sets[] = {"search.rate=0", "search.prices=h100-sxm=2,h200-sxm=3"};
    sim_search *s = search_of(sets, 2, 0);
    REQUIRE(s);
    /* Max-rate search: the serving instances fill what the encoders leave. */
    CHECK(sim_search_count(s) == 3);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        CHECK(c->gpus == 4 && c->pools[0].instances + c->encode_instances == 4);
        CHECK_NEAR(sim_search_result_get(s, i)->price, 2.0, 0);
    }
    sim_search_destroy(s);
    /* Encoders on H200s beside H100 instances: a fleet of two GPU types, priced per GPU. */
    const char *h200[] = {"search.max_gpus=2", "search.prices=h100-sxm=2,h200-sxm=3", "search.gpus=h100-sxm,h200-sxm",
                          "deployment.encode.gpu=h200-sxm", "search.encode_instances=1", "search.rate=0.5"};
    s = search_of(h200, 6, 1);
    REQUIRE(s);
    int seen = 0;
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        const sim_search_result *r = sim_search_result_get(s, i);
        CHECK(strcmp(c->encode_gpu, "h200-sxm") == 0 && c->gpus == 2);
        if (strcmp(c->gpu, "h100-sxm") == 0) {
            /* No H100 candidate runs a pool on H200: the cluster prices the tower with such a pool's model. */
            CHECK_CONTAINS(c->label, "| enc 1@h200-sxm");
            CHECK_MSG(r->status == SIM_CAND_INFEASIBLE && strstr(r->reason, "deployment.encode.gpu"), "%s", r->reason);
            CHECK_NEAR(r->price, (1 * 2.0 + 1 * 3.0) / 2, 1e-12);
            seen++;
        } else {
            CHECK_MSG(r->status == SIM_CAND_OK, "%s", r->reason);
            CHECK_NEAR(r->price, 3.0, 0);
        }
    }
    CHECK(seen == 1);
    sim_search_destroy(s);
    /* A heterogeneous PD fleet: the encoders take the prefill pool's type (the first pool's). */
    const char *het[] = {"search.rate=0", "search.prices=h100-sxm=2,h200-sxm=3", "search.modes=pd",
                         "search.prefill_gpus=h100-sxm", "search.decode_gpus=h200-sxm", "search.encode_instances=1"};
    s = search_of(het, 6, 0);
    REQUIRE(s);
    CHECK(sim_search_count(s) > 0);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        const int32_t np = c->pools[0].instances * c->pools[0].gpus, nd = c->pools[1].instances * c->pools[1].gpus;
        CHECK(strcmp(c->encode_gpu, "h100-sxm") == 0 && c->gpus == np + nd + 1 && c->gpus <= 4);
        CHECK_CONTAINS(c->label, "| enc 1@h100-sxm");
        CHECK_NEAR(sim_search_result_get(s, i)->price, ((np + 1) * 2.0 + nd * 3.0) / c->gpus, 1e-12);
    }
    sim_search_destroy(s);
}

/* recommended.yaml writes deployment.encode and replays the winner exactly. */
static void case_replay(void)
{
    sim_search *s = search_of(NULL, 0, 1);
    REQUIRE(s);
    const int32_t w = winner(s);
    REQUIRE(w >= 0);
    const sim_search_result *r = sim_search_result_get(s, w);
    sim_scenario *back = malloc(sizeof *back);
    REQUIRE(back);
    sim_summary sum;
    CHECK(test_search_replay(s, w, back, &sum) == 0);
    CHECK(back->deployment.encode_instances == 2 && back->deployment.pools[0].instances == 1);
    CHECK(sum.encode.pool && sum.encode.encoders == 2);
    CHECK_NEAR(sum.ttft_ms.p90, r->ttft_ms, 1e-9 * r->ttft_ms);
    CHECK_NEAR(sum.tpot_ms.p90, r->tpot_ms, 1e-9 * r->tpot_ms);
    /* The run's per-GPU figure counts the encoders, as the search does. */
    CHECK_NEAR(sum.output_tokens_per_s_per_gpu, r->run_tok_s_gpu, 1e-9 * r->run_tok_s_gpu);
    /* The launch files cannot start the encoders: a NOTE says so. */
    static char buf[65536];
    sim_err err = {{0}};
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    REQUIRE(m);
    CHECK(sim_search_write_launch(s, w, SIM_LAUNCH_VLLM, m, &err) == 0);
    fclose(m);
    const char *text = buf;
    CHECK_CONTAINS(text, "# NOTE: the images' vision tower was simulated in an encode pool of 2 one-GPU encoders on "
                        "h100-sxm");
    free(back);
    sim_search_destroy(s);
}

/* search.objective energy: the encoders' power is in each probe's joules, as in the replay's. */
static void case_energy(void)
{
    const char *sets[] = {"search.objective=energy"};
    sim_search *s = search_of(sets, 1, 1);
    REQUIRE(s);
    const int32_t w = winner(s);
    REQUIRE(w >= 0);
    const sim_search_cand *c = sim_search_cand_get(s, w);
    const sim_search_result *r = sim_search_result_get(s, w);
    CHECK(c->encode_instances == 2 && r->joules_per_token > 0);
    sim_scenario *back = malloc(sizeof *back);
    REQUIRE(back);
    sim_summary sum;
    CHECK(test_search_replay(s, w, back, &sum) == 0);
    CHECK(back->energy.enabled && sum.energy.enabled);
    CHECK_NEAR(sum.energy.joules_per_output_token, r->joules_per_token, 1e-9 * r->joules_per_token);
    /* Three GPUs draw at least their idle power over the run: the encoders are counted. */
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    CHECK_NEAR(sum.energy.gpu_idle_j, 3 * g.power_idle_w * sum.energy.span_s, 1e-9 * sum.energy.gpu_idle_j);
    printf("  energy: %s at %.4f J/token\n", c->label, r->joules_per_token);
    free(back);
    sim_search_destroy(s);
}

static void refused(const char *const *sets, int n, const char *want) { test_search_refused(base_yaml, sets, n, want); }

static void case_refusals(void)
{
    {
        sim_scenario *sc = malloc(sizeof *sc);
        REQUIRE(sc);
        sim_err err = {{0}};
        sim_search *s = NULL;
        CHECK(load_text(NULL, 0, sc, &err) == 0);
        sim_search_opts o = {.threads = 1, .quiet = 1};
        CHECK(sim_search_create(sc, &o, &s, &err) == SIM_EINVAL && !s);
        CHECK_CONTAINS(err.msg, "search.encode_instances: an encode pool needs image inputs");
        free(sc);
    }
    const char *range[] = {"search.encode_instances=0,4"};
    refused(range, 1, "search.encode_instances: '4' is not an integer from 0 to 3");
    const char *twice[] = {"search.encode_instances=1,2,1"};
    refused(twice, 1, "search.encode_instances: 1 listed twice");
    const char *empty[] = {"search.encode_instances=' , '"};
    refused(empty, 1, "search.encode_instances: expected a comma-separated list");
    const char *af[] = {"search.modes=colocated,af"};
    refused(af, 1, "search.modes: af with workload.images: image inputs with attention/FFN disaggregation");
    const char *gpu[] = {"deployment.encode.gpu=h999"};
    refused(gpu, 1, "deployment.encode.gpu");
    const char *whole[] = {"search.encode_instances=''", "deployment.encode.instances=4"};
    refused(whole, 2, "deployment.encode.instances: 4 encoders leave no GPU of search.max_gpus = 4");
    const char *auto_[] = {"deployment.pools.0.autoscale.enabled=true", "deployment.pools.0.autoscale.max=2",
                           "search.rate=0"};
    refused(auto_, 3, "search.encode_instances: an encode pool is not modelled with autoscaling");
    /* Without the key, the scenario's pool size alone, counted in the budget, with a note. */
    const char *fixed[] = {"search.encode_instances=''", "deployment.encode.instances=1"};
    sim_search *s = search_of(fixed, 2, 0);
    REQUIRE(s);
    CHECK(sim_search_count(s) == 3);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        CHECK(c->encode_instances == 1 && c->gpus == c->pools[0].instances + 1);
        CHECK_CONTAINS(c->label, "| enc 1");
    }
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    CHECK_CONTAINS(st.notes, "deployment.encode.instances 1: every candidate has that encode pool");
    sim_search_destroy(s);
    /* Colocated encoding in pipeline stages is not modelled: such a candidate is infeasible, the pool's is not. */
    const char *pp[] = {"search.layouts=tp1pp2", "search.encode_instances=0,1", "search.rate=0.5"};
    s = search_of(pp, 3, 1);
    REQUIRE(s);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        const sim_search_result *r = sim_search_result_get(s, i);
        if (c->encode_instances == 0)
            CHECK_MSG(r->status == SIM_CAND_INFEASIBLE && strstr(r->reason, "pipeline stages"), "%s", r->reason);
        else
            CHECK_MSG(r->status != SIM_CAND_INFEASIBLE, "%s", r->reason);
    }
    sim_search_destroy(s);
}

static const test_case cases[] = {
    {"pool_wins", case_pool_wins},
    {"pool_loses", case_pool_loses},
    {"bound_closed_form", case_bound_closed_form},
    {"budget_and_price", case_budget_and_price},
    {"replay", case_replay},
    {"energy", case_energy},
    {"refusals", case_refusals},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_encode", cases);
}
