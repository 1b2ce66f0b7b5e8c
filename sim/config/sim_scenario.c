/* sim_scenario — defaults and enum names; see sim_scenario.h. */
#include "sim_scenario.h"

#include <stdio.h>
#include <string.h>

void sim_class_from_workload(sim_class_cfg *cl, const sim_workload_cfg *w)
{
    memset(cl, 0, sizeof *cl);
    cl->requests = w->requests;
    cl->duration_s = w->duration_s;
    cl->arrival = w->arrival;
    cl->input_tokens = w->input_tokens;
    cl->output_tokens = w->output_tokens;
    cl->prefix = w->prefix;
    cl->sessions = w->sessions;
}

sim_slo_cfg sim_class_slo(const sim_scenario *sc, int32_t i)
{
    sim_slo_cfg s = sc->slo;
    if (i < 0 || i >= sc->workload.n_classes) return s;
    const sim_slo_cfg *c = &sc->workload.classes[i].slo;
    if (c->ttft_ms > 0) s.ttft_ms = c->ttft_ms;
    if (c->tpot_ms > 0) s.tpot_ms = c->tpot_ms;
    if (c->e2e_ms > 0) s.e2e_ms = c->e2e_ms;
    return s;
}

int sim_admission_enabled(const sim_workload_cfg *w)
{
    if (w->admission.bucket.rate > 0 || w->admission.slo_factor > 0) return 1;
    for (int32_t i = 0; i < w->n_classes && i < SIM_MAX_CLASSES; i++)
        if (w->classes[i].admission.rate > 0) return 1;
    return 0;
}

/* workload: a fixed-length Poisson stream; sessions, images, a trace and
 * shared prefixes off. */
static void workload_defaults(sim_workload_cfg *w)
{
    w->requests = 1000;
    w->duration_s = 0;
    w->arrival.process = SIM_ARRIVAL_POISSON;
    w->arrival.rate = 10.0;
    w->arrival.cv = 1.0;
    w->arrival.concurrency = 16;
    w->arrival.think_time_s = 0;
    w->input_tokens.dist = SIM_DIST_FIXED;
    w->input_tokens.value = 1024;
    w->input_tokens.min = 1;
    w->input_tokens.max = 131072;
    w->input_tokens.s = 1.1;
    w->output_tokens.dist = SIM_DIST_FIXED;
    w->output_tokens.value = 256;
    w->output_tokens.min = 1;
    w->output_tokens.max = 32768;
    w->output_tokens.s = 1.1;
    /* workload.sessions (off until count > 0): every distribution starts
     * from the output_tokens defaults with its own fixed value. */
    sim_session_cfg *ss = &w->sessions;
    ss->count = 0;
    ss->fan_out = 0;
    sim_len_dist *sd[5] = {&ss->turns, &ss->user_tokens, &ss->think_ms, &ss->child_input_tokens,
                           &ss->child_output_tokens};
    const double sv[5] = {4, 256, 1000, 128, 128};
    for (int i = 0; i < 5; i++) {
        *sd[i] = w->output_tokens;
        sd[i]->value = sv[i];
        sd[i]->max = i == 2 ? 3600000 : 131072;
    }
    /* workload.images (off: per_request fixed at 0). */
    w->images.per_request = w->output_tokens;
    w->images.per_request.value = 0;
    w->images.per_request.max = 1024;
    w->trace.format = SIM_TRACE_NONE;
    w->trace.time_scale = 1.0;
    w->trace.rate_scale = 1.0;
    sim_prefix_cfg *px = &w->prefix;
    px->kind = SIM_PREFIX_NONE;
    px->block_tokens = 512;
    px->prompts = 16;
    px->prompt_tokens = 2048;
    px->zipf_s = 1.0;
    px->sessions = 64;
    px->turns = 5;
    px->docs = 1000;
    px->doc_tokens = 1024;
    px->docs_per_request = 2;
}

/* One pool: a colocated instance on one GPU, vLLM-like scheduler caps,
 * autoscaling off (max 0) with Kubernetes-like timings. */
