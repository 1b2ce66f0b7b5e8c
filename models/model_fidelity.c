/* model_fidelity — see model_fidelity.h.
 *
 * Each row's engine is the scheduler preset of its backend
 * (sim_sched_preset.h: budgets, chunking, policy, per-iteration and
 * per-request costs, vLLM's frontend, TensorRT-LLM's eager prefill
 * iterations). What stays here is how the benchmark clients drift apart:
 * vLLM's output lengths spread ±12.5 %, TensorRT-LLM's ±2 % (enough to
 * break exact lock-step; its 1k-prompt rows showed partial
 * desynchronisation), SGLang's none (its prefill-first scheduler re-forms
 * the waves: the measured TTFT ≈ concurrency × one prefill). The spreads
 * and the presets' fitted values are documented in docs/cost-model.md.
 * max_seqs is the row's batch size (= concurrency), so every client is
 * admitted as in the measured runs. */
#include "model_fidelity.h"

#include "../sim/sim_clock.h"
#include "../sim/sim_cluster.h"
#include "../sim/sim_loader.h"
#include "../sim/sim_metrics.h"
#include "../sim/sim_scenario.h"
#include "../sim/sim_sched_preset.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct {
    const char *backend; /* also the scheduler preset's name */
    double jitter;       /* output-length spread, fraction of osl (see fid_simulate) */
} backend_profile;

static const backend_profile profiles[] = {{"vllm", 0.125}, {"sglang", 0}, {"trtllm", 0.02}};
#define N_PROFILES ((int)(sizeof profiles / sizeof profiles[0]))

/* Requests per client, as in the common `--num-prompts 10×concurrency`
 * benchmark runs; capped for speed. */
#define FID_WAVES 10
#define FID_MAX_REQUESTS 1536

/* Hugging Face id → catalogue name and weight dtype. */
static int map_model(const char *path, const char *precision, char *name, size_t nlen, char *dtype, size_t dlen)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char low[128];
    size_t i;
    for (i = 0; base[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)base[i]);
    low[i] = 0;
    const char *dt = precision && *precision ? precision : "bf16";
    size_t L = strlen(low);
    /* Qwen's -FP8 checkpoints are fine-grained fp8 (128-value blocks);
     * run as fp8, whose scales cost 3% less memory traffic. */
    if (L > 4 && !strcmp(low + L - 4, "-fp8")) {
        low[L - 4] = 0;
        dt = "fp8";
    }
    snprintf(name, nlen, "%s", low);
    snprintf(dtype, dlen, "%s", dt);
    return 0;
}

static int map_gpu(const char *system, char *out, size_t len)
{
    size_t i;
    for (i = 0; system[i] && i + 1 < len; i++) out[i] = system[i] == '_' ? '-' : (char)tolower((unsigned char)system[i]);
    out[i] = 0;
    return 0;
}

static const backend_profile *profile_for(const char *backend)
{
    for (int i = 0; i < N_PROFILES; i++)
        if (!strcasecmp(profiles[i].backend, backend)) return &profiles[i];
    return NULL;
}

/* Splits a CSV line in place (no quoted fields in these files). */
static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *nl = strpbrk(line, "\r\n");
    if (nl) *nl = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = 0;
        p = comma + 1;
    }
    return n;
}

