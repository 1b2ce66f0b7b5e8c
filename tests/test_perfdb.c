/* test_perfdb — a calibrated perf-db reaches the simulator: a scenario's
 * hardware.perf_db (SQLite file or .sql dump) changes iteration latencies
 * against the roofline, the file and its dump give the same run, the
 * newest matching dump under $SERVESIM_CALIB_DATA is picked by default, and
 * a bad path is a clear error. */
#include "../calib/calib_db.h"
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_model_util.h"
#include "test_perfdb_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
static void test_harness_db(const char *bin, const char *dir)
{
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

int main(int argc, char **argv)
{
    char dir[] = "/tmp/servesim_perfdb_XXXXXX";
    REQUIRE_OR(mkdtemp(dir) != NULL, return test_finish("test_perfdb"));
    setenv("SERVESIM_CALIB_DATA", dir, 1); /* keep the repo's calib/data out of the baseline */
    char path[512], sql[600], dump[600];
    snprintf(path, sizeof path, "%s/h100.db", dir);
    snprintf(sql, sizeof sql, "%.500s.sql", path);
    if (make_db(path)) return test_finish("test_perfdb");
    if (argc > 1) test_harness_db(argv[1], dir);

    char desc_buf[1024];
    const char *desc = desc_buf;
    double roof = run_ttft("", desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "analytic roofline");
    double measured = run_ttft(path, desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "perf-db");
    CHECK_MSG(measured > roof * 1.05, "perf-db TTFT %.3f ms vs roofline %.3f ms", measured, roof);
    CHECK_NEAR(run_ttft(sql, NULL, 0), measured, 1e-9 * measured);

    /* The default: the newest dump named after the GPU in the data folder. */
    snprintf(dump, sizeof dump, "%.500s/h100-sxm-2026-11-29.sql", dir);
    CHECK(rename(sql, dump) == 0);
    double dflt = run_ttft("", desc_buf, sizeof desc_buf);
    CHECK_CONTAINS(desc, "h100-sxm-2026-11-29.sql");
    CHECK_NEAR(dflt, measured, 1e-9 * measured);

    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "%s/missing.db", dir);
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    CHECK(sim_cluster_create(&sc, &c, &err) < 0 && c == NULL);
    CHECK_CONTAINS(err.msg, "hardware.perf_db");
    unlink(path);
    unlink(dump);
    rmdir(dir);
    return test_finish("test_perfdb");
}
