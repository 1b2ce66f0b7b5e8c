/* calib_table — in-memory perf-db series with a fitted floor + rate model
 * and residual interpolation; see the header. */
#include "calib_table.h"
#include "calib_table_impl.h"
#include "sim_slot_table.h"

#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TILE 128.0
_Static_assert(sizeof(calib_shape) == CALIB_SHAPE_FIELDS * sizeof(int64_t), "calib_shape is twelve int64");
/* Grids up to this many cells get a dense index (4 bytes a cell). */
#define DENSE_MAX_CELLS ((int64_t)1 << 22)

struct calib_series {
    calib_op op;
    int32_t slot;                       /* its index in the table (memo brackets) */
    char dtype[CALIB_DTYPE_MAX];
    double elem_bytes, act_bytes;       /* calib_dtype_bytes / calib_dtype_act_bytes (dtype) */
    char kernels[96];
    int32_t sms;
    int32_t nax;
    int32_t ax[CALIB_SHAPE_FIELDS];     /* varying fields */
    uint32_t axis_mask;                 /* bit f set: field f is an axis */
    int64_t *raw[CALIB_SHAPE_FIELDS];   /* sorted distinct values per axis */
    double *lx[CALIB_SHAPE_FIELDS];     /* log1p of them */
    int32_t nv[CALIB_SHAPE_FIELDS];
    calib_shape pinned;                 /* the fields that do not vary */
    int64_t n;
    int32_t *idx;                       /* n × nax grid indices, sorted lexicographically */
    int32_t *dense;                     /* grid cell → row (−1 unmeasured), when the grid is small */
    int64_t stride[CALIB_SHAPE_FIELDS];
    double *med;                        /* measured median per point */
    double *res;                        /* log(med / model) */
    double t0, s_flop, s_byte, floor_s, rms_rel;
    /* The routing skew of the series' rows (grouped GEMMs; 0 otherwise):
     * one series per calibrated skew of an (op, dtype), chained in
     * ascending skew from the lowest, which calib_table_series returns. */
    int64_t skew_milli;
    const calib_series *skew_first, *skew_next;
};

struct calib_table {
    calib_series *s;
    int32_t n;
};

/* ---- the work model ---------------------------------------------------- */

static double wave_eff(const calib_series *s, const calib_shape *sh)
{
    double tiles;
    switch (s->op) {
    case CALIB_OP_GEMM: tiles = ceil((double)sh->m / TILE) * ceil((double)sh->n / TILE); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED:
        tiles = (double)(sh->groups > 0 ? sh->groups : 1) * ceil((double)sh->m / TILE) * ceil((double)sh->n / TILE);
        break;
    case CALIB_OP_ATTN_PREFILL:
        tiles = (double)(sh->batch > 0 ? sh->batch : 1) * (double)(sh->heads > 0 ? sh->heads : 1) *
                ceil((double)sh->m / TILE);
        break;
    default: return 1.0;
    }
    if (s->sms <= 0 || tiles <= s->sms) return 1.0; /* one partial wave: split-K / stream-K fill it */
    double waves = ceil(tiles / s->sms);
    return tiles / (waves * s->sms);
}

/* Regressors of shape sh: floor (1), FLOPs / η, bytes. */
static void regressors(const calib_series *s, const calib_shape *sh, double x[3])
{
    x[0] = 1.0;
    x[1] = calib_op_flops(s->op, sh) / wave_eff(s, sh);
    x[2] = calib_op_bytes_e(s->op, s->elem_bytes, s->act_bytes, sh);
}

double calib_series_model(const calib_series *s, const calib_shape *sh)
{
    if (!s) return 0.0;
    double x[3];
    regressors(s, sh, x);
    return s->t0 + s->s_flop * x[1] + s->s_byte * x[2];
}

/* Non-negative weighted least squares of t ≈ c·x on relative error: every
 * subset of the three regressors is fitted (GSL) and the best one whose
 * coefficients are all ≥ 0 kept. */
