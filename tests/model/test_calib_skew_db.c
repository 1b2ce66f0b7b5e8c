/* test_calib_skew_db — the perf-db's routing-skew column (skew_milli,
 * schema version 2) and the migration from version 1: a version-1 dump
 * (the committed H200 one, and a hand-written one) imports with every row
 * at skew 0; a version-1 SQLite file opened read-only reads at skew 0 and
 * stays version 1 on disk, opened for writing is rebuilt in place (version
 * 2, a skewed twin of a row then has a key of its own); skewed rows export
 * and import back unchanged; bad skew values (a real, out of range, on an
 * op without routing) are refused on import with file:line:column and what
 * was expected, and on insert. */
#include "test_util.h"
#include "test_perfdb_util.h"

#include "calib_db.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_calib_skew_db_XXXXXX";

static void path_in(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", tmpdir, name); }

typedef struct {
    int64_t n, skewed, grouped;
} walk_ctx;

static int walk_cb(void *ctx, int64_t gpu_id, const calib_point *p)
{
    walk_ctx *w = ctx;
    (void)gpu_id;
    w->n++;
    w->skewed += p->shape.skew_milli != 0;
    w->grouped += p->op == CALIB_OP_GROUPED_CONTIG || p->op == CALIB_OP_GROUPED_MASKED;
    return 0;
}

static walk_ctx walk(calib_db *db)
{
    walk_ctx w = {0, 0, 0};
    sim_err e;
    CHECK(calib_db_point_foreach(db, 0, -1, walk_cb, &w, &e) == 0);
    return w;
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* The committed version-1 dump: every INSERT into points loads, at skew 0. */
static void test_v1_dump_loads_at_skew_0(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/calib/data/h200-sxm-2026-11-29.sql", test_src_dir());
    char *text = test_slurp(path);
    REQUIRE_MSG(text != NULL, "%s", path);
    CHECK_CONTAINS(text, "-- schema_version 1\n");
    int rows = count_lines(text, "INSERT OR IGNORE INTO points(");
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE_MSG(calib_db_open_any(path, &db, &e) == 0, "%s", e.msg);
    walk_ctx w = walk(db);
    CHECK_MSG(w.n == rows && rows > 100, "%lld rows loaded of %d", (long long)w.n, rows);
    CHECK(w.grouped > 0 && w.skewed == 0);
    calib_db_close(db);
    free(text);
}

#define V1_HEAD "-- servesim perf-db dump\n-- schema_version 1\nBEGIN TRANSACTION;\n"
#define V2_HEAD "-- servesim perf-db dump\n-- schema_version 2\nBEGIN TRANSACTION;\n"
#define GPU_ROW TEST_DUMP_GPU_ROW
#define GPU_REF TEST_DUMP_GPU_REF
#define V1_COLS                                                                                                 \
    "INSERT OR IGNORE INTO points(gpu_id, op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, "     \
    "kv_heads, head_dim, groups, bytes, ranks, reps, median_s, p10_s, p90_s, tflops, gbps, frac_of_peak, "     \
    "check_err, measured_at) VALUES(" GPU_REF ", "
#define V2_COLS                                                                                                 \
    "INSERT OR IGNORE INTO points(gpu_id, op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, "     \
    "kv_heads, head_dim, groups, bytes, ranks, skew_milli, reps, median_s, p10_s, p90_s, tflops, gbps, "       \
    "frac_of_peak, check_err, measured_at) VALUES(" GPU_REF ", "

static int import(calib_db *db, const char *text, sim_err *e)
{
    int64_t rows = 0;
    e->msg[0] = '\0';
    return calib_db_import_text(db, text, strlen(text), "t.sql", &rows, e);
}

/* A hand-written version-1 dump (no skew_milli column) and its
 * version-2 twin with a skewed row: both import, the v1 rows at skew 0,
 * and the export → import → export round trip keeps the skewed row. */
static void test_v1_and_v2_dumps(void)
{
    static const char v1[] = V1_HEAD GPU_ROW V1_COLS
        "'grouped_masked', 'bf16', 'k', 1, 64, 4096, 7168, 0, 0, 0, 0, 0, 8, 0, 0, 10, 2e-05, 1.9e-05, 2.1e-05, "
        "NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');\nCOMMIT;\n";
    static const char v2[] = V2_HEAD GPU_ROW V2_COLS
        "'grouped_masked', 'bf16', 'k', 1, 64, 4096, 7168, 0, 0, 0, 0, 0, 8, 0, 0, 1000, 10, 3e-05, 2.9e-05, "
        "3.1e-05, NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');\nCOMMIT;\n";
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    CHECK_MSG(import(db, v1, &e) == 0, "%s", e.msg);
    CHECK_MSG(import(db, v2, &e) == 0, "%s", e.msg);
    walk_ctx w = walk(db);
    CHECK(w.n == 2 && w.skewed == 1); /* the same shape at two skews: two keys */
    char p1[300], p2[300];
    path_in(p1, sizeof p1, "a.sql");
    path_in(p2, sizeof p2, "b.sql");
    FILE *f = fopen(p1, "w");
    REQUIRE(f != NULL);
    CHECK(calib_db_export(db, f, &e) == 0);
    fclose(f);
    calib_db_close(db);
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    CHECK_MSG(calib_db_import(db, p1, NULL, &e) == 0, "%s", e.msg);
    f = fopen(p2, "w");
    REQUIRE(f != NULL);
    CHECK(calib_db_export(db, f, &e) == 0);
    fclose(f);
    calib_db_close(db);
    char *a = test_slurp(p1), *b = test_slurp(p2);
    CHECK(a && b && strcmp(a, b) == 0);
    CHECK_CONTAINS(a, "-- schema_version 2\n");
    CHECK_CONTAINS(a, ", 8, 0, 0, 1000, 10, 3.0000000000000001e-05"); /* groups … skew_milli, reps, median */
    free(a), free(b);
    unlink(p1), unlink(p2);
}

/* `row` (a points insert after the head and GPU) refused with each needle. */
static void expect_refused(const char *head, const char *row, const char *n1, const char *n2)
{
    char text[4096];
    snprintf(text, sizeof text, "%s" GPU_ROW "%sCOMMIT;\n", head, row);
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    CHECK_MSG(import(db, text, &e) == SIM_EINVAL, "accepted: %.200s", row);
    CHECK_CONTAINS(e.msg, n1);
    CHECK_CONTAINS(e.msg, n2);
    CHECK(walk(db).n == 0);
    calib_db_close(db);
}

static void test_bad_skew_values(void)
{
#define ROW(op_, skew_)                                                                                          \
    V2_COLS "'" op_ "', 'bf16', 'k', 1, 64, 4096, 7168, 0, 0, 0, 0, 0, 8, 0, 0, " skew_                         \
            ", 10, 3e-05, 2.9e-05, 3.1e-05, NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');\n"
    static const struct {
        const char *head, *row, *why;
    } bad[] = {
        {V2_HEAD, ROW("grouped_contig", "1.5"),
         "skew_milli is a real (expected an integer: the Zipf exponent of the routing in thousandths: "
         "1000 for s = 1, 1500 for s = 1.5)"},
        {V2_HEAD, ROW("grouped_contig", "-1000"), "skew_milli is -1000"},
        {V2_HEAD, ROW("grouped_masked", "4001"),
         "skew_milli is 4001 (expected the Zipf exponent in thousandths, 0 to 4000: 1000 = s 1)"},
        {V2_HEAD, ROW("gemm", "1000"),
         "skew_milli is 1000 on op gemm (expected 0: only grouped_contig and grouped_masked rows have a "
         "routing skew)"},
        {V2_HEAD, ROW("grouped_contig", "'s1'"), "skew_milli is text (expected an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* Named at the skew's literal: line 5 (the row), its column. */
        const char *lit = strstr(bad[i].row, ", 8, 0, 0, ");
        REQUIRE(lit != NULL);
        char where[64];
        snprintf(where, sizeof where, "t.sql:5:%d: statement 3: points row: ",
                 (int)(lit + strlen(", 8, 0, 0, ") - bad[i].row) + 1);
        expect_refused(bad[i].head, bad[i].row, where, bad[i].why);
    }
    /* A version-1 dump may not name the column; a version-2 one must. */
    expect_refused(V1_HEAD, ROW("grouped_contig", "1000"), "t.sql:5:",
                   "column 17 of points is 'skew_milli', expected 'reps'");
    expect_refused(V2_HEAD,
                   V1_COLS "'gemm', 'bf16', 'k', 1, 64, 4096, 7168, 0, 0, 0, 0, 0, 0, 0, 0, 10, 3e-05, 2.9e-05, "
                           "3.1e-05, NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');\n",
                   "t.sql:5:", "column 17 of points is 'reps', expected 'skew_milli'");
#undef ROW
    /* The harness's writes are checked the same way. */
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "x"), snprintf(id.cc, sizeof id.cc, "cpu");
    snprintf(id.backend, sizeof id.backend, "cpu");
    int64_t gid = 0;
    REQUIRE(calib_db_gpu_ensure(db, &id, &gid, &e) == 0);
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_ATTN_DECODE;
    snprintf(p.dtype, sizeof p.dtype, "bf16"), snprintf(p.kernel, sizeof p.kernel, "k");
    p.shape.batch = 1, p.shape.ctx = 64, p.shape.skew_milli = 1000;
    p.reps = 1, p.median_s = p.p10_s = p.p90_s = 1e-5;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    CHECK(calib_db_point_insert(db, gid, &p, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "skew_milli is 1000 on op attn_decode");
    p.op = CALIB_OP_GROUPED_CONTIG, p.shape.groups = 4, p.shape.m = 16, p.shape.n = 64, p.shape.k = 128;
    CHECK_MSG(calib_db_point_insert(db, gid, &p, &e) == 0, "%s", e.msg);
    calib_db_close(db);
}

/* The version-1 schema as servesim wrote it before skew_milli. */
static const char v1_schema[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE gpus(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sms INTEGER NOT NULL, cc TEXT NOT NULL,"
    " sm_clock_mhz INTEGER NOT NULL, mem_clock_mhz INTEGER NOT NULL, driver TEXT NOT NULL, cuda TEXT NOT NULL,"
    " backend TEXT NOT NULL, UNIQUE(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend));"
    "CREATE TABLE points(id INTEGER PRIMARY KEY, gpu_id INTEGER NOT NULL REFERENCES gpus(id), op TEXT NOT NULL,"
    " dtype TEXT NOT NULL, kernel TEXT NOT NULL, kernel_version INTEGER NOT NULL, m INTEGER NOT NULL DEFAULT 0,"
    " n INTEGER NOT NULL DEFAULT 0, k INTEGER NOT NULL DEFAULT 0, batch INTEGER NOT NULL DEFAULT 0,"
    " ctx INTEGER NOT NULL DEFAULT 0, heads INTEGER NOT NULL DEFAULT 0, kv_heads INTEGER NOT NULL DEFAULT 0,"
    " head_dim INTEGER NOT NULL DEFAULT 0, groups INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0,"
    " ranks INTEGER NOT NULL DEFAULT 0, reps INTEGER NOT NULL, median_s REAL NOT NULL, p10_s REAL NOT NULL,"
    " p90_s REAL NOT NULL, tflops REAL, gbps REAL, frac_of_peak REAL, check_err REAL, measured_at TEXT NOT NULL,"
    " UNIQUE(gpu_id, op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, kv_heads, head_dim, groups,"
    " bytes, ranks));"
    "CREATE INDEX points_lookup ON points(gpu_id, op, dtype);"
    "INSERT INTO meta VALUES('schema_version', '1');"
    "INSERT INTO gpus VALUES(7, 'NVIDIA H100', 132, '9.0', 1980, 2619, '550', '12.4', 'gpu');"
    "INSERT INTO points VALUES(3, 7, 'grouped_contig', 'bf16', 'k', 1, 64, 4096, 7168, 0, 0, 0, 0, 0, 8, 0, 0, 10,"
    " 2e-05, 1.9e-05, 2.1e-05, NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');"
    "INSERT INTO points VALUES(5, 7, 'gemm', 'bf16', 'k', 1, 64, 4096, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 10,"
    " 1e-05, 1e-05, 1e-05, NULL, NULL, NULL, NULL, '2026-12-01T00:00:00Z');";

static char *raw_text(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char *out = NULL;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

static void test_v1_file_migrates(void)
{
    char path[300];
    path_in(path, sizeof path, "v1.db");
    sqlite3 *h = NULL;
    REQUIRE(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, v1_schema, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);

    /* Read-only: the rows at skew 0, the file left at version 1. */
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE_MSG(calib_db_open(path, CALIB_DB_READONLY, &db, &e) == 0, "%s", e.msg);
    walk_ctx w = walk(db);
    CHECK(w.n == 2 && w.skewed == 0 && w.grouped == 1);
    int64_t gid = 0;
    CHECK(calib_db_gpu_find(db, "H100", "gpu", &gid, &e) == 0 && gid == 7); /* row ids kept */
    calib_shape s;
    memset(&s, 0, sizeof s);
    s.groups = 8, s.m = 64, s.n = 4096, s.k = 7168;
    calib_lookup_result r;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GROUPED_CONTIG, "bf16", NULL, &s, &r, &e) == 0);
    CHECK(r.status == CALIB_LOOKUP_EXACT);
    CHECK_NEAR(r.latency_s, 2e-05, 1e-18);
    calib_db_close(db);
    char *v = raw_text(path, "SELECT value FROM meta WHERE key='schema_version'");
    CHECK(v && strcmp(v, "1") == 0);
    free(v);

    /* Writable: rebuilt in place, version 2, the key holds the skew. */
    REQUIRE_MSG(calib_db_open(path, CALIB_DB_CREATE, &db, &e) == 0, "%s", e.msg);
    w = walk(db);
    CHECK(w.n == 2 && w.skewed == 0);
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_GROUPED_CONTIG;
    snprintf(p.dtype, sizeof p.dtype, "bf16"), snprintf(p.kernel, sizeof p.kernel, "k");
    p.kernel_version = 1, p.shape = s, p.shape.skew_milli = 1000;
    p.reps = 10, p.median_s = p.p10_s = p.p90_s = 4e-5;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    snprintf(p.measured_at, sizeof p.measured_at, "2026-12-02T00:00:00Z");
    CHECK_MSG(calib_db_point_insert(db, 7, &p, &e) == 0, "%s", e.msg);
    CHECK(walk(db).n == 3 && walk(db).skewed == 1);
    calib_db_close(db);
    v = raw_text(path, "SELECT value FROM meta WHERE key='schema_version'");
    CHECK(v && strcmp(v, "2") == 0);
    free(v);
    v = raw_text(path, "SELECT sql FROM sqlite_master WHERE name='points'");
    CHECK_CONTAINS(v, "ranks, skew_milli))");
    free(v);
    v = raw_text(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('points_v1', 'points_lookup')");
    CHECK(v && strcmp(v, "1") == 0); /* the index rebuilt, the old table gone */
    free(v);
    /* Opened again: nothing left to migrate. */
    REQUIRE_MSG(calib_db_open(path, CALIB_DB_READONLY, &db, &e) == 0, "%s", e.msg);
    CHECK(walk(db).n == 3);
    calib_db_close(db);
    unlink(path);
}

static const test_case cases[] = {
    {"v1_dump_loads_at_skew_0", test_v1_dump_loads_at_skew_0},
    {"v1_and_v2_dumps", test_v1_and_v2_dumps},
    {"bad_skew_values", test_bad_skew_values},
    {"v1_file_migrates", test_v1_file_migrates},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    if (!mkdtemp(tmpdir)) return test_skip("test_calib_skew_db", "no temporary folder");
    int rc = test_run("test_calib_skew_db", cases);
    rmdir(tmpdir);
    return rc;
}
