/* sim_cli_predict — see sim_cli_predict.h. */
#include "sim_cli_predict.h"

#include "calib_db.h"
#include "sim_json.h"
#include "sim_loader.h"
#include "sim_parse.h"
#include "model_catalog.h"
#include "model_cost.h"
#include "model_layout.h"
#include "sim_pool_layout.h"
#include "sim_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PRED_MAX_CHUNKS 256
#define PRED_MAX_OPS 256
#define PRED_MAX_SETS 64

static void pred_usage(FILE *o)
{
    fprintf(o,
            "usage: servesim predict --model M --gpu G [--tp N --pp N --ep N --moe-tp N --dp N --dcp N --sp N\n"
            "                        --sp-kind K --dtype D --kv-dtype D --micro-batches N --ep-mode M\n"
            "                        --moe-gemm G --expert-skew S --tp-sp --comm-fp8 --comm-overlap --gpus-per-node N\n"
            "                        --overhead-us U --overhead-per-seq-us U --eager-launch-us U --backend B]\n"
            "                        [--prefill TOKENS[@CACHED] ...] [--decode N --context C]\n"
            "                        [--perf-db FILE | --no-perf-db] [--json]\n"
            "       servesim predict SCENARIO.yaml [--set key=value ...] [batch flags] [--json]\n"
            "Prints the op-by-op cost of one iteration (op, count, FLOPs, bytes, time, bottleneck, source)\n"
            "with totals and the iteration's bottleneck. dtypes: auto (the checkpoint's, default)\n"
            "bf16 fp8 fp8_block mxfp8 nvfp4 mxfp4 int4; sp kinds:\n"
            "ulysses ring; ep modes: auto normal low_latency (DeepEP) alltoall allgather (NCCL); MoE GEMM:\n"
            "auto contiguous masked. --moe-tp is\n"
            "the expert TP degree (0 = tp*dp/ep; moe_tp*ep < tp*dp replicates the expert groups).\n"
            "Default batch: --decode 1 --context 1024. Calibrated latencies come from --perf-db FILE (a perf-db\n"
            "or .sql dump), else the scenario's hardware.perf_db, else the newest calib/data/<gpu>-*.sql;\n"
            "--no-perf-db (or hardware.perf_db: none) uses the analytic roofline alone. --backend trtllm|vllm|\n"
            "sglang|auto prices GEMMs, attention and NVLink collectives with the op model fitted to that\n"
            "engine's measured kernels (source op-model; a scenario's scheduler.preset does the same), and\n"
            "a perf-db holding that engine's ingested rows prices from them ahead of other engines'.\n");
}

