/* sim_net_topo — the network's topology as plain data (links with
 * capacity and latency, endpoints with their ports), the catalogue builder
 * and routing; see sim_net.h for the routing rules. */
#include "sim_net_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sim_net_grow(void **p, int32_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap) return 0;
    int64_t nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    if (nc > INT32_MAX || (size_t)nc > SIZE_MAX / elem) return SIM_ENOMEM;
    void *np = realloc(*p, (size_t)nc * elem);
    if (!np) return SIM_ENOMEM;
    *p = np;
    *cap = (int32_t)nc;
    return 0;
}




sim_net_topo *sim_net_topo_create(sim_err *err)
{
    sim_net_topo *t = calloc(1, sizeof *t);
    if (!t) {
        sim_err_set(err, SIM_ENOMEM, "net: out of memory for topology");
        return NULL;
    }
    t->b_host0 = -1;
    t->b_pool = -1;
    return t;
}

void sim_net_topo_destroy(sim_net_topo *t)
{
    if (!t) return;
    free(t->cap);
    free(t->lat);
    free(t->ep);
    free(t);
}

int sim_net_topo_add_link(sim_net_topo *t, double capacity_Bps, sim_time latency, sim_err *err)
{
    if (!(isfinite(capacity_Bps) && capacity_Bps > 0))
        return sim_err_set(err, SIM_EINVAL, "net: link capacity %g B/s must be finite and > 0",
                           capacity_Bps);
    if (latency < 0)
        return sim_err_set(err, SIM_EINVAL, "net: link latency %lld ns must be >= 0",
                           (long long)latency);
    int32_t cl = t->cl;
    if (sim_net_grow((void **)&t->cap, &cl, (int64_t)t->nl + 1, sizeof *t->cap)) goto nomem;
    cl = t->cl;
    if (sim_net_grow((void **)&t->lat, &cl, (int64_t)t->nl + 1, sizeof *t->lat)) goto nomem;
    t->cl = cl;
    t->cap[t->nl] = capacity_Bps;
    t->lat[t->nl] = latency;
    return t->nl++;
nomem:
    return sim_err_set(err, SIM_ENOMEM, "net: out of memory adding link %d", t->nl);
}

int sim_net_topo_add_endpoint(sim_net_topo *t, const sim_net_endpoint *ep, sim_err *err)
{
    if (ep->kind < SIM_NET_EP_GPU || ep->kind > SIM_NET_EP_POOL)
        return sim_err_set(err, SIM_EINVAL, "net: endpoint kind %d unknown", (int)ep->kind);
    const int32_t ports[4] = {ep->nvl_out, ep->nvl_in, ep->ext_out, ep->ext_in};
    for (int i = 0; i < 4; i++)
        if (ports[i] < -1 || ports[i] >= t->nl)
            return sim_err_set(err, SIM_EINVAL, "net: endpoint port names link %d of %d",
                               (int)ports[i], (int)t->nl);
    if (sim_net_grow((void **)&t->ep, &t->ce, (int64_t)t->ne + 1, sizeof *t->ep))
        return sim_err_set(err, SIM_ENOMEM, "net: out of memory adding endpoint %d", t->ne);
    t->ep[t->ne] = *ep;
    return t->ne++;
}

void sim_net_topo_set_net_latency(sim_net_topo *t, sim_time latency)
{
    t->net_lat = latency > 0 ? latency : 0;
}

static int pos_finite(double x) { return isfinite(x) && x > 0; }
static int nonneg_finite(double x) { return isfinite(x) && x >= 0; }

