/* sim_plot — see sim_plot.h. Each kind writes gnuplot data blocks (one
 * block per series, its first line the quoted series title, blocks
 * separated by two blank lines so a template plots them with `index i` and
 * `title columnheader(1)`), then runs gnuplot on the template with the
 * file names and sizes passed as -e variables (argv, no shell). */
#include "sim_plot.h"
#include "sim_file.h"
#include "sim_store.h"

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

const char *sim_plot_kind_name(sim_plot_kind k) { return (unsigned)k < 5 ? kind_names[k] : "?"; }

int sim_plot_kind_parse(const char *name, sim_plot_kind *out)
{
    for (int i = 0; i < 5; i++)
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

/* Runs to draw for cdf/timeline: the ones given, else the latest search's
 * final runs (best first), else the latest run holding `table` rows. */
static int pick_runs(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, const char *table, int max,
                     int64_t *ids, char titles[][160])
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
                    sim_err *err)
{
    int64_t ids[6];
    char titles[6][160];
    int k = pick_runs(db, o, r, n, "requests", 6, ids, titles);
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
            for (int i = 0; i < np; i++) fprintf(f, "%.6g %.6g %.6g\n", pts[i][0], pts[i][1], pts[i][2]);
            if (np == 0) fputs("0 0 0\n", f);
            fputs("\n\n", f);
        }
    } else {
        char names[MAX_SERIES][128];
        for (int i = 0; i < n && k < MAX_SERIES; i++) {
            int seen = 0;
            for (int q = 0; q < k; q++) seen |= strcmp(names[q], r[i].name) == 0;
            if (!seen) snprintf(names[k++], 128, "%s", r[i].name);
        }
        for (int q = 0; q < k; q++) {
            quoted(f, names[q]);
            fputs(" x y\n", f);
            double pts[256][3];
            int np = 0;
            for (int i = 0; i < n && np < 256; i++)
                if (strcmp(r[i].name, names[q]) == 0) {
                    pts[np][0] = metric(db, r[i].id, "throughput.req_per_s");
                    pts[np][1] = metric(db, r[i].id, "ttft_ms.p90");
                    pts[np][2] = metric(db, r[i].id, "tpot_ms.p90");
                    np++;
                }
            qsort(pts, (size_t)np, sizeof pts[0], cmp_double);
            for (int i = 0; i < np; i++) fprintf(f, "%.6g %.6g %.6g\n", pts[i][0], pts[i][1], pts[i][2]);
            fputs("\n\n", f);
        }
    }
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "no runs in %s", o->db);
    *series = k;
    return 0;
}

static int data_sweep(sqlite3 *db, const sim_plot_opts *o, FILE *f, int *series, sim_err *err)
{
    /* The latest sweep: runs whose params list "sweep.key=", the last
     * consecutive ones of the same scenario name; x = the set values that
     * differ between them. */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, name, params_json FROM runs WHERE params_json LIKE '%sweep.key=%' "
                               "ORDER BY id DESC", -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
    int64_t ids[64];
    char labels[64][128], name0[128] = "";
    int k = 0;
    int64_t prev = -1;
    while (sqlite3_step(st) == SQLITE_ROW && k < 64) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *nm = (const char *)sqlite3_column_text(st, 1);
        if (k == 0) snprintf(name0, sizeof name0, "%s", nm ? nm : "");
        else if (strcmp(name0, nm ? nm : "") != 0 || id != prev - 1) break;
        prev = id;
        json_t *j = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
        json_t *sets = j ? json_object_get(j, "set") : NULL;
        labels[k][0] = '\0';
        size_t m = 0;
        for (size_t q = 0; json_is_array(sets) && q < json_array_size(sets); q++) {
            const char *v = json_string_value(json_array_get(sets, q));
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || strncmp(v, "sweep.key=", 10) == 0 || strncmp(v, "seed=", 5) == 0) continue;
            if (m < sizeof labels[k]) m += (size_t)snprintf(labels[k] + m, sizeof labels[k] - m, "%s%s", m ? "+" : "", eq + 1);
        }
        json_decref(j);
        ids[k++] = id;
    }
    sqlite3_finalize(st);
    if (k == 0) return sim_err_set(err, SIM_EINVAL, "no sweep runs in %s (run `servesim run --sweep ...` with a DB)", o->db);
    quoted(f, name0);
    fputs(" label goodput tokgpu ttft tpot\n", f);
    for (int q = k - 1; q >= 0; q--) {
        fprintf(f, "%d ", k - 1 - q);
        quoted(f, labels[q][0] ? labels[q] : "?");
        fprintf(f, " %.6g %.6g %.6g %.6g\n", metric(db, ids[q], "goodput_req_per_s"),
                metric(db, ids[q], "throughput.output_tokens_per_s_per_gpu"), metric(db, ids[q], "ttft_ms.p90"),
                metric(db, ids[q], "tpot_ms.p90"));
    }
    *series = 1;
    return 0;
}

