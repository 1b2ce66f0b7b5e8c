/* model_cost_eval — the op graph of one iteration (docs/cost-model.md, "Ops of one iteration").
 *
 * The batch is reduced to aggregates on the busiest rank (cost_agg): with
 * attention DP each dp rank holds 1/dp of the decode requests and the
 * prefill chunks are not split (a chunk larger than its share sets the
 * busiest rank); SP splits the prefill of each chunk over sp groups and
 * spreads decode requests over them. Each op of a layer class is timed once
 * and multiplied by the layers of that class (all layers: norms,
 * projections, RoPE; full vs sliding-window layers: attention; dense vs MoE
 * layers: MLP), then the model-level ops (embedding, final norm, LM head,
 * logits gather, sampling), pipeline sends and the framework overhead.
 *
 * TP: column-parallel QKV/gate_up, row-parallel O/down, an all-reduce after
 * each (tp_sp: reduce-scatter + all-gather with the norms on 1/tp of the
 * tokens). comm_fp8 halves the collective bytes and adds a quantisation
 * kernel; comm_overlap splits o_proj and down_proj (and, under tp_sp, the
 * GEMMs after the all-gathers) into row chunks whose collectives overlap
 * another chunk's GEMM (overlap_saving: never the work that waits for the
 * collective's result). PP: one batch traverses the stages in turn (its
 * latency is every stage plus every activation hop); the overlap of
 * pipeline parallelism comes from several batches in flight, which the
 * instance schedules (sim_instance) from the per-stage times that
 * model_cost_pipeline returns. */
#include "model_cost_impl.h"

#include "calib_op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void agg_from_batch(const model_cost *c, const model_batch *b, int32_t width_in, cost_agg *a)
{
    double Tp = 0, nch = 0, maxc = 0, pairs = 0, pairs_sw = 0, kvpf = 0, kvpf_sw = 0, cached = 0;
    /* Window of the bounded layers: sliding attention, or the keys DeepSeek
     * sparse attention keeps per query (both read at most W keys). */
    const double W = c->m.sliding_window > 0 ? c->m.sliding_window : c->m.index_topk;
    memset(a, 0, sizeof *a);
    for (int32_t i = 0; b->chunks && i < b->n_chunks; i++) {
        double t = b->chunks[i].tokens, p = b->chunks[i].cached;
        if (t <= 0) continue;
        if (p < 0) p = 0;
        nch++;
        Tp += t;
        cached += p;
        if (t > maxc) maxc = t;
        /* Causal: each new token sees the cached prefix and half the chunk. */
        double span = p + 0.5 * t;
        pairs += t * span;
        kvpf += p + t;
        if (W > 0) {
            pairs_sw += t * (span < W ? span : W);
            kvpf_sw += (p + t < W ? p + t : W);
        }
    }
    /* A verify step's decode_width positions each count as a decode row. */
    const double width = width_in > 1 ? width_in : 1;
    double nd = b->n_decode > 0 ? b->n_decode : 0;
    double ctx = nd > 0 && b->decode_ctx_sum > 0 ? (double)b->decode_ctx_sum : 0;
    if (width > 1) nd *= width, ctx *= width;
    const double dp = c->l.dp, sp = c->l.sp;
    double fpf = Tp > 0 ? 1.0 / dp : 0;
    if (Tp > 0 && maxc / Tp > fpf) fpf = maxc / Tp;
    const double fdec = 1.0 / (dp * sp);
    a->Tp_seq = Tp * fpf;
    a->Tp = a->Tp_seq / sp;
    a->n_chunks = nch * fpf;
    a->pairs = pairs * fpf;
    a->pairs_sw = pairs_sw * fpf;
    a->kvpf = kvpf * fpf;
    a->kvpf_sw = kvpf_sw * fpf;
    a->cached = cached * fpf;
    a->nd = nd * fdec;
    a->ctx = ctx * fdec;
    a->ctx_sw = W > 0 && nd > 0 ? nd * (ctx / nd < W ? ctx / nd : W) * fdec : 0;
    a->T = a->Tp + a->nd;
    /* The experts see every dp rank's tokens, not dp copies of the busiest
     * rank's: a prefill chunk on one rank adds its tokens once. */
    a->T_all = (Tp + nd) / sp;
    a->pad_all = b->n_pad > 0 && b->n_pad <= b->n_decode ? b->n_pad * width / sp : 0;
    a->sampled = a->n_chunks + a->nd;
    a->dw = width;
    a->prefill = Tp > 0;
}

static inline void elem(cost_op_desc *d, const model_cost *c, const char *name, double count, double tokens,
                        double bytes, int32_t calib, int64_t rows, int64_t cols)
{
    cost_roof_desc(d, c, name, MODEL_OPC_OTHER, count, tokens, 0, bytes, 0, 1);
    d->calib_op = calib;
    d->shape[0] = rows;
    d->shape[1] = cols;
    /* Quantisation rows are stored by their output dtype, fp8. */
    if (calib == CALIB_OP_QUANT_FP8) cost_db_alt(d, CALIB_OP_QUANT_FP8, COST_DB_FP8, d->shape);
}

/* The perf-db shape of a gated-delta-net kernel (the tables' gdn rows): b
 * sequences of `tokens` tokens in all, this rank's nk key and nv value
 * heads. */
static void gdn_db_shape(const model_cost *c, double b, double tokens, double nk, double nv,
                         int64_t out[COST_SHAPE_FIELDS])
{
    memset(out, 0, COST_SHAPE_FIELDS * sizeof *out);
    out[3] = (int64_t)ceil(b);                    /* batch */
    out[0] = (int64_t)ceil(tokens);               /* m: tokens */
    out[4] = b > 0 ? (int64_t)ceil(tokens / b) : 0; /* ctx: sequence length */
    out[1] = c->m.hidden, out[2] = c->m.lin_conv; /* n d_model, k d_conv */
    out[5] = (int64_t)nv, out[6] = (int64_t)nk;   /* heads: v heads, kv_heads: k heads */
    out[7] = c->m.lin_v_dim, out[8] = c->m.lin_k_dim;
}

/* Roofline time of a GEMM (for overlap budgets). */
static double gemm_time(const cost_ctx *x, const cost_op_desc *d)
{
    double tc = d->flops / d->peak, tm = d->bytes / d->bw;
    return d->count * ((tc > tm ? tc : tm) + d->kernels * x->launch) * x->time_scale;
}

/* comm_overlap: seconds one execution of a row-parallel GEMM (m rows of
 * n×k, o_proj or down_proj) followed by the collective `op` of `bytes`
 * (or, mirrored, a tp_sp all-gather followed by its column-parallel GEMM)
 * saves when the GEMM is split into s row chunks and chunk i's collective
 * runs while chunk i+1 computes (GEMM + all-reduce fusion, async TP). The
 * collective consumes its own GEMM's output and the next GEMM consumes the
 * collective's, so the split is the only independent work there is. With
 * g, r the time of one chunk's GEMM and collective, the pipeline takes
 * g + (s−1)·max(r, g + f·r) + r against G + R unsplit: while a collective
 * runs it holds the share f of the SMs, so the GEMM beside it loses f·r
 * (or, outlasted by the collective, hides inside it); every chunk re-reads
 * the weights and pays its own launch and collective latency. Chunks are at
 * least one GEMM tile (COST_TILE rows) and s ≤ COST_OVERLAP_MAX_SPLIT; the
 * best s is taken, none when no split pays (so a batch under two tiles, such
 * as decode at batch 1, gains nothing). Roofline times, as for every
 * overlap budget here. */
static double overlap_saving(const cost_ctx *x, double m_rows, double n, double k, model_coll op, double bytes)
{
    const model_cost *c = x->c;
    const double f = c->g.sms > COST_COMM_SMS ? COST_COMM_SMS / c->g.sms : 0.5;
    cost_op_desc whole;
    cost_gemm(&whole, c, "split", 1, m_rows, n, k, c->wb, c->ab, c->peak_gemm);
    double base = gemm_time(x, &whole) + model_comm_time(&c->net, op, c->l.tp, 1, bytes, NULL) * x->time_scale;
    double best = 0;
    for (int s = 2; s <= COST_OVERLAP_MAX_SPLIT && m_rows / s >= COST_TILE; s++) {
        cost_op_desc part;
        cost_gemm(&part, c, "split", 1, m_rows / s, n, k, c->wb, c->ab, c->peak_gemm);
        double g = gemm_time(x, &part), r = model_comm_time(&c->net, op, c->l.tp, 1, bytes / s, NULL) * x->time_scale;
        double slowed = g + f * r, step = slowed > r ? slowed : r;
        double saving = base - (g + (s - 1) * step + r);
        if (saving > best) best = saving;
    }
    return best;
}

/* TP collective after a row-parallel GEMM of n×k (o_proj, down_proj; k = 0:
 * a producer that is not split, no overlap): all-reduce, or reduce-scatter
 * under tp_sp; comm_fp8 adds its quantisation kernel. */