static int col_index(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

#define FID_MAX_SETS 64

/* The overrides that apply to a backend's rows, prefixes stripped. */
static int fid_sets_for(const model_fidelity_opts *o, const char *backend, const char **out)
{
    int n = 0;
    for (int i = 0; o && i < o->n_sets && n < FID_MAX_SETS; i++) {
        const char *s = o->sets[i], *colon = strchr(s, ':'), *eq = strchr(s, '=');
        if (colon && (!eq || colon < eq)) {
            size_t bl = (size_t)(colon - s);
            if (strlen(backend) == bl && !strncasecmp(s, backend, bl)) out[n++] = colon + 1;
        } else {
            out[n++] = s;
        }
    }
    return n;
}

static int fid_simulate(model_fidelity_row *r, const char *gpu, const model_fidelity_opts *o, sim_err *err)
{
    const backend_profile *bp = profile_for(r->backend);
    if (!bp) return sim_err_set(err, SIM_ENOTSUP, "no scheduler profile for backend '%s'", r->backend);
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.name, sizeof sc.name, "fidelity");
    snprintf(sc.model, sizeof sc.model, "%s", r->model);
    snprintf(sc.dtype, sizeof sc.dtype, "%s", r->dtype);
    /* TensorRT-LLM's fp8 recipes quantise the KV cache too; vLLM and
     * SGLang keep it in the model dtype unless asked ("auto"). */
    snprintf(sc.kv_dtype, sizeof sc.kv_dtype, "%s",
             !strcasecmp(r->backend, "trtllm") && strcmp(r->dtype, "bf16") ? "fp8" : "bf16");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "%s", gpu);
    sc.hardware.gpus_per_node = 8;
    sim_workload_cfg *w = &sc.workload;
    int64_t reqs = (int64_t)FID_WAVES * r->concurrency;
    w->requests = reqs < FID_MAX_REQUESTS ? reqs : (r->concurrency > FID_MAX_REQUESTS ? r->concurrency : FID_MAX_REQUESTS);
    w->arrival.process = SIM_ARRIVAL_CLOSED;
    w->arrival.concurrency = r->concurrency;
    w->arrival.think_time_s = 0;
    w->input_tokens.dist = SIM_DIST_FIXED;
    w->input_tokens.value = r->isl;
    if (w->input_tokens.max < r->isl) w->input_tokens.max = r->isl;
    /* Output lengths jitter ±jitter·osl around osl (same mean): with exactly
     * equal lengths the simulated clients would stay in lock-step forever,
     * every wave arriving at once, while real clients drift apart within a
     * few requests (network, tokenisation and scheduling noise). */
    int32_t j = (int32_t)(r->osl * bp->jitter);
    w->output_tokens.dist = j > 0 ? SIM_DIST_UNIFORM : SIM_DIST_FIXED;
    w->output_tokens.value = r->osl;
    w->output_tokens.min = r->osl - j;
    w->output_tokens.max = r->osl + j;
    sim_pool_cfg *p = &sc.deployment.pools[0];
    p->parallel.tp = r->tp;
    p->parallel.pp = r->pp;
    p->parallel.dp = r->dp;
    p->parallel.ep = r->ep;
    if (sim_sched_preset_apply(bp->backend, &p->scheduler))
        return sim_err_set(err, SIM_ENOTSUP, "no scheduler preset for backend '%s'", bp->backend);
    p->scheduler.max_seqs = r->concurrency;
    if (p->scheduler.max_batched_tokens < r->concurrency) p->scheduler.max_batched_tokens = r->concurrency;
    sc.output.db[0] = 0;
    sc.overload.enabled = 0;
    const char *sets[FID_MAX_SETS];
    int n_sets = fid_sets_for(o, bp->backend, sets);
    if (n_sets > 0) {
        int orc = sim_loader_overlay(&sc, sets, n_sets, &sc, err);
        if (orc) return orc;
    }
    int steady = o && o->steady;

    sim_cluster *cl = NULL;
    sim_summary sum;
    int rc = sim_cluster_create(&sc, &cl, err);
    if (rc == 0) rc = sim_cluster_run(cl, &sum, err);
    if (rc == 0) {
        /* Like the benchmark clients (vLLM's benchmark_serving, SGLang's
         * bench_serving, genai-perf), the mean is over every request,
         * the first wave (all clients sending at t = 0 into an empty engine)
         * included; `steady` leaves that wave out. */
        int64_t n = 0;
        const sim_req_record *rec = sim_metrics_requests(sim_cluster_metrics(cl), &n);
        double ttft = 0, tpot = 0;
        int64_t nt = 0, np = 0;
        for (int64_t i = 0; i < n; i++) {
            if (steady && rec[i].id < (uint64_t)r->concurrency && n > r->concurrency) continue;
            double v;
            if (rec[i].first_token >= 0) {
                ttft += (double)(rec[i].first_token - rec[i].arrival) * 1e-6;
                nt++;
            }
            if (sim_metrics_request_tpot_ms(&rec[i], &v)) {
                tpot += v;
                np++;
            }
        }
        r->pred_ttft_ms = nt ? ttft / nt : sum.ttft_ms.mean;
        r->pred_tpot_ms = np ? tpot / np : sum.tpot_ms.mean;
    }
    sim_cluster_destroy(cl);
    return rc;
}

static void group_add(model_fidelity_group *g, const model_fidelity_row *r)
{
    g->ttft_mape += fabs(r->pred_ttft_ms / r->meas_ttft_ms - 1.0);
    g->tpot_mape += fabs(r->pred_tpot_ms / r->meas_tpot_ms - 1.0);
    g->n++;
}

