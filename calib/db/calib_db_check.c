/* calib_db_check — what a perf-db row may hold, checked the same way for a
 * row of a SQLite file (on open), a row of a .sql dump (on import) and a
 * point the harness writes (on insert); see calib_db.h and calib_db_impl.h.
 *
 * Each column has a type and a range: text that fits its field, integers
 * within int32/int64 and ≥ 0 (skew_milli 0 but on the grouped GEMMs, and
 * at most CALIB_SKEW_MILLI_MAX there), latencies finite and within
 * [CALIB_MIN_LATENCY_S, CALIB_MAX_LATENCY_S] with p10 ≤ median ≤ p90, the
 * optional rates NULL or finite and ≥ 0. A row that fails is refused with
 * the column and the reason, so a bad value never prices anything. */
#include "calib_db_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { CK_TEXT, CK_I32, CK_I64, CK_LAT, CK_RATE } calib_col_kind;

#define CALIB_ORDER_SLACK 1e-12 /* relative */

typedef struct {
    const char *name;
    calib_col_kind kind;
    size_t cap; /* text: the field's size, NUL included */
} calib_col_spec;

#define CALIB_SKEW_HINT "the Zipf exponent of the routing in thousandths: 1000 for s = 1, 1500 for s = 1.5"

static const calib_col_spec calib_gpu_spec[CALIB_GPU_NCOLS] = {
    {"name", CK_TEXT, sizeof(((calib_gpu_id *)0)->name)},     {"sms", CK_I32, 0},
    {"cc", CK_TEXT, sizeof(((calib_gpu_id *)0)->cc)},         {"sm_clock_mhz", CK_I32, 0},
    {"mem_clock_mhz", CK_I32, 0},                             {"driver", CK_TEXT, sizeof(((calib_gpu_id *)0)->driver)},
    {"cuda", CK_TEXT, sizeof(((calib_gpu_id *)0)->cuda)},     {"backend", CK_TEXT, sizeof(((calib_gpu_id *)0)->backend)},
};

static const calib_col_spec calib_point_spec[CALIB_POINT_NCOLS] = {
    {"op", CK_TEXT, 32},
    {"dtype", CK_TEXT, sizeof(((calib_point *)0)->dtype)},
    {"kernel", CK_TEXT, sizeof(((calib_point *)0)->kernel)},
    {"kernel_version", CK_I32, 0},
    {"m", CK_I64, 0}, {"n", CK_I64, 0}, {"k", CK_I64, 0}, {"batch", CK_I64, 0}, {"ctx", CK_I64, 0},
    {"heads", CK_I64, 0}, {"kv_heads", CK_I64, 0}, {"head_dim", CK_I64, 0}, {"groups", CK_I64, 0},
    {"bytes", CK_I64, 0}, {"ranks", CK_I64, 0}, {"skew_milli", CK_I64, 0},
    {"reps", CK_I32, 0},
    {"median_s", CK_LAT, 0}, {"p10_s", CK_LAT, 0}, {"p90_s", CK_LAT, 0},
    {"tflops", CK_RATE, 0}, {"gbps", CK_RATE, 0}, {"frac_of_peak", CK_RATE, 0}, {"check_err", CK_RATE, 0},
    {"measured_at", CK_TEXT, sizeof(((calib_point *)0)->measured_at)},
};

const char *calib_gpu_col_name(int32_t i) { return i >= 0 && i < CALIB_GPU_NCOLS ? calib_gpu_spec[i].name : "?"; }
const char *calib_point_col_name(int32_t i)
{
    return i >= 0 && i < CALIB_POINT_NCOLS ? calib_point_spec[i].name : "?";
}

static const char *calib_vtype_name(calib_vtype t)
{
    switch (t) {
    case CALIB_V_NULL: return "NULL";
    case CALIB_V_INT: return "an integer";
    case CALIB_V_REAL: return "a real";
    case CALIB_V_TEXT: return "text";
    default: return "a blob";
    }
}

