/* sim_fidelity — see sim_fidelity.h.
 *
 * Each row's engine is the scheduler preset of its backend
 * (sim_sched_preset.h: budgets, chunking, policy, per-iteration and
 * per-request costs, vLLM's frontend, TensorRT-LLM's eager prefill
 * iterations). What stays here is the benchmark client: InferenceX rows
 * draw every request's input and output lengths from [0.8 L, L]
 * (sim_fidelity_row.len_lo); the others run the written lengths, and
 * their clients drift apart as fitted on e2e-dev.csv: vLLM's output lengths
 * spread ±12.5 %, TensorRT-LLM's ±2 % (enough to break exact lock-step; its
 * 1k-prompt rows showed partial desynchronisation), SGLang's none (its
 * prefill-first scheduler re-forms the waves: the measured TTFT ≈
 * concurrency × one prefill). The spreads and the presets' fitted values
 * are documented in docs/cost-model.md.
 *
 * Batch sizes. An aggregated worker admits every client (max_seqs = the
 * concurrency): the rows' batch_size is per attention-DP rank and
 * batch_size × dp equals the concurrency on 2,263 of the 2,277 silicon-dev
 * rows that give one. Of the other 14, 12 rows of the aiconfigurator
 * gap-analysis exports write concurrency = batch × TP (a per-GPU share, not
 * an admission limit: their measured TTFT shows no queueing behind it, and
 * one instance is within the roofline), one is a db-dump row whose squared
 * layout was repaired, and one (TensorRT-LLM Qwen3-32B NVFP4 TP2, 416
 * clients at batch 13) is 32 replicas: one instance would need 3.7× two
 * B200s' FP4 peak for its measured TTFT (sim_fidelity_consistency.c). A
 * row found to be k replicas (sim_fidelity_row.replicas) replays k
 * instances of its layout behind the round-robin router, each admitting
 * its share of the clients. A
 * disaggregated row is a PD deployment: a prefill pool of
 * prefill_num_workers instances and a decode pool of decode_num_workers
 * instances admitting decode_batch_size per DP rank, at least the
 * concurrency's share per worker; each pool with its own layout. Both batch
 * columns are operating points, not the engines' caps: decode_batch_size ×
 * decode_num_workers × decode DP is the concurrency on every InferenceX
 * row that gives them, and prefill_batch_size is 1 on every disaggregated
 * row of silicon-dev.csv (aiconfigurator's estimator runs one prompt per
 * prefill iteration). A context server schedules every waiting prompt its
 * token budget holds (TensorRT-LLM's max_num_tokens, SGLang's
 * chunked-prefill size, vLLM's max-num-batched-tokens, per DP rank), so
 * the prefill pool admits up to the concurrency, bounded by that budget
 * (TensorRT-LLM's only with whole prompts: scheduler.whole_prompts).
 * Capped at one prompt per rank, TensorRT-LLM's DP4 context worker for 1k
 * prompts ran four per eager iteration (its 121 ms launch floor: 33
 * requests/s) where 88 were measured at 4,096 clients, while its 169 ms
 * TTFT at 10 clients shows the floor is there (docs/cost-model.md,
 * "Disaggregated rows");
 * the KV moved whole after the prefill over the cluster network, then the
 * decode pool's hand-over (scheduler.pd_handover_us/gbs, the preset's). Its
 * client sees tokens through the decode worker: TTFT runs to the decode
 * worker's first step after the KV arrived (queue + prefill + back-pressure
 * + transfer + that step) and TPOT from there, as the benchmark clients of
 * SGLang's PD router and Dynamo measure them.
 *
 * Rows are independent simulations: with jobs > 1 that many threads take
 * rows in turn (each writes only its own row), so the result is the same
 * as one thread's. Rows whose GPU has a perf-db share its in-memory tables
 * (one calib_table_cache for the whole replay, as a search shares them over
 * its candidates): built once, not once per row. */
#include "sim_fidelity.h"
#include "sim_pfor.h"

#include "calib_table_cache.h"
#include "sim_clock.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_metrics.h"
#include "sim_sched_preset.h"
#include "sim_schema.h"
#include "sim_spec.h"
#include "model_cost.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *backend;     /* the CSV's backend column, lowercased */
    sim_sched_preset preset; /* the engine's scheduler preset */
    double jitter;           /* output-length spread, fraction of osl (see sim_fidelity_row_scenario) */
    sim_decode_pick decode_pick; /* PD: when the engine's router chooses the decode worker */
} backend_profile;

/* decode_pick (deployment.decode_pick): SGLang's router (sgl-model-gateway,
 * PD mode) picks a prefill and a decode worker per request at arrival and
 * sends it to both (the decode side pre-allocates while the prefill runs),
 * and Dynamo does the same with SGLang workers (bootstrap_info); TensorRT-
 * LLM's disaggregated server sends the generation request when the context
 * server answers, as Dynamo's PrefillRouter does with vLLM and TensorRT-LLM
 * workers and vLLM's disaggregation proxy (docs/cost-model.md,
 * "Disaggregated rows"). */
static const backend_profile profiles[] = {
    {"vllm", SIM_SCHED_PRESET_VLLM, 0.125, SIM_DECODE_PICK_PREFILL_END},
    {"sglang", SIM_SCHED_PRESET_SGLANG, 0, SIM_DECODE_PICK_ARRIVAL},
    {"trtllm", SIM_SCHED_PRESET_TRTLLM, 0.02, SIM_DECODE_PICK_PREFILL_END}};
#define N_PROFILES ((int)(sizeof profiles / sizeof profiles[0]))

/* Requests per client, as in the common `--num-prompts 10×concurrency`
 * benchmark runs, at every concurrency: with fewer waves the first one (every
 * client sending at t = 0 into an empty engine) dominates the means, and at
 * a concurrency above the old 1,536-request cap each client sent a single
 * request (TensorRT-LLM PD at 1,920 clients: 14.7 s simulated TTFT for 2.4 s
 * measured; 2.0 s with ten waves). FID_MAX_REQUESTS only bounds a run whose
 * concurrency no measured row has (10 × 10,860 is the largest in
 * silicon-dev.csv). */
#define FID_WAVES 10
#define FID_MAX_REQUESTS 2000000
#define FID_MAX_SETS 64
/* The InferenceX recipes' engine settings (set_recipe): SGLang's poll
 * interval fitted in the recipes' range (docs/cost-model.md), TensorRT-LLM's
 * attention_dp_config as its DeepSeek recipes write it. */
#define FID_SGLANG_RECV_INTERVAL 30
#define FID_TRTLLM_ADP_TIMEOUT_ITERS 60
#define FID_TRTLLM_ADP_WAIT_ITERS 0
/* TensorRT-LLM's DeepSeek-R1 recipes on B200 (dsr1_fp8/fp4_b200_trt):
 * max_num_tokens = (concurrency + isl + 127) rounded down to 64, at least
 * 8,192 from the 1.2.0rc6.post2 images on (InferenceX PRs 594 and 620
 * moved both recipes from 1.1.0rc2.post2; the 1.1 scripts have no floor);
 * enable_chunked_prefill left off (whole prompts). Their MTP variants
 * (dsr1_fp8/fp4_b200_trt_mtp, the rows replayed with MTP) set
 * ((MTP + 1) x max_batch_size + isl + 127) rounded down to 64 with no
 * floor, one prompt beside a full batch's verify tokens
 * (sim_fidelity_trtllm_dsr1_tokens). */
