/* model_comm — see model_comm.h. */
#include "model_comm.h"

#include "model_gpu_caps.h"
#include "model_layout.h"

#include <math.h>

void model_comm_net_init(model_comm_net *net, const model_gpu *g, int32_t gpus_per_node)
{
    net->nvlink_bw = g->nvlink_bw * g->eff_nvlink;
    net->nic_bw = g->nic_bw * g->eff_nic;
    net->nvlink_alpha_s = g->nvlink_step_s;
    net->nic_alpha_s = g->nic_step_s;
    net->base_s = g->comm_base_s;
    net->gpus_per_node = gpus_per_node > 0 ? gpus_per_node : 8;
    /* A rack-scale NVLink fabric (NVL72) joins several nodes' GPUs: for the
     * collectives the NVLink domain is the unit, not the host. */
    if (g->nvlink_domain > net->gpus_per_node) net->gpus_per_node = g->nvlink_domain;
    /* GPUs NVLink does not join talk over PCIe (model_gpu_caps.h); a
     * model_gpu built without the PCIe figures (none loaded from the
     * catalogue) falls back to its NIC, as before PCIe was modelled. */
    net->pcie_bw = model_gpu_pcie_bw(g);
    net->pcie_alpha_s = g->pcie_step_s;
    if (!(net->pcie_bw > 0)) {
        net->pcie_bw = net->nic_bw;
        net->pcie_alpha_s = net->nic_alpha_s;
    }
    net->nvlink_group = g->interconnect_id == MODEL_ICX_NVLINK_BRIDGE ? g->nvlink_bridge_gpus : 0;
    if (g->interconnect_id == MODEL_ICX_PCIE || net->nvlink_bw <= 0) {
        net->nvlink_bw = 0;
        net->nvlink_group = 0;
    }
}

/* Does NVLink join the whole node (an NVSwitch, or a rack-scale fabric)? */
static int nvlink_joins_node(const model_comm_net *net)
{
    return net->nvlink_bw > 0 && net->nvlink_group == 0;
}

/* Bandwidth and per-step latency of a hop between two GPUs of one node
 * that are not on one NVLink bridge: NVLink behind an NVSwitch, else PCIe. */
static double intra_bw(const model_comm_net *net)
{
    return nvlink_joins_node(net) ? net->nvlink_bw : net->pcie_bw;
}

static double intra_alpha(const model_comm_net *net)
{
    return nvlink_joins_node(net) ? net->nvlink_alpha_s : net->pcie_alpha_s;
}

static double link_bw(const model_comm_net *net, model_comm_link l)
{
    return l == MODEL_LINK_NIC ? net->nic_bw : l == MODEL_LINK_NVLINK ? net->nvlink_bw : net->pcie_bw;
}

static double link_alpha(const model_comm_net *net, model_comm_link l)
{
    return l == MODEL_LINK_NIC ? net->nic_alpha_s : l == MODEL_LINK_NVLINK ? net->nvlink_alpha_s : net->pcie_alpha_s;
}

model_comm_link model_comm_group_link(const model_comm_net *net, int32_t n, int32_t stride)
{
    if (n <= 1) return MODEL_LINK_NONE;
    if (stride < 1) stride = 1;
    /* Ranks are placed in order from a node boundary: the group fits a node
     * when its span does. */
    int64_t span = (int64_t)(n - 1) * stride + 1;
    if (span > net->gpus_per_node) return MODEL_LINK_NIC;
    if (nvlink_joins_node(net)) return MODEL_LINK_NVLINK;
    /* A bridge joins consecutive GPUs: a group inside one bridge's span. */
    return net->nvlink_bw > 0 && span <= net->nvlink_group ? MODEL_LINK_NVLINK : MODEL_LINK_PCIE;
}

static double ceil_log2(int32_t n)
{
    double l = 0;
    for (int64_t p = 1; p < n; p *= 2) l++;
    return l;
}