static void tp_reduce(cost_ctx *x, const char *name, double count, double T, double n, double k)
{
    const model_cost *c = x->c;
    const model_layout *l = &c->l;
    if (l->tp <= 1 || !(T > 0)) return;
    double cb = l->comm_fp8 ? 1.0 : COST_ACT_BYTES, h = c->m.hidden;
    if (l->comm_fp8) {
        cost_op_desc q;
        elem(&q, c, "comm_quant", count, T, T * h * (COST_ACT_BYTES + 1.0), CALIB_OP_QUANT_FP8,
             (int64_t)ceil(T), c->m.hidden);
        cost_op(x, &q, 0);
    }
    model_coll op = l->tp_sp ? MODEL_COLL_REDUCE_SCATTER : MODEL_COLL_ALL_REDUCE;
    double hide = l->comm_overlap && k > 0 ? count * overlap_saving(x, T, n, k, op, T * h * cb) : 0;
    cost_comm(x, name, count, op, l->tp, 1, T * h * cb, hide);
}

/* tp_sp all-gather before a column-parallel GEMM of n×k (qkv_proj,
 * gate_up_proj; k = 0: no overlap). Under comm_overlap the same split as
 * overlap_saving, mirrored (all-gather + GEMM fusion): chunk i+1 arrives
 * while chunk i computes, r + (s−1)·max(r, g + f·r) + g. */
static void tp_gather(cost_ctx *x, const char *name, double count, double T, double n, double k)
{
    const model_cost *c = x->c;
    if (c->l.tp <= 1 || !c->l.tp_sp || !(T > 0)) return;
    double cb = c->l.comm_fp8 ? 1.0 : COST_ACT_BYTES, bytes = T * c->m.hidden * cb;
    double hide = c->l.comm_overlap && k > 0 ? count * overlap_saving(x, T, n, k, MODEL_COLL_ALL_GATHER, bytes) : 0;
    cost_comm(x, name, count, MODEL_COLL_ALL_GATHER, c->l.tp, 1, bytes, hide);
}

/* The attention kernel as model_op prices it (layout.op_backend set): b
 * sequences of s new tokens after `prefix` cached ones (decode: s = the
 * context, prefix 0). MLA only in DeepSeek's geometry, which its tables
 * measure. */
/* Ulysses: KV heads summed over the sp ranks after the all-to-all. Rank j
 * holds query heads [j·q, (j+1)·q) of the hr a TP rank has (q = hr/sp) and
 * needs every KV head those read (GQA groups of g = hr/kv_r query heads);
 * kv_r when sp divides the KV heads, sp·(1..) once sp > kv_r (a KV head
 * replicated on each rank of its group). MLA keeps its one latent (kv_r). */
static double ulysses_kv_heads(const model_cost *c)
{
    const int64_t sp = c->l.sp, hr = (int64_t)c->heads_r, kv = (int64_t)c->kv_r;
    if (c->mla || sp <= 1 || kv < 1 || hr < sp || hr % kv) return c->kv_r;
    const int64_t q = hr / sp, g = hr / kv;
    int64_t total = 0;
    for (int64_t j = 0; j < sp; j++) total += ((j + 1) * q - 1) / g - (j * q) / g + 1;
    return (double)total;
}

static void attn_op(const model_cost *c, cost_op_desc *d, int prefill, double b, double s, double prefix, int sliding)
{
    const model_spec *m = &c->m;
    if (!c->l.op_backend[0] || !(b > 0) || !(s > 0)) return;
    const char *kvdt = cost_op_dtype(c->l.kv_dtype);
    if (!kvdt) return;
    model_op_query *q = &d->op;
    memset(q, 0, sizeof *q);
    if (c->mla) {
        if (m->kv_lora_rank != 512 || m->rope_dim != 64 || m->nope_dim != 128 || m->v_head_dim != 128) return;
        q->kind = prefill ? MODEL_OPK_CTX_MLA : MODEL_OPK_GEN_MLA;
        d->opv = prefill ? COST_OPV_CTX_MLA : COST_OPV_GEN_MLA;
    } else {
        q->kind = prefill ? MODEL_OPK_CTX_ATTN : MODEL_OPK_GEN_ATTN;
        d->opv = prefill ? COST_OPV_CTX_ATTN : COST_OPV_GEN_ATTN;
        q->f[MODEL_OPF_KV_HEADS] = c->kv_r;
        q->f[MODEL_OPF_HEAD_DIM] = c->hd;
        if (sliding && m->sliding_window > 0) q->f[MODEL_OPF_WINDOW] = m->sliding_window;
    }
    q->f[MODEL_OPF_BATCH] = ceil(b);
    q->f[MODEL_OPF_HEADS] = c->heads_r;
    q->f[MODEL_OPF_ISL] = prefill ? ceil(s) : 1;
    q->f[MODEL_OPF_STEP] = prefill ? prefix : (s > 1 ? s - 1 : 0);
    d->has_op = 1; /* dtype bfloat16, kv_dtype kvdt: resolved in c->op_sets[d->opv] */
}

/* A DeepSeek-sparse-attention part as model_op prices it (layout.op_backend
 * set): the sparse attention (part 1) or the lightning indexer (part 2) of
 * the DSA modules the tables measure (DeepSeek-V3.2 and GLM-5 rows, one
 * set for both), in this model's geometry; b sequences of s new tokens
 * after `prefix` (decode: s = the context). */
static void dsa_op(const model_cost *c, cost_op_desc *d, int prefill, int part, double b, double s, double prefix)
{
    const model_spec *m = &c->m;
    if (!c->l.op_backend[0] || !(b > 0) || !(s > 0) || !c->mla || m->q_lora_rank <= 0) return;
    model_op_query *q = &d->op;
    memset(q, 0, sizeof *q);
    q->f[MODEL_OPF_HIDDEN] = m->hidden, q->f[MODEL_OPF_Q_LORA] = m->q_lora_rank;
    q->f[MODEL_OPF_KV_LORA] = m->kv_lora_rank, q->f[MODEL_OPF_ROPE] = m->rope_dim;
    q->f[MODEL_OPF_NOPE] = m->nope_dim, q->f[MODEL_OPF_V_HEAD] = m->v_head_dim;
    q->f[MODEL_OPF_IDX_HEADS] = m->index_heads, q->f[MODEL_OPF_IDX_DIM] = m->index_head_dim;
    q->f[MODEL_OPF_IDX_TOPK] = m->index_topk;
    q->kind = prefill ? MODEL_OPK_CTX_DSA_MODULE : MODEL_OPK_GEN_DSA_MODULE;
    d->opv = part == 1 ? (prefill ? COST_OPV_DSA_CTX_ATTN : COST_OPV_DSA_GEN_ATTN)
                       : (prefill ? COST_OPV_DSA_CTX_IDX : COST_OPV_DSA_GEN_IDX);
    q->f[MODEL_OPF_BATCH] = ceil(b);
    q->f[MODEL_OPF_HEADS] = c->heads_r;
    q->f[MODEL_OPF_ISL] = prefill ? ceil(s) : 1;
    q->f[MODEL_OPF_STEP] = prefill ? prefix : (s > 1 ? s - 1 : 0);
    d->has_op = 1; /* strings resolved in c->op_sets[d->opv] */
}

/* Attention layer classes: full, sliding window, DeepSeek sparse (top-k). */
enum { ATTN_FULL = 0, ATTN_SLIDING = 1, ATTN_SPARSE = 2 };

/* Attention layer classes' op names: full, sliding window, DeepSeek sparse. */
static const char *const attn_prefill_names[] = {"attn_prefill", "attn_prefill_sw", "attn_prefill_dsa"};
static const char *const attn_decode_names[] = {"attn_decode", "attn_decode_sw", "attn_decode_dsa"};
static const char *const attn_kvb_names[] = {"kv_b_proj", "kv_b_proj_sw", "kv_b_proj_dsa"};

/* One rank's attention geometry: heads, the DCP and SP degrees, the query
 * and value head sizes, KV bytes per token and the attention projections'
 * weight format (bytes per weight and activation, peak). */
typedef struct {
    double hr, dcp, sp, qdim, vdim, kv_tok;
    double wA, aA, pA;
} attn_geom;

/* Sequence parallelism's exchange around a prefill's attention: Ulysses'
 * all-to-alls, or the ring's KV blocks where passing one outlasts the
 * attention on it; kvr KV rows read, t_attn the attention's time. */
static void attn_sp_comm(cost_ctx *x, const attn_geom *g, const cost_agg *a, double count, double kvr, double t_attn)
{
    const model_cost *c = x->c;
    const model_layout *l = &c->l;
    const double hr = g->hr, sp = g->sp, qdim = g->qdim, vdim = g->vdim, kv_tok = g->kv_tok;
    if (l->sp_kind == MODEL_SP_ULYSSES) {
        /* Sequence shards → head shards before, back after. Each rank
         * gets hr/sp query heads and the KV heads they read: with more
         * ranks than KV heads (sp > kv_r) a KV head goes to every rank
         * of its query group, so K/V move sp·⌈…⌉ heads' worth, not kv_r. */
        double in = a->Tp * (hr * qdim + 2.0 * ulysses_kv_heads(c) * c->hd) * COST_ACT_BYTES;
        double out = a->Tp * hr * vdim * COST_ACT_BYTES;
        cost_comm(x, "sp_a2a_qkv", count, MODEL_COLL_ALL_TO_ALL, l->sp, l->tp, in, 0);
        cost_comm(x, "sp_a2a_out", count, MODEL_COLL_ALL_TO_ALL, l->sp, l->tp, out, 0);
    } else {
        /* Ring: sp steps, each max(attention on one KV block, passing
         * the block on); the first block is local. */
        double block = kvr / sp * kv_tok;
        /* Every rank passes its block to the next at once: a step lasts
         * as long as its slowest hop, the NIC's once the ring (sp ranks
         * tp GPUs apart) leaves a node. */
        int32_t nic_hops = 0;
        double t_x = model_comm_ring_step_time(&c->net, l->sp, l->tp, block, &nic_hops) * c->fam_time[MODEL_FAM_SEND_RECV] *
                     x->time_scale;
        double step = t_attn / count / sp;
        double extra = count * (sp - 1) * (t_x > step ? t_x - step : 0);
        char det[64] = "";
        if (x->ops) snprintf(det, sizeof det, "ring n=%d, %d NIC hops, %.0fB/step", l->sp, nic_hops, block);
        cost_fixed(x, "sp_ring_kv", MODEL_OPC_COMM, MODEL_BOUND_COMM, count, extra, count * (sp - 1) * block, det);
    }
}