static void pool_defaults(sim_pool_cfg *p)
{
    p->role = SIM_ROLE_COLOCATED;
    p->instances = 1;
    p->parallel.tp = 1;
    p->parallel.pp = 1;
    p->parallel.dp = 1;
    p->parallel.ep = 1;
    p->parallel.dcp = 1;
    p->parallel.sp = 1;
    p->parallel.sp_kind = SIM_SP_ULYSSES;
    p->parallel.tp_sp = 0;
    p->parallel.comm_fp8 = 0;
    p->parallel.comm_overlap = 0;
    p->parallel.micro_batches = 0;
    p->parallel.ep_mode = SIM_EP_AUTO;
    p->parallel.moe_gemm = SIM_MOE_GEMM_AUTO;
    p->parallel.expert_skew = 0.0;
    p->parallel.moe_tp = 0;
    p->scheduler.max_seqs = 256;
    p->scheduler.max_batched_tokens = 8192;
    p->scheduler.chunk_tokens = 2048;
    p->scheduler.block_tokens = 16;
    p->scheduler.gpu_mem_util = 0.90;
    p->scheduler.reserve_gb = 2.0;
    p->scheduler.overhead_us = 1500;
    p->scheduler.policy = SIM_POLICY_DECODE_FIRST;
    p->scheduler.preset = SIM_SCHED_PRESET_NONE;
    p->scheduler.admission = SIM_ADMISSION_OPTIMISTIC;
    /* SGLang's defaults (environ.py): init 0.7, min 0.7 x 0.14, decay over 600 steps, clip 4096, 20 steps. */
    p->scheduler.ratio_init = 0.7;
    p->scheduler.ratio_min = 0.7 * 0.14;
    p->scheduler.ratio_decay = (0.7 - 0.7 * 0.14) / 600.0;
    p->scheduler.ratio_clip = 4096;
    p->scheduler.retract_steps = 20;
    p->scheduler.mem_fraction_of = SIM_MEM_OF_TOTAL;
    p->scheduler.spec.mtp_layers = 1;
    p->autoscale.min = 1;
    p->autoscale.max = 0;
    p->autoscale.metric = SIM_AS_QUEUE;
    p->autoscale.up_threshold = -1;
    p->autoscale.down_threshold = -1;
    p->autoscale.step = 1;
    p->autoscale.interval_s = 15;  /* Kubernetes HPA's sync period */
    p->autoscale.window_s = 60;
    p->autoscale.lag_s = 15;       /* one Prometheus scrape interval */
    p->autoscale.cooldown_s = 60;
    p->autoscale.storage_gbs = 5;  /* one NVMe Gen4 x4 drive's sustained read */
    p->autoscale.startup_s = 30;
}

/* routing, cache, network and the PD / AF hand-over keys of deployment. */
static void routing_defaults(sim_scenario *sc)
{
    sc->routing.policy = SIM_ROUTE_ROUND_ROBIN;
    sc->routing.preset = SIM_PRESET_NONE;
    sc->routing.lambda = 1.0;
    sc->routing.cache_threshold = 0.5;       /* SGLang router defaults */
    sc->routing.balance_abs_threshold = 32;
    sc->routing.balance_rel_threshold = 1.0001;
    sc->routing.overlap_score_weight = 1.0;  /* Dynamo default */
    sc->routing.temperature = 0.0;
    sc->routing.w_prefix = 1.0;
    sc->routing.w_load = 1.0;
    sc->routing.w_kv = 1.0;
    sc->routing.snapshot_interval_s = 0;
    sc->routing.view = SIM_VIEW_EXACT;
    sc->routing.min_dwell_s = 0;

    sc->cache.enabled = 0;
    sc->cache.block_tokens = 512;
    sc->cache.policy = SIM_CACHE_LRU;
    sc->cache.sharing = SIM_SHARING_NONE;
    sc->cache.host_gb = 0;
    sc->cache.host_gbps = 50;
    sc->cache.pool_gb = 0;
    sc->cache.pool_gbps = 25;

    sc->network.nic_gbps = 0;
    sc->network.nvlink_gbs = 0;
    sc->network.latency_us = 5;

    sc->deployment.kv_transfer = SIM_KV_WHOLE;
    sc->deployment.decode_routing = SIM_DECODE_LEAST_LOADED;
    sc->deployment.decode_pick = SIM_DECODE_PICK_PREFILL_END;
    sc->deployment.af_micro_batches = 2;
}

