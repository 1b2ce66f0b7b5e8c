/* sim_search_bound — feasibility and analytic upper bounds (see
 * sim_search.h).
 *
 * A candidate is infeasible when the cost model cannot build one of its
 * instances (weights do not fit, heads or experts not divisible) or an
 * instance's KV cache cannot hold the longest request simulated. Its SLO is
 * unreachable when even one request alone breaks it: the shortest prompt's
 * prefill exceeds the TTFT bound, or a one-request decode iteration exceeds
 * the TPOT bound (every TPOT is at least that).
 *
 * The rate bound is work conservation on the cheapest iteration shapes:
 * a prompt needs in_mean tokens of prefill at the best per-token cost the
 * scheduler allows (a full token budget of chunks, or one chunk; with
 * prefix caching on, prefill is taken as free), and a reply needs
 * out_mean − 1 decode steps at the best tokens/s of a decode batch b/t(b),
 * with b capped by max_seqs, the token budget and KV capacity / the
 * token-weighted context floor, and — with a TPOT bound S — by t(b) ≤ 1.5·S
 * (the token-weighted mean iteration time a request sees is its TPOT; the
 * 1.5 leaves room for percentiles above the mean). A colocated instance is
 * bounded by the smaller of its prefill and decode rates; disaggregated
 * deployments by the smaller of their pools' rates. The context used for
 * attention is a floor (prompt length only), so the bound stays above what
 * the simulator can reach.
 *
 * A pool that decodes speculatively (scheduler.speculative, or the
 * candidate's search.draft_tokens k) is priced as sim_instance prices it: a
 * step verifies 1 + k tokens per decoding request after the draft's passes
 * (model_cost_verify_iteration + sim_spec_draft_s), and yields E tokens per
 * request, E = 1 + a1 + a1·a2 + ... the expected accepted drafts plus one
 * (sim_spec_expected_tokens). Its decode rate is b·E / t(b), a request's
 * TPOT is t(b) / E (so the one-request check is t(1) / E against the bound
 * and the batch cap t(b) / E ≤ 1.5·S), its KV holds the draft's beside the
 * target's (sim_mem_rule_pool_kv_tokens) and the longest request needs k
 * tokens more. */
#include "sim_search_impl.h"

#include "model_layout.h"
#include "sim_pool_layout.h"
#include "sim_af.h"
#include "sim_cluster.h"
#include "sim_mem_rule.h"
#include "sim_spec.h"
#include "sim_workload.h"

#include <math.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#define TPOT_SLACK 1.5

static const sim_search_costent *cost_find(const sim_search *s, const char *gpu, const sim_search_pool *p,
                                          sim_role role, int spec, double tower);

/* Bytes per GPU candidate c's pool p holds for the vision tower (sim_images_tower_bytes). */
static double pool_tower(const sim_search *s, const sim_search_cand *c, int32_t p)
{
    return sim_images_tower_bytes(&s->sc, &s->model, c->encode_instances, c->pools[p].role);
}

/* The cost entry of candidate c's pool p (its GPU, layout, role, whether it
 * speculates and the vision tower it holds). */
static const sim_search_costent *pool_cost(const sim_search *s, const sim_search_cand *c, int32_t p)
{
    return cost_find(s, c->pools[p].gpu, &c->pools[p], c->pools[p].role, sim_search_spec_pool_k(s, c, p) > 0,
                     pool_tower(s, c, p));
}

/* Requests one simulation needs to reach steady state: a decode instance
 * at capacity holds about min(max_seqs, KV capacity / mean context)
 * requests, and a run whose arrivals cover only that many per instance
 * never queues, so it would pass at any rate. Four times the deployment's
 * steady concurrency (and at least 40 per instance, and search.requests)
 * gives arrivals spanning about four request lifetimes. */
