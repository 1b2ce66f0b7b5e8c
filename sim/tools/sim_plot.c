/* sim_plot — see sim_plot.h. Each kind writes gnuplot data blocks (one
 * block per series, its first line the quoted series title, blocks
 * separated by two blank lines so a template plots them with `index i` and
 * `title columnheader(1)`), then runs gnuplot on the template with the
 * file names and sizes passed as -e variables (argv, no shell). */
#include "sim_plot.h"
#include "sim_file.h"
#include "sim_store.h"
#include "sim_suggest.h"
#include "sim_yaml.h"
#include "sim_parse.h"

#include <jansson.h>
#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SERIES 16

static const char *const kind_names[] = {"cdf", "throughput-latency", "sweep", "pareto", "timeline"};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

const char *sim_plot_kind_name(sim_plot_kind k) { return (unsigned)k < N_KINDS ? kind_names[k] : "?"; }

int sim_plot_kind_parse(const char *name, sim_plot_kind *out)
{
    for (int i = 0; i < (int)N_KINDS; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (sim_plot_kind)i;
            return 0;
        }
    return SIM_EINVAL;
}

static const char *gnuplot_prog(const char *g)
{
    if (g) return g;
    const char *e = getenv("SERVESIM_GNUPLOT");
    return e && *e ? e : "gnuplot";
}

/* Runs argv with stdout/stderr into errfile (NULL = /dev/null); returns the exit status or -1. */
static int run_prog(char *const argv[], const char *errfile)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(errfile ? errfile : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int sim_plot_have_gnuplot(const char *gnuplot)
{
    char *argv[] = {(char *)gnuplot_prog(gnuplot), "--version", NULL};
    return run_prog(argv, NULL) == 0;
}

static int find_templates(const sim_plot_opts *o, const char *kind, char *dir, size_t len)
{
    char cand[5][PATH_MAX];
    int n = 0;
    if (o->templates) snprintf(cand[n++], PATH_MAX, "%s", o->templates);
    const char *env = getenv("SERVESIM_PLOTS");
    if (env && *env) snprintf(cand[n++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el > 0) {
        exe[el] = '\0';
        char *d = dirname(exe);
        snprintf(cand[n++], PATH_MAX, "%.*s/plots", PATH_MAX - 8, d);
        snprintf(cand[n++], PATH_MAX, "%.*s/../plots", PATH_MAX - 12, d);
    }
#ifdef SERVESIM_PLOTS_DIR
    snprintf(cand[n++], PATH_MAX, "%s", SERVESIM_PLOTS_DIR);
#endif
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%.4000s/%s.gp", cand[i], kind);
        if (access(p, R_OK) == 0) {
            snprintf(dir, len, "%.*s", (int)len - 1, cand[i]);
            return 0;
        }
    }
    return -1;
}

/* ---- database helpers --------------------------------------------------- */

typedef struct {
    int64_t id;
    char name[128];
    json_t *search;          /* params_json.search (owned), or NULL */
} run_row;

static void rows_free(run_row *r, int n)
{
    for (int i = 0; i < n; i++) json_decref(r[i].search);
    free(r);
}

/* All runs, oldest first, with their search params parsed. */
static int load_runs(sqlite3 *db, run_row **out, int *n_out, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int cap = 256, n = 0;
    run_row *r = malloc((size_t)cap * sizeof *r);
    if (!r) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    if (sqlite3_prepare_v2(db, "SELECT id, name, params_json FROM runs ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        free(r);
        return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            run_row *nr = realloc(r, (size_t)(cap *= 2) * sizeof *r);
            if (!nr) {
                sqlite3_finalize(st);
                rows_free(r, n);
                return sim_err_set(err, SIM_ENOMEM, "out of memory");
            }
            r = nr;
        }
        run_row *x = &r[n++];
        x->id = sqlite3_column_int64(st, 0);
        const char *nm = (const char *)sqlite3_column_text(st, 1);
        snprintf(x->name, sizeof x->name, "%s", nm ? nm : "");
        const char *pj = (const char *)sqlite3_column_text(st, 2);
        x->search = NULL;
        if (pj) {
            json_t *j = json_loads(pj, 0, NULL);
            json_t *s = j ? json_object_get(j, "search") : NULL;
            if (s) x->search = json_incref(s);
            json_decref(j);
        }
    }
    sqlite3_finalize(st);
    *out = r;
    *n_out = n;
    return 0;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

static double jnum(json_t *o, const char *k)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_number(v) ? json_number_value(v) : 0;
}

static int jtrue(json_t *o, const char *k)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_true(v);
}

/* The latest search session in the DB ("" when none). */
static const char *latest_session(const run_row *r, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (r[i].search) return jstr(r[i].search, "session");
    return "";
}