/* output, overload and search. */
static void run_defaults(sim_scenario *sc)
{
    sc->output.db[0] = '\0';
    sc->output.store_requests = 1;
    sc->output.sample_interval_s = 1.0;
    sc->output.request_records = 1000000;
    sc->output.sample_records = 1000000;
    sc->overload.enabled = 1;
    sc->overload.max_queue_delay_s = 120;
    sc->overload.max_waiting = 200000;

    sim_search_cfg *se = &sc->search;
    se->max_gpus = 16;
    se->rate = 0;
    se->percentile = 90;
    se->requests = 400;
    se->tolerance = 0.05;
    se->top_k = 5;
    se->threads = 0;
    se->prune = 1;
    se->objective = SIM_OBJECTIVE_AUTO;
    se->max_candidates = 20000;
}

void sim_scenario_defaults(sim_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    strcpy(sc->name, "unnamed");
    sc->seed = 42;
    strcpy(sc->model, "llama-3.1-8b");
    sc->dtype = SIM_DTYPE_AUTO;
    sc->kv_dtype = SIM_DTYPE_BF16;
    strcpy(sc->hardware.gpu, "h100-sxm");
    sc->hardware.gpus_per_node = SIM_DEFAULT_GPUS_PER_NODE;
    for (int f = 0; f < SIM_OP_FAMILIES; f++) sc->hardware.op_speedup[f] = 1;
    workload_defaults(&sc->workload);
    sc->deployment.mode = SIM_MODE_COLOCATED;
    sc->deployment.n_pools = 1;
    pool_defaults(&sc->deployment.pools[0]);
    /* Later pools in a file start from the same scheduler defaults. */
    for (int i = 1; i < SIM_MAX_POOLS; i++) sc->deployment.pools[i] = sc->deployment.pools[0];
    routing_defaults(sc);
    sc->slo.ttft_ms = 0;
    sc->slo.tpot_ms = 0;
    sc->slo.e2e_ms = 0;
    /* Class items start from the workload's keys (the loader copies them
     * in again over a file's workload); these are what the reference shows. */
    for (int i = 0; i < SIM_MAX_CLASSES; i++) sim_class_from_workload(&sc->workload.classes[i], &sc->workload);
    run_defaults(sc);
}

const char *const sim_prefix_kind_names[SIM_PREFIX_KINDS] = {"none", "system_prompt", "multi_turn", "rag"};
const char *const sim_sched_policy_names[SIM_SCHED_POLICIES] = {"decode_first", "prefill_first"};
const char *const sim_admission_names[SIM_ADMISSIONS] = {"optimistic", "reserve", "ratio"};
const char *const sim_mem_fraction_of_names[SIM_MEM_FRACTIONS_OF] = {"total", "free", "sglang"};
const char *const sim_sched_preset_names[SIM_SCHED_PRESETS] = {"none", "vllm", "sglang", "trtllm"};
const char *const sim_kernel_part_names[SIM_KERNEL_PARTS] = {"gemm", "attention", "moe", "comm"};
const char *const sim_graph_rule_names[SIM_GRAPH_RULES] = {"none", "vllm", "sglang", "trtllm"};
const char *const sim_sp_kind_names[SIM_SP_KINDS] = {"ulysses", "ring"};
const char *const sim_ep_mode_names[SIM_EP_MODES] = {"auto", "normal", "low_latency", "alltoall", "allgather"};
const char *const sim_moe_gemm_names[SIM_MOE_GEMMS] = {"auto", "contiguous", "masked"};
const char *const sim_dtype_names[SIM_DTYPES] = {"auto", "bf16", "fp8", "fp8_block", "mxfp8", "nvfp4", "mxfp4", "int4"};
const char *const sim_kv_transfer_names[SIM_KV_TRANSFERS] = {"whole", "layerwise"};
const char *const sim_decode_routing_names[SIM_DECODE_ROUTINGS] = {"round_robin", "least_loaded"};
const char *const sim_decode_pick_names[SIM_DECODE_PICKS] = {"prefill_end", "arrival"};
const char *const sim_route_view_names[SIM_ROUTE_VIEWS] = {"exact", "approximate"};
const char *const sim_cache_policy_names[SIM_CACHE_POLICIES] = {"lru", "lfu"};
const char *const sim_cache_sharing_names[SIM_CACHE_SHARINGS] = {"none", "pull", "pool"};
const char *const sim_search_objective_names[SIM_SEARCH_OBJECTIVES] = {"auto", "goodput_per_gpu", "cost", "energy"};
const char *const sim_autoscale_metric_names[SIM_AS_METRICS] = {"queue", "concurrency", "utilization", "kv", "slo"};

