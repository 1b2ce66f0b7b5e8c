/* sim_cluster_perfdb — attaching calibrated perf-db tables (from a SQLite
 * file or a .sql dump) to every pool's cost model when the cluster is
 * built. The tables are built in memory once per (perf-db, GPU, engine,
 * dtypes) in a calib_table_cache, shared with other clusters when the
 * caller passes one (a search does), so the event loop never touches
 * SQLite. Each pool's engine (scheduler.preset vllm/sglang/trtllm) selects
 * that engine's measured kernels where the perf-db has them.
 * hardware.perf_db "none" keeps the analytic roofline even when calib/data/
 * has a dump for the GPU. See sim_cluster_impl.h. */
#include "sim_cluster_impl.h"

#include <string.h>

/* 4096 memo entries (~0.5 MB): an iteration's GEMM and norm shapes recur. */
#define PERF_MEMO_SLOTS_LOG2 12

/* "h100-sxm" → "h100", which device names ("NVIDIA H100 80GB HBM3") contain. */
static void gpu_key(const char *catalogue_name, char *out, size_t len)
{
    snprintf(out, len, "%s", catalogue_name);
    char *dash = strchr(out, '-');
    if (dash) *dash = 0;
}

int sim_cluster_attach_perf_db(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    char path[SIM_PATH_MAX];
    if (sim_cluster_perf_db_is_none(sc->hardware.perf_db)) return SIM_OK;
    /* Pools on another GPU type than hardware.gpu (a heterogeneous fleet)
     * take that type's default perf-db when hardware.perf_db is not set. */
    int other_types = 0;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++)
        if (c->costs[p] && strcmp(model_cost_gpu(c->costs[p])->name, c->gpu.name) != 0) other_types = 1;
    if (sc->hardware.perf_db[0]) snprintf(path, sizeof path, "%s", sc->hardware.perf_db);
    else if (!calib_db_default_path(c->gpu.name, path, sizeof path)) {
        if (!other_types) return SIM_OK;
        path[0] = '\0';
    }
    int rc = SIM_OK;
    if (!c->perf_cache) {
        if ((rc = calib_table_cache_create(&c->perf_cache, err)) < 0) return rc;
        c->perf_cache_owned = 1;
    }
    if (!c->perf_memo && (rc = calib_memo_create(PERF_MEMO_SLOTS_LOG2, &c->perf_memo, err)) < 0) return rc;
    for (int32_t p = 0; rc == 0 && p < sc->deployment.n_pools; p++) {
        if (!c->costs[p]) continue;
        const model_gpu *g = model_cost_gpu(c->costs[p]);
        sim_sched_preset preset = sc->deployment.pools[p].scheduler.preset;
        const char *engine = preset != SIM_SCHED_PRESET_NONE ? sim_sched_preset_name(preset) : NULL;
        char key[MODEL_NAME_MAX], own[SIM_PATH_MAX];
        const char *pool_path = path;
        if (!sc->hardware.perf_db[0] && strcmp(g->name, c->gpu.name) != 0)
            pool_path = calib_db_default_path(g->name, own, sizeof own) ? own : "";
        if (!pool_path[0]) continue; /* no perf-db for this GPU type: the roofline */
        gpu_key(g->name, key, sizeof key);
        const char *dts[MODEL_COST_DB_DTYPES_MAX];
        const calib_table *t = NULL;
        rc = calib_table_cache_get(c->perf_cache, pool_path, key, engine, model_cost_db_dtypes(c->costs[p], dts),
                                   g->sms, &t, err);
        if (rc == 0) model_cost_set_tables(c->costs[p], t, c->perf_memo);
        /* The draft runs the same engine's kernels on the same GPUs. */
        if (rc == 0 && c->draft_costs[p]) {
            const calib_table *td = NULL;
            rc = calib_table_cache_get(c->perf_cache, pool_path, key, engine, model_cost_db_dtypes(c->draft_costs[p], dts),
                                       g->sms, &td, err);
            if (rc == 0) model_cost_set_tables(c->draft_costs[p], td, c->perf_memo);
        }
    }
    /* "hardware.perf_db: ..." lets the CLI place the message at that key. */
    if (rc < 0) return err && strstr(err->msg, path) ? sim_err_wrap(err, rc, "hardware.perf_db")
                                                     : sim_err_wrap(err, rc, "hardware.perf_db: %s", path);
    if (!path[0]) /* hardware.gpu has none: the first pool that had one */
        for (int32_t p = 0; p < sc->deployment.n_pools && !path[0]; p++)
            if (c->costs[p]) calib_db_default_path(model_cost_gpu(c->costs[p])->name, path, sizeof path);
    snprintf(c->perf_db_path, sizeof c->perf_db_path, "%s", path);
    return SIM_OK;
}

int sim_cluster_perf_db_is_none(const char *perf_db) { return strcmp(perf_db, SIM_PERF_DB_NONE) == 0; }

const char *sim_cluster_perf_db(const sim_cluster *c) { return c->perf_db_path[0] ? c->perf_db_path : NULL; }