int64_t sim_search_requests_for(const sim_search *s, const sim_search_cand *c)
{
    int64_t front = 0, conc = 0;
    const sim_search_lens *L = s->n_lens > 0 ? &s->lens[0] : NULL;
    for (int32_t p = 0; p < c->n_pools; p++) {
        sim_role role = c->pools[p].role;
        if (role == SIM_ROLE_FFN) continue;
        front += c->pools[p].instances;
        if (role == SIM_ROLE_PREFILL) continue;
        int64_t b = c->max_seqs;
        const sim_search_costent *e = pool_cost(s, c, p);
        if (e && e->cost && L && !s->sc.cache.enabled) {
            double ctx = L->in_mean + 0.5 * L->out_mean;
            int64_t bm = (int64_t)((double)e->kv_tokens / (ctx > 1 ? ctx : 1));
            if (bm < b) b = bm;
        }
        conc += b * c->pools[p].instances;
    }
    int64_t n = s->sc.search.requests;
    if (n < 40 * front) n = 40 * front;
    if (n < 4 * conc) n = 4 * conc;
    if (n > 1000000) n = 1000000;
    return n;
}

static int lens_compute(const sim_search *s, int64_t requests, sim_search_lens *L, sim_err *err)
{
    sim_workload_cfg w = s->sc.workload;
    sim_workload *wl = NULL;
    int rc;
    w.requests = requests;
    w.trace.time_scale = 1.0;
    w.trace.rate_scale = 1.0;
    /* A closed-loop class is drawn at t = 0, where its duration_s never
     * ends it: bound it by the same count. */
    for (int32_t i = 0; i < w.n_classes; i++)
        if (w.classes[i].arrival.process == SIM_ARRIVAL_CLOSED &&
            (w.classes[i].requests == 0 || w.classes[i].requests > requests))
            w.classes[i].requests = requests;
    if ((rc = sim_workload_create(&w, s->sc.seed, &wl, err)) < 0) return rc;
    sim_search_img_draw *img = NULL;
    if ((rc = sim_search_img_open(s, &img, err)) < 0) {
        sim_workload_destroy(wl);
        return rc;
    }
    int closed = sim_workload_is_closed(wl);
    /* Classes: the open-loop classes' merged stream, then the closed-loop
     * classes' clients in turn until every class is spent. */
    int32_t clients = w.n_classes > 0 ? sim_workload_clients(wl) : 0, k = 0;
    int open = !closed && (w.n_classes == 0 || sim_workload_has_open(wl));
    double sin = 0, sout = 0, sio = 0;
    sim_time t0 = 0, t1 = 0;
    memset(L, 0, sizeof *L);
    L->n = 0;
    L->in_min = 1e300;
    for (;;) {
        sim_request_spec r;
        int got;
        if (closed) {
            got = sim_workload_sample(wl, 0, &r);
        } else if (open) {
            got = sim_workload_next(wl, &r);
            if (got == 0 && clients > 0) {
                open = 0;
                continue;
            }
        } else if (clients > 0) {
            got = sim_workload_sample_client(wl, 0, k, &r);
            k = (k + 1) % clients;
            if (got == 0 && !sim_workload_spent(wl)) continue;
        } else {
            got = 0;
        }
        if (got < 0) {
            sim_workload_destroy(wl);
            sim_search_img_close(img);
            return sim_err_set(err, got, "out of memory drawing the workload");
        }
        if (got == 0) break;
        /* Image tokens join the prompt, as the cluster adds them at dispatch. */
        const int64_t in = (int64_t)r.input_tokens + (img ? sim_search_img_next(img, L) : 0);
        if (L->n == 0) t0 = r.arrival;
        t1 = r.arrival;
        L->n++;
        sin += (double)in;
        sout += r.output_tokens;
        sio += (double)in * r.output_tokens;
        if (in < L->in_min) L->in_min = (double)in;
        if (in + r.output_tokens > L->longest) L->longest = in + r.output_tokens;
        sim_workload_release(wl, &r);
    }
    sim_workload_destroy(wl);
    sim_search_img_close(img);
    if (L->n == 0) return sim_err_set(err, SIM_EINVAL, "search: the workload produces no requests");
    L->in_mean = sin / (double)L->n;
    L->out_mean = sout / (double)L->n;
    L->ctx_tok = sout > 0 ? sio / sout : L->in_mean;
    if (L->ctx_tok > L->in_mean) L->ctx_tok = L->in_mean;
    if (s->sc.workload.trace.format != SIM_TRACE_NONE && L->n > 1 && t1 > t0)
        L->base_rate = (double)(L->n - 1) / ((double)(t1 - t0) / SIM_NS_PER_S);
    return 0;
}