double model_comm_time(const model_comm_net *net, model_coll op, int32_t n, int32_t stride, double bytes,
                       model_comm_cost *out)
{
    model_comm_cost r = {0, op == MODEL_COLL_ALL_TO_ALL || op == MODEL_COLL_SEND_RECV ? MODEL_ALGO_DIRECT
                                                                                      : MODEL_ALGO_RING,
                         model_comm_group_link(net, n, stride)};
    if (r.link == MODEL_LINK_NONE || !(bytes > 0)) {
        if (out) *out = r;
        return 0;
    }
    const int nic = r.link == MODEL_LINK_NIC;
    const double bw = link_bw(net, r.link);
    const double nn = n;
    /* Per-hop latency of a ring. A ring over several nodes visits every GPU
     * of a node before it leaves (as NCCL builds its rings), so of its n
     * hops only one per node crosses a NIC; the rest are intra-node hops
     * (NVLink, or PCIe where NVLink does not join the node). */
    const double a = link_alpha(net, r.link);
    double a_ring = a;
    if (nic && stride < net->gpus_per_node) {
        int64_t per_node = net->gpus_per_node / (stride > 0 ? stride : 1);
        double nodes = ceil(nn / (double)per_node);
        a_ring = (nodes * net->nic_alpha_s + (nn - nodes) * intra_alpha(net)) / nn;
    }
    switch (op) {
    case MODEL_COLL_ALL_REDUCE: {
        double ring = net->base_s + 2.0 * (nn - 1) * a_ring + 2.0 * (nn - 1) / nn * bytes / bw;
        double tree = net->base_s + 2.0 * ceil_log2(n) * a + 2.0 * bytes / bw;
        r.time_s = ring;
        if (tree < ring) {
            r.time_s = tree;
            r.algo = MODEL_ALGO_TREE;
        }
        break;
    }
    case MODEL_COLL_ALL_GATHER:
    case MODEL_COLL_REDUCE_SCATTER:
        r.time_s = net->base_s + (nn - 1) * a_ring + (nn - 1) / nn * bytes / bw;
        break;
    case MODEL_COLL_ALL_TO_ALL: {
        /* Ranks of the group sharing a node with this one exchange over
         * NVLink, the rest over the NIC, concurrently. */
        double per_node = stride >= net->gpus_per_node ? 1.0 : floor((double)net->gpus_per_node / stride);
        if (per_node > nn) per_node = nn;
        double t_in = (per_node - 1) / nn * bytes / (r.link == MODEL_LINK_NVLINK ? net->nvlink_bw : intra_bw(net));
        double t_out = (nn - per_node) / nn * bytes / net->nic_bw;
        r.time_s = net->base_s + a + (t_in > t_out ? t_in : t_out);
        break;
    }
    case MODEL_COLL_SEND_RECV:
        r.time_s = net->base_s + a + bytes / bw;
        break;
    }
    if (out) *out = r;
    return r.time_s;
}

double model_comm_ring_step_time(const model_comm_net *net, int32_t n, int32_t stride, double bytes,
                                 int32_t *nic_hops)
{
    if (nic_hops) *nic_hops = 0;
    if (n < 2 || !(bytes > 0)) return 0;
    if (stride < 1) stride = 1;
    model_comm_link l = model_comm_group_link(net, n, stride);
    if (l != MODEL_LINK_NIC) return net->base_s + link_alpha(net, l) + bytes / link_bw(net, l);
    /* Ranks per node; the ring leaves each node it visits once. */
    int64_t per_node = stride >= net->gpus_per_node ? 1 : net->gpus_per_node / stride;
    int64_t nodes = (n + per_node - 1) / per_node;
    if (nodes < 2) nodes = 2; /* a stride that does not divide the node still crosses one boundary */
    if (nic_hops) *nic_hops = (int32_t)(nodes < n ? nodes : n);
    return net->base_s + net->nic_alpha_s + bytes / net->nic_bw;
}

