/* test_sp — sequence parallelism priced on the links it uses.
 *
 * Ring attention: every rank passes its KV block to the next at once, so a
 * step lasts as long as the slowest hop; a ring that leaves a node waits on
 * a NIC hop (model_comm_ring_step_time). Checked against a hand
 * calculation: Llama-3.1-8B, one 32k-token prefill, a 16-way ring over two
 * 8-GPU H100 nodes exposes (sp − 1) · (NIC step − attention step) per layer
 * of transfer, the same ring inside one node (8 ways) exposes none.
 * Ulysses: with more sequence ranks than KV heads each KV head goes to
 * every rank of its query group, so the QKV all-to-all moves the extra
 * K/V volume (sp = 16 over 8 KV heads: 16 heads' K/V, not 8). */
#include "model_catalog.h"
#include "model_comm.h"
#include "model_cost.h"
#include "test_util.h"

#include "test_model_util.h"

static model_cost *make(const char *model, const char *gpu, int tp, int sp, model_sp_kind kind)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_model(model, &m, &e) == 0 && model_catalog_gpu(gpu, &g, &e) == 0, return NULL);
    model_layout l = {.tp = tp, .pp = 1, .sp = sp, .sp_kind = kind, .dtype = MODEL_DTYPE_BF16,
                      .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    CHECK_MSG(model_cost_create(&m, &g, &l, &c, &e) == 0, "%s", e.msg);
    return c;
}

static void test_ring_step(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &g, &e) == 0, return);
    model_comm_net net;
    model_comm_net_init(&net, &g, 8);
    int32_t hops = -1;
    const double B = 8e6;
    /* Inside a node: an NVLink hop. */
    double t8 = model_comm_ring_step_time(&net, 8, 1, B, &hops);
    CHECK_NEAR(t8, g.comm_base_s + g.nvlink_step_s + B / (g.nvlink_bw * g.eff_nvlink), 1e-12);
    CHECK(hops == 0);
    /* 16 ranks on two nodes: two hops (one each way) cross a NIC and set the step. */
    double t16 = model_comm_ring_step_time(&net, 16, 1, B, &hops);
    CHECK_NEAR(t16, g.comm_base_s + g.nic_step_s + B / (g.nic_bw * g.eff_nic), 1e-12);
    CHECK(hops == 2);
    /* tp = 8: every ring rank is its own node, every hop crosses. */
    model_comm_ring_step_time(&net, 4, 8, B, &hops);
    CHECK(hops == 4);
    /* tp = 2, sp = 4: one node; tp = 4, sp = 4: two nodes. */
    model_comm_ring_step_time(&net, 4, 2, B, &hops);
    CHECK(hops == 0);
    model_comm_ring_step_time(&net, 4, 4, B, &hops);
    CHECK(hops == 2);
    CHECK(model_comm_ring_step_time(&net, 1, 1, B, &hops) == 0 && hops == 0);
}

/* Ring attention of one 32k-token prefill of Llama-3.1-8B over sp ranks. */
static void ring_ops(int sp, const model_op **attn, const model_op **ring, model_op *ops, int32_t *n)
{
    model_cost *c = make("llama-3.1-8b", "h100-sxm", 1, sp, MODEL_SP_RING);
    *attn = *ring = NULL;
    *n = 0;
    if (!c) return;
    model_chunk big = {32768, 0};
    model_batch pb = {1, &big, 0, 0, 0};
    model_cost_breakdown(c, &pb, ops, 256, n, NULL);
    *attn = test_find_op(ops, *n, "attn_prefill");
    *ring = test_find_op(ops, *n, "sp_ring_kv");
    model_cost_destroy(c);
}

