/* test_encode — multimodal requests end to end (workload.images,
 * deployment.encode; sim_cluster_encode.c).
 *
 * Colocated: one Qwen3-VL-8B request with two 1024 x 768 images (2 x 768
 * tokens) against the same request sent as text of the same total length:
 * its first token comes later by exactly the tower's pass, which is
 * model_cost_encode's price for two images on that GPU, and nothing else
 * moves. Encode pool (E -> P -> D): the encoder on a node of its own, so
 * the embeddings (1,536 tokens x 4096 x 2 bytes) cross the NIC: the
 * transfer is the network latency plus bytes over the NIC by hand, the
 * request reaches its prefill instance encode + transfer later, and the
 * pool's busy share is that encode over the run; a second request waits
 * for the one encoder, and an encoder backlog overloads the run.
 * A Gemma-4 video (16 frames of 640 x 480, 63 tokens each) the same way.
 * The tower's weights come out of the KV of the GPUs that encode
 * (colocated, prefill), not of decode GPUs or behind an encode pool.
 * Refusals: images on a text-only model, on an unpriced tower (a
 * Kimi-K2.5 video is accepted), an encode pool without images or on a GPU
 * no pool runs, pipeline stages with colocated
 * encoding, an encode pool without images in a search (with images the
 * search keeps it, counted in the budget), and the loader's key checks. */
#include "model_cost.h"
#include "model_vision.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"
#include "test_util.h"
#include "test_cluster_util.h"
#include "test_model_util.h"

static void vl_scenario(sim_scenario *sc, int images, int text_tokens)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "Qwen/Qwen3-VL-8B-Instruct");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    snprintf(sc->hardware.perf_db, sizeof sc->hardware.perf_db, "none");
    sc->workload.requests = 1;
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = text_tokens;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = 4;
    if (images > 0) {
        sc->workload.images.per_request.dist = SIM_DIST_FIXED;
        sc->workload.images.per_request.value = images;
        sc->workload.images.width = 1024;
        sc->workload.images.height = 768;
    }
    sc->deployment.pools[0].instances = 1;
    sc->deployment.pools[0].scheduler.chunk_tokens = 8192;
    sc->deployment.pools[0].scheduler.max_batched_tokens = 8192;
}

/* The tower's seconds for n items (w x h pixels, videos of `frames`
 * frames when > 0) of `model` on one H100. */
static double tower_item_s(const char *model, int32_t w, int32_t h, int32_t frames, int n)
{
    model_cost *c = test_cost_model(model, "h100-sxm", 1, 0);
    if (!c) return -1;
    const model_vision *v = &model_cost_model(c)->vision;
    model_media_grid grid;
    sim_err e = {""};
    double s = -1;
    if (model_vision_grid(v, w, h, frames, &grid, "x", &e)) CHECK_MSG(0, "tower: %s", e.msg);
    else s = model_cost_encode(c, v, &grid, n, 1, NULL, 0, NULL, NULL);
    model_cost_destroy(c);
    return s;
}

/* The tower's seconds for n Qwen3-VL-8B images of 1024 x 768 on one H100. */
static double tower_s(int n) { return tower_item_s("Qwen/Qwen3-VL-8B-Instruct", 1024, 768, 0, n); }

/* One request of `model` with `items` items (w x h, `frames` frames) of
 * `per_item` tokens each, against the same request as text of the same
 * length: its first token comes later by exactly the tower's pass. */
