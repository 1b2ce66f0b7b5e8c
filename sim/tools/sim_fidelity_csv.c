/* sim_fidelity_csv — reads the measured-deployment CSV into
 * sim_fidelity_row (see sim_fidelity.h): columns by name, one row per
 * line, and the mapping of the row's names onto servesim's:
 *
 *   model    the CSV's model_path when the catalogue resolves it (a
 *            catalogue name, a Hugging Face id or a path), else its last
 *            path component in lower case (Qwen/Qwen3-32B → qwen3-32b), a
 *            -FP8 / -NVFP4 suffix naming the checkpoint's dtype;
 *   GPU      the catalogue entry whose name or alias is the row's system
 *            (b200_sxm → b200);
 *   dtype    the quant mode of the model's main weights as written
 *            (moe_quant_mode for an MoE model, gemm_quant_mode for a dense
 *            one; fp8 is the checkpoint's fp8 kind, as the precision fp8
 *            is: a block-scaled checkpoint replays in fp8_block), else the
 *            precision through the checkpoint: empty is the
 *            checkpoint's own format, fp4 its FP4 format (mxfp4 for gpt-oss,
 *            else NVFP4), fp8 its fp8 kind. One dtype covers the whole model
 *            (a scenario's dtype overrides the checkpoint's per-part formats):
 *            where the GEMM and MoE modes differ the main weights' is taken;
 *   layout   tp, pp, attention DP, expert TP and EP of each worker, as
 *            sim_fidelity_layout; an aggregated row of the two exports
 *            that square the GPU count of expert-parallel runs gets the
 *            run's layout back (repair_squared_layout, said in `assumed`);
 *            their disaggregated rows' layouts are read as written; a
 *            dense model's expert-parallel column above 1 is dropped
 *            (dense_layouts, said in `assumed`).
 *
 * A row whose values are incomplete or unknown is kept, not simulated, with
 * the reason in its note.
 *
 * A row of exact lengths that re-records an InferenceX run's measurement
 * (to two decimals of a millisecond) replays that run's client and recipe
 * (fid_adopt_clients).
 *
 * A disaggregated row without worker counts that re-records a measurement
 * the file also holds with its layout (same backend, GPU, ISL, OSL and
 * concurrency, measured TTFT and TPOT equal to 1e-9) replays that record's
 * prefill and decode layouts and worker counts, and says so in `assumed`
 * (fid_adopt_twins). silicon-dev.csv's 2026-03-25/04-06 rows write each
 * worker's GPU count as tp_size and drop attention DP and the worker
 * counts; 92 of its 393 such rows are re-records of db-dump rows (TensorRT-
 * LLM and SGLang DeepSeek-R1), whose layouts show attention DP 8 where the
 * flat row says tp 8 and 1–7 prefill and 1–6 decode workers. The other 301
 * are "layout unknown": nothing in such a row gives the worker counts (no
 * total GPU count, no per-GPU throughput), and the re-recorded ones show
 * that rows of one sweep with the same flat columns ran different worker
 * counts at different concurrencies (1P + 5D, 1P + 6D, 1P + 2D and 1P + 1D
 * in one TensorRT-LLM sweep). They are replayed as one worker of each (the
 * smallest deployment their layouts describe; every row can be expressed)
 * and scored apart: their error is that of a deployment the measurement did
 * not have (TTFT MAPE 356 % on silicon-dev.csv), not the model's, so they
 * are in no group of the summary but their own (layout_unknown).
 *
 * A row whose measurement no deployment of its layout could have produced
 * (the work Little's law implies beyond its GPUs' roofline, or a TPOT too
 * fast for the batch its clients must have formed; sim_fidelity_consistency.c)
 * is simulated and scored apart the same way (inconsistent); an aggregated
 * one whose columns describe k replicas that would be within the roofline
 * replays them (sim_fidelity_row.replicas). */
#include "sim_fidelity.h"

