/* test_perfdb — a calibrated perf-db reaches the simulator: a scenario's
 * hardware.perf_db (SQLite file or .sql dump) changes iteration latencies
 * against the roofline, the file and its dump give the same run, the
 * newest matching dump under $SERVESIM_CALIB_DATA is picked by default, and
 * a bad path is a clear error; hardware.perf_db: none (and `run
 * --no-perf-db`) prices with the analytic roofline although a dump is
 * there; a perf-db with a latency that is not finite and positive is
 * refused before it prices anything; search says per candidate what
 * priced it. main makes the perf-db and its dump once; each case then sets
 * up the default dump it needs (place_default_dump, remove_default_dump),
 * so every case runs alone (-o NAME) or in any order. */
#include "calib_db.h"
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"
#include "test_util.h"
#include "test_model_util.h"
#include "test_perfdb_util.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary data folder, the perf-db made in it (by main), its .sql
 * dump and the path at which a copy of that dump is the GPU's default. */
static char pdb_dir[] = "/tmp/servesim_perfdb_XXXXXX";
static char pdb_path[512], pdb_sql[600], pdb_dump[600];

static int make_db(const char *path)
{
    calib_db *db = NULL;
    sim_err e = {{0}};
    REQUIRE_MSG_OR(calib_db_open(path, CALIB_DB_CREATE, &db, &e) == 0, return -1, "%s", e.msg);
    int64_t gid = test_perfdb_h100(db);
    /* Llama-3.1-8B's qkv_proj (n = 6144, k = 4096), measured twice as slow
     * as the roofline would have it. */
    const int64_t ms[] = {1, 64, 512, 4096};
    for (int i = 0; i < 4; i++)
        test_perfdb_gemm(db, gid, ms[i], 6144, 4096, 2 * (30e-6 + ms[i] * 6144.0 * 4096 * 2 / 700e12));
    char sql[1200];
    snprintf(sql, sizeof sql, "%.1000s.sql", path);
    FILE *f = fopen(sql, "w");
    CHECK(f && calib_db_export(db, f, &e) == 0);
    if (f) fclose(f);
    calib_db_close(db);
    return 0;
}

/* Puts a copy of the dump where the data folder's default for h100-sxm is
 * looked up; 0 or -1. */
static int place_default_dump(void)
{
    char *text = test_slurp(pdb_sql);
    FILE *f = text ? fopen(pdb_dump, "w") : NULL;
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    return ok ? 0 : -1;
}

/* No default dump for h100-sxm in the data folder. */
static int remove_default_dump(void) { return unlink(pdb_dump) == 0 || access(pdb_dump, F_OK) != 0 ? 0 : -1; }

static double run_ttft(const char *perf_db, char *desc, size_t dlen)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.workload.requests = 200;
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "%s", perf_db);
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    int rc = sim_cluster_create(&sc, &c, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    if (desc) sim_cluster_describe(c, desc, dlen);
    sim_summary s;
    CHECK(sim_cluster_run(c, &s, &err) == 0);
    sim_cluster_destroy(c);
    return s.ttft_ms.mean;
}

static int first_gpu(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    (void)gpu_id;
    (void)n_points;
    snprintf((char *)ctx, 128, "%.127s", id->name);
    return 1; /* stop after the first */
}

/* The whole path: `servesim calibrate` (CPU references, tiny grid) writes
 * a perf-db that the cost model then reads (GEMMs scaled from the measured
 * points instead of the roofline). */