#define FID_TRTLLM_DSR1_FLOOR 8192
#define FID_TRTLLM_DSR1_FLOOR_FROM 102
/* vLLM's MiniMax-M2.5 recipes on B200 (minimaxm2.5_fp8/fp4_b200):
 * --max-num-batched-tokens 2 x ISL (2,048 for 1k prompts, 16,384 for 8k),
 * per engine (DP rank), against the engine's 8,192. */
#define FID_VLLM_MINIMAX_BUDGET_PER_ISL 2
/* TensorRT-LLM's batch waiting in the InferenceX recipes
 * (scheduler.batch_wait_iters, _ratio: batch_wait_timeout_iters,
 * batch_wait_max_tokens_ratio): the Llama-3.1-70B B200 recipes
 * (70b_fp8/fp4_b200_trt) with 1k/1k sequences below TP 8, 20 steps and 0.9;
 * the fp8 DeepSeek-R1 B200 recipe (dsr1_fp8_b200_trt, DELAY_BATCHING) with
 * 1k/1k sequences from 64 clients, 40 steps and 0.8 (not its MTP variant,
 * dsr1_fp8_b200_trt_mtp, which sets no batch waiting). */
#define FID_TRTLLM_LLAMA_WAIT_ITERS 20
#define FID_TRTLLM_LLAMA_WAIT_RATIO 0.9
#define FID_TRTLLM_DSR1_WAIT_ITERS 40
#define FID_TRTLLM_DSR1_WAIT_RATIO 0.8
#define FID_TRTLLM_DSR1_WAIT_FROM 64

static const backend_profile *profile_for(const char *backend)
{
    for (int i = 0; i < N_PROFILES; i++)
        if (!strcasecmp(profiles[i].backend, backend)) return &profiles[i];
    return NULL;
}

/* The overrides that apply to a backend's rows, prefixes stripped. */
/* The pool an override names ("deployment.pools.K...."): K, or -1. */
static long fid_set_pool(const char *s)
{
    static const char pre[] = "deployment.pools.";
    if (strncmp(s, pre, sizeof pre - 1) || s[sizeof pre - 1] < '0' || s[sizeof pre - 1] > '9') return -1;
    return strtol(s + sizeof pre - 1, NULL, 10);
}

/* The overrides for a backend's rows of n_pools pools (BACKEND: prefixes
 * stripped); one naming a pool the row does not have (pools.1 on an
 * aggregated row) is left out for that row. */
static int fid_sets_for(const sim_fidelity_opts *o, const char *backend, int32_t n_pools, const char **out)
{
    int n = 0;
    for (int i = 0; o && i < o->n_sets && n < FID_MAX_SETS; i++) {
        const char *s = o->sets[i], *colon = strchr(s, ':'), *eq = strchr(s, '='), *v = s;
        if (colon && (!eq || colon < eq)) {
            size_t bl = (size_t)(colon - s);
            if (strlen(backend) != bl || strncasecmp(s, backend, bl)) continue;
            v = colon + 1;
        }
        if (fid_set_pool(v) < n_pools) out[n++] = v;
    }
    return n;
}

/* A disaggregated row's shape: pool 0 prefill, pool 1 decode (a copy of
 * pool 0 until the row's layout is set). */
static void fid_pd_shape(sim_scenario *sc)
{
    sc->deployment.mode = SIM_MODE_PD;
    sc->deployment.n_pools = 2;
    sc->deployment.pools[1] = sc->deployment.pools[0];
    sc->deployment.pools[0].role = SIM_ROLE_PREFILL;
    sc->deployment.pools[1].role = SIM_ROLE_DECODE;
}

static void set_parallel(sim_parallel_cfg *p, const sim_fidelity_layout *l)
{
    p->tp = l->tp;
    p->pp = l->pp;
    p->dp = l->dp;
    p->ep = l->ep;
    p->moe_tp = l->moe_tp;
}

/* "major.minor" of an engine version ("1.2.0rc6.post2" → 102); 0 when
 * not given or not a version. */
static int version_code(const char *v)
{
    char *end;
    long major = strtol(v, &end, 10);
    if (end == v || *end != '.' || major < 0 || major > 999) return 0;
    const char *m = end + 1;
    long minor = strtol(m, &end, 10);
    if (end == m || minor < 0 || minor > 99) return 0;
    return (int)(major * 100 + minor);
}

/* An instance's token budget for `per_rank` tokens on each of dp attention
 * ranks (dp <= 1: one), clamped to the scheduler's int32 range. */
static int32_t ranks_budget(int64_t per_rank, int32_t dp)
{
    int64_t b = per_rank * (dp > 1 ? dp : 1);
    return (int32_t)(b < (1 << 30) ? b : (1 << 30));
}

/* The rows of DeepSeek-R1 geometry the InferenceX dsr1_* recipes ran. */
static int dsr1_model(const sim_fidelity_row *r)
{
    return !strcasecmp(r->model, "deepseek-ai/DeepSeek-R1") || !strcasecmp(r->model, "deepseek-ai/DeepSeek-V3");
}

int32_t sim_fidelity_trtllm_dsr1_tokens(const sim_fidelity_row *r)
{
    if (r->len_lo >= 1 || r->disagg || strcasecmp(r->backend, "trtllm") || !dsr1_model(r)) return 0;
    if (r->mtp_tokens > 0) {
        /* The MTP recipes: ((MTP + 1) x max_batch_size + isl + 127) rounded
         * down to 64, no floor; max_batch_size the clients, or their share
         * per rank with attention DP. */
        int64_t dp = r->agg.dp > 1 ? r->agg.dp : 1, seqs = ((int64_t)r->concurrency + dp - 1) / dp;
        return ranks_budget(((r->mtp_tokens + 1) * seqs + r->isl + 64 + 63) / 64 * 64, 1);
    }
    int64_t b = ((int64_t)r->concurrency + r->isl + 64 + 63) / 64 * 64;
    int v = version_code(r->version);
    if ((v == 0 || v >= FID_TRTLLM_DSR1_FLOOR_FROM) && b < FID_TRTLLM_DSR1_FLOOR) b = FID_TRTLLM_DSR1_FLOOR;
    return ranks_budget(b, 1);
}

/* The token budget a vLLM InferenceX recipe sets per engine, 0 when it
 * keeps the engine's (gptoss_fp4_*, 70b_fp8_*: 8,192, the preset's). */
static int64_t vllm_recipe_tokens(const sim_fidelity_row *r)
{
    if (strcasecmp(r->model, "MiniMaxAI/MiniMax-M2.5") || strcasecmp(r->gpu, "b200")) return 0;
    return (int64_t)FID_VLLM_MINIMAX_BUDGET_PER_ISL * r->isl;
}

int sim_fidelity_vllm_ar_norm_fusion(const sim_fidelity_row *r)
{
    if (strcasecmp(r->backend, "vllm") || r->len_lo >= 1 || r->disagg || strcasecmp(r->gpu, "b200")) return 0;
    return !strcasecmp(r->model, "meta-llama/Llama-3.1-70B") || !strcasecmp(r->model, "openai/gpt-oss-120b");
}

