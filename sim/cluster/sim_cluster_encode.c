/* sim_cluster_encode — multimodal inputs (workload.images): each request's
 * images, their tokens and the vision tower's pass.
 *
 * At dispatch a request draws its item count from workload.images.per_request
 * (its own stream "images", so the other draws stay as they were) and its
 * prompt grows by count × the tokens one item becomes (model_vision_grid),
 * so the image tokens are prefilled and held in KV like the text. The
 * tower's pass (model_cost_encode on a pool's cost model: its GPU, perf-db
 * and op model) runs either
 *  - colocated (deployment.encode.instances 0): in the instance, added to
 *    the iteration that takes the request's first prefill chunk, the
 *    instance's tp GPUs encoding whole items data-parallel; or
 *  - in an encode pool of one-GPU encoders: one FIFO queue in front of
 *    them (a request's items are one job; jobs are not batched together),
 *    then the embeddings (image tokens × the language model's hidden ×
 *    2 bytes, bf16) cross the network model from the encoder's GPU to the
 *    GPUs of the front instance the router chose at arrival, and only then
 *    is the request submitted there (encode -> prefill [-> decode]).
 * Encoder seconds are memoised per pool and item count. Sums for the
 * summary (sim_encode_summary) are kept here. */
#include "sim_cluster_impl.h"
#include "sim_energy.h"
#include "sim_rng.h"

#include <gsl/gsl_rng.h>

/* Seconds (and busy seconds) of the tower over n items on pool slot `slot`
 * (a pool index, or SIM_MAX_POOLS for the encode pool's one-GPU encoders). */
static sim_enc_price enc_price(sim_cluster *c, int32_t slot, int32_t n)
{
    sim_enc_price e = {0, 0, 0};
    if (n < 1) return e;
    if (n <= SIM_ENC_MEMO && c->enc_memo[slot][n - 1].s >= 0) return c->enc_memo[slot][n - 1];
    const model_cost *mc = c->costs[slot == SIM_MAX_POOLS ? c->enc_cost_pool : slot];
    const int32_t ranks = slot == SIM_MAX_POOLS ? 1 : model_cost_layout(mc)->tp;
    model_iter_cost ic;
    e.s = model_cost_encode(mc, &c->model.vision, &c->media, n, ranks, NULL, 0, NULL, &ic);
    e.compute_s = ic.compute_busy_s;
    e.mem_s = ic.mem_busy_s;
    if (n <= SIM_ENC_MEMO) c->enc_memo[slot][n - 1] = e; /* beyond the memo: priced each time */
    return e;
}

/* The summary's sums take r's tower pass of s seconds. */
static void count_pass(sim_cluster *c, const sim_req *r, double s)
{
    c->enc_reqs++;
    c->enc_items += r->spec.images;
    c->enc_tokens += r->spec.image_tokens;
    c->enc_s_sum += s;
}

/* Colocated encoding (sim_encode_fn): the instance's tower pass for r. */
static double enc_colocated(void *ctx, const sim_req *r, double *compute_s, double *mem_s)
{
    sim_cluster *c = ctx;
    const sim_enc_price e = enc_price(c, c->inst_pool[r->instance], r->spec.images);
    count_pass(c, r, e.s);
    *compute_s = e.compute_s;
    *mem_s = e.mem_s;
    return e.s;
}

int sim_images_prepare(const sim_scenario *sc, const model_spec *m, model_media_grid *grid, sim_err *err)
{
    const sim_media_cfg *im = &sc->workload.images;
    int rc;
    if (!sim_images_enabled(im)) {
        if (sc->deployment.encode_instances > 0)
            return sim_err_set(err, SIM_EINVAL, "deployment.encode.instances: an encode pool needs image inputs "
                               "(workload.images.per_request)");
        return 0;
    }
    if ((rc = model_vision_check(m, "workload.images", err)) < 0) return rc;
    if ((rc = model_vision_grid(&m->vision, im->width, im->height, im->frames, grid, "workload.images", err)) < 0)
        return rc;
    return 1;
}

double sim_images_tower_bytes(const sim_scenario *sc, const model_spec *m, int32_t encode_instances, sim_role role)
{
    if (!sim_images_enabled(&sc->workload.images) || encode_instances > 0) return 0;
    if (role != SIM_ROLE_COLOCATED && role != SIM_ROLE_PREFILL) return 0;
    return model_vision_weight_bytes(&m->vision);
}