/* Prefill attention (MLA: the latent up-projection first), then the SP
 * exchange. */
static void attn_prefill(cost_ctx *x, const attn_geom *g, const cost_agg *a, double count, int kind)
{
    const int sliding = kind != ATTN_FULL;
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double hr = g->hr, sp = g->sp, qdim = g->qdim, vdim = g->vdim, kv_tok = g->kv_tok;
    const double wA = g->wA, aA = g->aA, pA = g->pA;
    double pairs = sliding ? a->pairs_sw : a->pairs, kvr = sliding ? a->kvpf_sw : a->kvpf;
    if (c->mla) {
        /* Prefill up-projects every cached and new latent to per-head K/V. */
        cost_op_desc up;
        cost_gemm(&up, c, attn_kvb_names[kind], count, a->kvpf / sp,
                  hr * ((double)m->nope_dim + m->v_head_dim), m->kv_lora_rank, wA, aA, pA);
        cost_op(x, &up, 0);
    }
    double pair_flops = c->mla ? 2.0 * hr * (qdim + vdim) : 4.0 * hr * c->hd;
    cost_op_desc d;
    cost_desc_init(&d);
    d.name = attn_prefill_names[kind];
    d.cls = MODEL_OPC_ATTN;
    d.count = count;
    d.flops = pairs * pair_flops / sp;
    /* Ulysses ranks read the KV heads they were sent (replicated ones too). */
    const double kv_rep = sp > 1 && l->sp_kind == MODEL_SP_ULYSSES ? ulysses_kv_heads(c) / c->kv_r : 1.0;
    d.bytes = (kvr * kv_tok * kv_rep + a->Tp_seq * hr * (qdim + vdim) * COST_ACT_BYTES) / sp;
    d.peak = c->peak_attn;
    d.bw = c->bw;
    d.kernels = 1;
    d.m = a->Tp;
    d.calib_op = CALIB_OP_ATTN_PREFILL;
    double nch = a->n_chunks > 0 ? a->n_chunks : 1;
    d.shape[3] = (int64_t)ceil(nch);                       /* batch */
    d.shape[0] = (int64_t)ceil(a->Tp_seq / nch);           /* m */
    d.shape[4] = (int64_t)(a->cached / nch);               /* ctx */
    d.shape[5] = (int64_t)hr, d.shape[6] = (int64_t)c->kv_r, d.shape[7] = (int64_t)c->hd;
    if (c->mla && sp == 1 && kind != ATTN_SPARSE) {
        /* The MLA prefill kernel's rows: batch, new tokens, cached, this rank's heads. */
        int64_t ms[COST_SHAPE_FIELDS] = {0};
        ms[0] = d.shape[0], ms[3] = d.shape[3], ms[4] = d.shape[4], ms[5] = d.shape[5];
        cost_db_alt(&d, CALIB_OP_MLA_PREFILL, COST_DB_BF16, ms);
    }
    if (sp == 1 && kind != ATTN_SPARSE)
        attn_op(c, &d, 1, (double)d.shape[3], a->Tp_seq / nch, a->cached / nch, sliding);
    else if (sp == 1)
        dsa_op(c, &d, 1, 1, (double)d.shape[3], a->Tp_seq / nch, a->cached / nch);
    double t_attn = cost_op(x, &d, 0);
    if (sp > 1) attn_sp_comm(x, g, a, count, kvr, t_attn);
}

/* Decode attention (MLA: absorbed, q through W_UK before and the output
 * through W_UV after). */
static void attn_decode(cost_ctx *x, const attn_geom *g, const cost_agg *a, double count, int kind)
{
    const int sliding = kind != ATTN_FULL;
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double hr = g->hr, dcp = g->dcp, qdim = g->qdim, vdim = g->vdim, kv_tok = g->kv_tok;
    const double wA = g->wA, aA = g->aA, pA = g->pA;
    double ctx = sliding ? a->ctx_sw : a->ctx;
    if (c->mla) {
        /* Absorbed MLA decode: q through W_UK into the latent, output
         * back through W_UV. */
        cost_op_desc qa;
        cost_gemm(&qa, c, "q_absorb", count, a->nd, hr * m->kv_lora_rank, m->nope_dim, wA, aA, pA);
        int64_t bs[COST_SHAPE_FIELDS] = {0};
        bs[0] = (int64_t)ceil(a->nd), bs[5] = (int64_t)hr; /* the absorb BMM's rows: tokens, heads */
        cost_db_alt(&qa, CALIB_OP_MLA_BMM_PRE, qa.calib_wdt, bs);
        cost_op(x, &qa, 0);
    }
    double pair_flops = c->mla ? 2.0 * hr * (2.0 * m->kv_lora_rank + m->rope_dim) : 4.0 * hr * c->hd;
    /* A verify step's dw positions of a request read its KV once: the
     * kernel takes them as dw times the query heads (FlashMLA's s_q·h_q,
     * the generation kernels' spec-decoding mode), dw times the maths. */
    const double dw = a->dw > 1 ? a->dw : 1, nreq = a->nd / dw, ctx_req = ctx / dw;
    cost_op_desc d;
    cost_desc_init(&d);
    d.name = attn_decode_names[kind];
    d.cls = MODEL_OPC_ATTN;
    d.count = count;
    d.flops = ctx * pair_flops;
    d.bytes = ctx_req * kv_tok + a->nd * hr * dcp * (qdim + vdim) * COST_ACT_BYTES;
    d.peak = c->peak_attn;
    d.bw = c->bw;
    d.kernels = 1;
    d.m = a->nd;
    d.calib_op = CALIB_OP_ATTN_DECODE;
    d.shape[3] = (int64_t)ceil(nreq);
    d.shape[4] = (int64_t)(ctx_req / nreq);
    d.shape[5] = (int64_t)(hr * dcp * dw), d.shape[6] = (int64_t)c->kv_r, d.shape[7] = (int64_t)c->hd;
    if (c->mla && dcp == 1 && kind != ATTN_SPARSE) {
        /* The MLA decode kernel's rows: batch, context, this rank's heads. */
        int64_t ms[COST_SHAPE_FIELDS] = {0};
        ms[3] = d.shape[3], ms[4] = d.shape[4], ms[5] = d.shape[5];
        cost_db_alt(&d, CALIB_OP_MLA_DECODE, COST_DB_BF16, ms);
    }
    if (dcp == 1 && kind != ATTN_SPARSE) attn_op(c, &d, 0, nreq, ctx_req / nreq, 0, sliding);
    /* The sparse kernel's own context is the whole one (it picks top-k of it). */
    else if (dcp == 1) dsa_op(c, &d, 0, 1, nreq, a->ctx / a->nd, 0);
    if (dw > 1 && d.has_op) d.op.f[MODEL_OPF_HEADS] *= dw;
    cost_op(x, &d, 0);
    if (c->mla) {
        cost_op_desc oa;
        cost_gemm(&oa, c, "o_absorb", count, a->nd, hr * vdim, m->kv_lora_rank, wA, aA, pA);
        int64_t bs[COST_SHAPE_FIELDS] = {0};
        bs[0] = (int64_t)ceil(a->nd), bs[5] = (int64_t)hr;
        cost_db_alt(&oa, CALIB_OP_MLA_BMM_POST, oa.calib_wdt, bs);
        cost_op(x, &oa, 0);
    }
}

/* DCP: queries gathered over the group, partial outputs and LSEs merged. */
static void attn_dcp_merge(cost_ctx *x, const attn_geom *g, const cost_agg *a, double count)
{
    const model_cost *c = x->c;
    const model_layout *l = &c->l;
    const double hr = g->hr, dcp = g->dcp, qdim = g->qdim, vdim = g->vdim;
    /* Queries gathered over the DCP group, partial outputs and LSEs
     * exchanged and merged: ∝ heads·head_dim per token, not context. */
    double Ta = a->T;
    double bytes = Ta * hr * dcp * (qdim + vdim + 2.0) * COST_ACT_BYTES;
    cost_comm(x, "dcp_gather", count, MODEL_COLL_ALL_GATHER, l->dcp, 1, bytes, 0);
    cost_op_desc mg;
    elem(&mg, c, "lse_merge", count, Ta, Ta * hr * dcp * (vdim * COST_ACT_BYTES + 4.0) * 2.0,
         CALIB_OP_LSE_MERGE, (int64_t)ceil(Ta * hr), 0);
    mg.shape[7] = (int64_t)vdim;
    mg.shape[10] = l->dcp;
    cost_op(x, &mg, 0);
}