/* DeepEP constants, fitted to DeepEP's published H800 figures (one 400G
 * NIC and 200 GB/s NVLink per GPU; /work/shared gpu-specs.md, reproduced
 * in tests/model/test_deepep.c, which re-derives them). H800's net in this
 * model: nvlink 200 × 0.95 = 190 GB/s, NIC 50 × 0.92 = 46 GB/s.
 * Low latency (128 tokens, hidden 7168, top-8, fp8 dispatch 7.57 MB with
 * its scales, bf16 combine 14.7 MB): EP8 dispatch 77 µs / combine 114 µs
 * differ by 7.1 MB · 7/8 over NVLink in 37 µs → 168 GB/s = 0.88 of the
 * link, and floor + 8·peer = 37.6 µs; EP256 dispatch 194 µs and EP128
 * combine 369 µs (nearly all over the NIC) then give 47 and 41.5 GB/s
 * with no per-peer term, and a negative one when solved for exactly, so
 * the per-peer cost is 0 within the data: 44 GB/s = 0.96 of the NIC. The
 * growth of LL time with EP is the share of pairs that leaves the node.
 * Normal (4096 tokens): EP8 153/158 GB/s over NVLink → 0.82 of the link;
 * EP16-64 43-58 GB/s over RDMA → 50 GB/s, 1.09 of the model's effective
 * NIC (DeepEP counts its RDMA bytes as this model does: once per remote
 * node). The normal-mode floor (notify/layout handshake, CPU-synchronised
 * counts) is not in the published figures, whose 4096-token runs hide
 * it: 40 µs, from DeepEP's description, unfitted. */
/* Beside the GPU's per-call comm_base_s (3.8 µs on H100): 37.6 − 3.8. */
#define DEEPEP_LL_FLOOR_S 33.8e-6
#define DEEPEP_LL_PEER_S 0.0
#define DEEPEP_LL_NVL_FRAC 0.88
#define DEEPEP_LL_NIC_FRAC 0.96
#define DEEPEP_NORMAL_FLOOR_S 40e-6
#define DEEPEP_NORMAL_NVL_FRAC 0.82
#define DEEPEP_NORMAL_NIC_FRAC 1.09

double model_comm_deepep_time(const model_comm_net *net, int mode, int32_t ep, double tokens, double hidden,
                              double top_k, double bytes_per_val, int32_t *rounds)
{
    if (rounds) *rounds = 1;
    if (ep <= 1 || !(tokens > 0)) return 0;
    const double n = ep, k = top_k, tok_b = hidden * bytes_per_val;
    const double g = n < net->gpus_per_node ? n : net->gpus_per_node;
    const double nodes = ceil(n / g);
    if (mode == MODEL_EP_NORMAL) {
        /* Distinct destination ranks of a token on its node (self excluded),
         * distinct remote nodes. */
        double ranks = (g - 1) * (1.0 - pow(1.0 - 1.0 / n, k));
        double remote = (nodes - 1) * (1.0 - pow(1.0 - 1.0 / nodes, k));
        double tn = tokens * tok_b * ranks / (DEEPEP_NORMAL_NVL_FRAC * intra_bw(net));
        double tr = tokens * tok_b * remote / (DEEPEP_NORMAL_NIC_FRAC * net->nic_bw);
        return net->base_s + DEEPEP_NORMAL_FLOOR_S + (tn > tr ? tn : tr);
    }
    if (mode != MODEL_EP_LOW_LATENCY) return 0;
    double r = ceil(tokens / MODEL_DEEPEP_LL_MAX_TOKENS);
    if (rounds) *rounds = (int32_t)r;
    double per = tokens / r; /* tokens of one round */
    double tn = per * k * tok_b * (g - 1) / n / (DEEPEP_LL_NVL_FRAC * intra_bw(net));
    double tr = per * k * tok_b * (n - g) / n / (DEEPEP_LL_NIC_FRAC * net->nic_bw);
    return r * (net->base_s + DEEPEP_LL_FLOOR_S + DEEPEP_LL_PEER_S * n + (tn > tr ? tn : tr));
}

const char *model_coll_name(model_coll op)
{
    static const char *const names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
    return (int)op >= 0 && (int)op < 5 ? names[op] : "?";
}

const char *model_comm_algo_name(model_comm_algo a)
{
    static const char *const names[] = {"ring", "tree", "direct"};
    return (int)a >= 0 && (int)a < 3 ? names[a] : "?";
}

const char *model_comm_link_name(model_comm_link l)
{
    static const char *const names[] = {"none", "nvlink", "nic", "pcie"};
    return (int)l >= 0 && (int)l < 4 ? names[l] : "?";
}
