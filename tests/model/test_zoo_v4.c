/* test_zoo_v4 — DeepSeek-V4 as its shipped configs describe it: the layer
 * kinds (compressed sparse, heavily compressed and window-only attention,
 * hash-routed MoE), the grouped low-rank output projection and the
 * hyper-connections; their parameters, KV and per-sequence bytes; the ops
 * the cost model prices for them; `model show`, `predict` and a scenario
 * that simulates end to end. */
#include "model_catalog.h"
#include "model_cost.h"
#include "model_hf.h"
#include "model_layout.h"
#include "model_dtype.h"
#include "model_show.h"
#include "model_spec.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *servesim_bin;
static char src_dir[1024];

/* Every V4 config: the kinds per layer from compress_ratios (the entry
 * after the last layer is the MTP layer's), the published sizes (V4-Flash
 * 284 B total / 13 B active, V4-Pro 1.6 T / 49 B; DeepSeek counts active
 * without the embedding), and the repacks agree with the originals. */
static void test_kinds_and_sizes(void)
{
    static const struct {
        const char *id;
        int32_t layers, csa, hca, swa, o_groups, heads;
        double total, active;
    } ref[] = {
        {"deepseek-ai/DeepSeek-V4-Flash", 43, 21, 20, 2, 8, 64, 284e9, 13e9},
        {"nvidia/DeepSeek-V4-Flash-NVFP4", 43, 21, 20, 2, 8, 64, 284e9, 13e9},
        {"sgl-project/DeepSeek-V4-Flash-FP8", 43, 21, 20, 2, 8, 64, 284e9, 13e9},
        {"deepseek-ai/DeepSeek-V4-Pro", 61, 30, 31, 0, 16, 128, 1.6e12, 49e9},
        {"nvidia/DeepSeek-V4-Pro-NVFP4", 61, 30, 31, 0, 16, 128, 1.6e12, 49e9},
        {"sgl-project/DeepSeek-V4-Pro-FP8", 61, 30, 31, 0, 16, 128, 1.6e12, 49e9},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        model_spec m = test_model_spec(ref[i].id);
        CHECK_MSG(m.comp_attn && m.layers == ref[i].layers && m.csa_layers == ref[i].csa &&
                      m.hca_layers == ref[i].hca && m.sliding_layers == ref[i].swa,
                  "%s: %d layers, %d CSA %d HCA %d window-only", ref[i].id, m.layers, m.csa_layers, m.hca_layers,
                  m.sliding_layers);
        CHECK(m.csa_ratio == 4 && m.hca_ratio == 128 && m.sliding_window == 128 && m.index_topk > 0);
        CHECK(m.o_groups == ref[i].o_groups && m.o_lora_rank == 1024 && m.hc_mult == 4 && m.hash_layers == 3);
        CHECK(m.heads == ref[i].heads && m.kv_heads == 1 && m.head_dim == 512 && m.moe_layers == m.layers);
        CHECK_MSG(fabs(m.params / ref[i].total - 1) < 0.03, "%s total %.4g vs %.4g", ref[i].id, m.params,
                  ref[i].total);
        double active = m.active_params - (double)m.vocab * m.hidden;
        CHECK_MSG(fabs(active / ref[i].active - 1) < 0.03, "%s active %.4g vs %.4g", ref[i].id, active,
                  ref[i].active);
        model_spec base =
            test_model_spec(ref[i].layers == 43 ? "deepseek-ai/DeepSeek-V4-Flash" : "deepseek-ai/DeepSeek-V4-Pro");
        CHECK_MSG(m.params == base.params, "%s params differ from the original", ref[i].id);
    }
    /* The parameter count by parts (V4-Flash, one CSA layer): q_a + norm,
     * q_b, K=V + norm, grouped O, sinks; CSA's compressor and indexer. */
    model_spec f = test_model_spec("deepseek-ai/DeepSeek-V4-Flash");
    model_spec_parts p;
    model_spec_parts_get(&f, &p);
    const double h = 4096, hd = 512;
    CHECK_NEAR(p.attn, h * 1024 + 1024 + 1024 * 64 * hd + h * hd + hd + 64 * hd * 1024 + 8 * 1024 * h + 64, 0.5);
    CHECK_NEAR(p.comp_hca, 2 * h * hd + 128 * hd + hd, 0.5);
    CHECK_NEAR(p.indexer, 2 * h * 2 * 128 + 4 * 2 * 128 + 128 + 1024 * 64 * 128 + h * 64, 0.5);
    CHECK_NEAR(p.comp_csa, 2 * h * 2 * hd + 4 * 2 * hd + hd + p.indexer, 0.5);
    CHECK_NEAR(p.hc, 2 * ((2 + 4) * 4 * 4 * h + 24 + 3), 0.5);
    /* Checkpoint formats: FP4 experts (expert_dtype fp4) beside FP8 blocks;
     * the FP8 repack all FP8; the NVFP4 one NVFP4 experts. */
    CHECK(f.wdtype_expert == MODEL_DTYPE_MXFP4 && f.wdtype_attn == MODEL_DTYPE_FP8_BLOCK);
    CHECK_CONTAINS(f.notes, "expert_dtype fp4");
    CHECK(test_model_spec("sgl-project/DeepSeek-V4-Flash-FP8").wdtype_expert == MODEL_DTYPE_FP8_BLOCK);
    CHECK(test_model_spec("nvidia/DeepSeek-V4-Flash-NVFP4").wdtype_expert == MODEL_DTYPE_NVFP4);
    double w = model_spec_weight_bytes(&f, -1, NULL);
    CHECK_MSG(w > 150e9 && w < 165e9, "V4-Flash weights %.4g", w);
}

