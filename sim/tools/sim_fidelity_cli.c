/* sim_fidelity_cli — the `servesim fidelity` command: runs
 * sim_fidelity_run() over a CSV and prints a per-row table (or, with
 * --json, one JSON object via jansson: every CSV row in order with its id,
 * status ok|skipped, the reason when skipped and the measured/predicted
 * TTFT and TPOT when ok, then the error groups), or with --explain ROW_ID
 * one row's simulated TTFT and TPOT broken down. See sim_fidelity.h. */
#include "sim_fidelity.h"
#include "sim_parse.h"
#include "sim_spec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FID_MAX_SETS 64

static double rel_err(double pred, double meas)
{
    return (pred / meas - 1.0) * 100.0;
}

/* Indices of the k rows with the largest |error| of TTFT (which 0) or TPOT (1). */
static int worst_rows(const sim_fidelity_result *r, int which, int *idx, int k)
{
    int n = 0;
    for (int i = 0; i < r->n_rows; i++) {
        const sim_fidelity_row *x = &r->rows[i];
        if (!x->ok || x->layout_unknown || x->inconsistent[0]) continue; /* scored apart */
        double e = fabs(which ? rel_err(x->pred_tpot_ms, x->meas_tpot_ms) : rel_err(x->pred_ttft_ms, x->meas_ttft_ms));
        int pos = n < k ? n++ : k;
        while (pos > 0) {
            const sim_fidelity_row *y = &r->rows[idx[pos - 1]];
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

static void layout_str(const sim_fidelity_layout *l, char *buf, size_t len)
{
    int n = snprintf(buf, len, "tp%d", l->tp);
    if (l->pp > 1) n += snprintf(buf + n, len - (size_t)n, "pp%d", l->pp);
    if (l->dp > 1) n += snprintf(buf + n, len - (size_t)n, "dp%d", l->dp);
    if (l->ep > 1) n += snprintf(buf + n, len - (size_t)n, "ep%d", l->ep);
    if (l->moe_tp > 1 && l->ep > 1) n += snprintf(buf + n, len - (size_t)n, "moetp%d", l->moe_tp);
    if (l->workers > 1) snprintf(buf + n, len - (size_t)n, "x%d", l->workers);
}

/* "tp4dp2ep8" or "P tp4 x2 / D tp8dp8ep8" */
static void row_layout(const sim_fidelity_row *x, char *buf, size_t len)
{
    if (!x->disagg) {
        layout_str(&x->agg, buf, len);
        return;
    }
    char p[48], d[48];
    layout_str(&x->prefill, p, sizeof p);
    layout_str(&x->decode, d, sizeof d);
    snprintf(buf, len, "P:%.47s D:%.47s", p, d);
}

static void print_groups(const char *title, const sim_fidelity_group *g, int n)
{
    for (int i = 0; i < n; i++)
        printf("%-8s %-34.34s %5d %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", title, g[i].backend, g[i].n, g[i].ttft_mape,
               g[i].ttft_mdape, g[i].tpot_mape, g[i].tpot_mdape);
}

static void fid_print_table(const sim_fidelity_result *r)
{
    printf("%-44s %-7s %-22s %-9s %-7s %-26s %5s %5s %5s | %9s %9s %7s | %7s %7s %7s\n", "id", "backend", "model",
           "gpu", "dtype", "layout", "conc", "isl", "osl", "TTFT ms", "pred", "err%", "TPOT ms", "pred", "err%");
    for (int i = 0; i < r->n_rows; i++) {
        const sim_fidelity_row *x = &r->rows[i];
        char lay[112];
        row_layout(x, lay, sizeof lay);
        printf("%-44.44s %-7s %-22.22s %-9s %-7s %-26s %5d %5d %5d | ", x->id, x->backend, x->model, x->gpu, x->dtype,
               lay, x->concurrency, x->isl, x->osl);
        if (!x->ok) {
            printf("skipped: %s\n", x->note);
            continue;
        }
        printf("%9.1f %9.1f %+6.1f%% | %7.2f %7.2f %+6.1f%%%s%s%s%s\n", x->meas_ttft_ms, x->pred_ttft_ms,
               rel_err(x->pred_ttft_ms, x->meas_ttft_ms), x->meas_tpot_ms, x->pred_tpot_ms,
               rel_err(x->pred_tpot_ms, x->meas_tpot_ms), x->assumed[0] ? "  assumed: " : "", x->assumed,
               x->inconsistent[0] ? "  scored apart: " : "", x->inconsistent);
    }
    printf("\n%-8s %-34s %5s %9s %9s %9s %9s\n", "by", "group", "rows", "TTFT MAPE", "median", "TPOT MAPE", "median");
    print_groups("all", &r->all, 1);
    print_groups("backend", r->backends, r->n_backends);
    print_groups("gpu", r->gpus, r->n_gpus);
    print_groups("mode", r->modes, r->n_modes);
    print_groups("model", r->models, r->n_models);
    print_groups("back+gpu", r->backend_gpus, r->n_backend_gpus);
    print_groups("version", r->versions, r->n_versions);
    if (r->layout_unknown.n > 0) {
        printf("\nscored apart: disaggregated rows without worker counts, replayed as one prefill and one decode "
               "worker\n");
        print_groups("layout", &r->layout_unknown, 1);
    }
    if (r->inconsistent.n > 0) {
        printf("\nscored apart: rows whose measurement no deployment of their layout could produce (the work "
               "Little's law implies beyond the GPUs' peak FLOP/s or HBM bandwidth, or a TPOT under half what "
               "the same deployment measured with fewer clients than were decoding)\n");
        print_groups("measure", &r->inconsistent, 1);
    }
    for (int which = 0; which < 2; which++) {
        int idx[5];
        int n = worst_rows(r, which, idx, 5);
        printf("\nlargest %s misses:\n", which ? "TPOT" : "TTFT");
        for (int i = 0; i < n; i++) {
            const sim_fidelity_row *x = &r->rows[idx[i]];
            double meas = which ? x->meas_tpot_ms : x->meas_ttft_ms, pred = which ? x->pred_tpot_ms : x->pred_ttft_ms;
            printf("  %-56.56s measured %9.2f ms, predicted %9.2f ms (%+.1f%%)\n", x->id, meas, pred,
                   rel_err(pred, meas));
        }
    }
    printf("\n%d of %d rows simulated in %.1f s (%d of unknown layout and %d inconsistent measurements, scored "
           "apart)\n",
           r->n_ok, r->n_rows, r->wall_s, r->layout_unknown.n, r->inconsistent.n);
}

static json_t *layout_json(const sim_fidelity_layout *l)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "tp", l->tp, "pp", l->pp, "dp", l->dp, "moe_tp",
                     l->moe_tp, "ep", l->ep, "batch", l->batch, "workers", l->workers);
}

static json_t *groups_json(const sim_fidelity_group *g, int n)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++)
        json_object_set_new(o, g[i].backend,
                            json_pack("{s:i, s:f, s:f, s:f, s:f}", "rows", g[i].n, "ttft_mape_pct", g[i].ttft_mape,
                                      "ttft_median_ape_pct", g[i].ttft_mdape, "tpot_mape_pct", g[i].tpot_mape,
                                      "tpot_median_ape_pct", g[i].tpot_mdape));
    return o;
}

