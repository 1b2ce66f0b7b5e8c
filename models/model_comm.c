/* model_comm — see model_comm.h. */
#include "model_comm.h"

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
    /* A GPU without NVLink (PCIe cards) talks through its NIC even inside a node. */
    if (net->nvlink_bw <= 0) {
        net->nvlink_bw = net->nic_bw;
        net->nvlink_alpha_s = net->nic_alpha_s;
    }
}

model_comm_link model_comm_group_link(const model_comm_net *net, int32_t n, int32_t stride)
{
    if (n <= 1) return MODEL_LINK_NONE;
    if (stride < 1) stride = 1;
    /* Ranks are placed in order from a node boundary: the group fits a node
     * when its span does. */
    int64_t span = (int64_t)(n - 1) * stride + 1;
    return span <= net->gpus_per_node ? MODEL_LINK_NVLINK : MODEL_LINK_NIC;
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
    const double bw = nic ? net->nic_bw : net->nvlink_bw;
    const double nn = n;
    /* Per-hop latency of a ring. A ring over several nodes visits every GPU
     * of a node before it leaves (as NCCL builds its rings), so of its n
     * hops only one per node crosses a NIC; the rest are NVLink hops. */
    const double a = nic ? net->nic_alpha_s : net->nvlink_alpha_s;
    double a_ring = a;
    if (nic && stride < net->gpus_per_node) {
        int64_t per_node = net->gpus_per_node / (stride > 0 ? stride : 1);
        double nodes = ceil(nn / (double)per_node);
        a_ring = (nodes * net->nic_alpha_s + (nn - nodes) * net->nvlink_alpha_s) / nn;
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
        double t_in = (per_node - 1) / nn * bytes / net->nvlink_bw;
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
    static const char *const names[] = {"none", "nvlink", "nic"};
    return (int)l >= 0 && (int)l < 3 ? names[l] : "?";
}
