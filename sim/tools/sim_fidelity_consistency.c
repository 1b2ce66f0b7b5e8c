/* sim_fidelity_consistency — flags the measured rows that no deployment of
 * their stated layout could have produced (sim_fidelity.h,
 * sim_fidelity_flag_inconsistent, sim_fidelity_roofline_of). Owns nothing;
 * writes only the rows' `inconsistent` reasons, `replicas` and `assumed`.
 * sim_fidelity_roofline_of fails (SIM_* code, reason in err) when the row's
 * scenario, model, GPU or layout does not build a cost model; the flagging
 * cannot fail (a row whose cost model does not build is left unchecked:
 * its replay reports the same error).
 *
 * Little's law. In a closed loop of c clients a request spends TTFT waiting
 * for its first token and D = (mean output length − 1) × TPOT decoding, so
 * the deployment completes c / (TTFT + D) requests a second and
 * c·D / (TTFT + D) requests are decoding at any time.
 *
 * 1. The roofline. That rate of prompts of the mean input length, and
 *    1/TPOT decode steps a second (each decoding request gains one token a
 *    step; 1 + k with the row's k MTP draft tokens) of that decoding batch
 *    at the mean context (input + half the output), are work: FLOPs and
 *    HBM bytes on the busiest GPU, as the cost model's op list counts them
 *    at the row's layout (weights once per step, the routed experts the
 *    batch touches, the batch's KV; collectives and host work left out, so
 *    the work is a floor). Over the catalogue GPU's dense peak at the row's
 *    dtype (the fastest format the row computes in, used for every op: a
 *    floor again) and its HBM bandwidth these are loads; a measurement
 *    needing more than FID_ROOF_SLACK of them is no run of that deployment.
 *    The routed experts' bytes are a floor too: the cost model reads the
 *    experts a batch touches under uniform routing (a balanced router's
 *    average), while a step must read at least one request's top-k.
 *    FID_ROOF_SLACK = 10/9 is what Little's law can overstate the load by:
 *    it takes every client busy for the whole run, while a client's last
 *    request may end up to one request lifetime before the run does; with
 *    the ten requests per client of the benchmark runs (the replay's
 *    FID_WAVES) at least 9/10 of the clients are in flight on average. On
 *    silicon-dev.csv the rows within the bound reach at most 0.85 of it
 *    (dense models' decode at 70-85 % of HBM bandwidth). Disaggregated
 *    rows: the prefill pool's FLOPs over its workers, the decode pool's
 *    steps over its workers.
 *    Where an aggregated row's concurrency is k·batch_size·attention DP
 *    (k ≥ 2: the columns give one instance's batch) and its load at k
 *    instances of the layout is within the bound, the row is a run of k
 *    replicas and replays as such (sim_fidelity_row.replicas, `assumed`);
 *    any other row beyond the bound is scored apart, its reason naming the
 *    bound and the figures. On silicon-dev.csv: TensorRT-LLM 1.3.0rc5's
 *    Qwen3-32B NVFP4 TP2 row of 416 clients at batch 13 (0.72 s TTFT for
 *    15k-token prompts: 55 prompts a second, 3.1× two B200s' FP4 peak;
 *    32 replicas of 13 clients need 0.10 of it).
 * 2. The deployment's other rows. A decode step of a larger batch is never
 *    faster than one of a smaller batch of the same deployment (same
 *    backend, model, GPU, dtype, layout, input and output lengths and
 *    client). A row whose measured TPOT is below FID_TPOT_FLOOR of the TPOT
 *    the same deployment measured with fewer clients than its decoding count
 *    cannot be a run of c clients all served: on silicon-dev.csv these are
 *    vLLM gpt-oss-120b H100 runs at 512 clients (20–24 s TTFT with a TPOT
 *    of 4.5–5.6 ms, the speed of 4–8 clients, where 88–92 must have been
 *    decoding and 64 clients measured 9.7–16.7 ms). The bound leaves
 *    run-to-run noise and configuration drift between runs of one sweep
 *    alone: at 0.7 it would also take TensorRT-LLM B200 DeepSeek-R1 pairs
 *    whose 4-client run decodes 1.4–1.7× slower than its 8-client run (an
 *    MTP setting that differs between the runs, which nothing in the CSV
 *    marks).
 * Such rows are simulated and scored apart (their error is the run's, not
 * the model's), never dropped.
 * 3. The client's connection pool. benchmark_serving sends through one
 *    aiohttp session, whose connector holds FID_CLIENT_POOL = 100
 *    connections unless the script sets another limit; a request sent
 *    while all are busy waits in the client, and its TTFT (timed from the
 *    send) counts the wait. With c clients over P connections the engine
 *    holds at most P requests and each waits about (c / P − 1) × its
 *    decode time D for a connection, so such a run shows (a) at most P
 *    requests decoding by Little's law and (b) a TTFT of at least
 *    (c / P − 1) × D. An aggregated row of c ≥ 2P clients showing both
 *    replays with the pool (sim_fidelity_row.client_pool, `assumed`);
 *    c ≥ 2P keeps out the runs where a slow prefill alone keeps a few
 *    clients from decoding (at c = 128, 1k/128 runs decode 63–98 of
 *    their clients with nothing capping them). On silicon-dev.csv: the 9
 *    vLLM gpt-oss-120b H100 runs of 512 clients measured in 2025-12 (88–98
 *    decoding at every layout, TP 2 to 8, whose KV caches differ 6×; TTFT
 *    20–462 s); the other runs of 200 clients or more decode 234 to
 *    3,000+ of them. The check runs before check 2, which still scores
 *    apart those of the 9 that decode faster than the same deployment's
 *    64-client runs. The number is the client library's default, not
 *    fitted; a run whose script raised it decodes more than 100 and is
 *    left alone. Pipeline parallelism is not checked (no
 * measured row has it: its stages overlap micro-batches, which the per-step
 * floor above does not model). */
