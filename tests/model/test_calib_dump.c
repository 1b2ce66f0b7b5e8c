/* test_calib_dump — what a perf-db accepts: the .sql dump reader refuses
 * every statement that is not a literal insert (INSERT … SELECT with a
 * recursive CTE, randomblob, expressions, other SQL), a NUL byte, another
 * schema version and a truncated dump, each with file:line:column and the
 * statement number and with nothing imported; latencies that are not
 * finite and positive or out of order (1e300, inf, −1, 0, NULL, text) are
 * refused on import, on insert and when a perf-db file is opened; a results
 * DB, a foreign SQLite file, a text file, a directory or a missing file
 * opened as a perf-db is refused as bad input, and so is `db import` into
 * a results DB (exit 2 from the db verbs). */
#include "test_util.h"
#include "test_perfdb_util.h"

#include "sim_cli_calib.h"
#include "calib_db.h"
#include "sim_store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static void path_in(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", tmpdir, name); }

#define HEAD "-- servesim perf-db dump\n-- schema_version 1\nBEGIN TRANSACTION;\n"
#define GPU_ROW TEST_DUMP_GPU_ROW
#define GPU_REF TEST_DUMP_GPU_REF

static const char *const point_cols[24] = {"op", "dtype", "kernel", "kernel_version", "m", "n", "k", "batch",
                                           "ctx", "heads", "kv_heads", "head_dim", "groups", "bytes", "ranks",
                                           "reps", "median_s", "p10_s", "p90_s", "tflops", "gbps",
                                           "frac_of_peak", "check_err", "measured_at"};
static const char *const point_vals[24] = {"'gemm'", "'bf16'", "'cublas'", "1", "64", "4096", "4096", "0",
                                           "0", "0", "0", "0", "0", "0", "0", "20", "2.5e-05", "2.4e-05",
                                           "2.7e-05", "85.9", "2100.5", "0.086", "NULL", "'2026-11-29T23:48:06Z'"};

/* One points insert with the default literals, `col` (if any) set to `val`. */
static void point_row(char *buf, size_t len, int64_t m, const char *col, const char *val)
{
    size_t off = (size_t)snprintf(buf, len, "INSERT OR IGNORE INTO points(gpu_id");
    for (int i = 0; i < 24; i++) off += (size_t)snprintf(buf + off, len - off, ", %s", point_cols[i]);
    off += (size_t)snprintf(buf + off, len - off, ") VALUES(%s", GPU_REF);
    for (int i = 0; i < 24; i++) {
        const char *v = col && strcmp(col, point_cols[i]) == 0 ? val : point_vals[i];
        char mv[32];
        if (i == 4 && !(col && strcmp(col, "m") == 0)) snprintf(mv, sizeof mv, "%lld", (long long)m), v = mv;
        off += (size_t)snprintf(buf + off, len - off, ", %s", v);
    }
    snprintf(buf + off, len - off, ");\n");
}

static int count_point_cb(void *ctx, int64_t gpu_id, const calib_point *p)
{
    (void)gpu_id, (void)p;
    (*(int64_t *)ctx)++;
    return 0;
}

static int count_gpu_cb(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n)
{
    (void)gpu_id, (void)id, (void)n;
    (*(int64_t *)ctx)++;
    return 0;
}

/* Rows of points or gpus, through the public walks. */
static int64_t count_rows(calib_db *db, const char *table)
{
    int64_t n = 0;
    sim_err err;
    if (strcmp(table, "points") == 0) CHECK(calib_db_point_foreach(db, 0, -1, count_point_cb, &n, &err) == 0);
    else CHECK(calib_db_gpu_foreach(db, count_gpu_cb, &n, &err) == 0);
    return n;
}

/* Imports `text` into a fresh in-memory perf-db; returns the code, the
 * message in err, and how many points/gpus rows it holds afterwards. */
static int import_text(const char *text, size_t len, sim_err *err, int64_t *points, int64_t *gpus)
{
    calib_db *db = NULL;
    sim_err e2;
    if (calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e2) != 0) {
        CHECK_MSG(0, "%s", e2.msg);
        return 99;
    }
    int64_t rows = -1;
    err->msg[0] = '\0';
    int rc = calib_db_import_text(db, text, len, "t.sql", &rows, err);
    *points = count_rows(db, "points");
    *gpus = count_rows(db, "gpus");
    calib_db_close(db);
    return rc;
}