int sim_fidelity_trtllm_batch_wait(const sim_fidelity_row *r, int32_t *iters, double *ratio)
{
    *iters = 0;
    *ratio = 0;
    if (strcasecmp(r->backend, "trtllm") || r->len_lo >= 1 || r->disagg || r->agg.dp > 1 || strcasecmp(r->gpu, "b200") ||
        r->isl != 1024 || r->osl != 1024)
        return 0;
    if (!strcasecmp(r->model, "meta-llama/Llama-3.1-70B") && r->agg.tp < 8) {
        *iters = FID_TRTLLM_LLAMA_WAIT_ITERS;
        *ratio = FID_TRTLLM_LLAMA_WAIT_RATIO;
    } else if (dsr1_model(r) && (!strcasecmp(r->dtype, "fp8") || !strcasecmp(r->dtype, "fp8_block")) &&
               r->concurrency >= FID_TRTLLM_DSR1_WAIT_FROM && r->mtp_tokens == 0) {
        *iters = FID_TRTLLM_DSR1_WAIT_ITERS;
        *ratio = FID_TRTLLM_DSR1_WAIT_RATIO;
    }
    return *iters > 0;
}

/* SGLang's InferenceX recipes on B200 poll for new requests every 10
 * decode steps below a concurrency and every 30 from it
 * (--scheduler-recv-interval: dsr1_fp8_b200 at TP 8, dsr1_fp4_b200 and
 * qwen3.5_bf16_b200 from 16 clients, qwen3.5_fp8_b200 from 5; dsr1_fp8_b200
 * at TP 4: 10 at every concurrency). The same scripts' chunked-prefill
 * sizes (16,384-32,768) and --max-running-requests caps (128 for fp8
 * DeepSeek at TP 8 and bf16 Qwen3.5) are not replayed: a cap of 128 would
 * queue half of the 256- and 512-client runs, whose measured TTFT shows no
 * such wait (5,472 % TTFT MAPE on those rows), so the measured runs used
 * other values than the scripts as they stand (docs/cost-model.md). A
 * recipe the table does not name polls every FID_SGLANG_RECV_INTERVAL. */
typedef struct {
    const char *model, *dtype;
    int32_t tp;        /* 0: any */
    int32_t recv_from; /* concurrency from which the poll is 30 steps (0: always 10) */
} sglang_recipe;

static const sglang_recipe sglang_recipes[] = {
    {"deepseek-ai/DeepSeek-R1", "fp8_block", 8, 16}, {"deepseek-ai/DeepSeek-V3", "fp8_block", 8, 16},
    {"deepseek-ai/DeepSeek-R1", "fp8_block", 4, 0},  {"deepseek-ai/DeepSeek-V3", "fp8_block", 4, 0},
    {"deepseek-ai/DeepSeek-R1", "nvfp4", 0, 16},     {"deepseek-ai/DeepSeek-V3", "nvfp4", 0, 16},
    {"Qwen/Qwen3.5-397B-A17B", "bf16", 0, 16},       {"Qwen/Qwen3.5-397B-A17B", "fp8_block", 0, 5},
};

/* The recipe's poll interval for an aggregated B200 row, 0 when no recipe
 * of the table runs it. */
int32_t sim_fidelity_sglang_recv_interval(const sim_fidelity_row *r)
{
    if (strcasecmp(r->backend, "sglang") || strcasecmp(r->gpu, "b200") || r->agg.dp > 1 || r->len_lo >= 1) return 0;
    for (size_t i = 0; i < sizeof sglang_recipes / sizeof sglang_recipes[0]; i++) {
        const sglang_recipe *x = &sglang_recipes[i];
        if (!strcasecmp(r->model, x->model) && !strcasecmp(r->dtype, x->dtype) && (!x->tp || x->tp == r->agg.tp))
            return x->recv_from > 0 && r->concurrency >= x->recv_from ? 30 : 10;
    }
    return 0;
}

/* The kernels SGLang's InferenceX B200 recipes run in place of its own
 * (scheduler.kernels: GEMM, attention, MoE, all-reduce; NONE = SGLang's).
 * dsr1_fp8_b200: SGLANG_ENABLE_FLASHINFER_GEMM with DeepGEMM off (the
 * dense block-fp8 GEMMs through FlashInfer's TensorRT-LLM kernels),
 * --attention-backend trtllm_mla, --moe-runner-backend flashinfer_trtllm,
 * --enable-flashinfer-allreduce-fusion; dsr1_fp4_b200 the last three (its
 * NVFP4 GEMMs are SGLang's own path); the disaggregated DeepSeek recipes
 * (srt-slurm dsr1/sglang/b200-*) the last three at either format (no
 * FlashInfer GEMM); qwen3.5_bf16_b200 trtllm_mha, flashinfer_trtllm and the
 * fusion; qwen3.5_fp8_b200 trtllm_mha and the fusion. */
typedef struct {
    const char *model, *dtype; /* dtype NULL: any */
    int disagg;
    sim_sched_preset k[SIM_KERNEL_PARTS];
} sglang_kernel_recipe;

#define TRT SIM_SCHED_PRESET_TRTLLM
#define OWN SIM_SCHED_PRESET_NONE
static const sglang_kernel_recipe sglang_kernel_recipes[] = {
    {"deepseek-ai/DeepSeek-R1", "fp8_block", 0, {TRT, TRT, TRT, TRT}},
    {"deepseek-ai/DeepSeek-V3", "fp8_block", 0, {TRT, TRT, TRT, TRT}},
    {"deepseek-ai/DeepSeek-R1", "nvfp4", 0, {OWN, TRT, TRT, TRT}},
    {"deepseek-ai/DeepSeek-V3", "nvfp4", 0, {OWN, TRT, TRT, TRT}},
    {"deepseek-ai/DeepSeek-R1", NULL, 1, {OWN, TRT, TRT, TRT}},
    {"deepseek-ai/DeepSeek-V3", NULL, 1, {OWN, TRT, TRT, TRT}},
    {"Qwen/Qwen3.5-397B-A17B", "bf16", 0, {OWN, TRT, TRT, TRT}},
    {"Qwen/Qwen3.5-397B-A17B", "fp8_block", 0, {OWN, TRT, OWN, TRT}},
};
#undef TRT
#undef OWN

int sim_fidelity_sglang_kernels(const sim_fidelity_row *r, sim_sched_preset k[SIM_KERNEL_PARTS])
{
    for (int p = 0; p < SIM_KERNEL_PARTS; p++) k[p] = SIM_SCHED_PRESET_NONE;
    if (strcasecmp(r->backend, "sglang") || strcasecmp(r->gpu, "b200") || r->len_lo >= 1) return 0;
    for (size_t i = 0; i < sizeof sglang_kernel_recipes / sizeof sglang_kernel_recipes[0]; i++) {
        const sglang_kernel_recipe *x = &sglang_kernel_recipes[i];
        if (strcasecmp(r->model, x->model) || x->disagg != (r->disagg != 0) ||
            (x->dtype && strcasecmp(r->dtype, x->dtype)))
            continue;
        memcpy(k, x->k, sizeof x->k);
        return 1;
    }
    return 0;
}

