/* sim_af — see sim_af.h. */
#include "sim_af.h"
#include "sim_energy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AF_MAX_OPS 128

struct sim_af {
    const model_cost *attn, *ffn;
    int32_t n_attn, n_ffn, m;
    double attn_Bps, ffn_Bps, latency;
    int32_t layers, hidden;
    int energy;
    double attn_share, ffn_share; /* power.mem_share of each side's GPU */
    sim_af_stats st;
};

int sim_af_op_is_ffn(const char *n)
{
    static const char *const ffn_ops[] = {
        "gate_up_proj", "down_proj",      "silu_mul",      "experts_gate_up", "experts_down",
        "experts_act",  "shared_gate_up", "shared_down",   "shared_act",      "router",
        "topk",         "moe_permute",    "moe_all_gather", "moe_reduce_scatter", "ep_dispatch",
        "ep_combine",   "tp_reduce_mlp",  "tp_reduce_moe"};
    for (size_t i = 0; i < sizeof ffn_ops / sizeof *ffn_ops; i++)
        if (strcmp(n, ffn_ops[i]) == 0) return 1;
    return 0;
}

/* Ops that run once per iteration, not per layer. */
static int op_is_once(const char *n)
{
    static const char *const once[] = {"embedding", "embed_all_reduce", "lm_head",    "logits_gather",
                                       "sampling",  "final_norm",       "framework", "pp_send"};
    for (size_t i = 0; i < sizeof once / sizeof *once; i++)
        if (strcmp(n, once[i]) == 0) return 1;
    return 0;
}

int sim_af_create(const model_cost *attn, const model_cost *ffn, int32_t n_attn, int32_t n_ffn,
                  int32_t micro_batches, double link_Bps, double latency_s, sim_af **out,
                  sim_err *err)
{
    *out = NULL;
    if (n_attn < 1 || n_ffn < 1 || micro_batches < 1 || !(link_Bps > 0) || latency_s < 0)
        return sim_err_set(err, SIM_EINVAL,
                           "af: need >= 1 attention and FFN instance, >= 1 micro-batch and a positive "
                           "link bandwidth");
    sim_af *af = calloc(1, sizeof *af);
    if (!af) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    af->attn = attn;
    af->ffn = ffn;
    af->n_attn = n_attn;
    af->n_ffn = n_ffn;
    af->m = micro_batches;
    /* Activations leave over all GPUs of an attention instance; an FFN
     * instance's ingress is shared by the attention instances it serves. */
    af->attn_Bps = link_Bps * model_cost_gpus(attn);
    af->ffn_Bps = link_Bps * model_cost_gpus(ffn) * (double)n_ffn / (double)n_attn;
    af->latency = latency_s;
    af->layers = model_cost_model(attn)->layers;
    af->hidden = model_cost_model(attn)->hidden;
    *out = af;
    return SIM_OK;
}

void sim_af_destroy(sim_af *af) { free(af); }

/* b scaled by s (micro-batch split, FFN aggregation); chunks into buf. */
static model_batch scale_batch(const model_batch *b, double s, model_chunk *buf, int32_t cap)
{
    model_batch o = *b;
    o.n_decode = (int32_t)ceil(b->n_decode * s);
    o.decode_ctx_sum = (int64_t)ceil((double)b->decode_ctx_sum * s);
    o.n_pad = (int32_t)floor(b->n_pad * s);
    o.n_chunks = b->n_chunks < cap ? b->n_chunks : cap;
    for (int32_t i = 0; i < o.n_chunks; i++) {
        buf[i] = b->chunks[i];
        buf[i].tokens = (int32_t)ceil(b->chunks[i].tokens * s);
    }
    o.chunks = buf;
    return o;
}

/* One side of an iteration's ops: their time and their compute and HBM
 * busy seconds (the energy model's input). */
typedef struct {
    double t, compute, mem;
} af_side;

