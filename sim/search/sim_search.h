/* sim_search — deployment search: which deployment serves a workload under
 * its SLO with the most goodput per GPU (or the lowest cost per token).
 *
 * The search space comes from the scenario's `search:` block (GPU types,
 * GPU budget, modes, per-role layouts, xPyD and A:F ratios, scheduler caps,
 * routing λ) or, where a list is empty, from defaults derived from the model
 * and GPU. sim_search_create() enumerates the candidates, rejects those the
 * cost model says cannot run (weights or the longest request do not fit,
 * heads/experts not divisible) and computes for each an analytic upper
 * bound on its request rate. sim_search_run() simulates the survivors in
 * waves of a fixed size, most promising first: a candidate whose bound
 * cannot reach the current top-k is pruned without simulating. Each
 * evaluated candidate gets the highest arrival rate whose SLO percentile
 * holds (bisection with the simulator, never above its bound) or one run
 * at search.rate. Waves run on threads, and over MPI ranks when servesim is
 * built with MPI and started by mpirun; because the wave size and the
 * pruning rule do not depend on the number of workers, the answer is the
 * same for any thread or rank count. Units: requests/s, output tokens/s,
 * milliseconds, USD. The search owns its candidates and results; the
 * scenario is copied; an attached results store stays the caller's. */
#ifndef SIM_SEARCH_H
#define SIM_SEARCH_H

#include "sim_err.h"
#include "sim_launch.h"
#include "sim_metrics.h"
#include "sim_scenario.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_SEARCH_MAX_PROBES 14
#define SIM_SEARCH_MAX_POOLS 3

typedef enum {
    SIM_CAND_PENDING = 0,
    SIM_CAND_INFEASIBLE = 1, /* cannot run: memory, divisibility, longest request */
    SIM_CAND_PRUNED = 2,     /* its bound cannot reach the top-k */
    SIM_CAND_SLO_MISSED = 3, /* simulated: the SLO does not hold at any rate tried */
    SIM_CAND_OK = 4,         /* simulated: meets the SLO at `rate` */
    SIM_CAND_ERROR = 5       /* the simulator refused or failed (reason says why) */
} sim_cand_status;

typedef struct {
    sim_role role;
    int32_t instances;
    int32_t tp, pp, dp, ep, dcp, sp;
    int32_t gpus;            /* per instance: tp·pp·dp·sp */
    char gpu[SIM_NAME_MAX];  /* GPU type of this pool (the candidate's own unless the search has
                              * search.prefill_gpus, decode_gpus, attention_gpus or ffn_gpus) */
} sim_search_pool;

typedef struct {
    int32_t id;              /* index in enumeration order */
    char gpu[SIM_NAME_MAX];  /* the first pool's GPU type (hardware.gpu of the scenario it runs as) */
    sim_deploy_mode mode;
    int32_t n_pools;
    sim_search_pool pools[SIM_SEARCH_MAX_POOLS];
    int32_t max_seqs, max_batched_tokens, chunk_tokens;
    double lambda;           /* < 0: routing.lambda left as the scenario has it */
    int32_t draft_tokens;    /* speculative draft tokens of the pools that decode (search.draft_tokens);
                              * < 0: scheduler.speculative left as the scenario's pools have it */
    int32_t encode_instances; /* one-GPU encoders of the encode pool (search.encode_instances, or the
                              * scenario's deployment.encode.instances > 0); 0: the instances encode;
                              * < 0: no images' encode pool dimension (deployment.encode as the scenario has it) */
    char encode_gpu[SIM_NAME_MAX]; /* the encoders' GPU type when encode_instances > 0 */
    int32_t autoscale;       /* search.autoscale: 1 = the pools whose scenario template autoscales scale by its
                              * policy (max = their instance count); 0 = a fixed fleet; -1 = the dimension is off */
    int32_t gpus;            /* whole deployment, the encoders included */
    char label[256];         /* e.g. "pd 2P tp4 + 6D tp4 | seqs 256 mbt 8192 chunk 2048" */
} sim_search_cand;

/* One simulation of a candidate at one load. */
typedef struct {
    double rate;             /* req/s offered (closed loop: 0) */
    int32_t pass;
    char why[160];           /* what failed, "" when it passed */
    sim_summary sum;
} sim_search_probe;

