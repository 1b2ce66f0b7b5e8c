/* test_vision — vision towers from the shipped configs: the families read,
 * image and video token counts by each family's formula (model_vision.h)
 * worked by hand, towers refused with their reason, and the encoder pass
 * (model_cost_encode) against the tower's FLOPs counted by hand from the
 * config and priced over the roofline. */
#include "model_catalog.h"
#include "model_cost.h"
#include "model_vision.h"
#include "test_util.h"
#include "test_model_util.h"

static void test_families(void)
{
    model_spec q = test_model_spec("Qwen/Qwen3-VL-8B-Instruct");
    const model_vision *v = &q.vision;
    CHECK(v->family == MODEL_VISION_QWEN3_VL);
    CHECK(v->layers == 27 && v->hidden == 1152 && v->heads == 16 && v->head_dim == 72 && v->intermediate == 4304);
    CHECK(v->patch == 16 && v->merge == 2 && v->temporal_patch == 2 && v->in_channels == 3 && !v->gated);
    CHECK(v->mergers == 4 && v->merger_inter == 4608 && v->out_hidden == 4096); /* 3 DeepStack mergers */
    CHECK_CONTAINS(q.notes, "vision tower qwen3_vl");
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    CHECK(k.vision.family == MODEL_VISION_KIMI_K25 && k.vision.patch == 14 && k.vision.merge == 2);
    CHECK(k.vision.out_hidden == 7168 && k.vision.merger_inter == 4608 && k.vision.mergers == 1);
    model_spec g = test_model_spec("google/gemma-4-26B-A4B");
    CHECK(g.vision.family == MODEL_VISION_GEMMA4 && g.vision.gated && g.vision.merge == 3);
    CHECK(g.vision.max_tokens == 280 && g.vision.head_dim == 72 && g.vision.out_hidden == g.hidden);
    /* The Qwen3.5 family carries the same tower form (no DeepStack). */
    model_spec q35 = test_model_spec("Qwen/Qwen3.5-27B");
    CHECK(q35.vision.family == MODEL_VISION_QWEN3_VL);
    sim_err e = {""};
    CHECK(model_vision_check(&q, "workload.images", &e) == 0);
    /* Weights, bf16: Qwen3-VL-8B's patch embedding 1536 x 1152, 27 layers
     * of QKV 3·1152², O 1152², MLP 2·4304·1152, 4 mergers of 4608² +
     * 4096·4608: 573,272,064 parameters. */
    const double qp = 1536.0 * 1152 + 27 * (3.0 * 1152 * 1152 + 1152.0 * 1152 + 2.0 * 4304 * 1152) +
                      4 * (4608.0 * 4608 + 4096.0 * 4608);
    CHECK(qp == 573272064.0 && model_vision_weight_bytes(v) == 2 * qp);
    /* Gemma-4-26B-A4B: gated MLP 3·4304·1152 and one projection 2816 x 1152. */
    const double gp = 768.0 * 1152 + 27 * (4.0 * 1152 * 1152 + 3.0 * 4304 * 1152) + 2816.0 * 1152;
    CHECK(model_vision_weight_bytes(&g.vision) == 2 * gp);
    model_spec l = test_model_spec("llama-3.1-8b");
    CHECK(model_vision_weight_bytes(&l.vision) == 0);
}

