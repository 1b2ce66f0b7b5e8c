/* sim_net — the shared network model: every byte servesim moves between GPUs,
 * host-DRAM tiers and the remote pool (KV after prefill, pulled prefixes,
 * attention<->FFN activations) goes through here.
 *
 * Units: bandwidth in bytes/s (double, one direction), bytes as double, time
 * in sim_time nanoseconds. A topology (sim_net_topo) is plain data: directed
 * links (capacity, latency) and endpoints (a GPU of a node, a node's host
 * tier, the remote pool) whose ports name links. sim_net_create copies the
 * topology, so the caller keeps ownership of its sim_net_topo and may destroy
 * it right away. The net runs on a caller-owned sim_engine and must be
 * destroyed before it; destroying the net cancels its pending events.
 *
 * Routing (sim_net_topo_route): GPU -> GPU in the same node (or the same
 * rack-scale NVLink domain, sim_net_topo_set_nvlink_domain) uses the source's
 * NVLink egress and the destination's NVLink ingress. GPU <-> the host tier
 * of its own node uses only the host tier's link (the DMA over PCIe/C2C; the
 * tier's link is the limit). Anything else (another node, the pool) uses the
 * source's external egress (a GPU's NIC, the tier's own link) and the
 * destination's external ingress, and adds the topology's network latency
 * once. A path's latency is that plus the latencies of its links. A port of
 * -1 is "no link on this side" (unconstrained); hand-built topologies may let
 * several endpoints share one link (e.g. one NIC per node).
 *
 * Timing: a flow drains at its max-min fair rate from the moment it starts;
 * when its last byte has left it releases its links and is delivered
 * latency ns later. Alone on a link of B bytes/s it takes
 * latency + ceil(bytes * 1e9 / B) ns (a value within a few ulps of a whole
 * ns counts as that ns). Rates are max-min fair (progressive filling).
 * Starts, drain ends and cancels only mark links dirty and arm one solve
 * event at the current instant, so a burst of changes at one time costs one
 * solve; the solve covers only the connected component (links linked by
 * shared flows) of the dirty links: O((F + L) log L) for a component of F
 * flows and L links. A flow whose rate changed gets its completion event
 * rescheduled (cancel + re-add); the others keep theirs, so an undisturbed
 * flow's time stays exact. Worst case (one component of all flows) a run
 * costs O(F) per start or end; bench/bench_net.c measures it.
 *
 * Striping: a transfer may name ns source and nd destination endpoints (the
 * GPUs of a multi-GPU instance). It becomes k = max(ns, nd) parallel
 * sub-flows, sub-flow i going src[i % ns] -> dst[i % nd] with bytes / k, each
 * an independent max-min flow; the transfer is done when the last sub-flow is
 * delivered. So TP8 -> TP8 across nodes uses eight NICs on each side, and
 * TP2 -> TP4 puts two sub-flows on each source NIC. */
#ifndef SIM_NET_H
#define SIM_NET_H

#include "sim_engine.h"
#include "sim_err.h"

#include <stdint.h>

#define SIM_NET_MAX_PATH 4   /* most links on one route */
#define SIM_NET_MAX_STRIPES 4096

typedef enum {
    SIM_NET_EP_GPU = 0,
    SIM_NET_EP_HOST = 1, /* host-DRAM tier of one node */
    SIM_NET_EP_POOL = 2  /* remote pool; in no node */
} sim_net_ep_kind;

/* One endpoint. node < 0 means "in no node" (always remote). Ports are link
 * ids or -1. nvl_* are used only GPU <-> GPU within a node; ext_* otherwise. */
typedef struct {
    int32_t kind; /* sim_net_ep_kind */
    int32_t node;
    int32_t nvl_out, nvl_in;
    int32_t ext_out, ext_in;
} sim_net_endpoint;

typedef struct sim_net_topo sim_net_topo;
typedef struct sim_net sim_net;

/* Transfer handle; 0 is never valid. Stale handles are harmless. */
typedef uint64_t sim_net_xfer;

/* Called once when the transfer's last byte has arrived (not on cancel). The
 * net is consistent: the callback may start or cancel transfers (but not
 * destroy the net). */
typedef void (*sim_net_done_fn)(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg);

/* ---- topology (plain data) ---- */

sim_net_topo *sim_net_topo_create(sim_err *err);
void sim_net_topo_destroy(sim_net_topo *topo);

/* Adds a directed link; returns its id (>= 0) or a negative SIM_E* code.
 * capacity_Bps must be finite and > 0, latency >= 0. */
int sim_net_topo_add_link(sim_net_topo *topo, double capacity_Bps, sim_time latency,
                          sim_err *err);

/* Adds an endpoint; returns its id (>= 0) or a negative SIM_E* code. */
int sim_net_topo_add_endpoint(sim_net_topo *topo, const sim_net_endpoint *ep, sim_err *err);

/* Latency added once to every route that leaves a node (default 0). */
void sim_net_topo_set_net_latency(sim_net_topo *topo, sim_time latency);

/* The catalogue topology: n_nodes nodes of gpus_per_node GPUs. Per GPU four
 * links: NVLink out/in (nvlink_Bps) and NIC out/in (nic_Bps), latency 0;
 * latency_s is the network latency of routes that leave a node. host_Bps > 0
 * adds one host-tier endpoint per node with an out and an in link of
 * host_Bps; pool_Bps > 0 adds the remote pool with an out and an in link of
 * pool_Bps. Endpoint ids: GPU g of node n is n * gpus_per_node + g; hosts
 * follow (sim_net_topo_host), then the pool (sim_net_topo_pool). Returns 0
 * with *out set (the caller destroys it), or SIM_EINVAL (a size or rate out
 * of range) or SIM_ENOMEM with *out NULL and err filled. */