/* Attention-side, FFN-side and once-op times and busy seconds. */
static void split_ops(const model_cost *c, const model_batch *b, af_side *attn, af_side *ffn, af_side *once)
{
    model_op ops[AF_MAX_OPS];
    int32_t n = 0;
    model_cost_breakdown(c, b, ops, AF_MAX_OPS, &n, NULL);
    if (n > AF_MAX_OPS) n = AF_MAX_OPS;
    *attn = *ffn = *once = (af_side){0, 0, 0};
    for (int32_t i = 0; i < n; i++) {
        af_side *side = op_is_once(ops[i].name) ? once : sim_af_op_is_ffn(ops[i].name) ? ffn : attn;
        side->t += ops[i].time_s;
        side->compute += ops[i].compute_busy_s;
        side->mem += ops[i].mem_busy_s;
    }
}

double sim_af_parts_get(const sim_af *af, const model_batch *b, sim_af_parts *out)
{
    model_chunk buf_mb[256], buf_f[256];
    double inv_m = 1.0 / af->m;
    model_batch mb = scale_batch(b, inv_m, buf_mb, 256);
    model_batch fb = scale_batch(&mb, (double)af->n_attn / af->n_ffn, buf_f, 256);
    af_side a_all, f_all, once, unused1, unused2;
    split_ops(af->attn, &mb, &a_all, &unused1, &unused2);
    split_ops(af->ffn, &fb, &unused1, &f_all, &unused2);
    /* Once-per-iteration work runs on the whole batch. */
    split_ops(af->attn, b, &unused1, &unused2, &once);
    double tokens = mb.n_decode;
    for (int32_t i = 0; i < mb.n_chunks; i++) tokens += mb.chunks[i].tokens;
    double bytes = tokens * af->hidden * 2.0; /* bf16 activations */
    double bw = af->attn_Bps < af->ffn_Bps ? af->attn_Bps : af->ffn_Bps;
    sim_af_parts p;
    p.a = a_all.t / af->layers;
    p.f = f_all.t / af->layers;
    p.c = bytes / bw + af->latency;
    p.once = once.t;
    p.a_compute = a_all.compute / af->layers;
    p.a_mem = a_all.mem / af->layers;
    p.f_compute = f_all.compute / af->layers;
    p.f_mem = f_all.mem / af->layers;
    p.once_compute = once.compute;
    p.once_mem = once.mem;
    double mx = p.a > p.f ? p.a : p.f;
    if (p.c > mx) mx = p.c;
    double serial = p.a + 2 * p.c + p.f;
    p.layer = af->m * mx > serial ? af->m * mx : serial;
    p.total = af->layers * p.layer + p.once;
    p.bytes = 2.0 * af->layers * af->m * bytes;
    if (out) *out = p;
    return p.total;
}

double sim_af_iteration(void *ctx, const model_batch *b)
{
    sim_af *af = ctx;
    sim_af_parts p;
    double t = sim_af_parts_get(af, b, &p);
    af->st.iterations++;
    af->st.time_s += t;
    af->st.attn_busy_s += af->layers * af->m * p.a + p.once;
    af->st.ffn_busy_s += af->layers * af->m * p.f;
    af->st.comm_s += 2.0 * af->layers * af->m * p.c;
    af->st.bytes += p.bytes;
    if (af->energy) {
        /* Each micro-batch of each layer once on either side. */
        const double rounds = (double)af->layers * af->m;
        af->st.attn_energy_gpu_s += sim_energy_busy_s(t, rounds * p.a_compute + p.once_compute,
                                                      rounds * p.a_mem + p.once_mem, af->attn_share) *
                                    model_cost_gpus(af->attn);
        af->st.ffn_energy_gpu_s += sim_energy_busy_s(t, rounds * p.f_compute, rounds * p.f_mem, af->ffn_share) *
                                   model_cost_gpus(af->ffn) * (double)af->n_ffn / (double)af->n_attn;
    }
    return t;
}

void sim_af_enable_energy(sim_af *af, double attn_mem_share, double ffn_mem_share)
{
    af->energy = 1;
    af->attn_share = attn_mem_share;
    af->ffn_share = ffn_mem_share;
}

void sim_af_stats_get(const sim_af *af, sim_af_stats *out) { *out = af->st; }