/* Attention of one layer class on aggregates a. */
static void eval_attention(cost_ctx *x, const cost_agg *a, double count, int kind)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    if (!(count > 0)) return;
    attn_geom g;
    g.hr = c->heads_r, g.dcp = l->dcp, g.sp = l->sp;
    g.qdim = c->mla ? (double)m->nope_dim + m->rope_dim : c->hd;
    g.vdim = c->mla ? (double)m->v_head_dim : c->hd;
    g.kv_tok = c->kv_layer_r / g.dcp;
    /* Attention projections in the attention part's weight format. */
    g.wA = c->wb_part[MODEL_PART_ATTN], g.aA = c->ab_part[MODEL_PART_ATTN], g.pA = c->peak_part[MODEL_PART_ATTN];
    if (a->Tp > 0) attn_prefill(x, &g, a, count, kind);
    if (a->nd > 0) attn_decode(x, &g, a, count, kind);
    if (g.dcp > 1) attn_dcp_merge(x, &g, a, count);
}

/* Chunk length of the chunked delta-rule kernel (fla's chunk_gated_delta_rule). */
#define COST_GDN_CHUNK 64.0
/* Kernel launches of one chunked delta-rule prefill: fla's
 * chunk_gated_delta_rule forward as the engines call it (q/k L2 norm in
 * the op) runs l2norm on q and on k, then chunk_local_cumsum of the gate,
 * chunk_scaled_dot_kkt, solve_tril, recompute_w_u, chunk_gated_delta_rule_
 * fwd_h and chunk_fwd_o, each a kernel of its own the host launches (each
 * with its launch floor on the GPU; under the eager host bound, each a
 * launch of the host's). */
#define COST_GDN_PREFILL_KERNELS 8

/* Gated DeltaNet layers (Qwen3.5/3.6, Qwen3-Next), count of them: in_proj
 * (q, k, v, z and the b/a gates), the causal conv (reading and writing each
 * sequence's conv state), the delta-rule kernel — chunked for prefill (per
 * token and value head: the state read and update, 4·dk·dv FLOPs, and the
 * intra-chunk products, 4·C·(dk+dv)), recurrent for decode (≈7·dk·dv FLOPs,
 * the fp32 state read and written once per step, which makes it memory
 * bound) —, the gated RMSNorm and out_proj. Heads split over TP. */
/* A GDN kernel (conv, else the delta rule) as model_op prices it
 * (layout.op_backend set). */
static void gdn_op(const model_cost *c, cost_op_desc *d, int conv, int prefill, double b, double tokens, double nk,
                   double nv)
{
    const model_spec *m = &c->m;
    if (!c->l.op_backend[0] || !(b > 0) || !(tokens > 0)) return;
    model_op_query *q = &d->op;
    memset(q, 0, sizeof *q);
    q->kind = MODEL_OPK_GDN;
    q->f[MODEL_OPF_BATCH] = ceil(b);
    q->f[MODEL_OPF_TOKENS] = ceil(tokens);
    q->f[MODEL_OPF_SEQ_LEN] = ceil(tokens / b);
    q->f[MODEL_OPF_K_HEADS] = nk, q->f[MODEL_OPF_K_DIM] = m->lin_k_dim;
    q->f[MODEL_OPF_V_HEADS] = nv, q->f[MODEL_OPF_V_DIM] = m->lin_v_dim;
    q->f[MODEL_OPF_D_CONV] = m->lin_conv;
    q->f[MODEL_OPF_D_MODEL] = m->hidden;
    d->opv = conv ? (prefill ? COST_OPV_GDN_CONV_CTX : COST_OPV_GDN_CONV_GEN)
                  : (prefill ? COST_OPV_GDN_DELTA_CTX : COST_OPV_GDN_DELTA_GEN);
    d->has_op = 1;
}

static void eval_gdn(cost_ctx *x, const cost_agg *a, double count)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    if (!(count > 0)) return;
    const double tp = c->l.tp, T = a->T, h = m->hidden;
    const double nk = m->lin_k_heads >= tp ? m->lin_k_heads / tp : 1, nv = m->lin_v_heads / tp;
    const double dk = m->lin_k_dim, dv = m->lin_v_dim, K = m->lin_conv;
    const double conv_ch = 2.0 * nk * dk + nv * dv, state = nv * dk * dv * 4.0;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double seqs = a->n_chunks + a->nd;
    /* Gates: GDN's b and a per value head; KDA's per-channel forget gate
     * and beta per head (both have the output gate z/g of nv·dv). */
    const double gates = m->lin_kda ? nk * dk + nv : 2.0 * nv;
    cost_op_desc in;
    cost_gemm(&in, c, "gdn_in_proj", count, T, conv_ch + nv * dv + gates, h, wA, aA, pA);
    cost_op(x, &in, 0);
    cost_op_desc cv;
    elem(&cv, c, "gdn_conv1d", count, T,
         T * conv_ch * 2.0 * COST_ACT_BYTES + seqs * conv_ch * (K > 1 ? K - 1 : 0) * 2.0 *
         COST_ACT_BYTES, -1, (int64_t)ceil(T),
         (int64_t)conv_ch);
    gdn_op(c, &cv, 1, a->Tp > 0, seqs, T, nk, nv);
    {
        int64_t gs[COST_SHAPE_FIELDS];
        gdn_db_shape(c, seqs, T, nk, nv, gs);
        cost_db_alt(&cv, a->Tp > 0 ? CALIB_OP_GDN_CONV_PREFILL : CALIB_OP_GDN_CONV_DECODE, COST_DB_BF16, gs);
    }
    cost_op(x, &cv, 0);
    cost_op_desc d;
    if (a->Tp > 0) {
        /* COST_GDN_PREFILL_KERNELS launches (the WY transform, chunk state
         * pass and output among them). */
        cost_roof_desc(&d, c, "gdn_prefill", MODEL_OPC_ATTN, count, a->Tp,
                  a->Tp * nv * (4.0 * dk * dv + 4.0 * COST_GDN_CHUNK * (dk + dv)),
                  a->Tp * (2.0 * nk * dk + 2.0 * nv * dv + 2.0 * nv) * COST_ACT_BYTES + a->n_chunks * 2.0 * state,
                  c->peak_attn, COST_GDN_PREFILL_KERNELS);
        d.shape[3] = (int64_t)ceil(a->n_chunks > 0 ? a->n_chunks : 1);
        d.shape[0] = (int64_t)ceil(a->Tp / (a->n_chunks > 0 ? a->n_chunks : 1));
        d.shape[5] = (int64_t)nv, d.shape[6] = (int64_t)nk, d.shape[7] = (int64_t)dk;
        gdn_op(c, &d, 0, 1, a->n_chunks, a->Tp, nk, nv);
        int64_t gs[COST_SHAPE_FIELDS];
        gdn_db_shape(c, a->n_chunks > 0 ? a->n_chunks : 1, a->Tp, nk, nv, gs);
        cost_db_alt(&d, CALIB_OP_GDN_PREFILL, COST_DB_BF16, gs);
        cost_op(x, &d, 0);
    }
    if (a->nd > 0) {
        cost_roof_desc(&d, c, "gdn_decode", MODEL_OPC_ATTN, count, a->nd, a->nd * nv * 7.0 * dk * dv,
                  a->nd * (2.0 * state + (conv_ch + nv * dv + 2.0 * nv) * COST_ACT_BYTES), c->peak_attn, 1);
        d.shape[3] = (int64_t)ceil(a->nd);
        d.shape[5] = (int64_t)nv, d.shape[6] = (int64_t)nk, d.shape[7] = (int64_t)dk;
        gdn_op(c, &d, 0, 0, a->nd, a->nd, nk, nv);
        int64_t gs[COST_SHAPE_FIELDS];
        gdn_db_shape(c, a->nd, a->nd, nk, nv, gs);
        cost_db_alt(&d, CALIB_OP_GDN_DECODE, COST_DB_BF16, gs);
        cost_op(x, &d, 0);
    }
    cost_op_desc gn;
    elem(&gn, c, "gdn_norm_gate", count, T, T * nv * dv * 3.0 * COST_ACT_BYTES, -1, (int64_t)ceil(T),
         (int64_t)(nv * dv));
    cost_op(x, &gn, 0);
    cost_op_desc o;
    cost_gemm(&o, c, "gdn_out_proj", count, T, h, nv * dv, wA, aA, pA);
    cost_op(x, &o, 0);
}

/* Chunk length of the Mamba-2 SSD scan (mamba_chunk_scan_combined). */
#define COST_SSD_CHUNK 128.0

/* Mamba-2 layers (Nemotron-H), count of them: in_proj (z, x, B, C, dt), the
 * causal conv over x, B, C (reading and writing each sequence's conv
 * state), the SSD scan — chunked for prefill (per token and head: the
 * intra-chunk products C·(N + P) and the state update and read-out 4·N·P
 * FLOPs; each sequence's state read and written once), recurrent for decode
 * (selective_state_update: ≈ 6·N·P FLOPs per head, the state read and
 * written once per step, which makes it memory bound) —, the gated RMSNorm
 * and out_proj. Heads split over TP; B/C groups split when they divide
 * over it, replicated otherwise. Roofline-priced (no fitted set yet). */
