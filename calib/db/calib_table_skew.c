/* calib_table_skew — lookups over a series' routing-skew chain: the
 * calibrated skews bracketing a query's skew_milli and the linear blend in
 * s between their answers (calib_table.h, "Routing skew"). Reads the
 * tables only: no allocation, no state. */
#include "calib_table.h"
#include "calib_table_impl.h"

#include <stddef.h>

typedef double (*series_fn)(const calib_series *s, const calib_shape *sh, calib_memo *m, calib_table_status *st);

static double one_plain(const calib_series *s, const calib_shape *sh, calib_memo *m, calib_table_status *st)
{
    (void)m;
    return calib_series_lookup_one(s, sh, st);
}

/* The answer of series s at sh with sh's skew set to the series' own. */
static double at_skew(series_fn fn, const calib_series *s, const calib_shape *sh, calib_memo *m,
                      calib_table_status *st)
{
    if (sh->skew_milli == calib_series_skew_milli(s)) return fn(s, sh, m, st);
    calib_shape q = *sh;
    q.skew_milli = calib_series_skew_milli(s);
    return fn(s, &q, m, st);
}

static double chain_lookup(series_fn fn, const calib_series *s, const calib_shape *sh, calib_memo *m,
                           calib_table_status *status)
{
    calib_table_status st = CALIB_TABLE_NONE, st2 = CALIB_TABLE_NONE;
    double t;
    const calib_series *lo = calib_series_skew_first(s), *hi = NULL;
    if (!s || !lo) {
        t = fn(s, sh, m, &st);
    } else {
        /* lo: the highest calibrated skew ≤ the query's (else the lowest);
         * hi: the next one, when the query lies strictly between. */
        for (const calib_series *n = calib_series_skew_next(lo); n && calib_series_skew_milli(n) <= sh->skew_milli;
             n = calib_series_skew_next(n))
            lo = n;
        const calib_series *n = calib_series_skew_next(lo);
        if (n && sh->skew_milli > calib_series_skew_milli(lo)) hi = n;
        t = at_skew(fn, lo, sh, m, &st);
        if (hi) {
            double th = at_skew(fn, hi, sh, m, &st2);
            double s0 = (double)calib_series_skew_milli(lo), s1 = (double)calib_series_skew_milli(hi);
            double w = ((double)sh->skew_milli - s0) / (s1 - s0);
            t = t + w * (th - t);
            st = st == CALIB_TABLE_FIT || st2 == CALIB_TABLE_FIT ? CALIB_TABLE_FIT : CALIB_TABLE_INTERP;
        }
    }
    if (status) *status = st;
    return t;
}

double calib_series_lookup(const calib_series *s, const calib_shape *sh, calib_table_status *status)
{
    return chain_lookup(one_plain, s, sh, NULL, status);
}

double calib_series_lookup_memo(const calib_series *s, const calib_shape *sh, calib_memo *m,
                                calib_table_status *status)
{
    return chain_lookup(calib_series_lookup_memo_one, s, sh, m, status);
}
