/* test_calib — the calibration harness end to end on the CPU backend:
 * grid → checks → timing → perf-db, interruption (--max-points) and resume
 * without duplicates, GPU identity row, export → import round trip, import
 * refusing foreign SQL, lookup interpolation / exact / outside / fastest
 * kernel, statistics, the no-GPU error, and the CLI exit codes. */
#include "test_util.h"

#include "calib_backend.h"
#include "sim_cli_calib.h"
#include "calib_db.h"
#include "calib_run.h"
#include "calib_stats.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static int count_cb(void *ctx, int64_t gpu_id, const calib_point *p)
{
    (void)gpu_id, (void)p;
    (*(int64_t *)ctx)++;
    return 0;
}

static int64_t count_points(calib_db *db)
{
    int64_t n = 0;
    sim_err err;
    CHECK(calib_db_point_foreach(db, 0, -1, count_cb, &n, &err) == 0);
    return n;
}

typedef struct {
    int64_t n;
    calib_gpu_id id;
} gpu_seen;

static int gpu_cb(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    gpu_seen *g = ctx;
    (void)gpu_id, (void)n_points;
    g->n++;
    g->id = *id;
    return 0;
}

/* Grid points the CPU backend plans for the tiny grid (all ops). */
static int64_t cpu_tiny_total(calib_backend *b)
{
    int64_t total = 0;
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        calib_shape *shapes = NULL;
        int64_t n = 0;
        sim_err err;
        b->kernels(b->state, (calib_op)op, &ks, &nk, &why);
        if (!nk) continue;
        CHECK(calib_grid_build(CALIB_GRID_TINY, (calib_op)op, 0, &shapes, &n, &err) == 0);
        total += n * nk;
        free(shapes);
    }
    return total;
}