static void colocated_case(const char *model, const char *family, int items, int32_t w, int32_t h, int32_t frames,
                           int64_t per_item)
{
    sim_scenario sc;
    run_result a, b;
    vl_scenario(&sc, items, 500);
    snprintf(sc.model, sizeof sc.model, "%s", model);
    sc.workload.images.width = w;
    sc.workload.images.height = h;
    sc.workload.images.frames = frames;
    if (run(&sc, &a)) return;
    vl_scenario(&sc, 0, 500 + (int)(items * per_item));
    snprintf(sc.model, sizeof sc.model, "%s", model);
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE_OR(a.n == 1 && b.n == 1, free(a.recs); free(b.recs); return);
    const double enc = tower_item_s(model, w, h, frames, items);
    const sim_encode_summary *en = &a.sum.encode;
    CHECK(en->enabled && !en->pool && en->requests == 1 && en->items == items && en->tokens == items * per_item &&
          en->tokens_per_item == per_item && !strcmp(en->family, family));
    CHECK(!b.sum.encode.enabled);
    CHECK(a.recs[0].input_tokens == 500 + items * per_item && b.recs[0].input_tokens == a.recs[0].input_tokens);
    CHECK_NEAR(en->encode_ms, enc * 1e3, 1e-9);
    /* The first iteration (the whole prompt) takes the tower's pass longer:
     * within the two iterations' rounding to whole ns. */
    const sim_time dt = (a.recs[0].first_token - a.recs[0].arrival) - (b.recs[0].first_token - b.recs[0].arrival);
    const sim_time want = (sim_time)(enc * 1e9 + 0.5);
    CHECK_MSG(llabs(dt - want) <= 1, "%s: TTFT grew by %lld ns, the tower takes %lld ns", model, (long long)dt,
              (long long)want);
    CHECK(a.recs[0].first_scheduled - a.recs[0].arrival == b.recs[0].first_scheduled - b.recs[0].arrival);
    CHECK(a.recs[0].finish - a.recs[0].first_token == b.recs[0].finish - b.recs[0].first_token);
    CHECK_NEAR(en->ttft_share, en->encode_ms / a.sum.ttft_ms.mean, 1e-12);
    printf("colocated %s: TTFT %.3f ms with %d item(s) of %lld tokens (%d frames), %.3f ms as text; tower %.3f ms\n",
           model, a.sum.ttft_ms.mean, items, (long long)per_item, (int)frames, b.sum.ttft_ms.mean, enc * 1e3);
    char *js = test_summary_json(&a.sum);
    char want_js[96];
    snprintf(want_js, sizeof want_js, "\"encode\": {\"family\": \"%s\", \"pool\": false", family);
    CHECK(js && strstr(js, want_js));
    free(js);
    free(a.recs);
    free(b.recs);
}

static void test_colocated_ttft(void)
{
    colocated_case("Qwen/Qwen3-VL-8B-Instruct", "qwen3_vl", 2, 1024, 768, 0, 768);
    /* A Gemma-4 video: 16 frames of 640 x 480 at 63 tokens each. */
    colocated_case("google/gemma-4-26B-A4B", "gemma4", 1, 640, 480, 16, 16 * 63);
}

static void pd_scenario(sim_scenario *sc, int images, int text_tokens, int encoders)
{
    vl_scenario(sc, images, text_tokens);
    sc->hardware.gpus_per_node = 2;
    sc->network.nic_gbps = 400;
    sc->network.latency_us = 5;
    sc->deployment.mode = SIM_MODE_PD;
    sc->deployment.n_pools = 2;
    sc->deployment.pools[1] = sc->deployment.pools[0];
    sc->deployment.pools[0].role = SIM_ROLE_PREFILL;
    sc->deployment.pools[1].role = SIM_ROLE_DECODE;
    sc->deployment.encode_instances = encoders;
}

static void test_epd_transfer(void)
{
    sim_scenario sc;
    run_result a, b;
    /* Prefill GPU 0 and decode GPU 1 on node 0, the encoder GPU 2 on node 1. */
    pd_scenario(&sc, 2, 500, 1);
    if (run(&sc, &a)) return;
    pd_scenario(&sc, 0, 500 + 2 * 768, 0);
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE_OR(a.n == 1 && b.n == 1, free(a.recs); free(b.recs); return);
    const sim_encode_summary *en = &a.sum.encode;
    CHECK(en->enabled && en->pool && en->encoders == 1 && en->requests == 1 && en->wait_ms == 0);
    CHECK(a.sum.n_gpus == 3 && b.sum.n_gpus == 2);
    const double bytes = 1536.0 * 4096 * 2;
    CHECK_NEAR(en->embedding_bytes, bytes, 1e-3);
    /* Alone on the NIC (400 Gb/s = 50 GB/s): 5 us + ⌈bytes / 50 GB/s⌉ ns. */
    const sim_time xfer = 5000 + (sim_time)ceil(bytes * 1e9 / 50e9);
    CHECK_NEAR(en->transfer_ms, xfer * 1e-6, 1e-9);
    const double enc = tower_s(2);
    CHECK_NEAR(en->encode_ms, enc * 1e3, 1e-9);
    const sim_time svc = (sim_time)(enc * 1e9 + 0.5);
    /* The prefill instance sees the request encode + transfer later; the
     * prefill, KV move and decode after it are the text request's. */
    const sim_time dq = (a.recs[0].first_scheduled - a.recs[0].arrival) - (b.recs[0].first_scheduled - b.recs[0].arrival);
    CHECK_MSG(dq == svc + xfer, "reached the prefill %lld ns later, encode %lld + transfer %lld", (long long)dq,
              (long long)svc, (long long)xfer);
    CHECK(a.recs[0].first_token - a.recs[0].first_scheduled == b.recs[0].first_token - b.recs[0].first_scheduled);
    CHECK(a.recs[0].finish - a.recs[0].first_token == b.recs[0].finish - b.recs[0].first_token);
    CHECK(a.recs[0].kv_bytes == b.recs[0].kv_bytes && a.recs[0].kv_bytes > 0);
    CHECK_NEAR(en->utilization, svc * 1e-9 / a.sum.sim_time_s, 1e-12);
    printf("E->P->D: encode %.3f ms, embeddings %.1f MB over the NIC %.4f ms\n", en->encode_ms, bytes / 1e6,
           en->transfer_ms);
    free(a.recs);
    free(b.recs);
}

