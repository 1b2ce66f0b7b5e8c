/* sim_cli_sensitivity — see sim_cli_sensitivity.h. */
#include "sim_cli_sensitivity.h"

#include "calib_table_cache.h"
#include "model_op_family.h"
#include "sim_cluster.h"
#include "sim_headline.h"
#include "sim_loader.h"
#include "sim_parse.h"
#include "sim_pfor.h"
#include "sim_search.h"
#include "sim_suggest.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2
#define EXIT_OVERLOAD 3
#define SENS_MAX_SETS 256
#define SENS_MAX_SPEEDUPS 32

static const char *usage =
    "usage: servesim sensitivity SCENARIO.yaml --op FAMILY --speedup S1,S2,... [--set key.path=value ...]\n"
    "                            [--seed N] [--no-perf-db] [--search] [--jobs J] [--json]\n"
    "\n"
    "What a faster kernel is worth: runs the scenario as it is and once per speedup with\n"
    "every op of FAMILY taking 1/S of its priced time (hardware.op_speedup.FAMILY, on top\n"
    "of the scenario's own), and prints TTFT, TPOT and goodput per GPU of each run beside\n"
    "the base run's, with the change in percent (one JSON object with --json).\n"
    "  --op FAMILY        gemm, moe, attention, all_reduce, all_gather, reduce_scatter,\n"
    "                     all_to_all, send_recv or other ('-' works for '_')\n"
    "  --speedup LIST     comma-separated speedups > 0 (1 reproduces the base run exactly)\n"
    "  --search           also run the scenario's deployment search at every speedup and\n"
    "                     show whether the recommended deployment changes\n"
    "  --jobs J           runs (and search workers) in parallel (default one per CPU)\n"
    "  --set, --seed, --no-perf-db   as for `servesim run`\n"
    "Exit status: 0 ok, 1 a run failed, 2 bad usage or input, 3 some run overloaded.\n";

/* The figures the table shows, by sim_headline. */
static const sim_headline shown[] = {SIM_HL_TTFT_MEAN, SIM_HL_TTFT_P99, SIM_HL_TPOT_MEAN, SIM_HL_TPOT_P99,
                                     SIM_HL_GOODPUT_TOK_S_GPU, SIM_HL_SLO_ATTAINMENT};
#define N_SHOWN ((int)(sizeof shown / sizeof shown[0]))

typedef struct {
    double speedup;             /* 0: the base run */
    double v[SIM_HL_COUNT];
    int overloaded;
    int rc;
    char err[300];
    /* --search */
    int searched, have_best;
    char best[256];
    double best_score, best_rate;
    int32_t best_gpus;
} sens_point;

typedef struct {
    const sim_scenario *base;
    model_op_family fam;
    sens_point *pts;
    calib_table_cache *cache;
    int search, threads;
} sens_job;

/* The scenario of point p: the base with the family's speedup multiplied. */
static void point_scenario(const sens_job *j, const sens_point *p, sim_scenario *sc)
{
    *sc = *j->base;
    if (p->speedup > 0) sc->hardware.op_speedup[j->fam] *= p->speedup;
    sc->output.db[0] = '\0';
}

static void run_point(void *arg, int64_t i)
{
    sens_job *j = arg;
    sens_point *p = &j->pts[i];
    sim_scenario *sc = malloc(sizeof *sc);
    sim_summary sum;
    sim_err err = {{0}};
    if (!sc) {
        p->rc = SIM_ENOMEM;
        snprintf(p->err, sizeof p->err, "out of memory");
        return;
    }
    point_scenario(j, p, sc);
    p->rc = sim_cluster_simulate(sc, j->cache, &sum, NULL, &err);
    if (p->rc < 0) snprintf(p->err, sizeof p->err, "%.290s", err.msg);
    else {
        sim_headline_values(&sum, p->v);
        p->overloaded = sum.overloaded != 0;
    }
    free(sc);
}

