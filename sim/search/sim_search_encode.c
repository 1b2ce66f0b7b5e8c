/* sim_search_encode — the images' encode pool as a search dimension
 * (search.encode_instances, see sim_search_impl.h).
 *
 * With workload.images each candidate is enumerated once per encode pool
 * size N of the list: N = 0 leaves the tower's pass in the instances
 * (colocated encoding, as deployment.encode.instances 0 runs it), N > 0
 * puts N one-GPU encoders in front of the deployment. The encoders take N
 * GPUs of search.max_gpus (the serving pools fill what is left), count in
 * the per-GPU figures, and are priced at their GPU type's search.prices
 * entry. They run on deployment.encode.gpu when the scenario names one,
 * else on the GPU type of the candidate's first pool (hardware.gpu of the
 * scenario the candidate runs as; with a heterogeneous PD fleet, the
 * prefill pool's type). A scenario with deployment.encode.instances > 0
 * and no search.encode_instances is searched with that pool size alone,
 * counted the same way.
 *
 * For the bound, each request's item count is drawn as the cluster draws
 * it (its own stream "images", from the scenario seed), its image tokens
 * join its prompt, and the tower's pass is priced with model_cost_encode
 * on the candidate's cost models (sim_search_bound.c uses them).
 *
 * Failures are SIM_EINVAL (SIM_ENOMEM) with the key path. */
#include "sim_cluster.h"
#include "sim_search_impl.h"

#include "sim_rng.h"
#include "sim_workload.h"

#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* 1 when the comma-separated list names mode m. */
static int lists_mode(const char *list, const char *m)
{
    size_t n = strlen(m);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        if ((size_t)(t - p) == n && strncasecmp(p, m, n) == 0) return 1;
        p = e;
    }
    return 0;
}

int sim_search_encode_init(sim_search *s, sim_err *err)
{
    const sim_scenario *sc = &s->sc;
    const sim_search_cfg *cfg = &sc->search;
    const sim_media_cfg *im = &sc->workload.images;
    int rc;
    s->images = sim_images_enabled(im);
    s->n_enc = 0;
    s->enc_key = cfg->encode_instances[0] != '\0';
    s->enc_gpu[0] = '\0';
    if (!s->images && s->enc_key)
        return sim_err_set(err, SIM_EINVAL, "search.encode_instances: an encode pool needs image inputs "
                           "(workload.images.per_request)");
    if ((rc = sim_images_prepare(sc, &s->model, &s->media, err)) <= 0) return rc;
    static const char *const af_modes[] = {"af", "pd+af"};
    for (int k = 0; k < 2; k++)
        if (cfg->modes[0] && lists_mode(cfg->modes, af_modes[k]))
            return sim_err_set(err, SIM_EINVAL,
                               "search.modes: %s with workload.images: image inputs with attention/FFN "
                               "disaggregation are not modelled; search colocated and pd",
                               af_modes[k]);
    if (sc->deployment.encode_gpu[0]) {
        model_gpu g;
        if ((rc = model_catalog_gpu(sc->deployment.encode_gpu, &g, err)) < 0) {
            sim_err_wrap(err, rc, "deployment.encode.gpu");
            return rc;
        }
        snprintf(s->enc_gpu, sizeof s->enc_gpu, "%s", sc->deployment.encode_gpu);
    }
    const int32_t G = cfg->max_gpus;
    if (s->enc_key) {
        int n = sim_search_parse_ints_in(cfg->encode_instances, s->enc_v, SIM_SEARCH_MAX_ENC, 0,
                                         G - 1 > 0 ? G - 1 : 0, "search.encode_instances", err);
        if (n < 0) return n; /* each encoder takes one GPU: at most max_gpus - 1 */
        if (n == 0)
            return sim_err_set(err, SIM_EINVAL, "search.encode_instances: expected a comma-separated list like "
                               "\"0,1,2,4\"");
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                if (s->enc_v[i] == s->enc_v[j])
                    return sim_err_set(err, SIM_EINVAL, "search.encode_instances: %d listed twice", (int)s->enc_v[i]);
        s->n_enc = n;
        return 0;
    }
    const int32_t e = sc->deployment.encode_instances;
    if (e <= 0) return 0;
    if (e >= G)
        return sim_err_set(err, SIM_EINVAL,
                           "deployment.encode.instances: %d encoders leave no GPU of search.max_gpus = %d for the "
                           "serving pools (the search counts the encoders in the budget)",
                           (int)e, (int)G);
    s->enc_v[0] = e;
    s->n_enc = 1;
    size_t o = strlen(s->notes);
    snprintf(s->notes + o, sizeof s->notes - o,
             "deployment.encode.instances %d: every candidate has that encode pool, its GPUs counted in "
             "search.max_gpus (search.encode_instances searches the pool size). ",
             (int)e);
    return 0;
}

