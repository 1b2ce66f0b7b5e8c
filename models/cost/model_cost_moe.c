/* model_cost_moe — routed experts of one MoE layer class.
 *
 * Token load: each token picks top_k of E experts; expert i receives a
 * share p_i of the assignments, Zipf(expert_skew) over a fixed pseudo-random
 * placement (uniform at skew 0). Of the T tokens the EP group routes, expert
 * i gets A_i = T·k·p_i rows and is touched (its weights read) with
 * probability 1 − (1 − k·p_i)^T (TensorRT-LLM's CUDA-graph padding rows,
 * one dummy request repeated, count once in that T). Experts live E/ep to a rank, each split
 * over moe_tp ranks (default tp·dp/ep; when moe_tp·ep < tp·dp the expert
 * groups are replicated and each serves its share of the tokens); the
 * busiest rank sets the time.
 *
 * In an iteration with prefill, with layout.op_backend naming an engine
 * whose fitted moe:<experts' format> set exists (and no perf-db grouped-GEMM
 * series), the experts are one op, experts_fused_moe: the op model's fused-MoE formula for the
 * busiest rank's rows, touched experts and row tiles (model_op_moe_time_load),
 * as the engines run and the per-op tables measure them. Otherwise:
 *
 * Grouped GEMM layouts (DeepGEMM): contiguous packs the rows of all local
 * experts back to back (full tiles) but pays a gather before and a scatter
 * after (moe_permute); masked gives each expert fixed slots of the most rows
 * it can get, so every touched expert rounds its rows up to a 64-row tile.
 * With a perf-db the grouped GEMMs' query carries the routing skew
 * (expert_skew as calib_shape.skew_milli, 0 for a uniform layer), answered
 * from the rows calibrated at the skews around it (calib_table.h).
 * The layout is what the token movement delivers: DeepEP's low-latency
 * dispatch writes each (token, expert) pair straight into the expert's slot
 * and the combine reads it back from there, so masked after it needs no
 * permute; normal dispatch (and tokens replicated or gathered over TP)
 * deliver tokens by source rank, so the engines sort them into expert
 * order: contiguous with its permute. auto takes masked exactly when the
 * iteration's dispatch is low-latency (decode, as DeepEP/SGLang pair them),
 * contiguous otherwise. A layout forced against its dispatch pays the
 * conversion: contiguous after low-latency dispatch its permute, masked
 * without it a scatter into the slots and a gather back (moe_scatter, the
 * same bytes). The slots' memory (model_cost_expert_buffer_bytes) is taken
 * from the KV pool.
 *
 * Token movement. When every TP rank holds all tokens (dp = 1, no tp_sp)
 * each rank runs its experts on the tokens routed there and the layer's TP
 * all-reduce sums the partial outputs: nothing extra moves. When ranks hold
 * distinct tokens (attention DP or tp_sp) and experts are fully
 * expert-parallel (moe_tp = 1), tokens go out and back by all-to-all, DeepEP
 * style: normal mode is bandwidth-bound (NVLink inside a node, NICs across,
 * a token sent once per destination rank and once per remote node);
 * low-latency mode writes every (token, expert) pair directly, in rounds
 * of at most 128 tokens (model_comm_deepep_time, fitted to DeepEP's H800
 * figures). ep_mode auto takes low-latency for decode-only iterations and
 * normal for those with prefill, as SGLang's --deepep-mode auto. Engines
 * without DeepEP move them with NCCL: ep_mode alltoall sends every (token,
 * expert) pair, packed by destination rank (ep_pack), in one all-to-all
 * each way (cost_comm: the α–β all-to-all, or the perf-db's alltoall rows
 * for a rank's whole send buffer of S·top_k rows) and un-permutes and
 * weights the k returned rows after the combine (ep_unpack), as
 * Megatron's alltoall token dispatcher; ep_mode allgather takes the
 * gathered path below, as vLLM's allgather_reducescatter backend.
 * Otherwise (experts TP-split across distinct-token ranks, or ep_mode
 * allgather) tokens are all-gathered to and reduce-scattered from the
 * expert group's ranks. */
#include "model_cost_impl.h"

#include "calib_op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    double rows, active, masked_rows;
    double tiles128;            /* 128-row tiles over the touched experts (masked_rows / 64: 64-row ones) */
} rank_load;

/* Load of the busiest rank: rows, touched experts, masked rows; uniform:
 * every expert equally loaded, else the routing probabilities c->p. T
 * tokens send their rows; Tt <= T of them route independently (the rest
 * repeat one of those, as a CUDA graph's padding rows do) and decide which
 * experts are touched. */