int sim_search_lens_get(sim_search *s, int64_t requests, const sim_search_lens **out, sim_err *err)
{
    for (int32_t i = 0; i < s->n_lens; i++)
        if (s->lens[i].n_req_key == requests) {
            *out = &s->lens[i];
            return 0;
        }
    if (s->n_lens == (int32_t)(sizeof s->lens / sizeof s->lens[0]))
        return sim_err_set(err, SIM_ERANGE, "search: too many distinct request counts");
    sim_search_lens *L = &s->lens[s->n_lens];
    int rc = lens_compute(s, requests, L, err);
    if (rc < 0) return rc;
    L->n_req_key = requests;
    s->n_lens++;
    *out = L;
    return 0;
}

static const sim_search_lens *lens_find(const sim_search *s, int64_t requests)
{
    for (int32_t i = 0; i < s->n_lens; i++)
        if (s->lens[i].n_req_key == requests) return &s->lens[i];
    return NULL;
}

/* The scenario pool of the same role, else the first: its scheduler
 * settings (memory utilisation, reserve, overheads, block size) and the
 * layout options the search does not vary carry over. */
const sim_pool_cfg *sim_search_template_pool(const sim_scenario *sc, sim_role role, int32_t *idx)
{
    for (int32_t p = 0; p < sc->deployment.n_pools; p++)
        if (sc->deployment.pools[p].role == role) {
            *idx = p;
            return &sc->deployment.pools[p];
        }
    *idx = 0;
    return &sc->deployment.pools[0];
}

void sim_search_pool_cfg(const sim_search *s, const sim_search_cand *c, int32_t p, sim_pool_cfg *out)
{
    const sim_search_pool *sp = &c->pools[p];
    int32_t ti;
    *out = *sim_search_template_pool(&s->sc, sp->role, &ti);
    out->role = sp->role;
    out->instances = sp->instances;
    out->gpu[0] = '\0';
    out->parallel.tp = sp->tp;
    out->parallel.pp = sp->pp;
    out->parallel.dp = sp->dp;
    out->parallel.ep = sp->ep;
    out->parallel.dcp = sp->dcp;
    out->parallel.sp = sp->sp;
    out->scheduler.max_seqs = c->max_seqs;
    out->scheduler.max_batched_tokens = c->max_batched_tokens;
    out->scheduler.chunk_tokens = c->chunk_tokens;
    sim_search_spec_apply(c, p, out);
    sim_search_autoscale_apply(s, c, p, out);
}

static const sim_search_costent *cost_find(const sim_search *s, const char *gpu, const sim_search_pool *p,
                                          sim_role role, int spec, double tower)
{
    for (int32_t i = 0; i < s->n_costs; i++) {
        const sim_search_costent *e = &s->costs[i];
        if (e->tp == p->tp && e->pp == p->pp && e->dp == p->dp && e->ep == p->ep && e->dcp == p->dcp &&
            e->sp == p->sp && e->role == role && e->spec == spec && e->tower == tower && strcmp(e->gpu, gpu) == 0)
            return e;
    }
    return NULL;
}