static double metric(sqlite3 *db, int64_t run, const char *name)
{
    sqlite3_stmt *st = NULL;
    double v = NAN;
    if (sqlite3_prepare_v2(db, "SELECT value FROM metrics WHERE run_id = ?1 AND name = ?2", -1, &st, NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int64_t count_rows(sqlite3 *db, const char *table, int64_t run)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id = ?1", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return 0;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* The SLO bounds a run was simulated with (0 = none): the scenario's
 * slo.ttft_ms / slo.tpot_ms, overridden by --set slo.*= in params_json. */
static void run_slo(sqlite3 *db, int64_t run, double *ttft, double *tpot)
{
    *ttft = *tpot = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT scenario_text, params_json FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        sim_yaml_node *root = NULL;
        if (text && sim_yaml_parse(text, strlen(text), "scenario", "scenario", &root, NULL) == 0 && root &&
            root->kind == SIM_YAML_MAP) {
            sim_yaml_pair *slo = sim_yaml_map_find(root, "slo");
            if (slo && slo->value->kind == SIM_YAML_MAP) {
                sim_yaml_pair *a = sim_yaml_map_find(slo->value, "ttft_ms"), *b = sim_yaml_map_find(slo->value, "tpot_ms");
                if (a && a->value->kind == SIM_YAML_SCALAR) *ttft = atof(a->value->text);
                if (b && b->value->kind == SIM_YAML_SCALAR) *tpot = atof(b->value->text);
            }
        }
        sim_yaml_free(root);
        const char *pj = (const char *)sqlite3_column_text(st, 1);
        json_t *j = pj ? json_loads(pj, 0, NULL) : NULL;
        json_t *sets = j ? json_object_get(j, "set") : NULL;
        for (size_t q = 0; json_is_array(sets) && q < json_array_size(sets); q++) {
            const char *v = json_string_value(json_array_get(sets, q));
            if (v && strncmp(v, "slo.ttft_ms=", 12) == 0) *ttft = atof(v + 12);
            if (v && strncmp(v, "slo.tpot_ms=", 12) == 0) *tpot = atof(v + 12);
        }
        json_decref(j);
    }
    sqlite3_finalize(st);
    if (!(*ttft > 0) || !isfinite(*ttft)) *ttft = 0;
    if (!(*tpot > 0) || !isfinite(*tpot)) *tpot = 0;
}

/* A run's --set values (sweep.key= and seed= left out) joined by '+' into
 * label, and their keys into key (either may be NULL). */
static void set_values(const char *params_json, char *label, size_t ll, char *key, size_t kl)
{
    if (label) label[0] = '\0';
    if (key) key[0] = '\0';
    json_t *j = params_json ? json_loads(params_json, 0, NULL) : NULL;
    json_t *sets = j ? json_object_get(j, "set") : NULL;
    size_t m = 0, mk = 0;
    for (size_t q = 0; json_is_array(sets) && q < json_array_size(sets); q++) {
        const char *v = json_string_value(json_array_get(sets, q));
        const char *eq = v ? strchr(v, '=') : NULL;
        if (!eq || strncmp(v, "sweep.key=", 10) == 0 || strncmp(v, "seed=", 5) == 0) continue;
        if (label && m < ll) m += (size_t)snprintf(label + m, ll - m, "%s%s", m ? "+" : "", eq + 1);
        if (key && mk < kl) mk += (size_t)snprintf(key + mk, kl - mk, "%s%.*s", mk ? "+" : "", (int)(eq - v), v);
    }
    json_decref(j);
}

/* The latest `run --sweep`: the last consecutive runs of one scenario name
 * whose params list "sweep.key=", oldest first, with their swept values as
 * labels and the swept key(s) in key. Returns how many (up to max). */
static int latest_sweep(sqlite3 *db, int64_t *ids, char labels[][128], int max, char *key, size_t kl, char *name,
                        size_t nl)
{
    sqlite3_stmt *st = NULL;
    if (key) key[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT id, name, params_json FROM runs WHERE params_json LIKE '%sweep.key=%' "
                               "ORDER BY id DESC", -1, &st, NULL) != SQLITE_OK)
        return 0;
    int64_t rid[64];
    char rl[64][128], name0[128] = "";
    int k = 0;
    int64_t prev = -1;
    while (sqlite3_step(st) == SQLITE_ROW && k < 64 && k < max) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *nm = (const char *)sqlite3_column_text(st, 1);
        if (k == 0) snprintf(name0, sizeof name0, "%s", nm ? nm : "");
        else if (strcmp(name0, nm ? nm : "") != 0 || id != prev - 1) break;
        prev = id;
        set_values((const char *)sqlite3_column_text(st, 2), rl[k], sizeof rl[k], k == 0 ? key : NULL, kl);
        rid[k++] = id;
    }
    sqlite3_finalize(st);
    for (int q = 0; q < k; q++) { /* oldest first: the order the values were given */
        ids[q] = rid[k - 1 - q];
        snprintf(labels[q], 128, "%s", rl[k - 1 - q][0] ? rl[k - 1 - q] : "?");
    }
    if (name) snprintf(name, nl, "%s", name0);
    return k;
}

/* The pool of each instance of a run (instances are numbered pool by pool)
 * and the pools' role names, from its pools.N.instances/role metrics;
 * returns the number of pools (0 when the run predates them). */
static int run_pools(sqlite3 *db, int64_t run, int *first, char roles[][16], int max)
{
    int np = 0, next = 0;
    for (int p = 0; p < max; p++) {
        char nm[64];
        snprintf(nm, sizeof nm, "pools.%d.instances", p);
        double n = metric(db, run, nm);
        if (!(n >= 1)) break;
        snprintf(nm, sizeof nm, "pools.%d.role", p);
        double r = metric(db, run, nm);
        static const char *const names[] = {"colocated", "prefill", "decode", "attention", "ffn"};
        snprintf(roles[p], 16, "%s", r >= 0 && r <= 4 ? names[(int)r] : "pool");
        first[p] = next;
        next += (int)n;
        np++;
    }
    if (np < max) first[np] = next;
    return np;
}

/* Runs to draw for cdf/timeline: the ones given, else the latest search's
 * final runs (best first), else the runs of the latest sweep (cdf: labelled
 * by their values) when it is the latest run, else the latest run holding
 * `table` rows. */
