/* sim_net — max-min fair flow sharing on the event engine (the topology and
 * routing live in sim_net_topo.c).
 *
 * Each live sub-flow is a flow record; each link keeps the list of flows
 * draining through it (with each flow remembering its slot in every list,
 * so removal is O(path)). Changes (start, drain end, cancel) only mark the
 * touched links dirty and arm one solve event at the current instant, so a
 * burst of transfers at one time (a striped transfer, a batch of KV
 * hand-offs) costs one solve. The solve walks the connected component of the
 * dirty links, runs progressive filling over it with an indexed min-heap
 * of link fair shares, and reschedules only the flows whose rate changed.
 *
 * Byte accounting is per flow and lazy: a flow stores its remaining bytes as
 * of t_last and its rate; bytes are credited to its links whenever its rate
 * changes, it drains or it is cancelled (and computed on the fly for
 * statistics), so a flow's bytes are credited exactly once per link. */
#include "sim_net_impl.h"

#include "sim_heap.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ runtime */

enum { FL_FREE = 0, FL_DRAIN = 1, FL_LAT = 2, FL_DONE = 3 };

typedef struct {
    int32_t *fl; /* draining flows on this link */
    int32_t n, c;
    double bytes;
    sim_time busy_ns, busy_since;
    /* solver scratch */
    double rem;
    int32_t nun;
    int32_t hpos; /* slot in the solver heap */
    uint32_t seen;
    int32_t dirty;
} link_rt;

typedef struct {
    int32_t state, xfer, next; /* next: sibling in the transfer, or free list */
    int32_t nl;
    int32_t link[SIM_NET_MAX_PATH];
    int32_t pos[SIM_NET_MAX_PATH];
    double remaining; /* bytes still to send as of t_last */
    double rate, new_rate;
    sim_time t_last, latency;
    sim_handle ev;
    uint32_t seen, frozen;
} flow_rt;

typedef struct {
    uint32_t gen;
    int32_t live, pending, first, next_free;
    sim_net_done_fn cb;
    void *ctx;
    uint64_t arg;
    double bytes;
} xfer_rt;

typedef struct {
    double key; /* fair share rem / nun; INFINITY once the link is settled */
    int32_t link;
} heap_ent;

struct sim_net {
    sim_engine *eng;
    sim_net_topo *topo;
    link_rt *links;
    int32_t nl;
    flow_rt *flows;
    int32_t nflows, cflows, flow_free, nfree;
    xfer_rt *xf;
    int32_t nx, cx, xfer_free;
    int32_t *dirty, ndirty;
    int32_t *comp_links, *comp_flows;
    int32_t ccomp_flows;
    heap_ent *heap; /* nl entries */
    int32_t nheap;
    sim_handle solve_ev;
    uint32_t epoch;
    sim_net_stats st;
};

sim_net *sim_net_create(sim_engine *eng, const sim_net_topo *topo, sim_err *err)
{
    if (!eng || !topo) {
        sim_err_set(err, SIM_EINVAL, "net: needs an engine and a topology");
        return NULL;
    }
    sim_net *net = calloc(1, sizeof *net);
    if (!net) goto nomem;
    net->eng = eng;
    net->flow_free = -1;
    net->xfer_free = -1;
    net->topo = sim_net_topo_clone(topo, err);
    if (!net->topo) goto fail;
    net->nl = topo->nl;
    size_t nl = (size_t)(topo->nl ? topo->nl : 1);
    net->links = calloc(nl, sizeof *net->links);
    net->dirty = malloc(nl * sizeof *net->dirty);
    net->comp_links = malloc(nl * sizeof *net->comp_links);
    net->heap = malloc(nl * sizeof *net->heap);
    if (!net->links || !net->dirty || !net->comp_links || !net->heap) goto nomem;
    return net;
nomem:
    sim_err_set(err, SIM_ENOMEM, "net: out of memory creating the network");
fail:
    sim_net_destroy(net);
    return NULL;
}

void sim_net_destroy(sim_net *net)
{
    if (!net) return;
    /* Pending events point at this net: take them out of the engine. */
    if (net->solve_ev) sim_engine_cancel(net->eng, net->solve_ev);
    for (int32_t i = 0; i < net->nflows; i++)
        if (net->flows[i].ev) sim_engine_cancel(net->eng, net->flows[i].ev);
    if (net->links)
        for (int32_t l = 0; l < net->nl; l++) free(net->links[l].fl);
    free(net->links);
    free(net->flows);
    free(net->xf);
    free(net->dirty);
    free(net->comp_links);
    free(net->comp_flows);
    free(net->heap);
    sim_net_topo_destroy(net->topo);
    free(net);
}