/* The pool under load: a second request waits for the one encoder. */
static void test_pool_queue(void)
{
    sim_scenario sc;
    run_result a;
    pd_scenario(&sc, 1, 100, 1);
    sc.workload.requests = 2;
    sc.workload.arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.arrival.rate = 1e6; /* 1 us apart */
    if (run(&sc, &a)) return;
    const double enc = tower_s(1);
    const sim_encode_summary *en = &a.sum.encode;
    CHECK(en->requests == 2 && en->items == 2);
    /* The second waits the first's encode less the 1 us between them. */
    CHECK_NEAR(en->wait_ms, ((sim_time)(enc * 1e9 + 0.5) - 1000) * 1e-6 / 2, 1e-6);
    free(a.recs);
    /* A backlog at the encoder counts as queued: 300 req/s against one
     * encoder of ~130 per second overloads the run (with prefix-cache keys
     * on the requests left queued, freed at destroy). */
    pd_scenario(&sc, 1, 100, 1);
    sc.workload.requests = 5000;
    sc.workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc.workload.arrival.rate = 300;
    sc.overload.enabled = 1;
    sc.overload.max_waiting = 50;
    sc.cache.enabled = 1;
    if (run(&sc, &a)) return;
    CHECK(a.sum.overloaded == 1);
    CHECK_CONTAINS(a.sum.overload_reason, "overload.max_waiting");
    free(a.recs);
}

/* Pool p's KV tokens per instance of scenario sc (-1 when it is refused). */
static int64_t pool_kv(const sim_scenario *sc, int32_t p)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    if (sim_cluster_create(sc, &c, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return -1;
    }
    int64_t t = sim_cluster_pool_kv_tokens(c, p);
    sim_cluster_destroy(c);
    return t;
}

/* The vision tower's weights (1,146,544,128 bytes for Qwen3-VL-8B) come
 * out of the KV of every GPU that encodes: a colocated instance and a
 * prefill instance lose 1,146,544,128 / 147,456 = 7,775.5 tokens (vLLM's
 * rule, a fraction of all memory), a decode instance nothing, and with an
 * encode pool the front instances keep their KV. */
static void test_tower_memory(void)
{
    sim_scenario sc;
    vl_scenario(&sc, 0, 100);
    const int64_t text = pool_kv(&sc, 0);
    vl_scenario(&sc, 1, 100);
    const int64_t colo = pool_kv(&sc, 0);
    const double want = 1146544128.0 / (36.0 * 8 * 128 * 2 * 2);
    CHECK_MSG(fabs((double)(text - colo) - want) <= 1.0, "colocated: %lld tokens fewer, by hand %.1f",
              (long long)(text - colo), want);
    sc.deployment.encode_instances = 1;
    CHECK(pool_kv(&sc, 0) == text);
    pd_scenario(&sc, 1, 100, 0);
    CHECK(text - pool_kv(&sc, 0) == text - colo); /* prefill encodes */
    CHECK(pool_kv(&sc, 1) == text);                /* decode does not */
    pd_scenario(&sc, 1, 100, 1);
    CHECK(pool_kv(&sc, 0) == text && pool_kv(&sc, 1) == text);
    printf("KV per H100 instance: %lld tokens as text, %lld holding the tower\n", (long long)text, (long long)colo);
}

static void refuse(sim_scenario *sc, const char *a, const char *b)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    int rc = sim_cluster_create(sc, &c, &err);
    CHECK_MSG(rc == SIM_EINVAL && c == NULL, "expected a refusal mentioning %s", a);
    CHECK_CONTAINS(err.msg, a);
    if (b) CHECK_CONTAINS(err.msg, b);
    sim_cluster_destroy(c);
}

