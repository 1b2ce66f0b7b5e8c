/* test_net — the network model: exact single-flow times, fair sharing,
 * hand-computed max-min water-filling, striping, NVLink vs NIC paths,
 * cancel, byte conservation, the max-min (bottleneck) property on random
 * traffic, and determinism. */
#include "sim_net.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>

#define NS 1000000000.0

enum { MAXREC = 1024 };

/* Completion times by arg (-1 = never), and the engine for the clock. */
typedef struct {
    sim_engine *eng;
    struct {
        sim_time t[MAXREC];
    } r;
    int calls;
} box;

static void box_done(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    box *b = ctx;
    (void)net;
    (void)id;
    if (arg < MAXREC) b->r.t[arg] = sim_engine_now(b->eng);
    b->calls++;
}

static void box_init(box *b, sim_engine *eng)
{
    memset(b, 0, sizeof *b);
    b->eng = eng;
    for (int i = 0; i < MAXREC; i++) b->r.t[i] = -1;
}

static void noop(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)ctx;
    (void)arg;
}

/* sim_engine_run leaves the clock at the last event; put one at t so that
 * "now" is t afterwards. */
static void run_to(sim_engine *eng, sim_time t)
{
    sim_engine_at(eng, t, noop, NULL, 0);
    sim_engine_run(eng, t);
    CHECK(sim_engine_now(eng) == t);
}

/* 2 nodes x 4 GPUs, H100-like: NVLink 450 GB/s, NIC 50 GB/s, 5 us. */
static sim_net_topo *small_topo(double host, double pool)
{
    sim_err err;
    sim_net_topo *t = NULL;
    CHECK_MSG(sim_net_topo_build(2, 4, 450e9, 50e9, 5e-6, host, pool, &t, &err) == 0 && t, "%s", err.msg);
    return t;
}

static void test_single_flow(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(0, 0);
    sim_err err;
    sim_net *net = sim_net_create(eng, t, &err);
    sim_net_topo_destroy(t); /* the net keeps its own copy */
    box b;
    box_init(&b, eng);
    const sim_net_topo *nt = sim_net_topo_of(net);
    int g00 = sim_net_topo_gpu(nt, 0, 0), g10 = sim_net_topo_gpu(nt, 1, 0);
    sim_net_xfer id = 0;
    CHECK(sim_net_transfer(net, g00, g10, 1e9, box_done, &b, 0, &id, &err) == 0);
    CHECK(id != 0);
    CHECK(b.calls == 0); /* never completes inside the call */
    sim_engine_run(eng, SIM_TIME_MAX);
    /* 1e9 B at 50e9 B/s = 20 ms, plus 5 us: exact to the ns. */
    CHECK(b.r.t[0] == 5000 + 20000000);
    /* A size that does not divide: 123456789 / 50e9 s = 2469135.78 ns -> ceil. */
    sim_time t0 = sim_engine_now(eng);
    CHECK(sim_net_transfer(net, g00, g10, 123456789.0, box_done, &b, 1, &id, &err) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[1] - t0 == 5000 + 2469136);
    CHECK(sim_net_estimate(net, g00, g10, 123456789.0) == 5000 + 2469136);
    CHECK(b.calls == 2);
    sim_net_destroy(net);
    sim_engine_destroy(eng);
}