#include "model_catalog.h"
#include "model_dtype.h"
#include "model_spec.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FID_MAX_COLS 96
/* InferenceX's RANDOM_RANGE_RATIO for its fixed-sequence-length runs. */
#define FID_INFERENCEX_RANGE_RATIO 0.8
/* The TensorRT-LLM image whose DeepSeek-R1 runs drafted with the model's
 * MTP module (docs/cost-model.md, "Speculative decoding"): the draft
 * tokens as InferenceX's dsr1_fp8/fp4_b200_trt_mtp recipes set them
 * (num_nextn_predict_layers 3, 1 with attention DP) and the acceptance
 * per position, fitted by scripts/fit-mtp.py --recipe. */
#define FID_TRTLLM_MTP_IMAGE "tensorrt-llm/release:1.2.0rc6.post3"
#define FID_TRTLLM_MTP_TOKENS_TP 3
#define FID_TRTLLM_MTP_TOKENS_DP 1
#define FID_TRTLLM_MTP_ACCEPT 0.726

/* Appends "; text" (or text) to a row's assumed note, cut at its size. */
static void assume(sim_fidelity_row *r, const char *text)
{
    size_t n = strlen(r->assumed);
    snprintf(r->assumed + n, sizeof r->assumed - n, "%s%s", n ? "; " : "", text);
}

/* Splits a CSV line in place; double-quoted fields may hold commas ("" is a
 * quote). Returns the field count. */
static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *nl = strpbrk(line, "\r\n");
    if (nl) *nl = 0;
    char *p = line;
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                *w++ = *p++;
            }
            if (*p == '"') p++;
            char *end = w;
            if (*p == ',') {
                *end = 0;
                p++;
                continue;
            }
            *end = 0;
            break;
        }
        f[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = 0;
        p = comma + 1;
    }
    return n;
}

typedef enum {
    C_ID, C_SOURCE, C_CONC, C_BACKEND, C_VERSION, C_MODEL, C_SYSTEM, C_PREC, C_GEMMQ, C_MOEQ, C_MODE, C_ISL, C_OSL,
    C_BATCH, C_TP, C_PP, C_DP, C_MOETP, C_EP,
    C_P_BATCH, C_P_WORKERS, C_P_TP, C_P_PP, C_P_DP, C_P_MOETP, C_P_EP,
    C_D_BATCH, C_D_WORKERS, C_D_TP, C_D_PP, C_D_DP, C_D_MOETP, C_D_EP,
    C_TTFT, C_TPOT, C_COUNT
} fid_col;

static const struct {
    const char *name;
    int required;
} cols[C_COUNT] = {
    {"id", 0}, {"silicon_data_source", 0}, {"concurrency", 1}, {"backend", 1}, {"backend_version", 0}, {"model_path", 1}, {"system", 1}, {"precision", 1},
    {"gemm_quant_mode", 0}, {"moe_quant_mode", 0}, {"mode", 0}, {"isl", 1}, {"osl", 1},
    {"batch_size", 0}, {"tp_size", 1}, {"pp_size", 1}, {"attention_dp_size", 1}, {"moe_tp_size", 0},
    {"moe_ep_size", 1},
    {"prefill_batch_size", 0}, {"prefill_num_workers", 0}, {"prefill_tp_size", 0}, {"prefill_pp_size", 0},
    {"prefill_attention_dp_size", 0}, {"prefill_moe_tp_size", 0}, {"prefill_moe_ep_size", 0},
    {"decode_batch_size", 0}, {"decode_num_workers", 0}, {"decode_tp_size", 0}, {"decode_pp_size", 0},
    {"decode_attention_dp_size", 0}, {"decode_moe_tp_size", 0}, {"decode_moe_ep_size", 0},
    {"silicon_ttft_ms", 1}, {"silicon_tpot_ms", 1},
};

static const char *fld_of(char **f, int n, const int *col, fid_col c)
{
    int i = col[c];
    return i >= 0 && i < n ? f[i] : "";
}

/* A non-negative integer field; empty is 0; -1 when malformed. */
static int32_t int_field(const char *s)
{
    while (*s == ' ') s++;
    if (!*s) return 0;
    char *end = NULL;
    double v = strtod(s, &end);
    while (end && *end == ' ') end++;
    if (end == s || (end && *end) || !(v >= 0) || v > 1e9 || v != (double)(int64_t)v) return -1;
    return (int32_t)v;
}

static void lower_copy(char *dst, size_t len, const char *src)
{
    size_t i;
    for (i = 0; src[i] && i + 1 < len; i++) dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = 0;
}

