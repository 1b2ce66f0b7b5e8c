/* test_calib_ingest — `db ingest`: the fixture tree tests/data/optable (a few
 * real rows of the shared H100 tables: vLLM and TensorRT-LLM GEMMs, vLLM
 * decode attention, NCCL all-reduce) becomes perf-db points with engine-
 * and version-named kernels, the documented column mapping (ctx = isl +
 * step, message elements × dtype size, sliding-window rows skipped), and
 * round-trips through a dump (plain and gzip); a bad table fails whole with
 * file:line:column; the cost model prices a deployment from its engine's
 * rows, else from the fastest kernel of all; `db ingest --gpu` takes
 * catalogue names and aliases and refuses unknown ones with suggestions. */
#include "calib_db.h"
#include "calib_ingest.h"
#include "calib_table.h"
#include "test_util.h"
#include "test_model_util.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char root[1024];

typedef struct {
    int64_t n;
    calib_point want;
    int found;
    int64_t by_op[CALIB_OP_COUNT];
} find_ctx;

static int find_cb(void *vctx, int64_t gpu_id, const calib_point *p)
{
    find_ctx *x = vctx;
    (void)gpu_id;
    x->n++;
    x->by_op[p->op]++;
    if (p->op == x->want.op && !strcmp(p->dtype, x->want.dtype) && !strcmp(p->kernel, x->want.kernel) &&
        !memcmp(&p->shape, &x->want.shape, sizeof p->shape)) {
        x->found = 1;
        x->want = *p;
    }
    return 0;
}

/* The point of (op, dtype, kernel, shape) in db; 0 when absent. */
static int point_of(calib_db *db, calib_op op, const char *dtype, const char *kernel, calib_shape sh, calib_point *out,
                    find_ctx *all)
{
    find_ctx x;
    memset(&x, 0, sizeof x);
    x.want.op = op;
    snprintf(x.want.dtype, sizeof x.want.dtype, "%s", dtype);
    snprintf(x.want.kernel, sizeof x.want.kernel, "%s", kernel);
    x.want.shape = sh;
    sim_err e = {{0}};
    CHECK(calib_db_point_foreach(db, 0, -1, find_cb, &x, &e) == 0);
    if (out) *out = x.want;
    if (all) *all = x;
    return x.found;
}

static char *export_text(calib_db *db)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_err e = {{0}};
    CHECK(f && calib_db_export(db, f, &e) == 0);
    if (f) fclose(f);
    return buf;
}

static calib_db *ingest_fixture(const calib_ingest_opts *o, calib_ingest_stats *st)
{
    calib_db *db = NULL;
    sim_err e = {{0}};
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    if (!db) return NULL;
    CHECK_MSG(calib_ingest(db, root, "h100_sxm", o, st, &e) == 0, "%s", e.msg);
    return db;
}

static void test_mapping_and_round_trip(void)
{
    calib_ingest_opts o = {.sms = 132, .cc = "9.0"};
    calib_ingest_stats st;
    calib_db *db = ingest_fixture(&o, &st);
    if (!db) return;
    CHECK(st.tables == 4);
    CHECK(st.rows == 12 + 12 + 9 + 16);
    CHECK(st.rows_skipped == 8); /* the window_size 128 decode rows */
    CHECK(st.points == 41 && st.added == 41);
    sim_err e = {{0}};
    int64_t gid = 0;
    CHECK(calib_db_gpu_find(db, "h100", "gpu", &gid, &e) == 0 && gid > 0);

    calib_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.m = 128, sh.n = 4096, sh.k = 4096;
    calib_point p;
    find_ctx all;
    CHECK(point_of(db, CALIB_OP_GEMM, "bf16", "vllm-0.24.0:torch.nn.functional.linear", sh, &p, &all));
    CHECK(p.median_s == 1.72151e-05); /* 0.017215111189418368 ms to six digits */
    CHECK(p.p10_s == p.median_s && p.p90_s == p.median_s && p.reps == 1);
    CHECK(all.by_op[CALIB_OP_GEMM] == 24 && all.by_op[CALIB_OP_ATTN_DECODE] == 8 && all.by_op[CALIB_OP_ALLREDUCE] == 9);
    CHECK(point_of(db, CALIB_OP_GEMM, "bf16", "trtllm-1.3.0rc20:torch_flow", sh, NULL, NULL));

    memset(&sh, 0, sizeof sh);
    sh.batch = 2, sh.ctx = 1 + 7, sh.heads = 32, sh.kv_heads = 8, sh.head_dim = 128;
    CHECK(point_of(db, CALIB_OP_ATTN_DECODE, "bf16", "vllm-0.24.0:vllm_flash_attn_fa3", sh, &p, NULL));
    CHECK(p.median_s == 1.21387e-05);

    memset(&sh, 0, sizeof sh);
    sh.bytes = 256 * 2, sh.ranks = 2; /* 256 fp16 elements */
    CHECK(point_of(db, CALIB_OP_ALLREDUCE, "fp16", "nccl-2.29.2:NCCL", sh, &p, NULL));
    CHECK(p.median_s == 6.18e-06);
    sh.bytes = 512, sh.ranks = 2; /* 512 int8 elements */
    CHECK(point_of(db, CALIB_OP_ALLREDUCE, "int8", "nccl-2.29.2:NCCL", sh, NULL, NULL));

    /* Round trip: export, import (plain and gzip), export again: the same text. */
    char *a = export_text(db);
    char plain[] = "/tmp/test_calib_ingest_XXXXXX";
    int fd = mkstemp(plain);
    if (fd >= 0) close(fd);
    FILE *f = fopen(plain, "w");
    if (f && a) fputs(a, f);
    if (f) fclose(f);
    char sqlp[64], gzp[64];
    snprintf(sqlp, sizeof sqlp, "%s.sql", plain);
    snprintf(gzp, sizeof gzp, "%s.sql.gz", plain);
    CHECK(rename(plain, sqlp) == 0);
    gzFile g = gzopen(gzp, "wb");
    if (g && a) gzputs(g, a);
    if (g) gzclose(g);
    const char *paths[] = {sqlp, gzp};
    for (int i = 0; i < 2; i++) {
        calib_db *db2 = NULL;
        CHECK_MSG(calib_db_open_any(paths[i], &db2, &e) == 0, "%s", e.msg);
        char *b = db2 ? export_text(db2) : NULL;
        CHECK_MSG(a && b && strcmp(a, b) == 0, "%s: export after import differs", paths[i]);
        free(b);
        calib_db_close(db2);
    }
    /* A truncated gzip dump is refused, not half-read. */
    FILE *in = fopen(gzp, "rb");
    char raw[1 << 16];
    size_t n = in ? fread(raw, 1, sizeof raw, in) : 0;
    if (in) fclose(in);
    FILE *out = fopen(gzp, "wb");
    if (out) fwrite(raw, 1, n / 2, out), fclose(out);
    calib_db *db3 = NULL;
    CHECK(calib_db_open_any(gzp, &db3, &e) < 0 && db3 == NULL);
    unlink(sqlp);
    unlink(gzp);
    free(a);
    calib_db_close(db);
}