/* A hand-built single link with its own latency. */
static void test_hand_link(void)
{
    sim_err err;
    sim_net_topo *t = sim_net_topo_create(&err);
    int l = sim_net_topo_add_link(t, 3e9, 700, &err);
    CHECK(l == 0);
    sim_net_endpoint a = {SIM_NET_EP_GPU, 0, -1, -1, l, -1};
    sim_net_endpoint z = {SIM_NET_EP_GPU, 1, -1, -1, -1, -1};
    int ea = sim_net_topo_add_endpoint(t, &a, &err), ez = sim_net_topo_add_endpoint(t, &z, &err);
    sim_net_topo_set_net_latency(t, 300);
    int links[SIM_NET_MAX_PATH];
    sim_time lat = -1;
    CHECK(sim_net_topo_route(t, ea, ez, links, &lat, &err) == 1);
    CHECK(links[0] == l && lat == 1000);
    /* Bad inputs are errors, not crashes. */
    CHECK(sim_net_topo_add_link(t, 0, 0, &err) == SIM_EINVAL);
    CHECK(sim_net_topo_add_link(t, NAN, 0, &err) == SIM_EINVAL);
    sim_net_endpoint bad = {SIM_NET_EP_GPU, 0, 5, -1, -1, -1};
    CHECK(sim_net_topo_add_endpoint(t, &bad, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "link 5");
    sim_net_endpoint loop = {SIM_NET_EP_GPU, 2, -1, -1, l, l};
    int el = sim_net_topo_add_endpoint(t, &loop, &err);
    CHECK(sim_net_topo_route(t, ea, el, links, &lat, &err) == SIM_EINVAL);

    sim_engine *eng = sim_engine_create();
    sim_net *net = sim_net_create(eng, t, &err);
    box b;
    box_init(&b, eng);
    sim_net_xfer id;
    CHECK(sim_net_transfer(net, ea, ez, 3e9, box_done, &b, 0, &id, &err) == 0);
    CHECK(sim_net_transfer(net, ea, 99, 1, box_done, &b, 1, &id, &err) == SIM_EINVAL);
    CHECK(id == 0);
    CHECK(sim_net_transfer(net, ea, ez, -1, box_done, &b, 1, &id, &err) == SIM_EINVAL);
    CHECK(sim_net_transfer(net, ea, ez, NAN, box_done, &b, 1, &id, &err) == SIM_EINVAL);
    /* Zero bytes: latency only. Same endpoint: immediate (next event). */
    CHECK(sim_net_transfer(net, ea, ez, 0, box_done, &b, 2, &id, &err) == 0);
    CHECK(sim_net_transfer(net, ea, ea, 1e12, box_done, &b, 3, &id, &err) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[0] == 1000 + 1000000000);
    CHECK(b.r.t[1] == -1);
    CHECK(b.r.t[2] == 1000);
    CHECK(b.r.t[3] == 0);
    sim_net_link_stats ls;
    CHECK(sim_net_link_stats_get(net, l, &ls) == 0);
    CHECK_NEAR(ls.bytes, 3e9, 1e-3);
    CHECK(ls.busy_ns == 1000000000);
    CHECK(ls.active_flows == 0);
    CHECK(sim_net_link_stats_get(net, 7, &ls) == SIM_EINVAL);
    sim_net_destroy(net);
    sim_engine_destroy(eng);
    sim_net_topo_destroy(t);

    /* Builder rejects nonsense, leaving *out NULL. */
    static char not_a_topo;
    sim_net_topo *none = (sim_net_topo *)(void *)&not_a_topo;
    CHECK(sim_net_topo_build(0, 8, 1e9, 1e9, 0, 0, 0, &none, &err) == SIM_EINVAL && !none);
    CHECK(sim_net_topo_build(2, 8, -1, 1e9, 0, 0, 0, &none, &err) == SIM_EINVAL && !none);
    CHECK(sim_net_topo_build(2, 8, 1e9, 1e9, NAN, 0, 0, &none, &err) == SIM_EINVAL && !none);
    CHECK(sim_net_topo_build(2, 8, 1e9, 1e9, 0, -5, 0, &none, &err) == SIM_EINVAL && !none);
}

static void test_two_share(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(0, 0);
    sim_err err;
    sim_net *net = sim_net_create(eng, t, &err);
    box b;
    box_init(&b, eng);
    int s = sim_net_topo_gpu(t, 0, 0);
    sim_net_xfer a, c;
    /* Same source NIC, different destination NICs: the source NIC is shared. */
    CHECK(sim_net_transfer(net, s, sim_net_topo_gpu(t, 1, 0), 1e9, box_done, &b, 0, &a, &err) == 0);
    CHECK(sim_net_transfer(net, s, sim_net_topo_gpu(t, 1, 1), 1e9, box_done, &b, 1, &c, &err) == 0);
    sim_engine_run(eng, 0); /* the solve of t = 0 */
    CHECK_NEAR(sim_net_transfer_rate(net, a), 25e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, c), 25e9, 1e-3);
    sim_net_link_stats ls;
    sim_net_endpoint e;
    sim_net_topo_endpoint(t, s, &e);
    sim_net_link_stats_get(net, e.ext_out, &ls);
    CHECK(ls.active_flows == 2);
    CHECK_NEAR(ls.load_Bps, 50e9, 1e-3);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[0] == 5000 + 40000000);
    CHECK(b.r.t[1] == 5000 + 40000000);
    sim_net_link_stats_get(net, e.ext_out, &ls);
    CHECK_NEAR(ls.bytes, 2e9, 1e-3);
    CHECK(ls.busy_ns == 40000000);
    sim_net_destroy(net);
    sim_net_topo_destroy(t);
    sim_engine_destroy(eng);
}