/* KV per token: only the compressed entries grow with the context (one
 * head_dim entry per 4 tokens plus the indexer's fp8 key on CSA layers, one
 * per 128 on HCA layers); the windows and pending compressor tokens are
 * per-sequence state. */
static void test_kv_and_state(void)
{
    model_spec f = test_model_spec("deepseek-ai/DeepSeek-V4-Flash");
    const double csa = (512 * 2.0 + 128 * (1 + 4.0 / 128)) / 4, hca = 512 * 2.0 / 128;
    CHECK_NEAR(model_spec_csa_kv_bytes(&f, 2.0), csa, 1e-9);
    CHECK_NEAR(model_spec_hca_kv_bytes(&f, 2.0), hca, 1e-9);
    CHECK_NEAR(model_spec_kv_bytes_per_token(&f, 2.0), 21 * csa + 20 * hca, 1e-9);
    /* About a tenth of DeepSeek-V3.2's (the model card's claim for V4-Pro). */
    model_spec pro = test_model_spec("deepseek-ai/DeepSeek-V4-Pro"), v32 = test_model_spec("deepseek-ai/DeepSeek-V3.2");
    double ratio = model_spec_kv_bytes_per_token(&pro, 2.0) / model_spec_kv_bytes_per_token(&v32, 2.0);
    CHECK_MSG(ratio > 0.08 && ratio < 0.14, "V4-Pro / V3.2 KV %.3f", ratio);
    double window = 128 * 512 * 2.0;
    CHECK_NEAR(model_spec_window_state_bytes(&f, 0), window, 1e-9);
    CHECK(model_spec_window_state_bytes(&f, 2) > window && model_spec_window_state_bytes(&f, 1) > window);
    CHECK_NEAR(model_spec_state_bytes_per_seq(&f),
               2 * model_spec_window_state_bytes(&f, 0) + 21 * model_spec_window_state_bytes(&f, 1) +
                   20 * model_spec_window_state_bytes(&f, 2),
               1e-6);
    /* Models without compressed attention are unchanged. */
    CHECK(model_spec_csa_kv_bytes(&v32, 2.0) == 0 && model_spec_window_state_bytes(&v32, 0) == 0);
}

/* The cost model prices V4's own ops: each layer kind's attention over its
 * window and compressed entries, the compressors and the indexer, the
 * grouped O, the hyper-connections; on the roofline where no table
 * measures them. */
