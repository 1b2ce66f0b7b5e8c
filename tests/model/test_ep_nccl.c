/* test_ep_nccl — expert parallelism without DeepEP: ep_mode alltoall (one
 * NCCL all-to-all of every (token, expert) pair each way, packed by
 * destination before and un-permuted after) and ep_mode allgather (an
 * all-gather of every rank's tokens and a reduce-scatter of the outputs).
 * Prices checked by hand from the α–β collectives model (model_comm.h)
 * and the h100-sxm catalogue entry (450 GB/s NVLink × 0.95, 50 GB/s NIC ×
 * 0.92, 3.8 µs per call, 0.6 µs per NVLink step, 5 µs per NIC step) for
 * DeepSeek-V3 in block fp8 (hidden 7168, top-8, 1 + 4/128 bytes a
 * dispatched value, bf16 combine) at attention DP × EP on H100 nodes of 8;
 * the mode as each phase takes it; the key from a scenario to the cost
 * model through `servesim predict`, and a bad value refused with its key
 * path. The perf-db price from NCCL's measured alltoall rows is in
 * test_calib_families (case ep_alltoall). */
#include "model_catalog.h"
#include "model_cost.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double H = 7168, K = 8, AB = 1.0 + 4.0 / 128.0, BF16 = 2.0;
static const double NVL = 450e9 * 0.95, NIC = 50e9 * 0.92, BASE = 3.8e-6, A_NVL = 0.6e-6, A_NIC = 5e-6;