static int pick_runs(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, const char *table, int max,
                     int64_t *ids, char titles[][160], char *sweep_key)
{
    int k = 0;
    if (o->n_runs > 0) {
        for (int i = 0; i < o->n_runs && k < max; i++) {
            ids[k] = o->runs[i];
            snprintf(titles[k++], 160, "run %lld", (long long)o->runs[i]);
        }
        for (int j = 0; j < k; j++)
            for (int i = 0; i < n; i++)
                if (r[i].id == ids[j]) {
                    snprintf(titles[j], 160, "run %lld %s", (long long)ids[j],
                             r[i].search ? jstr(r[i].search, "label") : r[i].name);
                }
        return k;
    }
    const char *sess = latest_session(r, n);
    for (int rank = 1; rank <= max && sess[0]; rank++)
        for (int i = n - 1; i >= 0; i--)
            if (r[i].search && jtrue(r[i].search, "final") && (int)jnum(r[i].search, "rank") == rank &&
                strcmp(jstr(r[i].search, "session"), sess) == 0 && count_rows(db, table, r[i].id) > 0) {
                ids[k] = r[i].id;
                snprintf(titles[k++], 160, "#%d %s", rank, jstr(r[i].search, "label"));
                break;
            }
    if (k == 0 && max > 1 && n > 0) {
        int64_t sid[SIM_PLOT_MAX_RUNS];
        char sl[SIM_PLOT_MAX_RUNS][128], key[256];
        int ns = latest_sweep(db, sid, sl, max < SIM_PLOT_MAX_RUNS ? max : SIM_PLOT_MAX_RUNS, key, sizeof key, NULL, 0);
        if (ns > 0 && sid[ns - 1] == r[n - 1].id)
            for (int q = 0; q < ns; q++)
                if (count_rows(db, table, sid[q]) > 0) {
                    ids[k] = sid[q];
                    snprintf(titles[k++], 160, "%.150s", sl[q]);
                    if (sweep_key) snprintf(sweep_key, 256, "%s", key);
                }
    }
    for (int i = n - 1; i >= 0 && k == 0; i--)
        if (count_rows(db, table, r[i].id) > 0) {
            ids[k] = r[i].id;
            snprintf(titles[k++], 160, "run %lld %s", (long long)r[i].id, r[i].name);
        }
    return k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- data writers, one per kind ----------------------------------------- */

static int data_cdf(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series,
                    char *title, size_t tl, sim_err *err)
{
    int64_t ids[8];
    char titles[8][160];
    char key[256] = "";
    int k = pick_runs(db, o, r, n, "requests", 8, ids, titles, key);
    if (key[0]) snprintf(title, tl, "Latency distribution over the sweep of %.200s", key);
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "no run with per-request rows (output.store_requests) in %s", o->db);
    static const char *const cols[] = {"ttft_ms", "tpot_ms"};
    for (int c = 0; c < 2; c++)
        for (int q = 0; q < k; q++) {
            char sql[128];
            sqlite3_stmt *st = NULL;
            snprintf(sql, sizeof sql, "SELECT %s FROM requests WHERE run_id = ?1 AND %s IS NOT NULL", cols[c], cols[c]);
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
            sqlite3_bind_int64(st, 1, ids[q]);
            size_t cap = 1024, m = 0;
            double *v = malloc(cap * sizeof *v);
            while (v && sqlite3_step(st) == SQLITE_ROW) {
                if (m == cap) {
                    double *nv = realloc(v, (cap *= 2) * sizeof *v);
                    if (!nv) {
                        free(v);
                        v = NULL;
                        break;
                    }
                    v = nv;
                }
                v[m++] = sqlite3_column_double(st, 0);
            }
            sqlite3_finalize(st);
            if (!v) return sim_err_set(err, SIM_ENOMEM, "out of memory");
            qsort(v, m, sizeof *v, cmp_double);
            quoted(f, titles[q]);
            fputs(" x\n", f);
            for (size_t i = 0; i < m; i++) fprintf(f, "%.6g %.6g\n", v[i], (double)(i + 1) / (double)m);
            if (m == 0) fputs("0 0\n", f);
            fputs("\n\n", f);
            free(v);
        }
    *series = k;
    return 0;
}