static int fid_print_json(const sim_fidelity_result *r)
{
    json_t *root = json_object(), *rows = json_array();
    for (int i = 0; i < r->n_rows; i++) {
        const sim_fidelity_row *x = &r->rows[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i}", "id", x->id, "status",
                              x->ok ? "ok" : "skipped", "backend", x->backend, "model", x->model, "gpu", x->gpu,
                              "dtype", x->dtype, "mode", x->disagg ? "disagg" : "agg", "concurrency", x->concurrency,
                              "isl", x->isl, "osl", x->osl);
        json_object_set_new(o, "version", json_string(x->version));
        if (x->disagg) {
            json_object_set_new(o, "prefill", layout_json(&x->prefill));
            json_object_set_new(o, "decode", layout_json(&x->decode));
        } else {
            json_object_set_new(o, "layout", layout_json(&x->agg));
        }
        if (x->assumed[0]) json_object_set_new(o, "assumed", json_string(x->assumed));
        if (x->layout_unknown) json_object_set_new(o, "layout_unknown", json_true());
        if (x->inconsistent[0]) json_object_set_new(o, "inconsistent", json_string(x->inconsistent));
        if (x->len_lo < 1) json_object_set_new(o, "length_range_ratio", json_real(x->len_lo));
        if (x->roof_checked)
            json_object_set_new(o, "roofline", json_pack("{s:f, s:f}", "compute_load", x->roof_compute, "memory_load",
                                                         x->roof_memory));
        if (x->ok) {
            json_object_set_new(o, "measured_ttft_ms", json_real(x->meas_ttft_ms));
            json_object_set_new(o, "measured_tpot_ms", json_real(x->meas_tpot_ms));
            json_object_set_new(o, "predicted_ttft_ms", json_real(x->pred_ttft_ms));
            json_object_set_new(o, "predicted_tpot_ms", json_real(x->pred_tpot_ms));
            if (x->pred_ttft_first_ms > 0)
                json_object_set_new(o, "predicted_ttft_first_wave_ms", json_real(x->pred_ttft_first_ms));
            json_object_set_new(o, "kv_tokens", json_integer(x->kv_tokens));
            json_object_set_new(o, "preemptions", json_integer(x->preemptions));
            json_object_set_new(o, "mean_batch", json_real(x->mean_batch));
        } else {
            json_object_set_new(o, "reason", json_string(x->note));
        }
        json_array_append_new(rows, o);
    }
    json_object_set_new(root, "rows", rows);
    json_t *sum = json_object();
    json_object_set_new(sum, "all", groups_json(&r->all, 1));
    json_object_set_new(sum, "backend", groups_json(r->backends, r->n_backends));
    json_object_set_new(sum, "gpu", groups_json(r->gpus, r->n_gpus));
    json_object_set_new(sum, "model", groups_json(r->models, r->n_models));
    json_object_set_new(sum, "mode", groups_json(r->modes, r->n_modes));
    json_object_set_new(sum, "backend_gpu", groups_json(r->backend_gpus, r->n_backend_gpus));
    json_object_set_new(sum, "version", groups_json(r->versions, r->n_versions));
    json_object_set_new(sum, "layout_unknown", groups_json(&r->layout_unknown, 1));
    json_object_set_new(sum, "inconsistent", groups_json(&r->inconsistent, 1));
    json_object_set_new(root, "summary", sum);
    json_object_set_new(root, "rows_total", json_integer(r->n_rows));
    json_object_set_new(root, "rows_simulated", json_integer(r->n_ok));
    json_object_set_new(root, "wall_s", json_real(r->wall_s));
    int rc = json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    putchar('\n');
    json_decref(root);
    return rc;
}

