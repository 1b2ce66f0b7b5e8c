/* sim_cli — see sim_cli.h. */
#include "sim_cli.h"
#include "sim_cli_replications.h"
#include "sim_cli_sensitivity.h"
#include "sim_clock.h"

#include "sim_cli_calib.h"
#include "sim_cli_predict.h"
#include "model_op_cli.h"
#include "sim_fidelity.h"
#include "model_show.h"
#include "sim_cache_replay.h"
#include "sim_plot.h"
#include "sim_suggest.h"
#include "sim_trace_out.h"
#include "sim_cli_search.h"

#include "sim_cluster.h"
#include "sim_cli_estimate.h"
#include "sim_file.h"
#include "sim_json.h"
#include "sim_loader.h"
#include "sim_parse.h"
#include "sim_store.h"

#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_OVERLOAD 3
#define MAX_SETS 256

static const char *usage_main =
    "usage: servesim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.yaml       simulate a deployment and print its metrics\n"
    "  search SCENARIO.yaml    find the deployment with the most goodput per GPU under the SLO\n"
    "  sensitivity SCENARIO.yaml  what a faster op family (--op gemm --speedup 1.5,2) is worth end to end\n"
    "  plot DB -o FILE         draw cdf/throughput-latency/sweep/pareto/timeline figures (gnuplot)\n"
    "  validate SCENARIO.yaml  check a scenario (keys, types, ranges, catalogue names, memory fit)\n"
    "  schema                  print the scenario reference (every key, type, default, range)\n"
    "  predict                 op-by-op latency of one iteration (model, GPU, layout, batch)\n"
    "  estimate                TTFT/TPOT/throughput of one deployment (--model --gpu --tp --isl --osl ...)\n"
    "  init                    write a commented starting scenario with a search block (--model --gpu --slo-*)\n"
    "  model show|list         a model as loaded (layers, params, weight/KV bytes), or every known model\n"
    "  fidelity                replay measured deployments (e2e-dev.csv) and print the error\n"
    "  op OP|--csv|--score|--fit   latency of one op (GEMM, attention, MoE, collectives ...) as priced\n"
    "  cache-replay TRACE      replay a trace's prefix blocks against caches of given sizes (no timing)\n"
    "  calibrate               time servesim's kernels on this GPU (or --backend cpu) into a perf-db\n"
    "  db list|show|export|import|lookup   inspect and move perf-db files\n"
    "  version                 print the version\n"
    "\n"
    "Run 'servesim <command> --help' for the options of a command.\n";

static const char *usage_run =
    "usage: servesim run SCENARIO.yaml [--set key.path=value ...] [--seed N] [--json] [--request-records N]\n"
    "                    [--sweep key.path=v1,v2,...] [--db FILE | --no-db] [--no-perf-db] [--quiet]\n"
    "                    [--out DIR] [--trace FILE.json [--trace-window T0:T1] [--trace-max-events N]]\n"
    "                    [--replications N [--jobs J]]\n"
    "\n"
    "Simulates the scenario and prints a summary table (or one JSON object with --json).\n"
    "  --set key.path=value  override any scenario leaf, e.g. --set workload.arrival.rate=40,\n"
    "                        --set deployment.pools.0.instances=8 (repeatable)\n"
    "  --seed N              override the scenario seed\n"
    "  --request-records N   keep at most N per-request records (output.request_records): exact\n"
    "                        percentiles up to N requests, then a sketch within 0.05 %, and memory\n"
    "                        that stops growing\n"
    "  --sweep key=v1,v2     run once per value (like --set key=v) and print one comparison\n"
    "                        table (a JSON array with --json); also `sweep:` in the scenario;\n"
    "                        several keys at once: --sweep k1+k2=a1+a2,b1+b2\n"
    "  --json                print the summary as one JSON object on stdout\n"
    "  --db FILE             append the run to this SQLite results DB (overrides output.db)\n"
    "  --no-db               do not write a results DB even if the scenario names one\n"
    "  --no-perf-db          price every op with the analytic roofline (hardware.perf_db=none)\n"
    "  --quiet               no progress bar\n"
    "  --out DIR             draw plots into DIR (gnuplot), named after the scenario: a sweep\n"
    "                        gets NAME-sweep.png, NAME-throughput-latency.png and NAME-cdf.png,\n"
    "                        a single run NAME-cdf.png and NAME-timeline.png; the runs go to\n"
    "                        DIR/NAME.db unless --db is given (relative paths: the working dir)\n"
    "  --trace FILE.json     write a Chrome/Perfetto trace (ui.perfetto.dev): a track per instance\n"
    "                        with its iterations, KV transfers/fetches as flows, queue and KV\n"
    "                        counters; only simulated T0..T1 s (--trace-window, default 0:60)\n"
    "                        and at most N events (--trace-max-events, default 1000000)\n"
    "  --replications N      run the scenario N >= 2 times with independent seeds derived from\n"
    "                        its seed and print every headline figure (TTFT/TPOT/E2E mean and\n"
    "                        percentiles, throughput, goodput, goodput/GPU, SLO attainment)\n"
    "                        with a 95 % Student-t interval (--json: an `intervals` object);\n"
    "                        on J threads (--jobs, default one per CPU); each figure's mean and\n"
    "                        interval go to the results DB (tables replication_sets, intervals)\n"
    "Exit status: 0 ok, 1 failure, 2 bad usage or input, 3 the run stopped on overload\n"
    "(its partial metrics are still printed and stored).\n";