static void eval_mamba(cost_ctx *x, const cost_agg *a, double count)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    if (!(count > 0)) return;
    const double tp = c->l.tp, T = a->T, h = m->hidden;
    const double nh = m->mamba_heads / tp, P = m->mamba_head_dim, N = m->mamba_state, K = m->mamba_conv;
    const double g = m->mamba_groups >= tp ? m->mamba_groups / tp : m->mamba_groups;
    const double di = nh * P, bc = 2.0 * g * N, conv_ch = di + bc;
    const double state = di * N * m->mamba_state_bytes;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double seqs = a->n_chunks + a->nd;
    cost_op_desc in;
    cost_gemm(&in, c, "mamba_in_proj", count, T, 2.0 * di + bc + nh, h, wA, aA, pA);
    cost_op(x, &in, 0);
    cost_op_desc cv;
    elem(&cv, c, "mamba_conv1d", count, T,
         T * conv_ch * 2.0 * COST_ACT_BYTES +
         seqs * conv_ch * (K > 1 ? K - 1 : 0) * 2.0 * COST_ACT_BYTES,
         -1, (int64_t)ceil(T), (int64_t)conv_ch);
    cost_op(x, &cv, 0);
    cost_op_desc d;
    if (a->Tp > 0) {
        /* 5 kernels: chunk cumsum, chunk state, state passing, bmm, chunk scan. */
        cost_roof_desc(&d, c, "mamba_ssd_prefill", MODEL_OPC_ATTN, count, a->Tp,
                  a->Tp * nh * (COST_SSD_CHUNK * (N + P) + 4.0 * N * P),
                  a->Tp * (conv_ch + di + nh) * COST_ACT_BYTES + a->n_chunks * 2.0 * state, c->peak_attn, 5);
        cost_op(x, &d, 0);
    }
    if (a->nd > 0) {
        cost_roof_desc(&d, c, "mamba_ssd_decode", MODEL_OPC_ATTN, count, a->nd, a->nd * nh * 6.0 * N * P,
                  a->nd * (2.0 * state + (conv_ch + 2.0 * di + nh) * COST_ACT_BYTES), c->peak_attn, 1);
        cost_op(x, &d, 0);
    }
    cost_op_desc gn;
    elem(&gn, c, "mamba_norm_gate", count, T, T * di * 3.0 * COST_ACT_BYTES, -1, (int64_t)ceil(T),
         (int64_t)di);
    cost_op(x, &gn, 0);
    cost_op_desc o;
    cost_gemm(&o, c, "mamba_out_proj", count, T, h, di, wA, aA, pA);
    cost_op(x, &o, 0);
}

/* An indexer's top-k over each of `rows` queries' logits over `keys` keys
 * in all (read once, index_topk indices written). */
static void indexer_topk(cost_ctx *x, const char *name, double count, double rows, double keys)
{
    const model_spec *m = &x->c->m;
    cost_op_desc tk;
    elem(&tk, x->c, name, count, rows, keys * 4.0 + rows * m->index_topk * 4.0, -1, (int64_t)ceil(rows),
         m->index_topk);
    cost_op(x, &tk, 0);
}

/* DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5),
 * count layers: index queries from the q latent (index_heads × dim), one
 * key and the per-head weights from the hidden state (the key written to
 * the fp8 indexer cache), then every query scores every cached key (fp8
 * logits over the index heads, on every TP rank) and keeps the top
 * index_topk, which the attention then reads (ATTN_SPARSE). */
static void eval_dsa_indexer(cost_ctx *x, const cost_agg *a, double count)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    if (!(count > 0)) return;
    const double T = a->T, h = m->hidden, ih = m->index_heads, id = m->index_head_dim;
    const double key_bytes = id * (1.0 + 4.0 / 128.0);
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double peak = (c->g.flops_fp8 > 0 ? c->g.flops_fp8 : c->g.flops_bf16) * c->g.eff_attn;
    cost_op_desc q;
    cost_gemm(&q, c, "dsa_index_q", count, T, ih * id, m->q_lora_rank > 0 ? m->q_lora_rank : h, wA,
              aA, pA);
    cost_op(x, &q, 0);
    cost_op_desc k;
    cost_gemm(&k, c, "dsa_index_k", count, T, id + ih, h, wA, aA, pA);
    cost_op(x, &k, 0);
    cost_op_desc d;
    for (int dec = 0; dec < 2; dec++) {
        double keys = dec ? a->ctx : a->pairs, rows = dec ? a->nd : a->Tp, kv = dec ? a->ctx : a->kvpf;
        if (!(rows > 0)) continue;
        cost_roof_desc(&d, c, dec ? "dsa_indexer_decode" : "dsa_indexer_prefill", MODEL_OPC_ATTN, count, rows,
                  keys * ih * id * 2.0, kv * key_bytes + rows * ih * id * 1.0 + keys * 4.0, peak, 1);
        d.shape[3] = (int64_t)ceil(dec ? a->nd : (a->n_chunks > 0 ? a->n_chunks : 1));
        d.shape[4] = (int64_t)(dec ? a->ctx / a->nd : a->cached / (a->n_chunks > 0 ? a->n_chunks : 1));
        d.shape[5] = (int64_t)ih, d.shape[7] = (int64_t)id;
        {
            double nb = dec ? a->nd : (a->n_chunks > 0 ? a->n_chunks : 1);
            dsa_op(c, &d, !dec, 2, nb, dec ? a->ctx / a->nd : a->Tp_seq / nb, dec ? 0 : a->cached / nb);
        }
        cost_op(x, &d, 0);
        indexer_topk(x, dec ? "dsa_topk_decode" : "dsa_topk_prefill", count, rows, keys);
    }
}

/* DeepSeek-V4: q through its low-rank pair (with the latent's norm), the
 * K=V head, and q norm, RoPE and the window-cache write. */
static void v4_q_kv(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double T = a->T, h = m->hidden, hr = c->heads_r, hd = m->head_dim, La = c->n_full + c->n_sw;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double kvb = c->kvb, ql = m->q_lora_rank;
    cost_op_desc g;
    cost_gemm(&g, c, "q_a_proj", La, T, ql, h, wA, aA, pA);
    cost_op(x, &g, 0);
    cost_op_desc qn;
    elem(&qn, c, "q_a_norm", La, T, T * ql * 2.0 * COST_ACT_BYTES, CALIB_OP_RMSNORM, (int64_t)ceil(T),
         m->q_lora_rank);
    cost_op(x, &qn, 0);
    cost_gemm(&g, c, "q_b_proj", La, T, hr * hd, ql, wA, aA, pA);
    cost_op(x, &g, 0);
    cost_gemm(&g, c, "kv_proj", La, T, hd, h, wA, aA, pA);
    cost_op(x, &g, 0);
    /* q norm, RoPE on q and the K=V head, the window-cache write. */
    cost_op_desc rope;
    elem(&rope, c, "qkv_norm_rope_write", La, T, T * (hr * hd + hd) * 2.0 * COST_ACT_BYTES + T * hd * kvb,
         -1, 0, 0);
    cost_op(x, &rope, 0);
}

/* DeepSeek-V4's compressors: CSA's two overlapping series (2·head_dim each
 * of kv and gate), HCA's one; pooling reads them and writes an entry per
 * ratio. */
static void v4_compressors(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double T = a->T, h = m->hidden, hd = m->head_dim;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double kvb = c->kvb;
    const double n_csa = m->csa_layers, n_hca = m->hca_layers;
    cost_op_desc g;
    /* Compressors: CSA's two overlapping series (2·head_dim each of kv and
     * gate), HCA's one; pooling reads them and writes an entry per ratio. */
    static const char *const proj_names[2] = {"csa_compress_proj", "hca_compress_proj"};
    static const char *const pool_names[2] = {"csa_compress_pool", "hca_compress_pool"};
    const double n_k[2] = {n_csa, n_hca}, ratio[2] = {m->csa_ratio, m->hca_ratio};
    const double width[2] = {4.0 * hd, 2.0 * hd};
    for (int k = 0; k < 2; k++) {
        if (!(n_k[k] > 0) || !(ratio[k] > 0)) continue;
        cost_gemm(&g, c, proj_names[k], n_k[k], T, width[k], h, wA, aA, pA);
        cost_op(x, &g, 0);
        cost_op_desc pool;
        elem(&pool, c, pool_names[k], n_k[k], T,
             T * width[k] * COST_ACT_BYTES + T / ratio[k] * hd * kvb, -1, 0, 0);
        cost_op(x, &pool, 0);
    }
}

/* CSA's lightning indexer: its compressor, index queries from the q latent,
 * scores over the compressed keys and the top-k, for prefill and decode. */
