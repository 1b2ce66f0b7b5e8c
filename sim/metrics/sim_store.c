/* sim_store — see sim_store.h.
 *
 * The database uses SQLite's default rollback journal (one self-contained
 * file, nothing left beside it after close) with synchronous=NORMAL; every
 * run is one BEGIN IMMEDIATE … COMMIT written through prepared statements,
 * and any failure issues ROLLBACK, so readers see whole runs or nothing.
 * Several processes may append to the same file (sweeps): a 10 s busy
 * timeout serialises their transactions. A store handle belongs to one
 * thread at a time (the connection is opened without SQLite's mutexes). */
#include "sim_store.h"

#include <jansson.h>
#include <sqlite3.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct sim_store {
    sqlite3 *db;
    char path[SIM_PATH_MAX];
};

/* One row per `servesim search`: 'running' from its first stored run,
 * 'complete' when it finished, 'failed' when it stopped on an error; a
 * search killed mid-way stays 'running'. Added to version-1 databases
 * that lack it (older servesim builds ignore it). */
#define SEARCHES_SQL                                                                             \
    "CREATE TABLE IF NOT EXISTS searches("                                                        \
    " id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT, scenario_path TEXT,"    \
    " status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),"                 \
    " first_run_id INTEGER, last_run_id INTEGER);"

/* One row per autoscaling event (deployment.pools.*.autoscale): the pool's
 * timeline, the counts after each event, the window value at a decision.
 * Added to databases that lack it, like searches. */
#define AUTOSCALE_SQL                                                                              \
    "CREATE TABLE IF NOT EXISTS autoscale_events("                                                  \
    " run_id INTEGER NOT NULL REFERENCES runs(id), pool INTEGER, t_s REAL, event TEXT,"            \
    " instance INTEGER, held INTEGER, serving INTEGER, value REAL);"

/* One row per set of replications (`run --replications N`, the search's
 * search.replications re-runs) in replication_sets, and per figure its
 * mean and Student-t interval in intervals. Added to databases that lack
 * them, like searches. */
#define REPLICATIONS_SQL                                                                           \
    "CREATE TABLE IF NOT EXISTS replication_sets("                                                  \
    " id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, name TEXT,"                                  \
    " seed /* the base seed: as runs.seed */, model TEXT, gpu TEXT, mode TEXT, scenario_path TEXT,"  \
    " scenario_text TEXT, params_json TEXT, replications INTEGER NOT NULL, level REAL NOT NULL,"     \
    " overloaded INTEGER NOT NULL);"                                                                 \
    "CREATE TABLE IF NOT EXISTS intervals("                                                          \
    " set_id INTEGER NOT NULL REFERENCES replication_sets(id), figure TEXT NOT NULL, mean REAL,"    \
    " half_width REAL, low REAL, high REAL, sd REAL, n INTEGER, PRIMARY KEY (set_id, figure));"

static const char *const schema_sql =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS runs("
    " id INTEGER PRIMARY KEY, name TEXT, created_at TEXT NOT NULL,"
    " seed /* no affinity: an integer, or decimal text above 2^63-1 */,"
    " model TEXT, gpu TEXT, mode TEXT, scenario_path TEXT, scenario_text TEXT,"
    " params_json TEXT, status TEXT NOT NULL CHECK (status IN ('ok', 'overloaded')),"
    " overload_reason TEXT, sim_time_s REAL, wall_time_s REAL, events INTEGER);"
    "CREATE TABLE IF NOT EXISTS requests("
    " run_id INTEGER NOT NULL REFERENCES runs(id), req_id INTEGER, instance INTEGER,"
    " arrival_s REAL, input_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL,"
    " tpot_ms REAL, e2e_ms REAL, queue_ms REAL, preemptions INTEGER);"
    "CREATE TABLE IF NOT EXISTS instance_series("
    " run_id INTEGER NOT NULL REFERENCES runs(id), instance INTEGER, t_s REAL,"
    " utilization REAL, batch_size REAL, kv_occupancy REAL, waiting INTEGER);"
    "CREATE TABLE IF NOT EXISTS metrics("
    " run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL,"
    " PRIMARY KEY (run_id, name));"
    SEARCHES_SQL
    AUTOSCALE_SQL
    REPLICATIONS_SQL
    "CREATE INDEX IF NOT EXISTS requests_run ON requests(run_id);"
    "CREATE INDEX IF NOT EXISTS instance_series_run ON instance_series(run_id, instance, t_s);"
    "CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);";

static const char *const required_tables[] = {"meta", "runs", "requests", "instance_series",
                                              "metrics"};

/* Runs a query returning one integer; returns the SQLite result code. */
static int query_int(sqlite3 *db, const char *sql, const char *arg, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    if (arg) sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_NOTFOUND;
    }
    sqlite3_finalize(st);
    return rc;
}