/* `body` between the header and COMMIT must be refused with `needle` in
 * the message and nothing imported. */
static void expect_refused(const char *body, const char *needle)
{
    size_t n = strlen(HEAD) + strlen(GPU_ROW) + strlen(body) + 32;
    char *text = malloc(n);
    REQUIRE(text != NULL);
    snprintf(text, n, HEAD GPU_ROW "%sCOMMIT;\n", body);
    sim_err err;
    int64_t points = -1, gpus = -1;
    int rc = import_text(text, strlen(text), &err, &points, &gpus);
    CHECK_MSG(rc == SIM_EINVAL, "rc %d for: %.200s", rc, body);
    CHECK_CONTAINS(err.msg, needle);
    CHECK_MSG(points == 0 && gpus == 0, "%lld points, %lld gpus left after a refused import", (long long)points,
              (long long)gpus);
    free(text);
}

static void test_hostile_statements(void)
{
    /* Never-ending recursive CTE, and an INSERT … SELECT at all. */
    expect_refused("INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) "
                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT 'g', x, '9.0', 1, 1, '', '', "
                   "'gpu' FROM c;\n",
                   "t.sql:5:95: statement 3: expected VALUES in INSERT, found 'WITH'");
    expect_refused("INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) "
                   "SELECT * FROM gpus;\n",
                   "statement 3: expected VALUES");
    /* A 900 MB blob in place of a literal. */
    expect_refused("INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) "
                   "VALUES(randomblob(900000000), 1, '9.0', 1, 1, '', '', 'gpu');\n",
                   "statement 3: expected a literal value (number, 'text' or NULL) for name, found 'randomblob'");
    char row[4096];
    point_row(row, sizeof row, 1, "median_s", "abs(2.5e-05)");
    expect_refused(row, "t.sql:5:473: statement 3: expected a literal value (number, 'text' or NULL) for median_s, "
                        "found 'abs'");
    point_row(row, sizeof row, 1, "m", "1+1");
    expect_refused(row, "expected ',' in VALUES, found '+1'");
    point_row(row, sizeof row, 1, "median_s", "(SELECT 1)");
    expect_refused(row, "for median_s, found '('");
    /* The GPU sub-select may only be the identity export writes. */
    expect_refused("INSERT OR IGNORE INTO points(gpu_id, op) VALUES((SELECT max(id) FROM gpus), 'gemm');\n",
                   "t.sql:5:40: statement 3: expected ',' in the column list, found ')'");
    /* Multi-row VALUES, other statements, other tables. */
    expect_refused("INSERT OR IGNORE INTO meta(key, value) VALUES('a', 'b'), ('c', 'd');\n",
                   "expected ';' at the end of the statement, found ','");
    expect_refused("DELETE FROM points;\n", "statement 3: 'DELETE' is not part of a perf-db dump");
    expect_refused("ATTACH DATABASE '/tmp/x.db' AS x;\n", "not part of a perf-db dump");
    expect_refused("PRAGMA writable_schema = 1;\n", "not part of a perf-db dump");
    expect_refused("CREATE TABLE IF NOT EXISTS evil(x);\n", "a perf-db dump has only tables meta, gpus and points");
    expect_refused("CREATE TRIGGER t AFTER INSERT ON points BEGIN DELETE FROM points; END;\n",
                   "expected TABLE or INDEX after CREATE");
    expect_refused("INSERT OR IGNORE INTO runs(x) VALUES(1);\n", "inserts only into meta, gpus and points");
    expect_refused("INSERT INTO gpus(name) VALUES('x');\n", "expected OR in INSERT");
    expect_refused("/* comment */\n", "unexpected character '/'");
    expect_refused("INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '2');\n",
                   "meta's schema_version is 2, the header's 1");
    expect_refused("INSERT OR IGNORE INTO meta(key, value) VALUES('x', 'unterminated);\n",
                   "unterminated string literal");
    /* A point whose GPU was never inserted. */
    char other[4096];
    point_row(other, sizeof other, 1, NULL, NULL);
    char *p = strstr(other, "NVIDIA H100");
    if (p) memcpy(p, "NVIDIA H999", 11);
    expect_refused(other, "the point's GPU 'NVIDIA H999' has no gpus row");

    /* A NUL byte ends nothing silently: refused with its place. */
    static const char nul[] = HEAD GPU_ROW "\0COMMIT;\n";
    sim_err err;
    int64_t points, gpus;
    CHECK(import_text(nul, sizeof nul - 1, &err, &points, &gpus) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "t.sql:5:1: NUL byte");
    CHECK(points == 0 && gpus == 0);
    /* Another schema version in the header, another first line, a dump cut
     * off before its COMMIT. */
    static const char v3[] = "-- servesim perf-db dump\n-- schema_version 3\n";
    CHECK(import_text(v3, sizeof v3 - 1, &err, &points, &gpus) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "t.sql:2:19: dump of schema version 3; this servesim reads versions 1 to 2");
    CHECK(import_text("hello\n", 6, &err, &points, &gpus) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "t.sql:1:1: not a servesim perf-db dump");
    static const char cut[] = HEAD GPU_ROW;
    CHECK(import_text(cut, sizeof cut - 1, &err, &points, &gpus) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "does not end with COMMIT");
    CHECK(gpus == 0);
}