static void v4_indexer(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double T = a->T, h = m->hidden;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const double ql = m->q_lora_rank;
    const double n_csa = m->csa_layers;
    cost_op_desc g;
    /* CSA's lightning indexer: index heads over TP. */
    const double ih = m->index_heads / c->l.tp >= 1 ? m->index_heads / (double)c->l.tp : 1, id = m->index_head_dim;
    const double ikey = id * (1.0 + 4.0 / 128.0);
    if (n_csa > 0 && m->index_topk > 0) {
        const double r = m->csa_ratio;
        cost_gemm(&g, c, "csa_index_compress_proj", n_csa, T, 4.0 * id + m->index_heads, h, wA, aA, pA);
        cost_op(x, &g, 0);
        cost_op_desc pool;
        elem(&pool, c, "csa_index_pool", n_csa, T, T * 4.0 * id * COST_ACT_BYTES + T / r * ikey, -1, 0,
             0);
        cost_op(x, &pool, 0);
        cost_gemm(&g, c, "csa_index_q", n_csa, T, ih * id, ql, wA, aA, pA);
        cost_op(x, &g, 0);
        const double peak8 = (c->g.flops_fp8 > 0 ? c->g.flops_fp8 : c->g.flops_bf16) * c->g.eff_attn;
        for (int dec = 0; dec < 2; dec++) {
            double rows = dec ? a->nd : a->Tp, keys = (dec ? a->ctx : a->pairs) / r, kv = (dec ? a->ctx : a->kvpf) / r;
            if (!(rows > 0)) continue;
            cost_op_desc d;
            cost_roof_desc(&d, c, dec ? "csa_indexer_decode" : "csa_indexer_prefill", MODEL_OPC_ATTN, n_csa,
                      rows, keys * ih * id * 2.0, kv * ikey + rows * ih * id + keys * 4.0, peak8, 1);
            cost_op(x, &d, 0);
            indexer_topk(x, dec ? "csa_topk_decode" : "csa_topk_prefill", n_csa, rows, keys);
        }
    }
}

/* DeepSeek-V4's attention per layer kind over the window plus the
 * compressed entries. */
static void v4_attention_kinds(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double hr = c->heads_r, hd = m->head_dim;
    const double kvb = c->kvb;
    const double n_csa = m->csa_layers, n_hca = m->hca_layers, n_swa = m->sliding_layers;
    /* Attention per layer kind: the window's keys plus the compressed
     * entries (CSA at most index_topk per query). Shared K=V: one read
     * serves both products (4·head_dim FLOPs per head and key). */
    static const char *const pre_names[3] = {"attn_prefill_sw", "attn_prefill_csa", "attn_prefill_hca"};
    static const char *const dec_names[3] = {"attn_decode_sw", "attn_decode_csa", "attn_decode_hca"};
    const double n_kind[3] = {n_swa, n_csa, n_hca}, r_kind[3] = {0, m->csa_ratio, m->hca_ratio};
    for (int k = 0; k < 3; k++) {
        if (!(n_kind[k] > 0)) continue;
        const double r = r_kind[k], topk = k == 1 && m->index_topk > 0 ? m->index_topk : INFINITY;
        if (a->Tp > 0) {
            double comp = r > 0 ? fmin(a->pairs / r, a->Tp * topk) : 0, comp_kv = r > 0 ? fmin(a->kvpf / r, a->Tp * topk) : 0;
            double keys = a->pairs_sw + comp;
            cost_op_desc d;
            cost_roof_desc(&d, c, pre_names[k], MODEL_OPC_ATTN, n_kind[k], a->Tp, keys * 4.0 * hr * hd,
                      (a->kvpf_sw + comp_kv) * hd * kvb + a->Tp * hr * 2.0 * hd * COST_ACT_BYTES,
                      c->peak_attn, 1);
            cost_op(x, &d, 0);
        }
        if (a->nd > 0) {
            double comp = r > 0 ? fmin(a->ctx / r, a->nd * topk) : 0, keys = a->ctx_sw + comp;
            cost_op_desc d;
            cost_roof_desc(&d, c, dec_names[k], MODEL_OPC_ATTN, n_kind[k], a->nd, keys * 4.0 * hr * hd,
                      keys * hd * kvb + a->nd * hr * 2.0 * hd * COST_ACT_BYTES, c->peak_attn, 1);
            cost_op(x, &d, 0);
        }
    }
}

/* DeepSeek-V4's output: the activations quantised where the weights are
 * narrower, then the grouped low-rank O (or a plain O). */
static void v4_output(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double T = a->T, h = m->hidden, hr = c->heads_r, hd = m->head_dim, La = c->n_full + c->n_sw;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    cost_op_desc g;
    if (aA < COST_ACT_BYTES) {
        cost_op_desc q;
        elem(&q, c, "o_quant", La, T, T * hr * hd * (COST_ACT_BYTES + aA), CALIB_OP_QUANT_FP8,
             (int64_t)ceil(T), (int64_t)(hr * hd));
        cost_op(x, &q, 0);
    }
    if (m->o_groups > 0) {
        /* The groups this rank's heads fill, each (heads/groups)·head_dim → o_lora_rank. */
        const double gr = m->o_groups * hr / m->heads, per = hd * m->heads / m->o_groups;
        cost_gemm(&g, c, "o_a_proj_grouped", La, T, gr * m->o_lora_rank, per, wA, aA, pA);
        cost_op(x, &g, 0);
        cost_gemm(&g, c, "o_b_proj", La, T, h, gr * m->o_lora_rank, wA, aA, pA);
        cost_op(x, &g, 0);
    } else {
        cost_gemm(&g, c, "o_proj", La, T, h, hr * hd, wA, aA, pA);
        cost_op(x, &g, 0);
    }
}

/* DeepSeek-V4's attention (comp_attn), all La attention layers: q through
 * its low-rank pair, the one K=V head (written to the window cache), the
 * compressors of the compressed layers (kv and gate projections, pooled
 * into one entry per ratio tokens) and CSA's lightning indexer (its own
 * compressor, index queries from the q latent, scores over the compressed
 * keys, top index_topk), the attention of each layer kind over its window
 * plus its compressed entries (CSA: the top-k picked, HCA: all), and the
 * grouped low-rank O (each of o_groups head groups to o_lora_rank as one
 * batched GEMM, then to hidden). No shared op table measures these
 * kernels: the attention, pooling and indexer ops are roofline-priced (the
 * GEMMs go through the GEMM op model like any other). Heads split over TP;
 * the K=V head, compressors and indexer keys are whole on every rank. */
static void eval_v4_attention(cost_ctx *x, const cost_agg *a)
{
    v4_q_kv(x, a);
    v4_compressors(x, a);
    v4_indexer(x, a);
    v4_attention_kinds(x, a);
    v4_output(x, a);
}

/* Hyper-connections (hc_mult = n streams of hidden per token): before each
 * attention and MoE block the n streams are normed and projected to the
 * (2+n)·n mixing weights (fp32), Sinkhorn-normalised and collapsed to the
 * block's input; after it the output is expanded back and added to the
 * mixed streams; the last layer's streams collapse once before the head.
 * Each token's streams are on every TP rank. Roofline (fused kernels in the
 * engines, no table measures them). */
static void eval_hyper_connections(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    if (m->hc_mult <= 0 || !(a->T > 0)) return;
    const double n = m->hc_mult, h = m->hidden, T = c->l.tp_sp ? a->T / c->l.tp : a->T, blocks = 2.0 * c->n_layers;
    const double mix = (2.0 + n) * n;
    const double peak = c->g.flops_fp32 > 0 ? c->g.flops_fp32 * c->g.eff_gemm : c->peak_bf16;
    cost_op_desc pre;
    cost_roof_desc(&pre, c, "hc_pre", MODEL_OPC_OTHER, blocks, T, 2.0 * T * n * h * mix,
              T * n * h * COST_ACT_BYTES + T * h * COST_ACT_BYTES + mix * n * h * 4.0 + T * mix * 4.0,
              peak, 2);
    cost_op(x, &pre, 0);
    cost_op_desc post;
    elem(&post, c, "hc_post", blocks, T, T * (2.0 * n * h + h) * COST_ACT_BYTES + T * mix * 4.0, -1, 0, 0);
    cost_op(x, &post, 0);
    cost_op_desc head;
    cost_roof_desc(&head, c, "hc_head", MODEL_OPC_OTHER, 1, a->sampled, 2.0 * a->sampled * n * h * n,
              a->sampled * (n + 1.0) * h * COST_ACT_BYTES + n * n * h * 4.0, peak, 1);
    cost_op(x, &head, 0);
}

/* The attention block of every attention layer but DeepSeek-V4's: QKV
 * (or MLA's q/kv) projections, RoPE and the KV write, the attention of each
 * layer class, the output quantisation and o_proj (cost_block_fn). */
