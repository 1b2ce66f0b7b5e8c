/* model_op_fit — fits the parameters of one op variant (model_op.h) to
 * measured latencies: GSL's trust-region nonlinear least squares
 * (gsl_multifit_nlinear, Levenberg–Marquardt, finite-difference Jacobian)
 * on the log ratio of predicted to measured time, so every row weighs the
 * same whatever its size; MoE sets then take a second pass from that
 * point under a soft-L1 loss of scale 0.1 (residuals beyond ~10 % weigh
 * linearly: whole groups measured on another path stop steering them).
 * Parameters may be held at given values (model_op_fit_held).
 * Each parameter is searched inside its
 * [lo, hi] range of model_op_param_info (a logistic map of an
 * unconstrained variable onto the log of the range), so a fit cannot
 * return a negative floor or an efficiency above its physical bound.
 *
 * Large tables are thinned to at most max_rows rows by a fixed stride
 * (deterministic). The caller owns every array; nothing is kept.
 * Failure returns: SIM_EINVAL (no rows, a row the model cannot price),
 * SIM_ENOMEM. */
#ifndef MODEL_OP_FIT_H
#define MODEL_OP_FIT_H

#include "model_op.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    model_op_query q;
    double t;               /* measured seconds (> 0) */
} model_op_sample;

typedef struct {
    double median, p90, bias;   /* of pred/meas − 1 over all the rows given */
    size_t rows, used;          /* rows given, rows the fit used */
    int iterations;
} model_op_fit_stats;

/* Fits p (in: start values or NULL for the table's init; out: the fit)
 * for samples of one kind on GPU g. */
int model_op_fit(const model_gpu *g, const model_op_sample *s, size_t n, size_t max_rows, double *p,
                 model_op_fit_stats *st, sim_err *err);

/* The same fit with the parameters whose bit is set in held (bit i:
 * parameter i) held at their values in p (p required), the others fitted:
 * a term another table measures (a GEMM set's activation quantisation,
 * model_op_gemm_quant_of) stays what that table says. SIM_EINVAL when
 * every parameter is held. */
int model_op_fit_held(const model_gpu *g, const model_op_sample *s, size_t n, size_t max_rows, double *p,
                      uint32_t held, model_op_fit_stats *st, sim_err *err);

/* Error statistics of p on the samples (pred/meas − 1: median of the
 * absolute, its 90th percentile, median signed = bias). */
int model_op_score(const model_gpu *g, const model_op_sample *s, size_t n, const double *p, model_op_fit_stats *st,
                   sim_err *err);

/* Median / p90 of |e| and median of e over n errors (sorts a copy). */
int model_op_err_stats(const double *e, size_t n, double *median, double *p90, double *bias);

#endif