typedef struct {
    sim_cand_status status;
    char reason[256];        /* infeasible/pruned/error: why; ok/slo-missed: what limited the rate */
    int64_t requests;        /* requests per simulation */
    double mean_output;      /* mean output tokens per request of those requests */
    double bound_rate;       /* analytic upper bound on the rate (req/s) */
    double bound_score;      /* the objective at bound_rate */
    char bound_by[64];       /* which pool and phase sets the bound, e.g. "decode 1x tp4" */
    char prices[128];        /* what priced its simulations: "perf-db FILE" (measured where the perf-db
                              * has the op, analytic otherwise) or "analytic"; "" when not simulated */
    double price;            /* USD per GPU-hour, averaged over the fleet's GPUs by type (0 = a GPU
                              * type without a price); the fleet costs price × gpus per hour */
    /* set when simulated */
    double rate;             /* highest SLO-meeting rate (fixed mode: the rate) */
    double goodput_per_gpu;  /* SLO-meeting output tokens/s per GPU at the offered `rate`:
                              * rate × (SLO-meeting share) × mean output tokens / GPUs (what ranks) */
    double run_tok_s_gpu;    /* output tokens/s per GPU as `servesim run` of the same simulation reports
                              * it: first arrival to last completion, the drain after the last arrival
                              * included, so lower than goodput_per_gpu on a short run */
    double tok_s_user;       /* decode speed one user sees: 1000 / mean TPOT */
    double ttft_ms, tpot_ms; /* at the SLO percentile, at `rate` */
    double cost_per_mtok;    /* USD per million output tokens (0 without a price) */
    double score;            /* higher is better */
    double joules_per_token; /* energy per output token of the best probe (energy on; else 0) */
    double gpu_hours;        /* search.autoscale: GPU-hours the fleet held from t = 0 to the run's end (autoscaled
                              * pools as their autoscaler held them); else 0 */
    double gpus_held;        /* search.autoscale: the time-weighted mean GPUs held (gpu_hours over the run); what
                              * goodput_per_gpu and cost_per_mtok are per; else 0 */
    int64_t requests_missed; /* search.autoscale: requests completed outside the SLO; else 0 */
    /* search.replications >= 2 (the best candidate of each of the top_k distinct deployments only):
     * the objective over that many independently seeded runs at `rate`, a 95 % Student-t interval */
    int32_t rep_n;           /* runs; 0 when not replicated */
    double rep_mean, rep_half, rep_low, rep_high;
    double rep_sd;           /* sample standard deviation over the runs */
    int32_t rep_overloaded;  /* runs that stopped on overload */
    int32_t rep_tied;        /* 1: its interval overlaps the replicated leader's (statistically
                              * indistinguishable from it); the leader itself 0 */
    int32_t n_probes, best_probe; /* best_probe -1 when nothing passed */
    double wall_s;           /* simulation time spent */
    sim_search_probe *probes; /* n_probes entries, owned by the search (NULL until simulated) */
} sim_search_result;

typedef struct sim_search sim_search;

/* Where a search stands, passed to the progress callback. */
typedef struct {
    int64_t done, total;      /* candidates decided (infeasible, pruned or simulated) of all */
    int64_t evaluated, pruned;
    int32_t wave_end;         /* 1: called on the searching thread after a wave was stored (results may be
                               * read and written out); 0: from a worker after one candidate */
    int32_t best;             /* best SLO-meeting candidate so far (by score), -1 when none yet */
    double best_score;        /* its score (the objective's unit: tok/s/GPU, or per USD/GPU-h) */
} sim_search_progress;

typedef void (*sim_search_progress_fn)(void *ctx, const sim_search *s, const sim_search_progress *p);

typedef struct {
    int32_t threads;          /* > 0 overrides search.threads */
    int32_t no_prune;         /* 1: simulate every feasible candidate */
    int32_t use_mpi;          /* 1: spread over MPI ranks (needs SERVESIM_HAVE_MPI and mpirun) */
    int32_t quiet;
    sim_search_progress_fn progress; /* serialised: never two calls at once */
    void *progress_ctx;
    /* When *stop becomes non-zero (a signal handler may set it) the search
     * stops: candidates being simulated finish their current probe and are
     * left undecided; sim_search_run() then returns 0 with stats.interrupted.
     * Not honoured under MPI (the ranks must finish each wave together). */
    volatile sig_atomic_t *stop;
} sim_search_opts;

/* Enumerates and bounds the space. Fails with the reason on a bad search
 * block, an empty space or one above search.max_candidates. */
int sim_search_create(const sim_scenario *sc, const sim_search_opts *opts, sim_search **out,
                      sim_err *err);
void sim_search_destroy(sim_search *s);

/* Attaches a results store (rank 0 writes every simulation to it, in
 * candidate order); session names this search's runs in params_json. */