/* What the InferenceX serving recipes (len_lo < 1 marks their runs) set
 * beyond the engine's defaults, on aggregated workers: SGLang's
 * --scheduler-recv-interval (FID_SGLANG_RECV_INTERVAL steps: the recipes
 * write 10 or a per-run value, the InferenceX sweeps 10-30;
 * `scripts/fit-engine.py --recv` picks 30 in that range), and with attention
 * DP TensorRT-LLM's
 * attention_dp_config (enable_balance, timeout_iters 60,
 * batching_wait_iters 0). aiconfigurator's collector runs the defaults. */
static void set_recipe(sim_sched_cfg *s, const sim_fidelity_row *r)
{
    if (r->mtp_tokens > 0) {
        /* The row's engine image decoded with MTP (sim_fidelity_row.mtp_tokens). */
        s->spec.draft_tokens = r->mtp_tokens;
        s->spec.method = SIM_SPEC_MTP;
        s->spec.mtp_layers = 1;
        s->spec.acceptance.n = 1;
        s->spec.acceptance.v[0] = r->mtp_accept;
    }
    if (r->len_lo >= 1) return;
    if (!strcasecmp(r->backend, "sglang")) {
        int32_t recv = sim_fidelity_sglang_recv_interval(r);
        s->recv_interval = recv > 0 ? recv : FID_SGLANG_RECV_INTERVAL;
        (void)sim_fidelity_sglang_kernels(r, s->kernels);
    }
    if (!strcasecmp(r->backend, "vllm")) {
        /* Every InferenceX vLLM recipe schedules asynchronously: the
         * 2025 scripts write async-scheduling: true in their config.yaml
         * (70b_fp8_b200/h100, gptoss_fp4_b200/h100), the later images do it
         * by default (sim_fidelity_async_scheduling); a row without a
         * version is one of the former. */
        s->async_scheduling = 1;
        int64_t b = vllm_recipe_tokens(r);
        if (b > 0) {
            s->max_batched_tokens = ranks_budget(b, r->agg.dp);
            if (s->max_batched_tokens < s->max_seqs) s->max_batched_tokens = s->max_seqs;
        }
    }
    (void)sim_fidelity_trtllm_batch_wait(r, &s->batch_wait_iters, &s->batch_wait_ratio);
    if (!strcasecmp(r->backend, "trtllm") && r->agg.dp > 1) {
        s->adp_timeout_iters = FID_TRTLLM_ADP_TIMEOUT_ITERS;
        s->adp_wait_iters = FID_TRTLLM_ADP_WAIT_ITERS;
    }
    int32_t budget = sim_fidelity_trtllm_dsr1_tokens(r);
    if (budget > 0) {
        s->max_batched_tokens = ranks_budget(budget, r->agg.dp);
        s->chunk_tokens = budget;
        s->whole_prompts = 1;
    }
}

/* What the row's engine version changes in its preset: vLLM schedules
 * asynchronously by default from v0.14.0 (its release notes: the engine
 * core prepares the next step while the GPU runs this one), so its
 * per-request host work overlaps the device time (scheduler.async_scheduling);
 * nightly builds are later than that. A row without a version keeps the
 * preset's synchronous engine. */
int sim_fidelity_async_scheduling(const char *backend, const char *version)
{
    if (strcasecmp(backend, "vllm") || !version || !*version) return 0;
    if (!strncasecmp(version, "nightly", 7)) return 1;
    return version_code(version) >= 14; /* 0.14 on; 0 when not a version */
}

/* The backend's preset; with attention DP every rank schedules its own
 * batch under the engine's token budget (TensorRT-LLM's max_num_tokens and
 * SGLang's chunked-prefill size are per DP rank), so the instance's budget
 * is dp times the preset's. */
static int set_preset(sim_pool_cfg *p, sim_sched_preset preset, int32_t dp, sim_err *err)
{
    if (sim_sched_preset_apply(preset, &p->scheduler))
        return sim_err_set(err, SIM_ENOTSUP, "no scheduler preset %d", (int)preset);
    p->scheduler.max_batched_tokens = ranks_budget(p->scheduler.max_batched_tokens, dp);
    return 0;
}

/* The row's weight and KV cache formats: model_dtype names
 * (sim_fidelity_csv), "" the checkpoint's. SIM_EINVAL for a name the
 * scenario schema does not have. */
static int set_formats(const sim_fidelity_row *r, sim_scenario *sc, sim_err *err)
{
    int wd = r->dtype[0] ? sim_schema_enum_value(sim_schema_lookup("dtype"), r->dtype) : SIM_DTYPE_AUTO;
    int kd = sim_schema_enum_value(sim_schema_lookup("kv_dtype"), r->kv_dtype);
    if (wd < 0) return sim_err_set(err, SIM_EINVAL, "dtype: '%s' is not a scenario dtype", r->dtype);
    if (kd < 0) return sim_err_set(err, SIM_EINVAL, "kv_dtype: '%s' is not a scenario kv_dtype", r->kv_dtype);
    sc->dtype = (sim_dtype)wd;
    sc->kv_dtype = (sim_dtype)kd;
    return 0;
}

/* The row's clients: FID_WAVES waves of its concurrency (capped), closed
 * loop without think time, and their lengths (sim_fidelity_row.len_lo).
 * Drawn from a range they break lock-step by themselves; drawn exactly, the
 * output lengths jitter ±jitter·osl around osl (same mean): with exactly
 * equal lengths the simulated clients would stay in lock-step forever,
 * every wave arriving at once, while real clients drift apart within a few
 * requests (network, tokenisation and scheduling noise). */
static void set_workload(const sim_fidelity_row *r, const backend_profile *bp, sim_workload_cfg *w)
{
    int64_t reqs = (int64_t)FID_WAVES * r->concurrency;
    w->requests = reqs < FID_MAX_REQUESTS ? reqs : (r->concurrency > FID_MAX_REQUESTS ? r->concurrency : FID_MAX_REQUESTS);
    w->arrival.process = SIM_ARRIVAL_CLOSED;
    w->arrival.concurrency = r->concurrency;
    w->arrival.think_time_s = 0;
    w->arrival.max_connections = r->client_pool; /* 0 unless the measurement shows the pool */
    if (r->len_lo < 1) {
        w->input_tokens.dist = SIM_DIST_UNIFORM;
        w->input_tokens.min = (int64_t)floor(r->isl * r->len_lo);
        w->input_tokens.max = r->isl;
        w->input_tokens.value = r->isl;
        w->output_tokens.dist = SIM_DIST_UNIFORM;
        w->output_tokens.min = (int64_t)floor(r->osl * r->len_lo);
        if (w->output_tokens.min < 2) w->output_tokens.min = 2;
        w->output_tokens.max = r->osl;
        w->output_tokens.value = r->osl;
    } else {
        w->input_tokens.dist = SIM_DIST_FIXED;
        w->input_tokens.value = r->isl;
        if (w->input_tokens.max < r->isl) w->input_tokens.max = r->isl;
        int32_t j = (int32_t)(r->osl * bp->jitter);
        w->output_tokens.dist = j > 0 ? SIM_DIST_UNIFORM : SIM_DIST_FIXED;
        w->output_tokens.value = r->osl;
        w->output_tokens.min = r->osl - j;
        w->output_tokens.max = r->osl + j;
    }
}