/* Hand-built: link L1 (10 GB/s) and L2 (20 GB/s); flow A crosses both, B
 * uses only L1, C only L2. Water-filling: L1's share 5 < L2's 10, so A = B = 5
 * GB/s and C gets L2's rest, 15 GB/s. With A = 15 GB, B = 5 GB, C = 30 GB:
 * B leaves at 1 s; then L1 alone would give A 10 and L2 splits 20 as A = C =
 * 10; A (10 GB left) leaves at 2 s, C has 30 - 15 - 10 = 5 GB left and runs
 * alone at 20 GB/s: done at 2.25 s. Every arrival adds the 1 us network
 * latency. */
static void test_maxmin_textbook(void)
{
    sim_err err;
    sim_net_topo *t = sim_net_topo_create(&err);
    int l1 = sim_net_topo_add_link(t, 10e9, 0, &err);
    int l2 = sim_net_topo_add_link(t, 20e9, 0, &err);
    sim_net_topo_set_net_latency(t, 1000);
    sim_net_endpoint as = {SIM_NET_EP_GPU, 0, -1, -1, l1, -1};
    sim_net_endpoint ad = {SIM_NET_EP_GPU, 1, -1, -1, -1, l2};
    sim_net_endpoint bs = {SIM_NET_EP_GPU, 2, -1, -1, l1, -1};
    sim_net_endpoint bd = {SIM_NET_EP_GPU, 3, -1, -1, -1, -1};
    sim_net_endpoint cs = {SIM_NET_EP_GPU, 4, -1, -1, -1, -1};
    sim_net_endpoint cd = {SIM_NET_EP_GPU, 5, -1, -1, -1, l2};
    int eas = sim_net_topo_add_endpoint(t, &as, &err), ead = sim_net_topo_add_endpoint(t, &ad, &err);
    int ebs = sim_net_topo_add_endpoint(t, &bs, &err), ebd = sim_net_topo_add_endpoint(t, &bd, &err);
    int ecs = sim_net_topo_add_endpoint(t, &cs, &err), ecd = sim_net_topo_add_endpoint(t, &cd, &err);
    sim_engine *eng = sim_engine_create();
    sim_net *net = sim_net_create(eng, t, &err);
    box b;
    box_init(&b, eng);
    sim_net_xfer xa, xb, xc;
    CHECK(sim_net_transfer(net, eas, ead, 15e9, box_done, &b, 0, &xa, &err) == 0);
    CHECK(sim_net_transfer(net, ebs, ebd, 5e9, box_done, &b, 1, &xb, &err) == 0);
    CHECK(sim_net_transfer(net, ecs, ecd, 30e9, box_done, &b, 2, &xc, &err) == 0);
    sim_engine_run(eng, 0);
    CHECK_NEAR(sim_net_transfer_rate(net, xa), 5e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, xb), 5e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, xc), 15e9, 1e-3);
    run_to(eng, 1500000000); /* 1.5 s: B gone */
    CHECK(b.r.t[1] == 1000000000 + 1000);
    CHECK_NEAR(sim_net_transfer_rate(net, xa), 10e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, xc), 10e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_remaining(net, xa), 5e9, 1.0);
    CHECK_NEAR(sim_net_transfer_remaining(net, xc), 10e9, 1.0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK_NEAR(b.r.t[0], 2000000000 + 1000, 1);
    CHECK_NEAR(b.r.t[2], 2250000000 + 1000, 1);
    sim_net_link_stats s1, s2;
    sim_net_link_stats_get(net, l1, &s1);
    sim_net_link_stats_get(net, l2, &s2);
    CHECK_NEAR(s1.bytes, 20e9, 1e-2); /* A + B */
    CHECK_NEAR(s2.bytes, 45e9, 1e-2); /* A + C */
    CHECK(s1.busy_ns == 2000000000);
    CHECK(s2.busy_ns == 2250000000);
    sim_net_stats st;
    sim_net_stats_get(net, &st);
    CHECK(st.transfers_done == 3 && st.active_flows == 0 && st.active_transfers == 0);
    CHECK_NEAR(st.bytes_delivered, 50e9, 1e-3);
    sim_net_destroy(net);
    sim_engine_destroy(eng);
    sim_net_topo_destroy(t);
}