static const char *usage_validate =
    "usage: servesim validate SCENARIO.yaml [--set key.path=value ...]\n"
    "\n"
    "Loads the scenario strictly and builds the deployment without running it: reports\n"
    "unknown keys, wrong types, out-of-range values, unknown models or GPUs and layouts\n"
    "whose weights do not fit. Exit status 0 when valid, 2 otherwise.\n";

static const char *usage_schema =
    "usage: servesim schema\n\nPrints the scenario reference (Markdown) generated from the loader's schema.\n";

static int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

typedef struct {
    const char *path;
    const char *sets[MAX_SETS];
    int n_sets;
    char seed_set[64];
    char records_set[64];    /* --request-records N */
    const char *db;
    const char *sweep;
    const char *out_dir;
    char out_db[1100];
    char stem[256];          /* file-name stem from the scenario name (run --out) */
    const char *trace;       /* --trace FILE.json */
    double trace_t0, trace_t1;
    long long trace_max;
    int no_db, json, quiet, no_perf_db;
    int32_t replications, jobs; /* --replications N (0 = one run), --jobs J (0 = one per CPU) */
} run_args;

/* Appends a key=value set: 0, or -1 after the message when there is no
 * room. */
static int add_set(run_args *a, const char *v)
{
    if (a->n_sets == MAX_SETS) {
        fprintf(stderr, "servesim: too many --set options (max %d)\n", MAX_SETS);
        return -1;
    }
    a->sets[a->n_sets++] = v;
    return 0;
}

/* --trace FILE, --trace-window T0:T1, --trace-max-events N (s the flag, v
 * its value): 0 or -1 after the message. */
static int trace_flag(run_args *a, const char *s, const char *v)
{
    if (s[7] == '\0') {
        a->trace = v;
    } else if (s[8] == 'w') {
        const char *colon = strchr(v, ':');
        char t0[64] = "";
        if (colon && (size_t)(colon - v) < sizeof t0) memcpy(t0, v, (size_t)(colon - v));
        if (!colon || (size_t)(colon - v) >= sizeof t0 || sim_parse_double(t0, &a->trace_t0) != SIM_PARSE_OK ||
            sim_parse_double(colon + 1, &a->trace_t1) != SIM_PARSE_OK || a->trace_t0 < 0 ||
            a->trace_t1 <= a->trace_t0) {
            fprintf(stderr, "servesim: --trace-window: expected T0:T1 in seconds with T1 > T0 >= 0, got '%s'\n", v);
            return -1;
        }
    } else {
        int64_t n;
        if (sim_parse_i64(v, &n) != SIM_PARSE_OK || n < 1) {
            fprintf(stderr, "servesim: --trace-max-events: expected a positive integer, got '%s'\n", v);
            return -1;
        }
        a->trace_max = n;
    }
    return 0;
}

/* A run flag that takes a value (argv[*i] = s; *i moved past the value):
 * 1 taken, 0 not such a flag, -1 after the message. */
