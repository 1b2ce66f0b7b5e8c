/* sim_cli_search — `servesim search` (see sim_cli_search.h): loads the
 * scenario, runs the search (threads; MPI ranks under mpirun when built
 * with MPI), prints the tables or JSON and, with --out DIR, writes the
 * recommended scenario, launch commands, CSV/JSON and plots there. */
#include "sim_cli_search.h"
#include "sim_search.h"
#include "sim_clock.h"

#include "sim_file.h"
#include "sim_loader.h"
#include "sim_parse.h"
#include "sim_search_impl.h"
#include "sim_cluster.h"
#include "sim_plot.h"
#include "sim_store.h"
#include "sim_suggest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MAX_SETS 256

static const char *usage =
    "usage: servesim search SCENARIO.yaml [--set key.path=value ...] [--out DIR] [--db FILE | --no-db]\n"
    "                       [--threads N] [--no-prune] [--top K] [--rate R] [--format png|svg]\n"
    "                       [--no-perf-db] [--replications N] [--json] [--quiet]\n"
    "\n"
    "Searches deployments of the scenario's model for the one that serves its workload under\n"
    "its SLO with the most goodput per GPU (or lowest cost per token when search.prices are\n"
    "given): modes, layouts, xPyD / A:F ratios, scheduler caps and routing lambda from the\n"
    "scenario's `search:` block (see `servesim schema`), defaults for the model otherwise.\n"
    "  --out DIR        write recommended.yaml, launch-{vllm,sglang,trtllm}.sh, dynamo.yaml,\n"
    "                   llm-d-values.yaml, candidates.csv, search.json and plots (pareto, throughput-latency, cdf, timeline) there;\n"
    "                   the results DB defaults to DIR/search.db\n"
    "  --db FILE        store every simulation in this results DB (default: output.db)\n"
    "  --no-db          store nothing\n"
    "  --threads N      worker threads (default: search.threads, else one per core)\n"
    "  --no-prune       simulate every feasible candidate (brute force)\n"
    "  --no-perf-db     price every candidate with the analytic roofline (hardware.perf_db=none),\n"
    "                   so candidates on GPUs with and without measured data compare alike\n"
    "  --top K          runners-up to list (search.top_k)\n"
    "  --rate R         evaluate every candidate at R req/s instead of finding its max (search.rate)\n"
    "  --replications N re-run the top deployments with N independent seeds at their rates: the\n"
    "                   ranking follows the means, overlapping 95 % intervals are reported as\n"
    "                   statistically indistinguishable (search.replications)\n"
    "  --format F       plot format png (default) or svg\n"
    "  --json           print the result as one JSON object\n"
    "Under `mpirun -np N` (servesim built with MPI) the candidates are spread over the ranks\n"
    "and rank 0 reports: the answer is the same as one process.\n"
    "A progress bar on stderr shows candidates decided/left and the best so far; with --out the\n"
    "partial candidates.csv and search.txt are rewritten as it goes. Ctrl-C stops it: the table of\n"
    "what was evaluated is printed and written, marked INCOMPLETE (a second Ctrl-C ends at once).\n"
    "Exit status: 0 a deployment meets the SLO, 1 none does or the search failed, 2 bad input,\n"
    "130 interrupted (the partial results were printed).\n";

/* Ctrl-C: the first SIGINT asks the search to stop (the handler restores
 * the default action, so a second one ends the process). A signal handler
 * can only reach a file-scope flag. */
static volatile sig_atomic_t interrupt_flag;

static void on_sigint(int sig)
{
    (void)sig;
    interrupt_flag = 1;
    signal(SIGINT, SIG_DFL);
}

typedef struct {
    double start, last, last_partial;
    int drawn, show, tty, finished;
    const char *out_dir;     /* partial candidates.csv / search.txt written here after each wave */
} progress_state;

static int write_file(const char *dir, const char *name, int (*fn)(const sim_search *, int32_t, FILE *, sim_err *),
                      const sim_search *s, int32_t i, char *path, size_t pl, sim_err *err);
static int w_csv(const sim_search *s, int32_t i, FILE *f, sim_err *err);
static int w_tables(const sim_search *s, int32_t i, FILE *f, sim_err *err);

/* A bar with candidates decided/left and the best so far: redrawn in place
 * on a terminal (at most 5 times a second), a line every 10 s otherwise. */