static void test_ops(void)
{
    sim_err e = {""};
    model_gpu b200;
    CHECK(model_catalog_gpu("b200", &b200, &e) == 0);
    model_layout l;
    memset(&l, 0, sizeof l);
    l.tp = 4;
    l.pp = 1;
    l.ep = 4;
    l.dtype_checkpoint = 1;
    snprintf(l.op_backend, sizeof l.op_backend, "sglang");
    model_spec f = test_model_spec("deepseek-ai/DeepSeek-V4-Flash");
    model_cost *c = NULL;
    REQUIRE_MSG(model_cost_create(&f, &b200, &l, &c, &e) == 0, "%s", e.msg);
    model_op ops[160];
    int32_t n = 0;
    double t_ctx[2] = {0, 0}, csa_ctx[2] = {0, 0}, hca_ctx[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
        model_batch dec = {0, NULL, 64, 64 * (int64_t)(j ? 64000 : 16000), 0};
        t_ctx[j] = model_cost_breakdown(c, &dec, ops, 160, &n, NULL);
        REQUIRE(n <= 160);
        static const char *const want[] = {"q_a_proj", "q_b_proj", "kv_proj", "csa_compress_proj", "hca_compress_proj",
                                           "csa_index_q", "csa_indexer_decode", "csa_topk_decode", "attn_decode_sw",
                                           "attn_decode_csa", "attn_decode_hca", "o_a_proj_grouped", "o_b_proj",
                                           "hc_pre", "hc_post", "hc_head", "router", "experts_gate_up"};
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
            CHECK_MSG(test_find_op(ops, n, want[k]) != NULL, "no op %s", want[k]);
        /* No op of the MLA/GQA paths. */
        CHECK(!test_find_op(ops, n, "qkv_proj") && !test_find_op(ops, n, "o_proj") && !test_find_op(ops, n, "attn_decode_dsa"));
        const model_op *a = test_find_op(ops, n, "attn_decode_csa"), *hc = test_find_op(ops, n, "hca_compress_proj");
        if (a) {
            CHECK(a->count == 21 && a->source == MODEL_SRC_ROOFLINE);
            csa_ctx[j] = a->bytes;
        }
        if (hc) CHECK(hc->count == 20);
        if ((a = test_find_op(ops, n, "attn_decode_hca"))) hca_ctx[j] = a->bytes;
        if ((a = test_find_op(ops, n, "hc_pre"))) CHECK(a->count == 86 && a->source == MODEL_SRC_ROOFLINE);
        if ((a = test_find_op(ops, n, "attn_decode_sw"))) CHECK(a->count == 2);
    }
    /* Past 4·index_topk = 2048 tokens CSA reads index_topk entries plus the
     * window whatever the context; HCA grows by one entry per 128 tokens
     * (125 + 128 window keys at 16k, 500 + 128 at 64k). */
    CHECK_MSG(csa_ctx[0] > 0 && fabs(csa_ctx[1] / csa_ctx[0] - 1) < 1e-9, "CSA %g vs %g", csa_ctx[1], csa_ctx[0]);
    CHECK_MSG(hca_ctx[1] > 2.0 * hca_ctx[0], "HCA %g vs %g", hca_ctx[1], hca_ctx[0]);
    CHECK(t_ctx[1] > t_ctx[0]);
    /* Prefill: its own kinds too. */
    model_chunk ch = {4096, 2048};
    model_batch pre = {1, &ch, 0, 0, 0};
    model_cost_breakdown(c, &pre, ops, 160, &n, NULL);
    CHECK(test_find_op(ops, n, "attn_prefill_csa") && test_find_op(ops, n, "attn_prefill_hca") &&
          test_find_op(ops, n, "csa_indexer_prefill") && test_find_op(ops, n, "attn_prefill_sw"));
    /* Memory: the compressed KV on every rank (one K=V head), the windows
     * and pending tokens per running sequence. */
    CHECK_NEAR(model_cost_state_bytes_per_seq(c), model_spec_state_bytes_per_seq(&f), 1e-3);
    model_cost_destroy(c);
    /* Hash-routed layers: uniform load whatever expert_skew says (a fixed
     * token-id table), the learned ones skewed: two MoE classes, the hash
     * one priced as at expert_skew 0. */
    model_batch hdec = {0, NULL, 256, 256 * 4000, 0};
    double uniform_layer = 0;
    c = NULL;
    CHECK_MSG(model_cost_create(&f, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        model_cost_breakdown(c, &hdec, ops, 160, &n, NULL);
        const model_op *u = test_find_op(ops, n, "experts_gate_up");
        if (u) uniform_layer = u->time_s / u->count;
        model_cost_destroy(c);
    }
    l.expert_skew = 1.2;
    c = NULL;
    CHECK_MSG(model_cost_create(&f, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        model_cost_breakdown(c, &hdec, ops, 160, &n, NULL);
        double per_layer[2] = {0, 0};
        int classes = 0;
        for (int32_t i = 0; i < n && i < 160; i++)
            if (!strcmp(ops[i].name, "experts_gate_up") && classes < 2) {
                CHECK(ops[i].count == (classes ? 40 : 3));
                per_layer[classes++] = ops[i].time_s / ops[i].count;
            }
        CHECK_MSG(classes == 2 && uniform_layer > 0 && fabs(per_layer[0] / uniform_layer - 1) < 1e-12 &&
                      fabs(per_layer[1] / uniform_layer - 1) > 1e-3,
                  "%d classes, %g and %g vs uniform %g", classes, per_layer[0], per_layer[1], uniform_layer);
        model_cost_destroy(c);
    }
    l.expert_skew = 0;
    /* DCP and SP of the compressed attention are refused, not priced as something else. */
    l.dcp = 2;
    c = NULL;
    CHECK(model_cost_create(&f, &b200, &l, &c, &e) == SIM_ENOTSUP && c == NULL);
    CHECK_CONTAINS(e.msg, "not modelled");
    /* Pipeline stages pass the four hyper-connection streams. */
    l.dcp = 1;
    l.pp = 2;
    CHECK_MSG(model_cost_create(&f, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        model_batch dec = {0, NULL, 8, 8 * 1000, 0};
        model_cost_breakdown(c, &dec, ops, 160, &n, NULL);
        const model_op *s = test_find_op(ops, n, "pp_send");
        CHECK(s && fabs(s->bytes - 4.0 * 8 * 4096 * 2.0) < 1);
        model_cost_destroy(c);
    }
}

/* `model show` names the new kinds (text and JSON keys) and the CLI
 * predicts and runs a V4 scenario end to end. */
static void test_show_predict_run(void)
{
    model_spec f = test_model_spec("deepseek-ai/DeepSeek-V4-Flash");
    json_t *o = model_show_json(&f);
    REQUIRE(json_is_object(o));
    json_t *layers = json_object_get(o, "layers");
    CHECK(json_integer_value(json_object_get(layers, "compressed_sparse_attention")) == 21);
    CHECK(json_integer_value(json_object_get(layers, "heavily_compressed_attention")) == 20);
    CHECK(json_integer_value(json_object_get(layers, "sliding_window")) == 2);
    CHECK(json_integer_value(json_object_get(layers, "full_attention")) == 0);
    CHECK(json_integer_value(json_object_get(layers, "hash_moe")) == 3);
    CHECK(json_integer_value(json_object_get(o, "hyper_connections")) == 4);
    json_t *ca = json_object_get(o, "compressed_attention");
    CHECK(json_integer_value(json_object_get(ca, "o_groups")) == 8 &&
          json_integer_value(json_object_get(ca, "csa_ratio")) == 4 &&
          json_integer_value(json_object_get(ca, "hca_ratio")) == 128);
    CHECK_NEAR(json_real_value(json_object_get(o, "kv_bytes_per_token")), model_spec_kv_bytes_per_token(&f, 2.0), 1e-6);
    CHECK_NEAR(json_real_value(json_object_get(o, "total_params")), f.params, 1);
    json_decref(o);
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    model_show_text(&f, mf);
    fclose(mf);
    CHECK_CONTAINS(buf, "21 compressed sparse (1 KV entry per 4 tokens, top-512 by the indexer)");
    CHECK_CONTAINS(buf, "20 heavily compressed (1 per 128 tokens)");
    CHECK_CONTAINS(buf, "grouped low-rank: 8 groups of 8 heads, each to 1024");
    CHECK_CONTAINS(buf, "hyper-connections: 4 streams");
    CHECK_CONTAINS(buf, "first 3 MoE layers hash-routed");
    free(buf);

    char cmd[3000], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s predict --model deepseek-ai/DeepSeek-V4-Pro --gpu b200 --tp 8 --ep 8 --decode 32 "
             "--context 32000 --json", servesim_bin);
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "attn_decode_csa");
    CHECK_CONTAINS(out, "o_a_proj_grouped");
    free(out);
    out = NULL;
    char db[] = "/tmp/servesim-v4-XXXXXX";
    int fd = mkstemp(db);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/deepseek-v4-flash-b200.yaml --set workload.requests=60 "
             "--set output.db=%s --json", servesim_bin, src_dir, db);
    CHECK(test_sh(cmd, &out) == 0);
    unlink(db);
    json_error_t je;
    json_t *j = out ? json_loads(out, 0, &je) : NULL;
    CHECK_MSG(j != NULL, "run --json: %s", out ? out : "(none)");
    if (j) {
        char *s = json_dumps(j, 0);
        CHECK_CONTAINS(s, "\"requests_completed\": 60");
        free(s);
    }
    json_decref(j);
    free(out);
}

static const test_case cases[] = {
    {"kinds_and_sizes", test_kinds_and_sizes},
    {"kv_and_state", test_kv_and_state},
    {"ops", test_ops},
    {"show_predict_run", test_show_predict_run},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    servesim_bin = argc > 1 ? argv[1] : "servesim";
    snprintf(src_dir, sizeof src_dir, "%s", test_src_dir());
    return test_run("test_zoo_v4", cases);
}
