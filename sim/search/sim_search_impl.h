/* sim_search_impl — internals shared by the sim_search*.c files: the
 * search object, the sample statistics of the workload the bounds use, the
 * per-layout cost-model cache, and the space/bound/evaluation/MPI steps.
 * Nothing here is API; see sim_search.h. */
#ifndef SIM_SEARCH_IMPL_H
#define SIM_SEARCH_IMPL_H

#include "model_catalog.h"
#include "model_cost.h"
#include "model_vision.h"
#include "sim_search.h"
#include "sim_store.h"

#include <pthread.h>

/* Distinct per-request item counts kept for the encoder bound; a request
 * with a count beyond them is priced at the largest kept count below it
 * (a pass over more items never takes less, so the bound stays above). */
#define SIM_SEARCH_IMG_COUNTS 64
#define SIM_SEARCH_MAX_ENC 16
/* Most candidates sim_search_assign balances (a wave is 16). */
#define SIM_SEARCH_ASSIGN_MAX 64

/* Lengths of the requests one simulation sends (drawn from the workload
 * itself, so the bounds use exactly the requests simulated). */
typedef struct {
    int64_t n_req_key;       /* search requests it was drawn for */
    int64_t n;               /* requests */
    double in_mean, out_mean;
    double in_min;
    double ctx_tok;          /* Σ in·out / Σ out: token-weighted context floor of decode */
    int64_t longest;         /* max in + out */
    double base_rate;        /* trace: requests/s of the trace as recorded (0 otherwise) */
    /* workload.images: the requests' item counts as the cluster draws them (their image tokens are
     * in the lengths above); img_reqs[k] requests carry img_items[k] items. */
    int32_t n_img;
    int32_t img_items[SIM_SEARCH_IMG_COUNTS];
    int64_t img_reqs[SIM_SEARCH_IMG_COUNTS];
    int32_t img_min;         /* fewest items of a request */
} sim_search_lens;

/* One (gpu, layout) cost model, built once and shared read-only. */
typedef struct {
    char gpu[SIM_NAME_MAX];
    int32_t tp, pp, dp, ep, dcp, sp;
    sim_role role;           /* the scheduler template (overheads) depends on it */
    int32_t spec;            /* 1: the pool speculates (its draft's weights and KV share the memory) */
    double tower;            /* bytes per GPU of the vision tower it holds (sim_images_tower_bytes) */
    model_cost *cost;        /* NULL when it cannot be built */
    model_cost *draft;       /* spec: the draft's cost model (NULL otherwise) */
    int64_t kv_tokens;       /* for non-FFN roles */
    char err[320];
} sim_search_costent;

struct sim_search {
    sim_scenario sc;         /* the search scenario (output.db cleared) */
    sim_search_opts opts;
    model_spec model;
    int32_t n, cap;
    sim_search_cand *cands;
    sim_search_result *res;  /* per candidate */
    int32_t n_lens;
    sim_search_lens lens[1024];
    int32_t n_costs;
    sim_search_costent costs[256];
    double percentile;
    int fixed;               /* evaluate at search.rate (or the closed loop's own load) */
    int closed;              /* the workload brings its own arrivals: closed loop, or workload.classes */
    int classes;             /* workload.classes: judged per class */
    int objective_cost;
    int objective_energy;    /* search.objective energy: score = output tokens per joule */
    int hetero;              /* search.{prefill,decode,attention,ffn}_gpus given: pools pick GPU types */
    int32_t n_drafts;        /* search.draft_tokens values (0: the dimension is off) */
    int64_t spec_skipped;    /* candidates not emitted with draft tokens > 0: they cannot speculate */
    int images;              /* workload.images on: requests carry items for the vision tower */
    model_media_grid media;  /* one item as the tower sees it (images on) */
    int32_t n_enc;           /* encode pool sizes searched (0: the dimension is off: no images, or no
                              * search.encode_instances with deployment.encode.instances 0) */
    int32_t enc_v[SIM_SEARCH_MAX_ENC];
    int enc_key;             /* search.encode_instances given (else the scenario's pool size, alone) */
    char enc_gpu[SIM_NAME_MAX]; /* deployment.encode.gpu ("" = each candidate's first pool's GPU type) */
    int32_t n_as;            /* search.autoscale values (0: the dimension is off) */
    int32_t as_v[2];         /* 0 = fixed, 1 = autoscaled */
    int64_t as_skipped;      /* autoscaled variants not enumerated: no pool could change size, or af / pd+af */
    int32_t threads;
    int32_t rank, ranks;
    int64_t simulations;
    double wall_s, sim_wall_s;
    char notes[1024];
    struct sim_store *store;
    const char *scenario_text;
    char session[64];
    pthread_mutex_t mu;
    int interrupted;         /* opts.stop was seen */
    int64_t done, evaluated, pruned; /* progress counters (under mu) */
    int32_t best;            /* best OK candidate by score so far, -1 (under mu) */
    struct calib_table_cache *perf_cache; /* perf-db tables, built once for every candidate's cluster */
};