/* The classic shape with thirds: links L1, L2 of 3 GB/s; f0 crosses both,
 * f1 and f2 use L1, f3 uses L2. L1's share 1 is the bottleneck: f0 = f1 =
 * f2 = 1 GB/s, f3 = 2. Cancelling f1 at 0.5 s frees its share: everyone gets
 * 1.5. With f0 = f2 = 2 GB, f3 = 3 GB: f0 and f2 have 1.5 GB left at 0.5 s ->
 * done at 1.5 s; f3 has 2 GB left, sends 1.5 by 1.5 s, then the last 0.5 GB
 * alone at 3 GB/s: done at 1.5 s + 1/6 s = 1666666667 ns (rounded up). */
static void test_maxmin_cancel(void)
{
    sim_err err;
    sim_net_topo *t = sim_net_topo_create(&err);
    int l1 = sim_net_topo_add_link(t, 3e9, 0, &err);
    int l2 = sim_net_topo_add_link(t, 3e9, 0, &err);
    int ep[8];
    const int32_t outs[4] = {l1, l1, l1, -1}, ins[4] = {l2, -1, -1, l2};
    for (int i = 0; i < 4; i++) {
        sim_net_endpoint s = {SIM_NET_EP_GPU, 2 * i, -1, -1, outs[i], -1};
        sim_net_endpoint d = {SIM_NET_EP_GPU, 2 * i + 1, -1, -1, -1, ins[i]};
        ep[2 * i] = sim_net_topo_add_endpoint(t, &s, &err);
        ep[2 * i + 1] = sim_net_topo_add_endpoint(t, &d, &err);
    }
    sim_engine *eng = sim_engine_create();
    sim_net *net = sim_net_create(eng, t, &err);
    box b;
    box_init(&b, eng);
    const double sz[4] = {2e9, 2e9, 2e9, 3e9};
    sim_net_xfer x[4];
    for (int i = 0; i < 4; i++)
        CHECK(sim_net_transfer(net, ep[2 * i], ep[2 * i + 1], sz[i], box_done, &b, (uint64_t)i,
                               &x[i], &err) == 0);
    sim_engine_run(eng, 0);
    CHECK_NEAR(sim_net_transfer_rate(net, x[0]), 1e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, x[1]), 1e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, x[2]), 1e9, 1e-3);
    CHECK_NEAR(sim_net_transfer_rate(net, x[3]), 2e9, 1e-3);
    run_to(eng, 500000000);
    CHECK(sim_net_cancel(net, x[1]) == 1);
    CHECK(sim_net_cancel(net, x[1]) == 0); /* stale */
    CHECK(sim_net_transfer_remaining(net, x[1]) < 0);
    sim_engine_run(eng, 500000000);
    for (int i = 0; i < 4; i++)
        if (i != 1) CHECK_NEAR(sim_net_transfer_rate(net, x[i]), 1.5e9, 1e-3);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK_NEAR(b.r.t[0], 1500000000, 1);
    CHECK_NEAR(b.r.t[2], 1500000000, 1);
    CHECK_NEAR(b.r.t[3], 1666666667, 1);
    CHECK(b.r.t[1] == -1); /* cancelled: no callback */
    CHECK(b.calls == 3);
    sim_net_link_stats s1;
    sim_net_link_stats_get(net, l1, &s1);
    /* f0 + f2 whole, f1 the 0.5 GB it sent before the cancel. */
    CHECK_NEAR(s1.bytes, 4.5e9, 1e-2);
    sim_net_stats st;
    sim_net_stats_get(net, &st);
    CHECK(st.transfers_cancelled == 1 && st.transfers_done == 3);
    sim_net_destroy(net);
    sim_engine_destroy(eng);
    sim_net_topo_destroy(t);
}