int sim_net_topo_build(int n_nodes, int gpus_per_node, double nvlink_Bps, double nic_Bps, double latency_s,
                       double host_Bps, double pool_Bps, sim_net_topo **out, sim_err *err)
{
    *out = NULL;
    if (n_nodes < 1 || gpus_per_node < 1 || (int64_t)n_nodes * gpus_per_node > (1 << 20))
        return sim_err_set(err, SIM_EINVAL, "net: %d nodes x %d GPUs is not a cluster", n_nodes, gpus_per_node);
    if (!pos_finite(nvlink_Bps) || !pos_finite(nic_Bps))
        return sim_err_set(err, SIM_EINVAL, "net: NVLink %g and NIC %g B/s must be finite and > 0", nvlink_Bps,
                           nic_Bps);
    if (!nonneg_finite(latency_s) || latency_s > 1e3 || !nonneg_finite(host_Bps) || !nonneg_finite(pool_Bps))
        return sim_err_set(err, SIM_EINVAL, "net: latency %g s, host %g B/s, pool %g B/s must be finite and >= 0",
                           latency_s, host_Bps, pool_Bps);
    int rc = SIM_ENOMEM; /* what sim_net_topo_create fails with */
    sim_net_topo *t = sim_net_topo_create(err);
    if (!t) goto fail;
    sim_net_topo_set_net_latency(t, (sim_time)llround(latency_s * 1e9));
    for (int n = 0; n < n_nodes; n++)
        for (int g = 0; g < gpus_per_node; g++) {
            sim_net_endpoint e = {SIM_NET_EP_GPU, n, -1, -1, -1, -1};
            if ((rc = e.nvl_out = sim_net_topo_add_link(t, nvlink_Bps, 0, err)) < 0) goto fail;
            if ((rc = e.nvl_in = sim_net_topo_add_link(t, nvlink_Bps, 0, err)) < 0) goto fail;
            if ((rc = e.ext_out = sim_net_topo_add_link(t, nic_Bps, 0, err)) < 0) goto fail;
            if ((rc = e.ext_in = sim_net_topo_add_link(t, nic_Bps, 0, err)) < 0) goto fail;
            if ((rc = sim_net_topo_add_endpoint(t, &e, err)) < 0) goto fail;
        }
    if (host_Bps > 0)
        for (int n = 0; n < n_nodes; n++) {
            sim_net_endpoint e = {SIM_NET_EP_HOST, n, -1, -1, -1, -1};
            if ((rc = e.ext_out = sim_net_topo_add_link(t, host_Bps, 0, err)) < 0) goto fail;
            if ((rc = e.ext_in = sim_net_topo_add_link(t, host_Bps, 0, err)) < 0) goto fail;
            int id = rc = sim_net_topo_add_endpoint(t, &e, err);
            if (id < 0) goto fail;
            if (n == 0) t->b_host0 = id;
        }
    if (pool_Bps > 0) {
        sim_net_endpoint e = {SIM_NET_EP_POOL, -1, -1, -1, -1, -1};
        if ((rc = e.ext_out = sim_net_topo_add_link(t, pool_Bps, 0, err)) < 0) goto fail;
        if ((rc = e.ext_in = sim_net_topo_add_link(t, pool_Bps, 0, err)) < 0) goto fail;
        if ((rc = t->b_pool = sim_net_topo_add_endpoint(t, &e, err)) < 0) goto fail;
    }
    t->b_nodes = n_nodes;
    t->b_gpn = gpus_per_node;
    *out = t;
    return SIM_OK;
fail:
    sim_net_topo_destroy(t);
    return rc;
}

int sim_net_topo_set_nvlink_domain(sim_net_topo *t, int nodes, sim_err *err)
{
    if (nodes < 0 || nodes > (1 << 20))
        return sim_err_set(err, SIM_EINVAL, "net: NVLink domain of %d nodes", nodes);
    t->domain_nodes = nodes > 1 ? nodes : 0;
    return 0;
}

int sim_net_topo_set_node_gpu_links(sim_net_topo *t, int node, double nvlink_Bps, double nic_Bps, sim_err *err)
{
    if (t->b_gpn < 1 || node < 0 || node >= t->b_nodes)
        return sim_err_set(err, SIM_EINVAL, "net: no node %d in the built topology", node);
    if (!pos_finite(nvlink_Bps) || !pos_finite(nic_Bps))
        return sim_err_set(err, SIM_EINVAL, "net: NVLink %g and NIC %g B/s must be finite and > 0", nvlink_Bps,
                           nic_Bps);
    for (int g = 0; g < t->b_gpn; g++) {
        const sim_net_endpoint *e = &t->ep[node * t->b_gpn + g];
        t->cap[e->nvl_out] = t->cap[e->nvl_in] = nvlink_Bps;
        t->cap[e->ext_out] = t->cap[e->ext_in] = nic_Bps;
    }
    return 0;
}

/* Do two endpoints share an NVLink fabric (same node, or same rack domain)? */
static int nvlink_peers(const sim_net_topo *t, const sim_net_endpoint *a, const sim_net_endpoint *b)
{
    if (a->node < 0 || b->node < 0) return 0;
    if (a->node == b->node) return 1;
    return t->domain_nodes > 1 && a->node / t->domain_nodes == b->node / t->domain_nodes;
}