/* Catalogue model for model_path (see the header comment); *ck_dtype gets
 * the checkpoint's main weight format, or the dtype a name suffix implies
 * ("" when neither is known); *moe whether it has routed experts (-1: the
 * catalogue does not resolve the name here). */
static void map_model(const char *path, char *name, size_t nlen, char *ck_dtype, size_t dlen, int *moe)
{
    ck_dtype[0] = 0;
    *moe = -1; /* not resolved here: the replay resolves (or reports) the name */
    model_spec m;
    sim_err e = {""};
    if (model_catalog_model(path, &m, &e) == 0) {
        snprintf(name, nlen, "%s", path);
        snprintf(ck_dtype, dlen, "%s", model_dtype_name((model_dtype)model_spec_main_dtype(&m)));
        *moe = m.experts > 0;
        return;
    }
    const char *slash = strrchr(path, '/');
    char low[128];
    lower_copy(low, sizeof low, slash ? slash + 1 : path);
    static const char *const suffix[][2] = {{"-fp8", "fp8"}, {"-nvfp4", "nvfp4"}};
    size_t L = strlen(low);
    for (int i = 0; i < 2; i++) {
        size_t s = strlen(suffix[i][0]);
        if (L > s && !strcmp(low + L - s, suffix[i][0])) {
            low[L - s] = 0;
            snprintf(ck_dtype, dlen, "%s", suffix[i][1]);
            break;
        }
    }
    snprintf(name, nlen, "%s", low);
}

/* dtype of the row (header comment); -1 with a reason when unknown. The
 * quant mode of the main weights (the experts' for an MoE model) is taken
 * as written; the precision column goes through the checkpoint
 * (model_dtype_for_precision: fp4 → its FP4 format, fp8 → its fp8 kind). */
static int map_dtype(const char *precision, const char *gemm_q, const char *moe_q, int moe, const char *ck_dtype,
                     char *out, size_t len, char *why, size_t wlen)
{
    char q[32];
    lower_copy(q, sizeof q, moe && *moe_q ? moe_q : gemm_q);
    /* Precision fp4 is the checkpoint's FP4 format whatever 4-bit kernel
     * label the quant modes carry (gpt-oss runs its MXFP4 experts). */
    if (!strcasecmp(precision, "fp4")) q[0] = 0;
    if (!strcmp(q, "fp16")) snprintf(q, sizeof q, "bf16"); /* same width and rates */
    model_dtype d, ck = MODEL_DTYPE_BF16;
    sim_err e = {""};
    if (*ck_dtype) model_dtype_from_name(ck_dtype, &ck, &e);
    int rc;
    /* A quant mode of fp8 is the checkpoint's fp8 kind as the precision is:
     * an engine serves a block-scaled checkpoint (DeepSeek-R1/V3,
     * MiniMax-M2.5, Qwen3-235B-A22B-FP8: weight_block_size 128 x 128) with
     * its block-scaled kernels, whatever coarser label the row carries. */
    if (*q && strcmp(q, "fp4") && strcmp(q, "fp8")) {
        rc = model_dtype_from_name(q, &d, &e);
    } else {
        char p[32];
        lower_copy(p, sizeof p, *q ? q : precision);
        if (!strcmp(p, "fp16")) snprintf(p, sizeof p, "bf16");
        rc = model_dtype_for_precision(p, ck, &d, &e);
    }
    if (rc) {
        snprintf(why, wlen, "%.200s", e.msg);
        return -1;
    }
    snprintf(out, len, "%.15s", model_dtype_name(d));
    return 0;
}

/* v: batch, workers, tp, pp, dp, moe_tp, ep; a 0 pp, dp or ep means 1. */
static void set_layout(sim_fidelity_layout *l, const int32_t *v)
{
    l->batch = v[0];
    l->workers = v[1];
    l->tp = v[2];
    l->pp = v[3] ? v[3] : 1;
    l->dp = v[4] ? v[4] : 1;
    l->moe_tp = v[5];
    l->ep = v[6] ? v[6] : 1;
}