static void busiest_load(const model_cost *c, double T, double Tt, int uniform, rank_load *out)
{
    const double k = c->m.top_k, E = c->m.experts, El = c->experts_local;
    memset(out, 0, sizeof *out);
    if (!(T > 0)) return;
    if (uniform) {
        double miss = log1p(-k / E);
        double pa = k >= E ? 1.0 : -expm1(Tt * miss);
        double per = T * k / E;
        out->rows = El * per;
        out->active = El * pa;
        out->masked_rows = El * pa * ceil(per / pa / COST_MASKED_TILE) * COST_MASKED_TILE;
        out->tiles128 = El * pa * ceil(per / pa / 128.0);
        return;
    }
    double best = -1;
    for (int32_t r = 0; r < c->l.ep; r++) {
        rank_load x = {0, 0, 0, 0};
        for (int32_t j = 0; j < c->experts_local; j++) {
            int32_t i = r * c->experts_local + j;
            double Ai = T * k * c->p[i];
            double pa = isinf(c->log_miss[i]) ? 1.0 : -expm1(Tt * c->log_miss[i]);
            if (!(pa > 0)) continue;
            x.rows += Ai;
            x.active += pa;
            x.masked_rows += pa * ceil(Ai / pa / COST_MASKED_TILE) * COST_MASKED_TILE;
            x.tiles128 += pa * ceil(Ai / pa / 128.0);
        }
        /* Rows decide prefill, touched experts decide decode: rank by the
         * larger of the two normalised loads. */
        double score = x.rows / (T * k / E * El + 1e-30) + x.active / (El + 1e-30);
        if (score > best) {
            best = score;
            *out = x;
        }
    }
}

/* The routing skew a grouped GEMM's perf-db query carries: expert_skew
 * in thousandths (calib_shape.skew_milli, at most CALIB_SKEW_MILLI_MAX),
 * 0 where the layer's load is uniform whatever expert_skew says. The
 * tables answer it from the calibrated skews around it, and a perf-db
 * without skewed rows as at skew 0 (calib_table.h). */
static int64_t grouped_skew_milli(const model_cost *c, int uniform)
{
    double s = uniform ? 0.0 : c->l.expert_skew;
    return s < (double)CALIB_SKEW_MILLI_MAX / 1000.0 ? (int64_t)llround(s * 1000.0) : CALIB_SKEW_MILLI_MAX;
}

/* Grouped GEMM of `rows` rows over `active` touched experts. */
static cost_op_desc grouped(const model_cost *c, const char *name, double count, double rows, double active,
                            double n, double k, int masked, double groups, int64_t skew_milli)
{
    cost_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.cls = MODEL_OPC_GEMM;
    d.count = count;
    d.m = rows;
    d.n = n;
    d.k = k;
    d.flops = 2.0 * rows * n * k;
    d.bytes = active * n * k * c->wb + rows * k * c->ab + rows * n * COST_ACT_BYTES;
    d.peak = c->peak_gemm;
    d.bw = c->bw;
    d.kernels = 1;
    d.calib_op = masked ? CALIB_OP_GROUPED_MASKED : CALIB_OP_GROUPED_CONTIG;
    d.shape[8] = (int64_t)groups;
    d.shape[0] = groups > 0 ? (int64_t)ceil(rows / groups) : 0;
    d.shape[1] = (int64_t)n;
    d.shape[2] = (int64_t)k;
    d.shape[CALIB_SHAPE_SKEW] = skew_milli;
    d.calib_wdt = 1;
    return d;
}

/* The DeepEP mode an all-to-all takes: the layout's, or with auto what
 * SGLang's --deepep-mode auto does: low-latency for a decode-only
 * iteration, normal for one with prefill; the NCCL modes are what they say. */
static model_ep_mode ep_mode_for(model_ep_mode m, int prefill)
{
    if (m != MODEL_EP_AUTO) return m;
    return prefill ? MODEL_EP_NORMAL : MODEL_EP_LOW_LATENCY;
}

int model_cost_ep_mode(const model_cost *c, int prefill)
{
    const model_layout *l = &c->l;
    if (!((l->dp > 1 || l->tp_sp) && c->moe_tp == 1 && l->ep > 1)) return -1;
    return (int)ep_mode_for(l->ep_mode, prefill);
}

/* Width of the tokens the routed experts see: the latent width of a
 * latent MoE (projected before dispatch, back after combine), else hidden. */
static double expert_width(const model_spec *m)
{
    return m->moe_latent > 0 ? m->moe_latent : m->hidden;
}

