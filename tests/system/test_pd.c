/* test_pd — prefill/decode disaggregation: exact timing of one request
 * against both pools' cost models with (nearly) infinite bandwidth, KV
 * transfer time over a NIC by hand, back-pressure when decode memory is
 * short, conservation across pools (every request completes once, KV
 * blocks return on both sides), and the engine's hand-over after the
 * transfer (scheduler.pd_handover_us, pd_handover_gbs) by hand, and an
 * eager context worker's launch floor paid once per iteration of batched
 * prompts; the KV of one request moving over the GPUs that hold it (one
 * attention-DP rank's NIC, the distinct TP shards) by hand, and the decode
 * instance chosen at arrival or at prefill end (deployment.decode_pick),
 * and a context worker scheduling prompts only whole (whole_prompts). */
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"
#include "test_model_util.h"

#include <stdlib.h>

static void pd_scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->deployment.mode = SIM_MODE_PD;
    sc->deployment.n_pools = 2;
    sc->deployment.pools[0].role = SIM_ROLE_PREFILL;
    sc->deployment.pools[0].instances = 1;
    sc->deployment.pools[1].role = SIM_ROLE_DECODE;
    sc->deployment.pools[1].instances = 1;
    sc->deployment.pools[1].parallel.tp = 2;
    sc->network.nic_gbps = 1e12;
    sc->network.nvlink_gbs = 1e12;
    sc->network.latency_us = 0;
    sc->output.sample_interval_s = 0.5;
}

static model_cost *cost_for(int tp, double overhead_us)
{
    return test_cost_model("llama-3.1-8b", "h100-sxm", tp, overhead_us);
}

static sim_time iter_ns(const model_cost *c, const model_batch *b)
{
    return (sim_time)(model_cost_iteration(c, b, NULL) * 1e9 + 0.5);
}

static void check_conserved(const run_result *r, int64_t expect)
{
    CHECK_MSG(r->st.completed == expect, "completed %lld of %lld", (long long)r->st.completed,
              (long long)expect);
    CHECK(r->st.in_flight == 0 && r->st.waiting == 0 && r->st.running == 0);
    CHECK_MSG(r->st.kv_blocks_used == 0, "%lld KV blocks still held", (long long)r->st.kv_blocks_used);
    CHECK(r->st.held == 0 && r->st.kv_pending == 0);
    CHECK_MSG(r->st.outstanding_tokens == 0, "%lld tokens outstanding", (long long)r->st.outstanding_tokens);
}

/* One request: TTFT is the prefill pool's iterations, the rest the decode
 * pool's (tp=2) iterations; with infinite bandwidth the KV move is ~free. */
static void test_exact_single(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.workload.requests = 1;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 3000;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 6;
    sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
    run_result r;
    if (run(&sc, &r) || r.n != 1) {
        free(r.recs);
        return;
    }
    model_cost *pre = cost_for(1, sc.deployment.pools[0].scheduler.overhead_us);
    model_cost *dec = cost_for(2, sc.deployment.pools[1].scheduler.overhead_us);
    if (!pre || !dec) {
        free(r.recs);
        return;
    }
    sim_time t = r.recs[0].arrival;
    model_chunk ch1 = {2048, 0}, ch2 = {952, 2048};
    model_batch b1 = {.n_chunks = 1, .chunks = &ch1}, b2 = {.n_chunks = 1, .chunks = &ch2};
    t += iter_ns(pre, &b1) + iter_ns(pre, &b2);
    CHECK_MSG(r.recs[0].first_token == t, "TTFT %lld vs prefill %lld", (long long)r.recs[0].first_token,
              (long long)t);
    /* Back-pressure none; transfer below a microsecond. */
    CHECK(r.recs[0].kv_reserved == r.recs[0].first_token);
    CHECK_MSG(r.recs[0].kv_arrived - r.recs[0].kv_reserved < 1000, "transfer %lld ns",
              (long long)(r.recs[0].kv_arrived - r.recs[0].kv_reserved));
    sim_time d = r.recs[0].kv_arrived;
    for (int k = 1; k <= 5; k++) {
        model_batch b = {.n_decode = 1, .decode_ctx_sum = 3000 + k};
        d += iter_ns(dec, &b);
        if (k == 1) CHECK(r.recs[0].decode_first == d);
    }
    CHECK_MSG(r.recs[0].finish == d, "finish %lld vs decode %lld", (long long)r.recs[0].finish, (long long)d);
    CHECK(r.sum.pd.enabled && r.sum.pd.moved == 1);
    CHECK_NEAR(r.sum.pd.kv_bytes_moved, 3000.0 * 131072.0, 1.0);
    check_conserved(&r, 1);
    model_cost_destroy(pre);
    model_cost_destroy(dec);
    free(r.recs);
}