static void test_ring_across_nodes(void)
{
    model_gpu g;
    sim_err e = {{0}};
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &g, &e) == 0, return);
    model_op ops[256];
    int32_t n = 0;
    const model_op *attn = NULL, *ring = NULL;

    /* 8 ranks in one node: the 4 MB NVLink pass (≈ 44 µs) hides under the
     * attention step, nothing is exposed. */
    ring_ops(8, &attn, &ring, ops, &n);
    REQUIRE_OR(attn != NULL, return);
    const double layers = attn->count;
    CHECK(layers == 32);
    double step8 = attn->time_s / layers / 8;
    double block8 = 32768.0 / 8 * (2.0 * 8 * 128 * 2); /* KV tokens of one block × K+V bytes a layer */
    double nvl8 = g.comm_base_s + g.nvlink_step_s + block8 / (g.nvlink_bw * g.eff_nvlink);
    printf("ring sp=8: attention step %.1f us, NVLink pass %.1f us\n", step8 * 1e6, nvl8 * 1e6);
    CHECK(nvl8 < step8);
    CHECK(ring == NULL);

    /* 16 ranks over two nodes: per layer 15 steps of (NIC pass − attention step). */
    ring_ops(16, &attn, &ring, ops, &n);
    REQUIRE_OR(attn != NULL && ring != NULL, return);
    double step16 = attn->time_s / layers / 16;
    double block16 = 32768.0 / 16 * (2.0 * 8 * 128 * 2); /* 8.4 MB */
    double nic16 = g.comm_base_s + g.nic_step_s + block16 / (g.nic_bw * g.eff_nic);
    double hand = layers * 15 * (nic16 - step16);
    printf("ring sp=16 over 2 nodes: attention step %.1f us, NIC pass %.1f us: %.2f ms exposed (hand %.2f ms), %s\n",
           step16 * 1e6, nic16 * 1e6, ring->time_s * 1e3, hand * 1e3, ring->detail);
    CHECK(nic16 > 2 * step16); /* the NIC dominates: what NVLink pricing hid */
    CHECK_NEAR(ring->time_s, hand, 1e-9 + 1e-9 * hand);
    CHECK_NEAR(ring->bytes, layers * 15 * block16, 1.0);
    CHECK_CONTAINS(ring->detail, "2 NIC hops");
    /* Priced at NVLink the same pass would hide (the old model). */
    double nvl16 = g.comm_base_s + g.nvlink_step_s + block16 / (g.nvlink_bw * g.eff_nvlink);
    CHECK(nvl16 < step16);
}

static void test_ulysses_kv_replication(void)
{
    model_op ops[256];
    int32_t n = 0;
    model_chunk big = {32768, 0};
    model_batch pb = {1, &big, 0, 0, 0};
    double qkv[3] = {0, 0, 0}, kvread[3] = {0, 0, 0};
    const int sps[3] = {4, 8, 16};
    for (int i = 0; i < 3; i++) {
        model_cost *c = make("llama-3.1-8b", "h100-sxm", 1, sps[i], MODEL_SP_ULYSSES);
        if (!c) continue;
        model_cost_breakdown(c, &pb, ops, 256, &n, NULL);
        const model_op *a = test_find_op(ops, n, "sp_a2a_qkv"), *at = test_find_op(ops, n, "attn_prefill");
        CHECK(a && at);
        if (a) qkv[i] = a->bytes;
        if (at) kvread[i] = at->bytes;
        model_cost_destroy(c);
    }
    /* Per rank and layer: T/sp tokens × (32 q heads + 2·H kv heads) × 128 × 2 B,
     * H = 8 KV heads at sp ≤ 8, 16 (one per rank, each replicated twice) at sp 16. */
    const double layers = 32;
    for (int i = 0; i < 3; i++) {
        double H = sps[i] <= 8 ? 8 : sps[i];
        double hand = layers * 32768.0 / sps[i] * (32 + 2 * H) * 128 * 2;
        printf("ulysses sp=%d: QKV all-to-all %.1f MB per rank (hand %.1f MB), KV heads moved %.0f\n", sps[i],
               qkv[i] / 1e6, hand / 1e6, H);
        CHECK_NEAR(qkv[i], hand, 1e-6 * hand);
    }
    /* sp 16 against sp 8: half the tokens per rank, but 16 KV heads instead of 8:
     * (32 + 32) / (32 + 16) / 2 = 2/3 of the volume, not 1/2. */
    CHECK_NEAR(qkv[2] / qkv[1], 2.0 / 3.0, 1e-9);
    /* Each rank's attention also reads its replicated KV head. */
    CHECK(kvread[2] > 0.5 * kvread[1]);
}

static const test_case cases[] = {
    {"ring_step", test_ring_step},
    {"ring_across_nodes", test_ring_across_nodes},
    {"ulysses_kv_replication", test_ulysses_kv_replication},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_sp", cases);
}
