/* model_gemm_split — the fastest split-K / stream-K split of a GEMM with
 * fewer output tiles than SMs (see model_gemm_split.h). */
#include "model_gemm_split.h"

#include <math.h>

/* Split count sp's share of the SMs, of the HBM rate and partials'
 * traffic (time_s left 0), with its compute and memory times. */
static inline void candidate(double sms, double tiles, double tc_full, double bytes, double bw, double partial,
                             double cta_s, double sp, model_gemm_split *c, double *tc, double *tm)
{
    double par = tiles * sp / sms;
    if (par > 1) par = 1;
    double mpar = par < 1 ? sqrt(par) : 1;
    double extra = sp > 1 ? sp * partial : 0;
    c->splits = sp, c->par = par, c->mpar = mpar, c->extra_bytes = extra, c->time_s = 0;
    *tc = tc_full / par, *tm = (bytes + extra) / (bw * mpar);
    if (cta_s / sp > *tm) *tm = cta_s / sp; /* each CTA's own stream of its k/sp */
}

/* The split counts tried: 1, 2, 4, ... and last smax_k itself (with no
 * partials' traffic only smax_k). split_next steps sp on and returns 0
 * after the last. */
static inline double split_first(double partial, double smax_k) { return partial > 0 ? 1 : smax_k; }

static inline int split_next(double *sp, double smax_k)
{
    if (*sp >= smax_k) return 0;
    *sp = *sp * 2 < smax_k ? *sp * 2 : smax_k;
    return 1;
}

/* The smooth max (a³+b³)^⅓ of every candidate, compared by a³+b³: cbrt
 * is within an ulp of the exact root, so a sum more than SUM_TIE apart from
 * the best one orders the roots the same way, and only near-ties take
 * their roots to compare them exactly as the roots themselves would be
 * compared. The chosen split and its time are those the roots give. */
#define SUM_TIE 1e-9
static model_gemm_split pick_smooth(double sms, double tiles, double tc_full, double bytes, double bw,
                                    double partial, double cta_s, double smax_k, model_gemm_split best)
{
    double best_sum = 0;
    int have = 0, rooted = 0;
    double sp = split_first(partial, smax_k);
    do {
        model_gemm_split cand;
        double tc, tm;
        candidate(sms, tiles, tc_full, bytes, bw, partial, cta_s, sp, &cand, &tc, &tm);
        double sum = tc * tc * tc + tm * tm * tm;
        int take;
        if (!have) {
            take = 1;
        } else if (sum < best_sum * (1.0 - SUM_TIE)) {
            take = 1;
        } else if (sum > best_sum * (1.0 + SUM_TIE)) {
            take = 0;
        } else {
            if (!rooted) best.time_s = cbrt(best_sum), rooted = 1;
            double t = cbrt(sum);
            take = t < best.time_s;
        }
        if (take) {
            best = cand;
            best_sum = sum, have = 1, rooted = 0;
        }
    } while (split_next(&sp, smax_k));
    if (!rooted) best.time_s = cbrt(best_sum);
    return best;
}

/* The same with a fixed cost split_s on every split of s > 1: the roots
 * are compared as times (the sums no longer order them). */
static model_gemm_split pick_smooth_fixed(double sms, double tiles, double tc_full, double bytes, double bw,
                                          double partial, double cta_s, double split_s, double smax_k,
                                          model_gemm_split best)
{
    double sp = split_first(partial, smax_k);
    do {
        model_gemm_split cand;
        double tc, tm;
        candidate(sms, tiles, tc_full, bytes, bw, partial, cta_s, sp, &cand, &tc, &tm);
        double fixed = sp > 1 ? split_s : 0, lo = (tc > tm ? tc : tm) + fixed;
        /* The root is at least the larger term: a candidate whose bound
         * already loses needs none. */
        if (best.time_s >= 0 && lo >= best.time_s) continue;
        cand.time_s = cbrt(tc * tc * tc + tm * tm * tm) + fixed;
        if (best.time_s < 0 || cand.time_s < best.time_s) best = cand;
    } while (split_next(&sp, smax_k));
    return best;
}

model_gemm_split model_gemm_split_pick(double sms, double tiles, double k, double tc_full, double bytes, double bw,
                                       double partial, int smooth)
{
    return model_gemm_split_pick_capped(sms, tiles, k, tc_full, bytes, bw, partial, smooth, 0, 0, 0);
}

model_gemm_split model_gemm_split_pick_capped(double sms, double tiles, double k, double tc_full, double bytes,
                                              double bw, double partial, int smooth, double split_max, double cta_s,
                                              double split_s)
{
    model_gemm_split best = {1, 1, 1, 0, -1};
    if (!(tiles > 0) || !(sms > 0)) {
        best.time_s = tc_full > bytes / bw ? tc_full : bytes / bw;
        return best;
    }
    double smax_k = floor(sms / tiles), kmax = floor(k / 256);
    if (smax_k > kmax) smax_k = kmax;
    if (split_max > 0 && smax_k > split_max) smax_k = split_max;
    if (smax_k < 1) smax_k = 1;
    if (smooth && split_s > 0)
        return pick_smooth_fixed(sms, tiles, tc_full, bytes, bw, partial, cta_s, split_s, smax_k, best);
    if (smooth) return pick_smooth(sms, tiles, tc_full, bytes, bw, partial, cta_s, smax_k, best);
    /* With no partials more splits are always faster: only the most. */
    double sp = split_first(partial, smax_k);
    do {
        model_gemm_split cand;
        double tc, tm;
        candidate(sms, tiles, tc_full, bytes, bw, partial, cta_s, sp, &cand, &tc, &tm);
        double t = (tc > tm ? tc : tm) + (sp > 1 ? split_s : 0);
        if (best.time_s < 0 || t < best.time_s) {
            best = cand, best.time_s = t;
        }
    } while (split_next(&sp, smax_k));
    return best;
}