const sim_net_topo *sim_net_topo_of(const sim_net *net) { return net->topo; }

/* Nanoseconds to send `bytes` at `rate`, rounded up, except that a value
 * within a few ulps of an integer counts as that integer (so 1e9 B at
 * 1e11 B/s is 10 ms, not 10 ms + 1 ns). */
static sim_time drain_ns(double bytes, double rate)
{
    if (bytes <= 0) return 0;
    double x = bytes / rate * 1e9;
    if (!(x < 9.0e18)) return SIM_TIME_MAX;
    double r = nearbyint(x);
    if (fabs(x - r) <= 4 * DBL_EPSILON * x + 1e-6) return (sim_time)r;
    return (sim_time)ceil(x);
}

static void mark_dirty(sim_net *net, int32_t l)
{
    if (net->links[l].dirty) return;
    net->links[l].dirty = 1;
    net->dirty[net->ndirty++] = l;
}

static void solve_event(sim_engine *eng, void *ctx, uint64_t arg);

static int arm_solve(sim_net *net)
{
    if (net->solve_ev) return 0;
    net->solve_ev = sim_engine_after(net->eng, 0, solve_event, net, 0);
    return net->solve_ev ? 0 : SIM_ENOMEM;
}

/* Credits the bytes a draining flow sent since t_last to its links. */
static void flow_advance(sim_net *net, flow_rt *f, sim_time now)
{
    sim_time dt = now - f->t_last;
    if (dt > 0 && f->rate > 0) {
        double moved = f->rate * (double)dt * 1e-9;
        if (moved > f->remaining) moved = f->remaining;
        f->remaining -= moved;
        for (int j = 0; j < f->nl; j++) net->links[f->link[j]].bytes += moved;
    }
    f->t_last = now;
}

static int flow_link_add(sim_net *net, int32_t fi, sim_time now)
{
    flow_rt *f = &net->flows[fi];
    for (int j = 0; j < f->nl; j++) {
        link_rt *l = &net->links[f->link[j]];
        if (sim_net_grow((void **)&l->fl, &l->c, (int64_t)l->n + 1, sizeof *l->fl)) {
            /* Undo the links already joined so the flow is on none. */
            for (int k = 0; k < j; k++) {
                link_rt *lk = &net->links[f->link[k]];
                lk->n--;
                if (lk->n == 0) lk->busy_ns += now - lk->busy_since;
            }
            return SIM_ENOMEM;
        }
        f->pos[j] = l->n;
        l->fl[l->n++] = fi;
        if (l->n == 1) l->busy_since = now;
    }
    for (int j = 0; j < f->nl; j++) mark_dirty(net, f->link[j]);
    return 0;
}

static void flow_link_remove(sim_net *net, int32_t fi, sim_time now)
{
    flow_rt *f = &net->flows[fi];
    for (int j = 0; j < f->nl; j++) {
        int32_t li = f->link[j];
        link_rt *l = &net->links[li];
        int32_t p = f->pos[j];
        SIM_ASSERT(p < l->n && l->fl[p] == fi, now);
        int32_t last = l->fl[--l->n];
        if (last != fi) {
            l->fl[p] = last;
            flow_rt *g = &net->flows[last];
            for (int k = 0; k < g->nl; k++)
                if (g->link[k] == li) g->pos[k] = p;
        }
        if (l->n == 0) l->busy_ns += now - l->busy_since;
        mark_dirty(net, li);
    }
}

static int32_t flow_alloc(sim_net *net)
{
    int32_t i;
    if (net->flow_free >= 0) {
        i = net->flow_free;
        net->flow_free = net->flows[i].next;
        net->nfree--;
    } else {
        SIM_ASSERT(net->nflows < net->cflows, net->nflows);
        i = net->nflows++;
    }
    memset(&net->flows[i], 0, sizeof net->flows[i]);
    return i;
}

/* Makes room for `more` new flows (and the solver scratch they need), so
 * later steps of a transfer cannot fail half-way for want of memory. */