static void test_harness_db(void)
{
    const char *bin = test_servesim;
    const char *dir = pdb_dir;
    REQUIRE_MSG(bin, "needs the servesim binary as argv[1]");
    char db_path[600], cmd[2000];
    snprintf(db_path, sizeof db_path, "%.500s/harness.db", dir);
    snprintf(cmd, sizeof cmd, "'%s' calibrate --backend cpu --grid tiny --ops gemm --quiet --db '%s' >/dev/null 2>&1",
             bin, db_path);
    CHECK(system(cmd) == 0);
    calib_db *db = NULL;
    sim_err e = {{0}};
    CHECK_MSG(calib_db_open(db_path, CALIB_DB_READONLY, &db, &e) == 0, "%s", e.msg);
    if (!db) return;
    char name[128] = "";
    calib_db_gpu_foreach(db, first_gpu, name, &e);
    CHECK(name[0] != 0);
    model_cost *c = test_cost_model("llama-3.1-8b", "h100-sxm", 1, 0);
    if (c) {
        model_batch b = {.n_decode = 8, .decode_ctx_sum = 8 * 1000};
        model_iter_cost roof, meas;
        double t0 = model_cost_iteration(c, &b, &roof);
        /* A CPU-backend run is never picked for a GPU by default... */
        CHECK(model_cost_set_db(c, db, NULL, &e) == SIM_EINVAL);
        /* ...but can be named explicitly. */
        CHECK_MSG(model_cost_set_db(c, db, name, &e) == 0, "%s", e.msg);
        double t1 = model_cost_iteration(c, &b, &meas);
        CHECK(strcmp(meas.source, "db") == 0 && strcmp(roof.source, "roofline") == 0);
        CHECK_MSG(t1 != t0, "perf-db %.6g s vs roofline %.6g s", t1, t0);
        model_cost_destroy(c);
    }
    calib_db_close(db);
    unlink(db_path);
}

/* `servesim run YAML --json --no-db [extra]`: the mean TTFT, or -1. */
static double cli_ttft(const char *bin, const char *yaml, const char *extra)
{
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "'%s' run '%s' --json --no-db --quiet %s 2>/dev/null", bin, yaml, extra);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    json_error_t je;
    json_t *o = json_loadf(p, 0, &je);
    int st = pclose(p);
    double v = -1;
    if (o && st == 0) v = json_number_value(json_object_get(json_object_get(o, "ttft_ms"), "mean"));
    json_decref(o);
    return v;
}

/* A scenario whose perf-db holds a bad latency is refused with the row. */
static void test_bad_perf_db(void)
{
    const char *dir = pdb_dir, *good_db = pdb_path, *good_dump = pdb_sql;
    REQUIRE_MSG(access(good_dump, R_OK) == 0, "%s: made by main", good_dump);
    char bad_db[600], bad_dump[600], cmd[1400];
    snprintf(bad_db, sizeof bad_db, "%.500s/bad.db", dir);
    snprintf(bad_dump, sizeof bad_dump, "%.500s/bad.sql", dir);
    static const char *const values[] = {"1e300", "9e999", "-1", "0", "'fast'"};
    static const char *const needles[] = {"median_s is 1e+300", "median_s is inf", "median_s is -1", "median_s is 0",
                                          "median_s is text"};
    for (int i = 0; i < 5; i++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good_db, bad_db);
        REQUIRE(system(cmd) == 0);
        sqlite3 *h = NULL;
        char sql[200];
        snprintf(sql, sizeof sql, "UPDATE points SET median_s = %s WHERE id = 2", values[i]);
        REQUIRE(sqlite3_open(bad_db, &h) == SQLITE_OK);
        CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(h);
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "%s", bad_db);
        sim_cluster *c = NULL;
        sim_err err = {{0}};
        CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL && c == NULL);
        CHECK_CONTAINS(err.msg, "hardware.perf_db");
        CHECK_CONTAINS(err.msg, "points row id 2");
        CHECK_CONTAINS(err.msg, needles[i]);
    }
    /* The same in a dump: the median of m=64 written as 1e300 or NULL. */
    char *text = test_slurp(good_dump);
    REQUIRE(text != NULL);
    char want[64];
    snprintf(want, sizeof want, ", %.17g, ", 2 * (30e-6 + 64 * 6144.0 * 4096 * 2 / 700e12));
    char *at = strstr(text, want);
    CHECK_MSG(at != NULL, "'%s' not in the dump", want);
    static const char *const dump_values[] = {"1e300", "NULL"};
    static const char *const dump_needles[] = {"median_s is 1e+300", "median_s is NULL"};
    for (int i = 0; at && i < 2; i++) {
        FILE *f = fopen(bad_dump, "w");
        REQUIRE(f != NULL);
        fprintf(f, "%.*s, %s, %s", (int)(at - text), text, dump_values[i], at + strlen(want));
        fclose(f);
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "%s", bad_dump);
        sim_cluster *c = NULL;
        sim_err err = {{0}};
        CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL && c == NULL);
        CHECK_CONTAINS(err.msg, "bad.sql:11:"); /* line 11, the second point */
        CHECK_CONTAINS(err.msg, ": statement 9: points row: ");
        CHECK_CONTAINS(err.msg, dump_needles[i]);
    }
    free(text);
    unlink(bad_db);
    unlink(bad_dump);
}