static void fam_line(const char *what, double total, const double f[5], char top[3][64])
{
    printf("  %-30s %9.3f ms = gemm %.3f + attention %.3f + comm %.3f + other %.3f + host %.3f\n", what, total, f[0],
           f[1], f[2], f[3], f[4]);
    printf("  %-30s costliest: %s; %s; %s\n", "", top[0], top[1], top[2]);
}

/* The admission holds the row's engine runs with (scheduler.recv_interval,
 * adp_timeout_iters / adp_wait_iters, batch_wait_iters / batch_wait_ratio,
 * a recipe's whole-prompt token budget), its async scheduling and the parts priced by another engine's kernels
 * (scheduler.kernels), when any is on. */
static void print_holds(const sim_fidelity_row *r, const sim_fidelity_opts *o)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err e = {""};
    if (!sc || sim_fidelity_row_scenario(r, o, sc, &e)) {
        free(sc);
        return;
    }
    const sim_sched_cfg *s = &sc->deployment.pools[0].scheduler;
    if (s->recv_interval > 1)
        printf("  engine: polls for new requests every %d decode-only steps (scheduler.recv_interval)\n",
               s->recv_interval);
    if (s->spec.draft_tokens > 0)
        printf("  engine: speculative decoding, %s drafts %d token%s a step at %.3g acceptance per position "
               "(%.2f tokens/step expected; scheduler.speculative)\n",
               s->spec.method == SIM_SPEC_MTP ? "the MTP module" : s->spec.draft_model, s->spec.draft_tokens,
               s->spec.draft_tokens == 1 ? "" : "s", s->spec.acceptance.v[0], sim_spec_expected_tokens(&s->spec));
    if (s->adp_timeout_iters > 0 && r->agg.dp > 1)
        printf("  engine: attention-DP balancing, new prefills wait for one per rank up to %d steps, then %d more "
               "(scheduler.adp_timeout_iters, adp_wait_iters)\n",
               s->adp_timeout_iters, s->adp_wait_iters);
    if ((s->batch_wait_iters > 0 || s->batch_wait_ratio > 0) && r->agg.dp <= 1)
        printf("  engine: batch waiting, while requests decode new prefills wait up to %d steps for %.2f of the "
               "%d-token budget (scheduler.batch_wait_iters, batch_wait_ratio)\n",
               s->batch_wait_iters, s->batch_wait_ratio, s->max_batched_tokens);
    if (s->whole_prompts) {
        int32_t ranks = r->agg.dp > 1 ? r->agg.dp : 1;
        printf("  engine: %d-token budget a step (%d a rank), prompts only whole, a decoding request taking %d of it "
               "(the recipe's max_num_tokens; scheduler.max_batched_tokens, whole_prompts)\n",
               s->max_batched_tokens, s->max_batched_tokens / ranks, 1 + s->spec.draft_tokens);
    }
    if (s->async_scheduling)
        printf("  engine: async scheduling (%s %s), per-request host work hidden behind each step's GPU time "
               "(scheduler.async_scheduling)\n",
               r->backend, r->version);
    for (int p = 0; p < SIM_KERNEL_PARTS; p++)
        if (s->kernels[p] != SIM_SCHED_PRESET_NONE)
            printf("  engine: %s kernels priced as %s measures them (scheduler.kernels.%s)\n",
                   sim_kernel_part_name((sim_kernel_part)p), sim_sched_preset_name(s->kernels[p]),
                   sim_kernel_part_name((sim_kernel_part)p));
    free(sc);
}

