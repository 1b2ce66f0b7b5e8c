/* test_mla_module — a DeepSeek MLA attention block priced as one measured
 * module (models/cost/model_cost_mla.c). The fixture
 * tests/data/optable-mla-module holds real rows of the shared B200 tables:
 * TensorRT-LLM 1.3.0rc20's whole attention module of DeepSeek-V3 at 16
 * heads a rank (TP 8), fp8_block projections, bf16 KV. A pure decode or
 * pure prefill iteration of DeepSeek-V3 on 8 B200s under the trtllm engine
 * costs the module row's median × 61 layers in place of the block's ops,
 * the ops outside the block unchanged and the energy model's busy seconds
 * those of the ops the module contains; a mixed iteration, an engine with
 * no module of its own, an attention the rows do not measure and an
 * engine-less deployment keep the op-by-op sum; without rows the engine's
 * fitted module set prices the block; hardware.op_speedup scales the module
 * as it scales the ops it contains; the ops the module replaces are
 * counted for their work, busy seconds and launches but not priced (no
 * lookup of theirs in the tables: with the SGLang fp8_block GEMM rows of
 * tests/data/optable-families beside the module rows, a module iteration
 * looks up fewer points than the op-by-op one by the block's GEMMs, less
 * the module's own lookup), their sums bit for bit those of the ops. */
#include "calib_db.h"
#include "calib_ingest.h"
#include "calib_table.h"
#include "model_op.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>

#define LAYERS 61.0

static char root[1024];
static calib_db *db;

/* The ops one layer's module replaces (prefill, decode). */
static const char *const block_ops[] = {"q_a_proj", "q_a_norm", "q_b_proj", "kv_a_proj", "kv_a_norm", "rope_kv_write",
                                        "kv_b_proj", "attn_prefill", "q_absorb", "attn_decode", "o_absorb", "o_quant",
                                        "o_proj"};

/* DeepSeek-V3 on 8 B200s, fp8_block weights, bf16 KV, engine `engine`;
 * op_by_op: the block priced op by op (model_cost_mla_module_off);
 * speedup: every op family's hardware.op_speedup (0: none). */
static model_cost *deepseek_at(const char *model, const char *engine, int op_by_op, double speedup)
{
    model_layout l = {.tp = 8, .pp = 1, .dtype = MODEL_DTYPE_FP8_BLOCK, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8};
    if (engine) snprintf(l.op_backend, sizeof l.op_backend, "%s", engine);
    for (int f = 0; speedup > 0 && f < MODEL_FAM_COUNT; f++) l.op_speedup[f] = speedup;
    model_cost *c = test_cost_layout(model, "b200", &l);
    if (c && op_by_op) model_cost_mla_module_off(c);
    return c;
}

static model_cost *deepseek(const char *model, const char *engine, int op_by_op)
{
    return deepseek_at(model, engine, op_by_op, 0);
}

/* The fixture's tables for engine attached to c (NULL: none attached). */
static calib_table *attach(model_cost *c, const char *engine)
{
    calib_table *t = NULL;
    sim_err e = {{0}};
    int64_t gid = 0;
    REQUIRE_OR(calib_db_gpu_find(db, "b200", "gpu", &gid, &e) == 0, return NULL);
    const char *dts[MODEL_COST_DB_DTYPES_MAX];
    CHECK_MSG(calib_table_build(db, gid, engine, model_cost_db_dtypes(c, dts), model_cost_gpu(c)->sms, &t, &e) == 0,
              "%s", e.msg);
    model_cost_set_tables(c, t, NULL);
    return t;
}

/* Detaches and frees t, then c. */
static void release(model_cost *c, calib_table *t)
{
    model_cost_set_tables(c, NULL, NULL);
    calib_table_free(t);
    model_cost_destroy(c);
}

typedef struct {
    model_op ops[256];
    int32_t n;
    model_iter_cost r;
    double total;
} bd;

static void breakdown(const model_cost *c, const model_batch *b, bd *out)
{
    out->total = model_cost_breakdown(c, b, out->ops, 256, &out->n, &out->r);
    CHECK(out->n > 0 && out->n <= 256);
}

static int is_block_op(const char *name)
{
    for (size_t i = 0; i < sizeof block_ops / sizeof *block_ops; i++)
        if (!strcmp(name, block_ops[i])) return 1;
    return 0;
}