static void eval_attn_block(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double T = a->T, h = m->hidden, hr = c->heads_r;
    const double La = c->n_full + c->n_sw;
    const double wA = c->wb_part[MODEL_PART_ATTN], aA = c->ab_part[MODEL_PART_ATTN], pA = c->peak_part[MODEL_PART_ATTN];
    const int q_acts = aA < COST_ACT_BYTES;
    const double vdim = c->mla ? (double)m->v_head_dim : c->hd;
    const double qdim = c->mla ? (double)m->nope_dim + m->rope_dim : c->hd;
    cost_op_desc qkv0;
    if (!c->mla) {
        /* With an output gate (Qwen3.5) q_proj also yields the gate. */
        const double qh = m->attn_out_gate ? 2.0 * hr : hr;
        cost_gemm(&qkv0, c, "qkv_proj", La, T, (qh + 2.0 * c->kv_r) * c->hd, h, wA, aA, pA);
        cost_op(x, &qkv0, 0);
        /* QK norm over all heads (MiniMax-M2): the engines read q and k,
         * all-reduce each token's two variances (fp32) across the TP ranks
         * that hold their shards, then scale q and k. */
        if (m->qk_norm_layer) {
            cost_op_desc qkn;
            elem(&qkn, c, "qk_norm", La, T, T * (hr + c->kv_r) * c->hd * 2.0 * COST_ACT_BYTES, CALIB_OP_RMSNORM,
                 (int64_t)ceil(T), (int64_t)((hr + c->kv_r) * c->hd));
            cost_op(x, &qkn, 0);
            if (l->tp > 1) cost_comm(x, "tp_reduce_qk_norm", La, MODEL_COLL_ALL_REDUCE, l->tp, 1, T * 2.0 * 4.0, 0);
        }
    } else {
        double qk = (double)m->nope_dim + m->rope_dim;
        if (m->q_lora_rank > 0) {
            cost_gemm(&qkv0, c, "q_a_proj", La, T, m->q_lora_rank, h, wA, aA, pA);
            cost_op(x, &qkv0, 0);
            cost_op_desc qn;
            elem(&qn, c, "q_a_norm", La, T, T * m->q_lora_rank * 2.0 * COST_ACT_BYTES, CALIB_OP_RMSNORM,
                 (int64_t)ceil(T), m->q_lora_rank);
            cost_op(x, &qn, 0);
            cost_op_desc qb;
            cost_gemm(&qb, c, "q_b_proj", La, T, hr * qk, m->q_lora_rank, wA, aA, pA);
            cost_op(x, &qb, 0);
        } else {
            cost_gemm(&qkv0, c, "q_proj", La, T, hr * qk, h, wA, aA, pA);
            cost_op(x, &qkv0, 0);
        }
        cost_op_desc kva;
        cost_gemm(&kva, c, "kv_a_proj", La, T, (double)m->kv_lora_rank + m->rope_dim, h, wA, aA, pA);
        cost_op(x, &kva, 0);
        cost_op_desc kvn;
        elem(&kvn, c, "kv_a_norm", La, T, T * m->kv_lora_rank * 2.0 * COST_ACT_BYTES, CALIB_OP_RMSNORM,
             (int64_t)ceil(T), m->kv_lora_rank);
        cost_op(x, &kvn, 0);
    }
    double kdim = c->mla ? (double)m->rope_dim : c->kv_r * c->hd;
    cost_op_desc rope;
    elem(&rope, c, "rope_kv_write", La, T,
         T * (hr * qdim + kdim) * 2.0 * COST_ACT_BYTES + T * c->kv_layer_r / l->dcp, -1, 0, 0);
    cost_op(x, &rope, 0);
    if (m->index_topk > 0) {
        eval_dsa_indexer(x, a, c->n_full);
        eval_attention(x, a, c->n_full, ATTN_SPARSE);
    } else {
        eval_attention(x, a, c->n_full, ATTN_FULL);
    }
    eval_attention(x, a, c->n_sw, ATTN_SLIDING);
    if (q_acts) {
        /* Attention writes bf16; the fp8/fp4 O projection needs its own
         * quantisation kernel (norm and SiLU·mul fuse theirs). */
        cost_op_desc q;
        elem(&q, c, "o_quant", La, T, T * hr * vdim * (COST_ACT_BYTES + aA), CALIB_OP_QUANT_FP8,
             (int64_t)ceil(T), (int64_t)(hr * vdim));
        cost_op(x, &q, 0);
    }
    cost_op_desc o;
    cost_gemm(&o, c, "o_proj", La, T, h, hr * vdim, wA, aA, pA);
    cost_op(x, &o, 0);
}

/* count fused add + RMSNorms over Tn tokens of `bytes`; fused: riding in
 * the all-reduce before them (parallel.ar_norm_fusion), their traffic at
 * the memory roofline with no kernel, launch floor or host launch of
 * their own. */
static void norm_op(cost_ctx *x, const char *name, double count, double Tn, double bytes, int fused)
{
    cost_op_desc n;
    elem(&n, x->c, name, count, Tn, bytes, CALIB_OP_RMSNORM, (int64_t)ceil(Tn), x->c->m.hidden);
    if (fused) {
        n.kernels = 0;
        n.in_fused_op = 1;
    }
    cost_op(x, &n, 0);
}

/* One pass over all layers for aggregates a. */
static void eval_layers(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double L = c->n_layers, T = a->T, h = m->hidden, hr = c->heads_r;
    const double La = c->n_full + c->n_sw; /* attention layers (the rest are linear) */
    const double Tn = l->tp_sp ? T / l->tp : T; /* tokens the norms see */
    /* Activation format of the attention part, weight formats of the dense MLP (model_dtype.h). */
    const double aA = c->ab_part[MODEL_PART_ATTN];
    const double wD = c->wb_part[MODEL_PART_DENSE], aD = c->ab_part[MODEL_PART_DENSE];
    const double pD = c->peak_part[MODEL_PART_DENSE];
    const int q_acts = aA < COST_ACT_BYTES; /* the QKV/O GEMMs take quantised inputs */
    const int q_dense = aD < COST_ACT_BYTES;
    const double vdim = c->mla ? (double)m->v_head_dim : c->hd;
    /* Fused add + RMSNorm: read x and residual, write both (+ the quantised
     * copy when the next GEMM takes fp8/fp4 activations). */
    double norm_bytes = Tn * h * (4.0 * COST_ACT_BYTES + (q_acts ? aA : 0));

    /* Blocks with a token mixer (all of them, but in Nemotron-H / NAS). */
    const double Lmix = La + c->n_lin + c->n_mamba;
    (void)L;
    /* parallel.ar_norm_fusion: under TP (no EP, so every block ends in a TP
     * all-reduce) each all-reduce kernel also adds the residual and applies
     * the next RMSNorm: the norm's traffic stays, its launch and launch
     * floor go (norm_op); the first layer's input norm runs alone. */
    const int ar_norm = l->ar_norm_fusion && l->tp > 1 && l->ep <= 1 && !l->tp_sp;
    norm_op(x, "input_norm", ar_norm ? 1.0 : Lmix, Tn, norm_bytes, 0);
    if (ar_norm && Lmix > 1) norm_op(x, "input_norm_fused", Lmix - 1, Tn, norm_bytes, 1);
    tp_gather(x, "tp_all_gather", Lmix, T, c->mla ? 0 : (hr + 2.0 * c->kv_r) * c->hd, c->mla ? 0 : h);
    /* QKV projections through o_proj: an MLA block as one measured module
     * where the engine's rows cover the iteration (model_cost_mla.c). */
    if (m->comp_attn) eval_v4_attention(x, a);
    else if (!cost_mla_module(x, a, La, eval_attn_block)) eval_attn_block(x, a);
    eval_hyper_connections(x, a);
    eval_gdn(x, a, c->n_lin);
    eval_mamba(x, a, c->n_mamba);
    /* Blocks with a mixer and no FFN reduce their mixer's output alone. */
    if (c->n_mix_only > 0) tp_reduce(x, "tp_reduce_attn", c->n_mix_only, T, h, hr * vdim);

    /* MLP: dense layers, by FFN width class (one unless NAS). Gated
     * gate/up/down, or up/down with relu² (Nemotron-H). */
    if (c->n_dense > 0) {
        const double Ld = c->n_dense, up = m->ffn_plain ? 1.0 : 2.0;
        if (Ld - c->n_dense_nomix > 0) tp_reduce(x, "tp_reduce_attn", Ld - c->n_dense_nomix, T, h, hr * vdim);
        norm_op(x, ar_norm ? "post_norm_fused" : "post_norm", Ld, Tn, norm_bytes, ar_norm);
        const int32_t n_w = m->n_ffn_widths > 0 ? m->n_ffn_widths : 1;
        for (int32_t k = 0; k < n_w; k++) {
            const double Lk = c->n_dense_w[k];
            const double I = (m->n_ffn_widths > 0 ? m->ffn_widths[k] : m->intermediate) / (double)l->tp;
            if (!(Lk > 0)) continue;
            cost_op_desc gu;
            cost_gemm(&gu, c, m->ffn_plain ? "up_proj" : "gate_up_proj", Lk, T, up * I, h, wD, aD, pD);
            tp_gather(x, "tp_all_gather", Lk, T, up * I, h);
            cost_op(x, &gu, 0);
            cost_op_desc act;
            elem(&act, c, m->ffn_plain ? "relu2" : "silu_mul", Lk, T,
                 T * I * ((up + 1.0) * COST_ACT_BYTES + (q_dense ? aD : 0)), -1, 0, 0);
            cost_op(x, &act, 0);
            cost_op_desc dn;
            cost_gemm(&dn, c, "down_proj", Lk, T, h, I, wD, aD, pD);
            cost_op(x, &dn, 0);
            tp_reduce(x, "tp_reduce_mlp", Lk, T, h, I);
        }
    }
    if (c->n_moe > 0) {
        if (c->n_moe - c->n_moe_nomix > 0) tp_reduce(x, "tp_reduce_attn", c->n_moe - c->n_moe_nomix, T, h, hr * vdim);
        norm_op(x, ar_norm ? "post_norm_fused" : "post_norm", c->n_moe, Tn, norm_bytes, ar_norm);
        /* DeepSeek-V4's hash-routed layers: a fixed token-id table spreads
         * the tokens over the experts, so expert_skew (the learned
         * router's hot experts) does not apply to them: priced at uniform
         * load (their gate GEMM still weighs the experts, so it stays). */
        const double n_hash = m->hash_layers > 0 && !c->uniform ? m->hash_layers : 0;
        if (n_hash > 0) cost_moe(x, a, n_hash, 1);
        cost_moe(x, a, c->n_moe - n_hash, c->uniform);
        /* Experts' partial sums (and, without EP all-to-all, the combine). */
        tp_reduce(x, "tp_reduce_moe", c->n_moe, T, h, 0); /* grouped expert GEMMs: not split */
    }
}