static void progress(void *ctx, const sim_search *s, const sim_search_progress *p)
{
    progress_state *ps = ctx;
    double now = sim_wall_s();
    if (p->wave_end && ps->out_dir && (now - ps->last_partial >= 2 || p->done == p->total)) {
        char path[4096];
        sim_err err = {{0}};
        ps->last_partial = now;
        if (write_file(ps->out_dir, "candidates.csv", w_csv, s, 0, path, sizeof path, &err) < 0 ||
            write_file(ps->out_dir, "search.txt", w_tables, s, 0, path, sizeof path, &err) < 0)
            ps->out_dir = NULL; /* reported when the final files are written */
    }
    if (!ps->show) return;
    if (ps->finished || (now - ps->last < (ps->tty ? 0.2 : 10) && p->done < p->total)) return;
    ps->finished = p->done == p->total;
    ps->last = now;
    char bar[25];
    int fill = p->total > 0 ? (int)(24 * p->done / p->total) : 24;
    for (int k = 0; k < 24; k++) bar[k] = k < fill ? '#' : '.';
    bar[24] = '\0';
    char best[96] = "best: none yet";
    if (p->best >= 0) {
        const sim_search_result *r = sim_search_result_get(s, p->best);
        snprintf(best, sizeof best, "best %.1f tok/s/GPU %.48s", r->goodput_per_gpu, sim_search_cand_get(s, p->best)->label);
    }
    fprintf(stderr, "%ssearch [%s] %lld/%lld decided, %lld left (%lld simulated, %lld pruned) %s, %.0f s%s",
            ps->tty ? "\r" : "", bar, (long long)p->done, (long long)p->total, (long long)(p->total - p->done),
            (long long)p->evaluated, (long long)p->pruned, best, now - ps->start, ps->tty ? "\033[K" : "\n");
    ps->drawn = ps->tty;
}

/* The scenario file as read, stored with the run (NULL when it cannot be
 * read again: the run is stored without it). */
static char *read_text(const char *path)
{
    char *text = NULL;
    if (sim_file_read_all(path, "scenario", SIM_FILE_MAX_TEXT, &text, NULL, NULL) < 0) return NULL;
    return text;
}

/* Launched by mpirun (OpenMPI, MPICH/PMI, PMIx)? */
static int mpi_launched(int *env_rank)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    if (!r) r = getenv("PMIX_RANK");
    *env_rank = r ? atoi(r) : 0;
    return r != NULL;
}

static int write_file(const char *dir, const char *name, int (*fn)(const sim_search *, int32_t, FILE *, sim_err *),
                      const sim_search *s, int32_t i, char *path, size_t pl, sim_err *err)
{
    if (sim_file_join(path, pl, dir, name) < 0) return sim_err_set(err, SIM_EINVAL, "--out %s: path too long", dir);
    FILE *f = fopen(path, "w");
    if (!f) return sim_err_set(err, SIM_EIO, "%s: %s", path, strerror(errno));
    int rc = fn(s, i, f, err);
    if (fclose(f) != 0 && rc == 0) rc = sim_err_set(err, SIM_EIO, "%s: write failed", path);
    return rc;
}

static int w_yaml(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return sim_search_write_yaml(s, i, f, err); }
static int w_launch(const sim_search *s, int32_t i, sim_launch_kind k, FILE *f, sim_err *err)
{
    return sim_search_write_launch(s, i, k, f, err);
}
static int w_launch_vllm(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return w_launch(s, i, SIM_LAUNCH_VLLM, f, err); }
static int w_launch_sglang(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return w_launch(s, i, SIM_LAUNCH_SGLANG, f, err); }
static int w_launch_trtllm(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return w_launch(s, i, SIM_LAUNCH_TRTLLM, f, err); }
static int w_launch_dynamo(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return w_launch(s, i, SIM_LAUNCH_DYNAMO, f, err); }
static int w_launch_llmd(const sim_search *s, int32_t i, FILE *f, sim_err *err) { return w_launch(s, i, SIM_LAUNCH_LLMD, f, err); }
static int w_csv(const sim_search *s, int32_t i, FILE *f, sim_err *err)
{
    (void)i;
    return sim_search_write_csv(s, f) < 0 ? sim_err_set(err, SIM_EIO, "writing candidates.csv failed") : 0;
}
static int w_json(const sim_search *s, int32_t i, FILE *f, sim_err *err)
{
    (void)i;
    int rc = sim_search_write_json(s, f);
    if (rc == SIM_ENOMEM) return sim_err_set(err, rc, "out of memory writing search.json");
    return rc < 0 ? sim_err_set(err, SIM_EIO, "writing search.json failed") : 0;
}
static int w_tables(const sim_search *s, int32_t i, FILE *f, sim_err *err)
{
    (void)i;
    (void)err;
    sim_search_print_tables(s, f);
    return 0;
}