static int fit_series(calib_series *s, sim_err *err)
{
    size_t n = (size_t)s->n;
    double (*X)[3] = malloc(n * sizeof *X);
    if (!X) return sim_err_set(err, SIM_ENOMEM, "out of memory fitting the perf-db");
    double scale[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        calib_shape sh = s->pinned;
        for (int32_t a = 0; a < s->nax; a++) calib_shape_set(&sh, s->ax[a], s->raw[a][s->idx[i * (size_t)s->nax + (size_t)a]]);
        regressors(s, &sh, X[i]);
        for (int j = 0; j < 3; j++) scale[j] = fmax(scale[j], fabs(X[i][j]));
    }
    double best_chi = INFINITY, best_c[3] = {0, 0, 0};
    for (int mask = 1; mask < 8; mask++) {
        size_t p = 0;
        int cols[3];
        for (int j = 0; j < 3; j++)
            if ((mask >> j) & 1) {
                if (!(scale[j] > 0)) goto next; /* a regressor this op does not have */
                cols[p++] = j;
            }
        if (p > n) continue;
        gsl_matrix *A = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
        gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *c = gsl_vector_alloc(p);
        gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p);
        if (!A || !cov || !y || !w || !c || !ws) {
            gsl_matrix_free(A), gsl_matrix_free(cov), gsl_vector_free(y), gsl_vector_free(w), gsl_vector_free(c);
            if (ws) gsl_multifit_linear_free(ws);
            free(X);
            return sim_err_set(err, SIM_ENOMEM, "out of memory fitting the perf-db");
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t q = 0; q < p; q++) gsl_matrix_set(A, i, q, X[i][cols[q]] / scale[cols[q]]);
            gsl_vector_set(y, i, s->med[i]);
            gsl_vector_set(w, i, 1.0 / (s->med[i] * s->med[i])); /* relative error */
        }
        double chi = 0;
        int ok = gsl_multifit_wlinear(A, w, y, c, cov, &chi, ws) == 0;
        double cc[3] = {0, 0, 0};
        for (size_t q = 0; ok && q < p; q++) {
            cc[cols[q]] = gsl_vector_get(c, q) / scale[cols[q]];
            if (!(cc[cols[q]] >= 0) || !isfinite(cc[cols[q]])) ok = 0;
        }
        if (ok && chi < best_chi * (1 - 1e-12)) {
            best_chi = chi;
            memcpy(best_c, cc, sizeof cc);
        }
        gsl_matrix_free(A), gsl_matrix_free(cov), gsl_vector_free(y), gsl_vector_free(w), gsl_vector_free(c);
        gsl_multifit_linear_free(ws);
    next:;
    }
    free(X);
    if (!isfinite(best_chi)) { /* cannot happen with a positive median, but stay defined */
        best_c[0] = s->med[0], best_c[1] = best_c[2] = 0;
    }
    s->t0 = best_c[0], s->s_flop = best_c[1], s->s_byte = best_c[2];
    double minmed = INFINITY, ss = 0;
    for (size_t i = 0; i < n; i++) {
        calib_shape sh = s->pinned;
        for (int32_t a = 0; a < s->nax; a++) calib_shape_set(&sh, s->ax[a], s->raw[a][s->idx[i * (size_t)s->nax + (size_t)a]]);
        double mdl = calib_series_model(s, &sh);
        if (!(mdl > 0)) mdl = s->med[i]; /* a zero model (no floor, no work): the point itself */
        s->res[i] = log(s->med[i] / mdl);
        ss += (mdl - s->med[i]) * (mdl - s->med[i]) / (s->med[i] * s->med[i]);
        minmed = fmin(minmed, s->med[i]);
    }
    s->rms_rel = n ? sqrt(ss / (double)n) : 0;
    s->floor_s = fmin(s->t0, minmed);
    return SIM_OK;
}

/* ---- building ---------------------------------------------------------- */

typedef struct {
    calib_point *p;
    size_t n, cap;
    const char *const *dtypes;
    int rc;
} collect_ctx;

static int collect(void *vctx, int64_t gpu_id, const calib_point *p)
{
    collect_ctx *x = vctx;
    (void)gpu_id;
    if ((int)p->op < 0 || p->op >= CALIB_OP_COUNT) return 0;
    if (!(p->median_s > 0) || !isfinite(p->median_s)) return 0; /* never prices anything */
    if (x->dtypes) {
        int keep = 0;
        for (const char *const *d = x->dtypes; *d && !keep; d++) keep = strcmp(*d, p->dtype) == 0;
        if (!keep) return 0;
    }
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 1024;
        calib_point *np = realloc(x->p, nc * sizeof *np);
        if (!np) {
            x->rc = SIM_ENOMEM;
            return 1;
        }
        x->p = np, x->cap = nc;
    }
    x->p[x->n++] = *p;
    return 0;
}

static int point_cmp(const void *va, const void *vb)
{
    const calib_point *a = va, *b = vb;
    int c = calib_shape_cmp(&a->shape, &b->shape);
    if (c) return c;
    return a->median_s < b->median_s ? -1 : a->median_s > b->median_s;
}

/* By routing skew alone (a series' rows are sorted by shape later). */
static int skew_cmp(const void *va, const void *vb)
{
    const calib_point *a = va, *b = vb;
    return a->shape.skew_milli < b->shape.skew_milli ? -1 : a->shape.skew_milli > b->shape.skew_milli;
}

static int i64_cmp(const void *va, const void *vb)
{
    int64_t a = *(const int64_t *)va, b = *(const int64_t *)vb;
    return a < b ? -1 : a > b;
}