/* The search at point p (its workers are the threads: points run one by one). */
static int search_point(const sens_job *j, sens_point *p, sim_err *err)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_search *s = NULL;
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    point_scenario(j, p, sc);
    sim_search_opts opts = {.threads = j->threads, .quiet = 1};
    int rc = sim_search_create(sc, &opts, &s, err);
    if (rc == 0) rc = sim_search_run(s, err);
    if (rc == 0) {
        int32_t best;
        p->searched = 1;
        if (sim_search_ranking(s, &best, 1) > 0) {
            const sim_search_result *r = sim_search_result_get(s, best);
            p->have_best = 1;
            snprintf(p->best, sizeof p->best, "%s", sim_search_cand_get(s, best)->label);
            p->best_score = r->score;
            p->best_rate = r->rate;
            p->best_gpus = sim_search_cand_get(s, best)->gpus;
        }
    }
    sim_search_destroy(s);
    free(sc);
    return rc;
}

static double change_pct(double v, double base)
{
    return isfinite(v) && isfinite(base) && base != 0 ? 100.0 * (v / base - 1.0) : NAN;
}

/* "base" or the speedup. */
static void point_name(const sens_point *p, char *buf, size_t len)
{
    if (p->speedup > 0) snprintf(buf, len, "%g", p->speedup);
    else snprintf(buf, len, "base");
}

static void print_table(const sens_job *j, int n, const char *path)
{
    const sens_point *b = &j->pts[0];
    printf("sensitivity of '%s' (%s) to the %s ops: each speedup divides their time\n\n", j->base->name, path,
           model_op_family_name(j->fam));
    printf("%-9s", "speedup");
    for (int k = 0; k < N_SHOWN; k++) printf(" %18s", sim_headline_label(shown[k]));
    printf("\n");
    for (int i = 0; i < n; i++) {
        const sens_point *p = &j->pts[i];
        char sp[32];
        point_name(p, sp, sizeof sp);
        printf("%-9s", sp);
        for (int k = 0; k < N_SHOWN; k++) {
            double v = p->v[shown[k]];
            if (!isfinite(v)) printf(" %18s", "-");
            else if (i == 0) printf(" %18.*f", shown[k] == SIM_HL_SLO_ATTAINMENT ? 4 : 2, v);
            else {
                char cell[64];
                snprintf(cell, sizeof cell, "%.*f (%+.1f%%)", shown[k] == SIM_HL_SLO_ATTAINMENT ? 4 : 2, v,
                         change_pct(v, b->v[shown[k]]));
                printf(" %18s", cell);
            }
        }
        printf("%s\n", p->overloaded ? "  OVERLOADED" : "");
    }
    if (!j->search) return;
    printf("\nsearch: the recommended deployment at each speedup\n");
    for (int i = 0; i < n; i++) {
        const sens_point *p = &j->pts[i];
        char sp[32];
        point_name(p, sp, sizeof sp);
        if (!p->have_best) {
            printf("%-9s no deployment meets the SLO\n", sp);
            continue;
        }
        int same = b->have_best && strcmp(p->best, b->best) == 0;
        printf("%-9s %s at %.3g req/s, score %.1f%s\n", sp, p->best, p->best_rate, p->best_score,
               i == 0 ? "" : same ? " (unchanged)" : " (CHANGED)");
    }
}

static json_t *search_json(const sens_point *p, const sens_point *b)
{
    if (!p->searched) return json_null();
    if (!p->have_best) return json_pack("{s:n}", "best");
    json_t *o = json_object();
    json_object_set_new(o, "best", json_string(p->best));
    json_object_set_new(o, "gpus", json_integer(p->best_gpus));
    json_object_set_new(o, "rate", json_real(p->best_rate));
    json_object_set_new(o, "score", json_real(p->best_score));
    json_object_set_new(o, "changed", json_boolean(!b->have_best || strcmp(p->best, b->best) != 0));
    return o;
}