static void test_bad_values_in_dump(void)
{
    static const struct {
        const char *col, *val, *needle;
    } bad[] = {
        {"median_s", "1e300", "median_s is 1e+300 (a latency must be finite and within [1e-09, 3600] s)"},
        {"median_s", "1e999", "median_s is inf"},
        {"median_s", "-1", "median_s is -1"},
        {"median_s", "0", "median_s is 0"},
        {"median_s", "NULL", "median_s is NULL (expected a latency in seconds)"},
        {"median_s", "'2.5e-05'", "median_s is text (expected a latency in seconds)"},
        {"p10_s", "3e-05", "out of order (expected p10 ≤ median ≤ p90)"},
        {"p90_s", "-1e999", "p90_s is -inf"},
        {"tflops", "-5", "tflops is -5"},
        {"dtype", "5", "dtype is an integer (expected text)"},
        {"m", "1.5", "m is a real (expected an integer)"},
        {"m", "-4", "m is -4"},
        {"reps", "0", "reps is 0"},
        {"kernel_version", "99999999999", "kernel_version is 99999999999"},
        {"op", "'frobnicate'", "op 'frobnicate' is not a known op"},
        {"kernel", "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
         "kernel is 95 bytes long (at most 63)"},
        {"m", "99999999999999999999", "integer 99999999999999999999 for m is out of range"},
    };
    char row[4096], text[16384];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        point_row(row, sizeof row, 1, bad[i].col, bad[i].val);
        expect_refused(row, bad[i].needle);
        expect_refused(row, "t.sql:5:");
        expect_refused(row, ": statement 3: ");
    }
    /* The same rows with good values import, and an integer literal is a
     * fine real. */
    size_t off = (size_t)snprintf(text, sizeof text, HEAD GPU_ROW);
    point_row(row, sizeof row, 1, NULL, NULL);
    off += (size_t)snprintf(text + off, sizeof text - off, "%s", row);
    point_row(row, sizeof row, 2, "tflops", "86");
    off += (size_t)snprintf(text + off, sizeof text - off, "%s", row);
    snprintf(text + off, sizeof text - off, "COMMIT;\n");
    sim_err err;
    int64_t points, gpus;
    CHECK_MSG(import_text(text, strlen(text), &err, &points, &gpus) == 0, "%s", err.msg);
    CHECK(points == 2 && gpus == 1);
}

/* A perf-db (file or :memory:) with one GPU and one valid point. */
static calib_db *one_point_db(const char *path, const char *gpu, calib_op op)
{
    calib_db *db = NULL;
    sim_err err;
    CHECK_MSG(calib_db_open(path, CALIB_DB_CREATE, &db, &err) == 0, "%s", err.msg);
    if (!db) return NULL;
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "%s", gpu);
    snprintf(id.backend, sizeof id.backend, "gpu");
    int64_t gid = 0;
    CHECK(calib_db_gpu_ensure(db, &id, &gid, &err) == 0 && gid == 1);
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = op;
    snprintf(p.dtype, sizeof p.dtype, "bf16");
    snprintf(p.kernel, sizeof p.kernel, "k");
    p.shape.m = p.shape.n = p.shape.k = 64;
    p.reps = 3, p.median_s = 2e-6, p.p10_s = 1.9e-6, p.p90_s = 2.1e-6;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    CHECK(calib_db_point_insert(db, gid, &p, &err) == 0);
    return db;
}