#include "sim_fidelity.h"

#include "model_cost.h"
#include "sim_pool_layout.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A batch at least as large decoding in under this fraction of the smaller
 * batch's step time is no measurement of that batch. */
#define FID_TPOT_FLOOR 0.5
/* A measurement needing more than this many times its GPUs' peak FLOP/s or
 * HBM bandwidth is no run of its deployment (header comment). */
#define FID_ROOF_SLACK (10.0 / 9.0)
/* aiohttp's default connection pool (TCPConnector limit), the benchmark
 * client's unless its script sets one (check 3). */
#define FID_CLIENT_POOL 100
/* Op-list entries evaluated at once (grown when an iteration has more). */
#define FID_OPS 512

static int same_deployment(const sim_fidelity_row *a, const sim_fidelity_row *b)
{
    return !strcmp(a->backend, b->backend) && !strcmp(a->model, b->model) && !strcmp(a->gpu, b->gpu) &&
           !strcmp(a->dtype, b->dtype) && a->isl == b->isl && a->osl == b->osl && a->len_lo == b->len_lo &&
           a->agg.tp == b->agg.tp && a->agg.pp == b->agg.pp && a->agg.dp == b->agg.dp &&
           a->agg.moe_tp == b->agg.moe_tp && a->agg.ep == b->agg.ep && a->replicas == b->replicas;
}

/* The client's mean input and output lengths (a range's midpoint). */
static double mean_len(int32_t L, double lo)
{
    return lo < 1 ? 0.5 * (floor(L * lo) + L) : L;
}

/* Seconds a request spends decoding: (mean output − 1) × TPOT. */
static double decode_s(const sim_fidelity_row *r)
{
    double osl = mean_len(r->osl, r->len_lo);
    return (osl > 1 ? osl - 1 : 0) * r->meas_tpot_ms * 1e-3;
}

/* Requests decoding at once in the row's closed loop (Little's law). */
static double decoding(const sim_fidelity_row *r)
{
    double d = decode_s(r);
    return d > 0 ? r->concurrency * d / (r->meas_ttft_ms * 1e-3 + d) : 0;
}

/* A routed experts' op (grouped GEMMs, their activation, the fused MoE). */
static int expert_op(const model_op *o)
{
    return !strncmp(o->name, "experts_", 8);
}

/* FLOPs and HBM bytes of one iteration on the busiest GPU, the collectives
 * (bytes sent, not read) and the host's overhead left out: every op's
 * bytes, and dense_bytes those of the ops other than the routed experts'
 * (whose bytes decode_work counts apart). */