int sim_search_costs_build(sim_search *s, sim_err *err)
{
    for (int32_t i = 0; i < s->n; i++) {
        const sim_search_cand *c = &s->cands[i];
        for (int32_t p = 0; p < c->n_pools; p++) {
            if (pool_cost(s, c, p)) continue;
            if (s->n_costs == (int32_t)(sizeof s->costs / sizeof s->costs[0]))
                return sim_err_set(err, SIM_ERANGE, "search: more than %d distinct (gpu, layout, role, tower) combinations",
                                   (int)(sizeof s->costs / sizeof s->costs[0]));
            sim_search_costent *e = &s->costs[s->n_costs++];
            memset(e, 0, sizeof *e);
            const char *gpu = c->pools[p].gpu;
            snprintf(e->gpu, sizeof e->gpu, "%s", gpu);
            e->tp = c->pools[p].tp, e->pp = c->pools[p].pp, e->dp = c->pools[p].dp;
            e->ep = c->pools[p].ep, e->dcp = c->pools[p].dcp, e->sp = c->pools[p].sp;
            e->role = c->pools[p].role;
            e->tower = pool_tower(s, c, p);
            sim_pool_cfg pc;
            sim_search_pool_cfg(s, c, p, &pc);
            e->spec = pc.scheduler.spec.draft_tokens > 0;
            model_gpu g;
            model_layout l;
            sim_err e2 = {{0}};
            char ln[48];
            sim_search_layout_name(&c->pools[p], ln, sizeof ln);
            if (model_catalog_gpu(gpu, &g, &e2) < 0 || sim_pool_layout(&s->sc, &pc, &l, &e2) < 0 ||
                model_cost_create(&s->model, &g, &l, &e->cost, &e2) < 0) {
                if (s->hetero)
                    snprintf(e->err, sizeof e->err, "%s %.40s on %.40s: %.200s", sim_role_name(e->role), ln, gpu, e2.msg);
                else
                    snprintf(e->err, sizeof e->err, "%s %.40s: %.250s", sim_role_name(e->role), ln, e2.msg);
                e->cost = NULL;
                continue;
            }
            if (e->role == SIM_ROLE_FFN) continue;
            /* As the cluster does (recurrent state per running sequence included;
             * a speculating pool's draft beside the target). */
            if (sim_mem_rule_pool_kv_tokens(&pc.scheduler, &s->model, &g, &l, e->cost, e->tower, &e->draft,
                                            &e->kv_tokens, &e2) < 0) {
                snprintf(e->err, sizeof e->err, "%s %.40s on %.40s: %.200s", sim_role_name(e->role), ln, gpu, e2.msg);
                model_cost_destroy(e->cost);
                e->cost = NULL;
            }
        }
    }
    return 0;
}

typedef double (*iter_fn)(const void *ctx, const model_batch *b);

static double iter_model(const void *ctx, const model_batch *b) { return model_cost_iteration(ctx, b, NULL); }
/* With pipeline parallelism the instance keeps micro_batches batches in
 * flight and delivers one every pipeline interval: what its throughput is
 * bounded by (its latencies stay iter_model's, a batch's traversal). */
static double iter_pipe(const void *ctx, const model_batch *b)
{
    const model_layout *l = model_cost_layout(ctx);
    double t = model_cost_pipeline_interval(ctx, b, l->micro_batches, NULL);
    return t >= 0 ? t : model_cost_iteration(ctx, b, NULL);
}
static double iter_af(const void *ctx, const model_batch *b) { return sim_af_parts_get(ctx, b, NULL); }
/* A speculating instance's step, as sim_instance prices it: the target
 * verifies 1 + k tokens per decoding request, after the draft's passes. */
typedef struct {
    const model_cost *cost;
    const sim_spec *spec;
    int32_t width;           /* 1 + k */
} spec_step;
static double iter_spec(const void *ctx, const model_batch *b)
{
    const spec_step *x = ctx;
    return model_cost_verify_iteration(x->cost, b, x->width, NULL) + sim_spec_draft_s(x->spec, b);
}

/* Best prefill seconds per token: a full budget of chunks, or one chunk. */
static double prefill_s_per_token(iter_fn fn, const void *ctx, const sim_search_cand *c)
{
    model_chunk ch[256];
    int32_t chunk = c->chunk_tokens, budget = c->max_batched_tokens;
    int32_t n = (budget + chunk - 1) / chunk;
    if (n > c->max_seqs) n = c->max_seqs;
    if (n > 256) n = 256;
    int32_t left = budget, tot = 0;
    for (int32_t i = 0; i < n; i++) {
        ch[i].tokens = left < chunk ? left : chunk;
        ch[i].cached = 0;
        left -= ch[i].tokens;
        tot += ch[i].tokens;
    }
    model_batch full = {.n_chunks = n, .chunks = ch};
    double best = fn(ctx, &full) / tot;
    model_batch one = {.n_chunks = 1, .chunks = ch};
    double t1 = fn(ctx, &one) / ch[0].tokens;
    return t1 < best ? t1 : best;
}

