/* model_comm — α–β cost of collectives between the GPUs of an instance.
 *
 * A group is n ranks placed `stride` GPUs apart (a TP group has stride 1;
 * the attention-DP ranks holding the same TP shard have stride tp), nodes
 * of gpus_per_node GPUs. A group inside one node talks over NVLink, a group
 * spanning nodes is limited by the per-GPU NICs (rail-optimised fabric:
 * every GPU its own NIC). Each link is a per-step latency α and a bus
 * bandwidth (link rate × bus-bandwidth efficiency, what nccl-tests calls
 * busbw); every call also pays a fixed launch/synchronisation cost. A ring
 * spanning nodes crosses a NIC once per node and NVLink elsewhere, so its
 * α is the hop-weighted mean of the two (the bandwidth stays the NIC's; the
 * tree keeps the NIC's α per step). GPUs without an NVSwitch fabric
 * (model_gpu_caps.h) talk over PCIe inside a node: a group of a PCIe-only
 * GPU, or one that NVLink bridges do not join (more GPUs than a bridge
 * joins, or ranks strided across bridges), takes the PCIe link: host_gbps
 * at efficiency.pcie, efficiency.pcie_step_us per step (every GPU's PCIe
 * link is its own; the root complex or switch between them is taken not
 * to be the bottleneck). Bridged groups are taken aligned to the bridges,
 * as ranks fill a node in order. For a
 * buffer of B bytes per rank:
 *   ring all-reduce    base + 2(n−1)·α + 2(n−1)/n · B/bw
 *   tree all-reduce    base + 2⌈log2 n⌉·α + 2·B/bw   (double binary tree)
 *   all-gather / reduce-scatter (ring)  base + (n−1)·α + (n−1)/n · B/bw
 *                      (B = the full gathered / reduced buffer)
 *   all-to-all         base + α + max(B_nvlink/bw_nvlink, B_nic/bw_nic)
 *                      (B = bytes a rank sends, spread evenly over the n)
 *   send/recv          base + α + B/bw
 * and an all-reduce takes the cheaper algorithm, as NCCL's tuner does
 * (tree for small messages, ring for large). Units: bytes, seconds,
 * bytes/s. Plain data and pure functions; no heap. */
#ifndef MODEL_COMM_H
#define MODEL_COMM_H

#include "model_catalog.h"

#include <stdint.h>

typedef enum {
    MODEL_COLL_ALL_REDUCE = 0,
    MODEL_COLL_ALL_GATHER = 1,
    MODEL_COLL_REDUCE_SCATTER = 2,
    MODEL_COLL_ALL_TO_ALL = 3,
    MODEL_COLL_SEND_RECV = 4
} model_coll;

typedef enum {
    MODEL_ALGO_RING = 0,
    MODEL_ALGO_TREE = 1,
    MODEL_ALGO_DIRECT = 2 /* all-to-all, send/recv: point to point */
} model_comm_algo;

typedef enum {
    MODEL_LINK_NONE = 0, /* n = 1: nothing moves */
    MODEL_LINK_NVLINK = 1,
    MODEL_LINK_NIC = 2,
    MODEL_LINK_PCIE = 3  /* inside a node, GPUs NVLink does not join */
} model_comm_link;

typedef struct {
    double nvlink_bw, nic_bw;       /* bus bandwidth per GPU, one direction (efficiency applied) */
    double nvlink_alpha_s, nic_alpha_s; /* per-step latency */
    double base_s;                  /* per-call launch and synchronisation */
    int32_t gpus_per_node;          /* GPUs of one NVLink domain: the node, or the rack of an
                                     * NVL72 system (model_gpu.nvlink_domain) */
    /* Appended with PCIe GPUs: the PCIe path inside a node (bus bandwidth,
     * per-step latency) and the GPUs one NVLink bridge joins (0 = NVLink
     * joins the whole node; nvlink_bw 0 = no NVLink). */
    double pcie_bw, pcie_alpha_s;
    int32_t nvlink_group;
} model_comm_net;

typedef struct {
    double time_s;
    model_comm_algo algo;
    model_comm_link link;
} model_comm_cost;

/* Network parameters of g's nodes (gpus_per_node 0 = 8); a GPU whose
 * catalogue entry has a larger nvlink_domain talks NVLink across it. */
void model_comm_net_init(model_comm_net *net, const model_gpu *g, int32_t gpus_per_node);

/* Which link a group of n ranks `stride` apart uses: the NIC when it spans
 * nodes, NVLink when NVLink joins all its ranks, PCIe otherwise. */
model_comm_link model_comm_group_link(const model_comm_net *net, int32_t n, int32_t stride);

/* Time of one collective; bytes as in the table above. out may be NULL. */
double model_comm_time(const model_comm_net *net, model_coll op, int32_t n, int32_t stride, double bytes,
                       model_comm_cost *out);

/* One step of a ring pass (ring attention): each of n ranks `stride`
 * GPUs apart sends `bytes` to the next rank of the ring at once, so the
 * step lasts as long as its slowest hop. Ranks fill a node before the next
 * (as placed by the layout): a hop between two ranks of one node goes over
 * NVLink, one between nodes (the ring's wrap-around included) over the
 * sending GPU's NIC, so a ring that spans nodes takes
 * base + α_nic + bytes/bw_nic per step and one inside a node
 * base + α_nvlink + bytes/bw_nvlink. *nic_hops (may be NULL) gets the
 * hops of the ring that cross a NIC (0 inside a node, the nodes it spans
 * otherwise, n when every rank is on its own node). 0 for n < 2. */
double model_comm_ring_step_time(const model_comm_net *net, int32_t n, int32_t stride, double bytes,
                                 int32_t *nic_hops);

/* DeepEP expert all-to-all (dispatch or combine) of `tokens` tokens per
 * rank over ep ranks, hidden values of bytes_per_val each, top_k experts
 * per token spread uniformly over the ranks. Both modes send over NVLink
 * to own-node peers and over the NIC to the rest, concurrently.
 *   normal: a token goes once to each destination rank of its node and
 *     once to each remote node (forwarded there over NVLink);
 *     t = floor + max(nvl / (f·nvlink_bw), rdma / (f·nic_bw)).
 *   low_latency: every (token, expert) pair is written directly, in
 *     rounds of at most MODEL_DEEPEP_LL_MAX_TOKENS tokens
 *     (num_max_dispatch_tokens_per_rank); per round
 *     t = floor + peer·ep + max(nvl / (f·nvlink_bw), nic / (f·nic_bw)).
 * Constants and their fit: model_comm.c and docs/cost-model.md. Returns
 * seconds; *rounds (may be NULL) gets the LL rounds (1 for normal).
 * mode must be MODEL_EP_NORMAL or MODEL_EP_LOW_LATENCY (else 0). */
#define MODEL_DEEPEP_LL_MAX_TOKENS 128
double model_comm_deepep_time(const model_comm_net *net, int mode, int32_t ep, double tokens, double hidden,
                              double top_k, double bytes_per_val, int32_t *rounds);

const char *model_coll_name(model_coll op);
const char *model_comm_algo_name(model_comm_algo a);
const char *model_comm_link_name(model_comm_link l);

#endif