static void fid_print_explain(const sim_fidelity_row *r, const sim_fidelity_explain_out *x,
                              const sim_fidelity_opts *o)
{
    char lay[112];
    row_layout(r, lay, sizeof lay);
    printf("row %s: %s %s on %s, %s, %s, concurrency %d, isl %d, osl %d\n", r->id, r->backend, r->model, r->gpu,
           r->dtype, lay, r->concurrency, r->isl, r->osl);
    if (r->assumed[0]) printf("assumed: %s\n", r->assumed);
    if (r->inconsistent[0]) printf("scored apart (inconsistent measurement): %s\n", r->inconsistent);
    if (r->roof_checked)
        printf("roofline: by Little's law the measurement needs %.2f of the GPUs' peak FLOP/s and %.2f of their HBM "
               "bandwidth on the replayed layout (more than 10/9 is no run of it)\n",
               r->roof_compute, r->roof_memory);
    if (r->len_lo < 1)
        printf("client: input lengths uniform in [%.0f, %d], output lengths in [%.0f, %d] (benchmark_serving "
               "--random-range-ratio %.2g)\n",
               floor(r->isl * r->len_lo), r->isl, floor(r->osl * r->len_lo), r->osl, r->len_lo);
    printf("TTFT  measured %9.2f ms  simulated %9.2f ms (%+.1f%%)\n", r->meas_ttft_ms, x->ttft_ms,
           rel_err(x->ttft_ms, r->meas_ttft_ms));
    printf("  engine: KV %lld tokens per%s instance (the clients' sequences need %lld at once), %lld preemptions, "
           "mean batch %.1f\n",
           (long long)r->kv_tokens, r->disagg ? " decode" : "", (long long)r->concurrency * (r->isl + r->osl),
           (long long)r->preemptions, r->mean_batch);
    print_holds(r, o);
    if (x->first_wave_n > 0 && x->later_n > 0)
        printf("  by wave: the clients' first %lld requests (sent together at t = 0) %.2f ms mean TTFT, the %lld "
               "later ones %.2f ms\n",
               (long long)x->first_wave_n, x->first_wave_ttft_ms, (long long)x->later_n, x->later_ttft_ms);
    if (r->client_pool > 0)
        printf("  client's connection pool       %9.3f ms (waiting for one of its %d connections, before sending)\n",
               x->client_wait_ms, r->client_pool);
    printf("  host/frontend                  %9.3f ms\n", x->frontend_ms);
    if (x->worker_wait_ms + x->worker_service_ms > 0)
        printf("    of which API-server workers  %9.3f ms (wait for a worker %.3f + api_us and tokenisation %.3f)\n",
               x->worker_wait_ms + x->worker_service_ms, x->worker_wait_ms, x->worker_service_ms);
    printf("  queueing                       %9.3f ms (after the frontend, before the first iteration)\n",
           x->queue_ms);
    printf("  prefill (first iteration to first token) %.3f ms; for reference one prefill of %.0f tokens:\n",
           x->prefill_ms, x->prefill_tokens);
    fam_line("prefill iteration", x->prefill_iter_ms, x->prefill_fam_ms, (char(*)[64])x->prefill_top);
    if (r->disagg)
        printf("  KV transfer                    %9.3f ms (back-pressure + transfer + hand-over to the decode worker)\n"
               "  first decode step              %9.3f ms (the client's first token comes from the decode worker)\n",
               x->kv_transfer_ms, x->first_decode_ms);
    printf("TPOT  measured %9.3f ms  simulated %9.3f ms (%+.1f%%)\n", r->meas_tpot_ms, x->tpot_ms,
           rel_err(x->tpot_ms, r->meas_tpot_ms));
    char what[64];
    if (x->decode_graph_batch > llround(x->decode_batch))
        snprintf(what, sizeof what, "decode step (batch %.1f as graph %d, ctx %.0f)", x->decode_batch,
                 x->decode_graph_batch, x->decode_ctx);
    else
        snprintf(what, sizeof what, "decode step (batch %.1f, ctx %.0f)", x->decode_batch, x->decode_ctx);
    fam_line(what, x->decode_iter_ms, x->decode_fam_ms, (char(*)[64])x->decode_top);
    if (x->spec_tokens > 0)
        printf("  speculative step               %9.3f ms = verify %.3f (1 + %d tokens per request) + draft %.3f; "
               "per token %.3f ms (/ %.2f tokens/step)\n",
               x->spec_verify_ms + x->spec_draft_ms, x->spec_verify_ms, x->spec_k, x->spec_draft_ms,
               (x->spec_verify_ms + x->spec_draft_ms) / x->spec_tokens, x->spec_tokens);
    printf("  rest of TPOT                   %9.3f ms (%s)\n", x->decode_stall_ms,
           r->disagg ? "batch changes, waits" : "prefill chunks sharing iterations, waits");
}

