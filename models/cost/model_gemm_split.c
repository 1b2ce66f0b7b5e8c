/* model_gemm_split — the fastest split-K / stream-K split of a GEMM with
 * fewer output tiles than SMs (see model_gemm_split.h). */
#include "model_gemm_split.h"

#include <math.h>

model_gemm_split model_gemm_split_pick(double sms, double tiles, double k, double tc_full, double bytes, double bw,
                                       double partial, int smooth)
{
    model_gemm_split best = {1, 1, 1, 0, -1};
    if (!(tiles > 0) || !(sms > 0)) {
        best.time_s = tc_full > bytes / bw ? tc_full : bytes / bw;
        return best;
    }
    double smax_k = floor(sms / tiles), kmax = floor(k / 256);
    if (smax_k > kmax) smax_k = kmax;
    if (smax_k < 1) smax_k = 1;
    /* With no partials more splits are always faster: only the most. */
    for (double sp = partial > 0 ? 1 : smax_k;; sp = sp * 2 < smax_k ? sp * 2 : smax_k) {
        double par = tiles * sp / sms;
        if (par > 1) par = 1;
        double mpar = par < 1 ? sqrt(par) : 1;
        double extra = sp > 1 ? sp * partial : 0;
        double tc = tc_full / par, tm = (bytes + extra) / (bw * mpar);
        double lower = tc > tm ? tc : tm;
        /* The smooth max is never below the max (but for rounding, which
         * the margin covers): a split that cannot win needs no cbrt. */
        if (best.time_s >= 0 && lower > best.time_s * (1.0 + 1e-12)) {
            if (sp >= smax_k) break;
            continue;
        }
        double t = smooth ? cbrt(tc * tc * tc + tm * tm * tm) : lower;
        if (best.time_s < 0 || t < best.time_s) {
            best.splits = sp, best.par = par, best.mpar = mpar, best.extra_bytes = extra, best.time_s = t;
        }
        if (sp >= smax_k) break;
    }
    return best;
}