static void print_json(const sens_job *j, int n)
{
    const sens_point *b = &j->pts[0];
    json_t *o = json_object(), *pts = json_array();
    json_object_set_new(o, "scenario", json_string(j->base->name));
    json_object_set_new(o, "family", json_string(model_op_family_name(j->fam)));
    json_t *base = json_object();
    json_object_set_new(base, "overloaded", json_boolean(b->overloaded));
    json_object_set_new(base, "figures", sim_headline_json(b->v));
    if (j->search) json_object_set_new(base, "search", search_json(b, b));
    json_object_set_new(o, "base", base);
    for (int i = 1; i < n; i++) {
        const sens_point *p = &j->pts[i];
        json_t *q = json_object();
        double ch[SIM_HL_COUNT];
        for (int h = 0; h < SIM_HL_COUNT; h++) ch[h] = change_pct(p->v[h], b->v[h]);
        json_object_set_new(q, "speedup", json_real(p->speedup));
        json_object_set_new(q, "overloaded", json_boolean(p->overloaded));
        json_object_set_new(q, "figures", sim_headline_json(p->v));
        json_object_set_new(q, "change_pct", sim_headline_json(ch));
        if (j->search) json_object_set_new(q, "search", search_json(p, b));
        json_array_append_new(pts, q);
    }
    json_object_set_new(o, "speedups", pts);
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    fputc('\n', stdout);
    json_decref(o);
}

/* Parses "1.2,1.5,2" into sp; returns the count or -1 (message printed). */
static int parse_speedups(const char *list, double *sp)
{
    char buf[1024];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        double x;
        if (n == SENS_MAX_SPEEDUPS) {
            fprintf(stderr, "servesim: sensitivity: --speedup: at most %d values\n", SENS_MAX_SPEEDUPS);
            return -1;
        }
        if (sim_parse_double(t, &x) != SIM_PARSE_OK || !(x > 0) || !isfinite(x)) {
            fprintf(stderr, "servesim: sensitivity: --speedup: expected numbers > 0, got '%s'\n", t);
            return -1;
        }
        sp[n++] = x;
    }
    if (n == 0) fprintf(stderr, "servesim: sensitivity: --speedup: no values\n");
    return n ? n : -1;
}

/* The command line of `servesim sensitivity`. */
typedef struct {
    const char *path, *op, *speedups;
    const char *sets[SENS_MAX_SETS + 2];
    char seed_set[64];
    int n_sets, json, search, jobs, no_perf_db;
} sens_args;

/* --op, --speedup, --set, --seed or --jobs with its value v: 0, or
 * EXIT_USAGE after the message. */
static int sens_value_flag(sens_args *s, const char *a, const char *v)
{
    if (!strcmp(a, "--op")) s->op = v;
    else if (!strcmp(a, "--speedup")) s->speedups = v;
    else if (!strcmp(a, "--set")) {
        if (!strchr(v, '=') || s->n_sets == SENS_MAX_SETS) {
            fprintf(stderr, "servesim: sensitivity: --set needs key.path=value (at most %d)\n", SENS_MAX_SETS);
            return EXIT_USAGE;
        }
        s->sets[s->n_sets++] = v;
    } else {
        int64_t x;
        int is_seed = a[3] == 'e';
        if (sim_parse_i64(v, &x) != SIM_PARSE_OK || x < (is_seed ? 0 : 1) || (!is_seed && x > 1024)) {
            fprintf(stderr, "servesim: sensitivity: %s: expected %s, got '%s'\n", a,
                    is_seed ? "a non-negative integer" : "an integer 1..1024", v);
            return EXIT_USAGE;
        }
        if (is_seed) snprintf(s->seed_set, sizeof s->seed_set, "seed=%lld", (long long)x);
        else s->jobs = (int)x;
    }
    return 0;
}

