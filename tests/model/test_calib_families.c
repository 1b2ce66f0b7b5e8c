/* test_calib_families — serving engines' measured rows of the families
 * beyond GEMM, attention and all-reduce price the cost model's ops: the
 * fixture tree tests/data/optable-families (real rows of the shared H100
 * tables: vLLM and TensorRT-LLM fused MoE of Mixtral-8x7B, vLLM's
 * w4a16_mxfp4 fused MoE of gpt-oss-120b at EP 8, TensorRT-LLM and SGLang
 * MLA kernels at 16 heads a rank, vLLM and SGLang gated-delta-net kernels
 * of Qwen3.5-27B, vLLM and TensorRT-LLM fp8 quantisation, NCCL all-gather,
 * reduce-scatter and all-to-all on 8 GPUs (the last also as the EP
 * dispatch and combine of ep_mode alltoall); of the B200 tables: TensorRT-LLM
 * 1.3.0rc23's and SGLang's w4a8_mxfp4_mxfp8 fused MoE of DeepSeek-V4-Flash
 * at EP 8 and SGLang's fp8_block GEMMs of its 4096 → 1024 projections) is
 * ingested, and a batch of each model priced from tables built for each
 * engine: on a measured shape the op costs exactly the engine's measured
 * median (its own row, not another engine's; the experts' own format, not
 * the model's main one), with no rows of that engine the fastest kernel of
 * all, between grid points an interpolation that stays between its
 * neighbours and above the floor, and with no rows at all the analytic
 * path. */
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
    int64_t gpu_id;    /* 0 = any */
} median_ctx;

static int median_cb(void *vctx, int64_t gpu_id, const calib_point *p)
{
    median_ctx *x = vctx;
    if (x->gpu_id && gpu_id != x->gpu_id) return 0;
    if (p->op != x->op || memcmp(&p->shape, &x->sh, sizeof p->shape)) return 0;
    if (strcmp(p->dtype, x->dtype ? x->dtype : "bf16")) return 0;
    if (x->engine && strncmp(p->kernel, x->engine, strlen(x->engine))) return 0;
    if (!(x->best > 0) || p->median_s < x->best) x->best = p->median_s;
    return 0;
}

/* The fastest measured median of (op, shape) in dtype dt on the GPU whose
 * name contains gpu among the engine's kernels ("vllm-"; NULL = all); 0
 * when none. */
static double measured_dt(calib_db *db, const char *gpu, calib_op op, const char *engine, calib_shape sh,
                          const char *dt)
{
    median_ctx x = {op, engine, sh, 0, dt, 0};
    sim_err e = {{0}};
    CHECK(calib_db_gpu_find(db, gpu, "gpu", &x.gpu_id, &e) == 0);
    CHECK(calib_db_point_foreach(db, 0, -1, median_cb, &x, &e) == 0);
    return x.best;
}

/* The same on the H100 in bf16 (quantisation: fp8, collectives: fp16). */
static double measured(calib_db *db, calib_op op, const char *engine, calib_shape sh)
{
    const char *dt = op == CALIB_OP_QUANT_FP8 || op == CALIB_OP_QUANT_SCALE ? "fp8"
                     : op == CALIB_OP_ALLGATHER || op == CALIB_OP_REDUCE_SCATTER || op == CALIB_OP_ALLTOALL ? "fp16"
                                                                                                           : NULL;
    return measured_dt(db, "h100", op, engine, sh, dt);
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
    CHECK(st.tables == 13);
    calib_ingest_opts ob = {.sms = 148};
    CHECK_MSG(calib_ingest(db, root, "b200_sxm", &ob, &st, &e) == 0, "%s", e.msg);
    CHECK(st.tables == 3);
    return db;
}

static model_cost *cost_on(const char *gpu, const char *model, model_layout l)
{
    l.pp = 1, l.kv_dtype = MODEL_DTYPE_BF16, l.gpus_per_node = 8;
    return test_cost_layout(model, gpu, &l);
}