static int read_layout(char **f, int n, const int *col, fid_col first, sim_fidelity_layout *l)
{
    /* batch, workers, tp, pp, dp, moe_tp, ep in column order from first. */
    int32_t v[7];
    for (int i = 0; i < 7; i++)
        if ((v[i] = int_field(fld_of(f, n, col, (fid_col)(first + i)))) < 0) return -1;
    set_layout(l, v);
    return 0;
}

static int read_agg_layout(char **f, int n, const int *col, sim_fidelity_layout *l)
{
    /* The same columns but workers: an aggregated deployment is one. */
    int32_t v[7];
    const fid_col c[6] = {C_BATCH, C_TP, C_PP, C_DP, C_MOETP, C_EP};
    for (int i = 0; i < 6; i++)
        if ((v[i ? i + 1 : 0] = int_field(fld_of(f, n, col, c[i]))) < 0) return -1;
    v[1] = 1;
    set_layout(l, v);
    return 0;
}

/* The layout an id names: "..._tp8_ep8_..." or "..._tp4_0_ep4_0_..."
 * (InferenceX's run names). Returns 0 when the id names none. */
static int id_layout(const char *id, int32_t *tp, int32_t *ep)
{
    for (const char *p = strstr(id, "_tp"); p; p = strstr(p + 1, "_tp")) {
        char *end;
        long t = strtol(p + 3, &end, 10);
        if (end == p + 3 || t < 1) continue;
        if (end[0] == '_' && isdigit((unsigned char)end[1])) { /* "_tp4_0_ep4" */
            strtol(end + 1, &end, 10);
        }
        if (strncmp(end, "_ep", 3)) continue;
        const char *q = end + 3;
        long e = strtol(q, &end, 10);
        if (end == q || e < 1) continue;
        *tp = (int32_t)t;
        *ep = (int32_t)e;
        return 1;
    }
    return 0;
}

static int32_t isqrt_exact(int64_t g)
{
    int64_t s = llround(sqrt((double)g));
    return s * s == g ? (int32_t)s : 0;
}

/* The expert-parallel layouts of two exports of the same InferenceX runs
 * (source_file=2026-04-06.csv, and the db-dump/ rows) multiply the GPU count
 * by the EP size: a run named tp8_ep8 (8 GPUs, experts over all 8) is
 * written tp_size 64 · moe_tp 8 · ep 8, tp1_ep... with attention DP as
 * attention_dp_size 64, vLLM's tp4_ep4 as dp 4 · ep 16. Every such row whose
 * run is also in source_file=2026-03-25.csv (the same measured TTFT and
 * TPOT to the last digit: 75 of them) has there s = √(tp·dp) GPUs, moe_tp 1
 * and ep s. Undone here when the id names the run's layout and the columns
 * are its square, or, for db-dump rows (ids without a layout), when the
 * columns have that squared form. Returns 1 when repaired, -1 when the id
 * and the columns disagree otherwise (the row is not trusted), 0 else.
 * Aggregated rows only: the same exports' disaggregated rows write their
 * prefill_* and decode_* layouts as run (all 155 of them with a twin in
 * 2026-03-25.csv, 112 of 156 and 43 of 64, have the twin's GPU count per
 * worker), and their ids name the prefill worker's layout, not the
 * decode worker's (45 decode layouts would read as contradicting it). */
static int repair_squared_layout(sim_fidelity_layout *l, const char *id, const char *source, char *note,
                                 size_t len)
{
    const int64_t g = (int64_t)l->tp * l->dp;
    int32_t itp = 0, iep = 0, s = 0;
    if (l->pp != 1 || l->ep < 2 || g < 4 || (int64_t)(l->moe_tp ? l->moe_tp : 1) * l->ep != g) return 0;
    if (id_layout(id, &itp, &iep)) {
        if (g == itp) return 0;
        if (itp != iep || g != (int64_t)itp * iep) {
            snprintf(note, len, "layout columns (tp %d, attention DP %d, expert TP %d, EP %d) contradict the id's "
                     "tp%d_ep%d", l->tp, l->dp, l->moe_tp, l->ep, itp, iep);
            return -1;
        }
        s = itp;
    } else if (!strncmp(source, "db-dump/", 8)) {
        s = isqrt_exact(g);
        if (s < 2 || !(l->moe_tp == l->ep || (l->ep == g && l->tp == l->dp))) return 0;
    } else {
        return 0;
    }
    sim_fidelity_layout was = *l;
    if (l->dp >= s && l->dp % s == 0) {
        l->dp /= s;
        l->batch *= s; /* batch_size is per attention-DP rank */
    } else if (l->tp % s == 0) {
        l->tp /= s;
    } else {
        return 0;
    }
    l->moe_tp = 1;
    l->ep = s;
    snprintf(note, len, "%d GPUs (tp %d, DP %d, EP %d): the columns' tp %d x DP %d is the squared count", s, l->tp,
             l->dp, l->ep, was.tp, was.dp);
    return 1;
}

