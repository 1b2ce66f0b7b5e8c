/* test_store — the SQLite results database: two runs written and read back
 * with the raw sqlite3 API, the open-time checks (not a database, not
 * servesim's, newer schema, missing table) and rollback of a run that fails
 * half-way (a trigger makes the metrics insert abort after the run, request
 * and series rows went in). Files live in a fresh temporary folder. */
#include "sim_store.h"
#include "test_util.h"

#include <sqlite3.h>

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define MS SIM_NS_PER_MS

static char dir[64];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static int64_t q_int(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_open(db_path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static double q_real(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    double v = NAN;
    if (sqlite3_open(db_path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Copies the first column of the first row as text ("" if none). */
static void q_text(const char *db_path, const char *sql, char *out, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    out[0] = 0;
    if (sqlite3_open(db_path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static int exec(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(db_path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* n_req requests and n_smp samples, of which at most max_req / max_smp
 * are kept as records. */
static sim_metrics *make_metrics_kept(int n_req, int n_smp, int64_t max_req, int64_t max_smp)
{
    sim_metrics *m = sim_metrics_create(2);
    sim_metrics_set_limits(m, max_req, max_smp, NULL);
    for (int i = 0; i < n_req; i++) {
        sim_req_record r = {0};
        r.id = (uint64_t)(1000 + i);
        r.instance = i % 2;
        r.input_tokens = 100 + i;
        r.output_tokens = i == 0 ? 1 : 10; /* request 1000 has no TPOT */
        r.preemptions = i == 3;
        r.arrival = (sim_time)i * 500 * MS;
        r.first_scheduled = r.arrival + 2 * MS;
        r.first_token = r.arrival + (sim_time)(20 + i) * MS;
        r.finish = r.first_token + (r.output_tokens - 1) * 9 * MS;
        sim_metrics_add_request(m, &r);
    }
    for (int i = 0; i < n_smp; i++) {
        sim_sample s = {.instance = i % 2,
                        .t = (sim_time)(i / 2 + 1) * SIM_NS_PER_S,
                        .utilization = 0.1 * (i % 10),
                        .batch_size = i,
                        .kv_occupancy = 0.5,
                        .waiting = i};
        sim_metrics_add_sample(m, &s);
    }
    sim_metrics_add_iteration(m, 0, 9 * MS, 4);
    return m;
}

static sim_metrics *make_metrics(int n_req, int n_smp)
{
    return make_metrics_kept(n_req, n_smp, INT64_MAX, INT64_MAX);
}

static int count_metric(const char *name, double value, void *ctx)
{
    (void)name;
    (void)value;
    ++*(int *)ctx;
    return 0;
}

static void test_write_read(void)
{
    char db[128], sql[256], txt[256];
    path_in(db, sizeof db, "results.db");
    sim_err err = {{0}};
    sim_store *st = NULL;
    CHECK_MSG(sim_store_open(db, &st, &err) == 0, "%s", err.msg);
    if (!st) return;

    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.name, sizeof sc.name, "store-test");
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.source_path, sizeof sc.source_path, "scenarios/x.yaml");
    sc.seed = 42;
    sc.output.store_requests = 1;
    sim_metrics *m = make_metrics(50, 10);
    sim_summary sum;
    CHECK(sim_metrics_summarize(m, &sc.slo, 8, &sum, &err) == 0);
    sum.wall_time_s = 1.5;
    sum.events = 1234;
    int64_t id1 = 0, id2 = 0;
    CHECK_MSG(sim_store_write_run(st, &sc, "name: store-test\n", "{\"rate\": 4}", &sum, m, &id1,
                                  &err) == 0,
              "%s", err.msg);
    /* Second run: no request rows, overloaded, seed above INT64_MAX. */
    sc.output.store_requests = 0;
    sc.seed = UINT64_MAX;
    sum.overloaded = 1;
    snprintf(sum.overload_reason, sizeof sum.overload_reason, "waiting > 1000");
    sum.tpot_ms.p99 = NAN;
    CHECK_MSG(sim_store_write_run(st, &sc, NULL, NULL, &sum, m, &id2, &err) == 0, "%s", err.msg);
    CHECK(id1 == 1 && id2 == 2);
    sim_store_close(st);

    /* Reopening an existing store works and keeps both runs. */
    st = NULL;
    CHECK_MSG(sim_store_open(db, &st, &err) == 0, "%s", err.msg);
    sim_store_close(st);

    int n_metrics = 0;
    sim_summary_each_metric(&sum, count_metric, &n_metrics);
    CHECK(q_int(db, "SELECT count(*) FROM runs") == 2);
    CHECK(q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'") ==
          SIM_STORE_SCHEMA_VERSION);
    CHECK(q_int(db, "SELECT count(*) FROM requests WHERE run_id = 1") == 50);
    CHECK(q_int(db, "SELECT count(*) FROM requests WHERE run_id = 2") == 0);
    CHECK(q_int(db, "SELECT count(*) FROM instance_series WHERE run_id = 1") == 10);
    CHECK(q_int(db, "SELECT count(*) FROM instance_series WHERE run_id = 2") == 10);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM metrics WHERE run_id = 1");
    CHECK(q_int(db, sql) == n_metrics);
    CHECK(n_metrics > 40);
    CHECK(q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                    "name IN ('requests_run', 'instance_series_run', 'metrics_run')") == 3);

    /* Values. */
    q_text(db,
           "SELECT name || '|' || model || '|' || gpu || '|' || mode || '|' || status || '|' || "
           "scenario_path || '|' || seed FROM runs WHERE id = 1",
           txt, sizeof txt);
    snprintf(sql, sizeof sql, "store-test|llama-3.1-8b|%s|colocated|ok|scenarios/x.yaml|42",
             sc.hardware.gpu);
    CHECK_MSG(strcmp(txt, sql) == 0, "%s", txt);
    q_text(db, "SELECT status || '|' || overload_reason || '|' || seed FROM runs WHERE id = 2", txt,
           sizeof txt);
    CHECK_MSG(strcmp(txt, "overloaded|waiting > 1000|18446744073709551615") == 0, "%s", txt);
    CHECK(
        q_int(db, "SELECT scenario_text IS NULL AND params_json IS NULL FROM runs WHERE id = 2") ==
        1);
    q_text(db, "SELECT scenario_text FROM runs WHERE id = 1", txt, sizeof txt);
    CHECK(strcmp(txt, "name: store-test\n") == 0);
    CHECK(q_int(db, "SELECT json_extract(params_json, '$.rate') FROM runs WHERE id = 1") == 4);
    q_text(db, "SELECT created_at FROM runs WHERE id = 1", txt, sizeof txt);
    CHECK_MSG(strlen(txt) == 20 && txt[4] == '-' && txt[10] == 'T' && txt[19] == 'Z', "%s", txt);
    CHECK_NEAR(q_real(db, "SELECT wall_time_s FROM runs WHERE id = 1"), 1.5, 1e-12);
    CHECK(q_int(db, "SELECT events FROM runs WHERE id = 2") == 1234);
    CHECK_NEAR(q_real(db, "SELECT sim_time_s FROM runs WHERE id = 1"), sum.sim_time_s, 1e-12);

    /* Request rows: request 1003 arrived at 1.5 s, TTFT 23 ms, TPOT 9 ms. */
    CHECK_NEAR(q_real(db, "SELECT arrival_s FROM requests WHERE run_id = 1 AND req_id = 1003"), 1.5,
               1e-12);
    CHECK_NEAR(q_real(db, "SELECT ttft_ms FROM requests WHERE req_id = 1003"), 23, 1e-9);
    CHECK_NEAR(q_real(db, "SELECT tpot_ms FROM requests WHERE req_id = 1003"), 9, 1e-9);
    CHECK_NEAR(q_real(db, "SELECT e2e_ms FROM requests WHERE req_id = 1003"), 23 + 81, 1e-9);
    CHECK_NEAR(q_real(db, "SELECT queue_ms FROM requests WHERE req_id = 1003"), 2, 1e-9);
    CHECK(q_int(db, "SELECT preemptions + 10 * instance FROM requests WHERE req_id = 1003") == 11);
    CHECK(q_int(db, "SELECT tpot_ms FROM requests WHERE req_id = 1000") == -999); /* NULL */
    CHECK(q_int(db, "SELECT waiting FROM instance_series WHERE run_id = 1 AND instance = 1 "
                    "AND t_s = 3") == 5);

    /* Metric rows match the summary. */
    CHECK_NEAR(q_real(db, "SELECT value FROM metrics WHERE run_id = 1 AND name = 'ttft_ms.p99'"),
               sum.ttft_ms.p99, 1e-9);
    CHECK_NEAR(q_real(db, "SELECT value FROM metrics WHERE run_id = 1 AND "
                          "name = 'throughput.req_per_s'"),
               sum.req_per_s, 1e-9);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE run_id = 1 AND name = 'requests_completed'") ==
          50);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE run_id = 1 AND name = 'overloaded'") == 0);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE run_id = 2 AND name = 'overloaded'") == 1);
    /* NaN is stored as NULL. */
    CHECK(q_int(db, "SELECT value FROM metrics WHERE run_id = 2 AND name = 'tpot_ms.p99'") == -999);
    CHECK(q_int(db, "SELECT count(*) FROM metrics WHERE name = 'itl_ms.n' AND value = 4") == 2);
    sim_metrics_destroy(m);
}

/* A run past output.request_records / output.sample_records stores the
 * records it kept and says so in its metric rows. */
static void test_capped_rows(void)
{
    char db[128];
    path_in(db, sizeof db, "capped.db");
    sim_err err = {{0}};
    sim_store *st = NULL;
    CHECK_MSG(sim_store_open(db, &st, &err) == 0, "%s", err.msg);
    if (!st) return;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.output.store_requests = 1;
    sim_metrics *m = make_metrics_kept(50, 10, 20, 4);
    sim_summary sum;
    CHECK_MSG(sim_metrics_summarize(m, NULL, 1, &sum, &err) == 0, "%s", err.msg);
    int64_t id = 0;
    CHECK_MSG(sim_store_write_run(st, &sc, NULL, NULL, &sum, m, &id, &err) == 0, "%s", err.msg);
    sim_store_close(st);
    CHECK(q_int(db, "SELECT count(*) FROM requests") == 20);
    CHECK(q_int(db, "SELECT max(req_id) FROM requests") == 1019); /* the first 20 */
    CHECK(q_int(db, "SELECT count(*) FROM instance_series") == 4);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE name = 'requests_completed'") == 50);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE name = 'records.requests_kept'") == 20);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE name = 'records.samples_kept'") == 4);
    CHECK(q_int(db, "SELECT value FROM metrics WHERE name = 'records.samples'") == 10);
    CHECK(q_real(db, "SELECT value FROM metrics WHERE name = 'records.relative_error'") > 0);
    sim_metrics_destroy(m);
}

static void test_rollback(void)
{
    char db[128];
    path_in(db, sizeof db, "rollback.db");
    sim_err err = {{0}};
    sim_store *st = NULL;
    CHECK_MSG(sim_store_open(db, &st, &err) == 0, "%s", err.msg);
    if (!st) return;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.output.store_requests = 1;
    sim_metrics *m = make_metrics(30, 6);
    sim_summary sum;
    sim_metrics_summarize(m, NULL, 1, &sum, NULL);
    CHECK(sim_store_write_run(st, &sc, NULL, NULL, &sum, m, NULL, &err) == 0);

    /* Abort the last stage of the write (metrics), after the run, request
     * and series rows are in: nothing of that run may remain. */
    CHECK(exec(db, "CREATE TRIGGER boom BEFORE INSERT ON metrics WHEN NEW.name = 'events' "
                   "BEGIN SELECT RAISE(ABORT, 'forced failure'); END") == SQLITE_OK);
    int64_t id = -1;
    int rc = sim_store_write_run(st, &sc, NULL, NULL, &sum, m, &id, &err);
    CHECK(rc == SIM_EIO);
    CHECK(id == -1);
    CHECK_CONTAINS(err.msg, db);
    CHECK_CONTAINS(err.msg, "forced failure");
    CHECK_CONTAINS(err.msg, "metrics");
    CHECK(q_int(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q_int(db, "SELECT count(*) FROM requests") == 30);
    CHECK(q_int(db, "SELECT count(*) FROM instance_series") == 6);
    CHECK(q_int(db, "SELECT count(*) FROM metrics WHERE run_id <> 1") == 0);

    /* Invalid params_json: refused before anything is written. */
    rc = sim_store_write_run(st, &sc, NULL, "{\"rate\": ", &sum, m, NULL, &err);
    CHECK(rc == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "params_json");
    rc = sim_store_write_run(st, &sc, NULL, "[1, 2]", &sum, m, NULL, &err);
    CHECK(rc == SIM_EINVAL);

    /* The store stays usable after a rollback. */
    CHECK(exec(db, "DROP TRIGGER boom") == SQLITE_OK);
    CHECK_MSG(sim_store_write_run(st, &sc, NULL, "{}", &sum, m, &id, &err) == 0, "%s", err.msg);
    CHECK(id == 2);
    CHECK(q_int(db, "SELECT count(*) FROM runs") == 2);
    CHECK(q_int(db, "SELECT count(*) FROM requests") == 60);
    sim_store_close(st);
    sim_metrics_destroy(m);
}

static void expect_open_error(const char *db, int code, const char *needle)
{
    sim_err err = {{0}};
    sim_store *st = (sim_store *)&err; /* must be reset to NULL on failure */
    int rc = sim_store_open(db, &st, &err);
    CHECK_MSG(rc == code, "%s: rc %d, want %d (%s)", db, rc, code, err.msg);
    CHECK(st == NULL);
    CHECK_CONTAINS(err.msg, db);
    CHECK_CONTAINS(err.msg, needle);
    if (rc == 0) sim_store_close(st);
}

static void test_open_errors(void)
{
    char db[128];
    sim_store *st = NULL;
    sim_err err = {{0}};

    path_in(db, sizeof db, "notes.txt");
    FILE *f = fopen(db, "w");
    CHECK(f);
    if (f) {
        fputs("these are not the tables you are looking for, just a plain text file\n", f);
        fclose(f);
    }
    expect_open_error(db, SIM_EINVAL, "not an SQLite database");

    path_in(db, sizeof db, "other.db");
    CHECK(exec(db, "CREATE TABLE foo(x)") == SQLITE_OK);
    expect_open_error(db, SIM_EINVAL, "not a servesim results database");

    path_in(db, sizeof db, "newer.db");
    CHECK(sim_store_open(db, &st, &err) == 0);
    sim_store_close(st);
    CHECK(exec(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version'") == SQLITE_OK);
    expect_open_error(db, SIM_ENOTSUP, "schema version 2 is newer");

    path_in(db, sizeof db, "nover.db");
    CHECK(sim_store_open(db, &st, &err) == 0);
    sim_store_close(st);
    CHECK(exec(db, "DELETE FROM meta") == SQLITE_OK);
    expect_open_error(db, SIM_EINVAL, "no schema_version");

    path_in(db, sizeof db, "missing.db");
    CHECK(sim_store_open(db, &st, &err) == 0);
    sim_store_close(st);
    CHECK(exec(db, "DROP TABLE instance_series") == SQLITE_OK);
    expect_open_error(db, SIM_EINVAL, "missing table 'instance_series'");

    path_in(db, sizeof db, "no/such/folder/x.db");
    expect_open_error(db, SIM_EIO, "cannot open");
}

/* Throughput of request rows (a smaller count than the 1M measured for the
 * report, so ctest stays fast); printed, not asserted. */
static void test_bulk(void)
{
    enum { N = 100000 };
    char db[128];
    path_in(db, sizeof db, "bulk.db");
    sim_err err = {{0}};
    sim_store *st = NULL;
    CHECK(sim_store_open(db, &st, &err) == 0);
    if (!st) return;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.output.store_requests = 1;
    sim_metrics *m = make_metrics(N, 0);
    sim_summary sum;
    sim_metrics_summarize(m, NULL, 1, &sum, NULL);
    CHECK_MSG(sim_store_write_run(st, &sc, NULL, NULL, &sum, m, NULL, &err) == 0, "%s", err.msg);
    sim_store_close(st);
    CHECK(q_int(db, "SELECT count(*) FROM requests") == N);
    sim_metrics_destroy(m);
}

static void rm_dir(void)
{
    static const char *const names[] = {
        "results.db", "rollback.db", "notes.txt", "other.db",           "newer.db",
        "nover.db",   "missing.db",  "bulk.db",   "results.db-journal", "rollback.db-journal",
        "capped.db"};
    char p[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        path_in(p, sizeof p, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static const test_case cases[] = {
    {"write_read", test_write_read},
    {"capped_rows", test_capped_rows},
    {"rollback", test_rollback},
    {"open_errors", test_open_errors},
    {"bulk", test_bulk},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    snprintf(dir, sizeof dir, "/tmp/servesim_store_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = test_run("test_store", cases);
    rm_dir();
    return rc;
}