int sim_cluster_encode_init(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    const sim_media_cfg *im = &sc->workload.images;
    const sim_deploy_cfg *d = &sc->deployment;
    int rc = sim_images_prepare(sc, &c->model, &c->media, err);
    if (rc <= 0) return rc;
    if (d->mode == SIM_MODE_AF || d->mode == SIM_MODE_PD_AF)
        return sim_err_set(err, SIM_EINVAL, "workload.images: image inputs with attention/FFN disaggregation "
                           "(mode %s) are not modelled", sim_mode_name(d->mode));
    for (int32_t s = 0; s <= SIM_MAX_POOLS; s++)
        for (int32_t i = 0; i < SIM_ENC_MEMO; i++) c->enc_memo[s][i].s = -1;
    if ((rc = sim_lendist_create(&im->per_request, &c->img_count, err)) < 0) {
        sim_err_wrap(err, rc, "workload.images.per_request");
        return rc;
    }
    c->img_rng = sim_rng_create(sc->seed, "images", 0);
    if (!c->img_rng) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    c->images = 1;
    if (d->encode_instances == 0) {
        for (int32_t p = 0; p < d->n_pools; p++) {
            const sim_pool_cfg *pc = &d->pools[p];
            if (pc->role == SIM_ROLE_DECODE) continue;
            if (pc->parallel.pp > 1)
                return sim_err_set(err, SIM_EINVAL, "deployment.pools.%d.parallel.pp: encoding in an instance with "
                                   "pipeline stages is not modelled; set deployment.encode.instances for an encode "
                                   "pool", (int)p);
        }
        for (int32_t k = 0; k < c->n_inst; k++)
            if (c->front_of[k] >= 0) sim_instance_set_encoder(c->inst[k], enc_colocated, c);
        return 0;
    }
    /* The encoders' GPU must be some pool's: its cost model prices them. */
    model_gpu eg;
    const char *gname = d->encode_gpu[0] ? d->encode_gpu : sc->hardware.gpu;
    if ((rc = model_catalog_gpu(gname, &eg, err)) < 0) {
        sim_err_wrap(err, rc, "deployment.encode.gpu");
        return rc;
    }
    c->enc_cost_pool = -1;
    for (int32_t p = 0; p < d->n_pools && c->enc_cost_pool < 0; p++)
        if (c->costs[p] && !strcmp(model_cost_gpu(c->costs[p])->name, eg.name)) c->enc_cost_pool = p;
    if (c->enc_cost_pool < 0)
        return sim_err_set(err, SIM_EINVAL, "deployment.encode.gpu: %s runs no pool of this deployment (the "
                           "tower is priced with a pool's cost model on the same GPU); use one of the pools' GPUs",
                           eg.name);
    c->enc_n = d->encode_instances;
    c->enc_idle = c->enc_n;
    c->enc_busy = calloc((size_t)c->enc_n, 1);
    if (!c->enc_busy) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    /* The encoders' GPUs follow every pool's on the nodes. */
    c->enc_gpu0 = c->n_gpus;
    c->n_gpus += c->enc_n;
    c->enc_bytes_per_token = (double)c->model.hidden * 2.0;
    return 0;
}

void sim_cluster_encode_destroy(sim_cluster *c)
{
    for (sim_req *r = c->enc_queue.head; r; r = sim_req_next(r, SIM_RUN_LINK)) {
        free(r->keys); /* a run stopped early (overload) leaves them queued */
        r->keys = NULL;
    }
    sim_lendist_destroy(c->img_count);
    if (c->img_rng) gsl_rng_free(c->img_rng);
    free(c->enc_busy);
}

void sim_cluster_encode_attach(sim_cluster *c, sim_req *r)
{
    if (!c->images) return;
    int32_t n = sim_lendist_draw(c->img_count, c->img_rng);
    int64_t tok = (int64_t)n * c->media.tokens;
    if (tok > INT32_MAX / 2 - r->spec.input_tokens) tok = INT32_MAX / 2 - r->spec.input_tokens;
    r->spec.images = n;
    r->spec.image_tokens = (int32_t)tok;
    r->spec.input_tokens += (int32_t)tok;
}