static int op_work(const model_cost *c, const model_batch *b, double *flops, double *bytes, double *dense_bytes,
                   sim_err *err)
{
    model_op buf[FID_OPS], *ops = buf;
    int32_t n = 0;
    model_cost_breakdown(c, b, ops, FID_OPS, &n, NULL);
    if (n > FID_OPS) {
        if (!(ops = malloc((size_t)n * sizeof *ops))) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        int32_t m = n;
        model_cost_breakdown(c, b, ops, m, &n, NULL);
        if (n > m) n = m;
    }
    *flops = *bytes = *dense_bytes = 0;
    for (int32_t i = 0; i < n; i++) {
        if (ops[i].cls == MODEL_OPC_COMM || ops[i].cls == MODEL_OPC_OVERHEAD) continue;
        *flops += ops[i].flops;
        *bytes += ops[i].bytes;
        if (!expert_op(&ops[i])) *dense_bytes += ops[i].bytes;
    }
    if (ops != buf) free(ops);
    return 0;
}

/* One decode step of n requests at context ctx on the busiest GPU: its
 * FLOPs, and its bytes with the routed experts' at their floor. The cost
 * model reads the experts a batch touches under uniform routing, which is
 * what a balanced router does on average, not the least a step must read
 * (routing can concentrate): the floor is one request's step, its top-k
 * experts (n requests read at least the experts one of them picks). */
static int decode_work(const model_cost *c, double n, double ctx, double *flops, double *bytes, sim_err *err)
{
    int32_t k = (int32_t)llround(n);
    if (k < 1) k = 1;
    model_batch b = {0, NULL, k, (int64_t)llround(k * ctx), 0};
    model_batch one = {0, NULL, 1, (int64_t)llround(ctx), 0};
    double all = 0, f1 = 0, b1 = 0, be = 0;
    int rc = op_work(c, &b, flops, &all, bytes, err);
    if (rc == 0) rc = op_work(c, &one, &f1, &b1, &be, err);
    if (rc == 0) *bytes += b1 - be; /* the experts' bytes of one request */
    return rc;
}

/* The cost model of pool p of the row's scenario and its GPU. */
static int pool_cost(const sim_scenario *sc, int32_t p, const model_spec *m, model_gpu *g, model_cost **c,
                     sim_err *err)
{
    model_layout l;
    int rc;
    if ((rc = model_catalog_gpu(sc->hardware.gpu, g, err)) < 0) return rc;
    if ((rc = sim_pool_layout(sc, &sc->deployment.pools[p], &l, err)) < 0) return rc;
    return model_cost_create(m, g, &l, c, err);
}

/* FLOPs of one mean prompt on the busiest GPU: dp prompts of the mean
 * input length, one per attention-DP rank (each rank then computes one). */
static int prefill_work(const model_cost *c, double isl, double *flops, sim_err *err)
{
    int32_t dp = model_cost_layout(c)->dp > 1 ? model_cost_layout(c)->dp : 1;
    model_chunk *ch = malloc((size_t)dp * sizeof *ch);
    if (!ch) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int32_t i = 0; i < dp; i++) ch[i] = (model_chunk){(int32_t)llround(isl), 0};
    model_batch b = {dp, ch, 0, 0, 0};
    double bytes = 0, dense_bytes = 0;
    int rc = op_work(c, &b, flops, &bytes, &dense_bytes, err);
    free(ch);
    return rc;
}