static const char *name_of(const char *const *names, int n, int v) { return v >= 0 && v < n ? names[v] : "?"; }

#define SIM_DEFINE_NAME_FN(stem, type, count) \
    const char *sim_##stem##_name(type v) { return name_of(sim_##stem##_names, (count), (int)v); }
SIM_NAMED_ENUMS(SIM_DEFINE_NAME_FN)
#undef SIM_DEFINE_NAME_FN

void sim_autoscale_thresholds(const sim_autoscale_cfg *a, double *up, double *down)
{
    static const double def_up[5] = {4, 0.8, 0.8, 0.8, 0.9}, def_down[5] = {0.5, 0.3, 0.3, 0.3, 0.99};
    int m = (unsigned)a->metric < 5 ? (int)a->metric : 0;
    *up = a->up_threshold >= 0 ? a->up_threshold : def_up[m];
    *down = a->down_threshold >= 0 ? a->down_threshold : def_down[m];
}

static const char *const role_names[] = {"colocated", "prefill", "decode", "attention", "ffn"};
static const char *const route_policy_names[] = {"round_robin", "random", "least_loaded", "power_of_two",
                                                 "cache_aware"};
static const char *const arrival_names[] = {"poisson", "gamma", "constant", "closed_loop", "schedule"};
static const char *const dist_names[] = {"fixed", "uniform", "normal", "lognormal", "zipf", "empirical"};
static const char *const mode_names[] = {"colocated", "pd", "af", "pd+af"};
#define SIM_DEFINE_LOCAL_NAME_FN(fn, type, table) \
    const char *fn(type v) { return name_of((table), (int)(sizeof(table) / sizeof(table)[0]), (int)v); }
SIM_DEFINE_LOCAL_NAME_FN(sim_role_name, sim_role, role_names)
SIM_DEFINE_LOCAL_NAME_FN(sim_route_policy_name, sim_route_policy, route_policy_names)
SIM_DEFINE_LOCAL_NAME_FN(sim_arrival_name, sim_arrival_kind, arrival_names)
SIM_DEFINE_LOCAL_NAME_FN(sim_dist_name, sim_dist_kind, dist_names)
SIM_DEFINE_LOCAL_NAME_FN(sim_mode_name, sim_deploy_mode, mode_names)
#undef SIM_DEFINE_LOCAL_NAME_FN

int32_t sim_hardware_gpus_per_node(const sim_hardware_cfg *hw)
{
    return hw->gpus_per_node > 0 ? hw->gpus_per_node : SIM_DEFAULT_GPUS_PER_NODE;
}

double sim_network_nic_Bps(const sim_network_cfg *net, double gpu_nic_Bps)
{
    return net->nic_gbps > 0 ? net->nic_gbps * 1e9 / 8 : gpu_nic_Bps;
}

const char *sim_scenario_gpu_label(const sim_scenario *sc, char *buf, size_t len)
{
    const char *first = NULL, *hw = sc->hardware.gpu;
    int mixed = 0;
    for (int32_t i = 0; i < sc->deployment.n_pools && i < SIM_MAX_POOLS; i++) {
        const char *g = sc->deployment.pools[i].gpu[0] ? sc->deployment.pools[i].gpu : hw;
        if (!first) first = g;
        else if (strcmp(first, g) != 0) mixed = 1;
    }
    if (!mixed) {
        for (int32_t i = 0; i < sc->deployment.n_pools && i < SIM_MAX_POOLS; i++)
            if (sc->deployment.pools[i].gpu[0]) return sc->deployment.pools[i].gpu;
        return hw;
    }
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < sc->deployment.n_pools && i < SIM_MAX_POOLS && n < len; i++) {
        const char *g = sc->deployment.pools[i].gpu[0] ? sc->deployment.pools[i].gpu : hw;
        int seen = 0;
        for (int32_t j = 0; j < i; j++)
            seen |= strcmp(sc->deployment.pools[j].gpu[0] ? sc->deployment.pools[j].gpu : hw, g) == 0;
        if (!seen) n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", g);
    }
    return buf;
}
