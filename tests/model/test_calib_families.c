/* test_calib_families — serving engines' measured rows of the families
 * beyond GEMM, attention and collectives price the cost model's ops: the
 * fixture tree tests/data/optable-families (real rows of the shared H100
 * tables: vLLM and TensorRT-LLM fused MoE of Mixtral-8x7B, TensorRT-LLM and
 * SGLang MLA kernels at 16 heads a rank, vLLM and SGLang gated-delta-net
 * kernels of Qwen3.5-27B, vLLM and TensorRT-LLM fp8 quantisation) is
 * ingested, and a batch of each model priced from tables built for each
 * engine: on a measured shape the op costs exactly the engine's measured
 * median (its own row, not another engine's), with no rows of that engine
 * the fastest kernel of all, between grid points an interpolation that
 * stays between its neighbours and above the floor, and with no rows at all
 * the analytic path. */
#include "calib_db.h"
#include "calib_ingest.h"
#include "calib_table.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>

static char root[1024];

typedef struct {
    calib_op op;
    const char *engine; /* kernel prefix "vllm-"; NULL = any */
    calib_shape sh;
    double best;
    const char *dtype; /* NULL = bf16, else this one */
} median_ctx;

static int median_cb(void *vctx, int64_t gpu_id, const calib_point *p)
{
    median_ctx *x = vctx;
    (void)gpu_id;
    if (p->op != x->op || memcmp(&p->shape, &x->sh, sizeof p->shape)) return 0;
    if (strcmp(p->dtype, x->dtype ? x->dtype : "bf16")) return 0;
    if (x->engine && strncmp(p->kernel, x->engine, strlen(x->engine))) return 0;
    if (!(x->best > 0) || p->median_s < x->best) x->best = p->median_s;
    return 0;
}

/* The fastest measured median of (op, shape) in bf16 (quantisation: fp8)
 * among the engine's kernels ("vllm-"; NULL = all); 0 when none. */