int sim_fidelity_roofline_of(const sim_fidelity_row *r, int32_t replicas, sim_fidelity_roofline *out,
                             sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (replicas < 1 || r->disagg) replicas = 1;
    out->replicas = replicas;
    if (r->note[0]) return sim_err_set(err, SIM_EINVAL, "%s", r->note);
    if (!(r->meas_ttft_ms > 0) || !(r->meas_tpot_ms > 0) || r->concurrency < 1)
        return sim_err_set(err, SIM_EINVAL, "no measured TTFT, TPOT and concurrency");
    sim_fidelity_row one = *r;
    one.replicas = 1; /* the layout's instance; the clients are divided below */
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    model_spec m;
    model_gpu g;
    model_cost *pc = NULL, *dc = NULL;
    int rc = sim_fidelity_row_scenario(&one, NULL, sc, err);
    if (rc == 0) rc = model_catalog_model(sc->model, &m, err);
    if (rc == 0 && sc->deployment.pools[0].parallel.pp > 1)
        rc = sim_err_set(err, SIM_ENOTSUP, "pipeline parallelism is not checked");
    if (rc == 0) rc = pool_cost(sc, 0, &m, &g, &pc, err);
    if (rc == 0 && r->disagg) rc = pool_cost(sc, 1, &m, &g, &dc, err);
    const model_cost *dec = r->disagg ? dc : pc;
    double isl = mean_len(r->isl, r->len_lo), osl = mean_len(r->osl, r->len_lo);
    double d = decode_s(r), w = r->meas_ttft_ms * 1e-3 + d;
    out->rate_per_s = r->concurrency / w;
    int32_t p_inst = r->disagg ? (r->prefill.workers > 0 ? r->prefill.workers : 1) : replicas;
    int32_t d_inst = r->disagg ? (r->decode.workers > 0 ? r->decode.workers : 1) : replicas;
    out->decoding = out->rate_per_s * d / d_inst;
    if (rc == 0) rc = prefill_work(pc, isl, &out->prefill_flops, err);
    if (rc == 0) rc = decode_work(dec, out->decoding, isl + 0.5 * osl, &out->decode_flops, &out->decode_bytes, err);
    if (rc == 0) {
        model_dtype dt = model_cost_layout(pc)->dtype;
        double peak = model_dtype_peak(&g, dt);
        out->peak_flops = peak > g.flops_bf16 ? peak : g.flops_bf16;
        out->hbm_bw = g.hbm_bw;
        out->gpus = model_cost_gpus(dec);
        int32_t dp_p = model_cost_layout(pc)->dp > 1 ? model_cost_layout(pc)->dp : 1;
        /* Each of the prefill side's dp ranks takes every dp-th prompt. */
        double prompts_per_rank = out->rate_per_s / p_inst / dp_p;
        double steps = 1.0 / (r->meas_tpot_ms * 1e-3 * (1 + (r->mtp_tokens > 0 ? r->mtp_tokens : 0)));
        out->prefill_load = prompts_per_rank * out->prefill_flops / out->peak_flops;
        out->compute_load = out->prefill_load + (r->disagg ? 0 : steps * out->decode_flops / out->peak_flops);
        out->memory_load = steps * out->decode_bytes / out->hbm_bw;
        if (!(out->peak_flops > 0) || !(out->hbm_bw > 0))
            rc = sim_err_set(err, SIM_EINVAL, "GPU %s has no peak FLOP/s or HBM bandwidth", g.name);
    }
    model_cost_destroy(pc);
    model_cost_destroy(dc);
    free(sc);
    return rc;
}

static double load_of(const sim_fidelity_roofline *f)
{
    return f->compute_load > f->memory_load ? f->compute_load : f->memory_load;
}

/* "needs 3.1x the FP peak: ..." for a row beyond the bound at one instance. */
static void roof_reason(const sim_fidelity_row *r, const sim_fidelity_roofline *f, char *buf, size_t len)
{
    int n = snprintf(buf, len, "Little's law: %d clients / (%.2f s TTFT + %.2f s decode) = %.3g requests/s, ",
                     r->concurrency, r->meas_ttft_ms * 1e-3, decode_s(r), f->rate_per_s);
    if (n < 0 || (size_t)n >= len) return;
    if (f->compute_load >= f->memory_load)
        snprintf(buf + n, len - (size_t)n,
                 "%.3g TFLOP a prompt on each GPU: %.1fx the %.0f TFLOP/s peak of %s (bound %.2fx)",
                 f->prefill_flops * 1e-12, f->compute_load, f->peak_flops * 1e-12, r->gpu, FID_ROOF_SLACK);
    else
        snprintf(buf + n, len - (size_t)n,
                 "%.0f decoding a worker: %.1f GB a %.2f ms step on each GPU is %.1fx %s's %.2f TB/s (bound %.2fx)",
                 f->decoding, f->decode_bytes * 1e-9, r->meas_tpot_ms, f->memory_load, r->gpu, f->hbm_bw * 1e-12,
                 FID_ROOF_SLACK);
}

