/* bench_net — throughput of the network model's max-min solver (not a test).
 *
 * Hold model on a 16-node x 8-GPU H100-like cluster (NVLink 450 GB/s, NIC
 * 50 GB/s, 5 us): N transfers are always in flight; each completion starts a
 * new one between random endpoints with a random size (1..256 MB, drawn up
 * front into a table). Each start and each end re-solves the connected
 * component it touches, so the figure is the cost of the solver plus the
 * engine rescheduling. Patterns:
 *   cross  uniform random GPU pairs over the whole cluster (mostly NIC; one
 *          big component: the worst case, O((F + L) log L) per solve)
 *   local  random pairs inside a random node (NVLink; components per node)
 *   tp8    TP8 -> TP8 KV hand-off between random nodes, striped over 8 NICs
 * Reported for N = 10, 100, 1000 as transfers (and sub-flows) completed per
 * CPU second, with the mean component size the solver visited, the CPU cost
 * per flow visited by a solve (all costs included) and the completion
 * events moved per flow. Runs with N = 100 do n/2 transfers, N = 1000 n/20,
 * tp8 an eighth of that.
 *
 * Usage: bench_net [transfers-per-run] (default 200000). */
#include "sim_hash.h"
#include "sim_net.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TAB = 1 << 16, NODES = 16, GPN = 8 };
enum { PAT_CROSS = 0, PAT_LOCAL = 1, PAT_TP8 = 2 };

typedef struct {
    sim_net *net;
    const sim_net_topo *t;
    uint32_t rnd[TAB];
    double size[TAB];
    uint32_t k;
    int pattern;
    uint64_t done, target;
    int failed;
} hold;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
    return sim_hash_mix64(*s += SIM_HASH_GAMMA);
}

static void start_one(hold *h);

static void on_done(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    hold *h = ctx;
    (void)net;
    (void)id;
    (void)arg;
    h->done++;
    if (h->done < h->target) start_one(h);
}

static uint32_t next_rnd(hold *h) { return h->rnd[h->k++ & (TAB - 1)]; }

static void start_one(hold *h)
{
    double bytes = h->size[h->k & (TAB - 1)];
    sim_net_xfer id;
    int rc;
    if (h->pattern == PAT_TP8) {
        int a = (int)(next_rnd(h) % NODES), b = (int)(next_rnd(h) % (NODES - 1));
        if (b >= a) b++;
        int src[GPN], dst[GPN];
        for (int g = 0; g < GPN; g++) {
            src[g] = sim_net_topo_gpu(h->t, a, g);
            dst[g] = sim_net_topo_gpu(h->t, b, g);
        }
        rc = sim_net_transfer_striped(h->net, src, GPN, dst, GPN, 8 * bytes, on_done, h, 0, &id,
                                      NULL);
    } else {
        int s, d;
        if (h->pattern == PAT_LOCAL) {
            int n = (int)(next_rnd(h) % NODES), gs = (int)(next_rnd(h) % GPN);
            int gd = (int)(next_rnd(h) % (GPN - 1));
            if (gd >= gs) gd++;
            s = sim_net_topo_gpu(h->t, n, gs);
            d = sim_net_topo_gpu(h->t, n, gd);
        } else {
            s = (int)(next_rnd(h) % (NODES * GPN));
            d = (int)(next_rnd(h) % (NODES * GPN - 1));
            if (d >= s) d++;
        }
        rc = sim_net_transfer(h->net, s, d, bytes, on_done, h, 0, &id, NULL);
    }
    if (rc) h->failed = 1;
}

static int run(int pattern, int n_conc, uint64_t n_xfers)
{
    static hold h;
    sim_err err;
    sim_net_topo *t = NULL;
    if (sim_net_topo_build(NODES, GPN, 450e9, 50e9, 5e-6, 0, 0, &t, &err) < 0) {
        fprintf(stderr, "bench_net: %s\n", err.msg);
        return 1;
    }
    sim_engine *eng = sim_engine_create();
    h.net = sim_net_create(eng, t, &err);
    if (!eng || !h.net) {
        fprintf(stderr, "bench_net: cannot create the network\n");
        return 1;
    }
    h.t = sim_net_topo_of(h.net);
    uint64_t s = 12345 + (uint64_t)pattern * 1000 + (uint64_t)n_conc;
    for (int i = 0; i < TAB; i++) {
        h.rnd[i] = (uint32_t)splitmix(&s);
        h.size[i] = 1e6 * (double)(1 + splitmix(&s) % 256);
    }
    h.k = 0;
    h.pattern = pattern;
    h.done = 0;
    h.target = n_xfers + (uint64_t)n_conc; /* the last n_conc are left running */
    h.failed = 0;
    double t0 = now_s();
    for (int i = 0; i < n_conc; i++) start_one(&h);
    while (h.done < n_xfers && sim_engine_step(eng)) {}
    double dt = now_s() - t0;
    sim_net_stats st;
    sim_net_stats_get(h.net, &st);
    static const char *names[] = {"cross", "local", "tp8"};
    printf("%-5s N=%-4d %7llu xfers %6.2f s cpu %9.0f xfers/s %9.0f flows/s | "
           "%6.1f flows/solve %5.1f ns/flow-visit %6.2f resched/flow | sim %.3f s\n",
           names[pattern], n_conc, (unsigned long long)h.done, dt, (double)h.done / dt,
           (double)st.flows_done / dt, st.solves ? (double)st.solve_flows / (double)st.solves : 0,
           st.solve_flows ? dt * 1e9 / (double)st.solve_flows : 0,
           st.flows_done ? (double)st.reschedules / (double)st.flows_done : 0,
           (double)sim_engine_now(eng) / 1e9);
    sim_net_destroy(h.net);
    sim_engine_destroy(eng);
    sim_net_topo_destroy(t);
    if (h.failed) fprintf(stderr, "bench_net: a transfer failed to start\n");
    return h.failed;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    if (n == 0) n = 200000;
    int rc = 0;
    const int conc[] = {10, 100, 1000};
    for (int p = PAT_CROSS; p <= PAT_TP8; p++)
        for (int i = 0; i < 3; i++) {
            /* Fewer transfers for the big cases, so a run stays in seconds:
             * there each start and end re-solves ~N flows. */
            uint64_t m = conc[i] == 1000 ? n / 20 : conc[i] == 100 ? n / 2 : n;
            if (p == PAT_TP8) m /= 8;
            if (m == 0) m = 1;
            rc |= run(p, conc[i], m);
        }
    return rc;
}