int sim_net_topo_build(int n_nodes, int gpus_per_node, double nvlink_Bps, double nic_Bps, double latency_s,
                       double host_Bps, double pool_Bps, sim_net_topo **out, sim_err *err);

/* Joins every `nodes` consecutive nodes into one NVLink domain (a
 * rack-scale fabric such as GB200/GB300 NVL72: 72 GPUs, 18 trays of 4):
 * GPU <-> GPU routes inside a domain use the NVLink ports, with no network
 * latency, instead of the NICs. nodes <= 1 restores one domain per node.
 * Returns 0 or SIM_EINVAL. */
int sim_net_topo_set_nvlink_domain(sim_net_topo *topo, int nodes, sim_err *err);

/* Sets the NVLink and NIC capacities (bytes/s, one way) of every GPU of
 * one node of a built topology: a node of another GPU type than the rest
 * (a heterogeneous fleet). Returns 0 or SIM_EINVAL. */
int sim_net_topo_set_node_gpu_links(sim_net_topo *topo, int node, double nvlink_Bps, double nic_Bps,
                                    sim_err *err);

int sim_net_topo_n_links(const sim_net_topo *topo);
int sim_net_topo_n_endpoints(const sim_net_topo *topo);
double sim_net_topo_link_capacity(const sim_net_topo *topo, int link); /* 0 if no such link */
/* Copies endpoint ep into *out; returns 0 or SIM_EINVAL. */
int sim_net_topo_endpoint(const sim_net_topo *topo, int ep, sim_net_endpoint *out);
/* Endpoint ids of the built topology; -1 when absent. */
int sim_net_topo_gpu(const sim_net_topo *topo, int node, int gpu);
int sim_net_topo_host(const sim_net_topo *topo, int node);
int sim_net_topo_pool(const sim_net_topo *topo);

/* Route src -> dst: writes up to SIM_NET_MAX_PATH link ids to links[] and the
 * path latency to *latency; returns the number of links (0 for src == dst)
 * or a negative SIM_E* code (bad endpoint, a link used twice). */
int sim_net_topo_route(const sim_net_topo *topo, int src, int dst, int links[SIM_NET_MAX_PATH],
                       sim_time *latency, sim_err *err);

/* ---- the network ---- */

/* Returns the net, or NULL with err set. */
sim_net *sim_net_create(sim_engine *eng, const sim_net_topo *topo, sim_err *err);
void sim_net_destroy(sim_net *net);
const sim_net_topo *sim_net_topo_of(const sim_net *net);

/* Starts moving bytes (>= 0) from src to dst now; cb (may be NULL) fires when
 * the last byte arrives. Writes the handle to *id. Never completes inside the
 * call. Returns 0 or a negative SIM_E* code (nothing started then). */
int sim_net_transfer(sim_net *net, int src, int dst, double bytes, sim_net_done_fn cb,
                     void *ctx, uint64_t arg, sim_net_xfer *id, sim_err *err);

/* Striped transfer between endpoint sets (see the header paragraph). */
int sim_net_transfer_striped(sim_net *net, const int *src, int n_src, const int *dst,
                             int n_dst, double bytes, sim_net_done_fn cb, void *ctx,
                             uint64_t arg, sim_net_xfer *id, sim_err *err);

/* Stops a transfer; its bytes so far stay counted, its share is freed for
 * the others and cb never fires. Returns 1 if it was live, 0 if stale. */
int sim_net_cancel(sim_net *net, sim_net_xfer id);

/* Current aggregate rate of a live transfer's draining sub-flows, bytes/s
 * (0 before the first solve of this instant, while in latency, or stale). */
double sim_net_transfer_rate(const sim_net *net, sim_net_xfer id);
/* Bytes not yet sent as of now (-1 if stale). */
double sim_net_transfer_remaining(const sim_net *net, sim_net_xfer id);

/* Time bytes would take src -> dst on an idle network (latency + bytes over
 * the path's bottleneck), for "fetch or recompute" decisions. < 0 on error. */
sim_time sim_net_estimate(const sim_net *net, int src, int dst, double bytes);

typedef struct {
    double capacity_Bps;
    double bytes;       /* bytes that have crossed the link so far */
    double load_Bps;    /* sum of the current rates on the link */
    sim_time busy_ns;   /* time with at least one flow on the link */
    int32_t active_flows;
} sim_net_link_stats;

/* Live figures of one link as of now; returns 0 or SIM_EINVAL. */
int sim_net_link_stats_get(const sim_net *net, int link, sim_net_link_stats *out);

typedef struct {
    uint64_t transfers_started, transfers_done, transfers_cancelled;
    uint64_t flows_started, flows_done;
    int64_t active_transfers, active_flows; /* flows draining or in latency */
    uint64_t solves;             /* water-filling runs */
    uint64_t solve_flows;        /* flows visited by all solves */
    uint64_t solve_links;        /* links visited by all solves */
    uint64_t reschedules;        /* completion events moved */
    double bytes_delivered;      /* bytes of finished transfers */
} sim_net_stats;

void sim_net_stats_get(const sim_net *net, sim_net_stats *out);

#endif