typedef struct {
    double x, y;
    char label[160];
} ppoint;

static int cmp_ppoint(const void *a, const void *b)
{
    const ppoint *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x;
}

static int data_pareto(const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series, sim_err *err)
{
    const char *sess = latest_session(r, n);
    if (!sess[0]) return sim_err_set(err, SIM_EINVAL, "no search runs in %s (run `servesim search` with a DB)", o->db);
    ppoint *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    /* The recommended candidate is the search's rank-1 final run, by id:
     * candidates tied on score are told apart only by the search's ranking. */
    int64_t rec = -1;
    for (int i = n - 1; i >= 0 && rec < 0; i--)
        if (r[i].search && jtrue(r[i].search, "final") && (int)jnum(r[i].search, "rank") == 1 &&
            strcmp(jstr(r[i].search, "session"), sess) == 0)
            rec = (int64_t)jnum(r[i].search, "candidate");
    int m = 0, best = -1, by_id = -1;
    for (int i = 0; i < n; i++)
        if (r[i].search && jtrue(r[i].search, "best") && !jtrue(r[i].search, "final") &&
            strcmp(jstr(r[i].search, "session"), sess) == 0) {
            p[m].x = jnum(r[i].search, "tok_s_user");
            p[m].y = jnum(r[i].search, "goodput_per_gpu");
            snprintf(p[m].label, sizeof p[m].label, "%s", jstr(r[i].search, "label"));
            if (best < 0 || jnum(r[i].search, "score") > jnum(r[best].search, "score")) best = i;
            if ((int64_t)jnum(r[i].search, "candidate") == rec) by_id = i;
            m++;
        }
    if (by_id >= 0) best = by_id; /* else (no final runs stored): the highest score */
    if (m == 0) {
        free(p);
        return sim_err_set(err, SIM_EINVAL, "the latest search in %s has no candidate meeting the SLO", o->db);
    }
    qsort(p, (size_t)m, sizeof *p, cmp_ppoint);
    fputs("\"candidates meeting the SLO\" x\n", f);
    for (int i = 0; i < m; i++) fprintf(f, "%.6g %.6g\n", p[i].x, p[i].y);
    fputs("\n\n\"Pareto frontier\" x\n", f);
    /* Scan from the fastest per-user speed down: a point is on the frontier
     * when its goodput beats every faster point's. */
    double top = -1;
    int nf = 0;
    ppoint *fr = malloc((size_t)m * sizeof *fr);
    for (int i = m - 1; fr && i >= 0; i--)
        if (p[i].y > top) {
            top = p[i].y;
            fr[nf++] = p[i];
        }
    for (int i = nf - 1; fr && i >= 0; i--) fprintf(f, "%.6g %.6g\n", fr[i].x, fr[i].y);
    fputs("\n\n\"recommended\" x\n", f);
    fprintf(f, "%.6g %.6g\n", jnum(r[best].search, "tok_s_user"), jnum(r[best].search, "goodput_per_gpu"));
    free(fr);
    free(p);
    *series = 3;
    return 0;
}