/* What reading a row found, for its note (row_note): whether its GPU,
 * formats and layouts were understood, and why not. */
typedef struct {
    int gpu_ok, dt_ok, lay_ok;
    int squared; /* repair_squared_layout's answer */
    sim_err gpu_err;
    char why[256];     /* the formats' */
    char lay_why[200]; /* the squared layout's */
} row_checks;

/* The row's id ("line N" without one), backend and engine version. */
static void row_names(char **f, int n, const int *col, int lineno, sim_fidelity_row *r)
{
    const char *id = fld_of(f, n, col, C_ID);
    if (*id) snprintf(r->id, sizeof r->id, "%s", id);
    else snprintf(r->id, sizeof r->id, "line %d", lineno);
    snprintf(r->backend, sizeof r->backend, "%s", fld_of(f, n, col, C_BACKEND));
    snprintf(r->version, sizeof r->version, "%.31s", fld_of(f, n, col, C_VERSION));
}

/* The row's GPU, weight format and KV cache format (r->model and r->backend
 * set; moe and ck from map_model). */
static void row_formats(char **f, int n, const int *col, int moe, const char *ck, sim_fidelity_row *r,
                        row_checks *c)
{
    const char *system = fld_of(f, n, col, C_SYSTEM);
    model_gpu g;
    c->gpu_ok = model_catalog_gpu(system, &g, &c->gpu_err) == 0;
    snprintf(r->gpu, sizeof r->gpu, "%.63s", c->gpu_ok ? g.name : system);
    c->dt_ok = map_dtype(fld_of(f, n, col, C_PREC), fld_of(f, n, col, C_GEMMQ), fld_of(f, n, col, C_MOEQ), moe, ck,
                         r->dtype, sizeof r->dtype, c->why, sizeof c->why) == 0;
    /* The KV cache's format is the serving recipe's: TensorRT-LLM's
     * quantised recipes quantise it (fp8); the vLLM and SGLang recipes of
     * fp8 and NVFP4 checkpoints pass --kv-cache-dtype fp8 (fp8_e4m3), those
     * of bf16 and MXFP4 (gpt-oss) checkpoints leave it "auto" (bf16). A bf16
     * KV cache makes Llama-3.1-70B FP8 at tp1 with 1k/8k sequences hold
     * half the 64 clients (the engine measured no queueing) and its tp2 TPOT
     * 33 % high (8 % with fp8). One exception: InferenceX's vLLM
     * MiniMax-M2.5 H100 recipe (minimaxm2.5_fp8_h100) passes no
     * --kv-cache-dtype, where its B200 recipes pass fp8: a bf16 cache, half
     * the tokens, which its 64-client runs with 8k sequences measure
     * queueing for (20-32 s TTFT; 0.2-1.0 s simulated with an fp8 cache,
     * 12.8-29.1 s with bf16). And one the other way: InferenceX's vLLM
     * gpt-oss B200 recipe (gptoss_fp4_b200) writes kv-cache-dtype: fp8 in
     * its config.yaml, where its H100 recipe leaves it auto: an fp8 cache,
     * half the decode attention's KV bytes. */
    int vllm = !strcasecmp(r->backend, "vllm");
    int recipe_bf16_kv =
        vllm && !strcasecmp(r->model, "MiniMaxAI/MiniMax-M2.5") && c->gpu_ok && !strcasecmp(g.name, "h100-sxm");
    int recipe_fp8_kv =
        vllm && !strcasecmp(r->model, "openai/gpt-oss-120b") && c->gpu_ok && !strcasecmp(g.name, "b200");
    int quant_kv = c->dt_ok && strcmp(r->dtype, "bf16") && !recipe_bf16_kv &&
                   (!strcasecmp(r->backend, "trtllm") || strcmp(r->dtype, "mxfp4") || recipe_fp8_kv);
    snprintf(r->kv_dtype, sizeof r->kv_dtype, "%s", quant_kv ? "fp8" : "bf16");
}