struct sim_store;
void sim_search_set_store(sim_search *s, struct sim_store *st, const char *scenario_text);

int sim_search_run(sim_search *s, sim_err *err);

/* Re-runs the best candidate of each of the top `k` distinct deployments
 * at its rate with per-request metrics and stores them (params_json search.final = true, search.rank = 1..k). */
int sim_search_store_final(sim_search *s, int32_t k, sim_err *err);

int32_t sim_search_count(const sim_search *s);
const sim_search_cand *sim_search_cand_get(const sim_search *s, int32_t i);
const sim_search_result *sim_search_result_get(const sim_search *s, int32_t i);

/* Candidate indices ranked best first (OK candidates only); returns how
 * many, fills up to max. After replications (search.replications >= 2)
 * the replicated candidates come first, by their mean objective over the
 * seeds (ties the single-seed scores could not resolve are broken by the
 * means), then the rest as before. */
int32_t sim_search_ranking(const sim_search *s, int32_t *idx, int32_t max);

/* 1 when candidates a and b are the same deployment (GPU type, mode, encode
 * pool, and per pool role, GPU type, instance count and layout), whatever their scheduler caps,
 * draft tokens or routing lambda. */
int sim_search_same_deployment(const sim_search *s, int32_t a, int32_t b);

/* Distinct deployments ranked best first, each by its best OK candidate
 * (its best scheduler settings); variants[k] (when not NULL) counts the OK
 * candidates of that deployment. Returns how many deployments, fills up to max. */
int32_t sim_search_ranking_distinct(const sim_search *s, int32_t *idx, int32_t *variants, int32_t max);

/* Pareto frontier of OK candidates: goodput/GPU (max) against tok/s/user
 * (max, against_ttft 0) or TTFT at the percentile (min, against_ttft 1),
 * sorted by goodput/GPU descending. Returns the count. */
int32_t sim_search_pareto(const sim_search *s, int against_ttft, int32_t *idx, int32_t max);

typedef struct {
    int64_t candidates, infeasible, pruned, evaluated, ok, simulations;
    double wall_s, sim_wall_s;  /* elapsed; Σ simulation time over workers */
    int32_t workers, ranks, rank;
    int32_t fixed_rate;         /* 1: evaluated at search.rate / the closed loop */
    int32_t objective_cost;     /* 1: ranked by cost per million tokens */
    int32_t objective_energy;   /* 1: ranked by output tokens per joule (search.objective energy) */
    int32_t interrupted;        /* 1: stopped through opts.stop: the results cover what was decided */
    int32_t hetero;             /* 1: per-role GPU types searched (search.prefill_gpus etc.) */
    int32_t autoscale;          /* 1: search.autoscale is on (fixed and/or autoscaled fleets at the scenario's load) */
    int64_t undecided;          /* candidates left pending by an interruption */
    double percentile;
    char notes[1024];           /* what the space ignored or assumed */
} sim_search_stats;

void sim_search_stats_get(const sim_search *s, sim_search_stats *out);
const sim_scenario *sim_search_scenario(const sim_search *s);

/* The scenario one candidate runs as: the search scenario with the
 * candidate's deployment, at `rate` req/s (<= 0: the scenario's own load)
 * with `requests` requests (<= 0: search requests). */
int sim_search_apply(const sim_search *s, int32_t i, double rate, int64_t requests, sim_scenario *out,
                     sim_err *err);

/* ---- reports (sim_search_report.c) ------------------------------------- */

void sim_search_print_tables(const sim_search *s, FILE *f);
/* 0, SIM_ENOMEM (nothing written) or SIM_EIO. */
int sim_search_write_json(const sim_search *s, FILE *f);
int sim_search_write_csv(const sim_search *s, FILE *f);
/* A scenario YAML `servesim run` accepts for candidate i at its rate. */
int sim_search_write_yaml(const sim_search *s, int32_t i, FILE *f, sim_err *err);
/* Launch file k (sim_launch.h: a vLLM, SGLang or TensorRT-LLM script, a
 * Dynamo DynamoGraphDeployment, llm-d values) for candidate i at its rate. */
int sim_search_write_launch(const sim_search *s, int32_t i, sim_launch_kind k, FILE *f, sim_err *err);
/* Why candidate i (an OK one) ranks below the winner: "" for the winner. */
void sim_search_why_lost(const sim_search *s, int32_t i, char *buf, size_t len);

/* Finalises MPI when a search initialised it (once, before exit; a no-op
 * otherwise and without MPI support). */
void sim_search_mpi_finish(void);

#endif