static int run_value_flag(int argc, char **argv, int *i, const char *s, run_args *a)
{
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    static const char *const needs[][2] = {{"--seed", "a value"}, {"--out", "a folder"},
                                           {"--sweep", "key.path=v1,v2,..."}, {"--db", "a file name"},
                                           {"--trace", "a value"}, {"--trace-window", "a value"},
                                           {"--trace-max-events", "a value"}};
    int known = 0;
    for (size_t q = 0; q < sizeof needs / sizeof needs[0] && !known; q++)
        if (strcmp(s, needs[q][0]) == 0) {
            known = 1;
            if (!v) {
                fprintf(stderr, "servesim: %s needs %s\n", s, needs[q][1]);
                return -1;
            }
        }
    if (strcmp(s, "--seed") == 0) {
        uint64_t seed;
        if (sim_parse_u64(v, &seed) != SIM_PARSE_OK) {
            fprintf(stderr, "servesim: --seed: expected a non-negative integer, got '%s'\n", v);
            return -1;
        }
        snprintf(a->seed_set, sizeof a->seed_set, "seed=%llu", (unsigned long long)seed);
    } else if (strcmp(s, "--request-records") == 0) {
        int64_t nrec = -1;
        if (!v || sim_parse_i64(v, &nrec) != SIM_PARSE_OK || nrec < 0) {
            fprintf(stderr, "servesim: --request-records: expected a non-negative integer, got '%s'\n", v ? v : "");
            return -1;
        }
        snprintf(a->records_set, sizeof a->records_set, "output.request_records=%lld", (long long)nrec);
    } else if (strcmp(s, "--out") == 0) {
        a->out_dir = v;
    } else if (strcmp(s, "--sweep") == 0) {
        a->sweep = v;
    } else if (strcmp(s, "--db") == 0) {
        a->db = v;
    } else if (strncmp(s, "--trace", 7) == 0 && known) {
        if (trace_flag(a, s, v) < 0) return -1;
    } else if (strcmp(s, "--replications") == 0 || strcmp(s, "--jobs") == 0) {
        int64_t k = -1;
        int reps = s[2] == 'r';
        if (!v || sim_parse_i64(v, &k) != SIM_PARSE_OK || k < (reps ? 2 : 1) || k > (reps ? 100000 : 1024)) {
            fprintf(stderr, "servesim: %s: expected an integer in %s, got '%s'\n", s, reps ? "2..100000" : "1..1024",
                    v ? v : "");
            return -1;
        }
        if (reps) a->replications = (int32_t)k;
        else a->jobs = (int32_t)k;
    } else {
        return 0;
    }
    if (v) (*i)++;
    return 1;
}

/* A run flag without a value: 1 taken, 0 not such a flag. */
static int run_bool_flag(const char *s, run_args *a)
{
    int *dst = strcmp(s, "--json") == 0         ? &a->json
               : strcmp(s, "--quiet") == 0      ? &a->quiet
               : strcmp(s, "--no-db") == 0      ? &a->no_db
               : strcmp(s, "--no-perf-db") == 0 ? &a->no_perf_db
                                                : NULL;
    if (dst) *dst = 1;
    return dst != NULL;
}

static int parse_run_args(int argc, char **argv, const char *usage, int allow_run_flags, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->trace_t1 = 60;
    a->trace_max = 1000000;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int taken;
        if (is_help(s)) {
            fputs(usage, stdout);
            return 1;
        } else if (strcmp(s, "--set") == 0 || strncmp(s, "--set=", 6) == 0) {
            const char *v = s[5] == '=' ? s + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !strchr(v, '=')) {
                fprintf(stderr, "servesim: --set needs key.path=value\n");
                return -1;
            }
            if (add_set(a, v) < 0) return -1;
        } else if (allow_run_flags && (taken = run_value_flag(argc, argv, &i, s, a)) != 0) {
            if (taken < 0) return -1;
        } else if (allow_run_flags && run_bool_flag(s, a)) {
            continue;
        } else if (s[0] == '-' && s[1] != '\0') {
            static const char *const run_flags[] = {"--set", "--seed", "--json", "--sweep", "--db", "--no-db",
                                                    "--no-perf-db", "--quiet", "--out", "--help", "--trace",
                                                    "--trace-window", "--trace-max-events", "--request-records",
                                                    "--replications", "--jobs"};
            const char *near = sim_suggest(s, run_flags, allow_run_flags ? sizeof run_flags / sizeof run_flags[0] : 1);
            sim_suggest_unknown(stderr, "", "option", s, near, usage);
            return -1;
        } else if (!a->path) {
            a->path = s;
        } else {
            fprintf(stderr, "servesim: unexpected argument '%s'\n%s", s, usage);
            return -1;
        }
    }
    if (!a->path) {
        fprintf(stderr, "servesim: missing SCENARIO.yaml\n%s", usage);
        return -1;
    }
    if ((a->seed_set[0] && add_set(a, a->seed_set) < 0) || (a->records_set[0] && add_set(a, a->records_set) < 0) ||
        (a->no_perf_db && add_set(a, "hardware.perf_db=" SIM_PERF_DB_NONE) < 0))
        return -1;
    return 0;
}

/* A deployment that cannot be built, placed at its key in the file (or the
 * --set that gave it) when the message names one. */
static void print_build_error(const char *what, const char *path, const char *const *sets, int n_sets,
                              sim_err *err)
{
    if (sim_loader_locate_error(path, sets, n_sets, err)) fprintf(stderr, "servesim: %s%s\n", what, err->msg);
    else fprintf(stderr, "servesim: %s%s: %s\n", what, path, err->msg);
}

/* The scenario file as read, stored with the run (NULL when it cannot be
 * read again: the run is stored without it). */
static char *read_text(const char *path)
{
    char *text = NULL;
    if (sim_file_read_all(path, "scenario", SIM_FILE_MAX_TEXT, &text, NULL, NULL) < 0) return NULL;
    return text;
}