/* Embedding (the first pipeline stage's). */
static void eval_embed_ops(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const double T = a->T, h = c->m.hidden;
    cost_op_desc e;
    elem(&e, c, "embedding", 1, T, T * h * 2.0 * COST_ACT_BYTES, -1, 0, 0);
    cost_op(x, &e, 0);
    /* Vocab-parallel embedding: partial rows summed over TP. */
    if (c->l.tp > 1) cost_comm(x, "embed_all_reduce", 1, MODEL_COLL_ALL_REDUCE, c->l.tp, 1, T * h * COST_ACT_BYTES, 0);
}

/* Final norm, LM head, logits gather, sampling (the last stage's). */
static void eval_head_ops(cost_ctx *x, const cost_agg *a)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const double h = m->hidden, tp = c->l.tp;
    cost_op_desc fn;
    elem(&fn, c, "final_norm", 1, a->sampled, a->sampled * h * 2.0 * COST_ACT_BYTES, CALIB_OP_RMSNORM,
         (int64_t)ceil(a->sampled), m->hidden);
    cost_op(x, &fn, 0);
    /* LM head stays in bf16 as checkpoints keep it. */
    cost_op_desc lm;
    cost_gemm(&lm, c, "lm_head", 1, a->sampled, m->vocab / tp, h, 2.0, COST_ACT_BYTES, c->peak_bf16);
    cost_op(x, &lm, 0);
    if (c->l.tp > 1)
        cost_comm(x, "logits_gather", 1, MODEL_COLL_ALL_GATHER, c->l.tp, 1, a->sampled * m->vocab * 4.0, 0);
    cost_op_desc s;
    elem(&s, c, "sampling", 1, a->sampled, a->sampled * COST_SAMPLE_PASSES * 4.0 * m->vocab,
         CALIB_OP_SOFTMAX, (int64_t)ceil(a->sampled), m->vocab);
    cost_op(x, &s, 0);
}

/* Whether the activation hop after stage s leaves the node (stages hold
 * tp·dp·sp consecutive GPUs). */
static int hop_remote(const model_cost *c, int64_t s)
{
    const int64_t G = (int64_t)c->l.tp * c->l.dp * c->l.sp;
    return (s * G) / c->net.gpus_per_node != ((s + 1) * G) / c->net.gpus_per_node;
}

/* Activations between pipeline stages: hidden state and residual, sent
 * once per stage boundary over NVLink or the NIC by placement. *local_s and
 * *remote_s get one hop's time over each link (0 when no hop uses it). */
static void eval_pp_sends(cost_ctx *x, const cost_agg *a, double *local_s, double *remote_s)
{
    const model_cost *c = x->c;
    *local_s = *remote_s = 0;
    if (c->l.pp <= 1) return;
    double local = 0, remote = 0;
    for (int64_t s = 0; s + 1 < c->l.pp; s++) {
        if (hop_remote(c, s)) remote++;
        else local++;
    }
    /* Hidden state and residual, or the hyper-connection streams. */
    double bytes = (c->m.hc_mult > 0 ? c->m.hc_mult : 2.0) * a->T * c->m.hidden * COST_ACT_BYTES;
    double tl = cost_comm(x, "pp_send", local, MODEL_COLL_SEND_RECV, 2, 1, bytes, 0);
    double tr = cost_comm(x, "pp_send", remote, MODEL_COLL_SEND_RECV, 2, c->net.gpus_per_node, bytes, 0);
    if (local > 0) *local_s = tl / local;
    if (remote > 0) *remote_s = tr / remote;
}

/* Layers of pipeline stage s (as evenly as possible, the first ones one more). */
static double stage_layers(const model_cost *c, int32_t s)
{
    return (double)(c->m.layers / c->l.pp + (s < c->m.layers % c->l.pp ? 1 : 0));
}

/* One evaluation. With pp > 1 and stage_s/hop_s given, also stage s's
 * device time (its layers' share, the embedding on the first, the head on
 * the last, each held to its own host launch floor when eager) and the
 * activation hop after it. */
static double eval_run(const model_cost *c, const model_batch *b, const cost_agg *full, model_op *ops,
                       int32_t max, int32_t *n_ops, model_iter_cost *out, double *stage_s, double *hop_s,
                       double *host_s)
{
    cost_ctx x;
    cost_ctx_start(&x, c, ops, max, c->launch * (full->prefill ? 1.0 : COST_GRAPH_LAUNCH_FRACTION));
    cost_agg a = *full;
    const int32_t p = c->l.pp;
    eval_layers(&x, &a);
    const double dev_l = cost_device_s(&x), n_l = x.launches;
    eval_embed_ops(&x, &a);
    const double dev_e = cost_device_s(&x) - dev_l, n_e = x.launches - n_l;
    eval_head_ops(&x, &a);
    const double dev_h = cost_device_s(&x) - dev_l - dev_e, n_h = x.launches - n_l - n_e;
    double hop_local = 0, hop_rem = 0;
    eval_pp_sends(&x, &a, &hop_local, &hop_rem);
    const int eager = full->prefill && c->l.eager_launch_s > 0;
    if (p > 1) {
        /* Each stage's own process launches its kernels: an eager stage
         * cannot run faster than its host issues them. */
        double extra = 0, worst = 0, worst_launches = 0;
        for (int32_t s = 0; s < p; s++) {
            double f = stage_layers(c, s) / c->n_layers;
            double dev = f * dev_l + (s == 0 ? dev_e : 0) + (s == p - 1 ? dev_h : 0);
            double nk = f * n_l + (s == 0 ? n_e : 0) + (s == p - 1 ? n_h : 0);
            double host = eager ? nk * c->l.eager_launch_s : 0, add = cost_eager_extra(c, host, dev);
            extra += add;
            if (add > worst) worst = add, worst_launches = nk;
            if (stage_s) stage_s[s] = dev + add;
            if (hop_s && s + 1 < p) hop_s[s] = hop_remote(c, s) ? hop_rem : hop_local;
        }
        char det[64] = "";
        if (ops && extra > 0)
            snprintf(det, sizeof det, "stage %.0f launches x %.0fus > GPU time", worst_launches,
                     c->l.eager_launch_s * 1e6);
        if (extra > 0) cost_fixed(&x, "eager_host", MODEL_OPC_OVERHEAD, MODEL_BOUND_HOST, 1, extra, 0, det);
    } else if (eager) {
        /* Eager iterations (a prefill chunk: no CUDA graph) cannot run faster
         * than the host launches their kernels. */
        double device = cost_device_s(&x), host = x.launches * c->l.eager_launch_s;
        double add = cost_eager_extra(c, host, device);
        char det[64] = "";
        if (ops) {
            if (c->l.eager_serial > 0)
                snprintf(det, sizeof det, "%.0f launches x %.0fus, %.2f serial", x.launches,
                         c->l.eager_launch_s * 1e6, c->l.eager_serial);
            else
                snprintf(det, sizeof det, "%.0f launches x %.0fus > GPU time", x.launches, c->l.eager_launch_s * 1e6);
        }
        if (add > 0) cost_fixed(&x, "eager_host", MODEL_OPC_OVERHEAD, MODEL_BOUND_HOST, 1, add, 0, det);
    }
    /* CPU-side framework work: per iteration and per scheduled request. */
    double nreq = 0;
    for (int32_t i = 0; b->chunks && i < b->n_chunks; i++) nreq += b->chunks[i].tokens > 0;
    /* Padding rows of a CUDA graph are not requests. */
    double nreal = b->n_decode - (b->n_pad > 0 ? b->n_pad : 0);
    nreq += nreal > 0 ? nreal : 0;
    double per_req = nreq * c->l.overhead_per_seq_s;
    /* Async scheduling: the host prepares the next batch's requests while
     * the GPU runs this one, so their work costs only what the device time
     * does not cover. */
    if (c->l.host_overlap) per_req = per_req > cost_device_s(&x) ? per_req - cost_device_s(&x) : 0;
    double ovh = c->l.overhead_s + per_req;
    cost_fixed(&x, "framework", MODEL_OPC_OVERHEAD, MODEL_BOUND_HOST, 1, ovh, 0, "scheduling, launch, I/O");
    if (host_s) *host_s = ovh > 0 ? ovh : 0;
    return cost_ctx_finish(&x, n_ops, out);
}

double cost_eval(const model_cost *c, const model_batch *b, int32_t width, model_op *ops, int32_t max,
                 int32_t *n_ops, model_iter_cost *out, double *stage_s, double *hop_s, double *host_s)
{
    cost_agg a;
    agg_from_batch(c, b, width, &a);
    if (!(a.T > 0)) {
        model_iter_cost r = {0, 0, 0, 0, 0, 0, "roofline", 0, 0};
        if (out) *out = r;
        if (n_ops) *n_ops = 0;
        if (host_s) *host_s = 0;
        for (int32_t s = 0; s < c->l.pp; s++) {
            if (stage_s) stage_s[s] = 0;
            if (hop_s && s + 1 < c->l.pp) hop_s[s] = 0;
        }
        return 0;
    }
    return eval_run(c, b, &a, ops, max, n_ops, out, stage_s, hop_s, host_s);
}