/* The row's layouts (r->disagg set): the aggregated one, its squared form
 * undone (an assumption noted), or the prefill and decode workers'; and the
 * one shown in r->tp, pp, dp and ep. */
static void row_layouts(char **f, int n, const int *col, const char *source, sim_fidelity_row *r, row_checks *c)
{
    c->lay_ok = read_agg_layout(f, n, col, &r->agg) == 0;
    c->squared = !r->disagg && c->lay_ok
                     ? repair_squared_layout(&r->agg, r->id, source, c->lay_why, sizeof c->lay_why)
                     : 0;
    if (c->squared > 0) snprintf(r->assumed, sizeof r->assumed, "%.127s", c->lay_why);
    if (r->disagg)
        c->lay_ok = read_layout(f, n, col, C_P_BATCH, &r->prefill) == 0 &&
                    read_layout(f, n, col, C_D_BATCH, &r->decode) == 0;
    const sim_fidelity_layout *shown = r->disagg ? &r->decode : &r->agg;
    r->tp = shown->tp;
    r->pp = shown->pp;
    r->dp = shown->dp;
    r->ep = shown->ep;
}

/* A dense model has no experts to spread: an expert-parallel column above
 * 1 (an export writing the GPU count there) describes nothing an engine
 * does with it, so the replay runs the layout without it and says so (an
 * expert-TP column is ignored for a dense model already). */
static void dense_layouts(sim_fidelity_row *r)
{
    sim_fidelity_layout *ls[3] = {&r->agg, &r->prefill, &r->decode};
    int32_t dropped = 0;
    for (int i = 0; i < 3; i++) {
        if (ls[i]->ep > dropped) dropped = ls[i]->ep;
        if (ls[i]->ep > 1) ls[i]->ep = 1;
    }
    if (dropped <= 1) return;
    r->ep = 1;
    char t[96];
    snprintf(t, sizeof t, "dense model: its expert-parallel size %d ignored", (int)dropped);
    assume(r, t);
}

/* An engine-version behaviour: the image's aggregated DeepSeek-R1/V3 runs
 * decoded with MTP (the CSV has no column for it); an assumption noted. */
static void row_mtp(sim_fidelity_row *r, const char *source)
{
    if (strcasecmp(r->backend, "trtllm") || r->disagg || !strstr(source, FID_TRTLLM_MTP_IMAGE) ||
        !(strstr(r->model, "DeepSeek-R1") || strstr(r->model, "DeepSeek-V3")))
        return;
    char t[96];
    r->mtp_tokens = r->agg.dp > 1 ? FID_TRTLLM_MTP_TOKENS_DP : FID_TRTLLM_MTP_TOKENS_TP;
    r->mtp_accept = FID_TRTLLM_MTP_ACCEPT;
    snprintf(t, sizeof t, "MTP %d draft tokens at %.3f acceptance (image 1.2.0rc6.post3)", r->mtp_tokens,
             r->mtp_accept);
    assume(r, t);
}

/* The note of a row that cannot run: the first field missing or invalid,
 * then a contradicting layout, an unknown GPU, an unmapped format. */
static void row_note(sim_fidelity_row *r, int lineno, const row_checks *c)
{
    const char *bad = NULL;
    if (r->concurrency < 1) bad = "concurrency";
    else if (r->isl < 1) bad = "isl";
    else if (r->osl < 2) bad = "osl (needs >= 2 for a TPOT)";
    else if (!c->lay_ok) bad = "layout (batch, worker and parallel sizes are non-negative integers)";
    else if (!r->disagg && r->agg.tp < 1) bad = "tp_size";
    else if (r->disagg && (r->prefill.tp < 1 || r->decode.tp < 1)) bad = "prefill_tp_size/decode_tp_size";
    else if (!(r->meas_ttft_ms > 0) || !(r->meas_tpot_ms > 0)) bad = "silicon_ttft_ms/silicon_tpot_ms";
    if (bad) snprintf(r->note, sizeof r->note, "line %d: incomplete row: no valid %s", lineno, bad);
    else if (c->squared < 0) snprintf(r->note, sizeof r->note, "line %d: %s", lineno, c->lay_why);
    else if (!c->gpu_ok) snprintf(r->note, sizeof r->note, "%.250s", c->gpu_err.msg);
    else if (!c->dt_ok) snprintf(r->note, sizeof r->note, "%.250s", c->why);
}