static void on_embedded(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    (void)net;
    (void)id;
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    c->enc_xfer_ns += sim_engine_now(c->eng) - r->enc_t0;
    sim_instance_submit(c->inst[r->enc_target], r);
}

static void on_encoded(sim_engine *eng, void *ctx, uint64_t arg);

/* Encoder e takes r now. */
static void enc_start(sim_cluster *c, int32_t e, sim_req *r)
{
    sim_time now = sim_engine_now(c->eng);
    c->enc_wait_ns += now - r->enc_t0;
    c->enc_busy[e] = 1;
    r->enc_unit = e;
    const sim_enc_price p = enc_price(c, SIM_MAX_POOLS, r->spec.images);
    sim_time svc = (sim_time)(p.s * 1e9 + 0.5);
    if (svc < 1) svc = 1;
    c->enc_busy_ns += svc;
    if (c->sc.energy.enabled) /* enable_energy checked the GPU's power figures */
        c->enc_energy_gpu_s += sim_energy_busy_s(p.s, p.compute_s, p.mem_s,
                                                 model_cost_gpu(c->costs[c->enc_cost_pool])->power_mem_share);
    count_pass(c, r, p.s);
    sim_engine_after(c->eng, svc, on_encoded, c, (uint64_t)(uintptr_t)r);
}

static void on_encoded(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    const int32_t e = r->enc_unit;
    sim_req *next = c->enc_queue.head;
    if (next) {
        sim_req_list_remove(&c->enc_queue, next, SIM_RUN_LINK);
        c->queued--;
        enc_start(c, e, next);
    } else {
        c->enc_busy[e] = 0;
        c->enc_idle++;
    }
    /* The embeddings go to the front instance's GPUs. */
    const double bytes = (double)r->spec.image_tokens * c->enc_bytes_per_token;
    c->enc_bytes += bytes;
    r->enc_t0 = sim_engine_now(eng);
    sim_cluster_move_to_instance(c, c->enc_gpu0 + e, 1, r->enc_target, bytes, on_embedded, r, "image embeddings");
}

int sim_cluster_encode_route(sim_cluster *c, sim_req *r, int32_t k)
{
    if (!c->images || r->spec.images < 1) return 0;
    if (c->enc_n == 0) {
        r->encode_due = 1; /* the instance encodes before the first chunk */
        return 0;
    }
    r->enc_target = k;
    r->enc_t0 = sim_engine_now(c->eng);
    if (c->enc_idle > 0) {
        int32_t e = 0;
        while (c->enc_busy[e]) e++;
        c->enc_idle--;
        enc_start(c, e, r);
    } else {
        /* Waiting for an encoder counts as queued (overload.max_waiting). */
        sim_req_list_push_back(&c->enc_queue, r, SIM_RUN_LINK);
        c->queued++;
    }
    return 1;
}

void sim_cluster_encode_summary(const sim_cluster *c, sim_summary *out)
{
    if (!c->images) return;
    sim_encode_summary *en = &out->encode;
    memset(en, 0, sizeof *en);
    en->enabled = 1;
    en->pool = c->enc_n > 0;
    en->encoders = c->enc_n;
    snprintf(en->family, sizeof en->family, "%s", model_vision_family_name(c->model.vision.family));
    en->tokens_per_item = c->media.tokens;
    en->requests = c->enc_reqs;
    en->items = c->enc_items;
    en->tokens = c->enc_tokens;
    const double n = c->enc_reqs > 0 ? (double)c->enc_reqs : 1;
    en->encode_ms = c->enc_s_sum / n * 1e3;
    en->wait_ms = (double)c->enc_wait_ns / n / 1e6;
    en->transfer_ms = (double)c->enc_xfer_ns / n / 1e6;
    en->embedding_bytes = c->enc_bytes;
    if (c->enc_n > 0 && out->sim_time_s > 0)
        en->utilization = (double)c->enc_busy_ns / 1e9 / (out->sim_time_s * c->enc_n);
    if (out->ttft_ms.mean > 0) en->ttft_share = (en->encode_ms + en->wait_ms + en->transfer_ms) / out->ttft_ms.mean;
}