static int data_tl(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series, sim_err *err)
{
    /* Series: the latest search's top candidates (their probes), else runs
     * grouped by scenario name. */
    const char *sess = latest_session(r, n);
    int k = 0;
    if (sess[0]) {
        int64_t cand[MAX_SERIES];
        char title[MAX_SERIES][160];
        for (int rank = 1; rank <= 8; rank++)
            for (int i = n - 1; i >= 0; i--)
                if (r[i].search && jtrue(r[i].search, "final") && (int)jnum(r[i].search, "rank") == rank &&
                    strcmp(jstr(r[i].search, "session"), sess) == 0) {
                    cand[k] = (int64_t)jnum(r[i].search, "candidate");
                    snprintf(title[k++], 160, "#%d %s", rank, jstr(r[i].search, "label"));
                    break;
                }
        for (int q = 0; q < k; q++) {
            quoted(f, title[q]);
            fputs(" x y\n", f);
            /* probes in rate order */
            double pts[64][3];
            int np = 0;
            for (int i = 0; i < n && np < 64; i++)
                if (r[i].search && strcmp(jstr(r[i].search, "session"), sess) == 0 &&
                    (int64_t)jnum(r[i].search, "candidate") == cand[q] && metric(db, r[i].id, "overloaded") == 0) {
                    pts[np][0] = jnum(r[i].search, "rate");
                    pts[np][1] = metric(db, r[i].id, "ttft_ms.p90");
                    pts[np][2] = metric(db, r[i].id, "tpot_ms.p90");
                    np++;
                }
            qsort(pts, (size_t)np, sizeof pts[0], cmp_double);
            for (int i = 0; i < np; i++) fprintf(f, "%.6g %.6g %.6g \" \"\n", pts[i][0], pts[i][1], pts[i][2]);
            if (np == 0) fputs("0 0 0 \" \"\n", f);
            fputs("\n\n", f);
        }
    } else {
        /* The runs of each scenario name in the order they ran (a sweep: the
         * order of its values, e.g. 2+6 ... 6+2), each point labelled by its
         * --set values. */
        char names[MAX_SERIES][128];
        for (int i = 0; i < n && k < MAX_SERIES; i++) {
            int seen = 0;
            for (int q = 0; q < k; q++) seen |= strcmp(names[q], r[i].name) == 0;
            if (!seen) snprintf(names[k++], 128, "%s", r[i].name);
        }
        sqlite3_stmt *pst = NULL;
        if (sqlite3_prepare_v2(db, "SELECT params_json FROM runs WHERE id = ?1", -1, &pst, NULL) != SQLITE_OK)
            return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
        for (int q = 0; q < k; q++) {
            quoted(f, names[q]);
            fputs(" x y label\n", f);
            int np = 0;
            for (int i = 0; i < n && np < 256; i++)
                if (strcmp(r[i].name, names[q]) == 0) {
                    char label[128] = "";
                    sqlite3_reset(pst);
                    sqlite3_bind_int64(pst, 1, r[i].id);
                    if (sqlite3_step(pst) == SQLITE_ROW)
                        set_values((const char *)sqlite3_column_text(pst, 0), label, sizeof label, NULL, 0);
                    fprintf(f, "%.6g %.6g %.6g ", metric(db, r[i].id, "throughput.req_per_s"),
                            metric(db, r[i].id, "ttft_ms.p90"), metric(db, r[i].id, "tpot_ms.p90"));
                    quoted(f, label[0] ? label : " ");
                    fputc('\n', f);
                    np++;
                }
            fputs("\n\n", f);
        }
        sqlite3_finalize(pst);
    }
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "no runs in %s", o->db);
    *series = k;
    return 0;
}

static int is_number(const char *v)
{
    double x;
    return sim_parse_double(v, &x) == SIM_PARSE_OK;
}

static int data_sweep(sqlite3 *db, const sim_plot_opts *o, FILE *f, int *series, char *extra, size_t el,
                      sim_err *err)
{
    /* The latest sweep (x = its values: numeric when they all are numbers,
     * else one tick per value), and every pool's utilisation. */
    int64_t ids[64];
    char labels[64][128], key[256], name0[128];
    int k = latest_sweep(db, ids, labels, 64, key, sizeof key, name0, sizeof name0);
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "no sweep runs in %s (run `servesim run --sweep ...` with a DB)", o->db);
    int numeric = 1;
    for (int q = 0; q < k; q++) numeric &= is_number(labels[q]);
    int first[SIM_PLOT_MAX_RUNS + 1];
    char roles[SIM_PLOT_MAX_RUNS][16];
    int np = run_pools(db, ids[k - 1], first, roles, 4);
    quoted(f, name0);
    fputs(" label goodput tokgpu ttft tpot", f);
    for (int p = 0; p < np; p++) fprintf(f, " util%d", p);
    fputc('\n', f);
    for (int q = 0; q < k; q++) {
        if (numeric) fprintf(f, "%.9g ", atof(labels[q]));
        else fprintf(f, "%d ", q);
        quoted(f, labels[q]);
        fprintf(f, " %.6g %.6g %.6g %.6g", metric(db, ids[q], "goodput_req_per_s"),
                metric(db, ids[q], "throughput.output_tokens_per_s_per_gpu"), metric(db, ids[q], "ttft_ms.p90"),
                metric(db, ids[q], "tpot_ms.p90"));
        for (int p = 0; p < np; p++) {
            char nm[64];
            snprintf(nm, sizeof nm, "pools.%d.utilization", p);
            double u = metric(db, ids[q], nm);
            fprintf(f, " %.6g", isfinite(u) ? u : NAN);
        }
        fputc('\n', f);
    }
    char pn[128] = "";
    size_t m = 0;
    for (int p = 0; p < np && m < sizeof pn; p++)
        m += (size_t)snprintf(pn + m, sizeof pn - m, "%s%s", p ? " " : "", roles[p]);
    for (char *c = key; *c; c++)
        if (*c == '\'' || *c == '"' || *c == '\\') *c = ' ';
    snprintf(extra, el, "numeric=%d; sweep_key='%s'; npools=%d; pool_names='%s'; ", numeric, key, np, pn);
    *series = 1;
    return 0;
}

typedef struct {
    double x, y, ttft;
    char label[160];
    char mode[16];
    int rec;                 /* the recommended candidate: first on a frontier among ties */
} ppoint;

/* x ascending (the frontier is scanned from the right: the recommended one last among ties). */
static int cmp_ppoint(const void *a, const void *b)
{
    const ppoint *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : p->rec - q->rec;
}

/* TTFT ascending (scanned from the left: the recommended one first among ties). */
static int cmp_ppoint_ttft(const void *a, const void *b)
{
    const ppoint *p = a, *q = b;
    return p->ttft < q->ttft ? -1 : p->ttft > q->ttft ? 1 : q->rec - p->rec;
}