int model_fidelity_run(const char *csv_path, const model_fidelity_opts *opts, model_fidelity_result *out,
                       sim_err *err)
{
    /* Bad overrides fail once, up front, not once per row. */
    for (int b = 0; opts && opts->n_sets > 0 && b < N_PROFILES; b++) {
        const char *sets[FID_MAX_SETS];
        int n = fid_sets_for(opts, profiles[b].backend, sets);
        if (n == 0) continue;
        sim_scenario *a = malloc(sizeof *a);
        if (!a) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        sim_scenario_defaults(a);
        int rc = sim_loader_overlay(a, sets, n, a, err);
        free(a);
        if (rc) return rc;
    }
    FILE *f = NULL;
    char line[4096], hdr_line[4096];
    char *hdr[64], *fld[64];
    int rc = 0, cap = 0;
    memset(out, 0, sizeof *out);
    double t0 = sim_wall_s();
    f = fopen(csv_path, "r");
    if (!f) return sim_err_set(err, SIM_EIO, "%s: cannot open", csv_path);
    if (!fgets(hdr_line, sizeof hdr_line, f)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: empty file", csv_path);
        goto fail;
    }
    int nh = csv_split(hdr_line, hdr, 64);
    static const char *need[] = {"concurrency", "backend", "model_path", "system", "precision", "isl", "osl",
                                 "tp_size", "pp_size", "attention_dp_size", "moe_ep_size", "silicon_ttft_ms",
                                 "silicon_tpot_ms"};
    int col[13];
    for (int i = 0; i < 13; i++)
        if ((col[i] = col_index(hdr, nh, need[i])) < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "%s: missing column '%s'", csv_path, need[i]);
            goto fail;
        }
    int lineno = 1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\r' || !line[0]) continue;
        int n = csv_split(line, fld, 64);
        if (n < nh) {
            rc = sim_err_set(err, SIM_EINVAL, "%s:%d: %d fields, header has %d", csv_path, lineno, n, nh);
            goto fail;
        }
        if (out->n_rows == cap) {
            int nc = cap ? cap * 2 : 256;
            model_fidelity_row *nr = realloc(out->rows, (size_t)nc * sizeof *nr);
            if (!nr) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                goto fail;
            }
            out->rows = nr;
            cap = nc;
        }
        model_fidelity_row *r = &out->rows[out->n_rows++];
        memset(r, 0, sizeof *r);
        snprintf(r->backend, sizeof r->backend, "%s", fld[col[1]]);
        map_model(fld[col[2]], fld[col[4]], r->model, sizeof r->model, r->dtype, sizeof r->dtype);
        char gpu[64];
        map_gpu(fld[col[3]], gpu, sizeof gpu);
        r->concurrency = atoi(fld[col[0]]);
        r->isl = atoi(fld[col[5]]);
        r->osl = atoi(fld[col[6]]);
        r->tp = atoi(fld[col[7]]);
        r->pp = atoi(fld[col[8]]);
        r->dp = atoi(fld[col[9]]);
        r->ep = atoi(fld[col[10]]);
        if (r->pp < 1) r->pp = 1;
        if (r->dp < 1) r->dp = 1;
        if (r->ep < 1) r->ep = 1;
        r->meas_ttft_ms = atof(fld[col[11]]);
        r->meas_tpot_ms = atof(fld[col[12]]);
        if (r->concurrency < 1 || r->isl < 1 || r->osl < 2 || r->tp < 1 || !(r->meas_ttft_ms > 0) ||
            !(r->meas_tpot_ms > 0)) {
            snprintf(r->note, sizeof r->note, "line %d: incomplete row", lineno);
            continue;
        }
        sim_err e = {""};
        if (fid_simulate(r, gpu, opts, &e)) {
            snprintf(r->note, sizeof r->note, "%.150s", e.msg);
            continue;
        }
        r->ok = 1;
        out->n_ok++;
        group_add(&out->all, r);
        int b = 0;
        while (b < out->n_backends && strcmp(out->backends[b].backend, r->backend)) b++;
        if (b == out->n_backends && b < 8) {
            snprintf(out->backends[b].backend, sizeof out->backends[b].backend, "%s", r->backend);
            out->n_backends++;
        }
        if (b < 8) group_add(&out->backends[b], r);
    }
    fclose(f);
    f = NULL;
    model_fidelity_group *gs[9] = {&out->all};
    for (int i = 0; i < out->n_backends; i++) gs[i + 1] = &out->backends[i];
    snprintf(out->all.backend, sizeof out->all.backend, "all");
    for (int i = 0; i <= out->n_backends; i++)
        if (gs[i]->n) {
            gs[i]->ttft_mape *= 100.0 / gs[i]->n;
            gs[i]->tpot_mape *= 100.0 / gs[i]->n;
        }
    out->wall_s = sim_wall_s() - t0;
    return 0;
fail:
    if (f) fclose(f);
    model_fidelity_free(out);
    return rc;
}

