/* test_cost — the roofline cost model: hand-computed FLOPs/bytes, layout
 * checks, memory, monotonicity, and an end-to-end sanity check of decode
 * TPOT against measured Qwen3-32B deployments on H100 (e2e-dev.csv rows
 * copied to tests/data/models/qwen3-32b-h100-e2e.csv). */
#include "model_cost.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (model_catalog_model(model, &m, &e) || model_catalog_gpu(gpu, &g, &e) || model_cost_create(&m, &g, &l, &c, &e))
        fprintf(stderr, "make %s on %s: %s\n", model, gpu, e.msg);
    return c;
}

static double decode(const model_cost *c, int n, int64_t ctx_each, model_iter_cost *r)
{
    model_batch b = {0, NULL, n, (int64_t)n * ctx_each};
    return model_cost_iteration(c, &b, r);
}

static double prefill(const model_cost *c, int tokens, int cached, model_iter_cost *r)
{
    model_chunk ch = {tokens, cached};
    model_batch b = {1, &ch, 0, 0};
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

/* FLOPs and bytes against hand computation for Llama-3.1-8B on one H100. */
static void test_hand_flops(void)
{
    model_gpu g;
    sim_err e;
    model_catalog_gpu("h100-sxm", &g, &e);
    model_cost *c = make("llama-3.1-8b", "h100-sxm", layout(1, 1));
    if (!c) return;
    const double h = 4096, layer = h * (4096 + 1024 + 1024 + 4096) + 3 * h * 14336;
    const double norms = 2 * h * 32 * 2; /* bytes */
    const double lm = 128256.0 * h;
    const double bw = g.hbm_bw * g.eff_mem, peak = g.flops_bf16 * g.eff_gemm, pa = g.flops_bf16 * g.eff_attn;
    model_iter_cost r;

    /* Prefill 4096 tokens, nothing cached: compute-bound GEMMs, one sampled row. */
    prefill(c, 4096, 0, &r);
    double gemm = 2.0 * 4096 * 32 * layer / peak + lm * 2 / bw;
    CHECK_NEAR(r.gemm_s / gemm, 1.0, 1e-9);
    double attn = 4.0 * 32 * 128 * 4096 * (0 + 2048.0) * 32 / pa;
    CHECK_NEAR(r.attn_s / attn, 1.0, 1e-9);
    CHECK(r.comm_s == 0);
    CHECK(!strcmp(r.source, "roofline"));
    CHECK_NEAR(r.total_s, r.gemm_s + r.attn_s + r.comm_s + r.other_s + r.overhead_s, 1e-15);

    /* Decode 8 requests of 1000 context: weights and KV streamed. */
    decode(c, 8, 1000, &r);
    gemm = (32 * layer * 2 + norms) / bw + lm * 2 / bw;
    CHECK_NEAR(r.gemm_s / gemm, 1.0, 1e-9);
    attn = 8000.0 * 131072 / bw;
    CHECK_NEAR(r.attn_s / attn, 1.0, 1e-9);
    /* Cached context adds attention work to a prefill chunk. */
    model_iter_cost r2;
    prefill(c, 512, 0, &r);
    prefill(c, 512, 8192, &r2);
    CHECK(r2.attn_s > 5 * r.attn_s);
    CHECK_NEAR(r2.gemm_s, r.gemm_s, 1e-12);
    model_cost_destroy(c);

    /* MoE decode of one token reads top_k = 2 of Mixtral's 8 experts. */
    c = make("mixtral-8x7b", "h100-sxm", layout(1, 1));
    if (!c) return;
    const double attn_p = h * (4096 + 1024 + 1024 + 4096), expert = 3 * h * 14336, router = h * 8;
    decode(c, 1, 100, &r);
    gemm = (32 * attn_p * 2 + norms) / bw + 32 * (2 * expert * 2 + router * 2) / bw + 32000.0 * h * 2 / bw;
    CHECK_NEAR(r.gemm_s / gemm, 1.0, 1e-9);
    /* 64 tokens touch all 8 experts: E·(1−(3/4)^64) ≈ 8. */
    decode(c, 64, 100, &r2);
    double all = (32 * attn_p * 2 + norms) / bw + 32 * (8 * expert * 2 + router * 2) / bw + 32000.0 * h * 2 / bw;
    CHECK_NEAR(r2.gemm_s / all, 1.0, 1e-6);
    model_cost_destroy(c);
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
    l.dtype = MODEL_DTYPE_FP8;
    CHECK(model_cost_create(&m, &a100, &l, &c, &e) == SIM_ENOTSUP);
    CHECK_CONTAINS(e.msg, "a100-sxm-80g has no FP8");
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
    CHECK_CONTAINS(e.msg, "llama-3.1-70b bf16 weights need 141.1 GB per GPU at tp=1 pp=1 but h100-sxm has");
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
    model_batch empty = {0, NULL, 0, 0};
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
    model_batch mixed = {1, &ch, bs - 1, (int64_t)(bs - 1) * ctx};
    double extra = model_cost_iteration(c, &mixed, NULL) - decode(c, bs - 1, ctx, NULL);
    return d + (double)bs / osl * extra;
}

static void test_fidelity(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/models/qwen3-32b-h100-e2e.csv", src_dir);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "%s", path);
    if (!f) return;
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
        model_batch b16 = {16, sixteen, 0, 0};
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

int main(int argc, char **argv)
{
    snprintf(src_dir, sizeof src_dir, "%s", argc > 2 ? argv[2] : "..");
    test_kv_bytes();
    test_hand_flops();
    test_layouts();
    test_memory();
    test_monotonic();
    test_fidelity();
    return test_finish("test_cost");
}