/* The module-priced iteration against the op-by-op one of the same batch
 * and tables: the block's ops replaced by measured × 61, the rest the
 * same op for op, the busy seconds and work the same. */
static void check_module(const model_batch *b, double measured_s, int n_block)
{
    model_cost *cm = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 0), *co = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 1);
    REQUIRE(cm && co);
    calib_table *tm = attach(cm, "trtllm"), *to = attach(co, "trtllm");
    static bd m, o;
    breakdown(cm, b, &m);
    breakdown(co, b, &o);
    const model_op *mod = test_find_op(m.ops, m.n, "mla_module");
    REQUIRE(mod);
    CHECK(mod->source == MODEL_SRC_DB);
    CHECK(mod->count == 61 && mod->cls == MODEL_OPC_ATTN);
    CHECK_NEAR(mod->time_s, LAYERS * measured_s, 1e-12);
    CHECK(!test_find_op(o.ops, o.n, "mla_module"));
    double block = 0, flops = 0, bytes = 0, cbusy = 0, mbusy = 0;
    int found = 0;
    for (int32_t i = 0; i < o.n; i++) {
        if (!is_block_op(o.ops[i].name)) continue;
        CHECK_MSG(!test_find_op(m.ops, m.n, o.ops[i].name), "%s left beside the module", o.ops[i].name);
        block += o.ops[i].time_s, flops += o.ops[i].flops, bytes += o.ops[i].bytes;
        cbusy += o.ops[i].compute_busy_s, mbusy += o.ops[i].mem_busy_s;
        found++;
    }
    CHECK_MSG(found == n_block, "%d ops in the block", found);
    CHECK(block > mod->time_s); /* the separately measured floors */
    /* Every other op the same, in the same order. */
    int32_t j = 0;
    for (int32_t i = 0; i < o.n; i++) {
        if (is_block_op(o.ops[i].name)) continue;
        while (j < m.n && !strcmp(m.ops[j].name, "mla_module")) j++;
        REQUIRE(j < m.n);
        CHECK_MSG(!strcmp(m.ops[j].name, o.ops[i].name) && m.ops[j].time_s == o.ops[i].time_s, "%s vs %s",
                  m.ops[j].name, o.ops[i].name);
        j++;
    }
    CHECK_NEAR(m.total, o.total - block + LAYERS * measured_s, 1e-12);
    CHECK_NEAR(mod->flops, flops, 1e-6 * flops);
    CHECK_NEAR(mod->bytes, bytes, 1e-6 * bytes);
    CHECK_NEAR(mod->compute_busy_s, cbusy, 1e-9 * cbusy);
    CHECK_NEAR(mod->mem_busy_s, mbusy, 1e-9 * mbusy);
    CHECK_NEAR(m.r.compute_busy_s, o.r.compute_busy_s, 1e-9 * o.r.compute_busy_s);
    CHECK_NEAR(m.r.mem_busy_s, o.r.mem_busy_s, 1e-9 * o.r.mem_busy_s);
    release(cm, tm);
    release(co, to);
}

/* Decode, one request at context 1025: the row batch 1, isl 1, step 1024
 * (48.0 µs). */
static void test_decode_row(void)
{
    model_batch b = {0, NULL, 1, 1025, 0};
    check_module(&b, 48.0e-6, 11);
}

/* Prefill, one 256-token prompt: the row batch 1, isl 256 (62.2 µs). */
static void test_prefill_row(void)
{
    model_chunk ch = {256, 0};
    model_batch b = {1, &ch, 0, 0, 0};
    check_module(&b, 62.2e-6, 10);
}

/* Iterations no row measures keep the op-by-op sum, bit for bit: a chunk
 * beside decodes, a chunk after a cached prefix. */