static int data_timeline(sqlite3 *db, const sim_plot_opts *o, const run_row *r, int n, FILE *f, int *series,
                         char *title, size_t tl, sim_err *err)
{
    int64_t id;
    char t[1][160];
    if (pick_runs(db, o, r, n, "instance_series", 1, &id, t) == 0)
        return sim_err_set(err, SIM_EINVAL, "no run with an instance time series in %s", o->db);
    snprintf(title, tl, "%s", t[0]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT instance, t_s, utilization, kv_occupancy FROM instance_series WHERE run_id = ?1 "
                               "AND instance < 16 ORDER BY instance, t_s", -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "results DB: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    int cur = -1, k = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int inst = sqlite3_column_int(st, 0);
        if (inst != cur) {
            if (cur >= 0) fputs("\n\n", f);
            fprintf(f, "\"instance %d\" t u kv\n", inst);
            cur = inst;
            k++;
        }
        fprintf(f, "%.6g %.6g %.6g\n", sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
                sqlite3_column_double(st, 3));
    }
    sqlite3_finalize(st);
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
                      char *title, size_t tl, sim_err *err)
{
    switch (o->kind) {
    case SIM_PLOT_CDF: return data_cdf(db, o, rows, n, f, series, err);
    case SIM_PLOT_THROUGHPUT_LATENCY: return data_tl(db, o, rows, n, f, series, err);
    case SIM_PLOT_SWEEP: return data_sweep(db, o, f, series, err);
    case SIM_PLOT_PARETO: return data_pareto(o, rows, n, f, series, err);
    case SIM_PLOT_TIMELINE: return data_timeline(db, o, rows, n, f, series, title, tl, err);
    default: return sim_err_set(err, SIM_EINVAL, "plot: unknown kind");
    }
}

int sim_plot_write_data(const sim_plot_opts *o, FILE *f, sim_err *err)
{
    sqlite3 *db = NULL;
    run_row *rows = NULL;
    int n = 0, series = 0, rc;
    char title[256];
    if (!o->db) return sim_err_set(err, SIM_EINVAL, "plot: needs a results DB");
    if ((rc = open_results_db(o, &db, err)) < 0) return rc;
    if ((rc = load_runs(db, &rows, &n, err)) == 0) rc = write_kind(db, o, rows, n, f, &series, title, sizeof title, err);
    rows_free(rows, n);
    sqlite3_close(db);
    return rc;
}

int sim_plot_make(const sim_plot_opts *o, sim_err *err)
{
    const char *kind = sim_plot_kind_name(o->kind);
    char tdir[PATH_MAX], tmp[] = "/tmp/servesim-plot-XXXXXX", data[PATH_MAX], errf[PATH_MAX], tpl[PATH_MAX + 64];
    const char *ext = o->out ? strrchr(o->out, '.') : NULL;
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
    if (find_templates(o, kind, tdir, sizeof tdir) < 0)
        return sim_err_set(err, SIM_EIO, "plot: template %s.gp not found (set SERVESIM_PLOTS to servesim's plots/ folder)",
                           kind);
    if (o->note && o->note_size) o->note[0] = '\0';
    sqlite3 *db = NULL;
    int prc = open_results_db(o, &db, err);
    if (prc < 0) return prc;
    /* Figures of the latest search say when it did not finish. */
    if (o->note && o->note_size && o->n_runs == 0 && o->kind != SIM_PLOT_SWEEP && o->kind != SIM_PLOT_TIMELINE)
        sim_store_search_note_db(db, o->db, o->note, o->note_size);
    run_row *rows = NULL;
    int n = 0, series = 0, rc;
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
    rc = write_kind(db, o, rows, n, f, &series, title, sizeof title, err);
    if (fclose(f) != 0 && rc == 0) rc = sim_err_set(err, SIM_EIO, "plot: writing %s failed", data);
    if (rc < 0) goto out;
    if (o->title) snprintf(title, sizeof title, "%s", o->title);
    for (char *c = title; *c; c++)
        if (*c == '\'' || *c == '"' || *c == '\\') *c = ' ';
    char vars[PATH_MAX * 3];
    int svg = strcmp(ext, ".svg") == 0;
    snprintf(vars, sizeof vars,
             "datafile='%s'; outfile='%s'; termtype=\"%s\"; nseries=%d; plottitle='%s'; percentile='p90'; "
             "templdir='%s'",
             data, o->out,
             svg ? "svg size 1100,750 dynamic font 'Sans,11'" : "pngcairo size 1100,750 font 'Sans,10'", series, title, tdir);
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
                fprintf(stderr, "servesim: plot: unknown kind '%s'\n%s", v, usage);
                return 2;
            }
            i++;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && v) {
            o.out = v;
            i++;
        } else if (strcmp(a, "--run") == 0 && v && atoll(v) > 0) {
            if (o.n_runs < SIM_PLOT_MAX_RUNS) o.runs[o.n_runs++] = atoll(v);
            i++;
        } else if (strcmp(a, "--title") == 0 && v) {
            o.title = v;
            i++;
        } else if (strcmp(a, "--templates") == 0 && v) {
            o.templates = v;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "servesim: plot: unknown or incomplete option '%s'\n%s", a, usage);
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