static void test_refused(void)
{
    sim_scenario sc;
    vl_scenario(&sc, 1, 100);
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    refuse(&sc, "workload.images", "no vision_config");
    vl_scenario(&sc, 1, 100);
    snprintf(sc.model, sizeof sc.model, "nvidia/MiniMax-M3-NVFP4");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "b200");
    sc.deployment.pools[0].parallel.tp = 8;
    refuse(&sc, "workload.images", "clip_vision_model");
    /* Kimi-K2.5 takes videos (chunks of 4 frames): accepted. */
    vl_scenario(&sc, 1, 100);
    snprintf(sc.model, sizeof sc.model, "nvidia/Kimi-K2.5-NVFP4");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "b200");
    sc.deployment.pools[0].parallel.tp = 8;
    sc.workload.images.frames = 16;
    {
        sim_err e = {""};
        sim_cluster *c = NULL;
        CHECK_MSG(sim_cluster_create(&sc, &c, &e) == 0, "%s", e.msg);
        sim_cluster_destroy(c);
    }
    vl_scenario(&sc, 0, 100);
    sc.deployment.encode_instances = 2;
    refuse(&sc, "deployment.encode.instances", "needs image inputs");
    vl_scenario(&sc, 1, 100);
    sc.deployment.encode_instances = 2;
    snprintf(sc.deployment.encode_gpu, sizeof sc.deployment.encode_gpu, "b200");
    refuse(&sc, "deployment.encode.gpu", "runs no pool");
    vl_scenario(&sc, 1, 100);
    sc.deployment.pools[0].parallel.pp = 2;
    refuse(&sc, "deployment.pools.0.parallel.pp", "pipeline stages");
    /* A search keeps the scenario's encode pool in every candidate, its
     * encoders counted in the GPU budget (search.encode_instances sizes it;
     * tests/system/test_search_encode.c); without images it is refused. */
    vl_scenario(&sc, 1, 100);
    sc.deployment.encode_instances = 2;
    sc.slo.ttft_ms = 1000;
    {
        sim_search *s = NULL;
        sim_err e = {""};
        CHECK_MSG(sim_search_create(&sc, NULL, &s, &e) == 0, "%s", e.msg);
        int32_t n = s ? sim_search_count(s) : 0, bad = 0;
        for (int32_t i = 0; i < n; i++) {
            const sim_search_cand *c = sim_search_cand_get(s, i);
            int32_t g = c->encode_instances;
            for (int32_t p = 0; p < c->n_pools; p++) g += c->pools[p].instances * c->pools[p].gpus;
            bad += c->encode_instances != 2 || c->gpus != g || c->gpus > sc.search.max_gpus;
        }
        CHECK(n > 0 && bad == 0);
        sim_search_destroy(s);
    }
    vl_scenario(&sc, 0, 100);
    sc.deployment.encode_instances = 2;
    sc.slo.ttft_ms = 1000;
    {
        sim_search *s = NULL;
        sim_err e = {""};
        CHECK(sim_search_create(&sc, NULL, &s, &e) == SIM_EINVAL && s == NULL);
        CHECK_CONTAINS(e.msg, "deployment.encode.instances");
        CHECK_CONTAINS(e.msg, "needs image inputs");
    }
    /* The loader's own checks, with key paths. */
    const char *bad[][2] = {
        {"model: Qwen/Qwen3-VL-8B-Instruct\nworkload: {images: {width: 640, height: 480}}\n",
         "workload.images.per_request"},
        {"model: Qwen/Qwen3-VL-8B-Instruct\nworkload: {images: {per_request: {value: 2}}}\n",
         "workload.images.width"},
        {"model: Qwen/Qwen3-VL-8B-Instruct\nworkload: {images: {per_request: {value: 2}, width: 0, height: 4}}\n",
         "workload.images.width"},
        {"model: Qwen/Qwen3-VL-8B-Instruct\ndeployment: {encode: {instances: -1}}\n", "deployment.encode.instances"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sim_scenario s2;
        sim_err e = {""};
        CHECK_MSG(sim_loader_load_string(bad[i][0], strlen(bad[i][0]), "t.yaml", NULL, 0, &s2, &e) < 0,
                  "accepted: %s", bad[i][0]);
        CHECK_CONTAINS(e.msg, bad[i][1]);
    }
}

static const test_case cases[] = {
    {"colocated_ttft", test_colocated_ttft},
    {"epd_transfer", test_epd_transfer},
    {"pool_queue", test_pool_queue},
    {"tower_memory", test_tower_memory},
    {"refused", test_refused},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_encode", cases);
}