static void test_mixed_unchanged(void)
{
    model_cost *cm = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 0), *co = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 1);
    REQUIRE(cm && co);
    calib_table *tm = attach(cm, "trtllm"), *to = attach(co, "trtllm");
    model_chunk ch = {512, 0}, cached = {512, 2048};
    const model_batch batches[2] = {{1, &ch, 8, 8 * 3000, 0}, {1, &cached, 0, 0, 0}};
    for (int k = 0; k < 2; k++) {
        static bd m, o;
        breakdown(cm, &batches[k], &m);
        breakdown(co, &batches[k], &o);
        CHECK(!test_find_op(m.ops, m.n, "mla_module") && test_find_op(m.ops, m.n, "q_a_proj"));
        CHECK(m.total == o.total && m.n == o.n);
        CHECK(m.r.compute_busy_s == o.r.compute_busy_s && m.r.mem_busy_s == o.r.mem_busy_s);
    }
    release(cm, tm);
    release(co, to);
}

/* No engine with a module of its own (SGLang: neither rows nor a fitted
 * set; the fixture's TensorRT-LLM rows are not its), no engine at all, or
 * an attention the rows do not measure (DeepSeek-V3.2's sparse attention):
 * the block's ops. */
static void test_no_module(void)
{
    model_chunk ch = {256, 0};
    model_batch b = {1, &ch, 0, 0, 0};
    struct {
        const char *model, *engine;
    } cases[] = {{"deepseek-ai/DeepSeek-V3", "sglang"}, {"deepseek-ai/DeepSeek-V3", NULL},
                 {"deepseek-ai/DeepSeek-V3.2", "trtllm"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        model_cost *c = deepseek(cases[k].model, cases[k].engine, 0);
        REQUIRE(c);
        calib_table *t = attach(c, cases[k].engine);
        static bd m;
        breakdown(c, &b, &m);
        CHECK_MSG(!test_find_op(m.ops, m.n, "mla_module") && test_find_op(m.ops, m.n, "o_proj"), "%s %s",
                  cases[k].model, cases[k].engine ? cases[k].engine : "-");
        release(c, t);
    }
}

/* layout.kernels: an SGLang deployment running TensorRT-LLM's attention and
 * GEMMs (the fp8 DeepSeek recipe) prices the block with TensorRT-LLM's
 * module set; with TensorRT-LLM's attention beside SGLang's GEMMs (the
 * NVFP4 recipe) the block goes op by op, the decode attention priced as
 * TensorRT-LLM prices it and the projections as SGLang does. */
static void test_kernel_parts(void)
{
    model_batch b = {0, NULL, 64, 64 * 4097, 0};
    static bd both, mixed, trt, sgl;
    model_layout l = {.tp = 8, .pp = 1, .dtype = MODEL_DTYPE_FP8_BLOCK, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8};
    snprintf(l.op_backend, sizeof l.op_backend, "sglang");
    snprintf(l.kernels[MODEL_KERN_ATTENTION], sizeof l.kernels[0], "trtllm");
    snprintf(l.kernels[MODEL_KERN_GEMM], sizeof l.kernels[0], "trtllm");
    model_cost *c = test_cost_layout("deepseek-ai/DeepSeek-V3", "b200", &l);
    REQUIRE(c);
    breakdown(c, &b, &both);
    model_cost *t = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 0);
    REQUIRE(t);
    breakdown(t, &b, &trt);
    const model_op *m1 = test_find_op(both.ops, both.n, "mla_module"), *m2 = test_find_op(trt.ops, trt.n, "mla_module");
    CHECK(m1 && m2 && m1->time_s == m2->time_s);
    model_cost_destroy(c);
    model_cost_destroy(t);
    l.kernels[MODEL_KERN_GEMM][0] = '\0';
    c = test_cost_layout("deepseek-ai/DeepSeek-V3", "b200", &l);
    REQUIRE(c);
    breakdown(c, &b, &mixed);
    CHECK(!test_find_op(mixed.ops, mixed.n, "mla_module"));
    t = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 1);
    model_cost *s = deepseek("deepseek-ai/DeepSeek-V3", "sglang", 0);
    REQUIRE(t && s);
    breakdown(t, &b, &trt);
    breakdown(s, &b, &sgl);
    const model_op *a = test_find_op(mixed.ops, mixed.n, "attn_decode"), *at = test_find_op(trt.ops, trt.n, "attn_decode");
    const model_op *g = test_find_op(mixed.ops, mixed.n, "q_a_proj"), *gs = test_find_op(sgl.ops, sgl.n, "q_a_proj"),
                   *gt = test_find_op(trt.ops, trt.n, "q_a_proj");
    CHECK(a && at && a->time_s == at->time_s);
    CHECK(g && gs && gt && g->time_s == gs->time_s && gs->time_s != gt->time_s);
    model_cost_destroy(c);
    model_cost_destroy(t);
    model_cost_destroy(s);
}