typedef struct {
    double start, last;
    int drawn;
} progress_state;

static void draw_progress(void *ctx, int64_t done, int64_t total, double sim_s)
{
    progress_state *p = ctx;
    double now = sim_wall_s();
    /* Only long runs get a bar, redrawn at most 10 times a second. */
    if (now - p->start < 1.0 || now - p->last < 0.1) return;
    p->last = now;
    p->drawn = 1;
    if (total > 0) {
        int w = 30, fill = (int)((double)done / (double)total * w);
        if (fill > w) fill = w;
        fprintf(stderr, "\r[%.*s%*s] %5.1f%% %lld/%lld requests, %.0f s simulated ",
                fill, "##############################", w - fill, "", 100.0 * (double)done / (double)total,
                (long long)done, (long long)total, sim_s);
    } else {
        fprintf(stderr, "\r%lld requests, %.0f s simulated ", (long long)done, sim_s);
    }
}

static char *params_json(const run_args *a)
{
    json_t *o = json_object();
    json_t *sets = json_array();
    for (int i = 0; i < a->n_sets; i++) json_array_append_new(sets, json_string(a->sets[i]));
    json_object_set_new(o, "set", sets);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

/* Loads the scenario with the overrides into sc, builds its cluster (*cl)
 * and opens the results DB (*st, before the run so a bad path fails fast)
 * and the trace (*trace, printed runs only). -1 to go on, else the exit
 * code. */
static int run_setup(const run_args *a, const char *const *sets, int n_sets, int print, sim_store **st,
                     sim_scenario *sc, sim_cluster **cl, sim_trace_out **trace)
{
    sim_err err = {{0}};
    int rc;
    if ((rc = sim_loader_load_file(a->path, sets, n_sets, sc, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (a->db) snprintf(sc->output.db, sizeof sc->output.db, "%s", a->db);
    if (a->no_db) sc->output.db[0] = '\0';
    if ((rc = sim_cluster_create(sc, cl, &err)) < 0) {
        print_build_error("", a->path, sets, n_sets, &err);
        return rc == SIM_ENOTSUP ? 1 : EXIT_USAGE;
    }
    /* Open the DB before running so a bad path fails fast, not after the run. */
    if (sc->output.db[0] && !*st && (rc = sim_store_open(sc->output.db, st, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return rc == SIM_ENOMEM ? 1 : EXIT_USAGE; /* a bad --db / output.db path or file */
    }
    if (a->trace && print) {
        if ((rc = sim_trace_out_open(a->trace, a->trace_t0, a->trace_t1, a->trace_max, trace, &err)) < 0) {
            fprintf(stderr, "servesim: %s\n", err.msg);
            return EXIT_USAGE;
        }
        sim_cluster_set_trace(*cl, *trace);
    }
    return -1;
}

/* Stores the run in st with the scenario's text and the run's flags; 0, or
 * 1 when writing failed (said on stderr). */
static int run_store(const run_args *a, const char *const *sets, int n_sets, int print, sim_store *st,
                     const sim_scenario *sc, sim_cluster *cl, const sim_summary *sum, char *db_used, size_t db_len)
{
    sim_err err = {{0}};
    int rc = 0;
    run_args pa = *a;
    memcpy(pa.sets, sets, (size_t)n_sets * sizeof *sets);
    pa.n_sets = n_sets;
    char *text = read_text(a->path), *params = params_json(&pa);
    int64_t run_id = 0;
    if (sim_store_write_run(st, sc, text, params, sum, sim_cluster_metrics(cl), &run_id, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        rc = 1;
    } else {
        if (print && !a->json) printf("results: run %lld stored in %s\n", (long long)run_id, sc->output.db);
        if (db_used) snprintf(db_used, db_len, "%s", sc->output.db);
    }
    free(text);
    free(params);
    return rc;
}

/* One simulation: load with the given overrides, run, print (unless the
 * caller prints a sweep table), store. *st is opened on first use. */
static int run_one(const run_args *a, const char *const *sets, int n_sets, int print, sim_store **st,
                   sim_summary *sum, char *label, size_t label_len, char *db_used, size_t db_len)
{
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_cluster *cl = NULL;
    sim_trace_out *trace = NULL;
    int rc, exit_code = 1;
    if (!sc) goto fail;
    if ((exit_code = run_setup(a, sets, n_sets, print, st, sc, &cl, &trace)) >= 0) goto fail;
    exit_code = 1;
    progress_state ps = {sim_wall_s(), 0, 0};
    if (!a->quiet && isatty(2)) sim_cluster_set_progress(cl, draw_progress, &ps);
    if (label) sim_cluster_describe(cl, label, label_len);
    if (print && !a->json) {
        char desc[512];
        sim_cluster_describe(cl, desc, sizeof desc);
        printf("servesim %s — scenario '%s': %s\n", SERVESIM_VERSION, sc->name, desc);
        fflush(stdout);
    }
    if ((rc = sim_cluster_run(cl, sum, &err)) < 0) {
        if (ps.drawn) fputc('\n', stderr);
        fprintf(stderr, "servesim: run failed: %s\n", err.msg);
        goto fail;
    }
    if (ps.drawn) fputc('\n', stderr);
    if (trace) {
        int64_t nev = 0;
        int trc = sim_trace_out_close(trace, &nev, &err);
        trace = NULL;
        if (trc < 0) {
            fprintf(stderr, "servesim: %s\n", err.msg);
            goto fail;
        }
        if (!a->json)
            fprintf(stderr, "trace: %s (%lld events, simulated %g..%g s; open in ui.perfetto.dev or chrome://tracing)\n",
                    a->trace, (long long)nev, a->trace_t0, a->trace_t1);
    }
    if (print && a->json) sim_summary_print_json(stdout, sum);
    else if (print) sim_summary_print_table(stdout, sum, sc);
    if (sum->overloaded) fprintf(stderr, "servesim: overload: %s\n", sum->overload_reason);
    if (sc->output.db[0] && *st && run_store(a, sets, n_sets, print, *st, sc, cl, sum, db_used, db_len)) goto fail;
    exit_code = sum->overloaded ? EXIT_OVERLOAD : 0;
fail:
    if (trace) sim_trace_out_close(trace, NULL, NULL);
    sim_cluster_destroy(cl);
    free(sc);
    return exit_code;
}

static void print_sweep_row(const char *value, const sim_summary *s, int rc)
{
    if (rc != 0 && rc != EXIT_OVERLOAD) {
        printf("%-14s  %s\n", value, "failed (see above)");
        return;
    }
    /* batch: mean running requests / max_seqs of the pool with the least headroom */
    const sim_pool_summary *fp = s->n_pools > 0 ? &s->pools[sim_summary_fullest_pool(s)] : NULL;
    char batch[32] = "-";
    if (fp && fp->max_seqs > 0) snprintf(batch, sizeof batch, "%.0f/%d", fp->mean_batch, (int)fp->max_seqs);
    printf("%-14s %9.3f %9.3f %9.1f %9.1f %8.2f %8.2f %10.1f %6.1f%% %9s %7lld %6.1f%% %6.3f%s\n", value,
           s->req_per_s, s->goodput_req_per_s, s->ttft_ms.p50, s->ttft_ms.p99, s->tpot_ms.p50,
           s->tpot_ms.p99, s->output_tokens_per_s_per_gpu, 100.0 * s->mean_utilization, batch,
           (long long)s->preemptions, 100.0 * s->cache_hit_rate, s->load_cv,
           s->overloaded ? " OVERLOADED" : "");
}

#define SWEEP_MAX_KEYS 8

/* Pairs "k1+k2" with "v1+v2" into "k1=v1", "k2=v2"; -1 if the counts differ. */
static int split_assign(const char *keys, const char *vals, char out[SWEEP_MAX_KEYS][1400])
{
    char kb[256], vb[1024];
    if (!strchr(keys, '+')) { /* one key: the value is taken whole (e.g. "pd+af") */
        snprintf(out[0], 1400, "%s=%s", keys, vals);
        return 1;
    }
    snprintf(kb, sizeof kb, "%s", keys);
    snprintf(vb, sizeof vb, "%s", vals);
    char *ks = NULL, *vs = NULL;
    char *k = strtok_r(kb, "+", &ks), *v = strtok_r(vb, "+", &vs);
    int n = 0;
    while (k && v && n < SWEEP_MAX_KEYS) {
        snprintf(out[n++], 1400, "%s=%s", k, v);
        k = strtok_r(NULL, "+", &ks);
        v = strtok_r(NULL, "+", &vs);
    }
    return (k || v) ? -1 : n;
}

/* The sweep's values, trimmed, in order (pointers into vals, which is
 * modified); returns how many, or -1 past max. */
static int sweep_values(char *vals, char **out, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *v = strtok_r(vals, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        while (*v == ' ') v++;
        char *e = v + strlen(v);
        while (e > v && e[-1] == ' ') *--e = '\0';
        if (!*v) continue;
        if (n == max) return -1;
        out[n++] = v;
    }
    return n;
}

/* The overrides of one sweep run: the command line's, then "k1=v1" ...
 * ("k1+k2" with values "v1+v2" sets several keys per run, xPyD), then the
 * sweep cleared. Returns the count, or -1 (message printed) when the value
 * does not give one value per key. */
static int sweep_sets(const run_args *a, const char *key, const char *v, const char **sets,
                      char kv[SWEEP_MAX_KEYS][1400], char *clear)
{
    int ns = a->n_sets;
    memcpy(sets, a->sets, (size_t)ns * sizeof *sets);
    int nk = split_assign(key, v, kv);
    if (nk < 0) {
        fprintf(stderr, "servesim: sweep value '%s' does not give one value per key of '%s' "
                        "(join keys and values with '+')\n", v, key);
        return -1;
    }
    for (int q = 0; q < nk; q++) sets[ns++] = kv[q];
    sets[ns++] = clear;
    return ns;
}

/* Loads the scenario and builds the deployment for every sweep value
 * before the first run, so a bad value fails the sweep before anything is
 * simulated or stored. 0, or EXIT_USAGE / 1 with the message printed. */
static int sweep_check(const run_args *a, const char *key, char **values, int n)
{
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return 1;
    int worst = 0;
    for (int i = 0; i < n && !worst; i++) {
        const char *sets[MAX_SETS + SWEEP_MAX_KEYS + 1];
        char kv[SWEEP_MAX_KEYS][1400], clear[] = "sweep.key=";
        int ns = sweep_sets(a, key, values[i], sets, kv, clear);
        sim_err err = {{0}};
        sim_cluster *cl = NULL;
        int rc;
        if (ns < 0) {
            worst = EXIT_USAGE;
        } else if ((rc = sim_loader_load_file(a->path, sets, ns, sc, &err)) < 0) {
            fprintf(stderr, "servesim: sweep value %s=%s: %s\n", key, values[i], err.msg);
            worst = EXIT_USAGE;
        } else if ((rc = sim_cluster_create(sc, &cl, &err)) < 0) {
            char what[1500];
            snprintf(what, sizeof what, "sweep value %.200s=%.1200s: ", key, values[i]);
            print_build_error(what, a->path, sets, ns, &err);
            worst = rc == SIM_ENOTSUP || rc == SIM_ENOMEM ? 1 : EXIT_USAGE;
        }
        sim_cluster_destroy(cl);
    }
    free(sc);
    if (worst) fprintf(stderr, "servesim: sweep not started: every value is checked before the first run\n");
    return worst;
}

/* Runs the scenario once per sweep value and prints one comparison table
 * (or a JSON array). Every run lands in the results DB with its value. */
static int run_sweep(const run_args *a, const char *key, const char *values)
{
    char *vals = strdup(values), *vlist[1024];
    sim_store *st = NULL;
    int worst = 0, n = 0;
    char stored[1100] = "";
    if (!vals) return 1;
    int nv = sweep_values(vals, vlist, (int)(sizeof vlist / sizeof vlist[0]));
    if (nv <= 0) {
        fprintf(stderr, "servesim: --sweep %s: %s\n", key, nv < 0 ? "too many values (at most 1024)" : "no values");
        free(vals);
        return EXIT_USAGE;
    }
    if ((worst = sweep_check(a, key, vlist, nv)) != 0) {
        free(vals);
        return worst;
    }
    if (a->json) printf("[\n");
    else {
        printf("sweep over %s (%s)\n\n", key, a->path);
        printf("%-14s %9s %9s %9s %9s %8s %8s %10s %7s %9s %7s %7s %6s\n", key[0] ? "value" : "", "req/s",
               "goodput", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "tok/s/GPU", "util", "batch",
               "preempt", "hit", "loadCV");
    }
    for (int vi = 0; vi < nv; vi++) {
        const char *v = vlist[vi];
        const char *sets[MAX_SETS + SWEEP_MAX_KEYS + 1];
        char kv[SWEEP_MAX_KEYS][1400], clear[] = "sweep.key=";
        int ns = sweep_sets(a, key, v, sets, kv, clear);
        if (ns < 0) {
            worst = EXIT_USAGE;
            break;
        }
        sim_summary sum;
        memset(&sum, 0, sizeof sum);
        int rc = run_one(a, sets, ns, 0, &st, &sum, NULL, 0, stored, sizeof stored);
        if (rc == EXIT_USAGE) {
            worst = rc;
            break;
        }
        if (rc > worst) worst = rc;
        if (a->json) {
            printf("%s{\"key\": ", n ? ",\n" : "");
            sim_json_string(stdout, key);
            fputs(", \"value\": ", stdout);
            sim_json_string(stdout, v);
            printf(", \"status\": %d, \"summary\":\n", rc);
            sim_summary_print_json(stdout, &sum);
            printf("}");
        } else {
            print_sweep_row(v, &sum, rc);
        }
        fflush(stdout);
        n++;
    }
    if (a->json) printf("\n]\n");
    else if (st) printf("\nresults: all %d runs stored in %s\n", n, stored);
    sim_store_close(st);
    free(vals);
    return worst;
}

/* Plots of the runs just stored (run --out DIR). */
static int draw_plots(const run_args *a, int sweep)
{
    static const sim_plot_kind sweep_kinds[] = {SIM_PLOT_SWEEP, SIM_PLOT_THROUGHPUT_LATENCY, SIM_PLOT_CDF};
    static const sim_plot_kind run_kinds[] = {SIM_PLOT_CDF, SIM_PLOT_TIMELINE};
    const sim_plot_kind *kinds = sweep ? sweep_kinds : run_kinds;
    int n = sweep ? 3 : 2, rc = 0;
    for (int i = 0; i < n; i++) {
        char out[1200], name[400];
        snprintf(name, sizeof name, "%s-%s.png", a->stem, sim_plot_kind_name(kinds[i]));
        sim_file_join(out, sizeof out, a->out_dir, name);
        sim_plot_opts o = {.kind = kinds[i], .db = a->db, .out = out};
        sim_err err = {{0}};
        if (sim_plot_make(&o, &err) < 0) {
            fprintf(stderr, "servesim: plot %s: %s\n", out, err.msg);
            rc = 1;
        } else if (!a->json) {
            printf("plot: %s\n", out);
        }
    }
    return rc;
}

/* run --out DIR: the folder made (not with --no-db: its plots draw from the
 * results DB). -1 to go on, else the exit code. */
static int run_out_dir(const run_args *a)
{
    if (!a->out_dir) return -1;
    if (a->no_db) {
        fprintf(stderr, "servesim: --out draws from the results DB; drop --no-db\n");
        return EXIT_USAGE;
    }
    if (mkdir(a->out_dir, 0777) < 0 && errno != EEXIST) {
        fprintf(stderr, "servesim: --out %s: %s\n", a->out_dir, strerror(errno));
        return 1;
    }
    return -1;
}

/* The scenario's stem (naming the --out files and DB) and the sweep: the
 * one --sweep gives, else the scenario's own; a sweep excludes --trace, and
 * --jobs needs --replications. -1 to go on, else the exit code. */
static int run_sweep_spec(run_args *a, char *key, size_t kl, char *values, size_t vl)
{
    /* The scenario (its name names the --out files; it may declare a sweep). */
    sim_scenario *sc0 = malloc(sizeof *sc0);
    sim_err err0 = {{0}};
    if (!sc0) return 1;
    if (sim_loader_load_file(a->path, a->sets, a->n_sets, sc0, &err0) < 0) {
        fprintf(stderr, "servesim: %s\n", err0.msg);
        free(sc0);
        return EXIT_USAGE;
    }
    sim_file_stem(a->stem, sizeof a->stem, sc0->name);
    if (!a->sweep) {
        /* The sweep may be declared in the scenario itself. */
        snprintf(key, kl, "%s", sc0->sweep.key);
        snprintf(values, vl, "%s", sc0->sweep.values);
    }
    free(sc0);
    if (a->out_dir && !a->db) {
        char name[300];
        snprintf(name, sizeof name, "%s.db", a->stem);
        sim_file_join(a->out_db, sizeof a->out_db, a->out_dir, name);
        a->db = a->out_db;
    }
    if (a->sweep) {
        const char *eq = strchr(a->sweep, '=');
        if (!eq || eq == a->sweep || !eq[1]) {
            fprintf(stderr, "servesim: --sweep needs key.path=v1,v2,...\n");
            return EXIT_USAGE;
        }
        snprintf(key, kl, "%.*s", (int)(eq - a->sweep), a->sweep);
        snprintf(values, vl, "%s", eq + 1);
    } else if (key[0] && !values[0]) {
        fprintf(stderr, "servesim: %s: sweep.key '%s' is set but sweep.values is empty\n", a->path, key);
        return EXIT_USAGE;
    }
    if (key[0] && a->trace) {
        fprintf(stderr, "servesim: --trace records one run: not with a sweep (add --set sweep.key= or drop --sweep)\n");
        return EXIT_USAGE;
    }
    if (a->jobs && !a->replications) {
        fprintf(stderr, "servesim: --jobs runs replications in parallel: give --replications N too\n");
        return EXIT_USAGE;
    }
    return -1;
}

static int cmd_run(int argc, char **argv)
{
    run_args a;
    int prc = parse_run_args(argc, argv, usage_run, 1, &a);
    if (prc) return prc > 0 ? 0 : EXIT_USAGE;
    char key[256] = "", values[1024] = "";
    if ((prc = run_out_dir(&a)) >= 0 || (prc = run_sweep_spec(&a, key, sizeof key, values, sizeof values)) >= 0)
        return prc;
    if (a.replications) {
        const char *clash = key[0] ? (a.sweep ? "--sweep" : "a sweep (add --set sweep.key=)") : a.trace ? "--trace"
                            : a.out_dir ? "--out" : NULL;
        if (clash) {
            fprintf(stderr, "servesim: --replications stores intervals over runs, not the runs: not with %s\n",
                    clash);
            return EXIT_USAGE;
        }
        sim_cli_replications_args ra = {.path = a.path, .sets = a.sets, .n_sets = a.n_sets, .n = a.replications,
                                        .jobs = a.jobs, .json = a.json, .db = a.db, .no_db = a.no_db};
        return sim_cli_replications(&ra);
    }
    if (key[0]) {
        int rc = run_sweep(&a, key, values);
        if (a.out_dir && rc != EXIT_USAGE && draw_plots(&a, 1) && rc == 0) rc = 1;
        return rc;
    }
    sim_store *st = NULL;
    sim_summary sum;
    int rc = run_one(&a, a.sets, a.n_sets, 1, &st, &sum, NULL, 0, NULL, 0);
    sim_store_close(st);
    if (a.out_dir && rc != EXIT_USAGE && rc != 1 && draw_plots(&a, 0) && rc == 0) rc = 1;
    return rc;
}

static int cmd_validate(int argc, char **argv)
{
    run_args a;
    int prc = parse_run_args(argc, argv, usage_validate, 0, &a);
    if (prc) return prc > 0 ? 0 : EXIT_USAGE;
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_cluster *cl = NULL;
    int exit_code = EXIT_USAGE, rc;
    if (!sc) return 1;
    if ((rc = sim_loader_load_file(a.path, a.sets, a.n_sets, sc, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        goto out;
    }
    if ((rc = sim_cluster_create(sc, &cl, &err)) < 0) {
        print_build_error("", a.path, a.sets, a.n_sets, &err);
        if (rc == SIM_ENOTSUP) exit_code = 1;
        goto out;
    }
    char desc[512];
    sim_cluster_describe(cl, desc, sizeof desc);
    printf("%s: valid — '%s': %s\n", a.path, sc->name, desc);
    exit_code = 0;
out:
    sim_cluster_destroy(cl);
    free(sc);
    return exit_code;
}

int sim_cli_main(int argc, char **argv)
{
    if (argc < 2 || is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "validate") == 0) return cmd_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "search") == 0) return sim_cli_search(argc - 1, argv + 1);
    if (strcmp(cmd, "sensitivity") == 0) return sim_cli_sensitivity(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0) return sim_cli_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "estimate") == 0) return sim_cli_estimate(argc - 1, argv + 1);
    if (strcmp(cmd, "init") == 0) return sim_cli_init(argc - 1, argv + 1);
    if (strcmp(cmd, "predict") == 0) return sim_cli_predict(argc - 1, argv + 1);
    if (strcmp(cmd, "model") == 0) return model_cli_model(argc - 1, argv + 1);
    if (strcmp(cmd, "fidelity") == 0) return sim_cli_fidelity(argc - 1, argv + 1);
    if (strcmp(cmd, "op") == 0) return model_cli_op(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0) return sim_cli_calibrate(argc - 1, argv + 1);
    if (strcmp(cmd, "db") == 0) return sim_cli_db(argc - 1, argv + 1);
    if (strcmp(cmd, "cache-replay") == 0) return sim_cli_cache_replay(argc - 1, argv + 1);
    if (strcmp(cmd, "schema") == 0) {
        if (argc > 2 && is_help(argv[2])) {
            fputs(usage_schema, stdout);
            return 0;
        }
        if (argc > 2) {
            fprintf(stderr, "servesim schema: unexpected argument '%s'\n%s", argv[2], usage_schema);
            return EXIT_USAGE;
        }
        sim_loader_write_reference(stdout);
        return 0;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        if (argc > 2 && is_help(argv[2])) {
            puts("usage: servesim version\n\nPrints the servesim version.");
            return 0;
        }
        if (argc > 2) {
            fprintf(stderr, "servesim version: unexpected argument '%s'\nusage: servesim version\n", argv[2]);
            return EXIT_USAGE;
        }
        printf("servesim %s\n", SERVESIM_VERSION);
        return 0;
    }
    static const char *const verbs[] = {"run", "validate", "search", "sensitivity", "plot", "estimate", "init", "predict", "model",
                                        "fidelity", "op", "calibrate", "db", "cache-replay", "schema", "version"};
    const char *near = sim_suggest(cmd, verbs, sizeof verbs / sizeof verbs[0]);
    if (near) {
        fprintf(stderr, "servesim: unknown command '%s' (did you mean '%s'?); `servesim --help` lists them\n", cmd, near);
        return EXIT_USAGE;
    }
    fprintf(stderr, "servesim: unknown command '%s'\n%s", cmd, usage_main);
    return EXIT_USAGE;
}