/* A perf-db file whose row was changed behind servesim's back. */
static void test_bad_values_in_file(void)
{
    static const char *const updates[] = {
        "UPDATE points SET median_s = 1e300",        "UPDATE points SET median_s = 9e999",
        "UPDATE points SET median_s = -1",           "UPDATE points SET median_s = 0",
        "UPDATE points SET median_s = 'fast'",       "UPDATE points SET p90_s = 1e-6",
        "UPDATE points SET m = 'x'",                 "UPDATE points SET op = 'nope'",
        "UPDATE points SET gpu_id = 42",             "UPDATE gpus SET sms = 'many'",
    };
    static const char *const needles[] = {
        "median_s is 1e+300", "median_s is inf", "median_s is -1", "median_s is 0", "median_s is text",
        "out of order", "m is text", "op 'nope'", "gpu_id does not name a row of gpus", "gpus row id 1: sms is text",
    };
    char path[300];
    for (size_t i = 0; i < sizeof updates / sizeof updates[0]; i++) {
        path_in(path, sizeof path, "bad.db");
        unlink(path);
        calib_db *db = one_point_db(path, "NVIDIA H100", CALIB_OP_GEMM);
        sim_err err;
        if (!db) continue;
        calib_db_close(db);
        sqlite3 *h = NULL;
        CHECK(sqlite3_open(path, &h) == SQLITE_OK && sqlite3_exec(h, updates[i], NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(h);
        CHECK(calib_db_open(path, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL && db == NULL);
        CHECK_CONTAINS(err.msg, needles[i]);
        CHECK_CONTAINS(err.msg, "row id 1");
        CHECK(calib_db_open(path, CALIB_DB_CREATE, &db, &err) == SIM_EINVAL && db == NULL);
        /* db list / show / export refuse it as bad input. */
        char *av[] = {"db", "show", path};
        CHECK(sim_cli_db(3, av) == 2);
    }
    /* The harness cannot store such a point either. */
    calib_db *db = one_point_db(":memory:", "cpu", CALIB_OP_COPY);
    sim_err err;
    int64_t gid = 1;
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_COPY;
    snprintf(p.dtype, sizeof p.dtype, "bf16");
    snprintf(p.kernel, sizeof p.kernel, "k");
    p.shape.bytes = 4096;
    p.reps = 3, p.median_s = NAN, p.p10_s = 1e-6, p.p90_s = 1e-6;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    CHECK(calib_db_point_insert(db, gid, &p, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "median_s is nan");
    p.median_s = 1e-6, p.gbps = INFINITY;
    CHECK(calib_db_point_insert(db, gid, &p, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "gbps is inf");
    calib_db_close(db);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_wrong_files(void)
{
    char results[300], dump[300], txt[300], foreign[300], empty[300], fresh[300], v3[300];
    path_in(results, sizeof results, "results.db");
    path_in(dump, sizeof dump, "ok.sql");
    path_in(txt, sizeof txt, "notes.txt");
    path_in(foreign, sizeof foreign, "foreign.db");
    path_in(empty, sizeof empty, "empty.db");
    path_in(fresh, sizeof fresh, "fresh.db");
    path_in(v3, sizeof v3, "v3.sql");
    char good[8192], row[4096];
    point_row(row, sizeof row, 1, NULL, NULL);
    snprintf(good, sizeof good, HEAD GPU_ROW "%sCOMMIT;\n", row);
    write_file(dump, good);
    sim_store *st = NULL;
    sim_err err;
    CHECK_MSG(sim_store_open(results, &st, &err) == 0, "%s", err.msg);
    sim_store_close(st);
    calib_db *db = NULL;
    /* A results DB is neither read nor written as a perf-db. */
    CHECK(calib_db_open(results, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "a servesim results DB");
    CHECK(calib_db_open(results, CALIB_DB_CREATE, &db, &err) == SIM_EINVAL);
    char *av_imp[] = {"db", "import", results, dump};
    CHECK(sim_cli_db(4, av_imp) == 2);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(results, &h) == SQLITE_OK);
    sqlite3_stmt *q = NULL;
    CHECK(sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master WHERE name IN ('gpus','points')", -1, &q, NULL) ==
          SQLITE_OK);
    CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 0); /* no perf-db tables added */
    sqlite3_finalize(q);
    sqlite3_close(h);
    /* A text file, a foreign SQLite file, an empty one, a directory, a
     * missing file. */
    write_file(txt, "just some notes, not a database at all, long enough to be looked at\n");
    CHECK(calib_db_open(txt, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "not an SQLite database");
    CHECK(sqlite3_open(foreign, &h) == SQLITE_OK && sqlite3_exec(h, "CREATE TABLE foo(x)", NULL, NULL, NULL) == 0);
    sqlite3_close(h);
    CHECK(calib_db_open(foreign, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "not a servesim perf-db (it has tables foo");
    write_file(empty, "");
    CHECK(calib_db_open(empty, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "empty SQLite database");
    CHECK(calib_db_open(tmpdir, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "a directory");
    CHECK(calib_db_import(db, tmpdir, NULL, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "a directory");
    CHECK(calib_db_import(db, "/dev/zero", NULL, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "not a regular file");
    CHECK(calib_db_open(fresh, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "No such file");
    CHECK(access(fresh, F_OK) != 0);

    /* Exit codes of the db verbs: bad input is 2. */
    char *av_list_missing[] = {"db", "list", fresh};
    char *av_show_dir[] = {"db", "show", tmpdir};
    char *av_export_missing[] = {"db", "export", fresh, dump};
    char *av_list_results[] = {"db", "list", results};
    CHECK(sim_cli_db(3, av_list_missing) == 2);
    CHECK(sim_cli_db(3, av_show_dir) == 2);
    CHECK(sim_cli_db(4, av_export_missing) == 2);
    CHECK(sim_cli_db(3, av_list_results) == 2);
    write_file(v3, "-- servesim perf-db dump\n-- schema_version 3\nCOMMIT;\n");
    char *av_list_v3[] = {"db", "list", v3};
    char *av_imp_v3[] = {"db", "import", fresh, v3};
    char missing_sql[300];
    path_in(missing_sql, sizeof missing_sql, "missing.sql");
    char *av_imp_missing[] = {"db", "import", fresh, missing_sql};
    CHECK(sim_cli_db(3, av_list_v3) == 2);
    CHECK(sim_cli_db(4, av_imp_v3) == 2);
    CHECK(sim_cli_db(4, av_imp_missing) == 2);
    char *av_imp_nodir[] = {"db", "import", "/nonexistent-folder/x.db", dump};
    CHECK(sim_cli_db(4, av_imp_nodir) == 2);
    CHECK(access(fresh, F_OK) != 0); /* a failed import leaves no new file behind */
    char *av_imp_ok[] = {"db", "import", fresh, dump};
    CHECK(sim_cli_db(4, av_imp_ok) == 0);
    CHECK(calib_db_open(fresh, CALIB_DB_READONLY, &db, &err) == 0);
    CHECK(count_rows(db, "points") == 1);
    calib_db_close(db);
    /* A failed import into an existing perf-db keeps it as it was. */
    CHECK(sim_cli_db(4, av_imp_v3) == 2);
    CHECK(calib_db_open(fresh, CALIB_DB_READONLY, &db, &err) == 0);
    CHECK(count_rows(db, "points") == 1);
    calib_db_close(db);
    unlink(results), unlink(dump), unlink(txt), unlink(foreign), unlink(empty), unlink(fresh), unlink(v3);
}

static const test_case cases[] = {
    {"hostile_statements", test_hostile_statements},
    {"bad_values_in_dump", test_bad_values_in_dump},
    {"bad_values_in_file", test_bad_values_in_file},
    {"wrong_files", test_wrong_files},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/servesim_dump_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    int rc = test_run("test_calib_dump", cases);
    char bad[300];
    path_in(bad, sizeof bad, "bad.db");
    unlink(bad);
    rmdir(tmpdir);
    return rc;
}