/* Without rows the engine's own fitted module set prices the block (source
 * op-model), exactly model_op_time of that set. */
static void test_fitted_set(void)
{
    model_cost *c = deepseek("deepseek-ai/DeepSeek-V3", "trtllm", 0);
    REQUIRE(c);
    model_batch b = {0, NULL, 64, 64 * 4097, 0};
    static bd m;
    breakdown(c, &b, &m);
    const model_op *mod = test_find_op(m.ops, m.n, "mla_module");
    REQUIRE(mod);
    CHECK(mod->source == MODEL_SRC_OP_MODEL);
    model_op_query q;
    memset(&q, 0, sizeof q);
    q.kind = MODEL_OPK_GEN_MLA_MODULE;
    snprintf(q.dtype, sizeof q.dtype, "bfloat16");
    snprintf(q.kv_dtype, sizeof q.kv_dtype, "bfloat16");
    snprintf(q.gemm_type, sizeof q.gemm_type, "fp8_block");
    q.f[MODEL_OPF_BATCH] = 64, q.f[MODEL_OPF_ISL] = 1, q.f[MODEL_OPF_STEP] = 4096, q.f[MODEL_OPF_HEADS] = 16;
    const model_op_paramset *s = model_op_lookup(model_cost_gpu(c), "trtllm", "mla_generation_module:bfloat16/fp8_block");
    REQUIRE(s);
    sim_err e = {{0}};
    double t = model_op_time(model_cost_gpu(c), &q, s->p, &e);
    CHECK(t > 0);
    CHECK_NEAR(mod->time_s, LAYERS * t, 1e-12);
    model_cost_destroy(c);
}

/* hardware.op_speedup scales the module as it scales the ops it contains:
 * every family 2× faster, the module half the measured row (a sensitivity
 * run moves it as it moves the op sum; nothing turns it off). */
static void test_op_speedup(void)
{
    model_cost *c = deepseek_at("deepseek-ai/DeepSeek-V3", "trtllm", 0, 2.0);
    REQUIRE(c);
    calib_table *t = attach(c, "trtllm");
    model_batch b = {0, NULL, 1, 1025, 0};
    static bd m;
    breakdown(c, &b, &m);
    const model_op *mod = test_find_op(m.ops, m.n, "mla_module");
    REQUIRE(mod);
    CHECK(mod->source == MODEL_SRC_DB);
    CHECK_NEAR(mod->time_s, LAYERS * 48.0e-6 / 2, 1e-12);
    release(c, t);
}

/* Lookups through a fresh memo of one evaluation of b on c (breakdown:
 * model_cost_breakdown into *out, else model_cost_iteration). */
static uint64_t lookups(model_cost *c, const calib_table *t, const model_batch *b, int breakdown_too, bd *out)
{
    calib_memo *memo = NULL;
    sim_err e = {{0}};
    REQUIRE_OR(calib_memo_create(12, &memo, &e) == 0, return 0);
    model_cost_set_tables(c, t, memo);
    if (breakdown_too) breakdown(c, b, out);
    else CHECK(model_cost_iteration(c, b, NULL) > 0);
    uint64_t h = 0, m = 0;
    calib_memo_stats(memo, &h, &m);
    model_cost_set_tables(c, t, NULL);
    calib_memo_free(memo);
    return h + m;
}

/* The ops the module replaces are counted, not priced: each of the
 * block's GEMMs that the op-by-op iteration prices from the GEMM rows is a
 * lookup the module iteration does not make (it makes the module's one),
 * and the module's FLOPs, bytes and busy seconds are the block's ops'
 * sums in their order, bit for bit; under hardware.op_speedup (which needs
 * their times for the family mix) they are priced as before. */