/* A memory-bound op of one kernel moving `bytes` over `rows` rows. */
static void mem_op(cost_ctx *x, const char *name, double count, double rows, double bytes)
{
    cost_op_desc d = {0};
    d.name = name;
    d.cls = MODEL_OPC_OTHER;
    d.count = count;
    d.bytes = bytes;
    d.bw = x->c->bw;
    d.kernels = 1;
    d.m = rows;
    d.calib_op = -1;
    cost_op(x, &d, 0);
}

/* The dispatch (or combine) of S tokens a rank sends, bpv bytes a value. */
static void ep_emit(cost_ctx *x, const char *name, double count, double S, double bpv, int prefill)
{
    const model_cost *c = x->c;
    model_ep_mode mode = ep_mode_for(c->l.ep_mode, prefill);
    int32_t rounds = 1;
    const double eh = expert_width(&c->m);
    if (mode == MODEL_EP_ALLTOALL) {
        /* NCCL all-to-all: the whole send buffer, S·k rows grouped by
         * destination rank (a 1/ep share of them stays on the rank). */
        cost_comm(x, name, count, MODEL_COLL_ALL_TO_ALL, c->l.ep, 1, S * c->m.top_k * eh * bpv, 0);
        return;
    }
    double t = model_comm_deepep_time(&c->net, mode, c->l.ep, S, eh, c->m.top_k, bpv, &rounds);
    char det[64] = "";
    if (x->ops) {
        if (rounds > 1)
            snprintf(det, sizeof det, "all_to_all %s ep=%d tokens=%.0f rounds=%d", model_ep_mode_name(mode),
                     c->l.ep, ceil(S), rounds);
        else
            snprintf(det, sizeof det, "all_to_all %s ep=%d tokens=%.0f", model_ep_mode_name(mode), c->l.ep, ceil(S));
    }
    /* cost_fixed records the op and its time in the totals. */
    double bytes = S * c->m.top_k * eh * bpv * (c->l.ep - 1.0) / c->l.ep;
    cost_fixed(x, name, MODEL_OPC_COMM, MODEL_BOUND_COMM, count, count * t * c->fam_time[MODEL_FAM_ALL_TO_ALL] * x->time_scale,
               count * bytes, det);
}

/* The routed experts as the engine's fused-MoE op prices them (the op
 * model's moe:<dtype> set of layout.op_backend: routing glue, permute, both
 * grouped GEMMs, activation and finalize, fitted to the engines' measured
 * kernels) for the busiest rank's load ld. Returns 1 when it priced them,
 * 0 when no set covers the experts' format, the experts are not gated
 * (ffn_plain: the op model's GEMMs are gate+up and down), the perf-db has
 * grouped-GEMM series (they price the GEMMs then), or the iteration is
 * decode-only: there the tables' fused-MoE prices exceed what the measured
 * decode steps allow (gpt-oss-120b on B200, vLLM: the table's kernel costs
 * 0.38 ms a layer at 32 tokens, 13.6 ms for 36 layers, against a measured
 * TPOT of 7.9 ms), so decode keeps the grouped GEMMs until the routing of
 * real decode batches is known (docs/cost-model.md, "Latency sources"). */
static int fused_moe(cost_ctx *x, const rank_load *ld, double seen, double count, double eh, double up, int prefill)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    if (!prefill || !c->op_sets[COST_OPV_MOE].set || m->ffn_plain || !(ld->rows > 0) || !(ld->active > 0)) return 0;
    if (c->tab && (c->series[CALIB_OP_GROUPED_CONTIG][1] || c->series[CALIB_OP_GROUPED_CONTIG][0] ||
                   c->series[CALIB_OP_GROUPED_MASKED][1] || c->series[CALIB_OP_GROUPED_MASKED][0]))
        return 0;
    const double I = m->expert_intermediate / (double)c->moe_tp;
    cost_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = "experts_fused_moe";
    d.cls = MODEL_OPC_GEMM;
    d.count = count;
    d.m = ld->rows;
    d.n = up * I;
    d.k = eh;
    d.flops = 2.0 * ld->rows * (up + 1.0) * I * eh;
    d.bytes = ld->active * (up + 1.0) * I * eh * c->wb + ld->rows * eh * (c->ab + COST_ACT_BYTES);
    d.peak = c->peak_gemm;
    d.bw = c->bw;
    d.kernels = 3; /* host launches: the GEMMs and the activation (permute and finalize ride inside) */
    d.calib_op = -1;
    d.has_op = 1;
    d.opv = COST_OPV_MOE;
    d.op.kind = MODEL_OPK_MOE;
    d.op.f[MODEL_OPF_HIDDEN] = eh;
    d.op.f[MODEL_OPF_INTER] = m->expert_intermediate;
    d.op.f[MODEL_OPF_MOE_TP] = c->moe_tp;
    d.moe_load.pairs = ld->rows;
    d.moe_load.touched = ld->active;
    d.moe_load.tile_m = ld->rows / ld->active > 64 ? 128 : 64;
    d.moe_load.row_tiles = d.moe_load.tile_m > 64 ? ld->tiles128 : ld->masked_rows / COST_MASKED_TILE;
    d.moe_load.hot = ld->rows / ld->active;
    d.moe_load.seen_pairs = seen;
    d.moe_load.small_m = m->top_k > 0 && seen / m->top_k <= (double)m->experts / c->l.ep;
    cost_op(x, &d, 0);
    return 1;
}