/* sim_search.c: appends printf-style text to the search's notes (cut at their size). */
void sim_search_note(sim_search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* sim_search_eval.c: the search's score of a goodput per GPU (tok/s/GPU)
 * under its objective: per USD/GPU-h for cost (0 without a price), else
 * the goodput itself. */
double sim_search_score_of(const sim_search *s, double goodput_per_gpu, double price, double joules_per_token);

/* sim_search_replicate.c: the top_k distinct deployments' best candidates
 * re-run search.replications times with independent seeds at their rates
 * (res rep_* fields); the ranking then follows the means. */
int sim_search_replicate(sim_search *s, sim_err *err);

/* sim_search_space.c */
int sim_search_enumerate(sim_search *s, sim_err *err);
int sim_search_parse_ints(const char *list, int32_t *out, int32_t max, const char *key, sim_err *err);
/* The same for integers in [lo, hi]. */
int sim_search_parse_ints_in(const char *list, int32_t *out, int32_t max, int32_t lo, int32_t hi, const char *key,
                             sim_err *err);
int sim_search_parse_doubles(const char *list, double *out, int32_t max, const char *key, sim_err *err);
void sim_search_layout_name(const sim_search_pool *p, char *buf, size_t len);
double sim_search_price(const sim_scenario *sc, const char *gpu);
/* The candidate's fleet price per GPU-hour averaged over its GPUs (each
 * pool's GPUs at its type's search.prices entry); 0 when a type has none. */
double sim_search_fleet_price(const sim_scenario *sc, const sim_search_cand *c);
/* "" when every GPU type of candidate c has a price, else the first one without. */
const char *sim_search_unpriced_gpu(const sim_scenario *sc, const sim_search_cand *c);
/* After the costs and lengths are built: fails, naming the key, when a GPU
 * type listed for a role fits none of that role's layouts searched. */
int sim_search_check_role_gpus(const sim_search *s, sim_err *err);

/* sim_search_spec.c: speculative decoding as a search dimension. */
/* search.draft_tokens parsed into out (values 0..SIM_SPEC_MAX_DRAFT, none
 * twice); returns the count (0 for ""), or an error naming the key. */
int sim_search_spec_parse(const sim_search_cfg *cfg, int32_t *out, int32_t max, sim_err *err);
/* 1 when candidate c may speculate: not af or pd+af, and no pool that
 * decodes is pipeline-parallel (neither is modelled with speculation). */
int sim_search_spec_possible(const sim_search_cand *c);
/* The draft tokens pool p of candidate c runs with: the candidate's for
 * colocated and decode pools when the dimension is on, else the scenario
 * pool's (the one sim_search_pool_cfg copies). */
int32_t sim_search_spec_pool_k(const sim_search *s, const sim_search_cand *c, int32_t p);
/* Sets out's scheduler.speculative to the draft tokens of pool p of c
 * (a per-position acceptance list cut to its first k rates). */
void sim_search_spec_apply(const sim_search_cand *c, int32_t p, sim_pool_cfg *out);
/* At the end of enumeration (before an empty space is refused): refuses (key paths) a list no candidate can use and
 * scenario pools the speculating candidates take an incomplete
 * scheduler.speculative from (no acceptance, too short a list, method
 * draft without draft_model); notes the candidates skipped. */
int sim_search_spec_check(sim_search *s, sim_err *err);

/* sim_search_encode.c: the images' encode pool as a search dimension. */
/* After the model is read, before enumeration: the images' grid, the
 * encode pool sizes to search (search.encode_instances, else the scenario's
 * deployment.encode.instances when > 0), and the refusals, with key paths
 * (a list without images, values out of range or repeated, an unknown
 * deployment.encode.gpu, modes af / pd+af named with images). */
int sim_search_encode_init(sim_search *s, sim_err *err);
/* The encode pool size of value index e (-1 when the dimension is off). */
int32_t sim_search_encode_value(const sim_search *s, int e);
/* Sets c's encode_instances to n (< 0: dimension off) and, for n > 0, its
 * encode_gpu: deployment.encode.gpu, else its first pool's type. */
void sim_search_encode_set(const sim_search *s, sim_search_cand *c, int32_t n);
/* lens_compute's side: draws the item count of each request the way the
 * cluster does (own stream "images"), adds their tokens to the request's
 * input and keeps the counts in L. h is opened once per workload draw. */
typedef struct sim_search_img_draw sim_search_img_draw;
int sim_search_img_open(const sim_search *s, sim_search_img_draw **h, sim_err *err);
int32_t sim_search_img_next(sim_search_img_draw *h, sim_search_lens *L);
void sim_search_img_close(sim_search_img_draw *h);
/* Mean seconds of the tower's pass per request over L's item counts on
 * cost model mc with `ranks` GPUs encoding whole items (the cluster's
 * colocated pass: the instance's tp; an encoder: 1). *min_s: the pass of
 * the fewest items a request has. */
double sim_search_encode_mean_s(const sim_search *s, const model_cost *mc, int32_t ranks, const sim_search_lens *L,
                                double *min_s);

/* sim_search_autoscale.c: autoscaling as a search dimension. */
/* Before enumeration: the values of search.autoscale (off,on by default
 * when a scenario pool autoscales) and the refusals, with key paths
 * (search.rate, objective energy, an encode pool, on without a policy). */
int sim_search_autoscale_init(sim_search *s, sim_err *err);
/* Pool p of c: the least instances it may hold and those it starts with
 * (both its instance count when it does not autoscale). */
void sim_search_autoscale_range(const sim_search *s, const sim_search_cand *c, int32_t p, int32_t *min,
                                int32_t *start);
/* Sets out's autoscale block and starting instances for pool p of c (off
 * unless c is autoscaled and p's template pool autoscales). */
void sim_search_autoscale_apply(const sim_search *s, const sim_search_cand *c, int32_t p, sim_pool_cfg *out);
/* 1 when autoscaled candidate c has a pool that can change size (not af or pd+af). */
int sim_search_autoscale_varies(const sim_search *s, const sim_search_cand *c);
/* Pool p's instance count as the label shows it: "2..8" when it autoscales, else "8". */
void sim_search_autoscale_count(const sim_search *s, const sim_search_cand *c, int32_t p, char *buf, size_t len);
/* GPUs c holds at the least (every autoscaled pool at its min): the pruning bound's denominator. */
int32_t sim_search_gpus_floor(const sim_search *s, const sim_search_cand *c);
/* GPU-hours candidate c's run held (t = 0 to the run's end) and their time-weighted mean. */
double sim_search_gpu_hours(const sim_search_cand *c, const sim_summary *sum);
double sim_search_gpus_held(const sim_search_cand *c, const sim_summary *sum);

/* sim_search_bound.c */
/* The scenario pool whose settings a pool of that role takes: the first of
 * the same role, else the first pool (*idx its index). */
const sim_pool_cfg *sim_search_template_pool(const sim_scenario *sc, sim_role role, int32_t *idx);
int sim_search_lens_get(sim_search *s, int64_t requests, const sim_search_lens **out, sim_err *err);
int64_t sim_search_requests_for(const sim_search *s, const sim_search_cand *c);
int sim_search_costs_build(sim_search *s, sim_err *err);
/* The scenario pool candidate c's pool p runs as (scheduler settings from
 * the scenario's pool of the same role, else its first pool). */
void sim_search_pool_cfg(const sim_search *s, const sim_search_cand *c, int32_t p, sim_pool_cfg *out);
/* Fills res->status/reason (infeasible) or the bound fields. Thread-safe
 * once the costs and lengths are built. */
void sim_search_bound(const sim_search *s, const sim_search_cand *c, sim_search_result *res);

/* 1 when the caller asked the search to stop (opts.stop). */
int sim_search_stopping(const sim_search *s);

/* sim_search_eval.c */
void sim_search_evaluate(const sim_search *s, int32_t i, sim_search_result *res);
int sim_search_probe_params(const sim_search *s, int32_t i, int32_t probe, int best, int final_rank,
                            char **out);

/* sim_search_mpi.c (no-ops without SERVESIM_HAVE_MPI) */
int sim_search_mpi_start(int32_t *rank, int32_t *ranks, int32_t *local_ranks);
/* Splits a wave of n candidates over ranks (more than SIM_SEARCH_ASSIGN_MAX:
 * round-robin): owner[j] = the rank that simulates candidate j. Longest
 * processing time first on cost[j]: in
 * decreasing cost (ties: lower j first), each goes to the rank with the
 * least cost so far (ties: the lower rank). Deterministic, so every rank
 * computes the same split from the same costs. */
void sim_search_assign(const double *cost, int32_t n, int32_t ranks, int32_t *owner);
/* idx[0..n): the wave; results of idx[j] were computed by rank owner[j].
 * Every rank ends with every result. */
int sim_search_mpi_wave_exchange(sim_search *s, const int32_t *idx, const int32_t *owner, int32_t n, sim_err *err);
void sim_search_mpi_barrier(void);

#endif