static double decode_time(iter_fn fn, const void *ctx, int64_t b, double ctx_tok)
{
    model_batch mb = {.n_decode = (int32_t)b, .decode_ctx_sum = (int64_t)(ctx_tok * (double)b)};
    if (mb.decode_ctx_sum < b) mb.decode_ctx_sum = b;
    return fn(ctx, &mb);
}

/* Best decode tokens/s of one instance; 0 when a single request's iteration
 * already breaks the TPOT bound (sets *why). fn gives a batch's latency,
 * thr the time per batch delivered (fn's, or the pipeline interval with
 * `lanes` batches of b in flight). Each request gains step_tokens tokens a
 * step: 1, or with speculative decoding the expected 1 + accepted drafts,
 * so its TPOT is the step's time over step_tokens. */
static double decode_tok_rate(iter_fn fn, iter_fn thr, int32_t lanes, const void *ctx, const sim_search_cand *c,
                              int64_t kv_tokens, const sim_search_lens *L, double tpot_s, double step_tokens,
                              int caching, char *why, size_t wl)
{
    double t1 = decode_time(fn, ctx, 1, L->in_min);
    if (tpot_s > 0 && t1 / step_tokens > tpot_s) {
        if (step_tokens > 1)
            snprintf(why, wl, "one request's speculative decode step takes %.1f ms for %.2f expected tokens: "
                     "%.2f ms a token > TPOT bound %.1f ms", t1 * 1e3, step_tokens, t1 / step_tokens * 1e3,
                     tpot_s * 1e3);
        else
            snprintf(why, wl, "one request's decode step takes %.1f ms > TPOT bound %.1f ms", t1 * 1e3, tpot_s * 1e3);
        return 0;
    }
    int64_t bmax = c->max_seqs;
    if (c->max_batched_tokens < bmax) bmax = c->max_batched_tokens;
    if (!caching && L->ctx_tok > 0) {
        int64_t bm = (int64_t)((double)kv_tokens / L->ctx_tok) / lanes;
        if (bm < bmax) bmax = bm;
    }
    if (bmax < 1) bmax = 1;
    double best = 0;
    for (int64_t b = 1;; b = b * 2 > bmax ? bmax : b * 2) {
        double t = decode_time(fn, ctx, b, L->ctx_tok);
        if (b > 1 && tpot_s > 0 && t / step_tokens > TPOT_SLACK * tpot_s) break;
        if (thr != fn) t = decode_time(thr, ctx, b, L->ctx_tok);
        if ((double)b * step_tokens / t > best) best = (double)b * step_tokens / t;
        if (b == bmax) break;
    }
    return best;
}

/* 1 when catalogue names a and b are one GPU type (aliases resolved). */
static int same_gpu(const char *a, const char *b)
{
    if (strcasecmp(a, b) == 0) return 1;
    model_gpu ga, gb;
    sim_err e = {{0}};
    return model_catalog_gpu(a, &ga, &e) == 0 && model_catalog_gpu(b, &gb, &e) == 0 && strcmp(ga.name, gb.name) == 0;
}

/* The images' encoders (workload.images) of candidate c: sets enc_rate to
 * the requests/s its encode pool can take (INFINITY without one: N
 * encoders each take one request's items per pass, so N / the mean pass),
 * coloc_s[p] to the mean pass pool p's instances add to a request's
 * prefill (colocated encoding), first_s[p] to the fewest items' pass a
 * request waits for before pool p's first chunk. 0 when c is infeasible
 * (reason in res). */