int32_t sim_search_encode_value(const sim_search *s, int e)
{
    return s->n_enc > 0 && e >= 0 && e < s->n_enc ? s->enc_v[e] : -1;
}

void sim_search_encode_set(const sim_search *s, sim_search_cand *c, int32_t n)
{
    c->encode_instances = n;
    c->encode_gpu[0] = '\0';
    if (n > 0) snprintf(c->encode_gpu, sizeof c->encode_gpu, "%s", s->enc_gpu[0] ? s->enc_gpu : c->gpu);
}

struct sim_search_img_draw {
    sim_lendist *d;
    gsl_rng *rng;
    int64_t tokens;          /* per item */
};

int sim_search_img_open(const sim_search *s, sim_search_img_draw **h, sim_err *err)
{
    *h = NULL;
    if (!s->images) return 0;
    sim_search_img_draw *x = calloc(1, sizeof *x);
    if (!x) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int rc = sim_lendist_create(&s->sc.workload.images.per_request, &x->d, err);
    if (rc < 0) {
        free(x);
        sim_err_wrap(err, rc, "workload.images.per_request");
        return rc;
    }
    x->rng = sim_rng_create(s->sc.seed, "images", 0);
    if (!x->rng) {
        sim_search_img_close(x);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    x->tokens = s->media.tokens;
    *h = x;
    return 0;
}

int32_t sim_search_img_next(sim_search_img_draw *h, sim_search_lens *L)
{
    if (!h) return 0;
    const int32_t n = sim_lendist_draw(h->d, h->rng);
    if (L->n_img == 0 || n < L->img_min) L->img_min = n;
    int32_t k = 0;
    while (k < L->n_img && L->img_items[k] != n) k++;
    if (k == L->n_img) {
        if (L->n_img < SIM_SEARCH_IMG_COUNTS) {
            L->img_items[L->n_img] = n;
            L->img_reqs[L->n_img++] = 0;
        } else {
            /* Table full: the largest kept count below n (a pass never shrinks with more items). */
            int32_t best = -1;
            for (int32_t j = 0; j < L->n_img; j++)
                if (L->img_items[j] < n && (best < 0 || L->img_items[j] > L->img_items[best])) best = j;
            k = best;
        }
    }
    if (k >= 0) L->img_reqs[k]++;
    int64_t tok = (int64_t)n * h->tokens;
    return tok > INT32_MAX / 2 ? INT32_MAX / 2 : (int32_t)tok;
}

void sim_search_img_close(sim_search_img_draw *h)
{
    if (!h) return;
    sim_lendist_destroy(h->d);
    if (h->rng) gsl_rng_free(h->rng);
    free(h);
}

double sim_search_encode_mean_s(const sim_search *s, const model_cost *mc, int32_t ranks, const sim_search_lens *L,
                                double *min_s)
{
    double sum = 0;
    model_iter_cost ic;
    *min_s = 0;
    if (!s->images || L->n <= 0) return 0;
    for (int32_t k = 0; k < L->n_img; k++) {
        if (L->img_items[k] < 1 || L->img_reqs[k] < 1) continue;
        double t = model_cost_encode(mc, &s->model.vision, &s->media, L->img_items[k], ranks, NULL, 0, NULL, &ic);
        sum += t * (double)L->img_reqs[k];
        if (L->img_items[k] == L->img_min) *min_s = t;
    }
    return sum / (double)L->n;
}