/* Search on two GPU types, one with a measured dump (h100-sxm, in the data
 * folder), one without: each candidate says what priced it, the report
 * warns that the ranking mixes sources, and hardware.perf_db=none prices
 * every candidate analytically. */
static void test_search_prices(void)
{
    static const char yaml[] =
        "name: t-prices\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
        "workload: {requests: 100, arrival: {process: poisson, rate: 10}, input_tokens: {dist: fixed, value: 256},"
        " output_tokens: {dist: fixed, value: 32}}\n"
        "slo: {ttft_ms: 1000, tpot_ms: 100}\n"
        "search: {gpus: \"h100-sxm,a100-sxm-80g\", max_gpus: 1, modes: colocated, layouts: tp1, max_seqs: \"64\","
        " max_batched_tokens: \"4096\", chunk_tokens: \"1024\", requests: 100, rate: 10}\n";
    REQUIRE_MSG(place_default_dump() == 0, "%s: cannot copy %s there", pdb_dump, pdb_sql);
    for (int pass = 0; pass < 2; pass++) {
        const char *sets[] = {"hardware.perf_db=none"};
        sim_scenario *sc = malloc(sizeof *sc);
        REQUIRE(sc != NULL);
        sim_err err = {{0}};
        REQUIRE_MSG_OR(sim_loader_load_string(yaml, strlen(yaml), "t.yaml", sets, pass, sc, &err) == 0,
                       {
                           free(sc);
                           return;
                       },
                       "%s", err.msg);
        sim_search_opts o = {.threads = 1};
        sim_search *s = NULL;
        REQUIRE_MSG_OR(sim_search_create(sc, &o, &s, &err) == 0,
                       {
                           free(sc);
                           return;
                       },
                       "%s", err.msg);
        CHECK_MSG(sim_search_run(s, &err) == 0, "%s", err.msg);
        int32_t seen = 0;
        for (int32_t i = 0; i < sim_search_count(s); i++) {
            const sim_search_cand *c = sim_search_cand_get(s, i);
            const sim_search_result *r = sim_search_result_get(s, i);
            if (!r->prices[0]) continue;
            seen++;
            int h100 = strcmp(c->gpu, "h100-sxm") == 0;
            const char *want = pass == 0 && h100 ? "perf-db h100-sxm-2026-11-29.sql" : "analytic";
            CHECK_MSG(strcmp(r->prices, want) == 0, "%s priced by '%s', expected '%s'", c->label, r->prices, want);
        }
        CHECK(seen == 2);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        REQUIRE(f != NULL);
        sim_search_print_tables(s, f);
        fclose(f);
        if (pass == 0) {
            CHECK_CONTAINS(buf, "prices: h100-sxm perf-db h100-sxm-2026-11-29.sql; a100-sxm-80g analytic");
            CHECK_CONTAINS(buf, "measured and analytic prices are mixed");
        } else {
            CHECK_CONTAINS(buf, "prices: h100-sxm analytic; a100-sxm-80g analytic\n");
        }
        free(buf);
        sim_search_destroy(s);
        free(sc);
    }
    remove_default_dump();
}

/* The scenario's perf_db picks what prices it: the file, its dump and the
 * newest dump named after the GPU give the measured latencies, "" without a
 * dump and `none` (also on the command line) the roofline. */