/* "vllm-0.24.0:kernel" belongs to engine "vllm". */
static int kernel_of_engine(const char *kernel, const char *engine)
{
    size_t n = strlen(engine);
    return n && strncasecmp(kernel, engine, n) == 0 && kernel[n] == '-' && strchr(kernel + n, ':') != NULL;
}

static void series_free(calib_series *s)
{
    for (int32_t a = 0; a < s->nax; a++) free(s->raw[a]), free(s->lx[a]);
    free(s->idx), free(s->med), free(s->res), free(s->dense);
}

/* The rows a series keeps: the engine's when it has any for this op and
 * dtype, the fastest kernel per shape, sorted by shape; names the kernels
 * (one kernel, one engine version, or "all"). Returns how many. */
static size_t series_rows(calib_series *s, calib_point *pts, size_t n, const char *engine)
{
    /* Engine rows first when the engine has any for this op and dtype. */
    size_t keep = n;
    if (engine && *engine) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (kernel_of_engine(pts[i].kernel, engine)) pts[m++] = pts[i];
        if (m) keep = m;
    }
    n = keep;
    /* the kernels' common name: one kernel, one engine version, or "all" */
    snprintf(s->kernels, sizeof s->kernels, "%s", pts[0].kernel);
    char *colon = strchr(s->kernels, ':');
    size_t cmp_len = colon ? (size_t)(colon - s->kernels) : strlen(s->kernels);
    if (colon) *colon = '\0';
    for (size_t i = 1; i < n; i++)
        if (strncmp(pts[i].kernel, s->kernels, cmp_len) != 0 ||
            (colon ? pts[i].kernel[cmp_len] != ':' : pts[i].kernel[cmp_len] != '\0')) {
            snprintf(s->kernels, sizeof s->kernels, "all");
            break;
        }
    qsort(pts, n, sizeof *pts, point_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || calib_shape_cmp(&pts[u - 1].shape, &pts[i].shape) != 0) pts[u++] = pts[i];
    n = u;
    return n;
}

/* The axes: every shape field with two or more values, its sorted values
 * raw and in log space; the others stay pinned. */
static int series_axes(calib_series *s, const calib_point *pts, size_t n, sim_err *err)
{
    int64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return sim_err_set(err, SIM_ENOMEM, "out of memory building the perf-db tables");
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) {
        for (size_t i = 0; i < n; i++) tmp[i] = calib_shape_get(&pts[i].shape, f);
        qsort(tmp, n, sizeof *tmp, i64_cmp);
        size_t nv = 0;
        for (size_t i = 0; i < n; i++)
            if (nv == 0 || tmp[nv - 1] != tmp[i]) tmp[nv++] = tmp[i];
        if (nv < 2) continue;
        int32_t a = s->nax++;
        s->ax[a] = f;
        s->axis_mask |= 1u << f;
        s->nv[a] = (int32_t)nv;
        s->raw[a] = malloc(nv * sizeof *s->raw[a]);
        s->lx[a] = malloc(nv * sizeof *s->lx[a]);
        if (!s->raw[a] || !s->lx[a]) {
            free(tmp);
            return sim_err_set(err, SIM_ENOMEM, "out of memory building the perf-db tables");
        }
        for (size_t i = 0; i < nv; i++) s->raw[a][i] = tmp[i], s->lx[a][i] = log1p((double)tmp[i]);
        calib_shape_set(&s->pinned, f, 0);
    }
    free(tmp);
    return 0;
}

/* Each row's median and axis index tuple, and a dense cell → row map when
 * the grid's cells are few. */
static int series_index(calib_series *s, const calib_point *pts, size_t n, sim_err *err)
{
    size_t na = s->nax ? (size_t)s->nax : 1;
    s->idx = malloc(n * na * sizeof *s->idx);
    s->med = malloc(n * sizeof *s->med);
    s->res = malloc(n * sizeof *s->res);
    if (!s->idx || !s->med || !s->res) return sim_err_set(err, SIM_ENOMEM, "out of memory building the perf-db tables");
    /* Points are sorted by shape, so their index tuples come out sorted too. */
    for (size_t i = 0; i < n; i++) {
        s->med[i] = pts[i].median_s;
        for (int32_t a = 0; a < s->nax; a++) {
            int64_t v = calib_shape_get(&pts[i].shape, s->ax[a]);
            const int64_t *hit = bsearch(&v, s->raw[a], (size_t)s->nv[a], sizeof v, i64_cmp);
            s->idx[i * na + (size_t)a] = (int32_t)(hit - s->raw[a]);
        }
    }
    /* A dense cell → row map makes corner look-ups O(1) when the grid's
     * cells are few (a binary search over the rows otherwise). */
    int64_t cells = 1;
    for (int32_t a = s->nax - 1; a >= 0 && cells > 0; a--) {
        s->stride[a] = cells;
        cells = cells > DENSE_MAX_CELLS / s->nv[a] ? -1 : cells * s->nv[a];
    }
    if (cells > 0) {
        s->dense = malloc((size_t)cells * sizeof *s->dense);
        if (!s->dense) return sim_err_set(err, SIM_ENOMEM, "out of memory building the perf-db tables");
        for (int64_t c = 0; c < cells; c++) s->dense[c] = -1;
        for (size_t i = 0; i < n; i++) {
            int64_t c = 0;
            for (int32_t a = 0; a < s->nax; a++) c += s->idx[i * na + (size_t)a] * s->stride[a];
            s->dense[c] = (int32_t)i;
        }
    }
    return 0;
}

