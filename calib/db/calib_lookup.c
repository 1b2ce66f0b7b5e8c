/* calib_lookup — calib_db_lookup: the points of (gpu, op, dtype[, kernel])
 * are loaded once into a small LRU cache, then each lookup filters by the
 * op's exact-match fields and interpolates over its axes (see calib_db.h). */
#include "calib_db_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void calib_db_cache_clear(calib_db *db)
{
    for (int i = 0; i < CALIB_CACHE_SLOTS; i++) {
        free(db->cache[i].pts);
        memset(&db->cache[i], 0, sizeof db->cache[i]);
    }
}

static int calib_same_shape(const calib_shape *a, const calib_shape *b)
{
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++)
        if (calib_shape_get(a, f) != calib_shape_get(b, f)) return 0;
    return 1;
}

/* Loads the slot; with no kernel filter keeps the fastest kernel per shape
 * (rows arrive ordered by kernel, so merge by shape after loading). */
static int calib_cache_load(calib_db *db, calib_cache_slot *c, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, s;
    int64_t cap = 0;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT gpu_id, " CALIB_POINT_COLS " FROM points WHERE gpu_id=?1 AND op=?2 AND dtype=?3 "
                           "AND (?4 = '' OR kernel = ?4) ORDER BY " CALIB_SHAPE_COLS ", median_s",
                           -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "perf-db lookup: %s", sqlite3_errmsg(db->h));
    sqlite3_bind_int64(st, 1, c->gpu_id);
    sqlite3_bind_text(st, 2, calib_op_name(c->op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, c->dtype, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, c->kernel, -1, SQLITE_STATIC);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        calib_point p;
        calib_db_row_to_point(st, &p);
        /* Ordered by shape then latency: the first row of a shape is its fastest. */
        if (c->n > 0 && calib_same_shape(&c->pts[c->n - 1].shape, &p.shape)) continue;
        if (c->n == cap) {
            int64_t nc = cap ? cap * 2 : 64;
            calib_point *np = realloc(c->pts, (size_t)nc * sizeof *np);
            if (!np) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory loading perf-db points");
                goto fail;
            }
            c->pts = np, cap = nc;
        }
        c->pts[c->n++] = p;
    }
    if (s != SQLITE_DONE) rc = sim_err_set(err, SIM_EIO, "perf-db lookup: %s", sqlite3_errmsg(db->h));
fail:
    sqlite3_finalize(st);
    return rc;
}

static int calib_cache_get(calib_db *db, int64_t gpu_id, calib_op op, const char *dtype, const char *kernel,
                           calib_cache_slot **out, sim_err *err)
{
    calib_cache_slot *victim = &db->cache[0];
    const char *kn = kernel ? kernel : "";
    for (int i = 0; i < CALIB_CACHE_SLOTS; i++) {
        calib_cache_slot *c = &db->cache[i];
        if (c->used && c->gpu_id == gpu_id && c->op == op && strcmp(c->dtype, dtype) == 0 && strcmp(c->kernel, kn) == 0) {
            c->stamp = ++db->clock;
            *out = c;
            return 0;
        }
        if (!c->used || (victim->used && c->stamp < victim->stamp)) victim = c;
    }
    free(victim->pts);
    memset(victim, 0, sizeof *victim);
    victim->gpu_id = gpu_id, victim->op = op;
    snprintf(victim->dtype, sizeof victim->dtype, "%s", dtype);
    snprintf(victim->kernel, sizeof victim->kernel, "%s", kn);
    int rc = calib_cache_load(db, victim, err);
    if (rc) {
        free(victim->pts);
        memset(victim, 0, sizeof *victim);
        return rc;
    }
    victim->used = 1, victim->stamp = ++db->clock;
    *out = victim;
    return 0;
}

static double calib_ax(int64_t v) { return log1p((double)v); }

/* The query in log space on each axis, and what the candidates say about
 * it: the per-axis range, the bracketing values (log and raw). */
typedef struct {
    int32_t axes[CALIB_MAX_AXES], na;
    double lo[CALIB_MAX_AXES], hi[CALIB_MAX_AXES], vmin[CALIB_MAX_AXES], vmax[CALIB_MAX_AXES], q[CALIB_MAX_AXES];
    int64_t ilo[CALIB_MAX_AXES], ihi[CALIB_MAX_AXES];
} calib_bracket;

/* Candidates: points matching every non-axis field of s; fills the per-axis
 * range and brackets and *best (the nearest in log space, -1 when none);
 * returns how many there are. */