static double measured(calib_db *db, calib_op op, const char *engine, calib_shape sh)
{
    median_ctx x = {op, engine, sh, 0, op == CALIB_OP_QUANT_FP8 || op == CALIB_OP_QUANT_SCALE ? "fp8" : NULL};
    sim_err e = {{0}};
    CHECK(calib_db_point_foreach(db, 0, -1, median_cb, &x, &e) == 0);
    return x.best;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static calib_db *ingest(void)
{
    calib_db *db = NULL;
    sim_err e = {{0}};
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    calib_ingest_opts o = {.sms = 132};
    calib_ingest_stats st;
    CHECK_MSG(calib_ingest(db, root, "h100_sxm", &o, &st, &e) == 0, "%s", e.msg);
    CHECK(st.tables == 12);
    return db;
}

static model_cost *cost_of(const char *model, int tp, model_dtype dt)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err err = {{0}};
    CHECK_MSG(model_catalog_model(model, &m, &err) == 0, "%s", err.msg);
    CHECK_MSG(model_catalog_gpu("h100-sxm", &g, &err) == 0, "%s", err.msg);
    model_layout l = {.tp = tp, .pp = 1, .dtype = dt, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    CHECK_MSG(model_cost_create(&m, &g, &l, &c, &err) == 0, "%s", err.msg);
    return c;
}

/* Per-execution time and source of op `name` in batch b of c priced from
 * tables built for engine (NULL: none; tables_of NULL: no tables). */
static double op_time(model_cost *c, calib_db *db, const char *engine, const model_batch *b, const char *name,
                      model_source *src)
{
    calib_table *t = NULL;
    sim_err e = {{0}};
    int64_t gid = 0;
    *src = MODEL_SRC_ROOFLINE;
    if (db) {
        CHECK(calib_db_gpu_find(db, "h100", "gpu", &gid, &e) == 0);
        const char *dts[5];
        CHECK(calib_table_build(db, gid, engine, model_cost_db_dtypes(c, dts), 132, &t, &e) == 0);
    }
    model_cost_set_tables(c, t, NULL);
    model_op ops[256];
    int32_t n = 0;
    model_cost_breakdown(c, b, ops, 256, &n, NULL);
    const model_op *o = test_find_op(ops, n, name);
    double v = -1;
    if (o) v = o->time_s / o->count, *src = o->source;
    model_cost_set_tables(c, NULL, NULL);
    calib_table_free(t);
    return v;
}

static calib_db *fixture_db;

static void test_moe(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_of("mixtral-8x7b", 1, MODEL_DTYPE_BF16);
    if (!c) return;
    /* 16 decode tokens: T_all = 16, a measured num_tokens. */
    model_batch b = {0, NULL, 16, 16 * 512};
    calib_shape sh = {.m = 16, .n = 14336, .k = 4096, .batch = 2, .groups = 8, .ranks = 1, .heads = 1};
    double mv = measured(db, CALIB_OP_MOE, "vllm-", sh), mt = measured(db, CALIB_OP_MOE, "trtllm-", sh);
    CHECK(mv > 0 && mt > 0 && mv != mt);
    model_source sv, st, ss, sn;
    double v = op_time(c, db, "vllm", &b, "experts_fused", &sv);
    double t = op_time(c, db, "trtllm", &b, "experts_fused", &st);
    double s = op_time(c, db, "sglang", &b, "experts_fused", &ss);
    CHECK(sv == MODEL_SRC_DB && st == MODEL_SRC_DB && ss == MODEL_SRC_DB);
    CHECK_NEAR(v, mv, 1e-15);
    CHECK_NEAR(t, mt, 1e-15);
    CHECK_NEAR(s, fmin(mv, mt), 1e-15); /* no SGLang rows: the fastest kernel */
    /* 24 tokens: between the measured 16 and 32. */
    model_batch b24 = {0, NULL, 24, 24 * 512};
    calib_shape s32 = sh;
    s32.m = 32;
    double lo = measured(db, CALIB_OP_MOE, "vllm-", sh), hi = measured(db, CALIB_OP_MOE, "vllm-", s32);
    model_source si;
    double mid = op_time(c, db, "vllm", &b24, "experts_fused", &si);
    CHECK(si == MODEL_SRC_DB);
    CHECK_MSG(mid >= fmin(lo, hi) * 0.999 && mid <= fmax(lo, hi) * 1.001, "%g not within [%g, %g]", mid, lo, hi);
    /* No tables: the grouped GEMMs of the analytic path. */
    double g = op_time(c, NULL, NULL, &b, "experts_fused", &sn);
    CHECK(g < 0);
    CHECK(op_time(c, NULL, NULL, &b, "experts_gate_up", &sn) > 0);
    model_cost_destroy(c);
}

static void test_mla(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_of("deepseek-v3", 8, MODEL_DTYPE_BF16);
    if (!c) return;
    /* 8 decode requests of 1,024 tokens: 16 heads a rank. */
    model_batch b = {0, NULL, 8, 8 * 1024};
    calib_shape sh = {.batch = 8, .ctx = 1024, .heads = 16};
    double mt = measured(db, CALIB_OP_MLA_DECODE, "trtllm-", sh), ms = measured(db, CALIB_OP_MLA_DECODE, "sglang-", sh);
    CHECK(mt > 0 && ms > 0 && mt != ms);
    model_source st, ss, sv;
    double t = op_time(c, db, "trtllm", &b, "attn_decode", &st), s = op_time(c, db, "sglang", &b, "attn_decode", &ss);
    double v = op_time(c, db, "vllm", &b, "attn_decode", &sv);
    CHECK(st == MODEL_SRC_DB && ss == MODEL_SRC_DB && sv == MODEL_SRC_DB);
    CHECK_NEAR(t, mt, 1e-15);
    CHECK_NEAR(s, ms, 1e-15);
    CHECK_NEAR(v, fmin(mt, ms), 1e-15);
    /* Prefill of one 1,024-token chunk. */
    model_chunk ch = {1024, 0};
    model_batch bp = {1, &ch, 0, 0};
    calib_shape sp = {.batch = 1, .m = 1024, .heads = 16};
    double mp = measured(db, CALIB_OP_MLA_PREFILL, "trtllm-", sp);
    CHECK(mp > 0);
    CHECK_NEAR(op_time(c, db, "trtllm", &bp, "attn_prefill", &st), mp, 1e-15);
    CHECK(st == MODEL_SRC_DB);
    /* No tables: not from a perf-db. */
    CHECK(op_time(c, NULL, NULL, &b, "attn_decode", &sv) > 0);
    CHECK(sv != MODEL_SRC_DB && sv != MODEL_SRC_DB_FIT);
    model_cost_destroy(c);
}

static void test_gdn(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_of("Qwen/Qwen3.5-27B", 1, MODEL_DTYPE_BF16);
    if (!c) return;
    model_batch b = {0, NULL, 8, 8 * 512};
    calib_shape sh = {.batch = 8, .m = 8, .ctx = 1, .n = 5120, .k = 4, .heads = 48, .kv_heads = 16,
                      .head_dim = 128, .groups = 128};
    double dv = measured(db, CALIB_OP_GDN_DECODE, "vllm-", sh), ds = measured(db, CALIB_OP_GDN_DECODE, "sglang-", sh);
    double cv = measured(db, CALIB_OP_GDN_CONV_DECODE, "vllm-", sh);
    CHECK(dv > 0 && ds > 0 && cv > 0 && dv != ds && cv != dv);
    model_source s1, s2, s3;
    CHECK_NEAR(op_time(c, db, "vllm", &b, "gdn_decode", &s1), dv, 1e-15);
    CHECK_NEAR(op_time(c, db, "sglang", &b, "gdn_decode", &s2), ds, 1e-15);
    /* The conv is its own kernel's rows, not the faster of the two. */
    CHECK_NEAR(op_time(c, db, "vllm", &b, "gdn_conv1d", &s3), cv, 1e-15);
    CHECK(s1 == MODEL_SRC_DB && s2 == MODEL_SRC_DB && s3 == MODEL_SRC_DB);
    model_chunk ch = {1024, 0};
    model_batch bp = {1, &ch, 0, 0};
    calib_shape sp = {.batch = 1, .m = 1024, .ctx = 1024, .n = 5120, .k = 4, .heads = 48, .kv_heads = 16,
                      .head_dim = 128, .groups = 128};
    double pv = measured(db, CALIB_OP_GDN_PREFILL, "vllm-", sp);
    CHECK(pv > 0);
    CHECK_NEAR(op_time(c, db, "vllm", &bp, "gdn_prefill", &s1), pv, 1e-15);
    CHECK(op_time(c, NULL, NULL, &b, "gdn_decode", &s2) > 0 && s2 != MODEL_SRC_DB);
    model_cost_destroy(c);
}

static void test_quant(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_of("llama-3.1-8b", 1, MODEL_DTYPE_FP8);
    if (!c) return;
    /* o_quant of 1,024 prefill tokens × 4,096: scale computed + applied. */
    model_chunk ch = {1024, 0};
    model_batch b = {1, &ch, 0, 0};
    calib_shape sh = {.m = 1024, .n = 4096};
    double av = measured(db, CALIB_OP_QUANT_FP8, "vllm-", sh), sv_ = measured(db, CALIB_OP_QUANT_SCALE, "vllm-", sh);
    double at = measured(db, CALIB_OP_QUANT_FP8, "trtllm-", sh), st_ = measured(db, CALIB_OP_QUANT_SCALE, "trtllm-", sh);
    CHECK(av > 0 && sv_ > 0 && at > 0 && st_ > 0);
    model_source s1, s2, s3;
    CHECK_NEAR(op_time(c, db, "vllm", &b, "o_quant", &s1), av + sv_, 1e-15);
    CHECK_NEAR(op_time(c, db, "trtllm", &b, "o_quant", &s2), at + st_, 1e-15);
    CHECK(s1 == MODEL_SRC_DB && s2 == MODEL_SRC_DB);
    /* Off the grid (m past the fixture's 4,096): the fitted model, never below the floor. */
    model_chunk big = {65536, 0};
    model_batch bb = {1, &big, 0, 0};
    double off = op_time(c, db, "vllm", &bb, "o_quant", &s3);
    CHECK(s3 == MODEL_SRC_DB_FIT);
    calib_shape s4 = {.m = 4096, .n = 4096};
    CHECK(off > measured(db, CALIB_OP_QUANT_FP8, "vllm-", s4));
    model_cost_destroy(c);
}

/* In-grid error on the fixture (a fixed subset of the shared tables): each
 * measured point predicted from its two measured neighbours along an axis
 * (calib_series_holdout), per engine and family; the median must stay
 * within the 5 % the perf-db aims at inside its grid. */
static void test_in_grid_error(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    sim_err e = {{0}};
    int64_t gid = 0;
    REQUIRE(calib_db_gpu_find(db, "h100", "gpu", &gid, &e) == 0);
    static const char *const engines[] = {"vllm", "sglang", "trtllm"};
    static const calib_op fams[][4] = {{CALIB_OP_MOE},
                                       {CALIB_OP_MLA_PREFILL, CALIB_OP_MLA_DECODE},
                                       {CALIB_OP_GDN_PREFILL, CALIB_OP_GDN_DECODE, CALIB_OP_GDN_CONV_PREFILL,
                                        CALIB_OP_GDN_CONV_DECODE},
                                       {CALIB_OP_QUANT_FP8, CALIB_OP_QUANT_SCALE}};
    static const int nfam[] = {1, 2, 4, 2};
    static const char *const fam_names[] = {"moe", "mla", "gdn", "quant"};
    int families_seen = 0;
    for (int en = 0; en < 3; en++) {
        calib_table *t = NULL;
        REQUIRE(calib_table_build(db, gid, engines[en], NULL, 132, &t, &e) == 0);
        for (int f = 0; f < 4; f++) {
            double err[4096];
            int64_t n = 0;
            for (int k = 0; k < nfam[f]; k++)
                for (int32_t i = 0; i < calib_table_n_series(t); i++) {
                    const calib_series *s = calib_table_series_at(t, i);
                    calib_op op;
                    calib_series_info in;
                    calib_series_describe(s, &op, NULL, &in);
                    if (op != fams[f][k] || strncmp(in.kernels, engines[en], strlen(engines[en]))) continue;
                    int64_t got = calib_series_holdout(s, err + n, 4096 - n);
                    n += got < 4096 - n ? got : 4096 - n;
                }
            if (n < 5) continue;
            qsort(err, (size_t)n, sizeof *err, dbl_cmp);
            double med = n % 2 ? err[n / 2] : 0.5 * (err[n / 2 - 1] + err[n / 2]);
            fprintf(stderr, "in-grid error %-6s %-5s: %3lld held out, median %.2f %%, worst %.1f %%\n", engines[en],
                    fam_names[f], (long long)n, 100 * med, 100 * err[n - 1]);
            CHECK_MSG(med <= 0.05, "%s %s: in-grid median error %.2f %% > 5 %%", engines[en], fam_names[f], 100 * med);
            families_seen++;
        }
        calib_table_free(t);
    }
    CHECK(families_seen >= 6);
}

static const test_case cases[] = {
    {"moe", test_moe},
    {"mla", test_mla},
    {"gdn", test_gdn},
    {"quant", test_quant},
    {"in_grid_error", test_in_grid_error},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(root, sizeof root, "%s/tests/data/optable-families", argc > 2 ? argv[2] : ".");
    fixture_db = ingest();
    int rc = test_run("test_calib_families", cases);
    calib_db_close(fixture_db);
    return rc;
}
