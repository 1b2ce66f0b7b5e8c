/* model_gemm_split — split-K / stream-K of a GEMM whose output tiles do
 * not fill the SMs, priced with its reduction.
 *
 * With fewer output tiles than SMs a kernel spreads k over the idle SMs in
 * s splits of at least 256 k each. Every split writes an fp32 partial tile
 * and the reduction (or stream-K fix-up) reads them back: s times the
 * caller's per-split partial bytes (2·m·n·4 for one GEMM) more HBM
 * traffic. The kernel takes the fastest s of 1, 2, 4, … up to the splits
 * that fill the SMs. s splits keep tiles·s/S of the SMs busy (par): compute
 * runs at par of its full rate and, a grid that cannot fill the SMs not
 * saturating HBM either, memory at √par of its rate. Shared by the op model
 * (smooth max of compute and memory) and the cost model's roofline (max).
 * Pure function of its arguments; no failure returns (non-positive tiles
 * or SMs give one split at par 1). */
#ifndef MODEL_GEMM_SPLIT_H
#define MODEL_GEMM_SPLIT_H

typedef struct {
    double splits; /* chosen split count s (1 = no split) */
    double par;    /* fraction of the SMs busy, tiles·s/S (≤ 1) */
    double mpar;   /* fraction of the HBM rate reached, √par */
    double extra_bytes; /* the partials' traffic, s·partial (0 when s = 1) */
    double time_s; /* the chosen split's time */
} model_gemm_split;

/* The fastest split of a GEMM of `tiles` output tiles (tiles < sms) over
 * depth k: tc_full is its compute time with every SM busy, bytes / bw its
 * memory time without partials, partial the bytes one split's partial
 * costs written and read back (0: an ideal split, the most splits win).
 * smooth: combine compute and memory as (a³+b³)^⅓ (the op model), else
 * max(a, b) (the roofline). */
model_gemm_split model_gemm_split_pick(double sms, double tiles, double k, double tc_full, double bytes, double bw,
                                       double partial, int smooth);

/* The same with the kernel's limits: at most split_max splits (0: no cap;
 * non-integer caps interpolate, for a smooth fit) and each CTA streaming
 * its operands for the whole k in cta_s seconds (0: unbounded), so s
 * splits take at least cta_s/s; a split (s > 1) adds split_s seconds, its
 * reduction's launch or fix-up pass. */
model_gemm_split model_gemm_split_pick_capped(double sms, double tiles, double k, double tc_full, double bytes,
                                              double bw, double partial, int smooth, double split_max, double cta_s,
                                              double split_s);

#endif