static void test_filters(void)
{
    const char *ops[] = {"gemm", NULL};
    calib_ingest_opts o = {.ops = ops, .fastest_only = 1};
    calib_ingest_stats st;
    calib_db *db = ingest_fixture(&o, &st);
    if (!db) return;
    CHECK(st.points == 24 && st.rows_skipped == 25);
    calib_db_close(db);
    const char *dts[] = {"fp16", NULL};
    calib_ingest_opts o2 = {.dtypes = dts};
    db = ingest_fixture(&o2, &st);
    CHECK(st.points == 5); /* the fp16 all-reduce rows */
    calib_db_close(db);
}

static void test_bad_tables(void)
{
    char dir[] = "/tmp/test_calib_ingest_tree_XXXXXX";
    if (!mkdtemp(dir)) return;
    char p[512];
    const char *sub[] = {"/g_x", "/g_x/gemm", "/g_x/gemm/vllm-1.0"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", dir, sub[i]);
        mkdir(p, 0755);
    }
    snprintf(p, sizeof p, "%s/g_x/gemm/vllm-1.0/gemm_perf.csv", dir);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n"
              "V,1,Dev,gemm,k1,bfloat16,1,64,64,0.003\n"
              "V,1,Dev,gemm,k1,bfloat16,2,64,64,0.0x3\n",
              f);
        fclose(f);
    }
    calib_db *db = NULL;
    sim_err e = {{0}};
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    calib_ingest_stats st;
    CHECK(calib_ingest(db, dir, "g_x", NULL, &st, &e) < 0);
    CHECK_CONTAINS(e.msg, "gemm_perf.csv:3:34: column 'latency': expected a finite number, got '0.0x3'");
    find_ctx all;
    calib_shape sh = {0};
    point_of(db, CALIB_OP_GEMM, "bf16", "", sh, NULL, &all);
    CHECK(all.n == 0); /* nothing of the failing table stored */
    /* a table without a column it needs */
    f = fopen(p, "w");
    if (f) {
        fputs("framework,version,device,op_name,kernel_source,gemm_dtype,m,n,latency\nV,1,Dev,gemm,k1,bf16,1,64,0.003\n", f);
        fclose(f);
    }
    CHECK(calib_ingest(db, dir, "g_x", NULL, &st, &e) < 0);
    CHECK_CONTAINS(e.msg, "no column 'k'");
    /* a dtype longer than a point holds: refused, never cut (a cut name
     * matches no filter and no lookup) */
    f = fopen(p, "w");
    if (f) {
        fputs("framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n"
              "V,1,Dev,gemm,k1,w4a8_mxfp4_mxfp8,1,64,64,0.003\n"
              "V,1,Dev,gemm,k1,w4a8_mxfp4_mxfp8_with_a_long_tail,2,64,64,0.003\n",
              f);
        fclose(f);
    }
    CHECK(calib_ingest(db, dir, "g_x", NULL, &st, &e) < 0);
    CHECK_CONTAINS(e.msg, "gemm_perf.csv:3: dtype 'w4a8_mxfp4_mxfp8_with_a_long_tail' is longer than the 23 characters");
    CHECK(calib_ingest(db, dir, "nope", NULL, &st, &e) < 0);
    CHECK_CONTAINS(e.msg, "no folder for GPU 'nope'");
    unlink(p);
    for (int i = 2; i >= 0; i--) {
        snprintf(p, sizeof p, "%s%s", dir, sub[i]);
        rmdir(p);
    }
    rmdir(dir);
    calib_db_close(db);
}

