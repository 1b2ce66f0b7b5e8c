/* model_op_fit — see model_op_fit.h. */
#include "model_op_fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const model_gpu *g;
    const model_op_sample *s;
    const size_t *idx;
    size_t n;
    const model_op_param_info *info;
    int np;
    double robust;        /* soft-L1 scale of the log residual; 0: plain least squares */
    const double *held_p; /* every parameter's value; the held ones stay at it */
    int free_i[MODEL_OP_MAX_PARAMS], nfree; /* the fitted parameters' indices */
} fit_ctx;

/* Unconstrained x → parameter in [lo, hi], log-uniform. */
static double to_param(const model_op_param_info *pi, double x)
{
    double u = 1.0 / (1.0 + exp(-x));
    return exp(log(pi->lo) + u * (log(pi->hi) - log(pi->lo)));
}

/* The full parameter vector of c at the free parameters' search point x. */
static void params_at(const fit_ctx *c, const gsl_vector *x, double *p)
{
    for (int i = 0; i < c->np; i++) p[i] = c->held_p[i];
    for (int j = 0; j < c->nfree; j++) p[c->free_i[j]] = to_param(&c->info[c->free_i[j]], gsl_vector_get(x, (size_t)j));
}

static double from_param(const model_op_param_info *pi, double p)
{
    if (p <= pi->lo) p = pi->lo * 1.0001;
    if (p >= pi->hi) p = pi->hi * 0.9999;
    double u = (log(p) - log(pi->lo)) / (log(pi->hi) - log(pi->lo));
    return log(u / (1 - u));
}

static int resid(const gsl_vector *x, void *data, gsl_vector *f)
{
    const fit_ctx *c = data;
    double p[MODEL_OP_MAX_PARAMS];
    params_at(c, x, p);
    for (size_t i = 0; i < c->n; i++) {
        const model_op_sample *s = &c->s[c->idx[i]];
        double t = model_op_time(c->g, &s->q, p, NULL);
        double r = t > 0 ? log(t / s->t) : 10.0;
        if (c->robust > 0) {
            /* soft-L1: quadratic inside the scale, linear beyond it */
            double u = r / c->robust;
            r = copysign(c->robust * sqrt(2.0 * (sqrt(1.0 + u * u) - 1.0)), r);
        }
        gsl_vector_set(f, i, r);
    }
    return GSL_SUCCESS;
}

int model_op_err_stats(const double *e, size_t n, double *median, double *p90, double *bias)
{
    if (!n) {
        *median = *p90 = *bias = 0;
        return 0;
    }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) a[i] = fabs(e[i]), b[i] = e[i];
    gsl_sort(a, 1, n);
    gsl_sort(b, 1, n);
    *median = gsl_stats_median_from_sorted_data(a, 1, n);
    *p90 = gsl_stats_quantile_from_sorted_data(a, 1, n, 0.9);
    *bias = gsl_stats_median_from_sorted_data(b, 1, n);
    free(a), free(b);
    return 0;
}

int model_op_score(const model_gpu *g, const model_op_sample *s, size_t n, const double *p, model_op_fit_stats *st,
                   sim_err *err)
{
    memset(st, 0, sizeof *st);
    st->rows = n;
    if (!n) return 0;
    double *e = malloc(n * sizeof *e);
    if (!e) return sim_err_set(err, SIM_ENOMEM, "out of memory scoring %zu rows", n);
    for (size_t i = 0; i < n; i++) {
        sim_err er = {0};
        double t = model_op_time(g, &s[i].q, p, &er);
        if (!(t > 0)) {
            free(e);
            return sim_err_set(err, SIM_EINVAL, "row %zu: %s", i, er.msg[0] ? er.msg : "cannot be priced");
        }
        e[i] = t / s[i].t - 1;
    }
    int rc = model_op_err_stats(e, n, &st->median, &st->p90, &st->bias);
    free(e);
    st->used = n;
    return rc ? sim_err_set(err, rc, "out of memory") : 0;
}

/* The soft-L1 scale of a kind's log residuals in its second pass (0: plain
 * least squares only). MoE tables hold whole groups a run measured on
 * another path (a slow tactic, an EP rank layout no serving run sees:
 * docs/cost-model.md, "MoE EP anomaly" and the op model's MoE notes) at
 * 2-10x their neighbours; squared, their log residuals pulled every MoE
 * set's median 10-20 % high. Beyond 0.1 (about 10 %) a residual weighs
 * linearly, so such groups stop steering the fit. Attention's tables
 * likewise hold kernel switches and timer steps a few shapes wide (decode
 * at 48 query heads per KV head, 0.5-1 us alternations at the floor) that
 * squared residuals let steer whole sets; with the pass (and the decode
 * terms cta_overlap and kv_step) every one of the 26 H100 and A100
 * attention sets refitted to a lower in-sample median. */
static double robust_scale(model_op_kind kind)
{
    return kind == MODEL_OPK_MOE || kind == MODEL_OPK_GEN_ATTN || kind == MODEL_OPK_CTX_ATTN ? 0.1 : 0;
}

/* One Levenberg-Marquardt run of c's rows from start; the best point into
 * out, its Σ residual² into *cost. Returns the GSL status (GSL_ENOMEM when
 * the workspace cannot be had). */