/* An aggregated row's pool: its layout, the backend's preset and the
 * recipe's settings, the clients spread over its replicas. */
static int set_agg_pool(const sim_fidelity_row *r, const backend_profile *bp, sim_scenario *sc, sim_err *err)
{
    sim_pool_cfg *p = &sc->deployment.pools[0];
    set_parallel(&p->parallel, &r->agg);
    int rc = set_preset(p, bp->preset, r->agg.dp, err);
    if (rc) return rc;
    p->scheduler.async_scheduling = sim_fidelity_async_scheduling(r->backend, r->version);
    /* Replicas (sim_fidelity_row.replicas): the clients spread over k
     * instances of the layout, each admitting its share. */
    p->instances = r->replicas > 1 ? r->replicas : 1;
    p->scheduler.max_seqs = (r->concurrency + p->instances - 1) / p->instances;
    if (p->scheduler.max_batched_tokens < p->scheduler.max_seqs)
        p->scheduler.max_batched_tokens = p->scheduler.max_seqs;
    set_recipe(&p->scheduler, r);
    p->parallel.ar_norm_fusion = sim_fidelity_vllm_ar_norm_fusion(r);
    return 0;
}

/* A disaggregated row's prefill and decode pools: their workers and
 * layouts, the backend's preset, and the batch sizes each admits. */
static int set_pd_pools(const sim_fidelity_row *r, const backend_profile *bp, sim_scenario *sc, sim_err *err)
{
    int rc;
    fid_pd_shape(sc);
    sc->deployment.decode_pick = bp->decode_pick;
    sim_pool_cfg *pp = &sc->deployment.pools[0], *dp = &sc->deployment.pools[1];
    pp->instances = r->prefill.workers > 0 ? r->prefill.workers : 1;
    dp->instances = r->decode.workers > 0 ? r->decode.workers : 1;
    set_parallel(&pp->parallel, &r->prefill);
    set_parallel(&dp->parallel, &r->decode);
    if ((rc = set_preset(pp, bp->preset, r->prefill.dp, err)) ||
        (rc = set_preset(dp, bp->preset, r->decode.dp, err)))
        return rc;
    pp->scheduler.async_scheduling = dp->scheduler.async_scheduling =
        sim_fidelity_async_scheduling(r->backend, r->version);
    if (sim_fidelity_sglang_kernels(r, pp->scheduler.kernels))
        memcpy(dp->scheduler.kernels, pp->scheduler.kernels, sizeof dp->scheduler.kernels);
    /* The prefill worker admits every waiting prompt its token budget
     * holds (header comment, "Batch sizes"): prefill_batch_size is an
     * operating point, like decode_batch_size, not the engine's cap. */
    int64_t pseqs = (int64_t)r->prefill.batch * r->prefill.dp;
    if (pseqs < r->concurrency) pseqs = r->concurrency;
    if (pseqs > pp->scheduler.max_batched_tokens) pseqs = pp->scheduler.max_batched_tokens;
    pp->scheduler.max_seqs = (int32_t)pseqs;
    /* TensorRT-LLM's context server schedules a prompt only whole
     * (enable_chunked_prefill is off by default and in the recipes):
     * with 8k prompts and an 8,192-token budget per rank, a second
     * prompt does not share a rank's iteration by taking a chunk of
     * what is left (header comment, "Batch sizes"). */
    if (!strcasecmp(r->backend, "trtllm")) pp->scheduler.whole_prompts = 1;
    int64_t per = (r->concurrency + dp->instances - 1) / dp->instances;
    int64_t seqs = (int64_t)r->decode.batch * r->decode.dp;
    if (seqs < per) seqs = per;
    dp->scheduler.max_seqs = (int32_t)(seqs < r->concurrency ? seqs : r->concurrency);
    if (dp->scheduler.max_batched_tokens < dp->scheduler.max_seqs)
        dp->scheduler.max_batched_tokens = dp->scheduler.max_seqs;
    return 0;
}

int sim_fidelity_row_scenario(const sim_fidelity_row *r, const sim_fidelity_opts *o, sim_scenario *sc,
                              sim_err *err)
{
    const backend_profile *bp = profile_for(r->backend);
    if (!bp) return sim_err_set(err, SIM_ENOTSUP, "no scheduler profile for backend '%s'", r->backend);
    sim_scenario_defaults(sc);
    snprintf(sc->name, sizeof sc->name, "fidelity");
    snprintf(sc->model, sizeof sc->model, "%s", r->model);
    int rc = set_formats(r, sc, err);
    if (rc) return rc;
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "%s", r->gpu);
    sc->hardware.gpus_per_node = SIM_DEFAULT_GPUS_PER_NODE;
    set_workload(r, bp, &sc->workload);
    if ((rc = r->disagg ? set_pd_pools(r, bp, sc, err) : set_agg_pool(r, bp, sc, err))) return rc;
    sc->output.db[0] = 0;
    sc->overload.enabled = 0;
    const char *sets[FID_MAX_SETS];
    int n_sets = fid_sets_for(o, bp->backend, sc->deployment.n_pools, sets);
    if (n_sets > 0 && (rc = sim_loader_overlay(sc, sets, n_sets, sc, err))) return rc;
    return 0;
}

/* Per-request sums behind a row's predicted means: the client's TTFT and
 * TPOT, and the TTFT's parts for --explain (queue and prefill over nt
 * requests, KV transfer and first decode step over nk). */
typedef struct {
    double ttft, tpot, queue, prefill, xfer, first_dec;
    int64_t nt, np, nk;
    double ttft_first; /* the TTFT sum over the first wave's nt_first requests */
    int64_t nt_first;
} fid_sums;

/* Adds a scheduled request's queueing (after the frontend's fe
 * milliseconds) and prefill. */
static void sums_add_queue(fid_sums *m, const sim_req_record *q, double fe)
{
    if (q->first_scheduled < 0) return;
    m->queue += (double)(q->first_scheduled - q->arrival) * 1e-6 - fe;
    m->prefill += (double)(q->first_token - q->first_scheduled) * 1e-6;
}

/* Adds a request's KV transfer and its decode worker's first step. */
static void sums_add_kv(fid_sums *m, const sim_req_record *q)
{
    m->xfer += (double)(q->kv_arrived - q->first_token) * 1e-6;
    m->first_dec += (double)(q->decode_first - q->kv_arrived) * 1e-6;
}

/* Adds a disaggregated request that reached its decode worker: every token
 * streams to the client through the decode worker (SGLang's PD router,
 * Dynamo), so the client's first token comes with the decode worker's first
 * step after the KV arrived, and its TPOT counts from there. fe: the
 * frontend's milliseconds, not queueing. */
static void sums_add_pd(fid_sums *m, const sim_req_record *q, double fe)
{
    m->ttft += (double)(q->decode_first - q->arrival) * 1e-6;
    m->tpot += (double)(q->finish - q->decode_first) * 1e-6 / (q->output_tokens - 1);
    m->np++;
    sums_add_queue(m, q, fe);
    sums_add_kv(m, q);
    m->nt++;
    m->nk++;
}

/* Adds any other request: the client's first token (after the detokenizer
 * workers' wait, where the pool has them), its KV transfer where it had
 * one, its TPOT where it has one. */