void model_fidelity_free(model_fidelity_result *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n_rows = r->n_ok = 0;
}

/* ---- command ------------------------------------------------------------ */

static double rel_err(double pred, double meas)
{
    return (pred / meas - 1.0) * 100.0;
}

/* Indices of the k rows with the largest |error| of TTFT (which 0) or TPOT (1). */
static int worst_rows(const model_fidelity_result *r, int which, int *idx, int k)
{
    int n = 0;
    for (int i = 0; i < r->n_rows; i++) {
        const model_fidelity_row *x = &r->rows[i];
        if (!x->ok) continue;
        double e = fabs(which ? rel_err(x->pred_tpot_ms, x->meas_tpot_ms) : rel_err(x->pred_ttft_ms, x->meas_ttft_ms));
        int pos = n < k ? n++ : k;
        while (pos > 0) {
            const model_fidelity_row *y = &r->rows[idx[pos - 1]];
            double ey = fabs(which ? rel_err(y->pred_tpot_ms, y->meas_tpot_ms)
                                   : rel_err(y->pred_ttft_ms, y->meas_ttft_ms));
            if (ey >= e) break;
            if (pos < k) idx[pos] = idx[pos - 1];
            pos--;
        }
        if (pos < k) idx[pos] = i;
    }
    return n;
}

static void row_label(const model_fidelity_row *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s %s tp%d pp%d dp%d ep%d c=%d isl=%d osl=%d", x->backend, x->model, x->dtype, x->tp, x->pp,
             x->dp, x->ep, x->concurrency, x->isl, x->osl);
}

static void fid_print_table(const model_fidelity_result *r)
{
    printf("%-7s %-16s %-9s %3s %3s %3s %4s %5s %5s | %9s %9s %7s | %7s %7s %7s\n", "backend", "model", "dtype", "tp",
           "dp", "ep", "conc", "isl", "osl", "TTFT meas", "pred", "err%", "TPOT ms", "pred", "err%");
    for (int i = 0; i < r->n_rows; i++) {
        const model_fidelity_row *x = &r->rows[i];
        if (!x->ok) {
            printf("%-7s %-16s %-9s %3d %3d %3d %4d %5d %5d | skipped: %s\n", x->backend, x->model, x->dtype, x->tp,
                   x->dp, x->ep, x->concurrency, x->isl, x->osl, x->note);
            continue;
        }
        printf("%-7s %-16s %-9s %3d %3d %3d %4d %5d %5d | %9.1f %9.1f %+6.1f%% | %7.2f %7.2f %+6.1f%%\n", x->backend,
               x->model, x->dtype, x->tp, x->dp, x->ep, x->concurrency, x->isl, x->osl, x->meas_ttft_ms,
               x->pred_ttft_ms, rel_err(x->pred_ttft_ms, x->meas_ttft_ms), x->meas_tpot_ms, x->pred_tpot_ms,
               rel_err(x->pred_tpot_ms, x->meas_tpot_ms));
    }
    printf("\n%-8s %5s %10s %10s\n", "group", "rows", "TTFT MAPE", "TPOT MAPE");
    printf("%-8s %5d %9.1f%% %9.1f%%\n", "all", r->all.n, r->all.ttft_mape, r->all.tpot_mape);
    for (int b = 0; b < r->n_backends; b++)
        printf("%-8s %5d %9.1f%% %9.1f%%\n", r->backends[b].backend, r->backends[b].n, r->backends[b].ttft_mape,
               r->backends[b].tpot_mape);
    for (int which = 0; which < 2; which++) {
        int idx[5];
        int n = worst_rows(r, which, idx, 5);
        printf("\nlargest %s misses:\n", which ? "TPOT" : "TTFT");
        for (int i = 0; i < n; i++) {
            const model_fidelity_row *x = &r->rows[idx[i]];
            char lab[160];
            row_label(x, lab, sizeof lab);
            double meas = which ? x->meas_tpot_ms : x->meas_ttft_ms, pred = which ? x->pred_tpot_ms : x->pred_ttft_ms;
            printf("  %-64s measured %8.2f ms, predicted %8.2f ms (%+.1f%%)\n", lab, meas, pred, rel_err(pred, meas));
        }
    }
    printf("\n%d of %d rows simulated in %.1f s\n", r->n_ok, r->n_rows, r->wall_s);
}