static sim_time one_time(sim_net *net, sim_engine *eng, int s, int d, double bytes)
{
    box b;
    box_init(&b, eng);
    sim_time t0 = sim_engine_now(eng);
    sim_net_xfer id;
    int rc = sim_net_transfer(net, s, d, bytes, box_done, &b, 0, &id, NULL);
    CHECK(rc == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    return b.r.t[0] - t0;
}

static void test_paths_and_scaling(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(64e9, 25e9);
    sim_err err;
    sim_net *net = sim_net_create(eng, t, &err);
    int g00 = sim_net_topo_gpu(t, 0, 0), g01 = sim_net_topo_gpu(t, 0, 1);
    int g10 = sim_net_topo_gpu(t, 1, 0);
    int h0 = sim_net_topo_host(t, 0), h1 = sim_net_topo_host(t, 1), pool = sim_net_topo_pool(t);
    CHECK(h0 >= 0 && h1 >= 0 && pool >= 0 && sim_net_topo_host(t, 2) == -1);
    CHECK(sim_net_topo_n_endpoints(t) == 8 + 2 + 1);
    CHECK(sim_net_topo_n_links(t) == 8 * 4 + 2 * 2 + 2);
    /* NVLink inside a node: no network latency, 450 GB/s. */
    CHECK(one_time(net, eng, g00, g01, 9e9) == 20000000);
    /* NIC across nodes: 5 us + 50 GB/s. */
    CHECK(one_time(net, eng, g00, g10, 9e9) == 5000 + 180000000);
    /* Own host tier: the tier's link only; another node's: the NIC too. */
    CHECK(one_time(net, eng, g00, h0, 8e9) == 125000000);
    CHECK(one_time(net, eng, h0, g01, 8e9) == 125000000);
    CHECK(one_time(net, eng, g00, h1, 8e9) == 5000 + 160000000);
    /* Two GPUs writing to their host tier share its 64 GB/s link. */
    {
        box b;
        box_init(&b, eng);
        sim_net_xfer x1, x2;
        sim_time t0 = sim_engine_now(eng);
        CHECK(sim_net_transfer(net, g00, h0, 8e9, box_done, &b, 0, &x1, &err) == 0);
        CHECK(sim_net_transfer(net, g01, h0, 8e9, box_done, &b, 1, &x2, &err) == 0);
        sim_engine_run(eng, SIM_TIME_MAX);
        CHECK(b.r.t[0] - t0 == 250000000 && b.r.t[1] - t0 == 250000000);
    }
    /* Routes name the expected ports. */
    {
        int links[SIM_NET_MAX_PATH];
        sim_time lat;
        sim_net_endpoint e0, e1, e4;
        sim_net_topo_endpoint(t, g00, &e0);
        sim_net_topo_endpoint(t, g01, &e1);
        sim_net_topo_endpoint(t, g10, &e4);
        CHECK(sim_net_topo_route(t, g00, g01, links, &lat, &err) == 2);
        CHECK(links[0] == e0.nvl_out && links[1] == e1.nvl_in && lat == 0);
        CHECK(sim_net_topo_route(t, g10, g00, links, &lat, &err) == 2);
        CHECK(links[0] == e4.ext_out && links[1] == e0.ext_in && lat == 5000);
        CHECK(sim_net_topo_route(t, g00, g00, links, &lat, &err) == 0 && lat == 0);
        CHECK(sim_net_topo_endpoint(t, 99, &e0) == SIM_EINVAL);
    }
    /* Pool: behind the network, 25 GB/s bottleneck. */
    CHECK(one_time(net, eng, pool, g10, 5e9) == 5000 + 200000000);
    CHECK(sim_net_estimate(net, pool, g10, 5e9) == 5000 + 200000000);
    CHECK(sim_net_estimate(net, g00, 999, 5e9) < 0);
    /* Linear in bytes (up to the 1 ns rounding). */
    sim_time a = one_time(net, eng, g00, g10, 1.234e8) - 5000;
    sim_time c = one_time(net, eng, g00, g10, 2 * 1.234e8) - 5000;
    sim_time d = one_time(net, eng, g00, g10, 10 * 1.234e8) - 5000;
    CHECK_NEAR(c, 2 * a, 1);
    CHECK_NEAR(d, 10 * a, 1);
    CHECK_NEAR(a, 1.234e8 / 50e9 * NS, 1);
    sim_net_destroy(net);
    sim_net_topo_destroy(t);
    sim_engine_destroy(eng);
}

static void test_striping(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(0, 0);
    sim_err err;
    sim_net *net = sim_net_create(eng, t, &err);
    int n0[4], n1[4];
    for (int g = 0; g < 4; g++) {
        n0[g] = sim_net_topo_gpu(t, 0, g);
        n1[g] = sim_net_topo_gpu(t, 1, g);
    }
    box b;
    box_init(&b, eng);
    sim_net_xfer id;
    /* TP4 -> TP4 across nodes: four NICs each way, 2 GB in 10 ms + 5 us. */
    CHECK(sim_net_transfer_striped(net, n0, 4, n1, 4, 2e9, box_done, &b, 0, &id, &err) == 0);
    sim_engine_run(eng, 0);
    CHECK_NEAR(sim_net_transfer_rate(net, id), 200e9, 1e-2);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[0] == 5000 + 10000000);
    CHECK(b.calls == 1);
    /* TP2 -> TP4: two sub-flows on each source NIC, so 2 NICs' worth. */
    sim_time t0 = sim_engine_now(eng);
    CHECK(sim_net_transfer_striped(net, n0, 2, n1, 4, 2e9, box_done, &b, 1, &id, &err) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[1] - t0 == 5000 + 20000000);
    /* TP4 -> TP4 inside a node over NVLink. */
    t0 = sim_engine_now(eng);
    CHECK(sim_net_transfer_striped(net, n0, 4, n0 + 0, 4, 0, box_done, &b, 2, &id, &err) == 0);
    int rot[4] = {n0[1], n0[2], n0[3], n0[0]};
    CHECK(sim_net_transfer_striped(net, n0, 4, rot, 4, 18e9, box_done, &b, 3, &id, &err) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[2] - t0 == 0);
    CHECK(b.r.t[3] - t0 == 10000000);
    CHECK(sim_net_transfer_striped(net, n0, 0, n1, 4, 1, NULL, NULL, 0, &id, &err) == SIM_EINVAL);
    sim_net_destroy(net);
    sim_net_topo_destroy(t);
    sim_engine_destroy(eng);
}