static int parse_int(const char *flag, const char *v, int32_t *out)
{
    int64_t x;
    if (sim_parse_i64(v, &x) != SIM_PARSE_OK || x < 0 || x > 1 << 30) {
        fprintf(stderr, "servesim predict: %s expects a non-negative integer, got '%s'\n", flag, v);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

static int parse_num(const char *flag, const char *v, double *out)
{
    double x;
    if (sim_parse_double(v, &x) != SIM_PARSE_OK || !(x >= 0)) {
        fprintf(stderr, "servesim predict: %s expects a number >= 0, got '%s'\n", flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* An enum flag by the schema of its scenario key, so the flag and the
 * scenario accept the same names. */
static int parse_enum(const char *flag, const char *key, const char *v, int *out)
{
    const sim_schema_field *f = sim_schema_lookup(key);
    int x = f ? sim_schema_enum_value(f, v) : -1;
    if (x < 0) {
        char expect[256] = "a known name";
        if (f) sim_schema_expect(f, expect, sizeof expect);
        fprintf(stderr, "servesim predict: %s expects %s, got '%s'\n", flag, expect, v);
        return -1;
    }
    *out = x;
    return 0;
}

static const char *human(double v, char *buf, size_t n, const char *unit)
{
    const char *pre[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000 && i < 5) v /= 1000, i++;
    snprintf(buf, n, "%.3g%s%s", v, pre[i], unit);
    return buf;
}

static model_bound iter_bound(const model_op *ops, int32_t n)
{
    double t[5] = {0};
    for (int32_t i = 0; i < n; i++) t[ops[i].bound] += ops[i].time_s;
    int best = 0;
    for (int i = 1; i < 5; i++)
        if (t[i] > t[best]) best = i;
    return (model_bound)best;
}

/* The command line as parsed (pred_parse); -1 in a number = not given. */
typedef struct {
    const char *model, *gpu, *scenario, *sets[PRED_MAX_SETS];
    const char *dtype, *kv_dtype, *sp_kind, *ep_mode, *moe_gemm;
    const char *perf_db, *op_backend;
    int n_sets, json, no_db;
    model_chunk chunks[PRED_MAX_CHUNKS];
    int32_t n_chunks, n_decode, context;
    int32_t tp, pp, dp, ep, dcp, sp, mb, gpn, moe_tp;
    int tp_sp, comm_fp8, comm_overlap;
    double skew, ovh, ovh_seq, eager;
} pred_args;

static int pred_bad_usage(void)
{
    pred_usage(stderr);
    return 2;
}

/* Reads argv into *A; -1 to go on, else the exit code (0 after --help). */
static int pred_parse(int argc, char **argv, pred_args *A)
{
    memset(A, 0, sizeof *A);
    A->n_decode = -1;
    A->context = 1024;
    A->tp = A->pp = A->dp = A->ep = A->dcp = A->sp = A->mb = A->gpn = A->moe_tp = -1;
    A->skew = A->ovh = A->ovh_seq = A->eager = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int32_t *ip = NULL;
        double *dpp = NULL;
        const char **sp_ = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            pred_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) A->json = 1;
        else if (!strcmp(a, "--tp-sp")) A->tp_sp = 1;
        else if (!strcmp(a, "--comm-fp8")) A->comm_fp8 = 1;
        else if (!strcmp(a, "--comm-overlap")) A->comm_overlap = 1;
        else if (!strcmp(a, "--no-perf-db")) A->no_db = 1;
        else if (!strcmp(a, "--perf-db")) sp_ = &A->perf_db;
        else if (!strcmp(a, "--model")) sp_ = &A->model;
        else if (!strcmp(a, "--gpu")) sp_ = &A->gpu;
        else if (!strcmp(a, "--dtype")) sp_ = &A->dtype;
        else if (!strcmp(a, "--kv-dtype")) sp_ = &A->kv_dtype;
        else if (!strcmp(a, "--sp-kind")) sp_ = &A->sp_kind;
        else if (!strcmp(a, "--ep-mode")) sp_ = &A->ep_mode;
        else if (!strcmp(a, "--moe-gemm")) sp_ = &A->moe_gemm;
        else if (!strcmp(a, "--backend")) sp_ = &A->op_backend;
        else if (!strcmp(a, "--tp")) ip = &A->tp;
        else if (!strcmp(a, "--pp")) ip = &A->pp;
        else if (!strcmp(a, "--dp")) ip = &A->dp;
        else if (!strcmp(a, "--ep")) ip = &A->ep;
        else if (!strcmp(a, "--moe-tp")) ip = &A->moe_tp;
        else if (!strcmp(a, "--dcp")) ip = &A->dcp;
        else if (!strcmp(a, "--sp")) ip = &A->sp;
        else if (!strcmp(a, "--micro-batches")) ip = &A->mb;
        else if (!strcmp(a, "--gpus-per-node")) ip = &A->gpn;
        else if (!strcmp(a, "--decode")) ip = &A->n_decode;
        else if (!strcmp(a, "--context")) ip = &A->context;
        else if (!strcmp(a, "--expert-skew")) dpp = &A->skew;
        else if (!strcmp(a, "--overhead-us")) dpp = &A->ovh;
        else if (!strcmp(a, "--overhead-per-seq-us")) dpp = &A->ovh_seq;
        else if (!strcmp(a, "--eager-launch-us")) dpp = &A->eager;
        else if (!strcmp(a, "--set")) {
            if (!v || A->n_sets >= PRED_MAX_SETS) return pred_bad_usage();
            A->sets[A->n_sets++] = argv[++i];
            continue;
        } else if (!strcmp(a, "--prefill")) {
            if (!v || A->n_chunks >= PRED_MAX_CHUNKS) return pred_bad_usage();
            int32_t t = 0, cached = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            char *at = strchr(buf, '@');
            if (at) *at++ = 0;
            if (parse_int("--prefill", buf, &t) || (at && parse_int("--prefill @CACHED", at, &cached))) return 2;
            A->chunks[A->n_chunks++] = (model_chunk){t, cached};
            i++;
            continue;
        } else if (a[0] != '-' && !A->scenario) {
            A->scenario = a;
            continue;
        } else {
            fprintf(stderr, "servesim predict: unknown argument '%s'\n", a);
            return pred_bad_usage();
        }
        if (sp_ || ip || dpp) {
            if (!v) {
                fprintf(stderr, "servesim predict: %s needs a value\n", a);
                return pred_bad_usage();
            }
            if (sp_) *sp_ = v;
            if (ip && parse_int(a, v, ip)) return 2;
            if (dpp && parse_num(a, v, dpp)) return 2;
            i++;
        }
    }
    return -1;
}

/* The model, GPU and layout to price: a scenario's first pool (with its
 * --set overrides and perf_db, which fill *no_db and db_path) or --model and
 * --gpu with the defaults; -1 to go on, else the exit code. */
static int pred_load(const pred_args *A, model_spec *m, model_gpu *g, model_layout *l, int *no_db, char *db_path,
                     size_t db_len)
{
    const char *model = A->model, *gpu = A->gpu, *scenario = A->scenario, *perf_db = A->perf_db;
    sim_err e = {""};
    if (scenario) {
        sim_scenario *sc = malloc(sizeof *sc);
        if (!sc) return 2;
        int r = sim_loader_load_file(scenario, A->sets, A->n_sets, sc, &e);
        if (!r) r = sim_pool_layout(sc, &sc->deployment.pools[0], l, &e);
        if (!r && !perf_db && strcmp(sc->hardware.perf_db, "none") == 0) *no_db = 1;
        else if (!r && !perf_db && sc->hardware.perf_db[0]) snprintf(db_path, db_len, "%s", sc->hardware.perf_db);
        if (!r) r = model_catalog_model(model ? model : sc->model, m, &e);
        if (!r) {
            const char *gn = gpu ? gpu : sc->deployment.pools[0].gpu[0] ? sc->deployment.pools[0].gpu : sc->hardware.gpu;
            r = model_catalog_gpu(gn, g, &e);
        }
        free(sc);
        if (r) {
            fprintf(stderr, "servesim predict: %s\n", e.msg);
            return 2;
        }
    } else {
        if (!model || !gpu) {
            fprintf(stderr, "servesim predict: --model and --gpu are required (or give a scenario file)\n");
            return pred_bad_usage();
        }
        if (model_catalog_model(model, m, &e) || model_catalog_gpu(gpu, g, &e)) {
            fprintf(stderr, "servesim predict: %s\n", e.msg);
            return 2;
        }
        l->overhead_s = 1500e-6;
        l->dtype_checkpoint = 1;
    }
    return -1;
}

/* The layout and dtype flags over the loaded layout; -1 to go on, else 2. */
static int pred_apply_flags(const pred_args *A, model_layout *l)
{
    const int32_t tp = A->tp, pp = A->pp, dp = A->dp, ep = A->ep, moe_tp = A->moe_tp, dcp = A->dcp, sp = A->sp,
                  mb = A->mb, gpn = A->gpn;
    const double skew = A->skew, ovh = A->ovh, ovh_seq = A->ovh_seq, eager = A->eager;
    const char *dtype = A->dtype, *kv_dtype = A->kv_dtype, *op_backend = A->op_backend;
    const char *sp_kind = A->sp_kind, *ep_mode = A->ep_mode, *moe_gemm = A->moe_gemm;
    const int tp_sp = A->tp_sp, comm_fp8 = A->comm_fp8, comm_overlap = A->comm_overlap;
    sim_err e = {""};
    /* Flags override the scenario. */
    if (tp >= 0) l->tp = tp;
    if (pp >= 0) l->pp = pp;
    if (dp >= 0) l->dp = dp;
    if (ep >= 0) l->ep = ep;
    if (moe_tp >= 0) l->moe_tp = moe_tp;
    if (dcp >= 0) l->dcp = dcp;
    if (sp >= 0) l->sp = sp;
    if (mb >= 0) l->micro_batches = mb;
    if (gpn >= 0) l->gpus_per_node = gpn;
    if (skew >= 0) l->expert_skew = skew;
    if (ovh >= 0) l->overhead_s = ovh * 1e-6;
    if (ovh_seq >= 0) l->overhead_per_seq_s = ovh_seq * 1e-6;
    if (eager >= 0) l->eager_launch_s = eager * 1e-6;
    if (op_backend) {
        if (strcmp(op_backend, "trtllm") && strcmp(op_backend, "vllm") && strcmp(op_backend, "sglang") &&
            strcmp(op_backend, "auto")) {
            fprintf(stderr, "servesim predict: --backend must be trtllm, vllm, sglang or auto (got '%s')\n",
                    op_backend);
            return 2;
        }
        snprintf(l->op_backend, sizeof l->op_backend, "%s", op_backend);
    }
    l->tp_sp |= tp_sp;
    l->comm_fp8 |= comm_fp8;
    l->comm_overlap |= comm_overlap;
    if (dtype && !strcasecmp(dtype, "auto")) {
        l->dtype_checkpoint = 1;
        dtype = NULL;
    }
    if (dtype) l->dtype_checkpoint = 0;
    if ((dtype && model_dtype_from_name(dtype, &l->dtype, &e)) ||
        (kv_dtype && model_dtype_from_name(kv_dtype, &l->kv_dtype, &e))) {
        fprintf(stderr, "servesim predict: %s\n", e.msg);
        return 2;
    }
    if (sp_kind || ep_mode || moe_gemm) {
        /* The enum flags through the scenario's schema and pool layout, so
         * a flag and a scenario key mean the same. */
        sim_scenario tmp;
        sim_scenario_defaults(&tmp);
        sim_pool_cfg pc = tmp.deployment.pools[0];
        int v;
        if (sp_kind) {
            if (parse_enum("--sp-kind", "deployment.pools.*.parallel.sp_kind", sp_kind, &v)) return 2;
            pc.parallel.sp_kind = (sim_sp_kind)v;
        }
        if (ep_mode) {
            if (parse_enum("--ep-mode", "deployment.pools.*.parallel.ep_mode", ep_mode, &v)) return 2;
            pc.parallel.ep_mode = (sim_ep_mode)v;
        }
        if (moe_gemm) {
            if (parse_enum("--moe-gemm", "deployment.pools.*.parallel.moe_gemm", moe_gemm, &v)) return 2;
            pc.parallel.moe_gemm = (sim_moe_gemm)v;
        }
        model_layout t;
        if (sim_pool_layout(&tmp, &pc, &t, &e)) {
            fprintf(stderr, "servesim predict: %s\n", e.msg);
            return 2;
        }
        if (sp_kind) l->sp_kind = t.sp_kind;
        if (ep_mode) l->ep_mode = t.ep_mode;
        if (moe_gemm) l->moe_gemm = t.moe_gemm;
    }
    return -1;
}

/* What one evaluation prints from. */
typedef struct {
    const model_spec *m;
    const model_gpu *g;
    const model_layout *l;     /* as asked for (its op_backend) */
    const model_layout *rl;    /* as the cost model resolved it */
    model_cost *c;
    const model_chunk *chunks;
    int32_t n_chunks, n_decode, context;
    const model_op *ops;
    int32_t n_ops;
    model_iter_cost r;
    double total;
    model_bound ib;
    const char *db_path, *prices;
    int has_db;
    int32_t db_ops;
    double db_s, op_s;         /* op time priced by the perf-db, all op time */
    const double *pipe;        /* pp > 1: stage and hop times; NULL otherwise */
    double pipe_host, pipe_iv;
    int64_t kv_tok;
    int kv_ok;
} pred_report;


/* Significant digits of predict's reals (sim_json: null when not finite). */
#define PRED_DIGITS 6

static void pred_real(const char *lead, double v) { sim_json_real(stdout, lead, v, PRED_DIGITS); }

static void pred_print_json(const pred_report *p)
{
    printf("{\n  \"model\": ");
    sim_json_string(stdout, p->m->name);
    printf(", \"gpu\": ");
    sim_json_string(stdout, p->g->name);
    printf(",\n  \"layout\": {\"tp\": %d, \"pp\": %d, \"dp\": %d, \"ep\": %d, \"dcp\": %d, \"sp\": %d, \"sp_kind\": \"%s\", "
           "\"tp_sp\": %d, \"comm_fp8\": %d, \"comm_overlap\": %d, \"micro_batches\": %d, \"ep_mode\": \"%s\", "
           "\"moe_gemm\": \"%s\"",
           p->rl->tp, p->rl->pp, p->rl->dp, p->rl->ep, p->rl->dcp, p->rl->sp, model_sp_kind_name(p->rl->sp_kind), p->rl->tp_sp,
           p->rl->comm_fp8, p->rl->comm_overlap, p->rl->micro_batches, model_ep_mode_name(p->rl->ep_mode),
           model_moe_gemm_name(p->rl->moe_gemm));
    pred_real(", \"expert_skew\": ", p->rl->expert_skew);
    printf(", \"dtype\": \"%s\", \"kv_dtype\": \"%s\", \"gpus\": %d},\n", model_dtype_name(p->rl->dtype),
           model_dtype_name(p->rl->kv_dtype), model_cost_gpus(p->c));
    int epd = model_cost_ep_mode(p->c, 0), epp = model_cost_ep_mode(p->c, 1);
    printf("  \"ep_mode_decode\": \"%s\", \"ep_mode_prefill\": \"%s\",\n",
           epd < 0 ? "none" : model_ep_mode_name((model_ep_mode)epd),
           epp < 0 ? "none" : model_ep_mode_name((model_ep_mode)epp));
    printf("  \"batch\": {\"prefill\": [");
    for (int32_t i = 0; i < p->n_chunks; i++)
        printf("%s{\"tokens\": %d, \"cached\": %d}", i ? ", " : "", p->chunks[i].tokens, p->chunks[i].cached);
    printf("], \"decode\": %d, \"context\": %d},\n  \"ops\": [\n", p->n_decode, p->context);
    for (int32_t i = 0; i < p->n_ops; i++) {
        const model_op *o = &p->ops[i];
        printf("    {\"op\": ");
        sim_json_string(stdout, o->name);
        printf(", \"class\": \"%s\", \"count\": %d", model_op_class_name(o->cls), o->count);
        pred_real(", \"flops\": ", o->flops);
        pred_real(", \"bytes\": ", o->bytes);
        pred_real(", \"time_s\": ", o->time_s);
        pred_real(", \"hidden_s\": ", o->hidden_s);
        printf(", \"bound\": \"%s\", \"source\": \"%s\", \"detail\": ", model_bound_name(o->bound),
               model_source_name(o->source));
        sim_json_string(stdout, o->detail);
        printf("}%s\n", i + 1 < p->n_ops ? "," : "");
    }
    pred_real("  ],\n  \"total_s\": ", p->total);
    pred_real(", \"gemm_s\": ", p->r.gemm_s);
    pred_real(", \"attn_s\": ", p->r.attn_s);
    pred_real(", \"comm_s\": ", p->r.comm_s);
    pred_real(", \"other_s\": ", p->r.other_s);
    pred_real(", \"overhead_s\": ", p->r.overhead_s);
    printf(", \"bound\": \"%s\", \"source\": \"%s\",\n", model_bound_name(p->ib), p->r.source);
    printf("  \"perf_db\": ");
    sim_json_string(stdout, p->db_path);
    printf(", \"prices\": \"%s\", \"perf_db_ops\": %d", p->prices, p->db_ops);
    pred_real(", \"perf_db_time_fraction\": ", p->op_s > 0 ? p->db_s / p->op_s : 0);
    printf(",\n");
    if (p->pipe) {
        printf("  \"pipeline\": {\"in_flight\": %d", p->rl->micro_batches);
        pred_real(", \"host_s\": ", p->pipe_host);
        printf(", \"stage_s\": [");
        for (int32_t s = 0; s < p->rl->pp; s++) pred_real(s ? ", " : NULL, p->pipe[s]);
        printf("], \"hop_s\": [");
        for (int32_t s = 0; s + 1 < p->rl->pp; s++) pred_real(s ? ", " : NULL, p->pipe[p->rl->pp + s]);
        pred_real("], \"interval_s\": ", p->pipe_iv);
        printf("},\n");
    }
    pred_real("  \"memory\": {\"weights_per_gpu_bytes\": ", model_cost_weight_bytes_per_gpu(p->c));
    pred_real(", \"kv_bytes_per_token\": ", model_cost_kv_bytes_per_token(p->c));
    printf(", \"kv_capacity_tokens\": %lld}\n}\n", p->kv_ok ? (long long)p->kv_tok : -1LL);
}

static void pred_print_table(const pred_report *p)
{
    printf("%s on %s: tp=%d pp=%d dp=%d ep=%d moe_tp=%d dcp=%d sp=%d (%d GPUs), %s weights, %s KV\n", p->m->name,
           p->g->name, p->rl->tp, p->rl->pp, p->rl->dp, p->rl->ep, p->rl->moe_tp, p->rl->dcp, p->rl->sp, model_cost_gpus(p->c),
           model_dtype_name(p->rl->dtype), model_dtype_name(p->rl->kv_dtype));
    int epd = model_cost_ep_mode(p->c, 0), epp = model_cost_ep_mode(p->c, 1);
    if (epd >= 0)
        printf("ep_mode %s: decode %s, prefill %s\n", model_ep_mode_name(p->rl->ep_mode),
               model_ep_mode_name((model_ep_mode)epd), model_ep_mode_name((model_ep_mode)epp));
    printf("batch: %d prefill chunk(s)", p->n_chunks);
    for (int32_t i = 0; i < p->n_chunks; i++) printf(" %d@%d", p->chunks[i].tokens, p->chunks[i].cached);
    printf(", %d decode at context %d\n\n", p->n_decode, p->context);
    printf("%-20s %5s %9s %9s %10s %6s %-13s %-9s %s\n", "op", "count", "FLOPs", "bytes", "time", "%", "bound",
           "source", "detail");
    char f1[32], f2[32];
    for (int32_t i = 0; i < p->n_ops; i++) {
        const model_op *o = &p->ops[i];
        printf("%-20s %5d %9s %9s %8.1fus %5.1f%% %-13s %-9s %s%s\n", o->name, o->count,
               human(o->flops, f1, sizeof f1, ""), human(o->bytes, f2, sizeof f2, "B"), o->time_s * 1e6,
               p->total > 0 ? 100 * o->time_s / p->total : 0, model_bound_name(o->bound), model_source_name(o->source),
               o->detail, o->hidden_s > 0 ? " (part hidden)" : "");
    }
    printf("\ntotal %.3f ms: gemm %.3f, attention %.3f, communication %.3f, other %.3f, overhead %.3f ms\n",
           p->total * 1e3, p->r.gemm_s * 1e3, p->r.attn_s * 1e3, p->r.comm_s * 1e3, p->r.other_s * 1e3, p->r.overhead_s * 1e3);
    printf("iteration bound: %s; source: %s\n", model_bound_name(p->ib), p->r.source);
    if (p->pipe) {
        double busiest = p->pipe_host, hops = 0;
        printf("pipeline: host %.3f ms, stages", p->pipe_host * 1e3);
        for (int32_t s = 0; s < p->rl->pp; s++) {
            printf("%s %.3f", s ? " /" : "", p->pipe[s] * 1e3);
            if (p->pipe[s] > busiest) busiest = p->pipe[s];
        }
        for (int32_t s = 0; s + 1 < p->rl->pp; s++) hops += p->pipe[p->rl->pp + s];
        printf(" ms, hops %.3f ms in all: the batch alone takes %.3f ms\n", hops * 1e3, p->total * 1e3);
        printf("          with %d batches like it in flight one leaves every %.3f ms (%s), each request "
               "gets a token every %.3f ms\n",
               p->rl->micro_batches, p->pipe_iv * 1e3, p->pipe_iv > busiest * (1 + 1e-9) ? "too few batches: bubble"
                                                                               : "busiest stage",
               p->pipe_iv * p->rl->micro_batches * 1e3);
    }
    if (p->has_db)
        printf("perf-db: %s; prices: %s (%d of %d ops, %.0f%% of op time, from measurements; the rest analytic)\n",
               p->db_path, p->prices, p->db_ops, p->n_ops, p->op_s > 0 ? 100 * p->db_s / p->op_s : 0);
    else
        printf("perf-db: none; prices: analytic (%s)\n",
               p->l->op_backend[0] ? "op model fitted to the engine's kernels where it covers an op, else roofline"
                               : "roofline for every op");
    printf("memory: %.2f GB weights per GPU, %.0f KV bytes per token, ", model_cost_weight_bytes_per_gpu(p->c) / 1e9,
           model_cost_kv_bytes_per_token(p->c));
    if (p->kv_ok) printf("KV capacity %lld tokens (90%% HBM, 2 GB reserve)\n", (long long)p->kv_tok);
    else printf("weights do not fit at 90%% HBM\n");
    if (model_cost_state_bytes_per_seq(p->c) > 0)
        printf("        %.2f MB of per-sequence state (linear attention, Mamba-2, sliding windows of compressed attention) per running sequence per GPU (beside the KV)\n",
               model_cost_state_bytes_per_seq(p->c) / 1e6);
}

int sim_cli_predict(int argc, char **argv)
{
    pred_args A;
    int rc = pred_parse(argc, argv, &A);
    if (rc >= 0) return rc;
    char db_path[1024] = "";
    calib_db *db = NULL;
    int no_db = A.no_db;
    model_layout l;
    memset(&l, 0, sizeof l);
    l.tp = l.pp = 1;
    model_spec m;
    model_gpu g;
    if ((rc = pred_load(&A, &m, &g, &l, &no_db, db_path, sizeof db_path)) >= 0) return rc;
    if ((rc = pred_apply_flags(&A, &l)) >= 0) return rc;
    rc = 2;
    const char *perf_db = A.perf_db;
    const model_chunk *chunks = A.chunks;
    int32_t n_chunks = A.n_chunks, n_decode = A.n_decode, context = A.context;
    model_cost *c = NULL;
    model_op *ops = NULL;
    double *pipe = NULL; /* pp > 1: stage and hop times of the batch */
    sim_err e = {""};
    if (model_cost_create(&m, &g, &l, &c, &e)) {
        fprintf(stderr, "servesim predict: %s\n", e.msg);
        return 2;
    }
    if (perf_db && strcmp(perf_db, "none") == 0) no_db = 1;
    else if (perf_db) snprintf(db_path, sizeof db_path, "%s", perf_db);
    else if (!db_path[0]) calib_db_default_path(g.name, db_path, sizeof db_path);
    if (no_db) db_path[0] = 0;
    int orc = 0;
    if (db_path[0] && ((orc = calib_db_open_any(db_path, &db, &e)) != 0 || (orc = model_cost_set_db(c, db, NULL, &e)) < 0)) {
        if (strstr(e.msg, db_path)) fprintf(stderr, "servesim predict: %s\n", e.msg);
        else fprintf(stderr, "servesim predict: perf-db %s: %s\n", db_path, e.msg);
        rc = orc == SIM_ENOMEM ? 1 : 2; /* a missing, foreign or invalid perf-db is bad input */
        goto done;
    }
    if (n_decode < 0) n_decode = n_chunks ? 0 : 1;
    model_batch b = {n_chunks, chunks, n_decode, (int64_t)n_decode * context, 0};
    ops = calloc(PRED_MAX_OPS, sizeof *ops);
    if (!ops) goto done;
    int32_t n_ops = 0;
    model_iter_cost r;
    double total = model_cost_breakdown(c, &b, ops, PRED_MAX_OPS, &n_ops, &r);
    if (n_ops > PRED_MAX_OPS) n_ops = PRED_MAX_OPS;
    const model_layout *rl = model_cost_layout(c);
    int64_t kv_tok = 0;
    int kv_ok = model_cost_kv_capacity_tokens(c, 0.9, 2e9, &kv_tok, NULL) == 0;
    model_bound ib = iter_bound(ops, n_ops);
    /* How much of the iteration the perf-db priced, so a comparison across
     * GPUs can see when measured and analytic numbers meet. */
    double db_s = 0, op_s = 0;
    int32_t db_ops = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        op_s += ops[i].time_s;
        if (ops[i].source != MODEL_SRC_ROOFLINE) db_s += ops[i].time_s, db_ops++;
    }
    const char *prices = !db ? "analytic" : db_ops == n_ops ? "perf-db" : db_ops ? "mixed" : "analytic";
    /* Pipeline parallelism: this batch stage by stage, and the steady state
     * with micro_batches batches like it in flight. */
    double pipe_host = 0, pipe_iv = 0;
    if (rl->pp > 1) {
        pipe = calloc((size_t)(2 * rl->pp), sizeof *pipe);
        if (!pipe) goto done;
        model_cost_pipeline(c, &b, pipe, pipe + rl->pp, &pipe_host);
        pipe_iv = model_cost_pipeline_interval(c, &b, rl->micro_batches, NULL);
    }
    pred_report rep = {&m, &g, &l, rl, c, chunks, n_chunks, n_decode, context, ops, n_ops, r, total, ib,
                       db_path, prices, db != NULL, db_ops, db_s, op_s, pipe, pipe_host, pipe_iv, kv_tok, kv_ok};
    if (A.json) pred_print_json(&rep);
    else pred_print_table(&rep);
    rc = 0;
done:
    free(ops);
    free(pipe);
    model_cost_destroy(c);
    calib_db_close(db);
    return rc;
}
