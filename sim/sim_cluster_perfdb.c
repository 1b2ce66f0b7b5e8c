/* sim_cluster_perfdb — attaching a calibrated perf-db (SQLite file or .sql
 * dump) to every pool's cost model. See sim_cluster_impl.h. */
#include "sim_cluster_impl.h"

/* ---- perf-db -------------------------------------------------------------- */

/* Opens the scenario's perf-db (a .sql dump is imported into memory) and
 * attaches it to every pool's cost model. */
int sim_cluster_attach_perf_db(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    int explicit_db = sc->hardware.perf_db[0] != 0;
    if (explicit_db) snprintf(c->perf_db_path, sizeof c->perf_db_path, "%s", sc->hardware.perf_db);
    else if (!calib_db_default_path(c->gpu.name, c->perf_db_path, sizeof c->perf_db_path)) return SIM_OK;
    int rc = calib_db_open_any(c->perf_db_path, &c->perf_db, err);
    for (int32_t p = 0; rc == 0 && p < sc->deployment.n_pools; p++)
        if (c->costs[p]) rc = model_cost_set_db(c->costs[p], c->perf_db, NULL, err);
    if (rc < 0) return sim_err_wrap(err, rc, "hardware.perf_db %s", c->perf_db_path);
    return SIM_OK;
}