/* One GPU per node: the KV crosses one NIC each way at 100 Gb/s. */
static void test_transfer_time(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.hardware.gpus_per_node = 1;
    sc.deployment.pools[1].parallel.tp = 1;
    sc.network.nic_gbps = 100;
    sc.network.latency_us = 7;
    sc.workload.requests = 1;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    double xfer[2];
    int inputs[2] = {1000, 4000};
    for (int i = 0; i < 2; i++) {
        sc.workload.input_tokens.value = inputs[i];
        sc.workload.output_tokens.value = 4;
        run_result r;
        if (run(&sc, &r) || r.n != 1) {
            free(r.recs);
            return;
        }
        double bytes = inputs[i] * 131072.0;
        sim_time want = 7000 + (sim_time)ceil(bytes * 1e9 / (100e9 / 8));
        sim_time got = r.recs[0].kv_arrived - r.recs[0].kv_reserved;
        CHECK_MSG(llabs(got - want) <= 2, "transfer %lld ns, expected %lld", (long long)got, (long long)want);
        xfer[i] = (double)(got - 7000);
        check_conserved(&r, 1);
        /* Layer by layer: only what the link could not move during the
         * prefill is left, and never less than one layer's share. */
        sc.deployment.kv_transfer = SIM_KV_LAYERWISE;
        run_result lw;
        if (run(&sc, &lw) || lw.n != 1) {
            free(r.recs);
            free(lw.recs);
            return;
        }
        sim_time lgot = lw.recs[0].kv_arrived - lw.recs[0].kv_reserved;
        double window = (double)(lw.recs[0].first_token - lw.recs[0].first_scheduled) * 31.0 / 32.0;
        double drain = (double)(want - 7000);
        double left = fmax(bytes / 32, bytes * (1 - fmin(1, window / drain)));
        sim_time lwant = 7000 + (sim_time)ceil(left * 1e9 / (100e9 / 8));
        CHECK_MSG(llabs(lgot - lwant) <= 2 && lgot < got, "layerwise %lld ns, expected %lld (whole %lld)",
                  (long long)lgot, (long long)lwant, (long long)got);
        sc.deployment.kv_transfer = SIM_KV_WHOLE;
        free(r.recs);
        free(lw.recs);
    }
    CHECK_NEAR(xfer[1] / xfer[0], 4.0, 1e-3);
}

/* The decode pool's hand-over: a fixed pd_handover_us after the network's
 * transfer, and an engine KV path of pd_handover_gbs per GPU that makes the
 * transfer last at least bytes / rate (a faster path adds nothing). One GPU
 * per node, 100 Gb/s NIC, 7 µs latency, 1,000 tokens of Llama-3.1-8B KV
 * (131,072 bytes each): the network moves them in 7 µs + 10.486 ms. */
