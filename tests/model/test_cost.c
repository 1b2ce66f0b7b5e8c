/* test_cost — the roofline cost model: hand-computed FLOPs/bytes, layout
 * checks, memory, monotonicity, and an end-to-end sanity check of decode
 * TPOT against measured Qwen3-32B deployments on H100 (e2e-dev.csv rows
 * copied to tests/data/models/qwen3-32b-h100-e2e.csv). */
#include "calib_db.h"
#include "model_comm.h"
#include "model_cost.h"
#include "test_util.h"
#include "test_perfdb_util.h"
#include "test_model_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char src_dir[1024];

static model_layout layout(int tp, int pp)
{
    model_layout l = {.tp = tp, .pp = pp, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    return l;
}

static model_cost *make(const char *model, const char *gpu, model_layout l)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err e = {""};
    int rc = model_catalog_model(model, &m, &e) || model_catalog_gpu(gpu, &g, &e) || model_cost_create(&m, &g, &l, &c, &e);
    CHECK_MSG(rc == 0, "make %s on %s: %s", model, gpu, e.msg);
    return c;
}

static double decode(const model_cost *c, int n, int64_t ctx_each, model_iter_cost *r)
{
    model_batch b = {0, NULL, n, (int64_t)n * ctx_each, 0};
    return model_cost_iteration(c, &b, r);
}

static double prefill(const model_cost *c, int tokens, int cached, model_iter_cost *r)
{
    model_chunk ch = {tokens, cached};
    model_batch b = {1, &ch, 0, 0, 0};
    return model_cost_iteration(c, &b, r);
}

static void test_kv_bytes(void)
{
    model_cost *c = make("llama-3.1-8b", "h100-sxm", layout(1, 1));
    CHECK(c != NULL);
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 2.0 * 32 * 8 * 128 * 2, 1e-6);
    model_cost_destroy(c);
    /* TP splits KV heads, so the instance total is unchanged ... */
    c = make("llama-3.1-8b", "h100-sxm", layout(2, 1));
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 131072, 1e-6);
    model_cost_destroy(c);
    /* ... until tp exceeds the 8 KV heads and they are replicated. */
    c = make("llama-3.1-8b", "h100-sxm", layout(16, 1));
    CHECK(c != NULL);
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 2.0 * 131072, 1e-6);
    model_cost_destroy(c);
    model_layout l = layout(1, 1);
    l.kv_dtype = MODEL_DTYPE_FP8;
    c = make("llama-3.1-8b", "h100-sxm", l);
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 65536, 1e-6);
    model_cost_destroy(c);
    /* MLA stores one latent (512) + rope key (64) per layer, replicated per rank. */
    c = make("deepseek-v3", "b200", layout(8, 1));
    CHECK(c != NULL);
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 8.0 * 61 * (512 + 64) * 2, 1e-6);
    model_cost_destroy(c);
    /* PP splits layers: same total. */
    c = make("llama-3.1-8b", "h100-sxm", layout(1, 4));
    if (c) CHECK_NEAR(model_cost_kv_bytes_per_token(c), 131072, 1e-6);
    model_cost_destroy(c);
}

/* FLOPs, bytes and times of single ops against hand computation
 * (Llama-3.1-8B on one H100, bf16). */
static void test_hand_ops(void)
{
    model_gpu g;
    sim_err e;
    model_catalog_gpu("h100-sxm", &g, &e);
    model_cost *c = make("llama-3.1-8b", "h100-sxm", layout(1, 1));
    if (!c) return;
    const double bw = g.hbm_bw * g.eff_mem, peak = g.flops_bf16 * g.eff_gemm, pa = g.flops_bf16 * g.eff_attn;
    model_op ops[128];
    int32_t n = 0;
    model_iter_cost r;
    model_chunk ch = {4096, 0};
    model_batch b = {1, &ch, 0, 0, 0};
    double tot = model_cost_breakdown(c, &b, ops, 128, &n, &r);
    CHECK(n > 10 && n < 128);
    /* QKV: m=4096, n=(32+2*8)*128=6144, k=4096; 1536 tiles on 132 SMs → 12 waves. */
    const model_op *q = test_find_op(ops, n, "qkv_proj");
    CHECK(q != NULL);
    if (q) {
        double fl = 2.0 * 4096 * 6144 * 4096, by = 6144.0 * 4096 * 2 + 4096.0 * 4096 * 2 + 4096.0 * 6144 * 2;
        CHECK(q->count == 32);
        CHECK_NEAR(q->flops / (32 * fl), 1.0, 1e-12);
        CHECK_NEAR(q->bytes / (32 * by), 1.0, 1e-12);
        double wave = 1536.0 / (12 * 132);
        CHECK_NEAR(q->time_s / (32 * (fl / (peak * wave) + g.launch_s)), 1.0, 1e-9);
        CHECK(q->bound == MODEL_BOUND_COMPUTE && q->source == MODEL_SRC_ROOFLINE);
    }
    /* Causal prefill attention: 4·heads·head_dim per pair, 4096·2048 pairs. */
    const model_op *at = test_find_op(ops, n, "attn_prefill");
    CHECK(at != NULL);
    if (at) CHECK_NEAR(at->flops / (32 * 4.0 * 32 * 128 * 4096 * 2048.0), 1.0, 1e-12);
    if (at) CHECK_NEAR(at->time_s / (32 * (at->flops / 32 / pa + g.launch_s)), 1.0, 1e-9);
    /* TP = 1: no collective anywhere. */
    for (int32_t i = 0; i < n; i++) CHECK_MSG(ops[i].cls != MODEL_OPC_COMM, "%s", ops[i].name);
    CHECK(r.comm_s == 0);
    /* The op list sums to the iteration, and the fast path agrees exactly. */
    double sum = 0;
    for (int32_t i = 0; i < n; i++) sum += ops[i].time_s;
    CHECK_NEAR(sum / tot, 1.0, 1e-12);
    CHECK(model_cost_iteration(c, &b, NULL) == tot);

    /* Decode 8 × 1000: paged attention streams the KV of 8000 tokens. */
    model_batch d = {0, NULL, 8, 8000, 0};
    model_cost_breakdown(c, &d, ops, 128, &n, &r);
    const model_op *ad = test_find_op(ops, n, "attn_decode");
    CHECK(ad != NULL);
    if (ad) {
        double by = 8000.0 * 2 * 8 * 128 * 2 + 8.0 * 32 * 256 * 2;
        CHECK_NEAR(ad->bytes / (32 * by), 1.0, 1e-12);
        CHECK(ad->bound == MODEL_BOUND_MEMORY);
        /* Decode replays a CUDA graph: half the launch floor. */
        CHECK_NEAR(ad->time_s / (32 * (by / bw + 0.5 * g.launch_s)), 1.0, 1e-9);
    }
    const model_op *lm = test_find_op(ops, n, "lm_head");
    CHECK(lm && lm->count == 1 && fabs(lm->flops - 2.0 * 8 * 128256 * 4096) < 1);
    model_cost_destroy(c);

    /* MoE decode of one token reads top_k = 2 of Mixtral's 8 experts. */
    c = make("mixtral-8x7b", "h100-sxm", layout(1, 1));
    if (!c) return;
    model_batch one = {0, NULL, 1, 100, 0};
    model_cost_breakdown(c, &one, ops, 128, &n, &r);
    const model_op *eg = test_find_op(ops, n, "experts_gate_up");
    CHECK(eg != NULL);
    if (eg) CHECK_NEAR(eg->bytes / (32 * (2.0 * (2 * 14336.0 * 4096) * 2 + 2 * 4096 * 2 + 2 * 2 * 14336 * 2.0)), 1.0,
                       1e-9);
    model_cost_destroy(c);
}