/* Fills one row from its fields; a row that cannot run gets a note. */
static void parse_row(char **f, int n, const int *col, int lineno, sim_fidelity_row *r)
{
    memset(r, 0, sizeof *r);
    r->line = lineno;
    row_names(f, n, col, lineno, r);
    char ck[16];
    int moe = 0;
    map_model(fld_of(f, n, col, C_MODEL), r->model, sizeof r->model, ck, sizeof ck, &moe);
    row_checks c;
    memset(&c, 0, sizeof c);
    row_formats(f, n, col, moe > 0, ck, r, &c);
    r->disagg = !strcasecmp(fld_of(f, n, col, C_MODE), "disagg");
    r->concurrency = int_field(fld_of(f, n, col, C_CONC));
    r->isl = int_field(fld_of(f, n, col, C_ISL));
    r->osl = int_field(fld_of(f, n, col, C_OSL));
    /* The benchmark client. InferenceX runs (their silicon_data_source
     * carries its run metadata, wip= or workflow_run_id=) use
     * benchmark_serving's random dataset with --random-range-ratio 0.8:
     * every request's input and output lengths are uniform integers in
     * [floor(0.8 L), L] (mean 0.9 L) under --ignore-eos. The other rows
     * (aiconfigurator's own collector, e2e-dev.csv) ran the lengths as
     * written. */
    const char *source = fld_of(f, n, col, C_SOURCE);
    r->len_lo = strstr(source, "wip=") || strstr(source, "workflow_run_id=") ? FID_INFERENCEX_RANGE_RATIO : 1.0;
    r->meas_ttft_ms = atof(fld_of(f, n, col, C_TTFT));
    r->meas_tpot_ms = atof(fld_of(f, n, col, C_TPOT));
    row_layouts(f, n, col, source, r, &c);
    if (moe == 0) dense_layouts(r);
    row_mtp(r, source);
    row_note(r, lineno, &c);
}

static int same_measure(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(a); }

/* A disaggregated row without worker counts takes the layouts of the row
 * that records the same measurement with them (header comment). */
static void fid_adopt_twins(sim_fidelity_result *out)
{
    for (int32_t i = 0; i < out->n_rows; i++) {
        sim_fidelity_row *r = &out->rows[i];
        if (!r->disagg || r->note[0] || (r->prefill.workers > 0 && r->decode.workers > 0)) continue;
        for (int32_t k = 0; k < out->n_rows; k++) {
            const sim_fidelity_row *t = &out->rows[k];
            if (k == i || !t->disagg || t->note[0] || t->prefill.workers < 1 || t->decode.workers < 1 ||
                strcmp(t->backend, r->backend) || strcmp(t->gpu, r->gpu) || t->isl != r->isl || t->osl != r->osl ||
                t->concurrency != r->concurrency || !same_measure(t->meas_ttft_ms, r->meas_ttft_ms) ||
                !same_measure(t->meas_tpot_ms, r->meas_tpot_ms))
                continue;
            r->prefill = t->prefill;
            r->decode = t->decode;
            r->tp = t->tp;
            r->pp = t->pp;
            r->dp = t->dp;
            r->ep = t->ep;
            snprintf(r->assumed, sizeof r->assumed, "layouts and workers of %.80s (same measurement)", t->id);
            break;
        }
        if (r->prefill.workers > 0 && r->decode.workers > 0) continue;
        /* Still without worker counts: the layout is unknown. The row is
         * replayed as one prefill and one decode worker and scored apart
         * (sim_fidelity_row.layout_unknown). */
        r->layout_unknown = 1;
        snprintf(r->assumed, sizeof r->assumed, "layout unknown: no %s; one worker of each replayed, scored apart",
                 r->prefill.workers == 0 && r->decode.workers == 0 ? "prefill_num_workers/decode_num_workers"
                 : r->prefill.workers == 0                          ? "prefill_num_workers"
                                                                    : "decode_num_workers");
    }
}