int sim_net_topo_n_links(const sim_net_topo *t) { return t->nl; }
int sim_net_topo_n_endpoints(const sim_net_topo *t) { return t->ne; }

double sim_net_topo_link_capacity(const sim_net_topo *t, int link)
{
    return link >= 0 && link < t->nl ? t->cap[link] : 0.0;
}

int sim_net_topo_endpoint(const sim_net_topo *t, int ep, sim_net_endpoint *out)
{
    if (ep < 0 || ep >= t->ne) return SIM_EINVAL;
    *out = t->ep[ep];
    return 0;
}

int sim_net_topo_gpu(const sim_net_topo *t, int node, int gpu)
{
    if (node < 0 || node >= t->b_nodes || gpu < 0 || gpu >= t->b_gpn) return -1;
    return node * t->b_gpn + gpu;
}

int sim_net_topo_host(const sim_net_topo *t, int node)
{
    if (t->b_host0 < 0 || node < 0 || node >= t->b_nodes) return -1;
    return t->b_host0 + node;
}

int sim_net_topo_pool(const sim_net_topo *t) { return t->b_pool; }

static int route_add(const sim_net_topo *t, int link, int links[SIM_NET_MAX_PATH], int *n,
                     sim_time *lat, sim_err *err)
{
    if (link < 0) return 0;
    for (int i = 0; i < *n; i++)
        if (links[i] == link)
            return sim_err_set(err, SIM_EINVAL, "net: route uses link %d twice", link);
    SIM_ASSERT(*n < SIM_NET_MAX_PATH, *n);
    links[(*n)++] = link;
    *lat += t->lat[link];
    return 0;
}

int sim_net_topo_route(const sim_net_topo *t, int src, int dst, int links[SIM_NET_MAX_PATH],
                       sim_time *latency, sim_err *err)
{
    if (src < 0 || src >= t->ne || dst < 0 || dst >= t->ne)
        return sim_err_set(err, SIM_EINVAL, "net: endpoint %d or %d not in 0..%d", src, dst,
                           (int)t->ne - 1);
    int n = 0, rc = 0;
    sim_time lat = 0;
    if (src != dst) {
        const sim_net_endpoint *a = &t->ep[src], *b = &t->ep[dst];
        int same = a->node >= 0 && a->node == b->node;
        if (a->kind == SIM_NET_EP_GPU && b->kind == SIM_NET_EP_GPU && nvlink_peers(t, a, b)) {
            if ((rc = route_add(t, a->nvl_out, links, &n, &lat, err))) return rc;
            if ((rc = route_add(t, b->nvl_in, links, &n, &lat, err))) return rc;
        } else if (same) {
            /* GPU <-> its node's host tier: a DMA limited by the tier's link. */
            if (a->kind != SIM_NET_EP_GPU && (rc = route_add(t, a->ext_out, links, &n, &lat, err)))
                return rc;
            if (b->kind != SIM_NET_EP_GPU && (rc = route_add(t, b->ext_in, links, &n, &lat, err)))
                return rc;
        } else {
            if ((rc = route_add(t, a->ext_out, links, &n, &lat, err))) return rc;
            if ((rc = route_add(t, b->ext_in, links, &n, &lat, err))) return rc;
            lat += t->net_lat;
        }
    }
    *latency = lat;
    return n;
}

sim_net_topo *sim_net_topo_clone(const sim_net_topo *s, sim_err *err)
{
    sim_net_topo *t = calloc(1, sizeof *t);
    if (!t) goto nomem;
    *t = *s;
    t->cap = NULL;
    t->lat = NULL;
    t->ep = NULL;
    t->cl = s->nl;
    t->ce = s->ne;
    t->cap = malloc((size_t)(s->nl ? s->nl : 1) * sizeof *t->cap);
    t->lat = malloc((size_t)(s->nl ? s->nl : 1) * sizeof *t->lat);
    t->ep = malloc((size_t)(s->ne ? s->ne : 1) * sizeof *t->ep);
    if (!t->cap || !t->lat || !t->ep) goto nomem;
    if (s->nl) memcpy(t->cap, s->cap, (size_t)s->nl * sizeof *t->cap);
    if (s->nl) memcpy(t->lat, s->lat, (size_t)s->nl * sizeof *t->lat);
    if (s->ne) memcpy(t->ep, s->ep, (size_t)s->ne * sizeof *t->ep);
    return t;
nomem:
    sim_net_topo_destroy(t);
    sim_err_set(err, SIM_ENOMEM, "net: out of memory copying topology");
    return NULL;
}