/* Check 1 (header comment): beyond the roofline, replicas or apart. */
static void flag_roofline(sim_fidelity_row *r)
{
    if (r->note[0]) return;
    sim_fidelity_roofline f;
    sim_err e = {""};
    if (sim_fidelity_roofline_of(r, 1, &f, &e)) return;
    r->roof_checked = 1;
    r->roof_compute = f.compute_load;
    r->roof_memory = f.memory_load;
    /* A row of unknown layout replays a deployment it may not have had:
     * its loads are the replayed one's, and it is scored apart already. */
    if (r->layout_unknown || load_of(&f) <= FID_ROOF_SLACK) return;
    int64_t per = (int64_t)r->agg.batch * r->agg.dp;
    if (!r->disagg && per > 0 && r->concurrency % per == 0 && r->concurrency / per >= 2) {
        int32_t k = (int32_t)(r->concurrency / per);
        sim_fidelity_roofline fk;
        if (sim_fidelity_roofline_of(r, k, &fk, &e) == 0 && load_of(&fk) <= FID_ROOF_SLACK) {
            char t[128];
            r->replicas = k;
            r->roof_compute = fk.compute_load;
            r->roof_memory = fk.memory_load;
            r->agg.workers = k; /* shown as the layout's "xK" */
            snprintf(t, sizeof t, "%d replicas of %" PRId64 " clients (one instance would need %.1fx its roofline)",
                     k, per, load_of(&f));
            size_t n = strlen(r->assumed);
            snprintf(r->assumed + n, sizeof r->assumed - n, "%s%s", n ? "; " : "", t);
            return;
        }
    }
    roof_reason(r, &f, r->inconsistent, sizeof r->inconsistent);
}

/* Check 2 (header comment): faster than the deployment's smaller runs. */
static void flag_against_deployment(sim_fidelity_result *out, sim_fidelity_row *r, int32_t i)
{
    if (r->disagg || r->note[0] || r->inconsistent[0] || !(r->meas_tpot_ms > 0) || !(r->meas_ttft_ms > 0)) return;
    double n = decoding(r);
    const sim_fidelity_row *worst = NULL;
    for (int32_t k = 0; k < out->n_rows; k++) {
        const sim_fidelity_row *s = &out->rows[k];
        if (k == i || s->disagg || s->note[0] || s->concurrency >= r->concurrency || s->concurrency > n ||
            !same_deployment(r, s) || !(r->meas_tpot_ms < FID_TPOT_FLOOR * s->meas_tpot_ms))
            continue;
        if (!worst || s->concurrency > worst->concurrency) worst = s;
    }
    if (worst)
        snprintf(r->inconsistent, sizeof r->inconsistent,
                 "TPOT %.2f ms with %.0f of %d clients decoding (Little's law) is under half the %.2f ms "
                 "this deployment measured with %d clients",
                 r->meas_tpot_ms, n, r->concurrency, worst->meas_tpot_ms, worst->concurrency);
}

/* Check 3 (header comment): the benchmark client's connection pool. */
static void flag_client_pool(sim_fidelity_row *r)
{
    if (r->disagg || r->note[0] || r->layout_unknown || r->concurrency < 2 * FID_CLIENT_POOL ||
        !(r->meas_tpot_ms > 0) || !(r->meas_ttft_ms > 0))
        return;
    double n = decoding(r), d = decode_s(r);
    if (n > FID_CLIENT_POOL || r->meas_ttft_ms * 1e-3 < ((double)r->concurrency / FID_CLIENT_POOL - 1) * d) return;
    r->client_pool = FID_CLIENT_POOL;
    char t[128];
    snprintf(t, sizeof t, "the client's %d connections (%.0f of %d clients decoding, TTFT %.0f s)", FID_CLIENT_POOL,
             n, r->concurrency, r->meas_ttft_ms * 1e-3);
    size_t k = strlen(r->assumed);
    snprintf(r->assumed + k, sizeof r->assumed - k, "%s%s", k ? "; " : "", t);
}

void sim_fidelity_flag_inconsistent(sim_fidelity_result *out)
{
    for (int32_t i = 0; i < out->n_rows; i++) flag_client_pool(&out->rows[i]);
    for (int32_t i = 0; i < out->n_rows; i++) flag_roofline(&out->rows[i]);
    for (int32_t i = 0; i < out->n_rows; i++) flag_against_deployment(out, &out->rows[i], i);
}
