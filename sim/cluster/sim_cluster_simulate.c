/* sim_cluster_simulate — a scenario simulated in one call: build the
 * cluster, run it, collect the summary, destroy it (or hand it back for its
 * metrics). Every caller that only wants a scenario's result (replications,
 * sensitivity points, search probes and re-runs, fidelity rows) uses it
 * instead of writing the create/run/destroy sequence itself. See
 * sim_cluster.h for ownership and failure returns. */
#include "sim_cluster.h"
#include "sim_clock.h"

#include <string.h>

int sim_cluster_simulate(const sim_scenario *sc, struct calib_table_cache *perf_cache, sim_summary *out,
                         sim_cluster **keep, sim_err *err)
{
    sim_cluster *cl = NULL;
    double t0 = sim_wall_s();
    memset(out, 0, sizeof *out);
    if (keep) *keep = NULL;
    int rc = sim_cluster_create_shared(sc, perf_cache, &cl, err);
    if (rc == 0) rc = sim_cluster_run(cl, out, err);
    if (rc == 0) out->wall_time_s = sim_wall_s() - t0;
    if (rc == 0 && keep) *keep = cl;
    else sim_cluster_destroy(cl);
    return rc;
}