/* The deployment part of a candidate label ("pd 12P tp2 + 2D tp4"), quoted;
 * blank when it repeats the previous frontier point's (prev keeps it). */
static void short_label(FILE *f, const char *label, char *prev, size_t pl)
{
    char b[160];
    snprintf(b, sizeof b, "%s", label);
    char *bar = strstr(b, " |");
    if (bar) *bar = '\0';
    quoted(f, strcmp(b, prev) == 0 ? " " : b);
    snprintf(prev, pl, "%s", b);
}

/* The recommended candidate's id: the search's rank-1 final run (by id:
 * candidates tied on score are told apart only by the search's ranking);
 * -1 when no final run is stored. */
static int64_t pareto_recommended(const run_row *r, int n, const char *sess)
{
    int64_t rec = -1;
    for (int i = n - 1; i >= 0 && rec < 0; i--)
        if (r[i].search && jtrue(r[i].search, "final") && (int)jnum(r[i].search, "rank") == 1 &&
            strcmp(jstr(r[i].search, "session"), sess) == 0)
            rec = (int64_t)jnum(r[i].search, "candidate");
    return rec;
}

/* The session's best-probe points into p (rec marks the recommended one);
 * *best is the recommended run's row (else the highest score's, -1 when
 * none). Returns how many. */
static int pareto_points(const run_row *r, int n, const char *sess, int64_t rec, ppoint *p, int *best_out)
{
    int m = 0, best = -1, by_id = -1;
    for (int i = 0; i < n; i++)
        if (r[i].search && jtrue(r[i].search, "best") && !jtrue(r[i].search, "final") &&
            strcmp(jstr(r[i].search, "session"), sess) == 0) {
            p[m].x = jnum(r[i].search, "tok_s_user");
            p[m].y = jnum(r[i].search, "goodput_per_gpu");
            p[m].ttft = jnum(r[i].search, "ttft_ms");
            snprintf(p[m].label, sizeof p[m].label, "%s", jstr(r[i].search, "label"));
            const char *md = jstr(r[i].search, "mode");
            if (!md[0]) { /* older DBs: the label starts with the mode */
                static const char *const modes[] = {"pd+af", "colocated", "pd", "af"};
                for (int q = 0; q < 4 && !md[0]; q++)
                    if (strncmp(p[m].label, modes[q], strlen(modes[q])) == 0) md = modes[q];
            }
            snprintf(p[m].mode, sizeof p[m].mode, "%s", md[0] ? md : "other");
            if (best < 0 || jnum(r[i].search, "score") > jnum(r[best].search, "score")) best = i;
            p[m].rec = (int64_t)jnum(r[i].search, "candidate") == rec;
            if (p[m].rec) by_id = i;
            m++;
        }
    if (by_id >= 0) best = by_id; /* else (no final runs stored): the highest score */
    else if (best >= 0)
        for (int i = 0; i < m; i++) p[i].rec = strcmp(p[i].label, jstr(r[best].search, "label")) == 0;
    *best_out = best;
    return m;
}

/* One data block per mode present: colocated and disaggregated told apart.
 * Returns how many. */
static int pareto_mode_blocks(FILE *f, const ppoint *p, int m)
{
    static const char *const mode_order[] = {"colocated", "pd", "af", "pd+af", "other"};
    int nmodes = 0;
    for (int q = 0; q < 5; q++) {
        int any = 0;
        for (int i = 0; i < m; i++) any |= strcmp(p[i].mode, mode_order[q]) == 0;
        if (!any) continue;
        fprintf(f, "\"%s\" x y ttft\n", mode_order[q]);
        for (int i = 0; i < m; i++)
            if (strcmp(p[i].mode, mode_order[q]) == 0) fprintf(f, "%.6g %.6g %.6g\n", p[i].x, p[i].y, p[i].ttft);
        fputs("\n\n", f);
        nmodes++;
    }
    return nmodes;
}

/* The two frontiers' blocks, against tokens/s per user and against TTFT
 * (p is sorted in place; fr has room for m points). */
static void pareto_frontiers(FILE *f, ppoint *p, int m, ppoint *fr)
{
    /* Frontier against tokens/s per user: from the fastest per-user speed
     * down, a point is on it when its goodput beats every faster point's. */
    qsort(p, (size_t)m, sizeof *p, cmp_ppoint);
    double top = -1;
    int nf = 0;
    for (int i = m - 1; i >= 0; i--)
        if (p[i].y > top) {
            top = p[i].y;
            fr[nf++] = p[i];
        }
    char prev[160] = "";
    fputs("\"Pareto frontier\" x y label\n", f);
    for (int i = nf - 1; i >= 0; i--) {
        fprintf(f, "%.6g %.6g ", fr[i].x, fr[i].y);
        short_label(f, fr[i].label, prev, sizeof prev);
        fputc('\n', f);
    }
    /* Frontier against TTFT: from the lowest TTFT up, on it when its goodput
     * beats every point with a lower TTFT. */
    qsort(p, (size_t)m, sizeof *p, cmp_ppoint_ttft);
    top = -1;
    nf = 0;
    for (int i = 0; i < m; i++)
        if (p[i].y > top) {
            top = p[i].y;
            fr[nf++] = p[i];
        }
    fputs("\n\n\"Pareto frontier (TTFT)\" ttft y label\n", f);
    prev[0] = '\0';
    for (int i = 0; i < nf; i++) {
        fprintf(f, "%.6g %.6g ", fr[i].ttft, fr[i].y);
        short_label(f, fr[i].label, prev, sizeof prev);
        fputc('\n', f);
    }
}