/* The fast path and the op list agree exactly across layouts. */
static void test_breakdown_agrees(void)
{
    struct {
        const char *model, *gpu;
        model_layout l;
    } cases[] = {
        {"qwen3-32b", "h100-sxm", {.tp = 4, .pp = 1}},
        {"qwen3-32b", "h100-sxm", {.tp = 2, .pp = 4, .micro_batches = 4}},
        {"qwen3-32b", "h100-sxm", {.tp = 8, .pp = 1, .tp_sp = 1, .comm_fp8 = 1, .comm_overlap = 1}},
        {"qwen3-32b", "h100-sxm", {.tp = 4, .pp = 1, .sp = 2, .sp_kind = MODEL_SP_RING}},
        {"qwen3-32b", "h100-sxm", {.tp = 4, .pp = 1, .sp = 2, .sp_kind = MODEL_SP_ULYSSES}},
        {"qwen3-235b-a22b", "h100-sxm", {.tp = 1, .pp = 1, .dp = 8, .ep = 8, .dtype = MODEL_DTYPE_FP8}},
        {"qwen3-235b-a22b", "h100-sxm", {.tp = 8, .pp = 1, .ep = 8, .expert_skew = 1.2, .dtype = MODEL_DTYPE_FP8}},
        {"deepseek-v3", "b200", {.tp = 8, .pp = 1, .dcp = 8, .dtype = MODEL_DTYPE_FP8_BLOCK}},
        {"gpt-oss-120b", "b200", {.tp = 2, .pp = 1, .dtype = MODEL_DTYPE_NVFP4, .kv_dtype = MODEL_DTYPE_FP8}},
    };
    model_chunk ch[3] = {{2048, 0}, {512, 4096}, {100, 30000}};
    model_batch bs[3] = {{3, ch, 0, 0, 0}, {0, NULL, 64, 64 * 3000, 0}, {2, ch + 1, 32, 32 * 9000, 0}};
    model_op ops[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_layout l = cases[i].l;
        l.gpus_per_node = 8;
        l.overhead_s = 1e-3;
        model_cost *c = make(cases[i].model, cases[i].gpu, l);
        CHECK_MSG(c != NULL, "case %zu", i);
        if (!c) continue;
        for (int k = 0; k < 3; k++) {
            int32_t n = 0;
            model_iter_cost a, b;
            double fast = model_cost_iteration(c, &bs[k], &a);
            double slow = model_cost_breakdown(c, &bs[k], ops, 256, &n, &b);
            CHECK_MSG(fast == slow && a.comm_s == b.comm_s && a.gemm_s == b.gemm_s, "case %zu batch %d: %.17g vs %.17g",
                      i, k, fast, slow);
            CHECK(n > 0 && n <= 256 && fast > 0 && isfinite(fast));
            double sum = 0, cb = 0, mb = 0;
            for (int32_t j = 0; j < n; j++) {
                sum += ops[j].time_s;
                cb += ops[j].compute_busy_s;
                mb += ops[j].mem_busy_s;
                CHECK(ops[j].compute_busy_s >= 0 && ops[j].mem_busy_s >= 0);
            }
            CHECK_MSG(fabs(sum / slow - 1) < 1e-12, "case %zu batch %d ops sum %.9g total %.9g", i, k, sum, slow);
            /* The ops' busy seconds are the iteration's, split (the AF energy split relies on it). */
            CHECK_MSG(b.compute_busy_s > 0 && fabs(cb / b.compute_busy_s - 1) < 1e-12 &&
                          fabs(mb / b.mem_busy_s - 1) < 1e-12 && a.compute_busy_s == b.compute_busy_s &&
                          a.mem_busy_s == b.mem_busy_s,
                      "case %zu batch %d busy: ops %.9g / %.9g, iteration %.9g / %.9g", i, k, cb, mb,
                      b.compute_busy_s, b.mem_busy_s);
        }
        model_cost_destroy(c);
    }
}