static int encode_bound(const sim_search *s, const sim_search_cand *c, const sim_search_costent *const *ent,
                        const sim_search_lens *L, double *enc_rate, double *coloc_s, double *first_s,
                        sim_search_result *res)
{
    *enc_rate = INFINITY;
    for (int32_t p = 0; p < c->n_pools; p++) coloc_s[p] = first_s[p] = 0;
    if (!s->images) return 1;
    const int32_t N = c->encode_instances > 0 ? c->encode_instances : 0;
    double min_s = 0;
    if (N == 0) {
        /* The front instances (colocated, prefill) encode their requests' items on their tp GPUs. */
        for (int32_t p = 0; p < c->n_pools; p++) {
            sim_role role = c->pools[p].role;
            if (role != SIM_ROLE_COLOCATED && role != SIM_ROLE_PREFILL) continue;
            if (c->pools[p].pp > 1) {
                char ln[48];
                sim_search_layout_name(&c->pools[p], ln, sizeof ln);
                res->status = SIM_CAND_INFEASIBLE;
                snprintf(res->reason, sizeof res->reason, "%s %s: encoding images in an instance with pipeline "
                         "stages is not modelled (an encode pool, search.encode_instances > 0, is)",
                         sim_role_name(role), ln);
                return 0;
            }
            coloc_s[p] = sim_search_encode_mean_s(s, ent[p]->cost, c->pools[p].tp, L, &min_s);
            first_s[p] = min_s;
        }
        return 1;
    }
    /* The encoders are priced with the cost model of the first pool on their GPU type, as the cluster does. */
    int32_t q = -1;
    for (int32_t p = 0; p < c->n_pools && q < 0; p++)
        if (same_gpu(c->pools[p].gpu, c->encode_gpu)) q = p;
    if (q < 0) {
        res->status = SIM_CAND_INFEASIBLE;
        snprintf(res->reason, sizeof res->reason, "deployment.encode.gpu: %.40s runs no pool of this candidate "
                 "(the tower is priced with a pool's cost model on the same GPU)", c->encode_gpu);
        return 0;
    }
    const double pass = sim_search_encode_mean_s(s, ent[q]->cost, 1, L, &min_s);
    if (pass > 0) *enc_rate = (double)N / pass;
    for (int32_t p = 0; p < c->n_pools; p++)
        if (c->pools[p].role == SIM_ROLE_COLOCATED || c->pools[p].role == SIM_ROLE_PREFILL) first_s[p] = min_s;
    return 1;
}

/* Each pool's cost model, its draft's k, and whether its KV holds the
 * longest request. 1, or 0 with res infeasible. */
static int bound_pool_costs(const sim_search *s, const sim_search_cand *c, const sim_search_lens *L,
                            const sim_search_costent **ent, int32_t *spec_k, sim_search_result *res)
{
    for (int32_t p = 0; p < c->n_pools; p++) {
        ent[p] = pool_cost(s, c, p);
        if (!ent[p] || !ent[p]->cost) {
            res->status = SIM_CAND_INFEASIBLE;
            snprintf(res->reason, sizeof res->reason, "%.250s", ent[p] ? ent[p]->err : "no cost model");
            return 0;
        }
        /* A speculating instance holds a request's k draft tokens' KV beside its own. */
        if (ent[p]->draft) spec_k[p] = sim_search_spec_pool_k(s, c, p);
        if (c->pools[p].role != SIM_ROLE_FFN && ent[p]->kv_tokens < L->longest + spec_k[p]) {
            char ln[48];
            sim_search_layout_name(&c->pools[p], ln, sizeof ln);
            if (s->hetero) snprintf(ln + strlen(ln), sizeof ln - strlen(ln), " on %.30s", c->pools[p].gpu);
            res->status = SIM_CAND_INFEASIBLE;
            snprintf(res->reason, sizeof res->reason,
                     "%s %s: KV cache holds %lld tokens, the longest request needs %lld", sim_role_name(c->pools[p].role),
                     ln, (long long)ent[p]->kv_tokens, (long long)(L->longest + spec_k[p]));
            return 0;
        }
    }
    return 1;
}

/* The attention-FFN pipeline of an af / pd+af candidate (*af NULL for the
 * other modes). 1, or 0 with res infeasible. */