/* Flows in different components do not disturb each other: the solve after
 * a change visits only the component touched, and the untouched flow keeps
 * its completion event (its time stays exact). */
static void test_components(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(0, 0);
    sim_net *net = sim_net_create(eng, t, NULL);
    box b;
    box_init(&b, eng);
    sim_net_xfer x;
    /* X: NVLink inside node 1, 45 GB = 100 ms alone. */
    CHECK(sim_net_transfer(net, sim_net_topo_gpu(t, 1, 0), sim_net_topo_gpu(t, 1, 1), 45e9,
                           box_done, &b, 0, &x, NULL) == 0);
    run_to(eng, 1000000);
    /* Y and Z share NVLink ports inside node 0. */
    CHECK(sim_net_transfer(net, sim_net_topo_gpu(t, 0, 0), sim_net_topo_gpu(t, 0, 1), 4.5e9,
                           box_done, &b, 1, &x, NULL) == 0);
    CHECK(sim_net_transfer(net, sim_net_topo_gpu(t, 0, 0), sim_net_topo_gpu(t, 0, 2), 4.5e9,
                           box_done, &b, 2, &x, NULL) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(b.r.t[0] == 100000000);
    CHECK(b.r.t[1] == 1000000 + 20000000 && b.r.t[2] == 1000000 + 20000000);
    sim_net_stats st;
    sim_net_stats_get(net, &st);
    /* X's start (1 flow), Y+Z's start (2); the ends find empty links. */
    CHECK(st.solves == 4);
    CHECK(st.solve_flows == 3);
    CHECK(st.reschedules == 0);
    sim_net_destroy(net);
    sim_net_topo_destroy(t);
    sim_engine_destroy(eng);
}

/* Chained transfers started from the completion callback. */
typedef struct {
    sim_engine *eng;
    int src, dst, left;
    sim_time last;
} chain;

static void chain_done(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    chain *c = ctx;
    (void)id;
    c->last = sim_engine_now(c->eng);
    if (--c->left > 0) {
        sim_net_xfer nid;
        int rc = sim_net_transfer(net, c->src, c->dst, 1e9, chain_done, c, arg, &nid, NULL);
        CHECK(rc == 0);
    }
}

static void test_reentrant(void)
{
    sim_engine *eng = sim_engine_create();
    sim_net_topo *t = small_topo(0, 0);
    sim_net *net = sim_net_create(eng, t, NULL);
    chain c = {eng, sim_net_topo_gpu(t, 0, 0), sim_net_topo_gpu(t, 1, 3), 3, 0};
    sim_net_xfer id;
    CHECK(sim_net_transfer(net, c.src, c.dst, 1e9, chain_done, &c, 0, &id, NULL) == 0);
    sim_engine_run(eng, SIM_TIME_MAX);
    CHECK(c.left == 0);
    CHECK(c.last == 3 * (5000 + 20000000));
    /* Destroying with transfers in flight leaves no events behind. */
    CHECK(sim_net_transfer(net, c.src, c.dst, 1e9, NULL, NULL, 0, &id, NULL) == 0);
    sim_engine_run(eng, sim_engine_now(eng) + 1000);
    CHECK(sim_engine_pending(eng) == 1);
    sim_net_destroy(net);
    CHECK(sim_engine_pending(eng) == 0);
    sim_net_topo_destroy(t);
    sim_engine_destroy(eng);
}

/* ---- random traffic: max-min property, conservation, determinism ---- */

enum { RN = 400, RNODES = 4, RGPN = 4 };

typedef struct {
    sim_net *net;
    sim_engine *eng;
    const sim_net_topo *t;
    int src[RN], dst[RN];
    double bytes[RN];
    sim_time start[RN], done[RN];
    sim_net_xfer id[RN];
    int cancel_at[RN]; /* index of a later start at which this is cancelled; -1 none */
    int live[RN];
    int nbad;
} rnd;

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void rnd_done(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    rnd *r = ctx;
    (void)net;
    (void)id;
    r->done[arg] = sim_engine_now(r->eng);
    r->live[arg] = 0;
}

static void rnd_start(sim_engine *eng, void *ctx, uint64_t arg)
{
    rnd *r = ctx;
    int i = (int)arg;
    (void)eng;
    if (sim_net_transfer(r->net, r->src[i], r->dst[i], r->bytes[i], rnd_done, r, arg, &r->id[i],
                         NULL))
        r->nbad++;
    r->live[i] = 1;
    for (int j = 0; j < i; j++)
        if (r->cancel_at[j] == i && r->live[j]) {
            if (sim_net_cancel(r->net, r->id[j]) != 1) r->nbad++;
            r->live[j] = 0;
        }
}

/* Checks feasibility and that every draining transfer has a bottleneck: a
 * saturated link on its route on which no flow gets more than it does. That
 * pair of properties defines the max-min fair allocation. */
static int check_maxmin(rnd *r)
{
    int nl = sim_net_topo_n_links(r->t), bad = 0;
    double *load = calloc((size_t)nl, sizeof *load), *maxr = calloc((size_t)nl, sizeof *maxr);
    int links[SIM_NET_MAX_PATH];
    sim_time lat;
    for (int i = 0; i < RN; i++) {
        if (!r->live[i]) continue;
        double rate = sim_net_transfer_rate(r->net, r->id[i]);
        int n = sim_net_topo_route(r->t, r->src[i], r->dst[i], links, &lat, NULL);
        for (int k = 0; k < n; k++) {
            load[links[k]] += rate;
            if (rate > maxr[links[k]]) maxr[links[k]] = rate;
        }
    }
    for (int l = 0; l < nl; l++) {
        sim_net_link_stats ls;
        sim_net_link_stats_get(r->net, l, &ls);
        if (load[l] > ls.capacity_Bps * (1 + 1e-9)) bad++;
        if (fabs(ls.load_Bps - load[l]) > 1e-6 * ls.capacity_Bps) bad++;
    }
    for (int i = 0; i < RN; i++) {
        if (!r->live[i]) continue;
        double rate = sim_net_transfer_rate(r->net, r->id[i]);
        if (rate == 0) continue; /* in its latency phase */
        int n = sim_net_topo_route(r->t, r->src[i], r->dst[i], links, &lat, NULL), ok = 0;
        for (int k = 0; k < n; k++) {
            double cap = sim_net_topo_link_capacity(r->t, links[k]);
            if (load[links[k]] >= cap * (1 - 1e-9) && rate >= maxr[links[k]] * (1 - 1e-9)) ok = 1;
        }
        if (!ok) bad++;
    }
    free(load);
    free(maxr);
    return bad;
}

static void rnd_run(rnd *r, uint64_t seed, int with_cancel, int *maxmin_bad, int *checks)
{
    sim_err err;
    sim_net_topo *t = NULL;
    CHECK_MSG(sim_net_topo_build(RNODES, RGPN, 450e9, 50e9, 2e-6, 64e9, 100e9, &t, &err) == 0 && t, "%s", err.msg);
    memset(r, 0, sizeof *r);
    r->eng = sim_engine_create();
    r->net = sim_net_create(r->eng, t, &err);
    r->t = sim_net_topo_of(r->net);
    sim_net_topo_destroy(t);
    int ne = sim_net_topo_n_endpoints(r->t);
    uint64_t s = seed;
    sim_time at = 0;
    for (int i = 0; i < RN; i++) {
        r->src[i] = (int)(lcg(&s) % (uint64_t)ne);
        do r->dst[i] = (int)(lcg(&s) % (uint64_t)ne);
        while (r->dst[i] == r->src[i]);
        r->bytes[i] = 1e6 * (double)(1 + lcg(&s) % 2000); /* 1 MB .. 2 GB */
        at += (sim_time)(lcg(&s) % 2000) * 1000;            /* mean 1 ms apart */
        r->start[i] = at;
        r->done[i] = -1;
        r->cancel_at[i] = -1;
        if (with_cancel && lcg(&s) % 8 == 0 && i + 5 < RN) r->cancel_at[i] = i + 1 + (int)(lcg(&s) % 4);
        sim_engine_at(r->eng, at, rnd_start, r, (uint64_t)i);
    }
    /* Step through time, checking the allocation between instants. */
    for (sim_time c = 500; c < at + 100000000; c += 1000000 + 1) {
        sim_engine_run(r->eng, c);
        *maxmin_bad += check_maxmin(r);
        (*checks)++;
    }
    sim_engine_run(r->eng, SIM_TIME_MAX);
}

static void rnd_free(rnd *r)
{
    sim_net_destroy(r->net);
    sim_engine_destroy(r->eng);
}

static void test_random(void)
{
    static rnd a, b;
    int bad = 0, checks = 0;
    rnd_run(&a, 42, 0, &bad, &checks);
    CHECK(a.nbad == 0);
    CHECK_MSG(bad == 0, "%d max-min violations in %d checkpoints", bad, checks);
    CHECK(checks > 300);
    /* Conservation: each link carried exactly the bytes of the flows routed
     * over it; no link moved more than capacity x busy time. */
    int nl = sim_net_topo_n_links(a.t);
    double *want = calloc((size_t)nl, sizeof *want);
    int links[SIM_NET_MAX_PATH];
    sim_time lat;
    double total = 0;
    int all_done = 1, late = 0;
    for (int i = 0; i < RN; i++) {
        int n = sim_net_topo_route(a.t, a.src[i], a.dst[i], links, &lat, NULL);
        for (int k = 0; k < n; k++) want[links[k]] += a.bytes[i];
        total += a.bytes[i];
        if (a.done[i] < 0) all_done = 0;
        /* Never faster than alone on an idle network. */
        if (a.done[i] - a.start[i] < sim_net_estimate(a.net, a.src[i], a.dst[i], a.bytes[i]))
            late++;
    }
    CHECK(all_done);
    CHECK(late == 0);
    double worst = 0;
    for (int l = 0; l < nl; l++) {
        sim_net_link_stats ls;
        sim_net_link_stats_get(a.net, l, &ls);
        double rel = fabs(ls.bytes - want[l]) / (want[l] > 0 ? want[l] : 1);
        if (rel > worst) worst = rel;
        CHECK(ls.active_flows == 0);
        CHECK(ls.bytes <= ls.capacity_Bps * ((double)ls.busy_ns + 1.0) / NS * (1 + 1e-9));
    }
    CHECK_MSG(worst < 1e-9, "worst relative byte error %g", worst);
    sim_net_stats st;
    sim_net_stats_get(a.net, &st);
    CHECK(st.transfers_done == RN && st.active_flows == 0 && st.active_transfers == 0);
    CHECK_NEAR(st.bytes_delivered, total, total * 1e-12);
    free(want);

    /* Determinism: the same inputs give the same times, bit for bit. */
    int bad2 = 0, checks2 = 0;
    rnd_run(&b, 42, 0, &bad2, &checks2);
    CHECK(memcmp(a.done, b.done, sizeof a.done) == 0);
    sim_net_stats st2;
    sim_net_stats_get(b.net, &st2);
    CHECK(st.solves == st2.solves && st.reschedules == st2.reschedules);
    rnd_free(&a);
    rnd_free(&b);

    /* With cancels: the max-min property still holds and accounts balance. */
    bad = checks = 0;
    rnd_run(&a, 7, 1, &bad, &checks);
    CHECK(a.nbad == 0);
    CHECK_MSG(bad == 0, "%d max-min violations with cancels", bad);
    sim_net_stats_get(a.net, &st);
    int ncancel = 0;
    for (int i = 0; i < RN; i++) ncancel += a.cancel_at[i] >= 0 && a.done[i] < 0;
    CHECK(ncancel > 5);
    CHECK(st.transfers_cancelled == (uint64_t)ncancel);
    CHECK(st.transfers_done + st.transfers_cancelled == st.transfers_started);
    CHECK(st.active_flows == 0 && st.active_transfers == 0);
    rnd_free(&a);
}

static const test_case cases[] = {
    {"single_flow", test_single_flow},
    {"hand_link", test_hand_link},
    {"two_share", test_two_share},
    {"maxmin_textbook", test_maxmin_textbook},
    {"maxmin_cancel", test_maxmin_cancel},
    {"paths_and_scaling", test_paths_and_scaling},
    {"striping", test_striping},
    {"components", test_components},
    {"reentrant", test_reentrant},
    {"random", test_random},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    (void)argv;
    return test_run("test_net", cases);
}