/* One value against its column; a text value is copied into dst (cap bytes). */
static int calib_check_value(const calib_col_spec *c, const calib_value *v, char *dst, int64_t *i, double *r,
                             char *why, size_t len)
{
    switch (c->kind) {
    case CK_TEXT:
        if (v->t != CALIB_V_TEXT) {
            snprintf(why, len, "%s is %s (expected text)", c->name, calib_vtype_name(v->t));
            return -1;
        }
        if (v->len >= c->cap) {
            snprintf(why, len, "%s is %zu bytes long (at most %zu)", c->name, v->len, c->cap - 1);
            return -1;
        }
        if (memchr(v->s, '\0', v->len)) {
            snprintf(why, len, "%s contains a NUL byte", c->name);
            return -1;
        }
        memcpy(dst, v->s, v->len);
        dst[v->len] = '\0';
        return 0;
    case CK_I32:
    case CK_I64: {
        /* What the value means, for a message about skew_milli. */
        const char *hint = strcmp(c->name, "skew_milli") == 0 ? CALIB_SKEW_HINT : NULL;
        if (v->t != CALIB_V_INT) {
            snprintf(why, len, "%s is %s (expected an integer%s%s)", c->name, calib_vtype_name(v->t),
                     hint ? ": " : "", hint ? hint : "");
            return -1;
        }
        if (v->i < 0 || (c->kind == CK_I32 && v->i > INT32_MAX)) {
            snprintf(why, len, "%s is %lld (expected an integer in [0, %s]%s%s)", c->name, (long long)v->i,
                     c->kind == CK_I32 ? "2147483647" : "9223372036854775807", hint ? ": " : "", hint ? hint : "");
            return -1;
        }
        *i = v->i;
        return 0;
    }
    case CK_LAT:
    case CK_RATE:
        if (v->t == CALIB_V_NULL && c->kind == CK_RATE) {
            *r = NAN;
            return 0;
        }
        if (v->t != CALIB_V_INT && v->t != CALIB_V_REAL) {
            snprintf(why, len, "%s is %s (expected %s)", c->name, calib_vtype_name(v->t),
                     c->kind == CK_LAT ? "a latency in seconds" : "a number or NULL");
            return -1;
        }
        *r = v->t == CALIB_V_INT ? (double)v->i : v->r;
        if (c->kind == CK_LAT && !(*r >= CALIB_MIN_LATENCY_S && *r <= CALIB_MAX_LATENCY_S)) {
            snprintf(why, len, "%s is %g (a latency must be finite and within [%g, %g] s)", c->name, *r,
                     CALIB_MIN_LATENCY_S, CALIB_MAX_LATENCY_S);
            return -1;
        }
        if (c->kind == CK_RATE && !(isfinite(*r) && *r >= 0)) {
            snprintf(why, len, "%s is %g (expected a finite number ≥ 0, or NULL)", c->name, *r);
            return -1;
        }
        return 0;
    }
    return -1;
}

int calib_gpu_from_values(const calib_value *v, calib_gpu_id *out, int32_t *bad_col, char *why, size_t len)
{
    if (bad_col) *bad_col = -1;
    char *texts[CALIB_GPU_NCOLS] = {out->name, NULL, out->cc, NULL, NULL, out->driver, out->cuda, out->backend};
    int32_t *ints[CALIB_GPU_NCOLS] = {NULL, &out->sms, NULL, &out->sm_clock_mhz, &out->mem_clock_mhz, NULL, NULL, NULL};
    memset(out, 0, sizeof *out);
    for (int32_t c = 0; c < CALIB_GPU_NCOLS; c++) {
        int64_t i = 0;
        double r = 0;
        if (calib_check_value(&calib_gpu_spec[c], &v[c], texts[c], &i, &r, why, len)) {
            if (bad_col) *bad_col = c;
            return -1;
        }
        if (ints[c]) *ints[c] = (int32_t)i;
    }
    if (!out->name[0]) {
        if (bad_col) *bad_col = 0;
        snprintf(why, len, "name is empty");
        return -1;
    }
    return 0;
}