/* The routed experts as grouped GEMMs (no measured or fitted fused-MoE):
 * contiguous (rows packed, permuted before and after) or masked (every
 * touched expert pays whole 64-row tiles), then the activation. */
static void moe_grouped(cost_ctx *x, const cost_agg *a, const rank_load *ld, double count, double eh, double up,
                        int a2a, int uniform)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double I = m->expert_intermediate / (double)c->moe_tp, El = c->experts_local;
    const int64_t sk = grouped_skew_milli(c, uniform);
    cost_op_desc cg = grouped(c, m->ffn_plain ? "experts_up" : "experts_gate_up", count, ld->rows, ld->active, up * I,
                              eh, 0, El, sk);
    cost_op_desc cd = grouped(c, "experts_down", count, ld->rows, ld->active, eh, I, 0, El, sk);
    cost_op_desc pm = {0};
    pm.name = "moe_permute";
    pm.cls = MODEL_OPC_OTHER;
    pm.count = count;
    pm.bytes = 2.0 * ld->rows * eh * c->ab + 2.0 * ld->rows * eh * COST_ACT_BYTES;
    pm.bw = c->bw;
    pm.kernels = 2;
    /* Launched inside the engines' fused-MoE op (TensorRT-LLM's expand /
     * finalize kernels), not as host launches of their own. */
    pm.in_fused_op = 1;
    pm.m = ld->rows;
    pm.calib_op = -1;
    /* Masked: every touched expert pays whole 64-row tiles. */
    cost_op_desc mg = grouped(c, m->ffn_plain ? "experts_up" : "experts_gate_up", count, ld->masked_rows, ld->active,
                              up * I, eh, 1, El, sk);
    cost_op_desc md = grouped(c, "experts_down", count, ld->masked_rows, ld->active, eh, I, 1, El, sk);
    /* Low-latency dispatch delivers the masked layout; anything else
     * delivers tokens by source and the engines permute them. */
    const int ll = a2a && ep_mode_for(l->ep_mode, a->Tp > 0) == MODEL_EP_LOW_LATENCY;
    int masked = l->moe_gemm == MODEL_MOE_GEMM_MASKED || (l->moe_gemm == MODEL_MOE_GEMM_AUTO && ll);
    double rows = masked ? ld->masked_rows : ld->rows;
    if (masked && !ll) pm.name = "moe_scatter"; /* into the experts' slots and back */
    if (!(masked && ll)) cost_op(x, &pm, 0);
    cost_op(x, masked ? &mg : &cg, 0);
    mem_op(x, "experts_act", count, rows, rows * I * ((up + 1.0) * COST_ACT_BYTES + (c->ab < COST_ACT_BYTES ? c->ab : 0)));
    cost_op(x, masked ? &md : &cd, 0);
}

/* The shared experts, split over TP like a dense MLP. */
static void moe_shared(cost_ctx *x, double count, double T, double up)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double h = m->hidden;
    double Is = (double)m->shared_experts * m->expert_intermediate / l->tp;
    cost_op_desc sg;
    cost_gemm(&sg, c, m->ffn_plain ? "shared_up" : "shared_gate_up", count, T, up * Is, h,
              c->wb_part[MODEL_PART_SHARED], c->ab_part[MODEL_PART_SHARED],
              c->peak_part[MODEL_PART_SHARED]);
    cost_op(x, &sg, 0);
    mem_op(x, "shared_act", count, T, T * Is * (up + 1.0) * COST_ACT_BYTES);
    cost_op_desc sd;
    cost_gemm(&sd, c, "shared_down", count, T, h, Is, c->wb_part[MODEL_PART_SHARED],
              c->ab_part[MODEL_PART_SHARED], c->peak_part[MODEL_PART_SHARED]);
    cost_op(x, &sd, 0);}

/* A latent-MoE projection of the Tr routed tokens (weights replicated, in
 * the experts' format). */
