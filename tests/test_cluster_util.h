/* test_cluster_util — one cluster run of a scenario for the simulator's
 * end-to-end tests: its summary, final state, a copy of every finished
 * request's record kept (the caller frees recs) and the number of samples
 * kept. Include after test_util.h. */
#ifndef TEST_CLUSTER_UTIL_H
#define TEST_CLUSTER_UTIL_H

#include "sim_cluster.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_summary sum;
    sim_cluster_state st;
    sim_req_record *recs;
    int64_t n;
    int64_t n_samples;
} run_result;

/* Non-zero (with a failed check) when the cluster cannot be built or run. */
static inline int run(const sim_scenario *sc, run_result *out)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    memset(out, 0, sizeof *out);
    int rc = sim_cluster_create(sc, &c, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc) return rc;
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

#endif