int calib_point_check(const calib_point *p, char *why, size_t len)
{
    if ((int)p->op < 0 || p->op >= CALIB_OP_COUNT) {
        snprintf(why, len, "op %d is not a known op", (int)p->op);
        return -1;
    }
    if (!p->dtype[0] || !p->kernel[0]) {
        snprintf(why, len, "%s is empty", p->dtype[0] ? "kernel" : "dtype");
        return -1;
    }
    if (p->reps < 1 || p->kernel_version < 0) {
        snprintf(why, len, p->reps < 1 ? "reps is %d (expected ≥ 1)" : "kernel_version is %d (expected ≥ 0)",
                 p->reps < 1 ? p->reps : p->kernel_version);
        return -1;
    }
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++)
        if (calib_shape_get(&p->shape, f) < 0) {
            snprintf(why, len, "%s is %lld (expected ≥ 0)", calib_shape_field_name(f),
                     (long long)calib_shape_get(&p->shape, f));
            return -1;
        }
    if (calib_shape_skew_check(p->op, &p->shape, why, len)) return -1;
    const double lat[3] = {p->median_s, p->p10_s, p->p90_s};
    static const char *const lat_names[3] = {"median_s", "p10_s", "p90_s"};
    for (int i = 0; i < 3; i++)
        if (!(lat[i] >= CALIB_MIN_LATENCY_S && lat[i] <= CALIB_MAX_LATENCY_S)) {
            snprintf(why, len, "%s is %g (a latency must be finite and within [%g, %g] s)", lat_names[i], lat[i],
                     CALIB_MIN_LATENCY_S, CALIB_MAX_LATENCY_S);
            return -1;
        }
    /* Ordered, up to the rounding of a quantile interpolated between equal samples. */
    if (!(p->p10_s <= p->median_s * (1 + CALIB_ORDER_SLACK) && p->median_s <= p->p90_s * (1 + CALIB_ORDER_SLACK))) {
        snprintf(why, len, "p10_s %g, median_s %g, p90_s %g are out of order (expected p10 ≤ median ≤ p90)", p->p10_s,
                 p->median_s, p->p90_s);
        return -1;
    }
    const double rates[4] = {p->tflops, p->gbps, p->frac_of_peak, p->check_err};
    static const char *const rate_names[4] = {"tflops", "gbps", "frac_of_peak", "check_err"};
    for (int i = 0; i < 4; i++)
        if (!isnan(rates[i]) && !(isfinite(rates[i]) && rates[i] >= 0)) {
            snprintf(why, len, "%s is %g (expected a finite number ≥ 0, or unknown)", rate_names[i], rates[i]);
            return -1;
        }
    return 0;
}

int calib_point_from_values(const calib_value *v, calib_point *out, int32_t *bad_col, char *why, size_t len)
{
    if (bad_col) *bad_col = -1;
    char op[32];
    int64_t ints[CALIB_POINT_NCOLS] = {0};
    double reals[CALIB_POINT_NCOLS] = {0};
    char *texts[CALIB_POINT_NCOLS] = {op, out->dtype, out->kernel};
    texts[CALIB_POINT_NCOLS - 1] = out->measured_at;
    memset(out, 0, sizeof *out);
    for (int32_t c = 0; c < CALIB_POINT_NCOLS; c++)
        if (calib_check_value(&calib_point_spec[c], &v[c], texts[c], &ints[c], &reals[c], why, len)) {
            if (bad_col) *bad_col = c;
            return -1;
        }
    int opi = calib_op_from_name(op);
    if (opi < 0) {
        if (bad_col) *bad_col = 0;
        snprintf(why, len, "op '%s' is not a known op", op);
        return -1;
    }
    out->op = (calib_op)opi;
    out->kernel_version = (int32_t)ints[3];
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) calib_shape_set(&out->shape, f, ints[4 + f]);
    const int32_t r = 4 + CALIB_SHAPE_FIELDS; /* reps: after the shape */
    out->reps = (int32_t)ints[r];
    out->median_s = reals[r + 1], out->p10_s = reals[r + 2], out->p90_s = reals[r + 3];
    out->tflops = reals[r + 4], out->gbps = reals[r + 5], out->frac_of_peak = reals[r + 6];
    out->check_err = reals[r + 7];
    if (calib_shape_skew_check(out->op, &out->shape, why, len)) {
        if (bad_col) *bad_col = CALIB_POINT_COL_SKEW;
        return -1;
    }
    return calib_point_check(out, why, len);
}