static void test_handover(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.hardware.gpus_per_node = 1;
    sc.deployment.pools[1].parallel.tp = 1;
    sc.network.nic_gbps = 100;
    sc.network.latency_us = 7;
    sc.workload.requests = 1;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 1000;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 4;
    double bytes = 1000 * 131072.0;
    sim_time net = 7000 + (sim_time)ceil(bytes * 1e9 / (100e9 / 8));
    model_cost *dec = cost_for(1, sc.deployment.pools[1].scheduler.overhead_us);
    if (!dec) return;
    model_batch b1 = {.n_decode = 1, .decode_ctx_sum = 1001};
    const struct {
        double us, gbs;
        sim_time want; /* kv_reserved to the request joining the decode side */
    } cases[] = {
        {30000, 0, net + 30000000},                        /* fixed hand-over */
        {0, 2, (sim_time)llround(bytes / 2)},              /* 2 GB/s path: 65.536 ms */
        {5000, 2, (sim_time)llround(bytes / 2) + 5000000}, /* both */
        {0, 20, net},                                      /* path faster than the NIC */
    };
    for (int i = 0; i < 4; i++) {
        sc.deployment.pools[1].scheduler.pd_handover_us = cases[i].us;
        sc.deployment.pools[1].scheduler.pd_handover_gbs = cases[i].gbs;
        run_result r;
        if (run(&sc, &r) || r.n != 1) {
            free(r.recs);
            break;
        }
        sim_time got = r.recs[0].kv_arrived - r.recs[0].kv_reserved;
        CHECK_MSG(llabs(got - cases[i].want) <= 2, "case %d: hand-over ends %lld ns after the reservation, expected %lld",
                  i, (long long)got, (long long)cases[i].want);
        CHECK(r.recs[0].kv_reserved == r.recs[0].first_token);
        CHECK(r.recs[0].decode_first == r.recs[0].kv_arrived + iter_ns(dec, &b1));
        check_conserved(&r, 1);
        free(r.recs);
    }
    model_cost_destroy(dec);
}

/* An eager context worker pays its launch floor once per iteration, not per
 * prompt (docs/cost-model.md, "Disaggregated rows"). The prefill pool runs
 * iterations with a prefill without a CUDA graph at 5 ms per op launch, so
 * an iteration lasts its launches x 5 ms whatever it carries; 8 prompts of
 * 1,000 tokens arrive at once; the first starts an iteration alone (the
 * engine does not wait for more), the other 7 wait for it. Admitting every
 * prompt the 8,192-token budget holds, those 7 share the next iteration,
 * which lasts within 1 % of one chunk's (the floor): first tokens at f1 and
 * f1 + f7, the cost model's iterations of 1 and 7 chunks, a mean of
 * (8 f1 + 7 f7) / 8, about 1.9 floors. Capped at one prompt per iteration
 * (a batch size read as the engine's cap), the k-th first token comes
 * after k single-chunk iterations: a mean of 4.5 floors. */
static void test_context_worker_floor(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.workload.requests = 8;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 8;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 1000;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 2;
    sim_sched_cfg *ps = &sc.deployment.pools[0].scheduler;
    ps->eager_launch_us = 5000;
    ps->max_batched_tokens = 8192;
    ps->chunk_tokens = 8192;
    model_spec m;
    model_gpu g;
    model_cost *pre = NULL;
    sim_err err = {{0}};
    REQUIRE(model_catalog_model("llama-3.1-8b", &m, &err) == 0 && model_catalog_gpu("h100-sxm", &g, &err) == 0);
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .overhead_s = ps->overhead_us * 1e-6, .eager_launch_s = 5e-3, .gpus_per_node = 8};
    REQUIRE_MSG(model_cost_create(&m, &g, &l, &pre, &err) == 0, "%s", err.msg);
    model_chunk one = {1000, 0}, seven[7];
    for (int i = 0; i < 7; i++) seven[i] = one;
    model_batch b1 = {.n_chunks = 1, .chunks = &one}, b7 = {.n_chunks = 7, .chunks = seven};
    const sim_time f1 = iter_ns(pre, &b1), f7 = iter_ns(pre, &b7);
    CHECK_MSG(f7 < 1.01 * f1 && f1 > 100000000, "one chunk %lld ns, seven %lld ns: not floor-bound",
              (long long)f1, (long long)f7);
    for (int cap = 8; cap >= 1; cap -= 7) {
        ps->max_seqs = cap;
        run_result r;
        if (run(&sc, &r) || r.n != 8) {
            free(r.recs);
            break;
        }
        double mean = 0;
        for (int64_t i = 0; i < r.n; i++) {
            sim_time ttft = r.recs[i].first_token - r.recs[i].arrival;
            sim_time want = cap == 8 ? (i == 0 ? f1 : f1 + f7) : (sim_time)(i + 1) * f1;
            CHECK_MSG(ttft == want, "cap %d, request %lld: first token after %lld ns, expected %lld", cap,
                      (long long)i, (long long)ttft, (long long)want);
            mean += (double)ttft / (double)r.n;
        }
        CHECK_NEAR(mean / (double)f1, cap == 8 ? (8.0 * f1 + 7.0 * f7) / (8.0 * f1) : 4.5, 1e-6);
        check_conserved(&r, 8);
        free(r.recs);
    }
    model_cost_destroy(pre);
}