static void sums_add(fid_sums *m, const sim_req_record *q, double fe)
{
    double v;
    if (q->first_token >= 0) {
        m->ttft += (double)(sim_req_record_first_seen(q) - q->arrival) * 1e-6;
        sums_add_queue(m, q, fe);
        m->nt++;
    }
    if (q->kv_arrived > 0 && q->decode_first > 0) {
        sums_add_kv(m, q);
        m->nk++;
    }
    if (sim_metrics_request_tpot_ms(q, &v)) {
        m->tpot += v;
        m->np++;
    }
}

/* The sums over the cluster's requests. Like the benchmark clients (vLLM's
 * benchmark_serving, SGLang's bench_serving, genai-perf), the mean is over
 * every request, the first wave (all clients sending at t = 0 into an empty
 * engine) included; steady leaves that wave out. */
static void fid_request_sums(const sim_fidelity_row *r, sim_cluster *cl, int steady, double fe, fid_sums *m)
{
    int64_t n = 0;
    const sim_req_record *rec = sim_metrics_requests(sim_cluster_metrics(cl), &n);
    memset(m, 0, sizeof *m);
    for (int64_t i = 0; i < n; i++) {
        const int first = rec[i].id < (uint64_t)r->concurrency;
        if (steady && first && n > r->concurrency) continue;
        const double t0 = m->ttft;
        const int64_t n0 = m->nt;
        if (r->disagg && rec[i].decode_first > 0 && rec[i].output_tokens > 1) sums_add_pd(m, &rec[i], fe);
        else sums_add(m, &rec[i], fe);
        if (first && m->nt > n0) {
            m->ttft_first += m->ttft - t0;
            m->nt_first++;
        }
    }
}

/* What the engine did: the decode side's KV capacity, preemptions and the
 * time-averaged batch (for --json and --explain). */
static void fid_engine_state(sim_fidelity_row *r, sim_cluster *cl)
{
    sim_cluster_state st;
    sim_cluster_state_get(cl, &st);
    int32_t dpool = sim_cluster_n_pools(cl) > 1 ? 1 : 0, nb = 0;
    int64_t ns = 0;
    const sim_sample *smp = sim_metrics_samples(sim_cluster_metrics(cl), &ns);
    double bsum = 0;
    for (int64_t k = 0; k < ns; k++)
        if (sim_cluster_instance_pool(cl, smp[k].instance) == dpool && smp[k].utilization > 0) {
            bsum += smp[k].batch_size;
            nb++;
        }
    r->mean_batch = nb ? bsum / nb : 0;
    r->preemptions = st.preemptions;
    r->kv_tokens = sim_cluster_pool_kv_tokens(cl, dpool);
}

/* The simulated part of --explain's breakdown: the row's predictions, the
 * frontend's fixed delay fe and its workers' wait and service, and the
 * TTFT's parts. */
static void fid_explain_sim(sim_fidelity_explain_out *x, const sim_fidelity_row *r, const fid_sums *m, double fe,
                            const sim_summary *sum)
{
    x->ttft_ms = r->pred_ttft_ms;
    x->tpot_ms = r->pred_tpot_ms;
    x->frontend_ms = fe;
    x->worker_wait_ms = sum->frontend.enabled ? sum->frontend.wait_ms : 0;
    x->worker_service_ms = sum->frontend.enabled ? sum->frontend.service_ms : 0;
    x->client_wait_ms = m->nt && sum->client_pool > 0 ? sum->client_wait_mean_ms * (double)sum->client_waited / (double)m->nt : 0;
    x->queue_ms = (m->nt ? m->queue / m->nt : 0) - x->client_wait_ms;
    x->prefill_ms = m->nt ? m->prefill / m->nt : 0;
    x->kv_transfer_ms = m->nk ? m->xfer / m->nk : 0;
    x->first_decode_ms = m->nk ? m->first_dec / m->nk : 0;
    x->first_wave_n = m->nt_first;
    x->later_n = m->nt - m->nt_first;
    x->first_wave_ttft_ms = r->pred_ttft_first_ms;
    x->later_ttft_ms = x->later_n ? (m->ttft - m->ttft_first) / x->later_n : 0;
}

/* Runs the row's scenario; fills the predictions (and, when x is not NULL,
 * the simulated part of the breakdown). cache: the perf-db tables shared
 * with other rows (NULL = the cluster's own). cl_out, when not NULL,
 * receives the cluster (the caller destroys it). */
static int fid_simulate(sim_fidelity_row *r, const sim_fidelity_opts *o, calib_table_cache *cache,
                        sim_cluster **cl_out, sim_fidelity_explain_out *x, sim_err *err)
{
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int rc = sim_fidelity_row_scenario(r, o, sc, err);
    sim_cluster *cl = NULL;
    sim_summary sum;
    if (rc == 0) rc = sim_cluster_simulate(sc, cache, &sum, &cl, err);
    if (rc == 0) {
        /* The frontend: the fixed delay, plus the API-server workers' mean
         * wait and service where the pool has them. */
        const double fe = sc->deployment.pools[0].scheduler.frontend_us * 1e-3 +
                          (sum.frontend.enabled ? sum.frontend.wait_ms + sum.frontend.service_ms : 0);
        fid_sums m;
        fid_request_sums(r, cl, o && o->steady, fe, &m);
        fid_engine_state(r, cl);
        r->pred_ttft_ms = m.nt ? m.ttft / m.nt : sum.ttft_ms.mean;
        r->pred_tpot_ms = m.np ? m.tpot / m.np : sum.tpot_ms.mean;
        r->pred_ttft_first_ms = m.nt_first ? m.ttft_first / m.nt_first : 0;
        if (!(r->pred_ttft_ms > 0) || !(r->pred_tpot_ms > 0) || !isfinite(r->pred_ttft_ms) ||
            !isfinite(r->pred_tpot_ms))
            rc = sim_err_set(err, SIM_ERANGE, "the simulation completed no request with a first token and a TPOT");
        if (x) fid_explain_sim(x, r, &m, fe, &sum);
    }
    free(sc);
    if (cl_out && rc == 0) *cl_out = cl;
    else sim_cluster_destroy(cl);
    return rc;
}

/* ---- groups ------------------------------------------------------------- */

typedef struct {
    double *ttft, *tpot;
    int32_t n, cap;
} ape_list;

static int ape_push(ape_list *a, double ttft, double tpot)
{
    if (a->n == a->cap) {
        int32_t nc = a->cap ? a->cap * 2 : 64;
        double *t1 = realloc(a->ttft, (size_t)nc * sizeof *t1);
        if (!t1) return -1;
        a->ttft = t1;
        double *t2 = realloc(a->tpot, (size_t)nc * sizeof *t2);
        if (!t2) return -1;
        a->tpot = t2;
        a->cap = nc;
    }
    a->ttft[a->n] = ttft;
    a->tpot[a->n] = tpot;
    a->n++;
    return 0;
}

static void ape_finish(ape_list *a, sim_fidelity_group *g)
{
    g->n = a->n;
    if (a->n > 0) {
        g->ttft_mape = gsl_stats_mean(a->ttft, 1, (size_t)a->n);
        g->tpot_mape = gsl_stats_mean(a->tpot, 1, (size_t)a->n);
        gsl_sort(a->ttft, 1, (size_t)a->n);
        gsl_sort(a->tpot, 1, (size_t)a->n);
        g->ttft_mdape = gsl_stats_median_from_sorted_data(a->ttft, 1, (size_t)a->n);
        g->tpot_mdape = gsl_stats_median_from_sorted_data(a->tpot, 1, (size_t)a->n);
    }
    free(a->ttft);
    free(a->tpot);
    memset(a, 0, sizeof *a);
}