/* Series from pts[0..n) (one op and dtype), fastest kernel per shape. */
static int series_make(calib_series *s, calib_point *pts, size_t n, const char *engine, int32_t sms, sim_err *err)
{
    memset(s, 0, sizeof *s);
    s->op = pts[0].op;
    snprintf(s->dtype, sizeof s->dtype, "%s", pts[0].dtype);
    calib_dtype fmt = calib_dtype_parse(s->dtype);
    s->elem_bytes = calib_dtype_bytes(fmt), s->act_bytes = calib_dtype_act_bytes(fmt);
    s->sms = sms;
    n = series_rows(s, pts, n, engine);
    s->n = (int64_t)n;
    s->pinned = pts[0].shape;
    s->skew_milli = pts[0].shape.skew_milli;
    int rc;
    if ((rc = series_axes(s, pts, n, err)) || (rc = series_index(s, pts, n, err))) return rc;
    return fit_series(s, err);
}

typedef struct {
    int64_t want;
    int32_t sms;
} sms_ctx;

static int find_sms(void *vctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    sms_ctx *x = vctx;
    (void)n_points;
    if (gpu_id == x->want) x->sms = id->sms;
    return 0;
}

int calib_table_build(calib_db *db, int64_t gpu_id, const char *engine, const char *const *dtypes, int32_t sms,
                      calib_table **out, sim_err *err)
{
    *out = NULL;
    if (sms <= 0) {
        sms_ctx sx = {gpu_id, 0};
        int rc = calib_db_gpu_foreach(db, find_sms, &sx, err);
        if (rc < 0) return rc;
        sms = sx.sms;
    }
    collect_ctx x = {NULL, 0, 0, dtypes, 0};
    int rc = calib_db_point_foreach(db, gpu_id, -1, collect, &x, err);
    if (x.rc) rc = sim_err_set(err, x.rc, "out of memory loading the perf-db");
    calib_table *t = calloc(1, sizeof *t);
    if (rc >= 0 && !t) rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
    /* Rows arrive ordered by op then dtype: each run is one series per
     * routing skew (ascending), linked once the array stops moving. */
    for (size_t i = 0; rc >= 0 && i < x.n;) {
        size_t j = i + 1;
        while (j < x.n && x.p[j].op == x.p[i].op && strcmp(x.p[j].dtype, x.p[i].dtype) == 0) j++;
        int mixed = 0; /* several skews: grouped by skew (else the rows stay as they came) */
        for (size_t a = i + 1; a < j && !mixed; a++) mixed = x.p[a].shape.skew_milli != x.p[i].shape.skew_milli;
        if (mixed) qsort(x.p + i, j - i, sizeof *x.p, skew_cmp);
        for (size_t a = i; rc >= 0 && a < j;) {
            size_t b = a + 1;
            while (b < j && x.p[b].shape.skew_milli == x.p[a].shape.skew_milli) b++;
            calib_series *ns = realloc(t->s, (size_t)(t->n + 1) * sizeof *ns);
            if (!ns) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
            t->s = ns;
            rc = series_make(&t->s[t->n], x.p + a, b - a, engine, sms, err);
            t->s[t->n].slot = t->n;
            t->n++;
            a = b;
        }
        i = j;
    }
    free(x.p);
    for (int32_t k = 0; t && k < t->n; k++) {
        calib_series *c = &t->s[k], *prev = k > 0 ? &t->s[k - 1] : NULL;
        const int same = prev && prev->op == c->op && strcmp(prev->dtype, c->dtype) == 0;
        c->skew_first = same ? prev->skew_first : c;
        if (same) prev->skew_next = c;
    }
    if (rc < 0) {
        calib_table_free(t);
        return rc;
    }
    *out = t;
    return SIM_OK;
}

void calib_table_free(calib_table *t)
{
    if (!t) return;
    for (int32_t i = 0; i < t->n; i++) series_free(&t->s[i]);
    free(t->s);
    free(t);
}

int32_t calib_table_n_series(const calib_table *t) { return t ? t->n : 0; }

const calib_series *calib_table_series_at(const calib_table *t, int32_t i)
{
    return t && i >= 0 && i < t->n ? &t->s[i] : NULL;
}