/* A decode pool with little memory makes finished prefills wait. */
static void test_backpressure_and_conservation(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.deployment.pools[0].instances = 2;
    sc.deployment.pools[1].parallel.tp = 1;
    sc.deployment.pools[1].scheduler.gpu_mem_util = 0.27; /* ~40k tokens of KV */
    sc.workload.requests = 600;
    sc.workload.arrival.rate = 40;
    sc.workload.input_tokens.dist = SIM_DIST_UNIFORM;
    sc.workload.input_tokens.min = 500;
    sc.workload.input_tokens.max = 3000;
    sc.workload.output_tokens.dist = SIM_DIST_UNIFORM;
    sc.workload.output_tokens.min = 1;
    sc.workload.output_tokens.max = 600;
    sc.network.nic_gbps = 400;
    sc.network.nvlink_gbs = 450;
    sc.network.latency_us = 5;
    run_result r;
    if (run(&sc, &r)) {
        free(r.recs);
        return;
    }
    CHECK_MSG(!r.sum.overloaded, "%s", r.sum.overload_reason);
    check_conserved(&r, 600 - r.st.rejected);
    CHECK_MSG(r.sum.pd.backpressure_ms.mean > 0, "expected back-pressure, got %g ms",
              r.sum.pd.backpressure_ms.mean);
    CHECK(r.sum.pd.transfer_ms.n == r.sum.pd.moved && r.sum.pd.moved > 0);
    CHECK(r.sum.n_pools == 2 && strcmp(r.sum.pools[0].role, "prefill") == 0);
    CHECK(r.sum.pools[1].gpus == 1 && r.sum.pools[0].gpus == 2);
    free(r.recs);
}

/* The KV moves over the GPUs that hold it, by hand. One GPU per node, a
 * 1 Gb/s NIC each, 7 µs latency, Llama-3.1-8B (8 KV heads, 131,072 bytes
 * a token), 1,000-token prompts: 131.072 MB cross one NIC in 7 µs +
 * 1.0486 s.
 * (a) Attention DP 4 on both sides, two clients: the transfers overlap
 *     (a prefill is far shorter than a transfer); each request's KV is on
 *     one DP rank (ranks rotate over requests), so each crosses its own
 *     rank's NIC at full rate: 7 µs + 1.0486 s each, where striping both
 *     over the four GPUs of each side would take about half that.
 * (b) Prefill TP 2 (two distinct KV-head shards) into a decode DP 2 rank
 *     of one GPU: two stripes of half the bytes meet on the one receiving
 *     NIC, 7 µs + 1.0486 s, where striping over the decode instance's two
 *     GPUs would take half that. */