static int table_exists(sqlite3 *db, const char *name, int *exists)
{
    int64_t n = 0;
    int rc = query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                       name, &n);
    *exists = n > 0;
    return rc;
}

static int create_schema(sim_store *s, sim_err *err)
{
    char *msg = NULL;
    char sql[64];
    /* IMMEDIATE, IF NOT EXISTS and OR IGNORE: two processes creating the
     * same new file at once both succeed with one schema. */
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) goto fail;
    if (sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK) goto fail;
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta VALUES ('schema_version', '%d')",
             SIM_STORE_SCHEMA_VERSION);
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) goto fail;
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) goto fail;
    return 0;
fail:
    sim_err_set(err, SIM_EIO, "%s: cannot create results database schema: %s", s->path,
                msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return SIM_EIO;
}

/* Checks an existing database: servesim's, a version we know, every table
 * present. Version 1 is the first schema, so there is nothing to migrate
 * yet; a future version 2 adds its ALTERs here, keyed on `version`. */
/* "a, b, c": the file's tables (for messages about foreign files). */
static void table_names(sqlite3 *db, char *buf, size_t size)
{
    sqlite3_stmt *st = NULL;
    size_t used = 0;
    buf[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &st,
                           NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW && used + 64 < size) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        used += (size_t)snprintf(buf + used, size - used, "%s%.40s", used ? ", " : "", t ? (const char *)t : "");
    }
    sqlite3_finalize(st);
}

int sim_store_check_db(sqlite3 *db, const char *path, sim_err *err)
{
    int exists = 0, gpus = 0, points = 0, runs = 0;
    int64_t version = 0;
    char tables[512];
    if (table_exists(db, "meta", &exists) != SQLITE_OK || table_exists(db, "gpus", &gpus) != SQLITE_OK ||
        table_exists(db, "points", &points) != SQLITE_OK || table_exists(db, "runs", &runs) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: %s", path, sqlite3_errmsg(db));
    /* A perf-db also has meta and schema_version: tell it apart by its tables. */
    if (gpus && points && !runs)
        return sim_err_set(err, SIM_EINVAL,
                           "%s: is a servesim perf-db (calibration data: tables gpus, points), not a results "
                           "database; give run/search a results DB file (--db), and use the perf-db with "
                           "perf_db: or servesim db",
                           path);
    table_names(db, tables, sizeof tables);
    if (!exists)
        return sim_err_set(err, SIM_EINVAL,
                           "%s: not a servesim results database (SQLite file without a 'meta' "
                           "table; it has tables %s)",
                           path, tables[0] ? tables : "none");
    int rc = query_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1",
                       "schema_version", &version);
    if (rc == SQLITE_NOTFOUND)
        return sim_err_set(err, SIM_EINVAL, "%s: results database has no schema_version in 'meta'",
                           path);
    if (rc != SQLITE_OK) return sim_err_set(err, SIM_EIO, "%s: %s", path, sqlite3_errmsg(db));
    if (version > SIM_STORE_SCHEMA_VERSION)
        return sim_err_set(err, SIM_ENOTSUP,
                           "%s: results database schema version %lld is newer than this servesim "
                           "supports (%d); use a newer servesim or another database file",
                           path, (long long)version, SIM_STORE_SCHEMA_VERSION);
    if (version < 1)
        return sim_err_set(err, SIM_EINVAL, "%s: results database has invalid schema version %lld",
                           path, (long long)version);
    for (size_t i = 0; i < sizeof required_tables / sizeof required_tables[0]; i++) {
        if (table_exists(db, required_tables[i], &exists) != SQLITE_OK)
            return sim_err_set(err, SIM_EIO, "%s: %s", path, sqlite3_errmsg(db));
        if (!exists)
            return sim_err_set(err, SIM_EINVAL,
                               "%s: not a servesim results database: missing table '%s' (it has tables %s)",
                               path, required_tables[i], tables);
    }
    return 0;
}