/* Parses the command line: -1 to go on, else the exit status. */
static int sens_parse(int argc, char **argv, sens_args *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            s->json = 1;
        } else if (!strcmp(a, "--search")) {
            s->search = 1;
        } else if (!strcmp(a, "--no-perf-db")) {
            s->no_perf_db = 1;
        } else if (!strcmp(a, "--op") || !strcmp(a, "--speedup") || !strcmp(a, "--set") || !strcmp(a, "--seed") ||
                   !strcmp(a, "--jobs")) {
            if (!v) {
                fprintf(stderr, "servesim: sensitivity: %s needs a value\n%s", a, usage);
                return EXIT_USAGE;
            }
            i++;
            int rc = sens_value_flag(s, a, v);
            if (rc) return rc;
        } else if (a[0] == '-') {
            static const char *const flags[] = {"--op", "--speedup", "--set", "--seed", "--jobs", "--json",
                                                "--search", "--no-perf-db", "--help"};
            const char *near = sim_suggest(a, flags, sizeof flags / sizeof flags[0]);
            sim_suggest_unknown(stderr, "sensitivity: ", "option", a, near, usage);
            return EXIT_USAGE;
        } else if (!s->path) {
            s->path = a;
        } else {
            fprintf(stderr, "servesim: sensitivity: unexpected argument '%s'\n%s", a, usage);
            return EXIT_USAGE;
        }
    }
    if (!s->path || !s->op || !s->speedups) {
        fprintf(stderr, "servesim: sensitivity: %s\n%s",
                !s->path ? "missing SCENARIO.yaml" : !s->op ? "missing --op FAMILY" : "missing --speedup LIST", usage);
        return EXIT_USAGE;
    }
    return -1;
}

int sim_cli_sensitivity(int argc, char **argv)
{
    sens_args s;
    int prc = sens_parse(argc, argv, &s);
    if (prc >= 0) return prc;
    int fam = model_op_family_from_name(s.op);
    if (fam < 0) {
        fprintf(stderr, "servesim: sensitivity: --op '%s': no such op family (valid: %s)\n", s.op,
                model_op_family_list());
        return EXIT_USAGE;
    }
    double sp[SENS_MAX_SPEEDUPS];
    int nsp = parse_speedups(s.speedups, sp);
    if (nsp < 0) return EXIT_USAGE;
    if (s.seed_set[0]) s.sets[s.n_sets++] = s.seed_set;
    if (s.no_perf_db) s.sets[s.n_sets++] = "hardware.perf_db=" SIM_PERF_DB_NONE;

    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sens_point pts[SENS_MAX_SPEEDUPS + 1];
    sens_job j = {.base = sc, .fam = (model_op_family)fam, .pts = pts, .search = s.search, .threads = s.jobs};
    int exit_code = 1;
    if (!sc) return 1;
    memset(pts, 0, sizeof pts);
    if (sim_loader_load_file(s.path, s.sets, s.n_sets, sc, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        exit_code = EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < nsp; i++) pts[i + 1].speedup = sp[i];
    if (calib_table_cache_create(&j.cache, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        goto out;
    }
    sim_pfor(nsp + 1, s.jobs, run_point, &j);
    for (int i = 0; i <= nsp; i++)
        if (pts[i].rc < 0) {
            fprintf(stderr, "servesim: sensitivity: %s run: %s\n", i ? "a speedup" : "the base", pts[i].err);
            exit_code = pts[i].rc == SIM_EINVAL ? EXIT_USAGE : 1;
            goto out;
        }
    for (int i = 0; s.search && i <= nsp; i++)
        if (search_point(&j, &pts[i], &err) < 0) {
            fprintf(stderr, "servesim: sensitivity: search: %s\n", err.msg);
            exit_code = 1;
            goto out;
        }
    if (s.json) print_json(&j, nsp + 1);
    else print_table(&j, nsp + 1, s.path);
    exit_code = 0;
    for (int i = 0; i <= nsp; i++)
        if (pts[i].overloaded) exit_code = EXIT_OVERLOAD;
    if (exit_code == EXIT_OVERLOAD) fprintf(stderr, "servesim: overload: some runs stopped on overload\n");
out:
    calib_table_cache_free(j.cache);
    free(sc);
    return exit_code;
}