static void test_replaced_not_priced(void)
{
    calib_db *gdb = NULL;
    sim_err e = {{0}};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &gdb, &e) == 0);
    char fam[1100];
    snprintf(fam, sizeof fam, "%s/tests/data/optable-families", test_src_dir());
    static const char *const gemm_only[] = {"gemm", NULL};
    calib_ingest_opts o = {.sms = 148};
    calib_ingest_stats st;
    CHECK_MSG(calib_ingest(gdb, root, "b200_sxm", &o, &st, &e) == 0, "%s", e.msg);
    o.ops = gemm_only;
    CHECK_MSG(calib_ingest(gdb, fam, "b200_sxm", &o, &st, &e) == 0 && st.added > 0, "%s %lld", e.msg, (long long)st.added);
    int64_t gid = 0;
    REQUIRE(calib_db_gpu_find(gdb, "b200", "gpu", &gid, &e) == 0);
    model_chunk ch = {256, 0};
    const model_batch batches[2] = {{0, NULL, 1, 1025, 0}, {1, &ch, 0, 0, 0}};
    for (int sp = 0; sp < 2; sp++)
        for (int k = 0; k < 2; k++) {
            model_cost *cm = deepseek_at("deepseek-ai/DeepSeek-V3", "trtllm", 0, sp ? 2.0 : 0);
            model_cost *co = deepseek_at("deepseek-ai/DeepSeek-V3", "trtllm", 1, sp ? 2.0 : 0);
            REQUIRE(cm && co);
            calib_table *t = NULL;
            const char *dts[MODEL_COST_DB_DTYPES_MAX];
            REQUIRE(calib_table_build(gdb, gid, "trtllm", model_cost_db_dtypes(cm, dts), 148, &t, &e) == 0);
            static bd m, op;
            uint64_t lm = lookups(cm, t, &batches[k], 1, &m), lo = lookups(co, t, &batches[k], 1, &op);
            uint64_t im = lookups(cm, t, &batches[k], 0, NULL), io = lookups(co, t, &batches[k], 0, NULL);
            int n_db = 0;
            double flops = 0, bytes = 0, cbusy = 0, mbusy = 0;
            for (int32_t i = 0; i < op.n; i++) {
                if (!is_block_op(op.ops[i].name)) continue;
                n_db += op.ops[i].source == MODEL_SRC_DB || op.ops[i].source == MODEL_SRC_DB_FIT;
                flops += op.ops[i].flops, bytes += op.ops[i].bytes;
                cbusy += op.ops[i].compute_busy_s, mbusy += op.ops[i].mem_busy_s;
            }
            CHECK_MSG(n_db >= 4, "%d block ops priced from the GEMM rows", n_db);
            const uint64_t want = sp ? lo + 1 : lo + 1 - (uint64_t)n_db;
            CHECK_MSG(lm == want && im == (sp ? io + 1 : io + 1 - (uint64_t)n_db),
                      "%s%s: %llu / %llu lookups with the module, %llu / %llu op by op, %d block GEMMs from rows",
                      k ? "prefill" : "decode", sp ? " (op_speedup)" : "", (unsigned long long)lm,
                      (unsigned long long)im, (unsigned long long)lo, (unsigned long long)io, n_db);
            const model_op *mod = test_find_op(m.ops, m.n, "mla_module");
            REQUIRE(mod);
            CHECK(mod->flops == flops && mod->bytes == bytes);
            CHECK(mod->compute_busy_s == cbusy && mod->mem_busy_s == mbusy);
            calib_table_free(t);
            model_cost_destroy(cm);
            model_cost_destroy(co);
        }
    calib_db_close(gdb);
}

static const test_case cases[] = {
    {"decode_row", test_decode_row},         {"prefill_row", test_prefill_row},
    {"mixed_unchanged", test_mixed_unchanged}, {"no_module", test_no_module},
    {"fitted_set", test_fitted_set},         {"op_speedup", test_op_speedup},
    {"replaced_not_priced", test_replaced_not_priced}, {"kernel_parts", test_kernel_parts},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    snprintf(root, sizeof root, "%s/tests/data/optable-mla-module", test_src_dir());
    sim_err e = {{0}};
    REQUIRE_OR(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0, return test_finish("test_mla_module"));
    calib_ingest_opts o = {.sms = 148};
    calib_ingest_stats st;
    REQUIRE_MSG_OR(calib_ingest(db, root, "b200_sxm", &o, &st, &e) == 0 && st.tables == 2,
                   return test_finish("test_mla_module"), "%s", e.msg);
    int rc = test_run("test_mla_module", cases);
    calib_db_close(db);
    return rc;
}