static void test_cpu_end_to_end(void)
{
    char dbp[300], dump1[300], dump2[300], dbp2[300], bad[300];
    path_in(dbp, sizeof dbp, "a.db");
    path_in(dbp2, sizeof dbp2, "b.db");
    path_in(dump1, sizeof dump1, "a.sql");
    path_in(dump2, sizeof dump2, "b.sql");
    path_in(bad, sizeof bad, "bad.sql");
    sim_err err = {{0}};
    calib_backend b;
    CHECK(calib_backend_cpu_create(&b, &err) == 0);
    int64_t total = cpu_tiny_total(&b);
    CHECK(total > 40);

    /* Interrupted run: stops after 10 new points, each already committed. */
    char *argv1[] = {"calibrate", "--backend", "cpu", "--grid", "tiny", "--db", dbp, "--quiet", "--max-points", "10", "--reps", "2"};
    CHECK(sim_cli_calibrate(12, argv1) == 0);
    calib_db *db = NULL;
    CHECK(calib_db_open(dbp, CALIB_DB_READONLY, &db, &err) == 0);
    if (db) CHECK(count_points(db) == 10);
    calib_db_close(db);

    /* Resume through the API: the 10 are skipped, the rest measured once. */
    CHECK(calib_db_open(dbp, CALIB_DB_CREATE, &db, &err) == 0);
    calib_run_opts o;
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY, o.reps = 2;
    calib_run_stats st;
    CHECK_MSG(calib_run(&b, db, &o, &st, &err) == 0, "%s", err.msg);
    CHECK(st.planned == total);
    CHECK(st.skipped == 10);
    CHECK(st.measured == total - 10);
    CHECK(st.failed == 0);
    CHECK_MSG(st.checks_failed == 0, "%lld checks failed", (long long)st.checks_failed);
    CHECK(st.checks_passed >= 11);
    CHECK(count_points(db) == total);
    /* A third run measures nothing new. */
    CHECK(calib_run(&b, db, &o, &st, &err) == 0);
    CHECK(st.measured == 0 && st.skipped == total);
    CHECK(count_points(db) == total);

    gpu_seen g = {0};
    CHECK(calib_db_gpu_foreach(db, gpu_cb, &g, &err) == 0);
    CHECK(g.n == 1);
    CHECK(strcmp(g.id.backend, "cpu") == 0 && strcmp(g.id.cc, "cpu") == 0 && g.id.sms >= 1);

    /* Read-back: a measured GEMM point comes back exactly. */
    int64_t gid = 0;
    CHECK(calib_db_gpu_find(db, "", "cpu", &gid, &err) == 0);
    calib_shape s = {0};
    s.m = 16, s.n = 128, s.k = 256;
    calib_lookup_result r;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &s, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_EXACT);
    CHECK(r.latency_s > 0 && isfinite(r.latency_s));
    s.m = 4; /* between 1 and 16: interpolated, between the two neighbours */
    calib_lookup_result r1, r16;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &s, &r, &err) == 0);
    s.m = 1;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &s, &r1, &err) == 0);
    s.m = 16;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &s, &r16, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_INTERP);
    CHECK(r.latency_s >= fmin(r1.latency_s, r16.latency_s) * 0.999999 && r.latency_s <= fmax(r1.latency_s, r16.latency_s) * 1.000001);
    calib_db_close(db);

    /* Export → import into a fresh perf-db → export: identical text. */
    char *argv_e1[] = {"db", "export", dbp, dump1};
    char *argv_i[] = {"db", "import", dbp2, dump1};
    char *argv_e2[] = {"db", "export", dbp2, dump2};
    CHECK(sim_cli_db(4, argv_e1) == 0);
    CHECK(sim_cli_db(4, argv_i) == 0);
    CHECK(sim_cli_db(4, argv_e2) == 0);
    char *t1 = test_slurp(dump1), *t2 = test_slurp(dump2);
    CHECK(t1 && t2 && strlen(t1) > 1000);
    CHECK_MSG(t1 && t2 && strcmp(t1, t2) == 0, "export → import → export differs");
    CHECK_CONTAINS(t1, "-- schema_version 2");
    CHECK_CONTAINS(t1, "skew_milli, reps"); /* the routing skew's column, exported */
    /* Importing again adds nothing (merge keeps existing rows). */
    CHECK(calib_db_open(dbp2, CALIB_DB_CREATE, &db, &err) == 0);
    int64_t rows = -1;
    CHECK(calib_db_import(db, dump1, &rows, &err) == 0);
    CHECK(rows == 0);
    CHECK(count_points(db) == total);
    /* Foreign SQL is refused and nothing is half-applied. */
    FILE *f = fopen(bad, "w");
    if (f) {
        fprintf(f, "-- servesim perf-db dump\n-- schema_version 1\nDELETE FROM points;\nDROP TABLE points;\n");
        fclose(f);
    }
    CHECK(calib_db_import(db, bad, &rows, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "not part of a perf-db dump");
    CHECK(count_points(db) == total);
    f = fopen(bad, "w");
    if (f) {
        fprintf(f, "-- servesim perf-db dump\n-- schema_version 99\n");
        fclose(f);
    }
    CHECK(calib_db_import(db, bad, &rows, &err) == SIM_EINVAL);
    calib_db_close(db);
    free(t1), free(t2);

    /* CLI: checks only; db list/show; usage errors. */
    char *argv_chk[] = {"calibrate", "--backend", "cpu", "--check", "--quiet"};
    CHECK(sim_cli_calibrate(5, argv_chk) == 0);
    char *argv_nodb[] = {"calibrate", "--backend", "cpu"};
    CHECK(sim_cli_calibrate(3, argv_nodb) == 2);
    char *argv_badop[] = {"calibrate", "--backend", "cpu", "--ops", "gemm,nope", "--db", dbp};
    CHECK(sim_cli_calibrate(7, argv_badop) == 2);
    char *argv_help[] = {"calibrate", "--help"};
    CHECK(sim_cli_calibrate(2, argv_help) == 0);
    char *argv_list[] = {"db", "list", dbp};
    CHECK(sim_cli_db(3, argv_list) == 0);
    char *argv_show[] = {"db", "show", dbp, "--op", "softmax"};
    CHECK(sim_cli_db(5, argv_show) == 0);
    char *argv_lk[] = {"db", "lookup", dbp, "--gpu", "", "--op", "gemm", "--dtype", "fp8", "m=8", "n=100", "k=200"};
    CHECK(sim_cli_db(12, argv_lk) == 0);
    char *argv_bad[] = {"db", "frobnicate", dbp};
    CHECK(sim_cli_db(3, argv_bad) == 2);
    char missing[300];
    path_in(missing, sizeof missing, "missing.db");
    char *argv_missing[] = {"db", "list", missing};
    CHECK(sim_cli_db(3, argv_missing) == 2); /* a missing file is bad input */
    CHECK(access(missing, F_OK) != 0); /* read-only open creates nothing */
    b.destroy(b.state);
}

/* Synthetic perf-db with latency = exp(0.5·L(m) + 0.3·L(n) + 0.2·L(k) − 20),
 * L = log1p, which multilinear interpolation in L-space reproduces exactly. */