void calib_values_from_row(sqlite3_stmt *st, int first, int n, calib_value *v)
{
    for (int i = 0; i < n; i++) {
        calib_value *x = &v[i];
        memset(x, 0, sizeof *x);
        switch (sqlite3_column_type(st, first + i)) {
        case SQLITE_INTEGER: x->t = CALIB_V_INT, x->i = sqlite3_column_int64(st, first + i); break;
        case SQLITE_FLOAT: x->t = CALIB_V_REAL, x->r = sqlite3_column_double(st, first + i); break;
        case SQLITE_TEXT:
            x->t = CALIB_V_TEXT;
            x->s = (const char *)sqlite3_column_text(st, first + i);
            x->len = (size_t)sqlite3_column_bytes(st, first + i);
            if (!x->s) x->s = "", x->len = 0;
            break;
        case SQLITE_NULL: x->t = CALIB_V_NULL; break;
        default: x->t = CALIB_V_BLOB; break;
        }
    }
}

/* Walks one table; reports the first bad row and counts them all. */
static int calib_check_table(calib_db *db, const char *table, const char *sql, int first, int n,
                             int (*check)(sqlite3_stmt *st, const calib_value *v, char *why, size_t len),
                             sim_err *err)
{
    sqlite3_stmt *st = NULL;
    calib_value v[CALIB_POINT_NCOLS + 2];
    char why[256], first_why[256] = "";
    int64_t bad = 0, first_id = 0;
    int s;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EINVAL, "table %s: %s", table, sqlite3_errmsg(db->h));
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        calib_values_from_row(st, first, n, v);
        if (check(st, v, why, sizeof why) == 0) continue;
        if (!bad++) {
            first_id = sqlite3_column_int64(st, 0);
            snprintf(first_why, sizeof first_why, "%s", why);
        }
    }
    int rc = s == SQLITE_DONE ? 0 : sim_err_set(err, SIM_EIO, "table %s: %s", table, sqlite3_errmsg(db->h));
    sqlite3_finalize(st);
    if (rc) return rc;
    if (bad)
        return sim_err_set(err, SIM_EINVAL, "%s row id %lld: %s (%lld bad row%s in all; fix or delete them)", table,
                           (long long)first_id, first_why, (long long)bad, bad == 1 ? "" : "s");
    return 0;
}

static int calib_check_gpu_row(sqlite3_stmt *st, const calib_value *v, char *why, size_t len)
{
    (void)st;
    calib_gpu_id id;
    return calib_gpu_from_values(v, &id, NULL, why, len);
}

static int calib_check_point_row(sqlite3_stmt *st, const calib_value *v, char *why, size_t len)
{
    calib_point p;
    if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || sqlite3_column_int(st, 2) == 0) {
        snprintf(why, len, "gpu_id does not name a row of gpus");
        return -1;
    }
    return calib_point_from_values(v, &p, NULL, why, len);
}

int calib_db_check_rows(calib_db *db, sim_err *err)
{
    int rc = calib_check_table(db, "gpus", "SELECT id, " CALIB_GPU_COLS " FROM gpus ORDER BY id", 1, CALIB_GPU_NCOLS,
                               calib_check_gpu_row, err);
    if (rc) return rc;
    return calib_check_table(db, "points",
                             "SELECT p.id, p.gpu_id, g.id IS NOT NULL, " CALIB_POINT_COLS
                             " FROM points p LEFT JOIN gpus g ON g.id = p.gpu_id ORDER BY p.id",
                             3, CALIB_POINT_NCOLS, calib_check_point_row, err);
}