static void test_transfer_ranks(void)
{
    const struct {
        int ptp, pdp, dtp, ddp, clients;
    } cases[] = {{1, 4, 1, 4, 2}, {2, 1, 1, 2, 1}};
    double bytes = 1000 * 131072.0;
    sim_time want = 7000 + (sim_time)ceil(bytes * 1e9 / (1e9 / 8));
    for (int i = 0; i < 2; i++) {
        sim_scenario sc;
        pd_scenario(&sc);
        sc.hardware.gpus_per_node = 1;
        sc.network.nic_gbps = 1;
        sc.network.latency_us = 7;
        sc.deployment.pools[0].parallel.tp = cases[i].ptp;
        sc.deployment.pools[0].parallel.dp = cases[i].pdp;
        sc.deployment.pools[1].parallel.tp = cases[i].dtp;
        sc.deployment.pools[1].parallel.dp = cases[i].ddp;
        sc.workload.requests = cases[i].clients;
        sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
        sc.workload.arrival.concurrency = cases[i].clients;
        sc.workload.input_tokens.dist = SIM_DIST_FIXED;
        sc.workload.input_tokens.value = 1000;
        sc.workload.output_tokens.dist = SIM_DIST_FIXED;
        sc.workload.output_tokens.value = 4;
        run_result r;
        if (run(&sc, &r) || r.n != cases[i].clients) {
            CHECK_MSG(0, "case %d: %lld requests recorded", i, (long long)r.n);
            free(r.recs);
            continue;
        }
        for (int64_t j = 0; j < r.n; j++) {
            sim_time got = r.recs[j].kv_arrived - r.recs[j].kv_reserved;
            CHECK_MSG(llabs(got - want) <= 2, "case %d request %lld: transfer %lld ns, expected %lld", i,
                      (long long)r.recs[j].id, (long long)got, (long long)want);
            CHECK_NEAR(r.recs[j].kv_bytes, bytes, 1.0);
        }
        if (r.n == 2) /* the two transfers overlap */
            CHECK(r.recs[0].kv_reserved < r.recs[1].kv_arrived && r.recs[1].kv_reserved < r.recs[0].kv_arrived);
        check_conserved(&r, cases[i].clients);
        free(r.recs);
    }
    /* A request's distinct KV: a GQA head repeated on tp / kv_heads ranks
     * and MLA's latent on every TP rank move once. */
    model_cost *c1 = cost_for(1, 0), *c16 = cost_for(16, 0);
    model_cost *mla = test_cost_model("deepseek-v3", "h100-sxm", 8, 0);
    if (c1 && c16) {
        CHECK_NEAR(model_cost_kv_copies(c1), 1.0, 0);
        CHECK_NEAR(model_cost_kv_copies(c16), 2.0, 0);
        CHECK_NEAR(model_cost_kv_bytes_per_token(c16) / model_cost_kv_copies(c16), 131072.0, 1e-6);
    }
    if (mla) CHECK_NEAR(model_cost_kv_copies(mla), 8.0, 0);
    model_cost_destroy(c1);
    model_cost_destroy(c16);
    model_cost_destroy(mla);
}

/* When the decode instance is chosen (deployment.decode_pick). Three
 * prefill instances, two decode instances picked least-loaded; A (4,000
 * tokens, 400 out) arrives at 0, B and C (100 tokens, 200 out) at 1 and
 * 2 ms, each on its own prefill instance, so B's and C's prefills end long
 * before A's. At arrival: A takes one decode instance (400 tokens to go),
 * B the other (200), C joins B (200 < 400). At prefill end: B picks first,
 * C then takes the instance B is not on, A comes last. */
static void test_decode_pick(void)
{
    const char *src = test_src_dir();
    for (int at_arrival = 0; at_arrival < 2; at_arrival++) {
        sim_scenario sc;
        pd_scenario(&sc);
        sc.deployment.pools[0].instances = 3;
        sc.deployment.pools[1].instances = 2;
        sc.deployment.pools[1].parallel.tp = 1;
        sc.deployment.decode_pick = at_arrival ? SIM_DECODE_PICK_ARRIVAL : SIM_DECODE_PICK_PREFILL_END;
        sc.workload.requests = 0;
        sc.workload.trace.format = SIM_TRACE_CSV;
        snprintf(sc.workload.trace.path, sizeof sc.workload.trace.path, "%s/tests/data/pd/pick.csv", src);
        run_result r;
        if (run(&sc, &r) || r.n != 3) {
            CHECK_MSG(0, "%lld requests recorded", (long long)r.n);
            free(r.recs);
            continue;
        }
        const sim_req_record *q[3] = {NULL, NULL, NULL};
        for (int j = 0; j < 3; j++)
            if (r.recs[j].id < 3) q[r.recs[j].id] = &r.recs[j];
        if (!q[0] || !q[1] || !q[2]) {
            CHECK_MSG(0, "request ids not 0..2");
            free(r.recs);
            continue;
        }
        CHECK(q[1]->first_token < q[0]->first_token && q[2]->first_token < q[0]->first_token);
        CHECK(q[0]->prefill_instance != q[1]->prefill_instance && q[1]->prefill_instance != q[2]->prefill_instance);
        if (at_arrival) {
            CHECK_MSG(q[1]->instance == q[2]->instance && q[0]->instance != q[1]->instance,
                      "arrival: decode instances A %d B %d C %d", q[0]->instance, q[1]->instance, q[2]->instance);
        } else {
            CHECK_MSG(q[1]->instance != q[2]->instance, "prefill_end: decode instances B %d C %d", q[1]->instance,
                      q[2]->instance);
        }
        check_conserved(&r, 3);
        free(r.recs);
    }
}