static int flow_reserve(sim_net *net, int32_t more)
{
    int64_t need = (int64_t)net->nflows + (more > net->nfree ? more - net->nfree : 0);
    if (sim_net_grow((void **)&net->flows, &net->cflows, need, sizeof *net->flows)) return SIM_ENOMEM;
    if (sim_net_grow((void **)&net->comp_flows, &net->ccomp_flows, net->cflows, sizeof(int32_t)))
        return SIM_ENOMEM;
    return 0;
}

static sim_net_xfer xfer_id(const sim_net *net, int32_t x)
{
    return ((uint64_t)net->xf[x].gen << 32) | (uint64_t)(x + 1);
}

static int32_t xfer_lookup(const sim_net *net, sim_net_xfer id)
{
    uint32_t s = (uint32_t)(id & 0xffffffffu);
    if (s == 0 || s > (uint32_t)net->nx) return -1;
    const xfer_rt *x = &net->xf[s - 1];
    return x->live && x->gen == (uint32_t)(id >> 32) ? (int32_t)(s - 1) : -1;
}

/* Stops every flow of transfer x and frees it (cancel and rollback). */
static void xfer_release(sim_net *net, int32_t x)
{
    sim_time now = sim_engine_now(net->eng);
    int32_t fi = net->xf[x].first;
    while (fi >= 0) {
        flow_rt *f = &net->flows[fi];
        int32_t next = f->next;
        if (f->state == FL_DRAIN) {
            flow_advance(net, f, now);
            flow_link_remove(net, fi, now);
        }
        if (f->ev) sim_engine_cancel(net->eng, f->ev);
        if (f->state == FL_DRAIN || f->state == FL_LAT) net->st.active_flows--;
        f->state = FL_FREE;
        f->ev = 0;
        f->next = net->flow_free;
        net->flow_free = fi;
        net->nfree++;
        fi = next;
    }
    xfer_rt *t = &net->xf[x];
    t->live = 0;
    t->gen++;
    if (t->gen == 0) t->gen = 1;
    t->first = -1;
    t->next_free = net->xfer_free;
    net->xfer_free = x;
    net->st.active_transfers--;
}

static void deliver_event(sim_engine *eng, void *ctx, uint64_t arg);

/* A flow's last byte arrived: count it and finish its transfer if it was the
 * last one. The user callback runs last, with the net consistent. */
static void flow_delivered(sim_net *net, int32_t fi)
{
    flow_rt *f = &net->flows[fi];
    int32_t x = f->xfer;
    f->state = FL_DONE;
    f->ev = 0;
    net->st.flows_done++;
    net->st.active_flows--;
    xfer_rt *t = &net->xf[x];
    if (--t->pending > 0) return;
    sim_net_done_fn cb = t->cb;
    void *ctx = t->ctx;
    uint64_t arg = t->arg;
    sim_net_xfer id = xfer_id(net, x);
    net->st.transfers_done++;
    net->st.bytes_delivered += t->bytes;
    xfer_release(net, x);
    if (cb) cb(net, id, ctx, arg);
}

static void deliver_event(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_net *net = ctx;
    int32_t fi = (int32_t)arg;
    SIM_ASSERT(net->flows[fi].state == FL_LAT, sim_engine_now(eng));
    net->flows[fi].ev = 0;
    flow_delivered(net, fi);
}

/* Enters the latency phase of a flow that has sent its last byte. */
static void flow_to_latency(sim_net *net, int32_t fi)
{
    flow_rt *f = &net->flows[fi];
    f->state = FL_LAT;
    f->rate = 0;
    if (f->latency == 0) {
        flow_delivered(net, fi);
        return;
    }
    /* 0: out of memory, recorded by the engine, which ends the run. */
    f->ev = sim_engine_after(net->eng, f->latency, deliver_event, net, (uint64_t)fi);
}

static void drain_event(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_net *net = ctx;
    int32_t fi = (int32_t)arg;
    sim_time now = sim_engine_now(eng);
    flow_rt *f = &net->flows[fi];
    SIM_ASSERT(f->state == FL_DRAIN, now);
    f->ev = 0;
    /* By construction the flow is done now: credit exactly what was left. */
    for (int j = 0; j < f->nl; j++) net->links[f->link[j]].bytes += f->remaining;
    f->remaining = 0;
    f->t_last = now;
    flow_link_remove(net, fi, now);
    /* A solve that cannot be scheduled failed the run (the engine records it). */
    if (arm_solve(net) < 0) return;
    flow_to_latency(net, fi);
}