static int check_schema(sim_store *s, sim_err *err)
{
    int rc = sim_store_check_db(s->db, s->path, err);
    if (rc) return rc;
    if (sqlite3_exec(s->db, SEARCHES_SQL, NULL, NULL, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: cannot add the searches table: %s", s->path, sqlite3_errmsg(s->db));
    if (sqlite3_exec(s->db, AUTOSCALE_SQL, NULL, NULL, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: cannot add the autoscale_events table: %s", s->path,
                           sqlite3_errmsg(s->db));
    if (sqlite3_exec(s->db, REPLICATIONS_SQL, NULL, NULL, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: cannot add the replication_sets and intervals tables: %s", s->path,
                           sqlite3_errmsg(s->db));
    return 0;
}

int sim_store_open(const char *path, sim_store **out, sim_err *err)
{
    int rc;
    int64_t ntables = 0;
    sim_store *s = NULL;
    if (!out || !path || !path[0])
        return sim_err_set(err, SIM_EINVAL, "results database: no path given");
    *out = NULL;
    s = calloc(1, sizeof *s);
    if (!s) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    snprintf(s->path, sizeof s->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: is %s; expected a results database file", path,
                         S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
        goto fail;
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        rc = sim_err_set(err, SIM_EIO, "%s: cannot open results database: %s%s", path,
                         s->db ? sqlite3_errmsg(s->db) : "out of memory",
                         stat(path, &sb) != 0 ? " (does its folder exist?)" : "");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 10000);
    /* sqlite3_open reads nothing; the first query is what finds out whether
     * the file is a database at all. */
    if (query_int(s->db, "SELECT count(*) FROM sqlite_master", NULL, &ntables) != SQLITE_OK) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: not an SQLite database (%s)", path,
                         sqlite3_errmsg(s->db));
        goto fail;
    }
    rc = ntables == 0 ? create_schema(s, err) : check_schema(s, err);
    if (rc) goto fail;
    /* A 64 MB page cache keeps a million-row run from spilling mid-way. */
    if (sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536", NULL, NULL,
                     NULL) != SQLITE_OK) {
        rc = sim_err_set(err, SIM_EIO, "%s: %s", path, sqlite3_errmsg(s->db));
        goto fail;
    }
    *out = s;
    return 0;
fail:
    sim_store_close(s);
    return rc;
}

void sim_store_close(sim_store *s)
{
    if (!s) return;
    sqlite3_close(s->db); /* every statement is finalised by its writer */
    free(s);
}

/* Binds a real, or NULL when it is not finite (SQLite has no NaN). */
static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Binds a string, or NULL when it is NULL or empty. */
static int bind_str(sqlite3_stmt *st, int i, const char *v)
{
    return v && v[0] ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* Steps an INSERT and resets it for the next row. */
static int step_insert(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}


/* The UTC time now as 2026-01-31T12:00:00Z ("" if it cannot be had). */
static void utc_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    buf[0] = '\0';
    if (gmtime_r(&now, &tm)) strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The columns a run and a replication set share, bound to ?1..?9: name,
 * created_at (now), seed, model, gpu, mode, scenario_path, scenario_text,
 * params_json. */
static void bind_scenario(sqlite3_stmt *st, const sim_scenario *sc, const char *scenario_text,
                          const char *params_json)
{
    char created[32];
    utc_now(created, sizeof created);
    bind_str(st, 1, sc->name);
    sqlite3_bind_text(st, 2, created, -1, SQLITE_TRANSIENT);
    /* SQLite integers are signed 64-bit: a seed above INT64_MAX is kept
     * exactly as decimal text rather than wrapped negative (the column has
     * no type affinity, so SQLite does not turn that text into a lossy
     * REAL). */
    if (sc->seed <= (uint64_t)INT64_MAX) {
        sqlite3_bind_int64(st, 3, (sqlite3_int64)sc->seed);
    } else {
        char seed[24];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)sc->seed);
        sqlite3_bind_text(st, 3, seed, -1, SQLITE_TRANSIENT);
    }
    bind_str(st, 4, sc->model);
    char gl[4 * SIM_NAME_MAX];
    bind_str(st, 5, sim_scenario_gpu_label(sc, gl, sizeof gl));
    bind_str(st, 6, sim_mode_name(sc->deployment.mode));
    bind_str(st, 7, sc->source_path);
    bind_str(st, 8, scenario_text);
    bind_str(st, 9, params_json);
}