static int fit_from(const fit_ctx *c, const double *start, double *out, double *cost, int *iters)
{
    const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    fp.trs = gsl_multifit_nlinear_trs_lm;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &fp, c->n, (size_t)c->nfree);
    gsl_vector *x = gsl_vector_alloc((size_t)c->nfree);
    if (!w || !x) {
        if (w) gsl_multifit_nlinear_free(w);
        if (x) gsl_vector_free(x);
        return GSL_ENOMEM;
    }
    for (int j = 0; j < c->nfree; j++)
        gsl_vector_set(x, (size_t)j, from_param(&c->info[c->free_i[j]], start[c->free_i[j]]));
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = resid;
    fdf.df = NULL; /* finite differences */
    fdf.n = c->n;
    fdf.p = (size_t)c->nfree;
    fdf.params = (void *)c;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int info_code = 0;
    int rc = gsl_multifit_nlinear_init(x, &fdf, w);
    if (rc == GSL_SUCCESS) rc = gsl_multifit_nlinear_driver(200, 1e-8, 1e-8, 1e-8, NULL, NULL, &info_code, w);
    gsl_set_error_handler(old);
    /* Reaching the iteration cap still leaves the best point found. */
    params_at(c, gsl_multifit_nlinear_position(w), out);
    double chi = 0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chi);
    *cost = chi;
    *iters = (int)gsl_multifit_nlinear_niter(w);
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    return rc;
}

int model_op_fit(const model_gpu *g, const model_op_sample *s, size_t n, size_t max_rows, double *p,
                 model_op_fit_stats *st, sim_err *err)
{
    return model_op_fit_held(g, s, n, max_rows, p, 0, st, err);
}

int model_op_fit_held(const model_gpu *g, const model_op_sample *s, size_t n, size_t max_rows, double *p,
                      uint32_t held, model_op_fit_stats *st, sim_err *err)
{
    if (!n) return sim_err_set(err, SIM_EINVAL, "no rows to fit");
    const model_op_kind kind = s[0].q.kind;
    const model_op_param_info *info = model_op_params_of(kind);
    const int np = model_op_param_count(kind);
    if (!info || np <= 0) return sim_err_set(err, SIM_EINVAL, "op kind %d has no parameters", (int)kind);
    size_t use = max_rows && n > max_rows ? max_rows : n;
    if (held && !p) return sim_err_set(err, SIM_EINVAL, "held parameters need their values in p");
    if (use < (size_t)np) return sim_err_set(err, SIM_EINVAL, "%zu rows cannot fit %d parameters", use, np);
    size_t *idx = malloc(use * sizeof *idx);
    if (!idx) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < use; i++) idx[i] = (size_t)((double)i * (double)n / (double)use);
    double start[MODEL_OP_MAX_PARAMS] = {0};
    for (int i = 0; i < np; i++) start[i] = (held >> i & 1u) || (p && p[i] > 0) ? p[i] : info[i].init;
    fit_ctx c = {g, s, idx, use, info, np, 0, start, {0}, 0};
    for (int i = 0; i < np; i++)
        if (!(held >> i & 1u)) c.free_i[c.nfree++] = i;
    if (!c.nfree) {
        free(idx);
        return sim_err_set(err, SIM_EINVAL, "every parameter held: nothing to fit");
    }
    int alt = 0;
    for (int i = 0; i < np; i++) alt |= info[i].alt > 0 && !(held >> i & 1u);

    double out[MODEL_OP_MAX_PARAMS], cost = 0;
    int iters = 0;
    int rc = fit_from(&c, start, out, &cost, &iters);
    if (alt && (rc == GSL_SUCCESS || rc == GSL_EMAXITER || rc == GSL_ENOPROG)) {
        /* The other side of a kernel switch: the same fit from its second start, the better kept. */
        double s2[MODEL_OP_MAX_PARAMS], o2[MODEL_OP_MAX_PARAMS], c2 = 0;
        int it2 = 0;
        memcpy(s2, start, sizeof s2);
        for (int i = 0; i < np; i++)
            if (info[i].alt > 0 && !(held >> i & 1u)) s2[i] = info[i].alt;
        int rc2 = fit_from(&c, s2, o2, &c2, &it2);
        if ((rc2 == GSL_SUCCESS || rc2 == GSL_EMAXITER || rc2 == GSL_ENOPROG) && c2 < cost) {
            memcpy(out, o2, sizeof out);
            cost = c2, iters += it2, rc = rc2;
        } else {
            iters += it2;
        }
    }
    double rob = robust_scale(kind);
    if (rob > 0 && (rc == GSL_SUCCESS || rc == GSL_EMAXITER || rc == GSL_ENOPROG)) {
        double o3[MODEL_OP_MAX_PARAMS], c3 = 0;
        int it3 = 0;
        /* From the least-squares point: the soft-L1 surface has more local minima. */
        c.robust = rob;
        int rc3 = fit_from(&c, out, o3, &c3, &it3);
        if (rc3 == GSL_SUCCESS || rc3 == GSL_EMAXITER || rc3 == GSL_ENOPROG)
            memcpy(out, o3, sizeof out);
        else if (rc3 == GSL_ENOMEM)
            rc = rc3;
        iters += it3;
    }
    free(idx);
    if (rc == GSL_ENOMEM) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    if (rc != GSL_SUCCESS && rc != GSL_EMAXITER && rc != GSL_ENOPROG)
        return sim_err_set(err, SIM_EINVAL, "fit failed: %s", gsl_strerror(rc));
    if (p) memcpy(p, out, (size_t)np * sizeof *p);
    if (st) {
        int src = model_op_score(g, s, n, out, st, err);
        if (src) return src;
        st->used = use;
        st->iterations = iters;
    }
    return 0;
}