const calib_series *calib_table_series(const calib_table *t, calib_op op, const char *dtype)
{
    if (!t || !dtype) return NULL;
    for (int32_t i = 0; i < t->n; i++)
        if (t->s[i].op == op && strcmp(t->s[i].dtype, dtype) == 0) return &t->s[i];
    return NULL;
}

void calib_series_describe(const calib_series *s, calib_op *op, const char **dtype, calib_series_info *info)
{
    if (op) *op = s->op;
    if (dtype) *dtype = s->dtype;
    if (info) {
        memset(info, 0, sizeof *info);
        info->t0_s = s->t0, info->s_per_flop = s->s_flop, info->s_per_byte = s->s_byte;
        info->floor_s = s->floor_s, info->rms_rel = s->rms_rel;
        info->n_points = s->n, info->n_axes = s->nax;
        info->skew_milli = s->skew_milli;
        snprintf(info->kernels, sizeof info->kernels, "%s", s->kernels);
    }
}

/* ---- lookup ------------------------------------------------------------ */

/* Row of index tuple want, or -1. */
static int64_t find_tuple(const calib_series *s, const int32_t *want)
{
    size_t na = (size_t)s->nax;
    if (s->dense) {
        int64_t c = 0;
        for (size_t a = 0; a < na; a++) c += want[a] * s->stride[a];
        return s->dense[c];
    }
    int64_t lo = 0, hi = s->n - 1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const int32_t *row = s->idx + (size_t)mid * na;
        int c = 0;
        for (size_t a = 0; a < na && !c; a++) c = row[a] < want[a] ? -1 : row[a] > want[a];
        if (!c) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* What an in-grid interpolation used, kept per series in a memo so that
 * the next query inside the same grid cell (decode attention: the mean
 * context moves by about one token an iteration) re-weights the same
 * corners instead of searching the grid again. */
#define BRACKET_MAX_SPLIT 4
typedef struct {
    const calib_series *s;
    int64_t q[CALIB_SHAPE_FIELDS];        /* the query it was made for */
    int32_t nsplit;
    int32_t split[BRACKET_MAX_SPLIT];     /* axis index of each split */
    int32_t field[BRACKET_MAX_SPLIT];     /* its shape field */
    int64_t lo_v[BRACKET_MAX_SPLIT], hi_v[BRACKET_MAX_SPLIT];
    double lx_lo[BRACKET_MAX_SPLIT], lx_span[BRACKET_MAX_SPLIT];
    double res[1 << BRACKET_MAX_SPLIT];   /* residual of each corner */
    uint32_t measured;                    /* bit c: corner c was measured */
} bracket;

/* The fitted model at sh times exp(r), r the interpolated log residual,
 * floored at the series' floor. */
static double with_residual(const calib_series *s, const calib_shape *sh, double r)
{
    double mdl = calib_series_model(s, sh);
    double t = (mdl > 0 ? mdl : s->floor_s) * (r != 0.0 ? exp(r) : 1.0);
    return t > s->floor_s ? t : s->floor_s;
}

/* The interpolated answer at q from bracket b's corners with weights w_hi. */
static double bracket_answer(const calib_series *s, const bracket *b, const double *w_hi, const calib_shape *sh)
{
    double acc = 0.0, wsum = 0.0;
    for (int32_t corner = 0; corner < (1 << b->nsplit); corner++) {
        if (!((b->measured >> corner) & 1)) continue;
        double w = 1.0;
        for (int32_t k = 0; k < b->nsplit; k++) w *= (corner >> k) & 1 ? w_hi[k] : 1.0 - w_hi[k];
        if (w <= 0.0) continue;
        acc += w * b->res[corner];
        wsum += w;
    }
    return with_residual(s, sh, wsum > 0 ? acc / wsum : 0.0);
}

/* Where a query falls in a series' grid: per axis the grid values below
 * and above (equal on a grid value or past an edge) and the weight of the
 * upper one, the axes it falls between, and its squared log distance
 * outside the grid (off the pinned fields, past the edges). */
typedef struct {
    int32_t lo[CALIB_SHAPE_FIELDS], hi[CALIB_SHAPE_FIELDS];
    double w_hi[CALIB_SHAPE_FIELDS];
    int32_t split[CALIB_SHAPE_FIELDS], nsplit;
    double out_d2;
} grid_cell;

/* Locates q in the grid of s. */
static void lookup_locate(const calib_series *s, const int64_t *q, grid_cell *cell)
{
    int64_t pin[CALIB_SHAPE_FIELDS];
    memcpy(pin, &s->pinned, sizeof pin);
    cell->out_d2 = 0.0;
    cell->nsplit = 0;
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) {
        if (((s->axis_mask >> f) & 1) || pin[f] == q[f]) continue;
        double d = log1p((double)(q[f] > 0 ? q[f] : 0)) - log1p((double)pin[f]);
        cell->out_d2 += d * d;
    }
    for (int32_t a = 0; a < s->nax; a++) {
        int64_t v = q[s->ax[a]];
        const int64_t *g = s->raw[a];
        int32_t n = s->nv[a];
        if (v <= g[0] || v >= g[n - 1]) { /* on or past an edge */
            int32_t e = v <= g[0] ? 0 : n - 1;
            cell->lo[a] = cell->hi[a] = e;
            if (v != g[e]) {
                double d = log1p((double)(v > 0 ? v : 0)) - s->lx[a][e];
                cell->out_d2 += d * d;
            }
            continue;
        }
        int32_t l = 0, h = n - 1; /* g[l] <= v < g[h] */
        while (h - l > 1) {
            int32_t mid = (l + h) / 2;
            if (g[mid] <= v) l = mid;
            else h = mid;
        }
        if (g[l] == v) {
            cell->lo[a] = cell->hi[a] = l;
            continue;
        }
        cell->lo[a] = l, cell->hi[a] = h;
        cell->w_hi[a] = (log1p((double)v) - s->lx[a][l]) / (s->lx[a][h] - s->lx[a][l]);
        cell->split[cell->nsplit++] = a;
    }
}