static int insert_run(sqlite3 *db, const sim_scenario *sc, const char *scenario_text,
                      const char *params_json, const sim_summary *sum, int64_t *id)
{
    sqlite3_stmt *st = NULL;
    char reason[sizeof sum->overload_reason + 1];
    memcpy(reason, sum->overload_reason, sizeof sum->overload_reason);
    reason[sizeof sum->overload_reason] = 0;

    int rc = sqlite3_prepare_v2(
        db,
        "INSERT INTO runs(name, created_at, seed, model, gpu, mode, scenario_path, scenario_text,"
        " params_json, status, overload_reason, sim_time_s, wall_time_s, events)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    bind_scenario(st, sc, scenario_text, params_json);
    sqlite3_bind_text(st, 10, sum->overloaded ? "overloaded" : "ok", -1, SQLITE_STATIC);
    bind_str(st, 11, sum->overloaded ? reason : NULL);
    bind_real(st, 12, sum->sim_time_s);
    bind_real(st, 13, sum->wall_time_s);
    sqlite3_bind_int64(st, 14, (sqlite3_int64)sum->events);
    rc = step_insert(st);
    if (rc == SQLITE_OK) *id = sqlite3_last_insert_rowid(db);
    sqlite3_finalize(st);
    return rc;
}

static int insert_requests(sqlite3 *db, const sim_metrics *m, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    const sim_req_record *r = sim_metrics_requests(m, &n);
    int rc = sqlite3_prepare_v2(
        db,
        "INSERT INTO requests(run_id, req_id, instance, arrival_s, input_tokens, output_tokens,"
        " ttft_ms, tpot_ms, e2e_ms, queue_ms, preemptions)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, id);
    for (int64_t i = 0; i < n && rc == SQLITE_OK; i++) {
        double tpot = 0;
        sqlite3_bind_int64(st, 2, (sqlite3_int64)r[i].id);
        sqlite3_bind_int(st, 3, r[i].instance);
        sqlite3_bind_double(st, 4, (double)r[i].arrival / (double)SIM_NS_PER_S);
        sqlite3_bind_int(st, 5, r[i].input_tokens);
        sqlite3_bind_int(st, 6, r[i].output_tokens);
        sqlite3_bind_double(st, 7, (double)(sim_req_record_first_seen(&r[i]) - r[i].arrival) / SIM_NS_PER_MS);
        if (sim_metrics_request_tpot_ms(&r[i], &tpot))
            sqlite3_bind_double(st, 8, tpot);
        else
            sqlite3_bind_null(st, 8); /* one-token reply: no TPOT */
        sqlite3_bind_double(st, 9, (double)(sim_req_record_last_seen(&r[i]) - r[i].arrival) / SIM_NS_PER_MS);
        sqlite3_bind_double(st, 10, (double)(r[i].first_scheduled - r[i].arrival) / SIM_NS_PER_MS);
        sqlite3_bind_int(st, 11, r[i].preemptions);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int insert_series(sqlite3 *db, const sim_metrics *m, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    const sim_sample *p = sim_metrics_samples(m, &n);
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO instance_series(run_id, instance, t_s, utilization,"
                                " batch_size, kv_occupancy, waiting)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, id);
    for (int64_t i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_bind_int(st, 2, p[i].instance);
        sqlite3_bind_double(st, 3, (double)p[i].t / (double)SIM_NS_PER_S);
        bind_real(st, 4, p[i].utilization);
        bind_real(st, 5, p[i].batch_size);
        bind_real(st, 6, p[i].kv_occupancy);
        sqlite3_bind_int(st, 7, p[i].waiting);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int metric_row(const char *name, double value, void *ctx)
{
    sqlite3_stmt *st = ctx;
    sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
    bind_real(st, 3, value);
    return step_insert(st);
}

static int insert_metrics(sqlite3 *db, const sim_summary *sum, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO metrics(run_id, name, value) VALUES (?1, ?2, ?3)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, id);
    rc = sim_summary_each_metric(sum, metric_row, st);
    sqlite3_finalize(st);
    return rc;
}

static int insert_autoscale(sqlite3 *db, const sim_autoscale_summary *a, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO autoscale_events(run_id, pool, t_s, event, instance, held, serving, value) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, id);
    for (int32_t e = 0; e < a->n_events && e < SIM_AUTOSCALE_MAX_EVENTS && rc == SQLITE_OK; e++) {
        const sim_as_event *ev = &a->events[e];
        sqlite3_bind_int(st, 2, ev->pool);
        bind_real(st, 3, ev->t_s);
        sqlite3_bind_text(st, 4, sim_as_event_name(ev->kind), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, ev->instance);
        sqlite3_bind_int(st, 6, ev->held);
        sqlite3_bind_int(st, 7, ev->serving);
        bind_real(st, 8, ev->value);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Checked before writing so every params_json in the database is
 * queryable with SQLite's json_extract (NULL is allowed). */
static int check_params(const sim_store *s, const char *params_json, sim_err *err)
{
    if (!params_json) return 0;
    json_error_t jerr;
    json_t *j = json_loads(params_json, JSON_REJECT_DUPLICATES, &jerr);
    int parsed = j != NULL, is_obj = j && json_is_object(j);
    json_decref(j);
    if (!is_obj)
        return sim_err_set(err, SIM_EINVAL, "%s: params_json is not a JSON object: %s", s->path,
                           parsed ? "another JSON value" : jerr.text);
    return 0;
}

int sim_store_write_run(sim_store *s, const sim_scenario *sc, const char *scenario_text,
                        const char *params_json, const sim_summary *sum,
                        const sim_metrics *m, int64_t *run_id, sim_err *err)
{
    int64_t id = 0;
    int rc;
    const char *what = "starting the transaction";
    if (!s || !sc || !sum) return sim_err_set(err, SIM_EINVAL, "results database: NULL argument");
    if ((rc = check_params(s, params_json, err)) < 0) return rc;
    rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) goto fail_no_tx;
    what = "writing the run row";
    if ((rc = insert_run(s->db, sc, scenario_text, params_json, sum, &id)) != SQLITE_OK) goto fail;
    what = "writing request rows";
    if (m && sc->output.store_requests && (rc = insert_requests(s->db, m, id)) != SQLITE_OK)
        goto fail;
    what = "writing the instance time series";
    if (m && (rc = insert_series(s->db, m, id)) != SQLITE_OK) goto fail;
    what = "writing summary metrics";
    if ((rc = insert_metrics(s->db, sum, id)) != SQLITE_OK) goto fail;
    what = "writing the autoscaling events";
    if (sum->autoscale.enabled && (rc = insert_autoscale(s->db, &sum->autoscale, id)) != SQLITE_OK) goto fail;
    what = "committing";
    if ((rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) goto fail;
    if (run_id) *run_id = id;
    return 0;
fail:
    /* Format first: ROLLBACK replaces the connection's error message. */
    sim_err_set(err, SIM_EIO, "%s: %s failed, run not stored: %s", s->path, what,
                sqlite3_errmsg(s->db));
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return SIM_EIO;
fail_no_tx:
    return sim_err_set(err, SIM_EIO, "%s: %s failed, run not stored: %s", s->path, what,
                       sqlite3_errmsg(s->db));
}

/* ---- replications --------------------------------------------------------- */

static int insert_intervals(sqlite3 *db, const sim_store_replications *r, int64_t id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO intervals(set_id, figure, mean, half_width, low, high, sd, n)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, id);
    for (int32_t f = 0; f < r->n_figures && rc == SQLITE_OK; f++) {
        const sim_interval *iv = &r->iv[f];
        /* Fewer than two runs had the figure: no interval (NULLs), n says how many. */
        const int have = iv->n >= 2;
        sqlite3_bind_text(st, 2, r->figures[f], -1, SQLITE_TRANSIENT);
        bind_real(st, 3, have ? iv->mean : NAN);
        bind_real(st, 4, have ? iv->half_width : NAN);
        bind_real(st, 5, have ? iv->low : NAN);
        bind_real(st, 6, have ? iv->high : NAN);
        bind_real(st, 7, have ? iv->sd : NAN);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)iv->n);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int sim_store_write_replications(sim_store *s, const sim_scenario *sc, const char *scenario_text,
                                 const char *params_json, const sim_store_replications *r, int64_t *set_id,
                                 sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;
    const char *what = "starting the transaction";
    if (!s || !sc || !r || (r->n_figures > 0 && (!r->figures || !r->iv)))
        return sim_err_set(err, SIM_EINVAL, "results database: NULL argument");
    if ((rc = check_params(s, params_json, err)) < 0) return rc;
    if ((rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: %s failed, replications not stored: %s", s->path, what,
                           sqlite3_errmsg(s->db));
    what = "writing the replication set";
    rc = sqlite3_prepare_v2(s->db,
                            "INSERT INTO replication_sets(name, created_at, seed, model, gpu, mode, scenario_path,"
                            " scenario_text, params_json, replications, level, overloaded)"
                            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                            -1, &st, NULL);
    if (rc == SQLITE_OK) {
        bind_scenario(st, sc, scenario_text, params_json);
        sqlite3_bind_int(st, 10, r->n);
        bind_real(st, 11, r->level);
        sqlite3_bind_int(st, 12, r->overloaded);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    int64_t id = sqlite3_last_insert_rowid(s->db);
    if (rc == SQLITE_OK) {
        what = "writing the intervals";
        rc = insert_intervals(s->db, r, id);
    }
    if (rc == SQLITE_OK) {
        what = "committing";
        rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        sim_err_set(err, SIM_EIO, "%s: %s failed, replications not stored: %s", s->path, what,
                    sqlite3_errmsg(s->db));
        if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return SIM_EIO;
    }
    if (set_id) *set_id = id;
    return 0;
}

/* ---- searches ------------------------------------------------------------ */

int sim_store_search_begin(sim_store *s, const char *scenario_path, int64_t *search_id, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    char created[32];
    utc_now(created, sizeof created);
    int rc = sqlite3_prepare_v2(s->db,
                                "INSERT INTO searches(created_at, scenario_path, status, first_run_id)"
                                " VALUES (?1, ?2, 'running', (SELECT coalesce(max(id), 0) + 1 FROM runs))",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, created, -1, SQLITE_TRANSIENT);
        bind_str(st, 2, scenario_path);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: cannot record the search: %s", s->path, sqlite3_errmsg(s->db));
    *search_id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int sim_store_search_end(sim_store *s, int64_t search_id, int complete, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    char done[32];
    utc_now(done, sizeof done);
    int rc = sqlite3_prepare_v2(s->db,
                                "UPDATE searches SET status = ?1, finished_at = ?2,"
                                " last_run_id = (SELECT max(id) FROM runs) WHERE id = ?3",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, complete ? "complete" : "failed", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, done, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, search_id);
        rc = step_insert(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "%s: cannot mark the search %s: %s", s->path,
                           complete ? "complete" : "failed", sqlite3_errmsg(s->db));
    return 0;
}

int sim_store_search_latest(sqlite3 *db, int64_t *id, char *status, size_t status_size, char *created,
                            size_t created_size)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, status, created_at FROM searches ORDER BY id DESC LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return 0; /* no searches table: a database from before searches were recorded */
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 1), *c = sqlite3_column_text(st, 2);
        *id = sqlite3_column_int64(st, 0);
        snprintf(status, status_size, "%s", t ? (const char *)t : "");
        snprintf(created, created_size, "%s", c ? (const char *)c : "");
        found = 1;
    }
    sqlite3_finalize(st);
    return found;
}

int sim_store_search_note(sim_store *s, char *buf, size_t size)
{
    return sim_store_search_note_db(s->db, s->path, buf, size);
}

int sim_store_search_note_db(sqlite3 *db, const char *path, char *buf, size_t size)
{
    int64_t id = 0;
    char status[16], created[32];
    buf[0] = '\0';
    if (!sim_store_search_latest(db, &id, status, sizeof status, created, sizeof created)) return 0;
    if (strcmp(status, "complete") == 0) return 0;
    snprintf(buf, size,
             "%s: the latest search (#%lld, started %s) is not complete (%s): its stored runs are "
             "partial results",
             path, (long long)id, created,
             strcmp(status, "failed") == 0 ? "it stopped on an error" : "it was interrupted or is still running");
    return 1;
}
