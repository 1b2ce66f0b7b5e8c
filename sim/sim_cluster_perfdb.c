/* sim_cluster_perfdb — attaching a calibrated perf-db (SQLite file or .sql
 * dump) to every pool's cost model. See sim_cluster_impl.h. */
#include "sim_cluster_impl.h"

#include <dirent.h>

/* ---- perf-db -------------------------------------------------------------- */

/* The default perf-db: the newest dump for this GPU under calib/data/ (or
 * $SERVESIM_CALIB_DATA), named <gpu>-<date>....sql by scripts/gpu-check.sh. */
static int default_perf_db(const char *gpu, char *out, size_t len)
{
    const char *dir = getenv("SERVESIM_CALIB_DATA");
#ifdef SERVESIM_CALIB_DATA_DIR
    if (!dir) dir = SERVESIM_CALIB_DATA_DIR;
#endif
    if (!dir) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    char best[256] = "";
    size_t gl = strlen(gpu);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > gl + 4 && strncmp(e->d_name, gpu, gl) == 0 && e->d_name[gl] == '-' &&
            strcmp(e->d_name + n - 4, ".sql") == 0 && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0]) return 0;
    snprintf(out, len, "%s/%s", dir, best);
    return 1;
}

/* Opens the scenario's perf-db (a .sql dump is imported into memory) and
 * attaches it to every pool's cost model. */
int sim_cluster_attach_perf_db(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    int explicit_db = sc->hardware.perf_db[0] != 0;
    if (explicit_db) snprintf(c->perf_db_path, sizeof c->perf_db_path, "%s", sc->hardware.perf_db);
    else if (!default_perf_db(c->gpu.name, c->perf_db_path, sizeof c->perf_db_path)) return SIM_OK;
    size_t n = strlen(c->perf_db_path);
    int dump = n > 4 && strcmp(c->perf_db_path + n - 4, ".sql") == 0;
    int rc = calib_db_open(dump ? ":memory:" : c->perf_db_path, dump ? CALIB_DB_CREATE : CALIB_DB_READONLY,
                           &c->perf_db, err);
    if (rc == 0 && dump) {
        int64_t rows = 0;
        rc = calib_db_import(c->perf_db, c->perf_db_path, &rows, err);
    }
    for (int32_t p = 0; rc == 0 && p < sc->deployment.n_pools; p++)
        if (c->costs[p]) rc = model_cost_set_db(c->costs[p], c->perf_db, NULL, err);
    if (rc < 0) return sim_err_wrap(err, rc, "hardware.perf_db %s", c->perf_db_path);
    return SIM_OK;
}