/* Records the cell's split axes into br for the memo (corners filled by
 * lookup_corners). */
static void bracket_record(bracket *br, const calib_series *s, const int64_t *q, const grid_cell *g)
{
    memcpy(br->q, q, sizeof br->q);
    br->nsplit = g->nsplit;
    br->measured = 0;
    for (int32_t b = 0; b < g->nsplit; b++) {
        int32_t a = g->split[b];
        br->split[b] = a, br->field[b] = s->ax[a];
        br->lo_v[b] = s->raw[a][g->lo[a]], br->hi_v[b] = s->raw[a][g->hi[a]];
        br->lx_lo[b] = s->lx[a][g->lo[a]], br->lx_span[b] = s->lx[a][g->hi[a]] - s->lx[a][g->lo[a]];
    }
}

/* The weighted mean log residual over the cell's measured corners; each
 * corner's residual also goes to br when it is not NULL. */
static double lookup_corners(const calib_series *s, const grid_cell *g, int32_t *tuple, bracket *br)
{
    double acc = 0.0, wsum = 0.0;
    for (int32_t corner = 0; corner < (1 << g->nsplit); corner++) {
        double w = 1.0;
        for (int32_t b = 0; b < g->nsplit; b++) {
            int32_t a = g->split[b];
            int up = (corner >> b) & 1;
            tuple[a] = up ? g->hi[a] : g->lo[a];
            w *= up ? g->w_hi[a] : 1.0 - g->w_hi[a];
        }
        int64_t row = (w > 0.0 || br) ? find_tuple(s, tuple) : -1;
        if (row < 0) continue;
        if (br) br->res[corner] = s->res[row], br->measured |= 1u << corner;
        if (w <= 0.0) continue;
        acc += w * s->res[row];
        wsum += w;
    }
    return wsum > 0 ? acc / wsum : 0.0;
}

/* The lookup; when br is not NULL and the answer is an in-grid
 * interpolation over at most BRACKET_MAX_SPLIT split axes, its corners are
 * recorded there (br->s set; NULL otherwise). */
static double lookup_full(const calib_series *s, const calib_shape *sh, calib_table_status *status, bracket *br)
{
    if (br) br->s = NULL;
    if (status) *status = CALIB_TABLE_NONE;
    if (!s || s->n == 0) return 0.0;
    int64_t q[CALIB_SHAPE_FIELDS];
    memcpy(q, sh, sizeof q);
    grid_cell g;
    lookup_locate(s, q, &g);
    int32_t tuple[CALIB_SHAPE_FIELDS] = {0};
    for (int32_t a = 0; a < s->nax; a++) tuple[a] = g.lo[a];
    if (g.nsplit == 0 && g.out_d2 == 0.0) {
        int64_t row = find_tuple(s, tuple);
        if (row >= 0) {
            if (status) *status = CALIB_TABLE_MEASURED;
            return s->med[row]; /* exactly what was measured */
        }
    }
    const int keep = br && g.out_d2 == 0.0 && g.nsplit <= BRACKET_MAX_SPLIT;
    if (keep) bracket_record(br, s, q, &g);
    double r = lookup_corners(s, &g, tuple, keep ? br : NULL);
    if (keep) br->s = s;
    if (g.out_d2 > 0) r *= fmax(0.0, 1.0 - sqrt(g.out_d2) / M_LN2); /* fades over a factor 2 */
    if (status) *status = g.out_d2 > 0 ? CALIB_TABLE_FIT : CALIB_TABLE_INTERP;
    return with_residual(s, sh, r);
}