/* scheduler.whole_prompts (TensorRT-LLM's context server without chunked
 * prefill) against the cost model's iterations. A prefill worker with a
 * 1,500-token budget; three 1,000-token prompts A, B, C at t = 0. A starts
 * an iteration alone (the engine does not wait for more). Chunked: B and
 * 500 tokens of C share the next iteration, C's other 500 the one after.
 * Whole: B runs alone, then C: B's first token one single-prompt iteration
 * after A's, C's another after B's. */
static void test_whole_prompts(void)
{
    const char *src = test_src_dir();
    model_cost *pre = NULL;
    for (int whole = 0; whole < 2; whole++) {
        sim_scenario sc;
        pd_scenario(&sc);
        sc.deployment.pools[0].scheduler.max_batched_tokens = 1500;
        sc.deployment.pools[0].scheduler.chunk_tokens = 1500;
        sc.deployment.pools[0].scheduler.whole_prompts = whole;
        sc.workload.requests = 0;
        sc.workload.trace.format = SIM_TRACE_CSV;
        snprintf(sc.workload.trace.path, sizeof sc.workload.trace.path, "%s/tests/data/pd/three.csv", src);
        if (!pre && !(pre = cost_for(1, sc.deployment.pools[0].scheduler.overhead_us))) return;
        run_result r;
        if (run(&sc, &r) || r.n != 3) {
            CHECK_MSG(0, "%lld requests recorded", (long long)r.n);
            free(r.recs);
            continue;
        }
        sim_time ft[3] = {0, 0, 0};
        for (int j = 0; j < 3; j++)
            if (r.recs[j].id < 3) ft[r.recs[j].id] = r.recs[j].first_token;
        model_chunk one = {1000, 0}, two[2] = {{1000, 0}, {500, 0}}, rest = {500, 500};
        model_batch b_one = {.n_chunks = 1, .chunks = &one}, b_two = {.n_chunks = 2, .chunks = two};
        model_batch b_rest = {.n_chunks = 1, .chunks = &rest};
        sim_time want_b = ft[0] + (whole ? iter_ns(pre, &b_one) : iter_ns(pre, &b_two));
        sim_time want_c = want_b + (whole ? iter_ns(pre, &b_one) : iter_ns(pre, &b_rest));
        CHECK_MSG(ft[1] == want_b && ft[2] == want_c, "%s: B's first token %lld (want %lld), C's %lld (want %lld)",
                  whole ? "whole" : "chunked", (long long)ft[1], (long long)want_b, (long long)ft[2],
                  (long long)want_c);
        check_conserved(&r, 3);
        free(r.recs);
    }
    model_cost_destroy(pre);
}

/* pd+af without an ffn pool is refused with the reason. */
static void test_af_needs_ffn(void)
{
    sim_scenario sc;
    pd_scenario(&sc);
    sc.deployment.mode = SIM_MODE_PD_AF;
    sc.deployment.pools[1].role = SIM_ROLE_ATTENTION;
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "needs an ffn pool");
    CHECK(c == NULL);
}

static const test_case cases[] = {
    {"exact_single", test_exact_single},
    {"transfer_time", test_transfer_time},
    {"handover", test_handover},
    {"context_worker_floor", test_context_worker_floor},
    {"backpressure_and_conservation", test_backpressure_and_conservation},
    {"transfer_ranks", test_transfer_ranks},
    {"decode_pick", test_decode_pick},
    {"whole_prompts", test_whole_prompts},
    {"af_needs_ffn", test_af_needs_ffn},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_pd", cases);
}