static void fid_usage(FILE *o)
{
    fprintf(o,
            "usage: servesim fidelity [--csv PATH] [--steady-state] [--set [BACKEND:]KEY=VALUE]... [--jobs N]\n"
            "                         [--no-perf-db] [--json | --explain ROW_ID]\n"
            "Replays every row of a measured-deployment CSV (the column layout of aiconfigurator's silicon\n"
            "samples; aggregated rows as colocated deployments, disaggregated rows as PD deployments with\n"
            "their prefill/decode layouts, worker counts and batch sizes) as closed-loop scenarios and\n"
            "compares mean TTFT/TPOT with the measurements; prints per-row results, MAPE and median APE by\n"
            "backend, GPU, mode and model, and the largest misses; disaggregated rows without worker counts\n"
            "replay one prefill and one decode worker and are scored apart (group layout_unknown), so are\n"
            "rows no deployment of their layout could have measured (group inconsistent, the reason in the\n"
            "row): by Little's law c clients complete c/(TTFT + D) requests/s with c.D/(TTFT + D) decoding,\n"
            "D = (output - 1) x TPOT; that prefill and decode work (the cost model's FLOPs and HBM bytes\n"
            "at the layout, the routed experts' bytes at one request's top-k) needing over 10/9 of the\n"
            "GPU's dense peak or HBM bandwidth (10/9: a client's last request may end a lifetime early),\n"
            "or a TPOT under half what the same aggregated deployment measured with fewer clients than\n"
            "were decoding. An aggregated row beyond that bound whose concurrency is k x batch_size x\n"
            "attention DP (k >= 2) and which is within it at k instances replays k replicas (\"assumed\").\n"
            "Default CSV:\n"
            "../shared/validation/silicon-dev.csv, else ../shared/validation/e2e-dev.csv, else\n"
            "tests/data/models/e2e-dev.csv. Means are over every request (10 per client, the first wave\n"
            "included, as benchmark clients report them); --steady-state leaves the first wave out. Each row\n"
            "runs its backend's scheduler preset; --set overrides scenario keys for every row, or with a\n"
            "BACKEND: prefix for that backend's rows only (pools.0 is a PD row's prefill pool, pools.1 its\n"
            "decode pool, set alone or with pools.0; aggregated rows have no pools.1 and leave it out), e.g.\n"
            "to fit a preset to your own measurements:\n"
            "  --set vllm:deployment.pools.0.scheduler.frontend_us=30000\n"
            "--jobs N simulates N rows at a time (default: the online CPUs, at most 8). --json prints every\n"
            "row in order (id, status ok|skipped, reason, version, measured_/predicted_ttft_ms/tpot_ms,\n"
            "predicted_ttft_first_wave_ms: the clients' first requests' mean, roofline compute_load/memory_load)\n"
            "and the groups (all, backend, gpu, model, mode, backend_gpu: each backend on each GPU, version:\n"
            "each engine version). --explain ROW_ID breaks one row's simulated TTFT and TPOT down (frontend, queueing,\n"
            "prefill and decode iterations by op family, KV transfer). --no-perf-db prices every row with the\n"
            "analytic roofline (hardware.perf_db=none) even where calib/data/ has the row's GPU measured.\n");
}