static inline int ent_less(const sim_net *net, const heap_ent *a, const heap_ent *b)
{
    (void)net;
    return a->key < b->key || (a->key == b->key && a->link < b->link);
}

/* Intrusive: a link keeps its slot in the solver heap. */
#define ENT_PLACE(net, e, i) ((net)->links[(e).link].hpos = (int32_t)(i))
SIM_HEAP_DEFINE(link_heap, heap_ent, 2, sim_net *, ent_less, ENT_PLACE)

static heap_ent heap_pop(sim_net *net)
{
    heap_ent top = net->heap[0];
    net->links[top.link].hpos = -1;
    net->nheap--;
    link_heap_remove(net, net->heap, (size_t)net->nheap, 0);
    return top;
}

/* Gives a draining flow its new rate; moves its completion event only when
 * the rate really changed (a relative 1e-12 is float noise of the solve). */
static void flow_set_rate(sim_net *net, int32_t fi, double rate, sim_time now)
{
    flow_rt *f = &net->flows[fi];
    if (f->rate > 0 && fabs(rate - f->rate) <= 1e-12 * f->rate) return;
    flow_advance(net, f, now);
    f->rate = rate;
    if (f->ev) {
        sim_engine_cancel(net->eng, f->ev);
        net->st.reschedules++;
    }
    /* 0: out of memory, recorded by the engine, which ends the run. */
    f->ev = sim_engine_after(net->eng, drain_ns(f->remaining, rate), drain_event, net,
                             (uint64_t)fi);
}

/* The component of the dirty links, by breadth-first search over link ->
 * flows -> links: its links into comp_links (*ncl_out of them) and flows
 * into comp_flows; returns how many flows. */
static int32_t solve_component(sim_net *net, uint32_t ep, int32_t *ncl_out)
{
    int32_t ncl = 0, ncf = 0;
    for (int32_t i = 0; i < net->ndirty; i++) {
        link_rt *l = &net->links[net->dirty[i]];
        l->dirty = 0;
        if (l->seen != ep) {
            l->seen = ep;
            net->comp_links[ncl++] = net->dirty[i];
        }
    }
    net->ndirty = 0;
    for (int32_t i = 0; i < ncl; i++) {
        link_rt *l = &net->links[net->comp_links[i]];
        for (int32_t k = 0; k < l->n; k++) {
            int32_t fi = l->fl[k];
            flow_rt *f = &net->flows[fi];
            if (f->seen == ep) continue;
            f->seen = ep;
            net->comp_flows[ncf++] = fi;
            for (int j = 0; j < f->nl; j++) {
                link_rt *m = &net->links[f->link[j]];
                if (m->seen != ep) {
                    m->seen = ep;
                    net->comp_links[ncl++] = f->link[j];
                }
            }
        }
    }
    *ncl_out = ncl;
    return ncf;
}

/* Progressive filling over the component's ncl links: each flow's new_rate. */
static void solve_fill(sim_net *net, uint32_t ep, int32_t ncl, sim_time now)
{
    net->nheap = 0;
    for (int32_t i = 0; i < ncl; i++) {
        int32_t li = net->comp_links[i];
        link_rt *l = &net->links[li];
        l->rem = net->topo->cap[li];
        l->nun = l->n;
        l->hpos = -1;
        if (l->nun > 0) {
            heap_ent e = {l->rem / l->nun, li};
            net->heap[net->nheap] = e;
            ENT_PLACE(net, e, net->nheap);
            net->nheap++;
        }
    }
    link_heap_heapify(net, net->heap, (size_t)net->nheap);
    while (net->nheap > 0) {
        heap_ent e = heap_pop(net);
        link_rt *l = &net->links[e.link];
        if (l->nun == 0) break; /* only settled links are left */
        double share = e.key;
        for (int32_t k = 0; k < l->n; k++) {
            flow_rt *f = &net->flows[l->fl[k]];
            if (f->frozen == ep) continue;
            f->frozen = ep;
            f->new_rate = share;
            for (int j = 0; j < f->nl; j++) {
                if (f->link[j] == e.link) continue;
                link_rt *m = &net->links[f->link[j]];
                m->rem -= share;
                if (m->rem < 0) m->rem = 0;
                m->nun--;
                SIM_ASSERT(m->hpos >= 0, now);
                net->heap[m->hpos].key = m->nun > 0 ? m->rem / m->nun : INFINITY;
                link_heap_down(net, net->heap, (size_t)net->nheap, (size_t)m->hpos);
            }
        }
        l->nun = 0;
    }
}

