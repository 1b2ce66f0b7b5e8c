/* test_cluster_util — one cluster run of a scenario for the simulator's
 * end-to-end tests: its summary, final state, a copy of every finished
 * request's record kept (the caller frees recs) and the number of samples
 * kept; optionally on a fixed iteration cost in place of the cost model.
 * Also a summary's --json text. Include after test_util.h. */
#ifndef TEST_CLUSTER_UTIL_H
#define TEST_CLUSTER_UTIL_H

#include "sim_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_summary sum;
    sim_cluster_state st;
    sim_req_record *recs;
    int64_t n;
    int64_t n_samples;
} run_result;

/* Non-zero (with a failed check) when the cluster cannot be built or run;
 * cost_fn, when not NULL, replaces every instance's cost model
 * (sim_cluster_set_cost_fn). A run that fails still fills out. */
static inline int run_with_cost(const sim_scenario *sc, double (*cost_fn)(void *ctx, const model_batch *b),
                                void *cost_ctx, run_result *out)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    memset(out, 0, sizeof *out);
    int rc = sim_cluster_create(sc, &c, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc) return rc;
    if (cost_fn) sim_cluster_set_cost_fn(c, cost_fn, cost_ctx);
    rc = sim_cluster_run(c, &out->sum, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    sim_cluster_state_get(c, &out->st);
    const sim_req_record *r = sim_metrics_requests(sim_cluster_metrics(c), &out->n);
    out->recs = malloc((size_t)(out->n ? out->n : 1) * sizeof *r);
    if (out->n) memcpy(out->recs, r, (size_t)out->n * sizeof *r);
    sim_metrics_samples(sim_cluster_metrics(c), &out->n_samples);
    sim_cluster_destroy(c);
    return rc;
}

static inline int run(const sim_scenario *sc, run_result *out) { return run_with_cost(sc, NULL, NULL, out); }

/* llama-3.1-8b on one H100 (analytic prices, no perf database), fixed
 * lengths, and n SLO classes named names[k], each started from the
 * workload's keys. */
static inline void test_class_scenario(sim_scenario *sc, int input, int output, int n, const char *const *names)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    snprintf(sc->hardware.perf_db, sizeof sc->hardware.perf_db, "none");
    sim_workload_cfg *w = &sc->workload;
    w->input_tokens.dist = SIM_DIST_FIXED;
    w->input_tokens.value = input;
    w->output_tokens.dist = SIM_DIST_FIXED;
    w->output_tokens.value = output;
    w->n_classes = n;
    for (int k = 0; k < n; k++) {
        sim_class_from_workload(&w->classes[k], w);
        snprintf(w->classes[k].name, sizeof w->classes[k].name, "%s", names[k]);
    }
    sc->deployment.pools[0].instances = 1;
}

/* Llama-3.1-8B (default GPU) on `instances` colocated instances replaying
 * the Mooncake trace at `path` (absolute), the prefix cache on in blocks
 * of cache_tokens; 0 when the path fits the scenario. */
static inline int test_trace_scenario(sim_scenario *sc, const char *path, int32_t instances, int32_t cache_tokens)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    sc->workload.requests = 0;
    sc->workload.trace.format = SIM_TRACE_MOONCAKE;
    size_t n = strlen(path);
    if (n >= sizeof sc->workload.trace.path) return -1;
    memcpy(sc->workload.trace.path, path, n + 1);
    sc->deployment.pools[0].instances = instances;
    sc->output.sample_interval_s = 1;
    sc->cache.enabled = 1;
    sc->cache.block_tokens = cache_tokens;
    return 0;
}

/* Writes text to path (in the working directory) and its absolute path
 * into abs[4096]; -1 on failure. */
static inline int test_write_text(const char *path, const char *text, char *abs)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    if (fclose(f) != 0 || !ok) return -1;
    return realpath(path, abs) ? 0 : -1;
}

/* A cost model of TEST_ITER_NS per iteration, whatever the batch, for
 * hand-computed timelines. */
#define TEST_ITER_NS (10 * 1000000LL)
static inline double test_fixed_cost(void *ctx, const model_batch *b)
{
    (void)ctx;
    (void)b;
    return TEST_ITER_NS * 1e-9;
}

/* Runs sc (cost_fn as run_with_cost), checks that nothing is left in
 * flight, in KV or referenced in a cache, and copies the records, by id,
 * into rec[0..cap) (zeros where none) and the summary and the state when
 * sum / st are not NULL. Returns the number of records, -1 on failure. */
static inline int64_t run_by_id_with(const sim_scenario *sc, double (*cost_fn)(void *ctx, const model_batch *b),
                                     sim_summary *sum, sim_cluster_state *st, sim_req_record *rec, int64_t cap)
{
    run_result r;
    int rc = run_with_cost(sc, cost_fn, NULL, &r);
    if (rc && !r.recs) return -1; /* not built */
    if (sum) *sum = r.sum;
    if (st) *st = r.st;
    memset(rec, 0, (size_t)cap * sizeof *rec);
    for (int64_t i = 0; i < r.n; i++)
        if ((int64_t)r.recs[i].id < cap) rec[r.recs[i].id] = r.recs[i];
    CHECK(r.st.in_flight == 0 && r.st.kv_blocks_used == 0 && r.st.cache_referenced == 0);
    free(r.recs);
    return rc ? -1 : r.n;
}

/* A summary as `servesim run --json` prints it (free it); NULL when out of
 * memory. noinline: inlined, gcc 12 takes the returned text for a pointer
 * to the local `buf` (-Wdangling-pointer false positive); unused: not every
 * test that includes this prints JSON. */
__attribute__((noinline, unused)) static char *test_summary_json(const sim_summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    sim_summary_print_json(f, s);
    fclose(f);
    return buf;
}

#endif