static void test_selection(void)
{
    const char *dir = pdb_dir, *path = pdb_path, *sql = pdb_sql;
    REQUIRE_MSG(remove_default_dump() == 0, "cannot remove %s", pdb_dump);
    char desc_buf[1024];
    const char *desc = desc_buf;
    double roof = run_ttft("", desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "analytic roofline");
    double measured = run_ttft(path, desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "perf-db");
    CHECK_MSG(measured > roof * 1.05, "perf-db TTFT %.3f ms vs roofline %.3f ms", measured, roof);
    CHECK_NEAR(run_ttft(sql, NULL, 0), measured, 1e-9 * measured);

    /* The default: the newest dump named after the GPU in the data folder. */
    REQUIRE(place_default_dump() == 0);
    double dflt = run_ttft("", desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "h100-sxm-2026-11-29.sql");
    CHECK_NEAR(dflt, measured, 1e-9 * measured);

    /* hardware.perf_db: none — the analytic roofline although the dump is there. */
    double none = run_ttft("none", desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "analytic roofline");
    CHECK_NEAR(none, roof, 1e-9 * roof);
    char yaml[600];
    snprintf(yaml, sizeof yaml, "%.500s/none.yaml", dir);
    FILE *yf = fopen(yaml, "w");
    REQUIRE_OR(yf != NULL, return);
    fputs("name: none\nhardware: {gpu: h100-sxm, perf_db: none}\nworkload: {requests: 200}\n", yf);
    fclose(yf);
    sim_scenario *ysc = malloc(sizeof *ysc);
    sim_err yerr = {{0}};
    REQUIRE_OR(ysc != NULL, return);
    CHECK_MSG(sim_loader_load_file(yaml, NULL, 0, ysc, &yerr) == 0, "%s", yerr.msg);
    CHECK_MSG(strcmp(ysc->hardware.perf_db, "none") == 0, "perf_db read as '%s'", ysc->hardware.perf_db);
    free(ysc);
    if (test_servesim) {
        /* The same through the command line: the file's `none`, then
         * --no-perf-db over a scenario that would use the dump. */
        CHECK_NEAR(cli_ttft(test_servesim, yaml, ""), roof, 1e-6 * roof);
        yf = fopen(yaml, "w");
        REQUIRE_OR(yf != NULL, return);
        fputs("name: dflt\nhardware: {gpu: h100-sxm}\nworkload: {requests: 200}\n", yf);
        fclose(yf);
        CHECK_NEAR(cli_ttft(test_servesim, yaml, ""), measured, 1e-6 * measured);
        CHECK_NEAR(cli_ttft(test_servesim, yaml, "--no-perf-db"), roof, 1e-6 * roof);
    }
    unlink(yaml);
    remove_default_dump();
}

/* A perf_db path that does not exist is refused, naming the key. */
static void test_missing_db(void)
{
    const char *dir = pdb_dir;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "%s/missing.db", dir);
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    CHECK(sim_cluster_create(&sc, &c, &err) < 0 && c == NULL);
    CHECK_CONTAINS(err.msg, "hardware.perf_db");
}

static const test_case cases[] = {
    {"harness_db", test_harness_db},
    {"selection", test_selection},
    {"bad_perf_db", test_bad_perf_db},
    {"search_prices", test_search_prices},
    {"missing_db", test_missing_db},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    REQUIRE_OR(mkdtemp(pdb_dir) != NULL, return test_finish("test_perfdb"));
    setenv("SERVESIM_CALIB_DATA", pdb_dir, 1); /* keep the repo's calib/data out of the baseline */
    snprintf(pdb_path, sizeof pdb_path, "%s/h100.db", pdb_dir);
    snprintf(pdb_sql, sizeof pdb_sql, "%.500s.sql", pdb_path);
    snprintf(pdb_dump, sizeof pdb_dump, "%.500s/h100-sxm-2026-11-29.sql", pdb_dir);
    if (make_db(pdb_path)) return test_finish("test_perfdb");
    int rc = test_run("test_perfdb", cases);
    unlink(pdb_path);
    unlink(pdb_sql);
    unlink(pdb_dump);
    rmdir(pdb_dir);
    return rc;
}