/* Max-min fair rates for the component of the dirty links: collect it by
 * breadth-first search over link -> flows -> links, then progressive
 * filling. The link with the smallest fair share rem/nun saturates first and
 * fixes the rate of all its unfrozen flows; freezing a flow at share s on
 * another link can only raise that link's share (s <= its share), so the
 * heap only ever needs increase-key (a sift down). Cost: O(F + L) for the
 * search and O((F + L) log L) for the filling, F flows and L links in the
 * component. */
static void solve_event(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_net *net = ctx;
    sim_time now = sim_engine_now(eng);
    (void)arg;
    net->solve_ev = 0;
    uint32_t ep = ++net->epoch;
    int32_t ncl;
    int32_t ncf = solve_component(net, ep, &ncl);
    net->st.solves++;
    net->st.solve_links += (uint64_t)ncl;
    net->st.solve_flows += (uint64_t)ncf;
    if (ncf == 0) return;

    solve_fill(net, ep, ncl, now);
    for (int32_t i = 0; i < ncf; i++) {
        int32_t fi = net->comp_flows[i];
        SIM_ASSERT(net->flows[fi].frozen == ep && net->flows[fi].new_rate > 0, now);
        flow_set_rate(net, fi, net->flows[fi].new_rate, now);
    }
}

int sim_net_transfer_striped(sim_net *net, const int *src, int n_src, const int *dst,
                             int n_dst, double bytes, sim_net_done_fn cb, void *ctx,
                             uint64_t arg, sim_net_xfer *id, sim_err *err)
{
    int rc = 0;
    int32_t x = -1;
    int links[SIM_NET_MAX_PATH];
    sim_time lat;
    sim_time now = sim_engine_now(net->eng);
    if (id) *id = 0;
    if (!(isfinite(bytes) && bytes >= 0))
        return sim_err_set(err, SIM_EINVAL, "net: transfer of %g bytes", bytes);
    if (n_src < 1 || n_dst < 1 || !src || !dst)
        return sim_err_set(err, SIM_EINVAL, "net: transfer needs >= 1 source and destination");
    int k = n_src > n_dst ? n_src : n_dst;
    if (k > SIM_NET_MAX_STRIPES)
        return sim_err_set(err, SIM_EINVAL, "net: %d stripes, at most %d", k,
                           SIM_NET_MAX_STRIPES);
    for (int i = 0; i < k; i++) {
        rc = sim_net_topo_route(net->topo, src[i % n_src], dst[i % n_dst], links, &lat, err);
        if (rc < 0) return rc;
    }
    if (flow_reserve(net, k)) goto nomem;
    if (net->xfer_free >= 0) {
        x = net->xfer_free;
        net->xfer_free = net->xf[x].next_free;
    } else {
        if (sim_net_grow((void **)&net->xf, &net->cx, (int64_t)net->nx + 1, sizeof *net->xf)) goto nomem;
        x = net->nx++;
        net->xf[x].gen = 1;
    }
    xfer_rt *t = &net->xf[x];
    t->live = 1;
    t->pending = k;
    t->first = -1;
    t->cb = cb;
    t->ctx = ctx;
    t->arg = arg;
    t->bytes = bytes;
    net->st.active_transfers++;
    double per = bytes / k;
    int any_drain = 0;
    for (int i = k - 1; i >= 0; i--) {
        int n = sim_net_topo_route(net->topo, src[i % n_src], dst[i % n_dst], links, &lat, err);
        SIM_ASSERT(n >= 0, now);
        int32_t fi = flow_alloc(net);
        flow_rt *f = &net->flows[fi];
        f->xfer = x;
        f->next = t->first;
        t->first = fi;
        f->nl = n;
        memcpy(f->link, links, (size_t)n * sizeof links[0]);
        f->remaining = per;
        f->latency = lat;
        f->t_last = now;
        net->st.flows_started++;
        net->st.active_flows++;
        if (n > 0 && per > 0) {
            f->state = FL_DRAIN;
            if (flow_link_add(net, fi, now)) {
                f->state = FL_LAT; /* on no link: released as such below */
                goto nomem;
            }
            any_drain = 1;
        } else {
            /* Nothing to share (no bytes or no constraining link). */
            f->state = FL_LAT;
            f->ev = sim_engine_after(net->eng, lat, deliver_event, net, (uint64_t)fi);
            if (!f->ev) goto nomem;
        }
    }
    if (any_drain && arm_solve(net)) goto nomem;
    net->st.transfers_started++;
    if (id) *id = xfer_id(net, x);
    return 0;
nomem:
    rc = sim_err_set(err, SIM_ENOMEM, "net: out of memory starting a transfer");
    if (x >= 0) xfer_release(net, x);
    return rc;
}