/* Equal to the precision of a record that rounds its milliseconds to two
 * decimals (half a unit of the last digit). */
static int same_rounded_ms(double a, double b) { return fabs(a - b) <= 0.005 + 1e-9 * fabs(a); }

/* A row of exact lengths (no benchmark run metadata in its source) that
 * re-records the measurement of an InferenceX row (same backend, model,
 * GPU, mode, ISL, OSL and concurrency, measured TTFT and TPOT equal to two
 * decimals) is that run: it replays that run's client (its lengths drawn
 * from [len_lo·L, L]) and recipe, and says so in `assumed`. silicon-dev.csv's
 * qwen3.5-397b-gap-analysis.csv rows re-record 60 of the InferenceX
 * Qwen3.5-397B-A17B SGLang B200 measurements with their TTFT and TPOT
 * rounded to 10 µs. */
static void fid_adopt_clients(sim_fidelity_result *out)
{
    for (int32_t i = 0; i < out->n_rows; i++) {
        sim_fidelity_row *r = &out->rows[i];
        if (r->note[0] || r->len_lo < 1) continue;
        for (int32_t k = 0; k < out->n_rows; k++) {
            const sim_fidelity_row *t = &out->rows[k];
            if (k == i || t->note[0] || !(t->len_lo < 1) || t->disagg != r->disagg || strcmp(t->backend, r->backend) ||
                strcmp(t->model, r->model) || strcmp(t->gpu, r->gpu) || t->isl != r->isl || t->osl != r->osl ||
                t->concurrency != r->concurrency || !same_rounded_ms(t->meas_ttft_ms, r->meas_ttft_ms) ||
                !same_rounded_ms(t->meas_tpot_ms, r->meas_tpot_ms))
                continue;
            r->len_lo = t->len_lo;
            if (!r->assumed[0])
                snprintf(r->assumed, sizeof r->assumed, "client and recipe of %.80s (same measurement)", t->id);
            break;
        }
    }
}

int sim_fidelity_read(const char *csv_path, sim_fidelity_result *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(csv_path, "r");
    if (!f) return sim_err_set(err, SIM_EIO, "%s: cannot open", csv_path);
    char *line = NULL, *hdr_line = NULL;
    size_t cap_line = 0, cap_hdr = 0;
    char *hdr[FID_MAX_COLS], *fld[FID_MAX_COLS];
    int rc = 0, cap = 0, col[C_COUNT];
    if (getline(&hdr_line, &cap_hdr, f) < 0) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: empty file", csv_path);
        goto done;
    }
    int nh = csv_split(hdr_line, hdr, FID_MAX_COLS);
    for (int c = 0; c < C_COUNT; c++) {
        col[c] = -1;
        for (int i = 0; i < nh; i++)
            if (!strcmp(hdr[i], cols[c].name)) col[c] = i;
        if (col[c] < 0 && cols[c].required) {
            rc = sim_err_set(err, SIM_EINVAL, "%s:1: missing column '%s'", csv_path, cols[c].name);
            goto done;
        }
    }
    int lineno = 1;
    while (getline(&line, &cap_line, f) >= 0) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\r' || !line[0]) continue;
        int n = csv_split(line, fld, FID_MAX_COLS);
        if (n < nh) {
            rc = sim_err_set(err, SIM_EINVAL, "%s:%d: %d fields, the header has %d", csv_path, lineno, n, nh);
            goto done;
        }
        if (out->n_rows == cap) {
            int nc = cap ? cap * 2 : 256;
            sim_fidelity_row *nr = realloc(out->rows, (size_t)nc * sizeof *nr);
            if (!nr) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                goto done;
            }
            out->rows = nr;
            cap = nc;
        }
        parse_row(fld, n, col, lineno, &out->rows[out->n_rows++]);
    }
done:
    free(line);
    free(hdr_line);
    fclose(f);
    if (rc) sim_fidelity_free(out);
    else {
        fid_adopt_twins(out);
        fid_adopt_clients(out);
        sim_fidelity_flag_inconsistent(out);
    }
    return rc;
}