static int bound_af(const sim_search *s, const sim_search_cand *c, const sim_search_costent *const *ent, sim_af **af,
                    sim_search_result *res)
{
    const sim_scenario *sc = &s->sc;
    *af = NULL;
    if (c->mode != SIM_MODE_AF && c->mode != SIM_MODE_PD_AF) return 1;
    int32_t a = c->mode == SIM_MODE_AF ? 0 : 1, f = a + 1;
    model_gpu g;
    sim_err e2 = {{0}};
    double nic = 0;
    /* Activations cross between the two pools' GPUs: the slower NIC of the two. */
    if (model_catalog_gpu(c->pools[a].gpu, &g, &e2) == 0) nic = sim_network_nic_Bps(&sc->network, g.nic_bw);
    if (strcmp(c->pools[f].gpu, c->pools[a].gpu) != 0 && model_catalog_gpu(c->pools[f].gpu, &g, &e2) == 0) {
        double nf = sim_network_nic_Bps(&sc->network, g.nic_bw);
        if (nf < nic) nic = nf;
    }
    if (sim_af_create(ent[a]->cost, ent[f]->cost, c->pools[a].instances, c->pools[f].instances,
                      sc->deployment.af_micro_batches, nic, sc->network.latency_us * 1e-6, af, &e2) < 0) {
        res->status = SIM_CAND_INFEASIBLE;
        snprintf(res->reason, sizeof res->reason, "attention/ffn: %.200s", e2.msg);
        return 0;
    }
    return 1;
}

/* What bounds one instance of pool p: the request rate its prefill and
 * its decode each sustain under the SLO, the lower, with *phase naming it.
 * Returns that rate (INFINITY: nothing bounds it), or -1 when the SLO
 * cannot be met at all (why says how). */
static double pool_inst_rate(const sim_search *s, const sim_search_cand *c, int32_t p, const sim_search_costent *ent,
                             const sim_af *af, int32_t spec_k, const sim_search_lens *L, double coloc_s,
                             double first_s, char *why, size_t wl, const char **phase)
{
    const sim_scenario *sc = &s->sc;
    const double ttft_s = sc->slo.ttft_ms * 1e-3, tpot_s = sc->slo.tpot_ms * 1e-3;
    const int caching = sc->cache.enabled;
    sim_role role = c->pools[p].role;
    iter_fn fn = role == SIM_ROLE_ATTENTION ? iter_af : iter_model, thr = fn;
    const void *ctx = role == SIM_ROLE_ATTENTION ? (const void *)af : (const void *)ent->cost;
    int32_t lanes = 1;
    if (role != SIM_ROLE_ATTENTION && model_cost_layout(ent->cost)->pp > 1) {
        thr = iter_pipe;
        lanes = model_cost_layout(ent->cost)->micro_batches;
    }
    /* Speculative decoding (where the simulator models it: no PP, no AF). */
    spec_step sx = {0};
    sim_spec *sp = NULL;
    double step_tokens = 1;
    if (spec_k > 0 && thr == fn && role != SIM_ROLE_ATTENTION) {
        sim_pool_cfg pc;
        sim_search_pool_cfg(s, c, p, &pc);
        if (sim_spec_create(&pc.scheduler.spec, ent->draft, 0, 0, &sp, NULL) == 0) {
            sx = (spec_step){ent->cost, sp, 1 + spec_k};
            fn = thr = iter_spec;
            ctx = &sx;
            step_tokens = sim_spec_expected_tokens(&pc.scheduler.spec);
        }
    }
    int does_prefill = role == SIM_ROLE_COLOCATED || role == SIM_ROLE_PREFILL ||
                       (role == SIM_ROLE_ATTENTION && c->mode == SIM_MODE_AF);
    int does_decode = role != SIM_ROLE_PREFILL;
    double inst = INFINITY;
    *phase = "prefill";
    if (does_prefill) {
        /* TTFT is at least the shortest prompt's prefill on an idle instance. */
        model_chunk one = {.tokens = (int32_t)(L->in_min < c->chunk_tokens ? L->in_min : c->chunk_tokens)};
        model_batch b1 = {.n_chunks = 1, .chunks = &one};
        double t_first = fn(ctx, &b1);
        if (ttft_s > 0 && t_first + first_s > ttft_s && L->in_min <= c->chunk_tokens) {
            if (first_s > 0)
                snprintf(why, wl, "the shortest prompt alone takes %.0f ms to prefill after a %.0f ms "
                         "encoder pass > TTFT bound %.0f ms", t_first * 1e3, first_s * 1e3, ttft_s * 1e3);
            else
                snprintf(why, wl, "the shortest prompt alone takes %.0f ms to prefill > TTFT bound %.0f ms",
                         t_first * 1e3, ttft_s * 1e3);
            sim_spec_destroy(sp);
            return -1;
        }
        if (!caching) {
            /* Colocated encoding: the tower's pass joins the request's prefill work. */
            double r = 1.0 / (L->in_mean * prefill_s_per_token(thr, ctx, c) + coloc_s);
            if (r < inst) inst = r;
        } else if (coloc_s > 0) {
            double r = 1.0 / coloc_s;
            if (r < inst) inst = r;
        }
    }
    if (does_decode && L->out_mean > 1) {
        double tok = decode_tok_rate(fn, thr, lanes, ctx, c, ent->kv_tokens, L, tpot_s, step_tokens, caching, why, wl);
        if (tok <= 0) {
            sim_spec_destroy(sp);
            return -1;
        }
        double r = tok / (L->out_mean - 1);
        if (r < inst) {
            inst = r;
            *phase = "decode";
        }
    }
    sim_spec_destroy(sp);
    return inst;
}