/* The qkv_proj time of a Llama-3.1-8B TP1 decode batch priced from tables
 * built for engine (NULL: no engine). */
static double qkv_time(calib_db *db, int64_t gid, const char *engine, model_source *src)
{
    model_cost *c = test_cost_model("llama-3.1-8b", "h100-sxm", 1, 0);
    calib_table *t = NULL;
    sim_err e = {{0}};
    CHECK(calib_table_build(db, gid, engine, NULL, 132, &t, &e) == 0);
    double v = -1;
    if (c && t) {
        model_cost_set_tables(c, t, NULL);
        model_op ops[128];
        int32_t n = 0;
        model_batch b = {0, NULL, 16, 16 * 512, 0};
        model_cost_breakdown(c, &b, ops, 128, &n, NULL);
        const model_op *q = test_find_op(ops, n, "qkv_proj");
        CHECK(q != NULL);
        if (q) v = q->time_s / q->count, *src = q->source;
    }
    model_cost_destroy(c);
    calib_table_free(t);
    return v;
}

static void test_prices_by_engine(void)
{
    calib_ingest_opts o = {.sms = 132};
    calib_ingest_stats st;
    calib_db *db = ingest_fixture(&o, &st);
    if (!db) return;
    sim_err e = {{0}};
    int64_t gid = 0;
    CHECK(calib_db_gpu_find(db, "h100", "gpu", &gid, &e) == 0);
    model_source sv, stt, ss, sn;
    double v = qkv_time(db, gid, "vllm", &sv), t = qkv_time(db, gid, "trtllm", &stt);
    double s = qkv_time(db, gid, "sglang", &ss), none = qkv_time(db, gid, NULL, &sn);
    /* qkv of Llama-3.1-8B: m = 16, n = 6144, k = 4096: n past the fixture's
     * grid, so each engine's fitted series answers. */
    CHECK(sv == MODEL_SRC_DB_FIT && stt == MODEL_SRC_DB_FIT && ss == MODEL_SRC_DB_FIT);
    CHECK(v > 0 && t > 0 && v != t);
    CHECK(s == none); /* no SGLang rows: the fastest kernel of all */
    calib_table *tv = NULL;
    CHECK(calib_table_build(db, gid, "vllm", NULL, 132, &tv, &e) == 0);
    calib_shape q;
    memset(&q, 0, sizeof q);
    q.m = 16, q.n = 6144, q.k = 4096;
    CHECK_NEAR(v, calib_series_lookup(calib_table_series(tv, CALIB_OP_GEMM, "bf16"), &q, NULL), 1e-15);
    calib_table_free(tv);
    calib_db_close(db);
}

/* `db ingest --gpu` resolves the name through the GPU catalogue: an alias
 * finds the tables' folder, an unknown name gets the catalogue's error with
 * suggestions (exit 2, no perf-db left behind). */
static void test_cli_gpu_names(void)
{
    const char *bin = test_servesim;
    REQUIRE(bin != NULL);
    char db[] = "/tmp/test_calib_ingest_cli_XXXXXX", cmd[4096];
    int fd = mkstemp(db);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(db);
    char *out = NULL;
    snprintf(cmd, sizeof cmd, "%s db ingest %s --gpu hgx-h100 --db %s --quiet 2>&1", bin, root, db);
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "ingested 4 tables of h100_sxm");
    free(out);
    unlink(db);
    snprintf(cmd, sizeof cmd, "%s db ingest %s --gpu h1OO-sxm --db %s 2>&1", bin, root, db);
    CHECK(test_sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--gpu: unknown GPU 'h1OO-sxm' (did you mean 'h100-sxm'?)");
    free(out);
    CHECK(access(db, F_OK) != 0);
    snprintf(cmd, sizeof cmd, "%s db ingest %s --gpu b200 --db %s 2>&1", bin, root, db);
    CHECK(test_sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "no folder for GPU b200");
    free(out);
    CHECK(access(db, F_OK) != 0);
}

static const test_case cases[] = {
    {"mapping_and_round_trip", test_mapping_and_round_trip},
    {"filters", test_filters},
    {"bad_tables", test_bad_tables},
    {"prices_by_engine", test_prices_by_engine},
    {"cli_gpu_names", test_cli_gpu_names},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(root, sizeof root, "%s/tests/data/optable", test_src_dir());
    return test_run("test_calib_ingest", cases);
}