/* Where a simulated row is scored: 0 with the others, 1 apart for its
 * unknown layout, 2 apart for its inconsistent measurement. */
enum { FID_SCORED, FID_APART_LAYOUT, FID_APART_INCONSISTENT };

static int apart_class(const sim_fidelity_row *x)
{
    return x->layout_unknown ? FID_APART_LAYOUT : x->inconsistent[0] ? FID_APART_INCONSISTENT : FID_SCORED;
}

static const char *const apart_names[] = {"all", "layout_unknown", "inconsistent"};

/* Groups the simulated rows of scoring class `cls` (apart_class) by key
 * (one group per distinct key, first-seen order; no key: one group named
 * after the class). */
typedef void (*fid_key_fn)(const sim_fidelity_row *x, char *buf, size_t n);

static int group_by(const sim_fidelity_result *r, int cls, fid_key_fn key, sim_fidelity_group *gs, int32_t *n_out)
{
    char kb[sizeof gs->backend];
    int32_t n = 0;
    ape_list lists[SIM_FID_MAX_GROUPS];
    memset(lists, 0, sizeof lists);
    int rc = 0;
    for (int32_t i = 0; i < r->n_rows && rc == 0; i++) {
        const sim_fidelity_row *x = &r->rows[i];
        if (!x->ok || apart_class(x) != cls) continue;
        const char *k = apart_names[cls];
        if (key) {
            key(x, kb, sizeof kb);
            k = kb;
        }
        int32_t g = 0;
        while (g < n && strcmp(gs[g].backend, k)) g++;
        if (g == n) {
            if (n == SIM_FID_MAX_GROUPS) continue; /* more groups than kept: in "all" only */
            memset(&gs[n], 0, sizeof gs[n]);
            snprintf(gs[n].backend, sizeof gs[n].backend, "%s", k);
            n++;
        }
        rc = ape_push(&lists[g], 100.0 * fabs(x->pred_ttft_ms / x->meas_ttft_ms - 1.0),
                      100.0 * fabs(x->pred_tpot_ms / x->meas_tpot_ms - 1.0));
    }
    for (int32_t g = 0; g < n; g++) ape_finish(&lists[g], &gs[g]);
    *n_out = n;
    return rc ? SIM_ENOMEM : 0;
}

static void key_backend(const sim_fidelity_row *x, char *b, size_t n) { snprintf(b, n, "%s", x->backend); }
static void key_gpu(const sim_fidelity_row *x, char *b, size_t n) { snprintf(b, n, "%s", x->gpu); }
static void key_model(const sim_fidelity_row *x, char *b, size_t n) { snprintf(b, n, "%s", x->model); }
static void key_mode(const sim_fidelity_row *x, char *b, size_t n) { snprintf(b, n, "%s", x->disagg ? "disagg" : "agg"); }
static void key_backend_gpu(const sim_fidelity_row *x, char *b, size_t n) { snprintf(b, n, "%s %s", x->backend, x->gpu); }
static void key_version(const sim_fidelity_row *x, char *b, size_t n)
{
    snprintf(b, n, "%s %s", x->backend, x->version[0] ? x->version : "(no version)");
}

/* The one group of a scoring class, empty (named) when it has no row. */
static int class_group(const sim_fidelity_result *r, int cls, sim_fidelity_group *g)
{
    int32_t n = 0;
    int rc = group_by(r, cls, NULL, g, &n);
    if (!rc && n == 0) {
        memset(g, 0, sizeof *g);
        snprintf(g->backend, sizeof g->backend, "%s", apart_names[cls]);
    }
    return rc;
}

static int fid_groups(sim_fidelity_result *r)
{
    int rc = class_group(r, FID_SCORED, &r->all);
    if (!rc) rc = class_group(r, FID_APART_LAYOUT, &r->layout_unknown);
    if (!rc) rc = class_group(r, FID_APART_INCONSISTENT, &r->inconsistent);
    if (!rc) rc = group_by(r, FID_SCORED, key_backend, r->backends, &r->n_backends);
    if (!rc) rc = group_by(r, FID_SCORED, key_gpu, r->gpus, &r->n_gpus);
    if (!rc) rc = group_by(r, FID_SCORED, key_model, r->models, &r->n_models);
    if (!rc) rc = group_by(r, FID_SCORED, key_mode, r->modes, &r->n_modes);
    if (!rc) rc = group_by(r, FID_SCORED, key_backend_gpu, r->backend_gpus, &r->n_backend_gpus);
    if (!rc) rc = group_by(r, FID_SCORED, key_version, r->versions, &r->n_versions);
    return rc;
}

/* ---- replay -------------------------------------------------------------- */

typedef struct {
    sim_fidelity_result *res;
    const sim_fidelity_opts *opts;
    calib_table_cache *cache;
} fid_pool;

static void fid_one(sim_fidelity_row *r, const sim_fidelity_opts *o, calib_table_cache *cache)
{
    if (r->note[0]) return; /* not simulatable as read */
    if (o && o->only_id && strcmp(o->only_id, r->id)) {
        snprintf(r->note, sizeof r->note, "not selected");
        return;
    }
    sim_err e = {""};
    if (fid_simulate(r, o, cache, NULL, NULL, &e)) {
        snprintf(r->note, sizeof r->note, "%.250s", e.msg);
        return;
    }
    r->ok = 1;
}

static void fid_item(void *arg, int64_t i)
{
    fid_pool *p = arg;
    fid_one(&p->res->rows[i], p->opts, p->cache);
}

static int fid_check_sets(const sim_fidelity_opts *opts, sim_err *err)
{
    for (int b = 0; opts && opts->n_sets > 0 && b < N_PROFILES; b++) {
        const char *sets[FID_MAX_SETS];
        /* Checked on a disaggregated row's shape, so that pools.1 (the
         * decode pool) can be set alone. */
        int n = fid_sets_for(opts, profiles[b].backend, SIM_MAX_POOLS, sets);
        if (n == 0) continue;
        for (int i = 0; i < n; i++)
            if (fid_set_pool(sets[i]) >= 2)
                return sim_err_set(err, SIM_EINVAL,
                                   "--set %s: a replayed row has pools 0 (aggregated or prefill) and 1 (decode) only",
                                   sets[i]);
        sim_scenario *a = malloc(sizeof *a);
        if (!a) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        sim_scenario_defaults(a);
        fid_pd_shape(a);
        int rc = sim_loader_overlay(a, sets, n, a, err);
        free(a);
        if (rc) return rc;
    }
    return 0;
}