double calib_series_lookup_one(const calib_series *s, const calib_shape *sh, calib_table_status *status)
{
    return lookup_full(s, sh, status, NULL);
}

int64_t calib_series_skew_milli(const calib_series *s) { return s ? s->skew_milli : 0; }
const calib_series *calib_series_skew_first(const calib_series *s) { return s ? s->skew_first : NULL; }
const calib_series *calib_series_skew_next(const calib_series *s) { return s ? s->skew_next : NULL; }

/* Prediction of point i from the points one grid step below and above it
 * along every axis of mask (the others equal), weighted as a lookup
 * weights the two measured corners of that cell; 0 when either is not
 * measured or i sits on an edge of one of the axes. */
static int holdout_one(const calib_series *s, int64_t i, uint32_t mask, double *err)
{
    const size_t na = (size_t)s->nax;
    const int32_t *row = s->idx + (size_t)i * na;
    int32_t lo[CALIB_SHAPE_FIELDS], hi[CALIB_SHAPE_FIELDS];
    double wl = 1.0, wh = 1.0;
    memcpy(lo, row, na * sizeof *lo);
    memcpy(hi, row, na * sizeof *hi);
    for (size_t a = 0; a < na; a++) {
        if (!((mask >> a) & 1)) continue;
        if (row[a] == 0 || row[a] == s->nv[a] - 1) return 0;
        lo[a] = row[a] - 1, hi[a] = row[a] + 1;
        const double *lx = s->lx[a];
        double w = (lx[row[a]] - lx[row[a] - 1]) / (lx[row[a] + 1] - lx[row[a] - 1]);
        wl *= 1.0 - w, wh *= w;
    }
    int64_t r1 = find_tuple(s, lo), r2 = find_tuple(s, hi);
    if (r1 < 0 || r2 < 0) return 0;
    calib_shape sh = s->pinned;
    for (size_t a = 0; a < na; a++) calib_shape_set(&sh, s->ax[a], s->raw[a][row[a]]);
    double r = (wl * s->res[r1] + wh * s->res[r2]) / (wl + wh);
    double mdl = calib_series_model(s, &sh);
    double pred = (mdl > 0 ? mdl : s->floor_s) * exp(r);
    if (pred < s->floor_s) pred = s->floor_s;
    *err = fabs(pred / s->med[i] - 1.0);
    return 1;
}

int64_t calib_series_holdout(const calib_series *s, double *err, int64_t max)
{
    if (!s || s->nax == 0) return 0;
    int64_t n = 0;
    for (int64_t i = 0; i < s->n; i++) {
        int got = 0;
        double e;
        for (int32_t a = 0; a < s->nax; a++)
            if (holdout_one(s, i, 1u << a, &e)) {
                if (n < max) err[n] = e;
                n++, got = 1;
            }
        /* Axes that move together (GDN prefill: tokens = batch × length;
         * MLA: the context with the step): the diagonal neighbours. */
        for (int32_t a = 0; !got && a < s->nax; a++)
            for (int32_t b = a + 1; !got && b < s->nax; b++)
                if (holdout_one(s, i, (1u << a) | (1u << b), &e)) {
                    if (n < max) err[n] = e;
                    n++, got = 1;
                }
    }
    return n;
}

/* The answer at sh from bracket b when sh lies in the same cell: every
 * field the bracket did not split equal to its query's, every split one
 * strictly inside its corners. 1 and *t set, else 0. */
static int bracket_reuse(const bracket *b, const calib_shape *sh, double *t)
{
    const calib_series *s = b->s;
    int64_t q[CALIB_SHAPE_FIELDS];
    memcpy(q, sh, sizeof q);
    uint32_t split_mask = 0;
    double w_hi[BRACKET_MAX_SPLIT];
    for (int32_t k = 0; k < b->nsplit; k++) {
        int64_t v = q[b->field[k]];
        if (!(v > b->lo_v[k] && v < b->hi_v[k])) return 0;
        split_mask |= 1u << b->field[k];
    }
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++)
        if (!((split_mask >> f) & 1) && q[f] != b->q[f]) return 0;
    for (int32_t k = 0; k < b->nsplit; k++)
        w_hi[k] = (log1p((double)q[b->field[k]]) - b->lx_lo[k]) / b->lx_span[k];
    *t = bracket_answer(s, b, w_hi, sh);
    return 1;
}

/* ---- memo ---------------------------------------------------------------- */

typedef struct {
    const calib_series *s;
    calib_shape sh;
    double t;
    calib_table_status st;
} memo_ent;

/* Brackets kept per memo: a set of MEMO_WAYS per series (by its index in
 * its table), so that the instances of a cluster (each at its own decode
 * context) and the GEMM shapes of one iteration each keep their cell. */