static void test_refused(void)
{
    sim_err e = {""};
    model_spec l = test_model_spec("llama-3.1-8b");
    CHECK(l.vision.family == MODEL_VISION_NONE);
    CHECK(model_vision_check(&l, "workload.images", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "workload.images");
    CHECK_CONTAINS(e.msg, "no vision_config");
    model_spec mm = test_model_spec("nvidia/MiniMax-M3-NVFP4");
    CHECK(mm.vision.family == MODEL_VISION_UNSUPPORTED);
    CHECK(model_vision_check(&mm, "workload.images", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "clip_vision_model");
    CHECK_CONTAINS(mm.notes, "vision tower not priced");
    /* A Kimi tower whose merge is not sd2_tpool takes no video (the chunk
     * pooling is that merge's); neither does a Gemma tower without a
     * per-frame token budget. */
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    model_media_grid g;
    k.vision.video_chunk = 0;
    CHECK(model_vision_grid(&k.vision, 640, 480, 8, &g, "workload.images", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "workload.images: video inputs on the kimi_k25 tower");
    CHECK_CONTAINS(e.msg, "sd2_tpool");
    CHECK(model_vision_grid(&k.vision, 640, 480, 0, &g, "workload.images", &e) == 0); /* images still */
    model_spec gm = test_model_spec("google/gemma-4-26B-A4B");
    gm.vision.video_tokens = 0;
    CHECK(model_vision_grid(&gm.vision, 640, 480, 4, &g, "workload.images", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "gemma4");
    CHECK(model_vision_grid(&k.vision, 0, 480, 0, &g, "workload.images", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "width and height");
}

static void test_token_counts(void)
{
    sim_err e = {""};
    model_media_grid g;
    model_spec q = test_model_spec("Qwen/Qwen3-VL-8B-Instruct");
    /* f = 16 x 2 = 32: 768 and 1024 are multiples: 48 x 64 patches, / 2². */
    REQUIRE(model_vision_grid(&q.vision, 1024, 768, 0, &g, "x", &e) == 0);
    CHECK(g.t == 1 && g.h == 48 && g.w == 64 && g.patches == 3072 && g.tokens == 768 && g.seqs == 1 &&
          g.seq_len == 3072);
    /* 1000 x 700: nearest multiples of 32 are 992 and 704: 62 x 44 patches. */
    REQUIRE(model_vision_grid(&q.vision, 1000, 700, 0, &g, "x", &e) == 0);
    CHECK(g.h == 44 && g.w == 62 && g.patches == 2728 && g.tokens == 682);
    /* Video: 8 frames of 640 x 480 = ⌈8/2⌉ = 4 temporal patches of 30 x 40. */
    REQUIRE(model_vision_grid(&q.vision, 640, 480, 8, &g, "x", &e) == 0);
    CHECK(g.t == 4 && g.h == 30 && g.w == 40 && g.patches == 4800 && g.tokens == 1200 && g.seqs == 4 &&
          g.seq_len == 1200);
    REQUIRE(model_vision_grid(&q.vision, 640, 480, 7, &g, "x", &e) == 0); /* padded to 8 frames */
    CHECK(g.t == 4 && g.tokens == 1200);
    REQUIRE(model_vision_grid(&q.vision, 10, 10, 0, &g, "x", &e) == 0); /* at least one merged patch */
    CHECK(g.h == 2 && g.w == 2 && g.tokens == 1);
    /* Kimi-K2.5: sides padded up to multiples of 14 x 2 = 28: 784 x 1036. */
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    REQUIRE(model_vision_grid(&k.vision, 1024, 768, 0, &g, "x", &e) == 0);
    CHECK(g.h == 56 && g.w == 74 && g.patches == 4144 && g.tokens == 1036);
    /* Gemma-4: 280·3² patches of 16²: scale sqrt(645120 / 786432) =
     * 0.9057; 695.6 / 48 -> 14, 927.4 / 48 -> 19 pooled rows and columns.
     * The tower runs on the processor's 2,520 padded patches, one sequence. */
    model_spec gm = test_model_spec("google/gemma-4-26B-A4B");
    REQUIRE(model_vision_grid(&gm.vision, 1024, 768, 0, &g, "x", &e) == 0);
    CHECK(g.h == 42 && g.w == 57 && g.patches == 2520 && g.tokens == 266 && g.seqs == 1 && g.seq_len == 2520);
    /* Scaled up as well: sqrt(645120 / 10000) = 8.032; 803.2 / 48 -> 16. */
    REQUIRE(model_vision_grid(&gm.vision, 100, 100, 0, &g, "x", &e) == 0);
    CHECK(g.h == 48 && g.w == 48 && g.tokens == 256);
    REQUIRE(model_vision_grid(&gm.vision, 8000, 8000, 0, &g, "x", &e) == 0); /* 803.2 / 48 -> 16 each way */
    CHECK(g.h == 48 && g.w == 48 && g.tokens == 256);
    /* 3 x 900: 46.4 / 48 floors to 0 rows: one row of min(900 / 3, 280). */
    REQUIRE(model_vision_grid(&gm.vision, 900, 3, 0, &g, "x", &e) == 0);
    CHECK(g.h == 3 && g.w == 840 && g.tokens == 280);
}

static void test_video_counts(void)
{
    sim_err e = {""};
    model_media_grid g;
    /* Kimi-K2.5, 640 x 480 frames: padded to 644 x 504, 46 x 36 = 1,656
     * patches a frame, 23 x 18 = 414 tokens a chunk of 4 frames. */
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    CHECK(k.vision.video_chunk == 4);
    REQUIRE(model_vision_grid(&k.vision, 640, 480, 8, &g, "x", &e) == 0);
    CHECK(g.t == 8 && g.h == 36 && g.w == 46 && g.patches == 8 * 1656 && g.tokens == 2 * 414);
    CHECK(g.seqs == 2 && g.seq_len == 4 * 1656 && g.tail_len == 0);
    /* 10 frames: chunks of 4, 4 and 2 frames: 3 x 414 tokens; the tower
     * runs on all 10 frames, attending over 6,624, 6,624 and 3,312. */
    REQUIRE(model_vision_grid(&k.vision, 640, 480, 10, &g, "x", &e) == 0);
    CHECK(g.t == 10 && g.patches == 16560 && g.tokens == 1242);
    CHECK(g.seqs == 2 && g.seq_len == 6624 && g.tail_len == 3312);
    REQUIRE(model_vision_grid(&k.vision, 640, 480, 3, &g, "x", &e) == 0); /* one short chunk */
    CHECK(g.patches == 4968 && g.tokens == 414 && g.seqs == 1 && g.seq_len == 4968 && g.tail_len == 0);
    model_spec k26 = test_model_spec("nvidia/Kimi-K2.6-NVFP4");
    REQUIRE(model_vision_grid(&k26.vision, 640, 480, 16, &g, "x", &e) == 0);
    CHECK(g.tokens == 4 * 414);
    /* Gemma-4, 640 x 480 frames at 70 tokens each (the 26B config has no
     * video_seq_length: the processor's 70): sqrt(70·9·256 / 307200) =
     * 0.7246; 347.8 / 48 -> 7, 463.7 / 48 -> 9: 63 tokens a frame; each
     * frame one sequence of 630 padded patches. */
    model_spec gm = test_model_spec("google/gemma-4-26B-A4B");
    CHECK(gm.vision.video_tokens == 70);
    REQUIRE(model_vision_grid(&gm.vision, 640, 480, 16, &g, "x", &e) == 0);
    CHECK(g.t == 16 && g.h == 21 && g.w == 27 && g.tokens == 16 * 63);
    CHECK(g.seqs == 16 && g.seq_len == 630 && g.patches == 16 * 630 && g.tail_len == 0);
    model_spec g31 = test_model_spec("nvidia/Gemma-4-31B-IT-NVFP4"); /* video_seq_length: 70 */
    CHECK(g31.vision.video_tokens == 70);
    REQUIRE(model_vision_grid(&g31.vision, 640, 480, 16, &g, "x", &e) == 0);
    CHECK(g.tokens == 16 * 63);
    /* Qwen3-VL unchanged: one sequence per temporal patch, no tail. */
    model_spec q = test_model_spec("Qwen/Qwen3-VL-8B-Instruct");
    REQUIRE(model_vision_grid(&q.vision, 640, 480, 7, &g, "x", &e) == 0);
    CHECK(g.seqs == 4 && g.tail_len == 0);
}

/* The Qwen3-VL-8B tower's FLOPs for n images of grid g, from the config by hand. */
static void qwen_flops(int n, const model_media_grid *g, double *gemm, double *attn)
{
    const double P = (double)n * g->patches, V = (double)n * g->tokens, L = (double)g->seq_len;
    const double H = 1152, I = 4304, Ly = 27, Mi = 4 * H, out = 4096, mergers = 4;
    *gemm = 2 * P * H * (3 * 2 * 16 * 16) + Ly * (2 * P * 3 * H * H + 2 * P * H * H + 2 * 2 * P * I * H) +
            mergers * (2 * V * Mi * Mi + 2 * V * out * Mi);
    *attn = Ly * 4 * H * L * L * n * g->seqs;
}

/* One op over the roofline by hand: count × (max(FLOPs / peak, bytes / HBM)
 * + one launch); a GEMM m×n×k of bf16 weights and activations at the bf16
 * peak times its tile-wave efficiency (128² output tiles over the SMs). */
typedef struct {
    double peak, attn_peak, bw, launch, sms;
} roof;
static double gemm_t(const roof *r, double count, double m, double n, double k)
{
    double tiles = ceil(m / 128) * ceil(n / 128), waves = ceil(tiles / r->sms);
    double we = tiles > r->sms ? tiles / (waves * r->sms) : 1;
    double tc = 2 * m * n * k / (r->peak * we), tm = (n * k + m * k + m * n) * 2 / r->bw;
    return count * ((tc > tm ? tc : tm) + r->launch);
}
static double elem_t(const roof *r, double count, double bytes) { return count * (bytes / r->bw + r->launch); }

static void test_encoder_roofline(void)
{
    model_spec m = test_model_spec("Qwen/Qwen3-VL-8B-Instruct");
    model_gpu gpu;
    sim_err e = {""};
    REQUIRE(model_catalog_gpu("h100-sxm", &gpu, &e) == 0);
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16, .gpus_per_node = 8};
    model_cost *c = NULL;
    REQUIRE_MSG(model_cost_create(&m, &gpu, &l, &c, &e) == 0, "%s", e.msg);
    model_media_grid g;
    REQUIRE_OR(model_vision_grid(&m.vision, 1024, 768, 0, &g, "x", &e) == 0, model_cost_destroy(c); return);
    model_op ops[64];
    int32_t n_ops = 0;
    model_iter_cost ic;
    const double t4 = model_cost_encode(c, &m.vision, &g, 4, 1, ops, 64, &n_ops, &ic);
    REQUIRE_OR(n_ops > 10 && n_ops <= 64, model_cost_destroy(c); return);
    double fl = 0, fl_gemm = 0, fl_attn = 0, sum_t = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        fl += ops[i].flops;
        sum_t += ops[i].time_s;
        if (ops[i].cls == MODEL_OPC_GEMM) fl_gemm += ops[i].flops;
        if (ops[i].cls == MODEL_OPC_ATTN) fl_attn += ops[i].flops;
    }
    double hg, ha;
    qwen_flops(4, &g, &hg, &ha);
    CHECK_MSG(fabs(fl_gemm / hg - 1) < 1e-12, "GEMM FLOPs %.6g, by hand %.6g", fl_gemm, hg);
    CHECK_MSG(fabs(fl_attn / ha - 1) < 1e-12, "attention FLOPs %.6g, by hand %.6g", fl_attn, ha);
    CHECK(fabs(fl - hg - ha) < 1e-6 * fl); /* the elementwise ops move bytes only */
    CHECK_NEAR(sum_t, t4, 1e-12 * t4);
    CHECK(!strcmp(ic.source, "roofline"));
    /* Compute-bound: the FLOPs over the derated peaks (GEMMs at eff_gemm,
     * attention at eff_attn of the bf16 peak), plus what the tile waves,
     * the HBM-bound norms/activations and the launches add. */
    const double ideal = hg / (gpu.flops_bf16 * gpu.eff_gemm) + ha / (gpu.flops_bf16 * gpu.eff_attn);
    printf("Qwen3-VL-8B tower, 4 images 1024x768 on H100: %.3f TFLOP, %.3f ms (FLOPs over the roofline %.3f ms, "
           "%+.2f %%)\n", (hg + ha) / 1e12, t4 * 1e3, ideal * 1e3, 100 * (t4 / ideal - 1));
    CHECK(t4 >= ideal);
    /* Op by op by hand from the config: 12,288 patches (4 x 48 x 64) of
     * 3·2·16² values, 27 layers of width 1152, 16 heads of 72, MLP 4304;
     * 4 mergers over 3,072 merged tokens 4608 -> 4608 -> 4096. */
    const roof r = {gpu.flops_bf16 * gpu.eff_gemm, gpu.flops_bf16 * gpu.eff_attn, gpu.hbm_bw * gpu.eff_mem,
                    gpu.launch_s, gpu.sms};
    const double P = 4.0 * 3072, V = 4.0 * 768, H = 1152, I = 4304, Ly = 27, L = 3072;
    double hand = gemm_t(&r, 1, P, H, 1536);
    hand += elem_t(&r, 2 * Ly, 2 * P * H * 2);                          /* norm1, norm2 */
    hand += gemm_t(&r, Ly, P, 3 * H, H) + gemm_t(&r, Ly, P, H, H);      /* qkv, o_proj */
    const double at_c = 4 * H * L * L * 4 / r.attn_peak, at_m = 4 * 4 * L * H * 2 / r.bw;
    hand += Ly * ((at_c > at_m ? at_c : at_m) + r.launch);             /* attention, compute-bound */
    hand += gemm_t(&r, Ly, P, I, H) + elem_t(&r, Ly, 2 * P * I * 2) + gemm_t(&r, Ly, P, H, I); /* MLP */
    hand += elem_t(&r, 4, 2 * P * H * 2) + gemm_t(&r, 4, V, 4 * H, 4 * H) + elem_t(&r, 4, 2 * V * 4 * H * 2) +
            gemm_t(&r, 4, V, 4096, 4 * H);                              /* mergers */
    printf("op by op by hand: %.4f ms, model %.4f ms\n", hand * 1e3, t4 * 1e3);
    CHECK_MSG(fabs(t4 / hand - 1) < 1e-9, "encoder %.6f ms vs the roofline by hand %.6f ms", t4 * 1e3, hand * 1e3);
    /* Data-parallel over the instance's GPUs: 4 images on tp 2 = 2 per GPU. */
    const double t2 = model_cost_encode(c, &m.vision, &g, 2, 1, NULL, 0, NULL, NULL);
    CHECK_NEAR(model_cost_encode(c, &m.vision, &g, 4, 2, NULL, 0, NULL, NULL), t2, 1e-15);
    CHECK_NEAR(model_cost_encode(c, &m.vision, &g, 3, 2, NULL, 0, NULL, NULL), t2, 1e-15);
    CHECK(model_cost_encode(c, &m.vision, &g, 0, 1, NULL, 0, NULL, NULL) == 0);
    /* Busy seconds for the energy model: the FLOPs at the derated peaks. */
    CHECK(ic.compute_busy_s > 0.9 * ideal && ic.compute_busy_s <= t4);
    model_cost_destroy(c);
}

/* A tower's shape and one pass's rows, for the hand calculations below. */
typedef struct {
    double H, I, Ly, nd, cin; /* width, MLP, layers, heads × head_dim, values per patch */
    int gated;
    double Mi, mergers, out, k2; /* merger width (0: Gemma's pooling + projection), count, output, merge² */
    double P, V, S, L, St, Lt;   /* rows, tokens, S sequences of L, St more of Lt */
} hand_tower;

/* FLOPs of the tower's GEMMs and attention, from the shape. */
static void hand_flops(const hand_tower *t, double *gemm, double *attn)
{
    const double P = t->P, V = t->V, H = t->H, I = t->I;
    *gemm = 2 * P * H * t->cin + t->Ly * (2 * P * 3 * t->nd * H + 2 * P * H * t->nd + 2 * 2 * P * I * H +
                                          (t->gated ? 2 * P * I * H : 0));
    *gemm += t->Mi > 0 ? t->mergers * (2 * V * t->Mi * t->Mi + 2 * V * t->out * t->Mi) : 2 * V * t->out * H;
    *attn = t->Ly * 4 * t->nd * (t->S * t->L * t->L + t->St * t->Lt * t->Lt);
}

/* The pass op by op over the roofline (gemm_t, elem_t), in bf16. */
static double hand_time(const roof *r, const hand_tower *t)
{
    const double P = t->P, V = t->V, H = t->H, I = t->I, Ly = t->Ly, R = V * t->k2;
    double s = gemm_t(r, 1, P, H, t->cin);
    s += elem_t(r, 2 * Ly, 2 * P * H * 2);                                  /* norm1, norm2 */
    s += gemm_t(r, Ly, P, 3 * t->nd, H) + gemm_t(r, Ly, P, H, t->nd);         /* qkv, o_proj */
    for (int i = 0; i < 2; i++) {                                           /* attention, its tail */
        const double n = i ? t->St : t->S, L = i ? t->Lt : t->L;
        if (n <= 0) continue;
        const double c = 4 * t->nd * L * L * n / r->attn_peak, m = 4 * n * L * t->nd * 2 / r->bw;
        s += Ly * ((c > m ? c : m) + r->launch);
    }
    if (t->gated)
        s += gemm_t(r, Ly, P, 2 * I, H) + elem_t(r, Ly, 3 * P * I * 2) + gemm_t(r, Ly, P, H, I);
    else
        s += gemm_t(r, Ly, P, I, H) + elem_t(r, Ly, 2 * P * I * 2) + gemm_t(r, Ly, P, H, I);
    if (t->Mi > 0) {
        if (P > R) s += elem_t(r, 1, (P + R) * H * 2);                     /* sd2_tpool */
        s += elem_t(r, t->mergers, 2 * R * H * 2) + gemm_t(r, t->mergers, V, t->Mi, t->Mi) +
             elem_t(r, t->mergers, 2 * V * t->Mi * 2) + gemm_t(r, t->mergers, V, t->out, t->Mi);
    } else {
        s += elem_t(r, 1, (P + V) * H * 2) + elem_t(r, 1, 2 * V * H * 2) + gemm_t(r, 1, V, t->out, H);
    }
    return s;
}

/* A GEMM whose output tiles leave SMs idle, unsplit: the busy share
 * tiles/SMs of the peak (gemm_t counts it at the full peak). */
static double gemm_underfilled_t(const roof *r, double m, double n, double k)
{
    double tiles = ceil(m / 128) * ceil(n / 128);
    double tc = 2 * m * n * k / (r->peak * tiles / r->sms), tm = (n * k + m * k + m * n) * 2 / r->bw;
    return (tc > tm ? tc : tm) + r->launch;
}

/* One video through model_cost_encode on an H100 against the hand figures.
 * `split`: a GEMM whose output tiles do not fill the SMs, so the roofline
 * picks the fastest split of its K (model_gemm_split.h), which the hand
 * figure leaves out: the other ops must match the hand figure, and it
 * must lie between all SMs busy (gemm_t, split_lo_s) and no split at its
 * tiles' share of them (split_hi_s). */
static void check_video_pass(const char *model, int32_t w, int32_t h, int32_t frames, const hand_tower *t0,
                             const char *split, double split_lo_s, double split_hi_s)
{
    model_cost *c = test_cost_model(model, "h100-sxm", 1, 0);
    REQUIRE(c != NULL);
    const model_spec m = *model_cost_model(c);
    const model_gpu gpu = *model_cost_gpu(c);
    sim_err e = {""};
    model_media_grid g;
    REQUIRE_OR(model_vision_grid(&m.vision, w, h, frames, &g, "x", &e) == 0, model_cost_destroy(c); return);
    hand_tower t = *t0;
    if (t.out == 0) t.out = m.hidden;
    model_op ops[64];
    int32_t n_ops = 0;
    model_iter_cost ic;
    const double s = model_cost_encode(c, &m.vision, &g, 1, 1, ops, 64, &n_ops, &ic);
    double fl_gemm = 0, fl_attn = 0, sum_t = 0, split_s = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        sum_t += ops[i].time_s;
        if (split && !strcmp(ops[i].name, split)) split_s += ops[i].time_s;
        if (ops[i].cls == MODEL_OPC_GEMM) fl_gemm += ops[i].flops;
        if (ops[i].cls == MODEL_OPC_ATTN) fl_attn += ops[i].flops;
    }
    double hg, ha;
    hand_flops(&t, &hg, &ha);
    CHECK_MSG(fabs(fl_gemm / hg - 1) < 1e-12, "%s GEMM FLOPs %.6g, by hand %.6g", model, fl_gemm, hg);
    CHECK_MSG(fabs(fl_attn / ha - 1) < 1e-12, "%s attention FLOPs %.6g, by hand %.6g", model, fl_attn, ha);
    CHECK_NEAR(sum_t, s, 1e-12 * s);
    const roof r = {gpu.flops_bf16 * gpu.eff_gemm, gpu.flops_bf16 * gpu.eff_attn, gpu.hbm_bw * gpu.eff_mem,
                    gpu.launch_s, gpu.sms};
    const double hand = hand_time(&r, &t);
    printf("%s: %d frames of %d x %d, %lld tokens: %.3f TFLOP, %.4f ms (op by op by hand %.4f ms)\n", model, frames,
           w, h, (long long)g.tokens, (hg + ha) / 1e12, s * 1e3, hand * 1e3);
    if (split) {
        CHECK_MSG(split_s >= split_lo_s * (1 - 1e-12) && split_s <= split_hi_s * (1 + 1e-12),
                  "%s %.6f us outside %.6f .. %.6f us", split, split_s * 1e6, split_lo_s * 1e6, split_hi_s * 1e6);
        CHECK_MSG(fabs((s - split_s) / (hand - split_lo_s) - 1) < 1e-9, "%s: encoder less %s %.6f ms vs by hand "
                  "%.6f ms", model, split, (s - split_s) * 1e3, (hand - split_lo_s) * 1e3);
    } else {
        CHECK_MSG(fabs(s / hand - 1) < 1e-9, "%s: encoder %.6f ms vs the roofline by hand %.6f ms", model, s * 1e3,
                  hand * 1e3);
    }
    model_cost_destroy(c);
}

static void test_video_roofline(void)
{
    /* Kimi-K2.5, 10 frames of 640 x 480: all 10 x 1,656 = 16,560 patches
     * of 3·14² values through 27 layers of 1152 (16 heads of 72, MLP
     * 4304 fc0/fc1); attention over two chunks of 6,624 patches and one of
     * 3,312; each chunk averaged over its frames into 414 x 2² rows, then
     * the projector 4608 -> 4608 -> 7168 on 3 x 414 = 1,242 tokens. */
    const hand_tower kimi = {.H = 1152, .I = 4304, .Ly = 27, .nd = 1152, .cin = 3 * 14 * 14, .gated = 0,
                             .Mi = 4608, .mergers = 1, .out = 7168, .k2 = 4,
                             .P = 16560, .V = 1242, .S = 2, .L = 6624, .St = 1, .Lt = 3312};
    check_video_pass("moonshotai/Kimi-K2.5", 640, 480, 10, &kimi, NULL, 0, 0);
    /* Gemma-4-26B-A4B, 16 frames of 640 x 480: each frame 630 padded
     * patches of 3·16² values, one sequence; 27 layers of 1152 (16 heads of
     * 72, gated MLP 4304); pooled to 63 tokens a frame, 1,008 projected to
     * the language model's hidden. */
    const hand_tower gemma = {.H = 1152, .I = 4304, .Ly = 27, .nd = 1152, .cin = 3 * 16 * 16, .gated = 1,
                              .Mi = 0, .mergers = 1, .out = 0, .k2 = 9,
                              .P = 16 * 630, .V = 1008, .S = 16, .L = 630, .St = 0, .Lt = 0};
    check_video_pass("google/gemma-4-26B-A4B", 640, 480, 16, &gemma, NULL, 0, 0);
    /* A Gemma-4 image: 2,520 padded patches (266 real tokens). */
    const hand_tower gimg = {.H = 1152, .I = 4304, .Ly = 27, .nd = 1152, .cin = 3 * 16 * 16, .gated = 1,
                             .Mi = 0, .mergers = 1, .out = 0, .k2 = 9,
                             .P = 2520, .V = 266, .S = 1, .L = 2520, .St = 0, .Lt = 0};
    /* Its projection, 266 x hidden 2816 x 1152, has 3 x 22 tiles for 132 SMs. */
    model_gpu gpu;
    sim_err e = {""};
    REQUIRE(model_catalog_gpu("h100-sxm", &gpu, &e) == 0);
    const roof r = {gpu.flops_bf16 * gpu.eff_gemm, gpu.flops_bf16 * gpu.eff_attn, gpu.hbm_bw * gpu.eff_mem,
                    gpu.launch_s, gpu.sms};
    const model_spec gm = test_model_spec("google/gemma-4-26B-A4B");
    check_video_pass("google/gemma-4-26B-A4B", 1024, 768, 0, &gimg, "vis_proj", gemm_t(&r, 1, 266, gm.hidden, 1152),
                     gemm_underfilled_t(&r, 266, gm.hidden, 1152));
}

static const test_case cases[] = {
    {"families", test_families},
    {"refused", test_refused},
    {"token_counts", test_token_counts},
    {"video_counts", test_video_counts},
    {"encoder_roofline", test_encoder_roofline},
    {"video_roofline", test_video_roofline},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_vision", cases);
}
