/* test_oom_inject — the one out-of-memory policy, run against whole
 * clusters: with one allocation of servesim's made to fail
 * (test_alloc_fail.h), at points spread over building a cluster and
 * running it, every run either ends with SIM_ENOMEM and an "out of
 * memory" message (set-up returns it; inside the event loop the engine
 * records it and sim_cluster_run returns it) or, where the allocation was
 * one servesim can do without, finishes with the very figures of the run
 * without a failure. None aborts, asserts or hangs. The scenarios cover
 * the event loop's allocating paths: batching and the prefix cache
 * (quickstart, the Mooncake trace with cache-aware routing), the perf-db's
 * tables and memo (quickstart on the shipped H200 dump), PD hand-over
 * over the network (pd-llama70b-h100), KV tiers (kv-sharing) and agentic
 * sessions. */
#include "sim_cluster.h"
#include "sim_loader.h"
#include "test_alloc_fail.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

/* Injection points per scenario, spread evenly over its allocations. */
#define POINTS 48

typedef struct {
    int rc;
    sim_summary sum;
    char msg[sizeof(((sim_err *)0)->msg)];
} outcome;

/* Builds and runs sc; the injection (if armed) is spent or disarmed after. */
static void run_once(const sim_scenario *sc, outcome *o)
{
    /* o->sum is zeroed here, padding included, so summaries compare whole. */
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    memset(o, 0, sizeof *o);
    o->rc = sim_cluster_create(sc, &c, &err);
    if (o->rc == 0) o->rc = sim_cluster_run(c, &o->sum, &err);
    test_alloc_fail_off();
    sim_cluster_destroy(c);
    snprintf(o->msg, sizeof o->msg, "%s", err.msg);
}

/* Every figure of the summary but the wall time (both were zeroed before
 * they were filled, padding included). */
static int same_figures(const sim_summary *a, const sim_summary *b)
{
    sim_summary x = *a, y = *b;
    x.wall_time_s = y.wall_time_s = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

static void sweep(const char *file, const char *const *sets, int n_sets)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/%s", test_src_dir(), file);
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    REQUIRE_MSG_OR(sim_loader_load_file(path, sets, n_sets, sc, &err) == 0, { free(sc); return; }, "%s: %s", file,
                   err.msg);
    outcome base, o;
    long before = test_alloc_calls();
    run_once(sc, &base);
    long calls = test_alloc_calls() - before;
    REQUIRE_MSG_OR(base.rc == 0, { free(sc); return; }, "%s: %s", file, base.msg);
    REQUIRE_MSG_OR(calls > 10, { free(sc); return; }, "%s: only %ld allocations", file, calls);
    int oom = 0, same = 0, points = calls < POINTS ? (int)calls : POINTS;
    for (int p = 0; p < points; p++) {
        long n = (long)((double)p * (double)(calls - 1) / (points - 1));
        test_alloc_fail_after(n);
        run_once(sc, &o);
        if (o.rc == 0) {
            CHECK_MSG(same_figures(&o.sum, &base.sum), "%s: allocation %ld of %ld failed, the run went on with "
                      "other figures (%lld requests, %.9g s)", file, n, calls, (long long)o.sum.requests_completed,
                      o.sum.end_s);
            same++;
        } else {
            CHECK_MSG(o.rc == SIM_ENOMEM && strstr(o.msg, "out of memory"),
                      "%s: allocation %ld of %ld failed: rc %d, \"%s\"", file, n, calls, o.rc, o.msg);
            oom++;
        }
    }
    printf("  %s: %ld allocations; %d of %d injected failures ended the run with out of memory, %d were done "
           "without\n", file, calls, oom, points, same);
    CHECK_MSG(oom > points / 2, "%s: only %d of %d failures were reported", file, oom, points);
    free(sc);
}

static const char *const SMALL[] = {"workload.requests=200", "hardware.perf_db=none"};

static void test_quickstart(void) { sweep("quickstart.yaml", SMALL, 2); }

/* The perf-db's tables and memo built (the shipped H200 dump) and read. */
static void test_quickstart_perf_db(void)
{
    char db[1200];
    snprintf(db, sizeof db, "hardware.perf_db=%s/calib/data/h200-sxm-2026-11-29.sql", test_src_dir());
    const char *sets[] = {"workload.requests=200", "hardware.gpu=h200-sxm", db};
    sweep("quickstart.yaml", sets, 3);
}

static void test_pd(void) { sweep("pd-llama70b-h100.yaml", SMALL, 2); }

static void test_kv_tiers(void)
{
    const char *sets[] = {"hardware.perf_db=none"};
    sweep("kv-sharing.yaml", sets, 1);
}

static void test_cache_aware(void)
{
    const char *sets[] = {"hardware.perf_db=none"};
    sweep("mooncake-cache-aware.yaml", sets, 1);
}

static void test_sessions(void)
{
    const char *sets[] = {"hardware.perf_db=none"};
    sweep("agentic-sessions.yaml", sets, 1);
}

static const test_case cases[] = {
    {"quickstart", test_quickstart},
    {"quickstart_perf_db", test_quickstart_perf_db},
    {"pd", test_pd},
    {"kv_tiers", test_kv_tiers},
    {"cache_aware", test_cache_aware},
    {"sessions", test_sessions},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_oom_inject", cases);
}