int sim_net_transfer(sim_net *net, int src, int dst, double bytes, sim_net_done_fn cb,
                     void *ctx, uint64_t arg, sim_net_xfer *id, sim_err *err)
{
    return sim_net_transfer_striped(net, &src, 1, &dst, 1, bytes, cb, ctx, arg, id, err);
}

int sim_net_cancel(sim_net *net, sim_net_xfer id)
{
    int32_t x = xfer_lookup(net, id);
    if (x < 0) return 0;
    xfer_release(net, x);
    net->st.transfers_cancelled++;
    /* If the engine cannot take the solve event the others keep their old
     * (still feasible) rates until the next change re-solves them. */
    if (net->ndirty) (void)arm_solve(net);
    return 1;
}

double sim_net_transfer_rate(const sim_net *net, sim_net_xfer id)
{
    int32_t x = xfer_lookup(net, id);
    if (x < 0) return 0.0;
    double r = 0;
    for (int32_t fi = net->xf[x].first; fi >= 0; fi = net->flows[fi].next)
        if (net->flows[fi].state == FL_DRAIN) r += net->flows[fi].rate;
    return r;
}

static double flow_remaining_now(const flow_rt *f, sim_time now)
{
    if (f->state != FL_DRAIN) return 0.0;
    double moved = f->rate * (double)(now - f->t_last) * 1e-9;
    return moved >= f->remaining ? 0.0 : f->remaining - moved;
}

double sim_net_transfer_remaining(const sim_net *net, sim_net_xfer id)
{
    int32_t x = xfer_lookup(net, id);
    if (x < 0) return -1.0;
    sim_time now = sim_engine_now(net->eng);
    double r = 0;
    for (int32_t fi = net->xf[x].first; fi >= 0; fi = net->flows[fi].next)
        r += flow_remaining_now(&net->flows[fi], now);
    return r;
}

sim_time sim_net_estimate(const sim_net *net, int src, int dst, double bytes)
{
    int links[SIM_NET_MAX_PATH];
    sim_time lat;
    if (!(isfinite(bytes) && bytes >= 0)) return SIM_EINVAL;
    int n = sim_net_topo_route(net->topo, src, dst, links, &lat, NULL);
    if (n < 0) return n;
    if (n == 0) return lat;
    double bottleneck = INFINITY;
    for (int i = 0; i < n; i++)
        if (net->topo->cap[links[i]] < bottleneck) bottleneck = net->topo->cap[links[i]];
    sim_time d = drain_ns(bytes, bottleneck);
    return d > SIM_TIME_MAX - lat ? SIM_TIME_MAX : lat + d;
}

int sim_net_link_stats_get(const sim_net *net, int link, sim_net_link_stats *out)
{
    if (link < 0 || link >= net->nl) return SIM_EINVAL;
    sim_time now = sim_engine_now(net->eng);
    const link_rt *l = &net->links[link];
    out->capacity_Bps = net->topo->cap[link];
    out->bytes = l->bytes;
    out->load_Bps = 0;
    for (int32_t k = 0; k < l->n; k++) {
        const flow_rt *f = &net->flows[l->fl[k]];
        out->bytes += f->remaining - flow_remaining_now(f, now);
        out->load_Bps += f->rate;
    }
    out->busy_ns = l->busy_ns + (l->n > 0 ? now - l->busy_since : 0);
    out->active_flows = l->n;
    return 0;
}

void sim_net_stats_get(const sim_net *net, sim_net_stats *out) { *out = net->st; }