#define MEMO_SERIES_SETS 32
#define MEMO_WAYS 8

struct calib_memo {
    sim_slot_table t; /* of memo_ent */
    uint64_t bracket_hits;
    bracket br[MEMO_SERIES_SETS][MEMO_WAYS];
    uint8_t next[MEMO_SERIES_SETS]; /* the way a new cell replaces (round robin) */
};

int calib_memo_create(int32_t slots_log2, calib_memo **out, sim_err *err)
{
    *out = NULL;
    calib_memo *m = calloc(1, sizeof *m);
    if (!m) return sim_err_set(err, SIM_ENOMEM, "out of memory for the perf-db memo");
    int rc = sim_slot_table_init(&m->t, slots_log2, 4, 24, sizeof(memo_ent), "perf-db memo", err);
    if (rc < 0) {
        free(m);
        return rc;
    }
    *out = m;
    return SIM_OK;
}

void calib_memo_free(calib_memo *m)
{
    if (!m) return;
    sim_slot_table_release(&m->t);
    free(m);
}

void calib_memo_stats(const calib_memo *m, uint64_t *hits, uint64_t *misses)
{
    sim_slot_table_stats(m ? &m->t : NULL, hits, misses);
}

uint64_t calib_memo_bracket_hits(const calib_memo *m) { return m ? m->bracket_hits : 0; }

double calib_series_lookup_memo_one(const calib_series *s, const calib_shape *sh, calib_memo *m,
                                    calib_table_status *status)
{
    if (!m || !s) return calib_series_lookup_one(s, sh, status);
    /* Independent multiplies and a branch-free compare, written out field
     * by field (no loop, no call): a hit costs a few ns. */
    uint64_t h = (uint64_t)(uintptr_t)s + (uint64_t)sh->m * 0x9E3779B97F4A7C15ULL +
                 (uint64_t)sh->n * 0xC2B2AE3D27D4EB4FULL + (uint64_t)sh->k * 0x165667B19E3779F9ULL +
                 (uint64_t)sh->batch * 0xD6E8FEB86659FD93ULL + (uint64_t)sh->ctx * 0xFF51AFD7ED558CCDULL +
                 (uint64_t)sh->heads * 0xC4CEB9FE1A85EC53ULL + (uint64_t)sh->kv_heads * 0x94D049BB133111EBULL +
                 (uint64_t)sh->head_dim * 0xBF58476D1CE4E5B9ULL + (uint64_t)sh->groups * 0x27D4EB2F165667C5ULL +
                 (uint64_t)sh->bytes * 0x85EBCA77C2B2AE63ULL + (uint64_t)sh->ranks * 0x9FB21C651E98DF25ULL +
                 (uint64_t)sh->skew_milli * 0xA24BAED4963EE407ULL;
    h ^= h >> 29;
    memo_ent *e = SIM_SLOT_AT(&m->t, memo_ent, h ^ (h >> 31));
    const calib_shape *g = &e->sh;
    uint64_t diff = (uint64_t)(e->s != s) | (uint64_t)(g->m ^ sh->m) | (uint64_t)(g->n ^ sh->n) |
                    (uint64_t)(g->k ^ sh->k) | (uint64_t)(g->batch ^ sh->batch) | (uint64_t)(g->ctx ^ sh->ctx) |
                    (uint64_t)(g->heads ^ sh->heads) | (uint64_t)(g->kv_heads ^ sh->kv_heads) |
                    (uint64_t)(g->head_dim ^ sh->head_dim) | (uint64_t)(g->groups ^ sh->groups) |
                    (uint64_t)(g->bytes ^ sh->bytes) | (uint64_t)(g->ranks ^ sh->ranks) |
                    (uint64_t)(g->skew_milli ^ sh->skew_milli);
    if (!diff) {
        m->t.hits++;
        if (status) *status = e->st;
        return e->t;
    }
    m->t.misses++;
    calib_table_status st;
    double t;
    /* A miss inside the grid cell of one of this series' recent
     * interpolations re-weights that cell's corners. */
    const int32_t set = s->slot % MEMO_SERIES_SETS;
    bracket *ways = m->br[set];
    int reused = 0;
    for (int32_t w = 0; w < MEMO_WAYS && !reused; w++)
        reused = ways[w].s == s && bracket_reuse(&ways[w], sh, &t);
    if (reused) {
        m->bracket_hits++;
        st = CALIB_TABLE_INTERP;
    } else {
        bracket *b = &ways[m->next[set]];
        t = lookup_full(s, sh, &st, b);
        if (b->s) m->next[set] = (uint8_t)((m->next[set] + 1) % MEMO_WAYS); /* kept: the next cell goes elsewhere */
    }
    e->s = s, e->sh = *sh, e->t = t, e->st = st; /* direct-mapped: a collision replaces */
    if (status) *status = st;
    return t;
}
