/* sim_net_impl — internals shared by sim_net_topo.c (topology, routing)
 * and sim_net.c (the max-min flow solver): the topology's layout and two
 * helpers. Not a public header. */
#ifndef SIM_NET_IMPL_H
#define SIM_NET_IMPL_H

#include "sim_net.h"

#include <stddef.h>

struct sim_net_topo {
    double *cap;
    sim_time *lat;
    int32_t nl, cl;
    sim_net_endpoint *ep;
    int32_t ne, ce;
    sim_time net_lat;
    /* Set by the builder only; hand-built topologies have no such layout. */
    int32_t b_nodes, b_gpn, b_host0, b_pool;
    int32_t domain_nodes;       /* nodes per NVLink domain (0 or 1: each node its own) */
};

/* Grows *p (capacity *cap elements of elem bytes) to hold need; 0 or -1. */
int sim_net_grow(void **p, int32_t *cap, int64_t need, size_t elem);

/* Deep copy of a topology (the net owns its own). */
sim_net_topo *sim_net_topo_clone(const sim_net_topo *s, sim_err *err);

#endif