static void fid_print_json(const model_fidelity_result *r)
{
    printf("{\n  \"rows\": [\n");
    int first = 1;
    for (int i = 0; i < r->n_rows; i++) {
        const model_fidelity_row *x = &r->rows[i];
        printf("%s    {\"backend\": \"%s\", \"model\": \"%s\", \"dtype\": \"%s\", \"tp\": %d, \"pp\": %d, \"dp\": %d, "
               "\"ep\": %d, \"concurrency\": %d, \"isl\": %d, \"osl\": %d, \"measured_ttft_ms\": %.6g, "
               "\"measured_tpot_ms\": %.6g",
               first ? "" : ",\n", x->backend, x->model, x->dtype, x->tp, x->pp, x->dp, x->ep, x->concurrency, x->isl,
               x->osl, x->meas_ttft_ms, x->meas_tpot_ms);
        if (x->ok)
            printf(", \"predicted_ttft_ms\": %.6g, \"predicted_tpot_ms\": %.6g}", x->pred_ttft_ms, x->pred_tpot_ms);
        else {
            printf(", \"skipped\": \"");
            for (const char *p = x->note; *p; p++) {
                if (*p == '"' || *p == '\\') putchar('\\');
                if ((unsigned char)*p >= 0x20) putchar(*p);
            }
            printf("\"}");
        }
        first = 0;
    }
    printf("\n  ],\n  \"mape\": {\n    \"all\": {\"rows\": %d, \"ttft_pct\": %.4f, \"tpot_pct\": %.4f}", r->all.n,
           r->all.ttft_mape, r->all.tpot_mape);
    for (int b = 0; b < r->n_backends; b++)
        printf(",\n    \"%s\": {\"rows\": %d, \"ttft_pct\": %.4f, \"tpot_pct\": %.4f}", r->backends[b].backend,
               r->backends[b].n, r->backends[b].ttft_mape, r->backends[b].tpot_mape);
    printf("\n  },\n  \"rows_simulated\": %d,\n  \"wall_s\": %.3f\n}\n", r->n_ok, r->wall_s);
}

static void fid_usage(FILE *o)
{
    fprintf(o, "usage: servesim fidelity [--csv PATH] [--steady-state] [--set [BACKEND:]KEY=VALUE]... [--json]\n"
               "Replays every row of a measured-deployment CSV (aiconfigurator silicon samples) as a closed-loop\n"
               "scenario and compares mean TTFT/TPOT with the measurements; prints per-row results, MAPE overall\n"
               "and per backend, and the largest misses. Default CSV: ../shared/validation/e2e-dev.csv, else\n"
               "tests/data/models/e2e-dev.csv. Means are over every request (10 per client, the first wave\n"
               "included, as benchmark clients report them); --steady-state leaves the first wave out. Each row\n"
               "runs its backend's scheduler preset; --set overrides scenario keys for every row, or with a\n"
               "BACKEND: prefix for that backend's rows only, e.g. to fit a preset to your own measurements:\n"
               "  --set vllm:deployment.pools.0.scheduler.frontend_us=30000\n");
}

int model_cli_fidelity(int argc, char **argv)
{
    const char *csv = NULL, *sets[FID_MAX_SETS];
    int json = 0, steady = 0, n_sets = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--steady-state")) steady = 1;
        else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            if (n_sets == FID_MAX_SETS) {
                fprintf(stderr, "servesim fidelity: at most %d --set overrides\n", FID_MAX_SETS);
                return 2;
            }
            sets[n_sets++] = argv[++i];
        }
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fid_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "servesim fidelity: unknown argument '%s'\n", argv[i]);
            fid_usage(stderr);
            return 2;
        }
    }
    if (!csv) {
        static const char *defaults[] = {"../shared/validation/e2e-dev.csv", "tests/data/models/e2e-dev.csv"};
        for (int i = 0; i < 2 && !csv; i++) {
            FILE *f = fopen(defaults[i], "r");
            if (f) {
                fclose(f);
                csv = defaults[i];
            }
        }
        if (!csv) {
            fprintf(stderr, "servesim fidelity: no CSV found (tried ../shared/validation/e2e-dev.csv and "
                            "tests/data/models/e2e-dev.csv); pass --csv PATH\n");
            return 2;
        }
    }
    model_fidelity_result r;
    sim_err e = {""};
    model_fidelity_opts o = {steady, sets, n_sets};
    if (model_fidelity_run(csv, &o, &r, &e)) {
        fprintf(stderr, "servesim fidelity: %s\n", e.msg);
        return 2;
    }
    if (json) fid_print_json(&r);
    else fid_print_table(&r);
    int none = r.n_ok == 0;
    if (none) fprintf(stderr, "servesim fidelity: %s: no row could be simulated (reasons above)\n", csv);
    model_fidelity_free(&r);
    return none ? 1 : 0;
}