int sim_cli_fidelity(int argc, char **argv)
{
    const char *csv = NULL, *sets[FID_MAX_SETS], *explain = NULL;
    int json = 0, steady = 0, n_sets = 0, jobs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--steady-state")) steady = 1;
        else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            if (n_sets == FID_MAX_SETS) {
                fprintf(stderr, "servesim fidelity: at most %d --set overrides\n", FID_MAX_SETS);
                return 2;
            }
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            int64_t v;
            if (sim_parse_i64(argv[++i], &v) != SIM_PARSE_OK || v < 1 || v > 64) {
                fprintf(stderr, "servesim fidelity: --jobs: expected 1..64, got '%s'\n", argv[i]);
                return 2;
            }
            jobs = (int)v;
        } else if (!strcmp(argv[i], "--explain") && i + 1 < argc) explain = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--no-perf-db")) {
            if (n_sets == FID_MAX_SETS) {
                fprintf(stderr, "servesim fidelity: at most %d --set overrides\n", FID_MAX_SETS);
                return 2;
            }
            sets[n_sets++] = "hardware.perf_db=none"; /* the analytic roofline for every row */
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fid_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "servesim fidelity: unknown argument '%s'\n", argv[i]);
            fid_usage(stderr);
            return 2;
        }
    }
    if (!csv) {
        static const char *defaults[] = {"../shared/validation/silicon-dev.csv", "../shared/validation/e2e-dev.csv",
                                         "tests/data/models/e2e-dev.csv"};
        for (int i = 0; i < 3 && !csv; i++)
            if (access(defaults[i], R_OK) == 0) csv = defaults[i];
        if (!csv) {
            fprintf(stderr, "servesim fidelity: no CSV found (tried ../shared/validation/silicon-dev.csv, "
                            "../shared/validation/e2e-dev.csv and tests/data/models/e2e-dev.csv); pass --csv PATH\n");
            return 2;
        }
    }
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n < 1 ? 1 : n > 8 ? 8 : (int)n;
    }
    sim_err e = {""};
    sim_fidelity_opts o = {steady, sets, n_sets, jobs, NULL};
    if (explain) {
        sim_fidelity_row row;
        sim_fidelity_explain_out x;
        if (sim_fidelity_explain(csv, explain, &o, &row, &x, &e)) {
            fprintf(stderr, "servesim fidelity: %s\n", e.msg);
            return 2;
        }
        fid_print_explain(&row, &x, &o);
        return 0;
    }
    sim_fidelity_result r;
    if (sim_fidelity_run(csv, &o, &r, &e)) {
        fprintf(stderr, "servesim fidelity: %s\n", e.msg);
        return 2;
    }
    if (json) fid_print_json(&r);
    else fid_print_table(&r);
    int none = r.n_ok == 0;
    if (none) fprintf(stderr, "servesim fidelity: %s: no row could be simulated (reasons above)\n", csv);
    sim_fidelity_free(&r);
    return none ? 1 : 0;
}