static void test_layouts(void)
{
    model_spec m;
    model_gpu g, a100;
    sim_err e = {""};
    model_cost *c = NULL;
    model_catalog_model("qwen3-32b", &m, &e);
    model_catalog_gpu("h100-sxm", &g, &e);
    model_catalog_gpu("a100-sxm-80g", &a100, &e);
    model_layout l = layout(3, 1);
    CHECK(model_cost_create(&m, &g, &l, &c, &e) == SIM_EINVAL && c == NULL);
    CHECK_CONTAINS(e.msg, "64 attention heads are not divisible by tp=3");
    l = layout(1, 65);
    CHECK(model_cost_create(&m, &g, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "pp=65 exceeds the 64 layers");
    l = layout(0, 1);
    CHECK(model_cost_create(&m, &g, &l, &c, &e) == SIM_EINVAL);
    l = layout(2, 1);
    /* MXFP8 needs FP8 tensor cores; fp8 on Ampere runs weight-only (test_quant ampere_fp8). */
    l.dtype = MODEL_DTYPE_MXFP8;
    CHECK(model_cost_create(&m, &a100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "a100-sxm-80g has no FP8");
    l.dtype = MODEL_DTYPE_FP8;
    CHECK(model_cost_create(&m, &a100, &l, &c, &e) == 0);
    model_cost_destroy(c);
    c = NULL;
    CHECK(model_cost_create(&m, &g, &l, &c, &e) == 0);
    if (c) {
        /* fp8 halves the weights and (decode, bandwidth-bound) most of the time. */
        model_cost *b16 = make("qwen3-32b", "h100-sxm", layout(2, 1));
        if (b16) {
            CHECK_NEAR(model_cost_weight_bytes_per_gpu(c) / model_cost_weight_bytes_per_gpu(b16), 0.52, 0.03);
            CHECK(decode(c, 16, 1000, NULL) < 0.7 * decode(b16, 16, 1000, NULL));
        }
        model_cost_destroy(b16);
    }
    model_cost_destroy(c);
    /* Uneven PP is allowed (vLLM splits as evenly as it can). */
    c = make("llama-3.1-405b", "h200-sxm", layout(8, 4));
    CHECK(c != NULL && model_cost_gpus(c) == 32);
    model_cost_destroy(c);
}

static void test_memory(void)
{
    model_cost *c = make("llama-3.1-70b", "h100-sxm", layout(1, 1));
    sim_err e = {""};
    int64_t tok = 0;
    if (!c) return;
    CHECK(model_cost_kv_capacity_tokens(c, 0.9, 2e9, &tok, &e) == SIM_ERANGE);
    CHECK_CONTAINS(e.msg, "llama-3.1-70b bf16 weights need 141.1 GB per GPU at tp=1 pp=1 dp=1 ep=1 but h100-sxm has");
    model_cost_destroy(c);
    c = make("llama-3.1-70b", "h100-sxm", layout(2, 1));
    if (!c) return;
    CHECK(model_cost_kv_capacity_tokens(c, 0.9, 2e9, &tok, &e) == 0);
    model_gpu g;
    model_catalog_gpu("h100-sxm", &g, &e);
    double usable = 2 * (g.hbm_bytes * 0.9 - model_cost_weight_bytes_per_gpu(c) - 2e9);
    CHECK_NEAR((double)tok, floor(usable / (2.0 * 80 * 8 * 128 * 2)), 1.0);
    CHECK(tok > 10000 && tok < 50000); /* 2x80 GB barely hold 70B in bf16 */
    CHECK_NEAR(model_cost_weight_bytes_per_gpu(c), 70.55e9, 0.3e9);
    CHECK(model_cost_kv_capacity_tokens(c, 1.5, 2e9, &tok, &e) == SIM_EINVAL);
    model_cost_destroy(c);
    /* PP: the heaviest stage decides. */
    c = make("llama-3.1-70b", "h100-sxm", layout(1, 2));
    if (!c) return;
    int64_t tok_pp = 0;
    CHECK(model_cost_kv_capacity_tokens(c, 0.9, 2e9, &tok_pp, &e) == 0);
    CHECK(tok_pp > 10000 && tok_pp < tok + 2000);
    model_cost_destroy(c);
}

static void test_monotonic(void)
{
    model_cost *c1 = make("qwen3-32b", "h100-sxm", layout(1, 1));
    model_cost *c2 = make("qwen3-32b", "h100-sxm", layout(2, 1));
    model_cost *c4 = make("qwen3-32b", "h100-sxm", layout(4, 1));
    if (!c1 || !c2 || !c4) goto done;
    model_iter_cost a, b;
    decode(c2, 16, 1000, &a);
    decode(c2, 16, 4000, &b);
    CHECK(b.total_s > a.total_s && b.attn_s > a.attn_s);
    CHECK(decode(c2, 64, 1000, NULL) > decode(c2, 16, 1000, NULL));
    decode(c1, 16, 1000, &a);
    CHECK(a.comm_s == 0);
    model_iter_cost t2, t4;
    decode(c2, 16, 1000, &t2);
    decode(c4, 16, 1000, &t4);
    CHECK(t2.comm_s > 0 && t4.gemm_s < t2.gemm_s && t2.gemm_s < a.gemm_s);
    CHECK(prefill(c4, 2048, 0, NULL) < prefill(c2, 2048, 0, NULL));
    CHECK(prefill(c2, 2048, 0, NULL) > prefill(c2, 1024, 0, NULL));
    /* Overhead is added as given; an empty batch costs nothing. */
    model_batch empty = {0, NULL, 0, 0, 0};
    CHECK(model_cost_iteration(c2, &empty, NULL) == 0);
done:
    model_cost_destroy(c1);
    model_cost_destroy(c2);
    model_cost_destroy(c4);
}

/* How a backend's closed-loop benchmark (all clients start together, fixed
 * isl/osl) shows up in TPOT. vLLM mixes chunked prefills of newly arrived
 * requests into decode iterations, so each output step carries bs/osl
 * prefills of isl tokens; its CPU work per scheduled request shows as a
 * TPOT deficit growing linearly with batch and independent of tp (≈50 µs
 * per request). SGLang prefills the synchronised clients together before
 * they decode (TTFT ≈ bs × one prefill) when all prompts fit in one or two
 * prefill chunks (bs·isl ≤ 16384): TPOT is then pure decode. Beyond that its
 * chunked prefill desynchronises the clients and TPOT depends on the
 * scheduler, which is the simulator's job, not the cost model's: those rows
 * are not used here. */
typedef struct {
    const char *backend;
    double overhead_s, per_seq_s;
    int mixes_prefill;
    int64_t max_prompt_tokens; /* bs·isl beyond which rows are not used */
} backend_profile;

static const backend_profile profiles[] = {
    {"sglang", 1.5e-3, 0.0, 0, 16384},
    {"vllm", 1.5e-3, 50e-6, 1, INT64_MAX},
};

static double closed_loop_tpot(const model_cost *c, const backend_profile *bp, int bs, int isl, int osl)
{
    int64_t ctx = isl + osl / 2;
    double d = decode(c, bs, ctx, NULL);
    if (!bp->mixes_prefill) return d;
    model_chunk ch = {isl, 0};
    model_batch mixed = {1, &ch, bs - 1, (int64_t)(bs - 1) * ctx, 0};
    double extra = model_cost_iteration(c, &mixed, NULL) - decode(c, bs - 1, ctx, NULL);
    return d + (double)bs / osl * extra;
}

static void test_fidelity(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/models/qwen3-32b-h100-e2e.csv", src_dir);
    FILE *f = fopen(path, "r");
    REQUIRE_MSG(f != NULL, "%s", path);
    enum { NP = (int)(sizeof profiles / sizeof profiles[0]) };
    model_cost *cs[NP][9];
    memset(cs, 0, sizeof cs);
    for (int p = 0; p < NP; p++)
        for (int tp = 1; tp <= 8; tp *= 2) {
            model_layout l = layout(tp, 1);
            l.overhead_s = profiles[p].overhead_s;
            l.overhead_per_seq_s = profiles[p].per_seq_s;
            cs[p][tp] = make("qwen3-32b", "h100-sxm", l);
        }
    printf("Qwen3-32B bf16 on H100, overhead 1.5 ms/iteration: pure decode TPOT (ctx 1100) and prefill\n");
    for (int tp = 2; tp <= 8; tp *= 2) {
        model_iter_cost r;
        const model_cost *c = cs[0][tp];
        if (!c) continue;
        for (int bs = 16; bs <= 64; bs *= 4) {
            decode(c, bs, 1100, &r);
            printf("  tp=%d bs=%-3d TPOT %6.2f ms (gemm %.2f attn %.2f comm %.2f other %.2f)\n", tp, bs,
                   r.total_s * 1e3, r.gemm_s * 1e3, r.attn_s * 1e3, r.comm_s * 1e3, r.other_s * 1e3);
        }
        prefill(c, 1024, 0, &r);
        model_chunk sixteen[16];
        for (int i = 0; i < 16; i++) sixteen[i] = (model_chunk){1024, 0};
        model_batch b16 = {16, sixteen, 0, 0, 0};
        printf("  tp=%d prefill 1024 tokens %6.2f ms (gemm %.2f attn %.2f comm %.2f); 16 x 1024 %.1f ms\n", tp,
               r.total_s * 1e3, r.gemm_s * 1e3, r.attn_s * 1e3, r.comm_s * 1e3,
               model_cost_iteration(c, &b16, NULL) * 1e3);
    }
    char line[1024];
    int rows = 0, within15 = 0, within30 = 0;
    double sum_log = 0;
    printf("  closed-loop TPOT vs measured (backend isl osl bs tp: measured predicted):\n");
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char *fld[20];
        int n = 0;
        for (char *p = line; n < 20;) {
            fld[n++] = p;
            char *comma = strchr(p, ',');
            if (!comma) break;
            *comma = 0;
            p = comma + 1;
        }
        if (n < 17) continue;
        int isl = atoi(fld[7]), osl = atoi(fld[8]), bs = atoi(fld[9]), tp = atoi(fld[10]);
        double meas = atof(fld[16]) * 1e-3;
        int p = 0;
        while (p < NP && strcmp(profiles[p].backend, fld[1])) p++;
        if (p == NP || tp < 1 || tp > 8 || !cs[p][tp] || bs < 1 || osl < 1 ||
            (int64_t)bs * isl > profiles[p].max_prompt_tokens)
            continue;
        /* Rows whose clients do not all fit in the KV cache (vLLM's 0.9
         * utilisation) run a smaller batch than bs: not a cost-model test. */
        int64_t cap = 0;
        if (model_cost_kv_capacity_tokens(cs[p][tp], 0.9, 2e9, &cap, NULL) || (int64_t)bs * (isl + osl) > cap) {
            printf("    %-6s %4d %4d %3d %d: skipped, %d x %d tokens exceed the KV cache (%lld)\n", fld[1], isl, osl,
                   bs, tp, bs, isl + osl, (long long)cap);
            continue;
        }
        double pred = closed_loop_tpot(cs[p][tp], &profiles[p], bs, isl, osl);
        double rel = pred / meas - 1;
        rows++;
        within15 += fabs(rel) <= 0.15;
        within30 += fabs(rel) <= 0.30;
        sum_log += log(pred / meas);
        printf("    %-6s %4d %4d %3d %d: %6.2f %6.2f ms (%+.0f%%)\n", fld[1], isl, osl, bs, tp, meas * 1e3, pred * 1e3,
               rel * 100);
    }
    fclose(f);
    double geo_bias = rows ? exp(sum_log / rows) - 1 : 0;
    printf("  %d rows: %d within 15%%, %d within 30%%, geometric-mean bias %+.1f%%\n", rows, within15, within30,
           geo_bias * 100);
    /* The model must track measured serving across the grid, not one point:
     * most rows close and no large systematic bias. */
    CHECK(rows > 80);
    CHECK_MSG(within30 == rows, "%d of %d rows within 30%%", within30, rows);
    CHECK_MSG(within15 >= 0.9 * rows, "%d of %d rows within 15%%", within15, rows);
    CHECK_MSG(fabs(geo_bias) < 0.05, "bias %+.1f%%", geo_bias * 100);
    for (int p = 0; p < NP; p++)
        for (int tp = 1; tp <= 8; tp *= 2) model_cost_destroy(cs[p][tp]);
}

/* Layout physics: DCP, SP, EP modes, collectives, quantisation, skew, PP. */
static void test_physics(void)
{
    sim_err e = {""};
    model_spec m, ds;
    model_gpu h100, b200;
    model_cost *c = NULL, *c2 = NULL;
    model_op ops[256];
    int32_t n = 0;
    model_catalog_model("qwen3-32b", &m, &e);
    model_catalog_model("deepseek-v3", &ds, &e);
    model_catalog_gpu("h100-sxm", &h100, &e);
    model_catalog_gpu("b200", &b200, &e);
    model_batch dec = {0, NULL, 32, 32 * 8000, 0};

    /* DCP=1 is plain attention: same cost and memory as no DCP at all. */
    model_layout l = layout(8, 1);
    l.dcp = 1;
    c = make("deepseek-v3", "b200", l);
    c2 = make("deepseek-v3", "b200", layout(8, 1));
    if (c && c2) {
        CHECK(model_cost_iteration(c, &dec, NULL) == model_cost_iteration(c2, &dec, NULL));
        CHECK(model_cost_kv_bytes_per_token(c) == model_cost_kv_bytes_per_token(c2));
    }
    model_cost_destroy(c);
    /* DCP=8 on MLA (latent replicated on all 8 ranks): KV memory and decode
     * KV traffic fall 8×; one gather per layer ∝ heads·head_dim, not context. */
    l.dcp = 8;
    c = make("deepseek-v3", "b200", l);
    if (c && c2) {
        CHECK_NEAR(model_cost_kv_bytes_per_token(c) * 8, model_cost_kv_bytes_per_token(c2), 1e-6);
        model_cost_breakdown(c, &dec, ops, 256, &n, NULL);
        const model_op *a8 = test_find_op(ops, n, "attn_decode"), *g8 = test_find_op(ops, n, "dcp_gather");
        model_op ops1[256];
        int32_t n1 = 0;
        model_cost_breakdown(c2, &dec, ops1, 256, &n1, NULL);
        const model_op *a1 = test_find_op(ops1, n1, "attn_decode");
        CHECK(a8 && a1 && g8 && test_find_op(ops, n, "lse_merge"));
        if (a8 && a1) CHECK_NEAR(a8->flops, a1->flops, 1e-3 * a1->flops);
        if (a8 && a1) CHECK(a8->bytes < 0.2 * a1->bytes);
        model_batch dec2 = {0, NULL, 32, 32 * 64000, 0};
        model_cost_breakdown(c, &dec2, ops1, 256, &n1, NULL);
        const model_op *g8b = test_find_op(ops1, n1, "dcp_gather");
        if (g8 && g8b) CHECK(g8->bytes == g8b->bytes); /* independent of context */
    }
    model_cost_destroy(c);
    model_cost_destroy(c2);
    c = c2 = NULL;
    /* DCP needs replicated KV heads and divides tp. */
    l = layout(8, 1);
    l.dcp = 2;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "dcp=2 needs each KV head held by a multiple of 2");
    l = layout(4, 1);
    l.dcp = 3;
    CHECK(model_cost_create(&ds, &b200, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "dcp=3 must divide tp=4");

    /* Ulysses: heads per TP rank must divide by sp; ring has no such rule. */
    l = layout(8, 1);
    l.sp = 3;
    l.sp_kind = MODEL_SP_ULYSSES;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "Ulysses sp=3 needs the 8 heads per TP rank");
    l.sp_kind = MODEL_SP_RING;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == 0);
    if (c) {
        CHECK(model_cost_gpus(c) == 24);
        model_chunk big = {16384, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost *c1 = make("qwen3-32b", "h100-sxm", layout(8, 1));
        if (c1) CHECK(model_cost_iteration(c, &pb, NULL) < 0.6 * model_cost_iteration(c1, &pb, NULL));
        model_cost_destroy(c1);
    }
    model_cost_destroy(c);
    c = NULL;
    l.sp = 2;
    l.sp_kind = MODEL_SP_ULYSSES;
    c = make("qwen3-32b", "h100-sxm", l);
    if (c) {
        model_chunk big = {8192, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost_breakdown(c, &pb, ops, 256, &n, NULL);
        const model_op *a2a = test_find_op(ops, n, "sp_a2a_qkv");
        CHECK(a2a && a2a->count == 64 && test_find_op(ops, n, "sp_a2a_out"));
    }
    model_cost_destroy(c);
    c = NULL;

    /* Layouts that do not divide are rejected with the reason. */
    model_spec q235;
    model_catalog_model("qwen3-235b-a22b", &q235, &e);
    l = layout(4, 1);
    l.ep = 8;
    CHECK(model_cost_create(&q235, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "ep=8 must divide tp*dp=4");
    l = layout(4, 1);
    l.ep = 2;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "no routed experts");
    l = layout(3, 1);
    l.dp = 1;
    CHECK(model_cost_create(&q235, &h100, &l, &c, &e) == SIM_EINVAL);

    /* EP all-to-all (attention DP 8 × EP 8): low-latency wins small
     * batches, normal mode large ones. */
    l = layout(1, 1);
    l.dp = 8;
    l.ep = 8;
    l.dtype = MODEL_DTYPE_FP8;
    c = make("qwen3-235b-a22b", "h100-sxm", l);
    if (c) {
        model_batch small = {0, NULL, 64, 64 * 1000, 0};
        model_cost_breakdown(c, &small, ops, 256, &n, NULL);
        const model_op *dsp = test_find_op(ops, n, "ep_dispatch");
        CHECK(dsp && strstr(dsp->detail, "low_latency"));
        CHECK(test_find_op(ops, n, "ep_combine") != NULL);
        model_chunk big[8];
        for (int i = 0; i < 8; i++) big[i] = (model_chunk){8192, 0};
        model_batch bb = {8, big, 0, 0, 0};
        model_cost_breakdown(c, &bb, ops, 256, &n, NULL);
        dsp = test_find_op(ops, n, "ep_dispatch");
        CHECK(dsp && strstr(dsp->detail, "normal"));
        /* Forced modes cost more where auto would not pick them. */
        model_layout ll = l;
        ll.ep_mode = MODEL_EP_LOW_LATENCY;
        model_cost *cl = make("qwen3-235b-a22b", "h100-sxm", ll);
        if (cl) CHECK(model_cost_iteration(cl, &bb, NULL) > model_cost_iteration(c, &bb, NULL));
        model_cost_destroy(cl);
    }
    model_cost_destroy(c);
    c = NULL;

    /* Expert skew: the busiest EP rank gets more rows than a uniform one. */
    l = layout(8, 1);
    l.ep = 8;
    l.dtype = MODEL_DTYPE_FP8;
    c = make("qwen3-235b-a22b", "h100-sxm", l);
    l.expert_skew = 1.2;
    c2 = make("qwen3-235b-a22b", "h100-sxm", l);
    if (c && c2) {
        model_chunk big = {8192, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost_breakdown(c, &pb, ops, 256, &n, NULL);
        const model_op *u = test_find_op(ops, n, "experts_gate_up");
        double ur = u ? u->flops : 0;
        model_cost_breakdown(c2, &pb, ops, 256, &n, NULL);
        const model_op *sk = test_find_op(ops, n, "experts_gate_up");
        CHECK(u && sk && sk->flops > 1.5 * ur);
        /* Uniform: 8192 tokens × top-8 / 8 ranks rows per rank. */
        CHECK_NEAR(ur / (94 * 2.0 * 8192 * 8 / 8 * 2 * 1536 * 4096), 1.0, 1e-9);
    }
    model_cost_destroy(c);
    model_cost_destroy(c2);
    c = c2 = NULL;
    /* A token picks an expert once: under Zipf s = 3 the hottest expert
     * would take 0.83 of the picks (54,000 rows of 8192 tokens × top-8);
     * capped at T rows an expert, a rank of 2 experts (EP 64 of 128) holds
     * at most 2 × 8192 rows. */
    l = layout(8, 1);
    l.ep = 64;
    l.tp = 64;
    l.dtype = MODEL_DTYPE_FP8;
    l.expert_skew = 3;
    c = make("qwen3-235b-a22b", "h100-sxm", l);
    if (c) {
        model_chunk big = {8192, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost_breakdown(c, &pb, ops, 256, &n, NULL);
        const model_op *sk = test_find_op(ops, n, "experts_gate_up");
        double rows = sk ? sk->flops / (94 * 2.0 * 2 * 1536 * 4096) : -1;
        CHECK_MSG(rows > 8192 && rows <= 2 * 8192 * (1 + 1e-9), "busiest rank %.0f rows (<= 2 x 8192)", rows);
    }
    model_cost_destroy(c);
    c = NULL;

    /* Masked grouped GEMM pays whole tiles per expert: forced masked costs
     * more rows than contiguous for a tiny decode batch. */
    l = layout(8, 1);
    l.ep = 8;
    l.moe_gemm = MODEL_MOE_GEMM_MASKED;
    c = make("qwen3-235b-a22b", "h100-sxm", l);
    if (c) {
        model_batch sm = {0, NULL, 4, 4000, 0};
        model_cost_breakdown(c, &sm, ops, 256, &n, NULL);
        const model_op *g = test_find_op(ops, n, "experts_gate_up");
        CHECK(g && g->flops > 4 * 4.0 * 8 / 8 * 2 * 2 * 1536 * 4096 * 94);
        CHECK(test_find_op(ops, n, "moe_permute") == NULL);
        CHECK(test_find_op(ops, n, "moe_scatter") != NULL); /* no LL dispatch fills the slots */
    }
    model_cost_destroy(c);
    c = NULL;

    /* Quantisation: footprints with scales; GPUs without the format refuse. */
    CHECK(model_dtype_bytes(MODEL_DTYPE_BF16) == 2.0 && model_dtype_bytes(MODEL_DTYPE_FP8) == 1.0);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_FP8_BLOCK), 1.0 + 4.0 / 16384.0, 1e-12);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_MXFP8), 1.03125, 1e-12);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_NVFP4), 0.5625, 1e-12);
    model_dtype dt;
    CHECK(model_dtype_from_name("fp8_block", &dt, &e) == 0 && dt == MODEL_DTYPE_FP8_BLOCK);
    CHECK(model_dtype_from_name("NVFP4", &dt, &e) == 0 && dt == MODEL_DTYPE_NVFP4);
    CHECK(model_dtype_from_name("int3", &dt, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown dtype 'int3'");
    l = layout(2, 1);
    l.dtype = MODEL_DTYPE_NVFP4;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "no FP4 tensor cores");
    l.dtype = MODEL_DTYPE_MXFP8;
    CHECK(model_cost_create(&m, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "mxfp8 needs Blackwell");
    model_cost *bf = make("qwen3-32b", "b200", layout(1, 1));
    l = layout(1, 1);
    l.dtype = MODEL_DTYPE_NVFP4;
    model_cost *f4 = make("qwen3-32b", "b200", l);
    l.dtype = MODEL_DTYPE_FP8_BLOCK;
    l.kv_dtype = MODEL_DTYPE_NVFP4;
    model_cost *f8 = make("qwen3-32b", "b200", l);
    if (bf && f4 && f8) {
        /* Layers dominate: ≈ 0.5625/2 of the bf16 weights (embedding stays bf16). */
        double r4 = model_cost_weight_bytes_per_gpu(f4) / model_cost_weight_bytes_per_gpu(bf);
        CHECK(r4 > 0.28 && r4 < 0.33);
        CHECK_NEAR(model_cost_kv_bytes_per_token(f8) / model_cost_kv_bytes_per_token(bf), 0.5625 / 2, 1e-12);
        model_chunk big = {8192, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost_breakdown(f8, &pb, ops, 256, &n, NULL);
        CHECK(test_find_op(ops, n, "o_quant") != NULL); /* activation quantisation before fp8 GEMMs */
        CHECK(model_cost_iteration(f4, &pb, NULL) < model_cost_iteration(f8, &pb, NULL));
        CHECK(model_cost_iteration(f8, &pb, NULL) < model_cost_iteration(bf, &pb, NULL));
    }
    model_cost_destroy(bf);
    model_cost_destroy(f4);
    model_cost_destroy(f8);

    /* Collectives: ring all-reduce = base + 2(n−1)α + 2(n−1)/n·B/bw for
     * large messages; NVLink inside a node, NIC across. */
    model_comm_net net;
    model_comm_net_init(&net, &h100, 8);
    model_comm_cost cc;
    double B = 256e6;
    double t = model_comm_time(&net, MODEL_COLL_ALL_REDUCE, 8, 1, B, &cc);
    CHECK(cc.link == MODEL_LINK_NVLINK && cc.algo == MODEL_ALGO_RING);
    CHECK_NEAR(t, net.base_s + 14 * net.nvlink_alpha_s + 2.0 * 7 / 8 * B / (h100.nvlink_bw * h100.eff_nvlink), 1e-12);
    t = model_comm_time(&net, MODEL_COLL_ALL_REDUCE, 8, 1, 4096, &cc);
    CHECK(cc.algo == MODEL_ALGO_TREE && t < net.base_s + 14 * net.nvlink_alpha_s);
    model_comm_time(&net, MODEL_COLL_ALL_REDUCE, 16, 1, B, &cc);
    CHECK(cc.link == MODEL_LINK_NIC);
    CHECK(model_comm_group_link(&net, 2, 8) == MODEL_LINK_NIC);
    CHECK(model_comm_group_link(&net, 4, 2) == MODEL_LINK_NVLINK);
    CHECK(model_comm_group_link(&net, 1, 1) == MODEL_LINK_NONE);
    CHECK(model_comm_time(&net, MODEL_COLL_ALL_GATHER, 16, 1, B, NULL) >
          4 * model_comm_time(&net, MODEL_COLL_ALL_GATHER, 8, 1, B, NULL));
    t = model_comm_time(&net, MODEL_COLL_SEND_RECV, 2, 8, B, &cc);
    CHECK_NEAR(t, net.base_s + net.nic_alpha_s + B / (h100.nic_bw * h100.eff_nic), 1e-12);

    /* TP options: fp8 collectives halve the bytes, overlap hides some. */
    model_batch mid = {0, NULL, 64, 64 * 2000, 0};
    c = make("qwen3-32b", "h100-sxm", layout(8, 1));
    l = layout(8, 1);
    l.comm_fp8 = 1;
    c2 = make("qwen3-32b", "h100-sxm", l);
    if (c && c2) {
        model_cost_breakdown(c, &mid, ops, 256, &n, NULL);
        const model_op *a = test_find_op(ops, n, "tp_reduce_mlp");
        double b16 = a ? a->bytes : 0;
        model_cost_breakdown(c2, &mid, ops, 256, &n, NULL);
        const model_op *f = test_find_op(ops, n, "tp_reduce_mlp");
        CHECK(a && f && f->bytes * 2 == b16 && test_find_op(ops, n, "comm_quant"));
    }
    model_cost_destroy(c2);
    l.comm_fp8 = 0;
    l.comm_overlap = 1;
    c2 = make("qwen3-32b", "h100-sxm", l);
    if (c && c2) {
        /* The collective after o_proj/down_proj feeds the next GEMM, so only
         * a split of its own GEMM into row tiles overlaps it: decode at batch
         * 1 (and 64, under two 128-row tiles) gains nothing (< 2 %). */
        model_batch one = {0, NULL, 1, 2000, 0};
        const model_batch *small[] = {&one, &mid};
        for (int i = 0; i < 2; i++) {
            double t0 = model_cost_iteration(c, small[i], NULL), t1 = model_cost_iteration(c2, small[i], NULL);
            CHECK_MSG(fabs(t1 - t0) < 0.02 * t0, "decode %d: overlap %.4f ms vs %.4f ms", small[i]->n_decode,
                      t1 * 1e3, t0 * 1e3);
        }
        /* An 8k prefill splits: it gains, the GEMMs are untouched, and what
         * a collective hides stays below both its own time and its producing
         * GEMM's (the pipeline g + (s-1)·max(r, g + f·r) + r never beats
         * either); under tp_sp the all-gather before qkv_proj hides too. */
        model_chunk pf = {8192, 0};
        model_batch big = {1, &pf, 0, 0, 0};
        model_iter_cost a, b;
        model_cost_iteration(c, &big, &a);
        model_cost_iteration(c2, &big, &b);
        CHECK_MSG(b.comm_s < a.comm_s && b.gemm_s == a.gemm_s, "comm %.3f vs %.3f ms", b.comm_s * 1e3, a.comm_s * 1e3);
        model_layout ls = l;
        ls.tp_sp = 1;
        model_cost *c3 = make("qwen3-32b", "h100-sxm", ls);
        const char *pairs[3][2] = {{"tp_reduce_attn", "o_proj"}, {"tp_reduce_mlp", "down_proj"},
                                   {"tp_all_gather", "qkv_proj"}};
        for (int i = 0; i < 3; i++) {
            const model_cost *cx = i < 2 ? c2 : c3;
            REQUIRE_OR(cx != NULL, continue);
            model_cost_breakdown(cx, &big, ops, 256, &n, NULL);
            const model_op *r = test_find_op(ops, n, pairs[i][0]), *g = test_find_op(ops, n, pairs[i][1]);
            REQUIRE_OR(r && g, continue);
            CHECK_MSG(r->hidden_s > 0 && r->hidden_s < r->time_s + r->hidden_s && r->hidden_s < g->time_s,
                      "%s hides %.3f ms of %.3f, %s takes %.3f", pairs[i][0], r->hidden_s * 1e3,
                      (r->time_s + r->hidden_s) * 1e3, pairs[i][1], g->time_s * 1e3);
        }
        model_cost_destroy(c3);
    }
    model_cost_destroy(c);
    model_cost_destroy(c2);

    /* PP: one batch traverses the stages in turn; its latency is the host
     * work, every stage and every activation hop (model_cost_pipeline's
     * parts add up to model_cost_iteration), no pipeline bubble inside one
     * batch. A hop between nodes goes over the NIC and costs more. */
    l = layout(2, 4);
    c = make("qwen3-32b", "h100-sxm", l);
    c2 = make("qwen3-32b", "h100-sxm", layout(4, 4)); /* 16 GPUs: the hop after stage 1 leaves the node */
    if (c && c2) {
        model_chunk big[4] = {{8192, 0}, {8192, 0}, {8192, 0}, {8192, 0}};
        model_batch pb = {4, big, 0, 0, 0};
        model_batch d1 = {0, NULL, 8, 8000, 0};
        const model_batch *bs[2] = {&pb, &d1};
        for (int k = 0; k < 2; k++) {
            model_cost_breakdown(c, bs[k], ops, 256, &n, NULL);
            CHECK(test_find_op(ops, n, "pp_bubble") == NULL && test_find_op(ops, n, "pp_send") != NULL);
            double st[4], hop[3], host = -1;
            double tot = model_cost_pipeline(c, bs[k], st, hop, &host);
            double it = model_cost_iteration(c, bs[k], NULL);
            CHECK_NEAR(tot, it, 1e-12 * it);
            CHECK_NEAR(host + st[0] + st[1] + st[2] + st[3] + hop[0] + hop[1] + hop[2], it, 1e-9 * it);
            /* 64 layers: 16 a stage; the first adds the embedding, the last the LM head. */
            CHECK(st[0] > st[1] && st[3] > st[1] && st[1] == st[2]);
            CHECK(hop[0] > 0 && hop[0] == hop[1] && hop[1] == hop[2]);
            double busiest = 0;
            double iv = model_cost_pipeline_interval(c, bs[k], 4, &busiest);
            double top = host;
            for (int s2 = 0; s2 < 4; s2++) top = st[s2] > top ? st[s2] : top;
            CHECK_NEAR(busiest, top, 1e-15);
            CHECK_NEAR(iv, it / 4 > busiest ? it / 4 : busiest, 1e-15);
            CHECK_NEAR(model_cost_pipeline_interval(c, bs[k], 1, NULL), it, 1e-15);
            double hop2[3];
            model_cost_pipeline(c2, bs[k], NULL, hop2, NULL);
            CHECK_MSG(hop2[1] > 2 * hop2[0] && hop2[0] == hop2[2], "hops %.2f %.2f %.2f us", hop2[0] * 1e6,
                      hop2[1] * 1e6, hop2[2] * 1e6);
        }
        /* Each stage does a quarter of the layers: a stage's time is about a
         * quarter of the whole model's on the same TP group. */
        model_cost *c1 = make("qwen3-32b", "h100-sxm", layout(2, 1));
        if (c1) {
            double st[4], t1 = model_cost_iteration(c1, &d1, NULL);
            model_cost_pipeline(c, &d1, st, NULL, NULL);
            CHECK_MSG(st[1] > 0.2 * t1 && st[1] < 0.25 * t1, "stage %.3f ms of %.3f", st[1] * 1e3, t1 * 1e3);
        }
        model_cost_destroy(c1);
    }
    model_cost_destroy(c);
    model_cost_destroy(c2);

    /* Attention DP multiplies KV capacity; experts stay sharded. */
    l = layout(1, 1);
    l.dp = 8;
    l.ep = 8;
    l.dtype = MODEL_DTYPE_FP8;
    c = make("qwen3-235b-a22b", "h100-sxm", l);
    l = layout(8, 1);
    l.ep = 8;
    l.dtype = MODEL_DTYPE_FP8;
    c2 = make("qwen3-235b-a22b", "h100-sxm", l);
    if (c && c2) {
        CHECK(model_cost_gpus(c) == 8);
        int64_t k1 = 0, k2 = 0;
        CHECK(model_cost_kv_capacity_tokens(c, 0.9, 2e9, &k1, &e) == 0);
        CHECK(model_cost_kv_capacity_tokens(c2, 0.9, 2e9, &k2, &e) == 0);
        /* 4 KV heads: tp=8 stores each twice; dp=8 stores every head once
         * per request, so it holds more tokens despite replicating the
         * attention weights. */
        CHECK(k1 > k2 && k2 > 0);
    }
    model_cost_destroy(c);
    model_cost_destroy(c2);
}

/* Perf-db rows replace the roofline where they cover an op (source db),
 * fall back to the fitted model off the grid (db-fit), and leave other ops alone. */
static void test_perf_db(void)
{
    char path[] = "/tmp/test_cost_db_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(path);
    calib_db *db = NULL;
    sim_err e = {""};
    CHECK_MSG(calib_db_open(path, CALIB_DB_CREATE, &db, &e) == 0, "%s", e.msg);
    if (!db) return;
    int64_t gid = test_perfdb_h100(db);
    /* qkv_proj of Qwen3-32B at tp=8: n = (8+2)*128 = 1280, k = 5120; m on a grid. */
    const int64_t ms[] = {1, 16, 256, 4096};
    for (int i = 0; i < 4; i++) test_perfdb_gemm(db, gid, ms[i], 1280, 5120, 20e-6 * (1 + ms[i] / 256.0));
    model_cost *c = make("qwen3-32b", "h100-sxm", layout(8, 1));
    if (c) {
        CHECK(model_cost_set_db(c, db, NULL, &e) == 0);
        model_op ops[128];
        int32_t n = 0;
        model_iter_cost r;
        model_batch d = {0, NULL, 16, 16 * 1000, 0};
        double t = model_cost_breakdown(c, &d, ops, 128, &n, &r);
        const model_op *q = test_find_op(ops, n, "qkv_proj"), *o = test_find_op(ops, n, "o_proj"),
                       *rp = test_find_op(ops, n, "rope_kv_write");
        CHECK(q && q->source == MODEL_SRC_DB);
        if (q) CHECK_NEAR(q->time_s, 64 * 20e-6 * (1 + 16 / 256.0), 1e-12);
        /* Other GEMM shapes lie outside the (m) grid: scaled from the nearest
         * point; ops without perf-db keys stay roofline. */
        CHECK(o && o->source == MODEL_SRC_DB_FIT);
        CHECK(rp && rp->source == MODEL_SRC_ROOFLINE);
        CHECK(!strcmp(r.source, "db"));
        CHECK(model_cost_iteration(c, &d, NULL) == t);
        /* Beyond the grid: scaled from the nearest point (m = 4096). */
        model_chunk big = {8192, 0};
        model_batch pb = {1, &big, 0, 0, 0};
        model_cost_breakdown(c, &pb, ops, 128, &n, &r);
        q = test_find_op(ops, n, "qkv_proj");
        CHECK(q && q->source == MODEL_SRC_DB_FIT);
        if (q) CHECK(q->time_s > 64 * 20e-6 * 17 && q->time_s < 64 * 20e-6 * 17 * 2.2);
        CHECK(model_cost_set_db(c, NULL, NULL, &e) == 0);
        model_cost_breakdown(c, &d, ops, 128, &n, &r);
        CHECK(!strcmp(r.source, "roofline"));
        CHECK(model_cost_set_db(c, db, "b200", &e) == SIM_EINVAL);
    }
    model_cost_destroy(c);
    calib_db_close(db);
    unlink(path);
}

/* An iteration with a prefill chunk runs eagerly: it lasts at least its
 * launches x eager_launch_s (shown as op eager_host); decode-only iterations
 * (CUDA graphs) and iterations whose GPU time is longer are unchanged. */
static void test_eager_launch(void)
{
    model_layout l = layout(8, 1);
    l.ep = 8;
    model_cost *base = make("qwen3-235b-a22b", "h100-sxm", l);
    l.eager_launch_s = 1.0; /* absurd on purpose: host time = launches seconds */
    model_cost *slow = make("qwen3-235b-a22b", "h100-sxm", l);
    l.eager_launch_s = 1e-12;
    model_cost *tiny = make("qwen3-235b-a22b", "h100-sxm", l);
    if (!base || !slow || !tiny) goto done;
    model_chunk ch = {512, 0};
    model_batch pre = {1, &ch, 4, 4 * 1000, 0};
    model_iter_cost rb, rs;
    double tb = model_cost_iteration(base, &pre, &rb), ts = model_cost_iteration(slow, &pre, &rs);
    /* host = launches × 1 s replaces the GPU time: total − framework
     * overhead = a whole number of launches. */
    double host = ts - rb.overhead_s;
    CHECK(host > 94 * 10);                  /* ≥ 10 launches per layer over 94 layers */
    CHECK_NEAR(host, floor(host + 0.5), 1e-6);
    CHECK_NEAR(rs.gemm_s, rb.gemm_s, 1e-12); /* the op times themselves are unchanged */
    CHECK_NEAR(model_cost_iteration(tiny, &pre, NULL), tb, 1e-12);
    CHECK_NEAR(decode(slow, 16, 2000, NULL), decode(base, 16, 2000, NULL), 1e-12);
    model_op ops[256];
    int32_t n = 0;
    model_cost_breakdown(slow, &pre, ops, 256, &n, NULL);
    int found = 0;
    for (int32_t i = 0; i < n && i < 256; i++) found |= !strcmp(ops[i].name, "eager_host");
    CHECK(found);
done:
    model_cost_destroy(base);
    model_cost_destroy(slow);
    model_cost_destroy(tiny);
}

/* eager_serial: the fraction s of the shorter of an eager iteration's host
 * launch time H (launches x eager_launch_s) and its device time D that
 * does not overlap the longer. By hand, with framework overhead o:
 * max(H, D) + s·min(H, D) + o. The launch count n comes from a 1 s launch
 * cost (H = n seconds, far beyond D), then H is set to D/2 and 2·D. */
static void test_eager_serial(void)
{
    model_layout l = layout(8, 1);
    l.ep = 8;
    model_cost *base = make("qwen3-235b-a22b", "h100-sxm", l);
    l.eager_launch_s = 1.0;
    model_cost *count = make("qwen3-235b-a22b", "h100-sxm", l);
    model_cost *c[6] = {0};
    if (!base || !count) goto done;
    model_chunk ch = {2048, 0};
    model_batch pre = {1, &ch, 0, 0, 0};
    model_iter_cost rb;
    double tb = model_cost_iteration(base, &pre, &rb);
    const double o = rb.overhead_s, dev = rb.gemm_s + rb.attn_s + rb.comm_s + rb.other_s;
    CHECK_NEAR(tb, dev + o, 1e-12);
    const double n = floor(model_cost_iteration(count, &pre, NULL) - o + 0.5);
    CHECK(n > 94 * 10);
    /* {H/D, s, expected (total - o) / D} */
    const double cases[6][3] = {{0.5, 0, 1.0}, {0.5, 0.5, 1.25}, {0.5, 1, 1.5},
                                {2.0, 0, 2.0}, {2.0, 0.5, 2.5}, {2.0, 1, 3.0}};
    for (int i = 0; i < 6; i++) {
        l.eager_launch_s = cases[i][0] * dev / n;
        l.eager_serial = cases[i][1];
        c[i] = make("qwen3-235b-a22b", "h100-sxm", l);
        if (!c[i]) goto done;
        model_iter_cost r;
        double t = model_cost_iteration(c[i], &pre, &r);
        CHECK_NEAR((t - o) / dev, cases[i][2], 1e-9);
        CHECK_NEAR(r.gemm_s, rb.gemm_s, 1e-15); /* the op times themselves are unchanged */
        /* decode-only steps replay a CUDA graph: no eager term at any s */
        CHECK_NEAR(decode(c[i], 16, 2000, NULL), decode(base, 16, 2000, NULL), 1e-12);
    }
done:
    model_cost_destroy(base);
    model_cost_destroy(count);
    for (int i = 0; i < 6; i++) model_cost_destroy(c[i]);
}

/* A chunked delta-rule prefill (fla's chunk_gated_delta_rule, as the
 * engines run Qwen3.5's Gated DeltaNet layers) is 8 kernels: L2 norm of q
 * and of k, gate cumsum, scaled K·Kᵀ, triangular solve, W/U recompute,
 * chunk state pass, output. Priced by the roofline (no op model, no
 * tables), a 1-token prefill of it is latency bound: per layer its 8
 * launch floors plus a roofline under a microsecond (the state read and
 * written once, 2 x 8 heads x 128 x 128 fp32 = 1 MB at TP 8). Under the
 * eager host bound each of the 8 is a launch of the host's: at 1 s a
 * launch, the 45 GDN layers' prefill kernels count 45 x 8 seconds. */
static void test_gdn_prefill_launches(void)
{
    model_layout l = layout(8, 1);
    model_cost *base = make("Qwen/Qwen3.5-397B-A17B", "b200", l);
    l.eager_launch_s = 1.0;
    model_cost *slow = make("Qwen/Qwen3.5-397B-A17B", "b200", l);
    model_gpu g;
    sim_err e = {""};
    CHECK(model_catalog_gpu("b200", &g, &e) == 0);
    if (!base || !slow) goto done;
    model_chunk one = {1, 0};
    model_batch pre = {1, &one, 0, 0, 0};
    model_op ops[256];
    const model_op *d = test_breakdown_op(base, &pre, ops, 256, "gdn_prefill");
    CHECK(d != NULL);
    if (d) {
        CHECK(d->count == 45);
        CHECK(d->bound == MODEL_BOUND_LATENCY);
        double per = d->time_s / d->count;
        CHECK_MSG(per >= 8 * g.launch_s && per < 8 * g.launch_s + 1e-6, "gdn_prefill %.3g s a layer, launch %.3g s",
                  per, g.launch_s);
    }
    /* The host launches: a whole number of seconds, 45 x 8 of them the
     * delta rule's, so at least 45 x (8 + in_proj, conv, norm, out_proj). */
    model_iter_cost rb;
    model_cost_iteration(base, &pre, &rb);
    double host = model_cost_iteration(slow, &pre, NULL) - rb.overhead_s;
    CHECK_NEAR(host, floor(host + 0.5), 1e-6);
    CHECK(host >= 45 * (8 + 4));
done:
    model_cost_destroy(base);
    model_cost_destroy(slow);
}

/* MiniMax-M2's QK norm runs over all heads at once (qk_norm_type
 * per_layer): under TP each attention layer all-reduces every token's two
 * fp32 variances, 8 bytes a token. By hand for 16 decode tokens at TP 4:
 * 62 all-reduces of 128 bytes, and a norm reading and writing q and k,
 * 16 x (48 + 8) / 4 heads x 128 x 2 x 2 bytes = 114,688 bytes a layer
 * (the op's figures are its 62 layers' sums). At
 * TP 1 the norm stays and the all-reduce goes; Qwen3-32B (per-head QK
 * norm, which the engines fuse into RoPE) has neither. */
static void test_qk_norm_layer(void)
{
    model_cost *tp4 = make("MiniMaxAI/MiniMax-M2.5", "b200", layout(4, 1));
    model_cost *tp1 = make("MiniMaxAI/MiniMax-M2.5", "b200", layout(1, 1));
    model_cost *qwen = make("qwen3-32b", "b200", layout(4, 1));
    if (!tp4 || !tp1 || !qwen) goto done;
    model_batch dec = {0, NULL, 16, 16 * 1024, 0};
    model_op ops[256];
    const model_op *ar = test_breakdown_op(tp4, &dec, ops, 256, "tp_reduce_qk_norm");
    CHECK(ar != NULL && ar->count == 62 && ar->time_s > 0);
    if (ar) CHECK_MSG(ar->bytes == 62 * 16 * 8.0, "all-reduce bytes %g", ar->bytes);
    const model_op *nm = test_breakdown_op(tp4, &dec, ops, 256, "qk_norm");
    CHECK(nm != NULL && nm->count == 62);
    if (nm) CHECK_NEAR(nm->bytes, 62 * 16 * (48 + 8) / 4.0 * 128 * 2 * 2, 1e-6);
    CHECK(test_breakdown_op(tp1, &dec, ops, 256, "tp_reduce_qk_norm") == NULL);
    CHECK(test_breakdown_op(tp1, &dec, ops, 256, "qk_norm") != NULL);
    CHECK(test_breakdown_op(qwen, &dec, ops, 256, "qk_norm") == NULL);
    CHECK(test_breakdown_op(qwen, &dec, ops, 256, "tp_reduce_qk_norm") == NULL);
done:
    model_cost_destroy(tp4);
    model_cost_destroy(tp1);
    model_cost_destroy(qwen);
}

/* parallel.ar_norm_fusion: under TP each all-reduce also applies the
 * residual add and the next RMSNorm. For Llama-3.1-70B at TP 4 the 80
 * layers' 159 norms after an all-reduce (79 input norms, 80 post norms)
 * keep their traffic but lose their kernels and launch floors: the
 * first input norm stays an op of its own, the decode step gets faster by
 * at most 159 launch floors (0.32 ms of 8.3 ms here, 2 us a norm: an
 * element-wise op's floor), and the prefill by at most that much (its
 * norms are bandwidth-bound). At TP 1 and with expert parallelism nothing fuses. */
static void test_ar_norm_fusion(void)
{
    model_layout l = layout(4, 1);
    model_cost *plain = make("llama-3.1-70b", "b200", l);
    l.ar_norm_fusion = 1;
    model_cost *fused = make("llama-3.1-70b", "b200", l);
    model_cost *tp1 = make("llama-3.1-70b", "b200", layout(1, 1));
    model_layout l1 = layout(1, 1);
    l1.ar_norm_fusion = 1;
    model_cost *tp1f = make("llama-3.1-70b", "b200", l1);
    model_gpu g;
    if (!plain || !fused || !tp1 || !tp1f || test_gpu_spec("b200", &g)) goto done;
    model_batch dec = {0, NULL, 8, 8 * 1024, 0};
    model_op ops[256];
    const model_op *in = test_breakdown_op(fused, &dec, ops, 256, "input_norm");
    CHECK(in != NULL && in->count == 1);
    CHECK(test_breakdown_op(fused, &dec, ops, 256, "post_norm") == NULL);
    const model_op *pf = test_breakdown_op(fused, &dec, ops, 256, "post_norm_fused");
    CHECK(pf != NULL && pf->count == 80);
    double t_plain = model_cost_iteration(plain, &dec, NULL), t_fused = model_cost_iteration(fused, &dec, NULL);
    CHECK_MSG(t_plain - t_fused > 50 * g.launch_s && t_plain - t_fused <= 159 * g.launch_s + 1e-6,
              "decode %.4g -> %.4g s, launch floor %.3g s", t_plain, t_fused, g.launch_s);
    model_chunk ch = {4096, 0};
    model_batch pre = {1, &ch, 0, 0, 0};
    double p_plain = model_cost_iteration(plain, &pre, NULL), p_fused = model_cost_iteration(fused, &pre, NULL);
    CHECK(p_fused < p_plain && p_plain - p_fused <= 159 * g.launch_s + 1e-6);
    CHECK(model_cost_iteration(tp1, &dec, NULL) == model_cost_iteration(tp1f, &dec, NULL));
done:
    model_cost_destroy(plain);
    model_cost_destroy(fused);
    model_cost_destroy(tp1);
    model_cost_destroy(tp1f);
}

/* Async scheduling (host_overlap): the per-request host work overlaps the
 * iteration's device time. By hand, for a decode step of n requests with
 * device time D (the step's time without host work), per-iteration cost o
 * and per-request cost q: synchronous D + o + n·q; overlapped
 * D + o + max(0, n·q − D). */
static void test_host_overlap(void)
{
    model_layout l = layout(1, 1);
    l.overhead_s = 1.5e-3;
    l.overhead_per_seq_s = 50e-6;
    model_cost *sync = make("llama-3.1-8b", "h100-sxm", l);
    l.host_overlap = 1;
    model_cost *async = make("llama-3.1-8b", "h100-sxm", l);
    l.overhead_per_seq_s = 10.0; /* absurd on purpose: host work far beyond the GPU's */
    model_cost *slow = make("llama-3.1-8b", "h100-sxm", l);
    if (!sync || !async || !slow) goto done;
    model_iter_cost rs, ra, rw;
    const int n = 64;
    double ts = decode(sync, n, 2000, &rs), ta = decode(async, n, 2000, &ra), tw = decode(slow, n, 2000, &rw);
    double dev = rs.gemm_s + rs.attn_s + rs.comm_s + rs.other_s;
    CHECK(dev > n * 50e-6); /* this step's device time covers the 3.2 ms of per-request work */
    CHECK_NEAR(ts, dev + 1.5e-3 + n * 50e-6, 1e-12);
    CHECK_NEAR(ta, dev + 1.5e-3, 1e-12);       /* hidden: only the per-iteration part adds */
    CHECK_NEAR(ra.overhead_s, 1.5e-3, 1e-12);
    CHECK_NEAR(tw, 1.5e-3 + n * 10.0, 1e-9);   /* host-bound: the host's time, the GPU's inside it */
    CHECK_NEAR(rw.gemm_s, rs.gemm_s, 1e-15);   /* the op times themselves are unchanged */
done:
    model_cost_destroy(sync);
    model_cost_destroy(async);
    model_cost_destroy(slow);
}

static const test_case cases[] = {
    {"kv_bytes", test_kv_bytes},
    {"hand_ops", test_hand_ops},
    {"breakdown_agrees", test_breakdown_agrees},
    {"physics", test_physics},
    {"perf_db", test_perf_db},
    {"layouts", test_layouts},
    {"memory", test_memory},
    {"monotonic", test_monotonic},
    {"fidelity", test_fidelity},
    {"eager_launch", test_eager_launch},
    {"host_overlap", test_host_overlap},
    {"eager_serial", test_eager_serial},
    {"gdn_prefill_launches", test_gdn_prefill_launches},
    {"qk_norm_layer", test_qk_norm_layer},
    {"ar_norm_fusion", test_ar_norm_fusion},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(src_dir, sizeof src_dir, "%s", test_src_dir());
    return test_run("test_cost", cases);
}
