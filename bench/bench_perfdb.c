/* bench_perfdb — the calibrated path against the analytic one, in one run.
 *
 * The same scenario (default Llama-3.1-8B, one H200 per instance, lognormal
 * prompts mean 1,024 tokens, 256 output tokens, Poisson) is simulated
 * with the analytic roofline and with the committed H200 perf-db
 * (calib/data/h200-sxm-*.sql, or the file named by argv[3]); each prints
 * its build time (scenario → cluster: for the perf-db, importing the dump
 * and fitting the tables), its run time and the ratio of the two. Then
 * `repeats` clusters are built and run against one shared table cache, as
 * a search does, so the import is paid once. Last, the cost of one
 * in-memory lookup. Times are CPU seconds of the thread. Usage:
 *   bench_perfdb [requests] [instances] [perf-db] [model] [tp]
 * Run pinned to one core for the README figure: taskset -c 0 bench_perfdb */
#include "calib_db.h"
#include "calib_table.h"
#include "calib_table_cache.h"
#include "sim_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU seconds of this thread: the figure that other load on the machine
 * does not inflate. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void scenario(sim_scenario *sc, int64_t requests, int32_t instances, const char *perf_db, const char *model,
                     int32_t tp)
{
    sim_scenario_defaults(sc);
    snprintf(sc->name, sizeof sc->name, "bench-perfdb");
    snprintf(sc->model, sizeof sc->model, "%s", model);
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h200-sxm");
    snprintf(sc->hardware.perf_db, sizeof sc->hardware.perf_db, "%s", perf_db ? perf_db : "");
    sc->workload.requests = requests;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = 10.0 * instances;
    sc->workload.input_tokens.dist = SIM_DIST_LOGNORMAL;
    sc->workload.input_tokens.mean = 1024;
    sc->workload.input_tokens.std = 512;
    sc->workload.input_tokens.min = 1;
    sc->workload.input_tokens.max = 32768;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = 256;
    sc->deployment.pools[0].instances = instances;
    sc->deployment.pools[0].parallel.tp = tp;
    sc->routing.policy = SIM_ROUTE_LEAST_LOADED;
    sc->output.sample_interval_s = 1.0;
}

typedef struct {
    double build_s, run_s, ttft_ms, tpot_ms;
    int64_t iterations;
} run_t;

static int run_once(const sim_scenario *sc, calib_table_cache *cache, run_t *out)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    double t0 = cpu_s();
    if (sim_cluster_create_shared(sc, cache, &c, &err) < 0) {
        fprintf(stderr, "bench_perfdb: %s\n", err.msg);
        return -1;
    }
    double t1 = cpu_s();
    sim_summary s;
    int rc = sim_cluster_run(c, &s, &err);
    double t2 = cpu_s();
    sim_cluster_state st;
    sim_cluster_state_get(c, &st);
    out->iterations = st.iterations;
    sim_cluster_destroy(c);
    if (rc < 0) {
        fprintf(stderr, "bench_perfdb: %s\n", err.msg);
        return -1;
    }
    out->build_s = t1 - t0, out->run_s = t2 - t1;
    out->ttft_ms = s.ttft_ms.mean, out->tpot_ms = s.tpot_ms.mean;
    return 0;
}