static model_cost *cost_of(const char *model, int tp, model_dtype dt)
{
    return cost_on("h100-sxm", model, (model_layout){.tp = tp, .dtype = dt});
}

/* Per-execution time and source of op `name` in batch b of c priced from
 * tables of the GPU named gpu built for engine (NULL: none; db NULL: no
 * tables). */
static double op_time_on(model_cost *c, calib_db *db, const char *gpu, const char *engine, const model_batch *b,
                         const char *name, model_source *src)
{
    calib_table *t = NULL;
    sim_err e = {{0}};
    int64_t gid = 0;
    *src = MODEL_SRC_ROOFLINE;
    if (db) {
        CHECK(calib_db_gpu_find(db, gpu, "gpu", &gid, &e) == 0);
        const char *dts[MODEL_COST_DB_DTYPES_MAX];
        CHECK(calib_table_build(db, gid, engine, model_cost_db_dtypes(c, dts), model_cost_gpu(c)->sms, &t, &e) == 0);
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

static double op_time(model_cost *c, calib_db *db, const char *engine, const model_batch *b, const char *name,
                      model_source *src)
{
    return op_time_on(c, db, "h100", engine, b, name, src);
}

static int has_dtype(const model_cost *c, const char *dt)
{
    const char *dts[MODEL_COST_DB_DTYPES_MAX];
    for (const char *const *d = model_cost_db_dtypes(c, dts); *d; d++)
        if (strcmp(*d, dt) == 0) return 1;
    return 0;
}

static calib_db *fixture_db;

static void test_moe(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_of("mixtral-8x7b", 1, MODEL_DTYPE_BF16);
    if (!c) return;
    /* 16 decode tokens: T_all = 16, a measured num_tokens. */
    model_batch b = {0, NULL, 16, 16 * 512, 0};
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
    model_batch b24 = {0, NULL, 24, 24 * 512, 0};
    calib_shape s32 = sh;
    s32.m = 32;
    double lo = measured(db, CALIB_OP_MOE, "vllm-", sh), hi = measured(db, CALIB_OP_MOE, "vllm-", s32);
    model_source si;
    double mid = op_time(c, db, "vllm", &b24, "experts_fused", &si);
    CHECK(si == MODEL_SRC_DB);
    CHECK_MSG(mid >= fmin(lo, hi) * 0.999 && mid <= fmax(lo, hi) * 1.001, "%g not within [%g, %g]", mid, lo, hi);
    /* model_cost_set_db (servesim predict) prefers the layout's engine too. */
    for (int en = 0; en < 2; en++) {
        sim_err err = {{0}};
        model_layout l = {.tp = 1};
        snprintf(l.op_backend, sizeof l.op_backend, "%s", en ? "trtllm" : "vllm");
        model_cost *ce = cost_on("h100-sxm", "mixtral-8x7b", l);
        REQUIRE(ce);
        CHECK_MSG(model_cost_set_db(ce, db, "h100", &err) == 0, "%s", err.msg);
        model_op ops[256];
        int32_t n = 0;
        model_cost_breakdown(ce, &b, ops, 256, &n, NULL);
        const model_op *o = test_find_op(ops, n, "experts_fused");
        CHECK(o != NULL);
        if (o) CHECK_NEAR(o->time_s / o->count, en ? mt : mv, 1e-15);
        model_cost_destroy(ce);
    }
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
    model_batch b = {0, NULL, 8, 8 * 1024, 0};
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
    model_batch bp = {1, &ch, 0, 0, 0};
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
    model_batch b = {0, NULL, 8, 8 * 512, 0};
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
    model_batch bp = {1, &ch, 0, 0, 0};
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
    model_batch b = {1, &ch, 0, 0, 0};
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
    model_batch bb = {1, &big, 0, 0, 0};
    double off = op_time(c, db, "vllm", &bb, "o_quant", &s3);
    CHECK(s3 == MODEL_SRC_DB_FIT);
    calib_shape s4 = {.m = 4096, .n = 4096};
    CHECK(off > measured(db, CALIB_OP_QUANT_FP8, "vllm-", s4));
    model_cost_destroy(c);
}

/* The routed experts are looked up in their own format, as the engines'
 * tables name it, not in the model's main one: gpt-oss-120b's mxfp4
 * experts read w4a16_mxfp4 rows on Hopper (dequantising kernels) and
 * w4a8_mxfp4_mxfp8 rows on Blackwell (FP4 tensor cores); Kimi-K2.5's int4
 * experts int4_wo; an fp8 run of DeepSeek-V3 (block-scaled experts)
 * fp8_block. */
static void test_moe_expert_dtype(void)
{
    model_cost *h = cost_on("h100-sxm", "openai/gpt-oss-120b", (model_layout){.tp = 8, .ep = 8, .dtype_checkpoint = 1});
    model_cost *b = cost_on("b200-sxm", "openai/gpt-oss-120b", (model_layout){.tp = 8, .ep = 8, .dtype_checkpoint = 1});
    model_cost *k = cost_on("h100-sxm", "moonshotai/Kimi-K2.5", (model_layout){.tp = 8, .ep = 8, .dtype_checkpoint = 1});
    model_cost *d = cost_on("h100-sxm", "deepseek-v3", (model_layout){.tp = 8, .ep = 8, .dtype = MODEL_DTYPE_FP8});
    REQUIRE(h && b && k && d);
    CHECK(has_dtype(h, "w4a16_mxfp4") && !has_dtype(h, "w4a8_mxfp4_mxfp8"));
    CHECK(has_dtype(b, "w4a8_mxfp4_mxfp8") && !has_dtype(b, "w4a16_mxfp4"));
    CHECK(has_dtype(k, "int4_wo") && has_dtype(k, "bf16"));
    CHECK(has_dtype(d, "fp8_block"));
    /* gpt-oss-120b at TP 8 / EP 8 on H100, 64 decode tokens: vLLM's
     * w4a16_mxfp4 row at 64 tokens exactly (the model's "mxfp4" names no
     * engine row). */
    model_batch bt = {0, NULL, 64, 64 * 512, 0};
    calib_shape sh = {.m = 64, .k = 2880, .n = 2880, .batch = 4, .groups = 128, .ranks = 8, .heads = 1};
    double mv = measured_dt(fixture_db, "h100", CALIB_OP_MOE, "vllm-", sh, "w4a16_mxfp4");
    CHECK(mv > 0);
    model_source src;
    CHECK_NEAR(op_time_on(h, fixture_db, "h100", "vllm", &bt, "experts_fused", &src), mv, 1e-15);
    CHECK(src == MODEL_SRC_DB);
    model_cost_destroy(h);
    model_cost_destroy(b);
    model_cost_destroy(k);
    model_cost_destroy(d);
}

/* DeepSeek-V4-Flash on B200 (fp8_block attention and shared experts,
 * mxfp4 routed experts) at TP 8 / EP 8: the routed experts from TensorRT-LLM
 * 1.3.0rc23's w4a8_mxfp4_mxfp8 rows (its engine's own, else the fastest
 * kernel), and the fp8_block projections from the fp8_block GEMM rows (the
 * part's format, not the experts' mxfp4, which no GEMM row has). */
static void test_w4a8_mxfp4_b200(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_on("b200-sxm", "deepseek-ai/DeepSeek-V4-Flash",
                            (model_layout){.tp = 8, .ep = 8, .dtype_checkpoint = 1});
    REQUIRE(c != NULL);
    model_batch bt = {0, NULL, 64, 64 * 512, 0};
    calib_shape sh = {.m = 64, .k = 4096, .n = 2048, .batch = 6, .groups = 256, .ranks = 8, .heads = 1};
    double mt = measured_dt(db, "b200", CALIB_OP_MOE, "trtllm-", sh, "w4a8_mxfp4_mxfp8");
    double ms = measured_dt(db, "b200", CALIB_OP_MOE, "sglang-", sh, "w4a8_mxfp4_mxfp8");
    CHECK(mt > 0 && ms > 0 && mt != ms);
    model_source s1, s2, s3, s4;
    CHECK_NEAR(op_time_on(c, db, "b200", "trtllm", &bt, "experts_fused", &s1), mt, 1e-15);
    CHECK_NEAR(op_time_on(c, db, "b200", "sglang", &bt, "experts_fused", &s2), ms, 1e-15);
    CHECK_NEAR(op_time_on(c, db, "b200", "vllm", &bt, "experts_fused", &s3), fmin(mt, ms), 1e-15);
    CHECK(s1 == MODEL_SRC_DB && s2 == MODEL_SRC_DB && s3 == MODEL_SRC_DB);
    /* Between the measured 48 and 64 tokens. */
    model_batch b56 = {0, NULL, 56, 56 * 512, 0};
    calib_shape s48 = sh;
    s48.m = 48;
    double lo = measured_dt(db, "b200", CALIB_OP_MOE, "trtllm-", s48, "w4a8_mxfp4_mxfp8");
    double mid = op_time_on(c, db, "b200", "trtllm", &b56, "experts_fused", &s4);
    CHECK(s4 == MODEL_SRC_DB);
    CHECK_MSG(mid >= fmin(lo, mt) * 0.999 && mid <= fmax(lo, mt) * 1.001, "%g not within [%g, %g]", mid, lo, mt);
    /* q_a_proj, 64 tokens × 4096 → 1024 in fp8_block. */
    calib_shape g = {.m = 64, .n = 1024, .k = 4096};
    double mg = measured_dt(db, "b200", CALIB_OP_GEMM, "sglang-", g, "fp8_block");
    CHECK(mg > 0);
    CHECK_NEAR(op_time_on(c, db, "b200", "sglang", &bt, "q_a_proj", &s1), mg, 1e-15);
    CHECK(s1 == MODEL_SRC_DB);
    model_cost_destroy(c);
}

/* All-gather, reduce-scatter and all-to-all from NCCL's rows: Llama-3.1-8B
 * at TP 8 with sequence parallelism (an all-gather before and a
 * reduce-scatter after each TP block) on 64 decode tokens moves
 * 64 × 4096 × 2 = 512 KiB per rank, a measured size: each costs its row's
 * median; the logits all-gather lies between measured sizes; Ulysses
 * sequence parallelism's all-to-alls too. No tables: the α–β model. */
static void test_collectives(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_on("h100-sxm", "llama-3.1-8b", (model_layout){.tp = 8, .tp_sp = 1});
    REQUIRE(c != NULL);
    model_batch bt = {0, NULL, 64, 64 * 512, 0};
    calib_shape sh = {.bytes = 64 * 4096 * 2, .ranks = 8};
    double ag = measured(db, CALIB_OP_ALLGATHER, NULL, sh), rs = measured(db, CALIB_OP_REDUCE_SCATTER, NULL, sh);
    CHECK(ag > 0 && rs > 0 && ag != rs);
    model_source s1, s2, s3, s4;
    CHECK_NEAR(op_time(c, db, "vllm", &bt, "tp_all_gather", &s1), ag, 1e-15);
    CHECK_NEAR(op_time(c, db, "vllm", &bt, "tp_reduce_attn", &s2), rs, 1e-15);
    CHECK(s1 == MODEL_SRC_DB && s2 == MODEL_SRC_DB);
    /* Logits: 64 × 128,256 × 4 bytes, between 16 and 32 MiB-ish grid points. */
    double lg = op_time(c, db, "vllm", &bt, "logits_gather", &s3);
    CHECK(s3 == MODEL_SRC_DB || s3 == MODEL_SRC_DB_FIT);
    CHECK(lg > ag);
    double an = op_time(c, NULL, NULL, &bt, "tp_all_gather", &s4);
    CHECK(an > 0 && s4 == MODEL_SRC_ROOFLINE);
    model_cost_destroy(c);
    /* Ulysses: Qwen3-8B-sized attention over sp 8, tokens exchanged twice. */
    model_cost *u = cost_on("h100-sxm", "llama-3.1-8b", (model_layout){.tp = 1, .sp = 8});
    REQUIRE(u != NULL);
    model_chunk ch = {8192, 0};
    model_batch bp = {1, &ch, 0, 0, 0};
    double a2a = op_time(u, db, "vllm", &bp, "sp_a2a_qkv", &s1);
    CHECK(a2a > 0 && (s1 == MODEL_SRC_DB || s1 == MODEL_SRC_DB_FIT));
    double a2a_an = op_time(u, NULL, NULL, &bp, "sp_a2a_qkv", &s2);
    CHECK(a2a_an > 0 && s2 == MODEL_SRC_ROOFLINE && a2a != a2a_an);
    model_cost_destroy(u);
}

/* Expert parallelism by NCCL all-to-all (ep_mode alltoall) from NCCL's
 * alltoall rows, whose size is a rank's whole send buffer: Mixtral-8x7B in
 * bf16 at attention DP 8 × EP 8, a decode batch of 512 (64 tokens a rank,
 * top-2, hidden 4096) sends 64 × 2 × 4096 × 2 = 1 MiB a rank each way, a
 * measured size: dispatch and combine each cost its row's median, in a
 * table built for vLLM too (no vLLM alltoall rows: the fastest kernel's,
 * NCCL's). No tables: the α–β model, another price. */
static void test_ep_alltoall(void)
{
    calib_db *db = fixture_db;
    REQUIRE(db != NULL);
    model_cost *c = cost_on("h100-sxm", "mixtral-8x7b",
                            (model_layout){.tp = 1, .dp = 8, .ep = 8, .ep_mode = MODEL_EP_ALLTOALL,
                                           .dtype = MODEL_DTYPE_BF16});
    REQUIRE(c != NULL);
    model_batch bt = {0, NULL, 512, 512 * 1024, 0};
    calib_shape sh = {.bytes = 64 * 2 * 4096 * 2, .ranks = 8};
    double row = measured(db, CALIB_OP_ALLTOALL, NULL, sh);
    CHECK(row > 0);
    model_source s1, s2, s3, s4;
    CHECK_NEAR(op_time(c, db, NULL, &bt, "ep_dispatch", &s1), row, 1e-15);
    CHECK_NEAR(op_time(c, db, NULL, &bt, "ep_combine", &s2), row, 1e-15);
    CHECK(s1 == MODEL_SRC_DB && s2 == MODEL_SRC_DB);
    CHECK_NEAR(op_time(c, db, "vllm", &bt, "ep_dispatch", &s3), row, 1e-15);
    CHECK(s3 == MODEL_SRC_DB);
    double an = op_time(c, NULL, NULL, &bt, "ep_dispatch", &s4);
    CHECK(an > 0 && s4 == MODEL_SRC_ROOFLINE && an != row);
    printf("Mixtral-8x7B EP8 NCCL all-to-all of 1 MiB a rank: measured %.2f us, analytic %.2f us\n", row * 1e6,
           an * 1e6);
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
    {"moe_expert_dtype", test_moe_expert_dtype},
    {"w4a8_mxfp4_b200", test_w4a8_mxfp4_b200},
    {"collectives", test_collectives},
    {"ep_alltoall", test_ep_alltoall},
    {"in_grid_error", test_in_grid_error},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(root, sizeof root, "%s/tests/data/optable-families", test_src_dir());
    fixture_db = ingest();
    int rc = test_run("test_calib_families", cases);
    calib_db_close(fixture_db);
    return rc;
}