static int64_t calib_candidates(const calib_cache_slot *c, const calib_shape *s, calib_bracket *br, int64_t *best)
{
    int32_t is_axis[CALIB_SHAPE_FIELDS] = {0}, na = br->na;
    for (int32_t a = 0; a < na; a++) is_axis[br->axes[a]] = 1;
    for (int32_t a = 0; a < na; a++) {
        br->q[a] = calib_ax(calib_shape_get(s, br->axes[a]));
        br->lo[a] = -INFINITY, br->hi[a] = INFINITY, br->vmin[a] = INFINITY, br->vmax[a] = -INFINITY;
        br->ilo[a] = br->ihi[a] = -1;
    }
    int64_t ncand = 0;
    double best_d = INFINITY;
    *best = -1;
    for (int64_t i = 0; i < c->n; i++) {
        const calib_shape *p = &c->pts[i].shape;
        int match = 1;
        for (int32_t f = 0; f < CALIB_SHAPE_FIELDS && match; f++)
            if (!is_axis[f] && calib_shape_get(p, f) != calib_shape_get(s, f)) match = 0;
        if (!match) continue;
        ncand++;
        double d2 = 0.0;
        for (int32_t a = 0; a < na; a++) {
            int64_t raw = calib_shape_get(p, br->axes[a]);
            double v = calib_ax(raw);
            d2 += (v - br->q[a]) * (v - br->q[a]);
            br->vmin[a] = fmin(br->vmin[a], v), br->vmax[a] = fmax(br->vmax[a], v);
            if (v <= br->q[a] && v > br->lo[a]) br->lo[a] = v, br->ilo[a] = raw;
            if (v >= br->q[a] && v < br->hi[a]) br->hi[a] = v, br->ihi[a] = raw;
        }
        if (d2 < best_d) best_d = d2, *best = i;
    }
    return ncand;
}

/* The nearest point over every field in log space, or -1 when the slot is
 * empty. */
static int64_t calib_nearest_any(const calib_cache_slot *c, const calib_shape *s)
{
    int64_t best = -1;
    double best_d = INFINITY;
    for (int64_t i = 0; i < c->n; i++) {
        double d2 = 0.0;
        for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) {
            double v = calib_ax(calib_shape_get(&c->pts[i].shape, f)) - calib_ax(calib_shape_get(s, f));
            d2 += v * v;
        }
        if (d2 < best_d) best_d = d2, best = i;
    }
    return best;
}

/* res as the one point pt. */
static void calib_result_point(calib_lookup_result *res, const calib_point *pt)
{
    res->nearest = pt->shape;
    res->efficiency = pt->frac_of_peak;
    res->latency_s = pt->median_s;
    res->points_used = 1;
}

/* Multilinear interpolation of log(latency) over the 2^na corners around
 * s; NEAREST (res keeps the nearest point) where a corner is missing. */
static void calib_interpolate(const calib_cache_slot *c, const calib_shape *s, const calib_bracket *br,
                              calib_lookup_result *res)
{
    int32_t na = br->na;
    double acc = 0.0;
    int exact = 1;
    for (int32_t a = 0; a < na; a++) exact &= br->ilo[a] == br->ihi[a];
    for (int32_t corner = 0; corner < (1 << na); corner++) {
        calib_shape want = *s;
        double w = 1.0;
        for (int32_t a = 0; a < na; a++) {
            int up = (corner >> a) & 1;
            calib_shape_set(&want, br->axes[a], up ? br->ihi[a] : br->ilo[a]);
            double t = br->hi[a] > br->lo[a] ? (br->q[a] - br->lo[a]) / (br->hi[a] - br->lo[a]) : 0.0;
            w *= up ? t : 1.0 - t;
        }
        if (w == 0.0) continue;
        int64_t found = -1;
        for (int64_t i = 0; i < c->n && found < 0; i++)
            if (calib_same_shape(&c->pts[i].shape, &want)) found = i;
        if (found < 0) {
            res->status = CALIB_LOOKUP_NEAREST; /* grid not a full tensor here */
            return;
        }
        acc += w * log(c->pts[found].median_s);
    }
    res->latency_s = exp(acc);
    res->status = exact ? CALIB_LOOKUP_EXACT : CALIB_LOOKUP_INTERP;
    res->points_used = 1 << na;
}

int calib_db_lookup(calib_db *db, int64_t gpu_id, calib_op op, const char *dtype, const char *kernel,
                    const calib_shape *s, calib_lookup_result *res, sim_err *err)
{
    calib_cache_slot *c;
    calib_bracket br;
    br.na = calib_op_axes(op, br.axes);
    memset(res, 0, sizeof *res);
    res->status = CALIB_LOOKUP_NONE;
    res->latency_s = NAN, res->efficiency = NAN;
    if ((int)op < 0 || op >= CALIB_OP_COUNT) return sim_err_set(err, SIM_EINVAL, "lookup: bad op %d", (int)op);
    int rc = calib_cache_get(db, gpu_id, op, dtype, kernel, &c, err);
    if (rc) return rc;
    int64_t best;
    if (calib_candidates(c, s, &br, &best) == 0) {
        /* No point shares the exact fields (say attention with 16 heads per
         * rank, measured at 32 and 64): the nearest point over every field
         * in log space, for the caller to scale by its roofline. */
        best = calib_nearest_any(c, s);
        if (best < 0) return 0; /* CALIB_LOOKUP_NONE: nothing for this gpu/op/dtype */
        calib_result_point(res, &c->pts[best]);
        res->status = CALIB_LOOKUP_OUTSIDE;
        return 0;
    }
    calib_result_point(res, &c->pts[best]);
    for (int32_t a = 0; a < br.na; a++) {
        if (br.q[a] < br.vmin[a] || br.q[a] > br.vmax[a]) {
            res->status = CALIB_LOOKUP_OUTSIDE;
            return 0;
        }
    }
    calib_interpolate(c, s, &br, res);
    return 0;
}