static double synth(int64_t m, int64_t n, int64_t k)
{
    return exp(0.5 * log1p((double)m) + 0.3 * log1p((double)n) + 0.2 * log1p((double)k) - 20.0);
}

static void test_lookup(void)
{
    char dbp[300];
    path_in(dbp, sizeof dbp, "synth.db");
    sim_err err;
    calib_db *db = NULL;
    CHECK(calib_db_open(dbp, CALIB_DB_CREATE, &db, &err) == 0);
    if (!db) return;
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "NVIDIA H100 80GB HBM3");
    id.sms = 132;
    snprintf(id.cc, sizeof id.cc, "9.0");
    snprintf(id.backend, sizeof id.backend, "gpu");
    int64_t gid = 0, gid2 = 0;
    CHECK(calib_db_gpu_ensure(db, &id, &gid, &err) == 0);
    CHECK(calib_db_gpu_ensure(db, &id, &gid2, &err) == 0);
    CHECK(gid == gid2);
    static const int64_t ms[] = {1, 16, 256}, ns[] = {1024, 4096}, ks[] = {1024, 4096};
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_GEMM;
    snprintf(p.dtype, sizeof p.dtype, "bf16");
    snprintf(p.kernel, sizeof p.kernel, "kern_gemm_bf16_mma");
    p.kernel_version = 1, p.reps = 10, p.tflops = p.gbps = p.check_err = NAN;
    snprintf(p.measured_at, sizeof p.measured_at, "2026-01-01T00:00:00Z");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 2; c++) {
                p.shape.m = ms[a], p.shape.n = ns[b], p.shape.k = ks[c];
                p.median_s = p.p10_s = p.p90_s = synth(ms[a], ns[b], ks[c]);
                p.frac_of_peak = 0.01 * (double)(a + 1);
                CHECK(calib_db_point_insert(db, gid, &p, &err) == 0);
            }
    /* A slower second kernel at one shape, and a faster one at another. */
    snprintf(p.kernel, sizeof p.kernel, "cublas_gemm_ex");
    p.shape.m = 16, p.shape.n = 1024, p.shape.k = 1024;
    p.median_s = p.p10_s = p.p90_s = 2.0 * synth(16, 1024, 1024);
    CHECK(calib_db_point_insert(db, gid, &p, &err) == 0);
    p.shape.m = 256, p.shape.n = 4096, p.shape.k = 4096;
    p.median_s = p.p10_s = p.p90_s = 0.5 * synth(256, 4096, 4096);
    CHECK(calib_db_point_insert(db, gid, &p, &err) == 0);

    int64_t found = 0;
    CHECK(calib_db_gpu_find(db, "h100", NULL, &found, &err) == 0 && found == gid);
    CHECK(calib_db_gpu_find(db, "a100", NULL, &found, &err) == SIM_EINVAL);

    calib_shape q = {0};
    calib_lookup_result r;
    q.m = 64, q.n = 2048, q.k = 2000;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", "kern_gemm_bf16_mma", &q, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_INTERP);
    CHECK_NEAR(r.latency_s / synth(64, 2048, 2000), 1.0, 1e-9);
    CHECK(r.points_used == 8);
    q.m = 16, q.n = 1024, q.k = 1024;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &q, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_EXACT);
    CHECK_NEAR(r.latency_s / synth(16, 1024, 1024), 1.0, 1e-12); /* fastest of the two kernels */
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", "cublas_gemm_ex", &q, &r, &err) == 0);
    CHECK_NEAR(r.latency_s / synth(16, 1024, 1024), 2.0, 1e-12);
    q.m = 256, q.n = 4096, q.k = 4096;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", NULL, &q, &r, &err) == 0);
    CHECK_NEAR(r.latency_s / synth(256, 4096, 4096), 0.5, 1e-12);
    /* Outside the grid: not found, nearest point's efficiency. */
    q.m = 16384, q.n = 4096, q.k = 1024;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "bf16", "kern_gemm_bf16_mma", &q, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_OUTSIDE);
    CHECK(r.nearest.m == 256 && r.nearest.n == 4096 && r.nearest.k == 1024);
    CHECK_NEAR(r.efficiency, 0.03, 1e-12);
    CHECK(calib_db_lookup(db, gid, CALIB_OP_GEMM, "fp8", NULL, &q, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_NONE);
    /* Attention measured at 32/8 and 64/8 heads, asked at 16/2: no exact
     * match, so the nearest point over all fields, as OUTSIDE. */
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_ATTN_DECODE;
    snprintf(p.dtype, sizeof p.dtype, "bf16");
    snprintf(p.kernel, sizeof p.kernel, "torch_sdpa_flash");
    p.kernel_version = 1, p.reps = 10, p.tflops = p.gbps = p.check_err = p.frac_of_peak = NAN;
    snprintf(p.measured_at, sizeof p.measured_at, "2026-01-01T00:00:00Z");
    for (int h = 32; h <= 64; h *= 2)
        for (int64_t ctx = 1024; ctx <= 4096; ctx *= 4) {
            p.shape.batch = 8, p.shape.ctx = ctx, p.shape.heads = h, p.shape.kv_heads = 8, p.shape.head_dim = 128;
            p.median_s = p.p10_s = p.p90_s = 1e-9 * (double)(h * ctx);
            CHECK(calib_db_point_insert(db, gid, &p, &err) == 0);
        }
    calib_shape qa = {0};
    qa.batch = 8, qa.ctx = 2048, qa.heads = 32, qa.kv_heads = 8, qa.head_dim = 128;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_ATTN_DECODE, "bf16", NULL, &qa, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_INTERP);
    qa.heads = 16, qa.kv_heads = 2, qa.ctx = 1024;
    CHECK(calib_db_lookup(db, gid, CALIB_OP_ATTN_DECODE, "bf16", NULL, &qa, &r, &err) == 0);
    CHECK(r.status == CALIB_LOOKUP_OUTSIDE);
    CHECK(r.nearest.heads == 32 && r.nearest.kv_heads == 8 && r.nearest.ctx == 1024);
    CHECK_NEAR(r.latency_s, 1e-9 * 32 * 1024, 1e-15);
    calib_db_close(db);

    /* A perf-db of another schema version is refused. */
    char other[300];
    path_in(other, sizeof other, "v3.db");
    CHECK(calib_db_open(other, CALIB_DB_CREATE, &db, &err) == 0);
    calib_db_close(db);
    sqlite3 *raw = NULL;
    CHECK(sqlite3_open(other, &raw) == SQLITE_OK);
    CHECK(sqlite3_exec(raw, "UPDATE meta SET value='3' WHERE key='schema_version'", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_changes(raw) == 1);
    sqlite3_close(raw);
    CHECK(calib_db_open(other, CALIB_DB_READONLY, &db, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "schema version 3; this servesim reads versions 1 to 2");
}

static void test_stats_and_errors(void)
{
    double x[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    calib_stats s;
    CHECK(calib_stats_summarise(x, 10, &s) == 0);
    CHECK_NEAR(s.median, 5.5, 1e-12);
    CHECK_NEAR(s.p10, 1.9, 1e-12);
    CHECK_NEAR(s.p90, 9.1, 1e-12);
    CHECK(calib_stats_summarise(x, 0, &s) == -1);
    /* Equal samples: interpolated quantiles must not round past the median
     * (the perf-db refuses p10 > median). */
    int out_of_order = 0;
    for (int k = 0; k < 2000; k++) {
        double v = 1.0063e-05 * (1 + k * 1e-3), eq[20];
        for (int i = 0; i < 20; i++) eq[i] = v;
        CHECK(calib_stats_summarise(eq, 20, &s) == 0);
        out_of_order += !(s.p10 <= s.median && s.median <= s.p90);
    }
    CHECK(out_of_order == 0);

    uint32_t mask = 0;
    sim_err err;
    CHECK(calib_ops_parse("gemm,attn_decode", &mask, &err) == 0);
    CHECK(mask == ((1u << CALIB_OP_GEMM) | (1u << CALIB_OP_ATTN_DECODE)));
    CHECK(calib_ops_parse("gemm,warp_drive", &mask, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "warp_drive");

    /* A broken GPU backend plugin: a file that is no shared object, and a
     * shared object that is not the plugin, give the no-GPU error too. */
    calib_backend b;
    char junk[300];
    path_in(junk, sizeof junk, "libservesim_gpu.so");
    FILE *jf = fopen(junk, "w");
    CHECK(jf != NULL);
    if (jf) fputs("not an ELF object\n", jf), fclose(jf);
    setenv("SERVESIM_GPU_LIB", junk, 1);
    CHECK(calib_backend_gpu_create(&b, &err) == SIM_ENOTSUP);
    CHECK_CONTAINS(err.msg, "no NVIDIA GPU found (cannot load the GPU backend $SERVESIM_GPU_LIB=");
    CHECK_CONTAINS(err.msg, "use --backend cpu");
    setenv("SERVESIM_GPU_LIB", "libm.so.6", 1);
    CHECK(calib_backend_gpu_create(&b, &err) == SIM_ENOTSUP);
    CHECK_CONTAINS(err.msg, "libm.so.6 is not a servesim GPU backend: no calib_gpu_plugin_create");
    unsetenv("SERVESIM_GPU_LIB");

    /* No GPU here (or no plugin built): a clear error naming the way out. */
    int rc = calib_backend_gpu_create(&b, &err);
    if (rc == 0) {
        printf("test_calib: a GPU is present; the no-GPU message is not tested\n");
        b.destroy(b.state);
    } else {
        CHECK(rc == SIM_ENOTSUP);
        CHECK_CONTAINS(err.msg, "no NVIDIA GPU found (");
        CHECK_CONTAINS(err.msg, "use --backend cpu to exercise the harness on the CPU references");
        char dbp[300];
        path_in(dbp, sizeof dbp, "gpu.db");
        char *argv_gpu[] = {"calibrate", "--db", dbp, "--quiet"};
        CHECK(sim_cli_calibrate(4, argv_gpu) == 1);
    }
}

/* --kernels: only the named kernels are checked and timed; a name the
 * backend lacks, or a list that selects no kernel of the chosen ops, is an
 * error before anything runs; --list-kernels lists what may be named. */
static void test_kernel_selection(void)
{
    calib_backend b;
    sim_err err = {{0}};
    CHECK(calib_backend_cpu_create(&b, &err) == 0);
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);
    CHECK(f != NULL);
    CHECK(calib_run_list_kernels(&b, 0, f, &err) == 0);
    fclose(f);
    CHECK_CONTAINS(list, "gemm kern_gemm_bf16_ref bf16 1 bundled\n");
    CHECK_CONTAINS(list, "softmax kern_softmax_online_ref fp32 1 bundled\n");
    CHECK_CONTAINS(list, "copy memcpy u8 1 library\n");
    free(list);

    char *log = NULL;
    f = open_memstream(&log, &len);
    calib_run_opts o;
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY, o.check_only = 1, o.log = f, o.kernels = "kern_softmax_online_ref,kern_gemm_mxfp8_ref";
    calib_run_stats st;
    CHECK(calib_run(&b, NULL, &o, &st, &err) == 0);
    fclose(f);
    CHECK(st.checks_passed > 0 && st.checks_failed == 0);
    CHECK_CONTAINS(log, "kern_softmax_online_ref");
    CHECK_CONTAINS(log, "kern_gemm_mxfp8_ref");
    CHECK(strstr(log, "kern_gemm_bf16_ref") == NULL && strstr(log, "kern_rmsnorm_ref") == NULL);
    free(log);
    /* With ops: the kernels of the selected ops only. */
    CHECK(calib_ops_parse("softmax", &o.ops_mask, &err) == 0);
    o.log = NULL;
    CHECK(calib_run(&b, NULL, &o, &st, &err) == 0);
    int64_t softmax_only = st.checks_passed;
    o.kernels = "kern_softmax_online_ref";
    CHECK(calib_run(&b, NULL, &o, &st, &err) == 0);
    CHECK(st.checks_passed == softmax_only && softmax_only > 0);
    /* Errors: an unknown name; names of other ops only. */
    o.kernels = "kern_softmax_online_ref,kern_gemm_bf16_wgmma";
    CHECK(calib_run(&b, NULL, &o, &st, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "no kernel named 'kern_gemm_bf16_wgmma'");
    o.kernels = "kern_gemm_bf16_ref";
    CHECK(calib_run(&b, NULL, &o, &st, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "names no kernel of the ops --ops selects");
    /* The CLI: a bad name is a failed run, the listing succeeds. */
    char *argv_badk[] = {"calibrate", "--backend", "cpu", "--check", "--quiet", "--kernels", "nope"};
    CHECK(sim_cli_calibrate(7, argv_badk) == 1);
    b.destroy(b.state);
}

static const test_case cases[] = {
    {"stats_and_errors", test_stats_and_errors},
    {"kernel_selection", test_kernel_selection},
    {"lookup", test_lookup},
    {"cpu_end_to_end", test_cpu_end_to_end},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    snprintf(tmpdir, sizeof tmpdir, "%s/servesim_calib_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = test_run("test_calib", cases);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "test_calib: could not remove %s\n", tmpdir);
    return rc;
}