static int data_pareto(const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series, char *extra, size_t el,
                       sim_err *err)
{
    const char *sess = latest_session(r, n);
    if (!sess[0]) return sim_err_set(err, SIM_EINVAL, "no search runs in %s (run `servesim search` with a DB)", o->db);
    ppoint *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int64_t rec = pareto_recommended(r, n, sess);
    int best;
    int m = pareto_points(r, n, sess, rec, p, &best);
    if (m == 0) {
        free(p);
        return sim_err_set(err, SIM_EINVAL, "the latest search in %s has no candidate meeting the SLO", o->db);
    }
    int nmodes = pareto_mode_blocks(f, p, m);
    ppoint *fr = malloc((size_t)m * sizeof *fr);
    if (!fr) {
        free(p);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    pareto_frontiers(f, p, m, fr);
    fputs("\n\n\"recommended\" x y ttft\n", f);
    fprintf(f, "%.6g %.6g %.6g\n", jnum(r[best].search, "tok_s_user"), jnum(r[best].search, "goodput_per_gpu"),
            jnum(r[best].search, "ttft_ms"));
    free(fr);
    free(p);
    snprintf(extra, el, "nmodes=%d; ", nmodes);
    *series = nmodes + 3;
    return 0;
}

static int data_timeline(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series,
                         char *title, size_t tl, char *extra, size_t el, sim_err *err)
{
    int64_t id;
    char t[1][160];
    if (pick_runs(db, o, r, n, "instance_series", 1, &id, t, NULL) == 0)
        return sim_err_set(err, SIM_EINVAL, "no run with an instance time series in %s", o->db);
    snprintf(title, tl, "%s", t[0]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT instance, t_s, utilization, kv_occupancy FROM instance_series WHERE run_id = ?1 "
                               "AND instance < 16 ORDER BY instance, t_s", -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    /* Each instance titled with its pool's role; extra lists the roles so the
     * template draws prefill and decode pools apart. */
    int first[SIM_MAX_POOLS + 1];
    char roles[SIM_MAX_POOLS][16];
    int np = run_pools(db, id, first, roles, SIM_MAX_POOLS);
    int cur = -1, k = 0;
    size_t m = (size_t)snprintf(extra, el, "roles='");
    while (sqlite3_step(st) == SQLITE_ROW) {
        int inst = sqlite3_column_int(st, 0);
        if (inst != cur) {
            if (cur >= 0) fputs("\n\n", f);
            const char *role = "";
            for (int p = 0; p < np; p++)
                if (inst >= first[p] && inst < first[p + 1]) role = roles[p];
            if (role[0]) fprintf(f, "\"instance %d (%s)\" t u kv\n", inst, role);
            else fprintf(f, "\"instance %d\" t u kv\n", inst);
            if (m < el) m += (size_t)snprintf(extra + m, el - m, "%s%s", k ? " " : "", role[0] ? role : "-");
            cur = inst;
            k++;
        }
        fprintf(f, "%.6g %.6g %.6g\n", sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
                sqlite3_column_double(st, 3));
    }
    sqlite3_finalize(st);
    if (m < el) snprintf(extra + m, el - m, "'; ");
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "run %lld has no instance time series", (long long)id);
    *series = k;
    return 0;
}

/* ---- driver ------------------------------------------------------------- */

static void rm_tree(const char *dir, const char *const *files, int n)
{
    char p[PATH_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* Opens o->db read-only after checking it is a regular file holding a
 * results DB; *out NULL on failure. */
static int open_results_db(const sim_plot_opts *o, sqlite3 **out, sim_err *err)
{
    *out = NULL;
    FILE *probe = NULL;
    int prc = sim_file_open_regular(o->db, "results database", &probe, err);
    if (prc < 0) return sim_err_wrap(err, prc == SIM_EIO ? SIM_EINVAL : prc, "plot");
    fclose(probe);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(o->db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        int rc = sim_err_set(err, SIM_EIO, "plot: %s: %s", o->db, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 10000);
    int64_t ntab = 0;
    sqlite3_stmt *qs = NULL;
    int qrc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &qs, NULL);
    if (qrc == SQLITE_OK && sqlite3_step(qs) == SQLITE_ROW) ntab = sqlite3_column_int64(qs, 0);
    else qrc = SQLITE_NOTADB;
    sqlite3_finalize(qs);
    if (qrc != SQLITE_OK || ntab == 0 || (prc = sim_store_check_db(db, o->db, err)) < 0) {
        if (qrc != SQLITE_OK) prc = sim_err_set(err, SIM_EINVAL, "%s: not an SQLite database (%s)", o->db, sqlite3_errmsg(db));
        else if (ntab == 0) prc = sim_err_set(err, SIM_EINVAL, "%s: empty database: nothing to plot", o->db);
        sim_err_wrap(err, prc, "plot");
        sqlite3_close(db);
        return prc;
    }
    *out = db;
    return 0;
}

static int write_kind(sqlite3 *db, const sim_plot_opts *o, const run_row *rows, int n, FILE *f, int *series,
                      char *title, size_t tl, char *extra, size_t el, sim_err *err)
{
    extra[0] = '\0';
    switch (o->kind) {
    case SIM_PLOT_CDF: return data_cdf(db, o, rows, n, f, series, title, tl, err);
    case SIM_PLOT_THROUGHPUT_LATENCY: return data_tl(db, o, rows, n, f, series, err);
    case SIM_PLOT_SWEEP: return data_sweep(db, o, f, series, extra, el, err);
    case SIM_PLOT_PARETO: return data_pareto(o, rows, n, f, series, extra, el, err);
    case SIM_PLOT_TIMELINE: return data_timeline(db, o, rows, n, f, series, title, tl, extra, el, err);
    default: return sim_err_set(err, SIM_EINVAL, "plot: unknown kind");
    }
}

int sim_plot_write_data(const sim_plot_opts *o, FILE *f, sim_err *err)
{
    sqlite3 *db = NULL;
    run_row *rows = NULL;
    int n = 0, series = 0, rc;
    char title[256], extra[1024];
    if (!o->db) return sim_err_set(err, SIM_EINVAL, "plot: needs a results DB");
    if ((rc = open_results_db(o, &db, err)) < 0) return rc;
    if ((rc = load_runs(db, &rows, &n, err)) == 0)
        rc = write_kind(db, o, rows, n, f, &series, title, sizeof title, extra, sizeof extra, err);
    rows_free(rows, n);
    sqlite3_close(db);
    return rc;
}

int sim_plot_slo(const char *db, int64_t run, double *ttft, double *tpot, sim_err *err)
{
    sim_plot_opts o = {.db = db};
    sqlite3 *h = NULL;
    int rc = open_results_db(&o, &h, err);
    if (rc < 0) return rc;
    run_slo(h, run, ttft, tpot);
    sqlite3_close(h);
    return 0;
}

/* The options a figure needs: a results DB, a .png or .svg output path
 * without quotes, gnuplot, and the kind's template (its folder into tdir). */
static int plot_check(const sim_plot_opts *o, const char *kind, const char *ext, char *tdir, size_t tdl, sim_err *err)
{
    if (!o->db || !o->out) return sim_err_set(err, SIM_EINVAL, "plot: needs a results DB and an output file");
    if (!ext || (strcmp(ext, ".png") != 0 && strcmp(ext, ".svg") != 0))
        return sim_err_set(err, SIM_EINVAL, "plot: output '%s' must end in .png or .svg", o->out);
    if (strchr(o->out, '\'') || strchr(o->out, '\n'))
        return sim_err_set(err, SIM_EINVAL, "plot: output path must not contain quotes or newlines");
    if (!sim_plot_have_gnuplot(o->gnuplot))
        return sim_err_set(err, SIM_ENOTSUP,
                           "gnuplot ('%s') was not found or does not run: install the gnuplot-nox package "
                           "(apt-get install gnuplot-nox) or set SERVESIM_GNUPLOT",
                           gnuplot_prog(o->gnuplot));
    if (find_templates(o, kind, tdir, tdl) < 0)
        return sim_err_set(err, SIM_EIO, "plot: template %s.gp not found (set SERVESIM_PLOTS to servesim's plots/ folder)",
                           kind);
    return 0;
}

/* Runs gnuplot on the kind's template with the data file and the figure's
 * variables; an error carries gnuplot's own message. */
static int plot_gnuplot(const sim_plot_opts *o, const char *kind, const char *tdir, const char *data, const char *errf,
                        int series, const char *title, const char *extra, double slo_ttft, double slo_tpot, int svg,
                        sim_err *err)
{
    char tpl[PATH_MAX + 64];
    int rc = 0;
    char vars[PATH_MAX * 3 + 2048];
    snprintf(vars, sizeof vars,
             "datafile='%s'; outfile='%s'; termtype=\"%s\"; nseries=%d; plottitle='%s'; percentile='p90'; "
             "templdir='%s'; slo_ttft=%.9g; slo_tpot=%.9g; %s",
             data, o->out,
             svg ? "svg size 1100,750 dynamic font 'Sans,11'" : "pngcairo size 1100,750 font 'Sans,10'", series, title, tdir,
             slo_ttft, slo_tpot, extra);
    snprintf(tpl, sizeof tpl, "%s/%s.gp", tdir, kind);
    char *argv[] = {(char *)gnuplot_prog(o->gnuplot), "-e", vars, tpl, NULL};
    int st = run_prog(argv, errf);
    struct stat sb;
    if (st != 0 || stat(o->out, &sb) != 0 || sb.st_size == 0) {
        char msg[512] = "";
        FILE *ef = fopen(errf, "r");
        if (ef) {
            size_t m = fread(msg, 1, sizeof msg - 1, ef);
            msg[m] = '\0';
            fclose(ef);
        }
        rc = sim_err_set(err, SIM_EIO, "plot: gnuplot failed on %s (status %d): %s", tpl, st, msg);
    }
    return rc;
}

int sim_plot_make(const sim_plot_opts *o, sim_err *err)
{
    const char *kind = sim_plot_kind_name(o->kind);
    char tdir[PATH_MAX], tmp[] = "/tmp/servesim-plot-XXXXXX", data[PATH_MAX], errf[PATH_MAX];
    const char *ext = o->out ? strrchr(o->out, '.') : NULL;
    int rc = plot_check(o, kind, ext, tdir, sizeof tdir, err);
    if (rc < 0) return rc;
    if (o->note && o->note_size) o->note[0] = '\0';
    sqlite3 *db = NULL;
    int prc = open_results_db(o, &db, err);
    if (prc < 0) return prc;
    /* Figures of the latest search say when it did not finish. */
    if (o->note && o->note_size && o->n_runs == 0 && o->kind != SIM_PLOT_SWEEP && o->kind != SIM_PLOT_TIMELINE)
        sim_store_search_note_db(db, o->db, o->note, o->note_size);
    run_row *rows = NULL;
    int n = 0, series = 0;
    const char *files[] = {"data.dat", "gnuplot.err"};
    if ((rc = load_runs(db, &rows, &n, err)) < 0) {
        sqlite3_close(db);
        return rc;
    }
    if (!mkdtemp(tmp)) {
        rows_free(rows, n);
        sqlite3_close(db);
        return sim_err_set(err, SIM_EIO, "plot: cannot create a temporary folder: %s", strerror(errno));
    }
    snprintf(data, sizeof data, "%s/data.dat", tmp);
    snprintf(errf, sizeof errf, "%s/gnuplot.err", tmp);
    char title[256] = "";
    FILE *f = fopen(data, "w");
    if (!f) {
        rc = sim_err_set(err, SIM_EIO, "plot: %s: %s", data, strerror(errno));
        goto out;
    }
    char extra[1024];
    rc = write_kind(db, o, rows, n, f, &series, title, sizeof title, extra, sizeof extra, err);
    if (fclose(f) != 0 && rc == 0) rc = sim_err_set(err, SIM_EIO, "plot: writing %s failed", data);
    if (rc < 0) goto out;
    if (o->title) snprintf(title, sizeof title, "%s", o->title);
    for (char *c = title; *c; c++)
        if (*c == '\'' || *c == '"' || *c == '\\') *c = ' ';
    /* The SLO lines: the bounds of the runs drawn (the ones given, else the latest run). */
    double slo_ttft = 0, slo_tpot = 0;
    if (n > 0) run_slo(db, o->n_runs > 0 ? o->runs[0] : rows[n - 1].id, &slo_ttft, &slo_tpot);
    rc = plot_gnuplot(o, kind, tdir, data, errf, series, title, extra, slo_ttft, slo_tpot, strcmp(ext, ".svg") == 0, err);
out:
    rm_tree(tmp, files, 2);
    rows_free(rows, n);
    sqlite3_close(db);
    return rc;
}

static const char *usage =
    "usage: servesim plot DB [--kind cdf|throughput-latency|sweep|pareto|timeline] -o FILE.png|.svg\n"
    "                    [--run ID ...] [--title TEXT] [--templates DIR]\n"
    "\n"
    "Draws a figure from a results database with gnuplot (package gnuplot-nox):\n"
    "  cdf                 TTFT and TPOT distributions (the latest search's top runs, or --run)\n"
    "  throughput-latency  TTFT/TPOT p90 against the load (req/s), one curve per deployment\n"
    "  sweep               goodput and latency against the swept value of the latest --sweep\n"
    "  pareto              goodput per GPU against tokens/s per user of the latest search\n"
    "  timeline            per-instance utilisation and KV occupancy over time (default kind)\n"
    "Exit status: 0 written, 1 failed (gnuplot missing or failing, I/O), 2 bad usage or input (a DB\n"
    "that is missing, not a file or not a results DB, or holds no runs of that kind).\n";

int sim_cli_plot(int argc, char **argv)
{
    sim_plot_opts o;
    memset(&o, 0, sizeof o);
    o.kind = SIM_PLOT_TIMELINE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--kind") == 0 && v) {
            if (sim_plot_kind_parse(v, &o.kind) < 0) {
                const char *near = sim_suggest(v, kind_names, N_KINDS);
                sim_suggest_unknown(stderr, "plot: ", "kind", v, near, usage);
                return 2;
            }
            i++;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && v) {
            o.out = v;
            i++;
        } else if (strcmp(a, "--run") == 0 && v) {
            int64_t id;
            if (sim_parse_i64(v, &id) != SIM_PARSE_OK || id < 1) {
                fprintf(stderr, "servesim: plot: --run: expected a run id >= 1, got '%s'\n", v);
                return 2;
            }
            if (o.n_runs < SIM_PLOT_MAX_RUNS) o.runs[o.n_runs++] = id;
            i++;
        } else if (strcmp(a, "--title") == 0 && v) {
            o.title = v;
            i++;
        } else if (strcmp(a, "--templates") == 0 && v) {
            o.templates = v;
            i++;
        } else if (a[0] == '-') {
            static const char *const flags[] = {"--kind", "-o", "--out", "--run", "--title", "--templates", "--help"};
            const char *near = sim_suggest(a, flags, sizeof flags / sizeof flags[0]);
            int known = 0;
            for (size_t q = 0; q < sizeof flags / sizeof flags[0]; q++) known |= strcmp(flags[q], a) == 0;
            if (known) fprintf(stderr, "servesim: plot: %s needs a value\n%s", a, usage);
            else sim_suggest_unknown(stderr, "plot: ", "option", a, near, usage);
            return 2;
        } else if (!o.db) {
            o.db = a;
        } else {
            fprintf(stderr, "servesim: plot: unexpected argument '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (!o.db || !o.out) {
        fprintf(stderr, "servesim: plot: needs DB and -o FILE\n%s", usage);
        return 2;
    }
    sim_err err = {{0}};
    char note[1024] = "";
    o.note = note;
    o.note_size = sizeof note;
    int rc = sim_plot_make(&o, &err);
    if (note[0]) fprintf(stderr, "servesim: plot: note: %s\n", note);
    if (rc < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        return rc == SIM_EINVAL ? 2 : 1;
    }
    printf("plot: %s\n", o.out);
    return 0;
}