/* The candidate's bound from its rate (0: the SLO cannot be met): its
 * status, bound rate and score (output tokens per GPU, or per dollar). */
static void bound_score(const sim_search *s, const sim_search_cand *c, const sim_search_lens *L, double rate,
                        const char *why, sim_search_result *res)
{
    const sim_scenario *sc = &s->sc;
    if (rate == 0) {
        res->status = SIM_CAND_SLO_MISSED;
        snprintf(res->reason, sizeof res->reason, "SLO unreachable: %s", why);
        res->bound_rate = 0;
        res->bound_score = 0;
        return;
    }
    if (!isfinite(rate)) rate = 1e6; /* nothing bounds it: let the bisection search widely */
    res->bound_rate = rate;
    double r = rate;
    if (s->fixed && !s->closed && sc->search.rate < r) r = sc->search.rate;
    /* Autoscaled: no run holds fewer GPUs than every pool at its min. */
    double gpg = r * L->out_mean / (s->n_as > 0 ? sim_search_gpus_floor(s, c) : c->gpus);
    res->bound_score = s->objective_cost ? gpg / res->price : gpg;
}

void sim_search_bound(const sim_search *s, const sim_search_cand *c, sim_search_result *res)
{
    const sim_search_lens *L = lens_find(s, res->requests);
    const sim_search_costent *ent[SIM_SEARCH_MAX_POOLS] = {0};
    sim_af *af = NULL;
    if (!L) {
        res->status = SIM_CAND_ERROR;
        snprintf(res->reason, sizeof res->reason, "internal: no workload statistics for %lld requests",
                 (long long)res->requests);
        return;
    }
    res->mean_output = L->out_mean;
    int32_t spec_k[SIM_SEARCH_MAX_POOLS] = {0};
    if (!bound_pool_costs(s, c, L, ent, spec_k, res) || !bound_af(s, c, ent, &af, res)) return;
    double enc_rate, coloc_s[SIM_SEARCH_MAX_POOLS], first_s[SIM_SEARCH_MAX_POOLS];
    if (!encode_bound(s, c, ent, L, &enc_rate, coloc_s, first_s, res)) {
        sim_af_destroy(af);
        return;
    }
    double rate = INFINITY;
    char why[200] = "";
    for (int32_t p = 0; p < c->n_pools; p++) {
        if (c->pools[p].role == SIM_ROLE_FFN) continue;
        const char *phase;
        double inst = pool_inst_rate(s, c, p, ent[p], af, spec_k[p], L, coloc_s[p], first_s[p], why, sizeof why,
                                     &phase);
        if (inst < 0) {
            rate = 0;
            break;
        }
        double pool_rate = inst * c->pools[p].instances;
        if (pool_rate < rate) {
            char ln[48];
            rate = pool_rate;
            sim_search_layout_name(&c->pools[p], ln, sizeof ln);
            snprintf(res->bound_by, sizeof res->bound_by, "%s of %dx %s", phase, (int)c->pools[p].instances, ln);
        }
    }
    sim_af_destroy(af);
    if (rate > 0 && enc_rate < rate) {
        rate = enc_rate;
        snprintf(res->bound_by, sizeof res->bound_by, "encode of %dx 1-GPU encoders", (int)c->encode_instances);
    }
    bound_score(s, c, L, rate, why, res);
}