int main(int argc, char **argv)
{
    int64_t requests = argc > 1 ? atoll(argv[1]) : 20000;
    int32_t instances = argc > 2 ? atoi(argv[2]) : 4;
    char db[1024];
    if (argc > 3) snprintf(db, sizeof db, "%s", argv[3]);
    else if (!calib_db_default_path("h200-sxm", db, sizeof db)) {
        fprintf(stderr, "bench_perfdb: no H200 perf-db under calib/data (name one as the third argument)\n");
        return 1;
    }
    const char *model = argc > 4 ? argv[4] : "llama-3.1-8b";
    int32_t tp = argc > 5 ? atoi(argv[5]) : 1;
    sim_scenario sc_db, sc_an;
    scenario(&sc_db, requests, instances, db, model, tp);
    /* The analytic run: no perf-db named and none found by default. */
    setenv("SERVESIM_CALIB_DATA", "/nonexistent-servesim-calib-data", 1);
    scenario(&sc_an, requests, instances, NULL, model, tp);

    run_t an, pd;
    if (run_once(&sc_an, NULL, &an) < 0 || run_once(&sc_db, NULL, &pd) < 0) return 1;
    printf("scenario            %lld requests, %d x %s on H200 (TP%d), Poisson %.0f req/s\n", (long long)requests,
           instances, model, tp, sc_db.workload.arrival.rate);
    const run_t *rs[2] = {&an, &pd};
    for (int i = 0; i < 2; i++)
        printf("%-19s build %6.3f s  run %6.3f s  total %6.3f s  %lld iterations, %.2f us each  (TTFT %.1f ms, TPOT "
               "%.2f ms)\n",
               i ? "perf-db" : "analytic", rs[i]->build_s, rs[i]->run_s, rs[i]->build_s + rs[i]->run_s,
               (long long)rs[i]->iterations, rs[i]->run_s / (double)rs[i]->iterations * 1e6, rs[i]->ttft_ms,
               rs[i]->tpot_ms);
    printf("ratio               run %.2fx  per iteration %.2fx  total %.2fx   (%s)\n", pd.run_s / an.run_s,
           (pd.run_s / (double)pd.iterations) / (an.run_s / (double)an.iterations),
           (pd.build_s + pd.run_s) / (an.build_s + an.run_s), db);

    /* A search's pattern: many clusters, one shared cache. */
    const int repeats = 8;
    sim_scenario small_db = sc_db, small_an = sc_an;
    small_db.workload.requests = small_an.workload.requests = requests / 10 > 0 ? requests / 10 : 1;
    sim_err err = {{0}};
    calib_table_cache *cache = NULL;
    if (calib_table_cache_create(&cache, &err) < 0) return 1;
    double tan = 0, tdb = 0;
    for (int i = 0; i < repeats; i++) {
        run_t a, b;
        if (run_once(&small_an, cache, &a) < 0 || run_once(&small_db, cache, &b) < 0) {
            calib_table_cache_free(cache);
            return 1;
        }
        tan += a.build_s + a.run_s, tdb += b.build_s + b.run_s;
    }
    printf("shared cache        %d clusters of %lld requests: analytic %.3f s, perf-db %.3f s, ratio %.2fx\n", repeats,
           (long long)small_db.workload.requests, tan, tdb, tdb / tan);

    /* One lookup: a GEMM between grid points. */
    calib_db *h = NULL;
    int64_t gid = 0;
    calib_table *t = NULL;
    if (calib_db_open_any(db, &h, &err) < 0 || calib_db_gpu_find(h, "h200", "gpu", &gid, &err) < 0 ||
        calib_table_build(h, gid, NULL, NULL, 0, &t, &err) < 0) {
        fprintf(stderr, "bench_perfdb: %s\n", err.msg);
        calib_db_close(h);
        calib_table_cache_free(cache);
        return 1;
    }
    const calib_series *s = calib_table_series(t, CALIB_OP_GEMM, "bf16");
    const int n = 2000000;
    double acc = 0, l0 = cpu_s();
    for (int i = 0; i < n; i++) {
        calib_shape q = {0};
        q.m = 1 + i % 3000, q.n = 4096, q.k = 4096;
        acc += calib_series_lookup(s, &q, NULL);
    }
    double l1 = cpu_s();
    calib_memo *memo = NULL;
    if (calib_memo_create(12, &memo, &err) < 0) return 1;
    double l2 = cpu_s();
    for (int i = 0; i < n; i++) {
        calib_shape q = {0};
        q.m = 1 + i % 8, q.n = 4096, q.k = 4096;
        acc += calib_series_lookup_memo(s, &q, memo, NULL);
    }
    double l3 = cpu_s();
    calib_memo_free(memo);
    printf("lookup              %.0f ns per GEMM lookup, %.0f ns per memo hit (%d series, checksum %.3g)\n",
           (l1 - l0) / n * 1e9, (l3 - l2) / n * 1e9, calib_table_n_series(t), acc);
    calib_table_free(t);
    calib_db_close(h);
    calib_table_cache_free(cache);
    return 0;
}