static void moe_latent_gemm(cost_ctx *x, const char *name, double count, double Tr, double n, double k)
{
    const model_cost *c = x->c;
    cost_op_desc g;
    cost_gemm(&g, c, name, count, Tr, n, k, c->wb_part[MODEL_PART_EXPERT], c->ab_part[MODEL_PART_EXPERT],
              c->peak_part[MODEL_PART_EXPERT]);
    cost_op(x, &g, 0);
}

void cost_moe(cost_ctx *x, const cost_agg *a, double count, int uniform)
{
    const model_cost *c = x->c;
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double T = a->T, h = m->hidden;
    if (!(count > 0) || !(T > 0)) return;
    const int distinct = l->dp > 1 || l->tp_sp;
    const double Tr = l->tp_sp ? T / l->tp : T; /* tokens this rank routes */
    cost_op_desc rt;
    cost_gemm(&rt, c, "router", count, Tr, m->experts, h, 2.0, COST_ACT_BYTES, c->peak_bf16);
    cost_op(x, &rt, 0);
    mem_op(x, "topk", count, Tr, Tr * m->experts * 4.0 * 2.0);

    /* The tp·dp ranks form R = tp·dp/(moe_tp·ep) replicated expert groups
     * of moe_tp·ep ranks; a group serves 1/R of the tokens (all of them
     * when R = 1). S is one rank's share of what it sends. */
    const int32_t G = c->moe_tp * l->ep;
    const double R = (double)(l->tp * l->dp) / G;
    const double T_all = (a->T_all > 0 ? a->T_all : T * l->dp) / R;
    const double S = l->tp > 1 ? T / l->tp : T;
    const int a2a = model_cost_ep_mode(c, 0) >= 0 && l->ep_mode != MODEL_EP_ALLGATHER;
    const int nccl_a2a = a2a && l->ep_mode == MODEL_EP_ALLTOALL;
    const int gathered = distinct && !a2a && G > 1;
    /* Latent MoE: every rank projects its tokens down before routing them
     * (weights replicated, in the experts' format) and back up after. */
    const double eh = expert_width(m), up = m->ffn_plain ? 1.0 : 2.0;
    if (m->moe_latent > 0) moe_latent_gemm(x, "moe_latent_down", count, Tr, eh, h);
    /* NCCL all-to-all: the S tokens copied out to S·k rows in destination
     * order (read once, written k times), and after the combine the k rows
     * read back and summed with the routing weights into S. */
    if (nccl_a2a) mem_op(x, "ep_pack", count, S * m->top_k, S * eh * c->ab * (1.0 + m->top_k));
    if (a2a) ep_emit(x, "ep_dispatch", count, S, c->ab, a->Tp > 0);
    if (gathered) cost_comm(x, "moe_all_gather", count, MODEL_COLL_ALL_GATHER, G, 1, T_all * eh * c->ab, 0);

    /* CUDA-graph padding rows that are one dummy request repeated
     * (TensorRT-LLM) touch one token's top-k experts between them, not
     * top_k each; stale-buffer padding (vLLM, SGLang) routes row by row. */
    const double pad = l->pad_one_token ? a->pad_all / R : 0, T_touch = T_all - pad + (pad < 1 ? pad : 1);
    rank_load ld;
    busiest_load(c, T_all, T_touch, uniform, &ld);
    /* Measured fused-MoE rows (the engine's, else the fastest) price the
     * experts whole: permutes, both GEMMs and the activation; else the
     * engine's fitted fused-MoE op model; else the grouped GEMMs. */
    /* The pairs the rank's fused-MoE kernels see: only its own after an
     * all-to-all dispatch, else those of every token it holds (replicated or
     * gathered), other ranks' experts' masked. */
    const double seen = a2a ? ld.rows : T_all * m->top_k;
    if (!(cost_moe_db(x, count, T_all, eh, 3) > 0) && !fused_moe(x, &ld, seen, count, eh, up, a->Tp > 0))
        moe_grouped(x, a, &ld, count, eh, up, a2a, uniform);
    if (a2a) ep_emit(x, "ep_combine", count, S, COST_ACT_BYTES, a->Tp > 0);
    if (nccl_a2a) mem_op(x, "ep_unpack", count, S * m->top_k, S * eh * COST_ACT_BYTES * (1.0 + m->top_k));
    if (gathered)
        cost_comm(x, "moe_reduce_scatter", count, MODEL_COLL_REDUCE_SCATTER, G, 1, T_all * eh * COST_ACT_BYTES, 0);
    if (m->moe_latent > 0) moe_latent_gemm(x, "moe_latent_up", count, Tr, h, eh);
    if (m->shared_experts > 0) moe_shared(x, count, T, up);
}