static void make_plots(const char *dir, const char *db, const char *fmt, int quiet)
{
    static const sim_plot_kind kinds[] = {SIM_PLOT_PARETO, SIM_PLOT_THROUGHPUT_LATENCY, SIM_PLOT_CDF, SIM_PLOT_TIMELINE};
    if (!sim_plot_have_gnuplot(NULL)) {
        fprintf(stderr, "servesim: plots skipped: gnuplot not found (install the gnuplot-nox package)\n");
        return;
    }
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char out[4096], name[64];
        snprintf(name, sizeof name, "%s.%s", sim_plot_kind_name(kinds[k]), fmt);
        sim_file_join(out, sizeof out, dir, name);
        sim_plot_opts o = {.kind = kinds[k], .db = db, .out = out};
        sim_err err = {{0}};
        if (sim_plot_make(&o, &err) < 0)
            fprintf(stderr, "servesim: plot %s: %s\n", sim_plot_kind_name(kinds[k]), err.msg);
        else if (!quiet)
            printf("plot: %s\n", out);
    }
}

/* The command line of `servesim search`. */
typedef struct {
    const char *path, *out_dir, *db, *fmt;
    const char *sets[MAX_SETS + 5]; /* the --sets, then the flags that set keys (extra, --no-perf-db) */
    char extra[3][64];              /* --top, --rate, --replications as key=value */
    int n_sets, no_db, json, quiet, no_prune, threads, no_perf_db;
} search_args;

/* A flag this verb does not take, or one without its value: the message
 * (with a suggestion for a misspelt one) and EXIT_USAGE. */
static int bad_flag(const char *a, const char *v)
{
    static const char *const flags[] = {"--set", "--out", "--db", "--no-db", "--threads", "--no-prune",
                                        "--top", "--rate", "--format", "--no-perf-db", "--json", "--quiet",
                                        "--replications", "--help"};
    const char *near = sim_suggest(a, flags, sizeof flags / sizeof flags[0]);
    int known = 0;
    for (size_t q = 0; q < sizeof flags / sizeof flags[0]; q++) known |= strcmp(flags[q], a) == 0;
    if (known && v) fprintf(stderr, "servesim: search: %s: invalid value '%s'\n%s", a, v, usage);
    else if (known) fprintf(stderr, "servesim: search: %s needs a value\n%s", a, usage);
    else sim_suggest_unknown(stderr, "search: ", "option", a, near, usage);
    return EXIT_USAGE;
}

/* A flag with a value at argv[*i] (v its value): 1 taken (*i moved past
 * the value), 0 not such a flag, or -EXIT_USAGE after the message. */
