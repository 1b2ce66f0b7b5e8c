/* sim_cluster — builds a simulated deployment from a scenario and runs it.
 *
 * Wires the workload (open or closed loop) through the router into the
 * instances of the deployment's pools, samples every instance periodically
 * (utilisation, batch size, KV occupancy, queue), watches for overload
 * (queues growing without bound: the oldest waiting request older than
 * overload.max_queue_delay_s, or more than overload.max_waiting queued) and
 * stops the run when it sees it. The cluster owns the engine, workload,
 * router, cost models, instances and metrics it creates; the scenario is
 * copied. Only the colocated mode is built here; pd/af/pd+af report
 * SIM_ENOTSUP. */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include "model_cost.h"
#include "sim_err.h"
#include "sim_metrics.h"
#include "sim_scenario.h"

#include <stdint.h>

/* workload.images of scenario sc on model m: 0 when the workload sends none
 * (a deployment.encode pool without them is refused), 1 when it does, with
 * the vision tower checked and one item's grid in *grid; a negative SIM_E*
 * code with the key path in err otherwise (sim_cluster_encode.c). Shared by
 * the cluster's and the search's set-up. */
struct model_media_grid;
int sim_images_prepare(const sim_scenario *sc, const model_spec *m, struct model_media_grid *grid, sim_err *err);

/* Bytes per GPU a pool of `role` holds for m's vision tower beside the
 * model when the deployment has `encode_instances` encoders: the whole
 * tower (model_vision_weight_bytes) on each GPU of a front pool (colocated
 * or prefill) that encodes in the instance (images sent, no encode pool:
 * its tp GPUs encode whole items data-parallel, each with the tower);
 * else 0. Its KV capacity shrinks by it (sim_mem_rule_pool_kv_tokens). The
 * cluster's and the search's pool sizing share it. */
double sim_images_tower_bytes(const sim_scenario *sc, const model_spec *m, int32_t encode_instances, sim_role role);

typedef struct sim_cluster sim_cluster;

/* Progress: requests completed so far of `total` (-1 if unknown), simulated seconds. */
typedef void (*sim_progress_fn)(void *ctx, int64_t completed, int64_t total, double sim_s);

int sim_cluster_create(const sim_scenario *sc, sim_cluster **out, sim_err *err);
/* Same, taking the perf-db tables from a cache shared with other clusters
 * (calib/db/calib_table_cache.h; NULL = a cache of its own). The cache must
 * outlive the cluster. */
struct calib_table_cache;
int sim_cluster_create_shared(const sim_scenario *sc, struct calib_table_cache *perf_cache, sim_cluster **out,
                              sim_err *err);
void sim_cluster_destroy(sim_cluster *c);

void sim_cluster_set_progress(sim_cluster *c, sim_progress_fn fn, void *ctx);

/* Records the run into a Chrome/Perfetto trace (sim_trace_out.h); the
 * trace stays the caller's and must outlive the run. Names the tracks. */
struct sim_trace_out;
void sim_cluster_set_trace(sim_cluster *c, struct sim_trace_out *t);

/* Runs to completion (or overload) and summarises. A run stopped by overload
 * still returns 0 with out->overloaded = 1 and the reason. */
int sim_cluster_run(sim_cluster *c, sim_summary *out, sim_err *err);

/* Prices every instance's iterations with fn(ctx, batch) seconds instead of
 * its cost model (sim_instance_set_cost_fn), e.g. a fixed time per
 * iteration for hand-computed timelines; call before sim_cluster_run. */
void sim_cluster_set_cost_fn(sim_cluster *c, double (*fn)(void *ctx, const model_batch *b), void *ctx);

/* A scenario simulated in one call: sim_cluster_create_shared (perf_cache
 * as there, NULL = the cluster's own), sim_cluster_run into *out (zeroed
 * first; wall_time_s is the seconds building and running took), then
 * sim_cluster_destroy. keep NULL destroys the cluster; otherwise *keep
 * receives it when the call succeeds (the caller destroys it, e.g. after
 * reading its metrics) and NULL when it fails. Returns 0 or the negative
 * SIM_E* of the step that failed, its message in err. */
int sim_cluster_simulate(const sim_scenario *sc, struct calib_table_cache *perf_cache, sim_summary *out,
                         sim_cluster **keep, sim_err *err);

const sim_metrics *sim_cluster_metrics(const sim_cluster *c);

/* The deployment's pools: their count, the cost model of one (NULL when out
 * of range; owned by the cluster) and the pool of an instance (-1). */
struct model_cost;
int32_t sim_cluster_n_pools(const sim_cluster *c);
const struct model_cost *sim_cluster_pool_cost(const sim_cluster *c, int32_t pool);
/* The draft's cost model of a pool that decodes speculatively (NULL when
 * it does not) and that pool's speculative settings (NULL likewise). */
const struct model_cost *sim_cluster_pool_draft_cost(const sim_cluster *c, int32_t pool);
const sim_spec_cfg *sim_cluster_pool_spec(const sim_cluster *c, int32_t pool);
int32_t sim_cluster_instance_pool(const sim_cluster *c, int32_t instance);
/* The batch a decode-only iteration of n requests runs as on the pool's
 * instances (their CUDA graph's, sim_instance_graph_batch; n when the pool
 * has no instance or no graph covers it). */
int32_t sim_cluster_pool_graph_batch(const sim_cluster *c, int32_t pool, int32_t n);
/* KV capacity of one instance of the pool, in tokens (0 when the pool has none). */
int64_t sim_cluster_pool_kv_tokens(const sim_cluster *c, int32_t pool);

/* What a finished run left behind, for conservation checks. */
typedef struct {
    int64_t issued, completed, rejected, in_flight;
    int64_t shed;                /* refused by admission control (workload.admission, class buckets) */
    int64_t kv_blocks_used;      /* summed over instances; 0 after a full run */
    int64_t outstanding_tokens;  /* summed over instances; 0 after a full run */
    int64_t waiting, running;
    int64_t kv_pending, held;    /* pd: waiting for decode blocks; KV held on prefill side */
    int64_t cache_referenced;    /* prefix-cache blocks still referenced (0 after a run) */
    int64_t cached_blocks;       /* KV blocks held by prefix caches in HBM */
    int64_t fetched_blocks;      /* cache blocks fetched from peers or tiers */
    int64_t tier_blocks;         /* cache blocks held in host/pool tiers */
    int64_t iterations, preemptions;
    int64_t input_tokens_done, output_tokens_done;
    int32_t n_instances, n_gpus;
    int64_t kv_blocks_total;
    double in_flight_area_s;     /* ∫ requests in system dt, request·seconds */
} sim_cluster_state;

void sim_cluster_state_get(const sim_cluster *c, sim_cluster_state *out);

/* One-line description of the deployment (model, GPU, layout, KV capacity). */
void sim_cluster_describe(const sim_cluster *c, char *buf, size_t len);
/* The perf-db that prices the cluster's ops (path as given or found), or
 * NULL when every op is priced by the analytic roofline. */
const char *sim_cluster_perf_db(const sim_cluster *c);
/* hardware.perf_db value that forces the analytic roofline. */
#define SIM_PERF_DB_NONE "none"
int sim_cluster_perf_db_is_none(const char *perf_db);

#endif