int sim_fidelity_run(const char *csv_path, const sim_fidelity_opts *opts, sim_fidelity_result *out,
                     sim_err *err)
{
    /* Bad overrides fail once, up front, not once per row. */
    int rc = fid_check_sets(opts, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    double t0 = sim_wall_s();
    if ((rc = sim_fidelity_read(csv_path, out, err))) return rc;
    calib_table_cache *cache = NULL;
    if ((rc = calib_table_cache_create(&cache, err)) < 0) {
        sim_fidelity_free(out);
        return rc;
    }
    int jobs = opts && opts->jobs > 1 ? opts->jobs : 1;
    if (jobs > 64) jobs = 64;
    fid_pool pool = {out, opts, cache};
    sim_pfor(out->n_rows, jobs, fid_item, &pool);
    calib_table_cache_free(cache);
    out->n_ok = 0;
    for (int32_t i = 0; i < out->n_rows; i++) out->n_ok += out->rows[i].ok;
    if ((rc = fid_groups(out))) {
        sim_fidelity_free(out);
        return sim_err_set(err, rc, "out of memory");
    }
    out->wall_s = sim_wall_s() - t0;
    return 0;
}

void sim_fidelity_free(sim_fidelity_result *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n_rows = r->n_ok = 0;
}

/* ---- explain ------------------------------------------------------------- */

static int fam_of(model_op_class c)
{
    return c == MODEL_OPC_GEMM ? 0 : c == MODEL_OPC_ATTN ? 1 : c == MODEL_OPC_COMM ? 2 : c == MODEL_OPC_OTHER ? 3 : 4;
}

/* One iteration of pool `pool`'s cost model, by op family and top ops. */
static void explain_iter(const model_cost *c, const model_batch *b, double *total_ms, double fam[5], char top[3][64])
{
    model_op ops[256];
    int32_t n = 0;
    model_iter_cost ic;
    *total_ms = model_cost_breakdown(c, b, ops, 256, &n, &ic) * 1e3;
    if (n > 256) n = 256;
    for (int i = 0; i < 5; i++) fam[i] = 0;
    for (int32_t i = 0; i < n; i++) fam[fam_of(ops[i].cls)] += ops[i].time_s * 1e3;
    int picked[3] = {-1, -1, -1};
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (int32_t i = 0; i < n; i++) {
            if (i == picked[0] || i == picked[1]) continue;
            if (best < 0 || ops[i].time_s > ops[best].time_s) best = (int)i;
        }
        picked[k] = best;
        /* The MLA module stands for the attention block's ops: its source
         * (module rows or the fitted module set) is named. */
        if (best >= 0 && !strcmp(ops[best].name, "mla_module"))
            snprintf(top[k], 64, "%s %.3f ms (%s)", ops[best].name, ops[best].time_s * 1e3,
                     model_source_name(ops[best].source));
        else if (best >= 0) snprintf(top[k], 64, "%s %.3f ms", ops[best].name, ops[best].time_s * 1e3);
        else top[k][0] = 0;
    }
}

int sim_fidelity_explain(const char *csv_path, const char *id, const sim_fidelity_opts *opts,
                           sim_fidelity_row *row, sim_fidelity_explain_out *x, sim_err *err)
{
    int rc = fid_check_sets(opts, err);
    if (rc) return rc;
    sim_fidelity_result res;
    if ((rc = sim_fidelity_read(csv_path, &res, err))) return rc;
    int32_t i = 0;
    while (i < res.n_rows && strcmp(res.rows[i].id, id)) i++;
    if (i == res.n_rows) {
        sim_fidelity_free(&res);
        return sim_err_set(err, SIM_EINVAL, "%s: no row with id '%s'", csv_path, id);
    }
    *row = res.rows[i];
    sim_fidelity_free(&res);
    if (row->note[0]) return sim_err_set(err, SIM_EINVAL, "row '%s' cannot be simulated: %s", id, row->note);
    memset(x, 0, sizeof *x);
    sim_cluster *cl = NULL;
    if ((rc = fid_simulate(row, opts, NULL, &cl, x, err))) {
        snprintf(row->note, sizeof row->note, "%.250s", err ? err->msg : "failed");
        return sim_err_wrap(err, rc, "row '%s' cannot be simulated", id);
    }
    row->ok = 1;
    /* The cost model at the row's shapes: a prefill of isl tokens, and a
     * decode step of the mean running batch at the mean context. */
    int32_t n_pools = sim_cluster_n_pools(cl);
    const model_cost *pc = sim_cluster_pool_cost(cl, 0);
    const model_cost *dc = sim_cluster_pool_cost(cl, n_pools > 1 ? 1 : 0);
    double batch = 0;
    int64_t ns = 0;
    const sim_sample *s = sim_metrics_samples(sim_cluster_metrics(cl), &ns);
    int32_t dpool = n_pools > 1 ? 1 : 0, nb = 0;
    for (int64_t k = 0; k < ns; k++)
        if (sim_cluster_instance_pool(cl, s[k].instance) == dpool && s[k].utilization > 0) {
            batch += s[k].batch_size;
            nb++;
        }
    x->decode_batch = nb ? batch / nb : row->concurrency;
    if (x->decode_batch < 1) x->decode_batch = 1;
    /* The client's mean lengths (a range's midpoint). */
    double isl = row->len_lo < 1 ? 0.5 * (floor(row->isl * row->len_lo) + row->isl) : row->isl;
    double osl = row->len_lo < 1 ? 0.5 * (floor(row->osl * row->len_lo) + row->osl) : row->osl;
    x->decode_ctx = isl + osl / 2.0;
    if (pc) {
        model_chunk ch = {(int32_t)llround(isl), 0};
        x->prefill_tokens = ch.tokens;
        model_batch b = {1, &ch, 0, 0, 0};
        explain_iter(pc, &b, &x->prefill_iter_ms, x->prefill_fam_ms, x->prefill_top);
    }
    if (dc) {
        /* The mean batch as its CUDA graph runs it: padding rows of 1 token. */
        const int32_t n_dec = (int32_t)llround(x->decode_batch);
        x->decode_graph_batch = sim_cluster_pool_graph_batch(cl, dpool, n_dec);
        const int32_t pad = x->decode_graph_batch > n_dec ? x->decode_graph_batch - n_dec : 0;
        model_batch b = {.n_decode = n_dec + pad,
                         .decode_ctx_sum = (int64_t)llround(x->decode_batch * x->decode_ctx) + pad,
                         .n_pad = pad};
        explain_iter(dc, &b, &x->decode_iter_ms, x->decode_fam_ms, x->decode_top);
        const model_cost *draft = sim_cluster_pool_draft_cost(cl, dpool);
        const sim_spec_cfg *sp = sim_cluster_pool_spec(cl, dpool);
        if (draft && sp) {
            /* The same batch as a verify step, its draft passes, per token. */
            sim_spec *spec = NULL;
            if (sim_spec_create(sp, draft, 0, 0, &spec, NULL) == 0) {
                x->spec_k = sp->draft_tokens;
                x->spec_tokens = sim_spec_expected_tokens(sp);
                x->spec_verify_ms = model_cost_verify_iteration(dc, &b, 1 + sp->draft_tokens, NULL) * 1e3;
                x->spec_draft_ms = sim_spec_draft_s(spec, &b) * 1e3;
                sim_spec_destroy(spec);
            }
        }
    }
    x->decode_stall_ms = x->tpot_ms - (x->spec_tokens > 0 ? (x->spec_verify_ms + x->spec_draft_ms) / x->spec_tokens
                                                           : x->decode_iter_ms);
    sim_cluster_destroy(cl);
    return 0;
}