static int value_flag(search_args *a, const char *f, const char *v, int *i)
{
    int64_t x;
    double r;
    if (strcmp(f, "--set") == 0 && v && strchr(v, '=')) {
        if (a->n_sets == MAX_SETS) {
            fprintf(stderr, "servesim: too many --set options\n");
            return -EXIT_USAGE;
        }
        a->sets[a->n_sets++] = v;
    } else if (strcmp(f, "--out") == 0 && v) {
        a->out_dir = v;
    } else if (strcmp(f, "--db") == 0 && v) {
        a->db = v;
    } else if (strcmp(f, "--format") == 0 && v && (strcmp(v, "png") == 0 || strcmp(v, "svg") == 0)) {
        a->fmt = v;
    } else if (strcmp(f, "--replications") == 0 && v) {
        if (sim_parse_i64(v, &x) != SIM_PARSE_OK || x < 2 || x > 10000) {
            fprintf(stderr, "servesim: search: --replications: expected an integer 2..10000, got '%s'\n", v);
            return -EXIT_USAGE;
        }
        snprintf(a->extra[2], sizeof a->extra[2], "search.replications=%lld", (long long)x);
    } else if ((strcmp(f, "--threads") == 0 || strcmp(f, "--top") == 0) && v) {
        long hi = strcmp(f, "--top") == 0 ? 100 : 1024;
        if (sim_parse_i64(v, &x) != SIM_PARSE_OK || x < 1 || x > hi) {
            fprintf(stderr, "servesim: search: %s: expected an integer 1..%ld, got '%s'\n", f, hi, v);
            return -EXIT_USAGE;
        }
        if (hi == 100) snprintf(a->extra[0], sizeof a->extra[0], "search.top_k=%ld", (long)x); /* added once, below */
        else a->threads = (int)x;
    } else if (strcmp(f, "--rate") == 0 && v) {
        if (sim_parse_double(v, &r) != SIM_PARSE_OK || !(r > 0)) {
            fprintf(stderr, "servesim: search: --rate: expected requests/s > 0, got '%s'\n", v);
            return -EXIT_USAGE;
        }
        snprintf(a->extra[1], sizeof a->extra[1], "search.rate=%.40s", v);
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

/* Parses the command line into a: -1 to go on, else the exit status
 * (--help: 0; a usage error: EXIT_USAGE, its message printed). */
static int search_parse_args(int argc, char **argv, search_args *a)
{
    memset(a, 0, sizeof *a);
    a->fmt = "png";
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int taken;
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if ((taken = value_flag(a, f, v, &i)) != 0) {
            if (taken < 0) return -taken;
        } else if (strcmp(f, "--no-db") == 0) {
            a->no_db = 1;
        } else if (strcmp(f, "--no-prune") == 0) {
            a->no_prune = 1;
        } else if (strcmp(f, "--no-perf-db") == 0) {
            a->no_perf_db = 1;
        } else if (strcmp(f, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(f, "--quiet") == 0) {
            a->quiet = 1;
        } else if (f[0] == '-') {
            return bad_flag(f, v);
        } else if (!a->path) {
            a->path = f;
        } else {
            fprintf(stderr, "servesim: search: unexpected argument '%s'\n%s", f, usage);
            return EXIT_USAGE;
        }
    }
    if (!a->path) {
        fprintf(stderr, "servesim: search: missing SCENARIO.yaml\n%s", usage);
        return EXIT_USAGE;
    }
    /* --top, --rate, --replications (the last of each wins) and --no-perf-db
     * after the --sets: at most four more than MAX_SETS, which sets has room for. */
    if (a->extra[0][0]) a->sets[a->n_sets++] = a->extra[0];
    if (a->extra[1][0]) a->sets[a->n_sets++] = a->extra[1];
    if (a->extra[2][0]) a->sets[a->n_sets++] = a->extra[2];
    if (a->no_perf_db) a->sets[a->n_sets++] = "hardware.perf_db=" SIM_PERF_DB_NONE;
    return -1;
}

/* The result on stdout: the JSON, or the tables with the recommendation. */
static int search_report(const sim_search *s, const search_args *a, int have, int32_t best, const char *dbpath)
{
    if (a->json) {
        int jrc = sim_search_write_json(s, stdout);
        if (jrc < 0) {
            fprintf(stderr, "servesim: %s\n", jrc == SIM_ENOMEM ? "out of memory writing the search result as JSON"
                                                                 : "writing the search result as JSON failed");
            return jrc;
        }
        return 0;
    }
    sim_search_print_tables(s, stdout);
    if (have) {
        printf("\nrecommended: %s\n\n", sim_search_cand_get(s, best)->label);
        if (!a->out_dir)
            printf("launch files: give --out DIR for launch-vllm.sh, launch-sglang.sh, launch-trtllm.sh, "
                   "dynamo.yaml and llm-d-values.yaml\n\n");
    }
    if (dbpath[0]) printf("results: every simulation stored in %s\n", dbpath);
    return 0;
}

/* --out DIR: candidates.csv, search.json and search.txt, and with a
 * recommendation its scenario and launch files. 0, or < 0 after the
 * message. */
static int search_write_files(const sim_search *s, const search_args *a, int have, int32_t best)
{
    char p[4096];
    sim_err err = {{0}};
    static const char *const what[] = {"every candidate, one row each", "the result as JSON", "the tables above"};
    static const char *const names[] = {"candidates.csv", "search.json", "search.txt"};
    int (*const fns[])(const sim_search *, int32_t, FILE *, sim_err *) = {w_csv, w_json, w_tables};
    int rc;
    for (int q = 0; q < 3; q++) {
        if ((rc = write_file(a->out_dir, names[q], fns[q], s, 0, p, sizeof p, &err)) < 0) goto fail;
        if (!a->json && !a->quiet) printf("wrote %s (%s)\n", p, what[q]);
    }
    if (!have) return 0;
    if ((rc = write_file(a->out_dir, "recommended.yaml", w_yaml, s, best, p, sizeof p, &err)) < 0) goto fail;
    if (!a->json) printf("recommended scenario: %s (servesim run accepts it)\n", p);
    int (*const lfns[SIM_LAUNCH_KINDS])(const sim_search *, int32_t, FILE *, sim_err *) = {
        w_launch_vllm, w_launch_sglang, w_launch_trtllm, w_launch_dynamo, w_launch_llmd};
    for (int k = 0; k < SIM_LAUNCH_KINDS; k++) {
        const char *nm = sim_launch_file_name((sim_launch_kind)k);
        if ((rc = write_file(a->out_dir, nm, lfns[k], s, best, p, sizeof p, &err)) < 0) goto fail;
        if (k <= SIM_LAUNCH_TRTLLM && chmod(p, 0755) < 0) {
            fprintf(stderr, "servesim: %s: %s\n", p, strerror(errno));
            return SIM_EIO;
        }
        if (!a->json)
            printf("launch file: %s (%s)\n", p,
                   k == SIM_LAUNCH_DYNAMO ? "Dynamo DynamoGraphDeployment, kubectl apply -f"
                   : k == SIM_LAUNCH_LLMD ? "llm-d-modelservice Helm values, helm install -f"
                                          : "starts the servers and the router: NODES=... NODE_RANK=k sh FILE");
    }
    return 0;
fail:
    fprintf(stderr, "servesim: %s\n", err.msg);
    return rc;
}

/* The results DB of the search (--db, output.db, or DIR/search.db under
 * --out; none with --no-db) into dbpath, opened on rank 0 (by the
 * launcher's environment) with the search begun in it. -1 to go on, else
 * the exit status after the message. */
static int search_open_store(const search_args *a, const sim_scenario *sc, int env_rank, sim_search *s,
                             char *dbpath, size_t dl, sim_store **st, int64_t *search_id, char **text)
{
    sim_err err = {{0}};
    if (!a->no_db) {
        if (a->db) snprintf(dbpath, dl, "%s", a->db);
        else if (sc->output.db[0]) snprintf(dbpath, dl, "%s", sc->output.db);
        else if (a->out_dir) sim_file_join(dbpath, dl, a->out_dir, "search.db");
    }
    /* Only rank 0 writes; under MPI the rank is known after the run starts,
     * so open lazily: every rank but 0 (by the launcher's environment) skips. */
    if (!dbpath[0] || env_rank != 0) return -1;
    int orc = sim_store_open(dbpath, st, &err);
    if (orc < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return orc == SIM_ENOMEM ? 1 : EXIT_USAGE; /* a bad --db / output.db path or file */
    }
    char note[1024];
    if (sim_store_search_note(*st, note, sizeof note)) fprintf(stderr, "servesim: note: %s\n", note);
    if (sim_store_search_begin(*st, a->path, search_id, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return 1;
    }
    *text = read_text(a->path);
    sim_search_set_store(s, *st, *text);
    return -1;
}

/* The search's end in the DB: stored complete, or (interrupted) left
 * 'running'; the final re-runs of the top candidates stored first. 0 or
 * < 0 after the message. */
static int search_close_store(sim_search *s, const sim_scenario *sc, const sim_search_stats *stats, sim_store *st,
                              const char *dbpath, int64_t *search_id)
{
    sim_err err = {{0}};
    if (stats->interrupted) {
        /* What was decided is printed and written; the DB's searches row
         * stays 'running' (not complete), and no final re-runs are made. */
        fprintf(stderr, "servesim: search interrupted: %lld of %lld candidates decided; the results below cover "
                        "those only%s%s%s\n",
                (long long)(stats->candidates - stats->undecided), (long long)stats->candidates,
                st ? " (the DB marks the search as not complete: " : "", st ? dbpath : "", st ? ")" : "");
        *search_id = 0;
    } else if (st && sim_search_store_final(s, sc->search.top_k, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return -1;
    }
    /* Every run is stored: only now does the DB say the search is complete. */
    if (st && *search_id > 0) {
        int erc = sim_store_search_end(st, *search_id, 1, &err);
        *search_id = 0;
        if (erc < 0) {
            fprintf(stderr, "servesim: %s\n", err.msg);
            return erc;
        }
    }
    return 0;
}

/* The plots under --out, drawn from the results DB (closed first, *st
 * NULL after, so that gnuplot's extraction reads it whole). */
static void search_plots(const search_args *a, const sim_search_stats *stats, int have, const char *dbpath,
                         sim_store **st)
{
    if (stats->interrupted) {
        fprintf(stderr, "servesim: plots skipped: the search was interrupted (no final runs to draw)\n");
    } else if (dbpath[0] && have) {
        sim_store_close(*st);
        *st = NULL;
        make_plots(a->out_dir, dbpath, a->fmt, a->quiet || a->json);
    } else if (!dbpath[0]) {
        fprintf(stderr, "servesim: plots skipped: they are drawn from the results DB (drop --no-db)\n");
    }
}

int sim_cli_search(int argc, char **argv)
{
    search_args a;
    int rc = search_parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    rc = 1;
    int env_rank = 0, use_mpi = mpi_launched(&env_rank);
#ifndef SERVESIM_HAVE_MPI
    if (use_mpi) {
        /* Without MPI every rank would repeat the whole search: rank 0 does it alone. */
        if (env_rank != 0) return 0;
        fprintf(stderr, "servesim: this build has no MPI support: rank 0 searches alone (rebuild with OpenMPI)\n");
        use_mpi = 0;
    }
#endif
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_search *s = NULL;
    sim_store *st = NULL;
    char *text = NULL, dbpath[4096] = "";
    int64_t search_id = 0;
    if (!sc) return 1;
    if (sim_loader_load_file(a.path, a.sets, a.n_sets, sc, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    progress_state ps = {.start = sim_wall_s(), .show = !a.quiet && !a.json, .tty = isatty(2), .out_dir = a.out_dir};
    sim_search_opts opts = {.threads = a.threads, .no_prune = a.no_prune, .use_mpi = use_mpi, .quiet = a.quiet,
                            .progress = progress, .progress_ctx = &ps, .stop = &interrupt_flag};
    interrupt_flag = 0;
    if (!use_mpi) signal(SIGINT, on_sigint);
    if (sim_search_create(sc, &opts, &s, &err) < 0) {
        if (sim_loader_locate_error(a.path, a.sets, a.n_sets, &err)) fprintf(stderr, "servesim: %s\n", err.msg);
        else fprintf(stderr, "servesim: search: %s: %s\n", a.path, err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (a.out_dir && mkdir(a.out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "servesim: --out %s: %s\n", a.out_dir, strerror(errno));
        rc = EXIT_USAGE;
        goto out;
    }
    int orc = search_open_store(&a, sc, env_rank, s, dbpath, sizeof dbpath, &st, &search_id, &text);
    if (orc >= 0) {
        rc = orc;
        goto out;
    }
    if (sim_search_run(s, &err) < 0) {
        if (ps.drawn) fputc('\n', stderr);
        fprintf(stderr, "servesim: search failed: %s\n", err.msg);
        goto out;
    }
    if (ps.drawn) fputc('\n', stderr);
    signal(SIGINT, SIG_DFL);
    sim_search_stats stats;
    sim_search_stats_get(s, &stats);
    if (stats.rank != 0) {
        rc = 0;
        goto out;
    }
    int32_t best = -1;
    int have = sim_search_ranking(s, &best, 1) > 0;
    if (search_close_store(s, sc, &stats, st, dbpath, &search_id) < 0 || search_report(s, &a, have, best, dbpath) < 0)
        goto out;
    if (a.out_dir) {
        if (search_write_files(s, &a, have, best) < 0) goto out;
        search_plots(&a, &stats, have, dbpath, &st);
    }
    rc = stats.interrupted ? 130 : have ? 0 : 1;
out:
    if (st && search_id > 0) sim_store_search_end(st, search_id, 0, NULL); /* stopped on an error */
    sim_search_destroy(s);
    sim_store_close(st);
    free(text);
    free(sc);
    if (use_mpi) sim_search_mpi_finish();
    return rc;
}