static model_cost *make(int dp, model_ep_mode mode)
{
    model_layout l = {.tp = 1, .pp = 1, .dp = dp, .ep = dp, .ep_mode = mode, .dtype = MODEL_DTYPE_FP8_BLOCK,
                      .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    return test_cost_layout("deepseek-v3", "h100-sxm", &l);
}

/* Per-call time of op `name` in batch b (-1 when absent); *bytes its bytes a call. */
static double per_call(model_cost *c, const model_batch *b, const char *name, double *bytes, char *detail)
{
    model_op ops[256];
    int32_t n = 0;
    model_cost_breakdown(c, b, ops, 256, &n, NULL);
    const model_op *o = test_find_op(ops, n, name);
    if (!o) return -1;
    if (bytes) *bytes = o->bytes / o->count;
    if (detail) snprintf(detail, 64, "%s", o->detail);
    return o->time_s / o->count;
}

/* One node, EP 8: a decode batch of 64 (8 tokens a rank) and a 4096-token
 * prefill chunk (all 4096 on the rank that holds the request). A rank's send buffer is its tokens × top-8
 * rows; 1/8 of it stays on the rank, 7/8 crosses NVLink:
 * t = base + α_nvl + 7/8 · B / bw_nvl. */
static void test_alltoall_one_node(void)
{
    model_cost *c = make(8, MODEL_EP_ALLTOALL);
    REQUIRE(c != NULL);
    CHECK(model_cost_ep_mode(c, 0) == MODEL_EP_ALLTOALL && model_cost_ep_mode(c, 1) == MODEL_EP_ALLTOALL);
    model_batch dec = {0, NULL, 64, 64 * 2000, 0};
    model_chunk ch = {4096, 0};
    model_batch pf = {1, &ch, 0, 0, 0};
    const model_batch *bs[] = {&dec, &pf};
    const double S[] = {8, 4096};
    for (int i = 0; i < 2; i++) {
        double bd = 0, bc = 0;
        char det[64] = "";
        double td = per_call(c, bs[i], "ep_dispatch", &bd, det), tc = per_call(c, bs[i], "ep_combine", &bc, NULL);
        double hd = S[i] * K * H * AB, hc = S[i] * K * H * BF16;
        CHECK_NEAR(bd, hd, 1e-6);
        CHECK_NEAR(bc, hc, 1e-6);
        double want_d = BASE + A_NVL + 7.0 / 8.0 * hd / NVL, want_c = BASE + A_NVL + 7.0 / 8.0 * hc / NVL;
        printf("EP8 %4.0f tokens a rank: dispatch %.2f us (hand %.2f), combine %.2f us (hand %.2f)\n", S[i],
               td * 1e6, want_d * 1e6, tc * 1e6, want_c * 1e6);
        CHECK_NEAR(td, want_d, 1e-12);
        CHECK_NEAR(tc, want_c, 1e-12);
        CHECK_MSG(strstr(det, "all_to_all direct nvlink n=8") != NULL, "detail %s", det);
        /* Packed before (read once, written top-k times), un-permuted and
         * weighted after (top-k bf16 rows read, one written). */
        double bp = 0, bu = 0;
        CHECK(per_call(c, bs[i], "ep_pack", &bp, NULL) > 0 && per_call(c, bs[i], "ep_unpack", &bu, NULL) > 0);
        CHECK_NEAR(bp, S[i] * H * AB * (1 + K), 1e-6);
        CHECK_NEAR(bu, S[i] * H * BF16 * (1 + K), 1e-6);
        /* Tokens arrive by source: no DeepEP slots, the contiguous layout. */
        CHECK(per_call(c, bs[i], "moe_permute", NULL, NULL) > 0);
    }
    CHECK(model_cost_expert_buffer_bytes(c) == 0);
    model_cost_destroy(c);
}

/* Two nodes, EP 16: 7 of a rank's 16 shares go over NVLink, 8 over its
 * NIC, concurrently: t = base + α_nic + max(7/16 · B / bw_nvl, 8/16 · B / bw_nic). */
static void test_alltoall_two_nodes(void)
{
    model_cost *c = make(16, MODEL_EP_ALLTOALL);
    REQUIRE(c != NULL);
    model_batch dec = {0, NULL, 16 * 32, 16 * 32 * 2000, 0};
    double bd = 0;
    char det[64] = "";
    double td = per_call(c, &dec, "ep_dispatch", &bd, det);
    double hd = 32 * K * H * AB;
    CHECK_NEAR(bd, hd, 1e-6);
    double t_in = 7.0 / 16.0 * hd / NVL, t_out = 8.0 / 16.0 * hd / NIC;
    CHECK_NEAR(td, BASE + A_NIC + (t_in > t_out ? t_in : t_out), 1e-12);
    CHECK_MSG(strstr(det, "all_to_all direct nic n=16") != NULL, "detail %s", det);
    model_cost_destroy(c);
}

/* allgather: every rank gathers all 8 ranks' tokens (a ring over 8 ranks:
 * base + 7 α_nvl + 7/8 · B / bw_nvl, B the gathered buffer) and
 * reduce-scatters the bf16 outputs; no all-to-all, no packing. */
static void test_allgather(void)
{
    model_cost *c = make(8, MODEL_EP_ALLGATHER);
    REQUIRE(c != NULL);
    CHECK(model_cost_ep_mode(c, 0) == MODEL_EP_ALLGATHER && model_cost_ep_mode(c, 1) == MODEL_EP_ALLGATHER);
    model_batch dec = {0, NULL, 64, 64 * 2000, 0};
    double bg = 0, br = 0;
    double tg = per_call(c, &dec, "moe_all_gather", &bg, NULL), tr = per_call(c, &dec, "moe_reduce_scatter", &br, NULL);
    CHECK_NEAR(bg, 64 * H * AB, 1e-6);
    CHECK_NEAR(br, 64 * H * BF16, 1e-6);
    CHECK_NEAR(tg, BASE + 7 * A_NVL + 7.0 / 8.0 * 64 * H * AB / NVL, 1e-12);
    CHECK_NEAR(tr, BASE + 7 * A_NVL + 7.0 / 8.0 * 64 * H * BF16 / NVL, 1e-12);
    CHECK(per_call(c, &dec, "ep_dispatch", NULL, NULL) < 0 && per_call(c, &dec, "ep_pack", NULL, NULL) < 0);
    model_cost_destroy(c);
    /* DeepEP (auto) keeps its own ops and no packing. */
    model_cost *d = make(8, MODEL_EP_AUTO);
    REQUIRE(d != NULL);
    char det[64] = "";
    CHECK(per_call(d, &dec, "ep_dispatch", NULL, det) > 0 && per_call(d, &dec, "ep_pack", NULL, NULL) < 0);
    CHECK_MSG(strstr(det, "low_latency") != NULL, "detail %s", det);
    model_cost_destroy(d);
}

/* With tokens replicated over TP (no attention DP) nothing moves by
 * all-to-all whatever the mode. */
static void test_tp_replicated(void)
{
    model_layout l = {.tp = 8, .pp = 1, .ep = 8, .ep_mode = MODEL_EP_ALLTOALL, .dtype = MODEL_DTYPE_FP8_BLOCK,
                      .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    model_cost *c = test_cost_layout("deepseek-v3", "h100-sxm", &l);
    REQUIRE(c != NULL);
    CHECK(model_cost_ep_mode(c, 0) == -1);
    model_batch dec = {0, NULL, 64, 64 * 2000, 0};
    CHECK(per_call(c, &dec, "ep_dispatch", NULL, NULL) < 0 && per_call(c, &dec, "ep_pack", NULL, NULL) < 0);
    model_cost_destroy(c);
}

/* `servesim predict ARGS` (stderr with stdout): its exit status and output
 * in *out (free it). */
static int predict(const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s predict %s 2>&1", test_servesim, args);
    *out = NULL;
    return test_sh(cmd, out);
}

/* The key from a scenario to the cost model: predict on a scenario with
 * ep_mode alltoall prices the NCCL all-to-all; a bad value is refused
 * with the key path and the accepted names; --ep-mode takes the same. */
static void test_scenario_key(void)
{
    REQUIRE_MSG(test_servesim, "needs the servesim binary as argv[1]");
    char path[] = "/tmp/test_ep_nccl_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    FILE *f = fdopen(fd, "w");
    REQUIRE(f != NULL);
    fprintf(f, "model: deepseek-v3\nhardware: {gpu: h100-sxm, perf_db: none}\ndeployment:\n  pools:\n"
               "    - parallel: {tp: 1, dp: 8, ep: 8, ep_mode: alltoall}\n");
    fclose(f);
    char args[512], *out;
    snprintf(args, sizeof args, "%s --decode 64 --context 2000", path);
    CHECK(predict(args, &out) == 0);
    CHECK_CONTAINS(out, "ep_mode alltoall: decode alltoall, prefill alltoall");
    CHECK_CONTAINS(out, "all_to_all direct nvlink n=8 473088B");
    free(out);
    snprintf(args, sizeof args, "%s --set deployment.pools.0.parallel.ep_mode=nccl", path);
    CHECK(predict(args, &out) != 0);
    CHECK_CONTAINS(out, "deployment.pools.0.parallel.ep_mode=nccl: expected one of "
                        "auto|normal|low_latency|alltoall|allgather, got 'nccl'");
    free(out);
    CHECK(predict("--model deepseek-v3 --gpu h100-sxm --dp 8 --ep 8 --no-perf-db --ep-mode allgather --decode 64",
                  &out) == 0);
    CHECK_CONTAINS(out, "ep_mode allgather: decode allgather, prefill allgather");
    CHECK_CONTAINS(out, "moe_all_gather");
    free(out);
    remove(path);
}

static const test_case cases[] = {
    {"alltoall_one_node", test_alltoall_one_node},
    {"alltoall_two_nodes", test_alltoall_two_nodes},
    {"allgather", test_allgather},
    {"tp_replicated", test_tp_replicated},
    {"scenario_key", test_scenario_key},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_ep_nccl", cases);
}
