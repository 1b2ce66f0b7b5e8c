/* calib_table — the perf-db of one GPU held in memory for the cost model:
 * built once (one SQLite query) when a scenario is built, then read without
 * SQLite, locks or allocation by any number of threads.
 *
 * Series. Points are grouped by (op, dtype) and, for the grouped GEMMs, by
 * routing skew (skew_milli): one series per calibrated skew, each fitted on
 * its own rows alone, chained in ascending skew. Which kernels a series holds
 * depends on the engine the table is built for: when some kernel of the
 * (op, dtype) is named "<engine>-<version>:<kernel>" (rows ingested from a
 * serving engine's measured tables, calib_ingest.h), only that engine's
 * kernels enter; otherwise every kernel does. Either way each shape keeps
 * its fastest kernel's median.
 *
 * Fitted model. Per series, a floor plus work at a fitted rate:
 *   t(shape) = t0 + F·s_flop / η_wave + B·s_byte
 * t0 (s) the fixed floor (launch, sync), s_flop (s/FLOP) the inverse of the
 * compute rate reached, s_byte (s/byte) the inverse of the bandwidth
 * reached, F and B the op's FLOPs and bytes (calib_op_flops/bytes), and
 * η_wave the fraction of SMs a grid of 128×128 output tiles keeps busy
 * (GEMMs, grouped GEMMs, prefill attention; 1 for other ops). The three
 * coefficients are non-negative, fitted by weighted linear least squares
 * (GSL) on relative error. The op's floor is min(t0, fastest measured
 * median): no lookup answers below it.
 *
 * Lookup. The axes of a series are the shape fields that vary among its
 * points. Inside the grid the answer is the fitted model times the
 * multilinear interpolation, in log(1+x) of every axis, of the measured
 * residuals log(t_measured / t_model) at the 2^axes surrounding grid
 * corners (corners not measured are left out and the weights renormalised;
 * none measured: the model alone). A measured shape returns its median
 * exactly. Outside the grid (past an axis' range, or another value of a
 * field that does not vary) the residual of the nearest edge fades out
 * linearly over a factor 2 in shape, leaving the fitted model.
 *
 * Routing skew. A query's skew_milli picks the series of its (op, dtype)
 * chain: a calibrated skew is answered by its series alone; between two
 * calibrated skews s_lo < s < s_hi the answer is interpolated linearly in
 * s, t = t_lo + (s − s_lo)/(s_hi − s_lo)·(t_hi − t_lo), each t the lookup
 * of the same shape in its skew's series; below the lowest calibrated skew
 * or above the highest, that series' answer (no extrapolation). Linear in
 * s because the grids calibrate only two or three skews (0, 1, 1.5) and
 * the hot expert's share, which sets the time, moves smoothly between
 * them: a step to the skew below would price s = 0.9 as balanced. A
 * perf-db with no skewed rows has a chain of one (skew 0) and answers
 * every query, whatever its skew_milli, exactly as a skew-0 query. Units:
 * seconds, FLOPs, bytes.
 *
 * Ownership: calib_table_build returns a table the caller frees with
 * calib_table_free; it keeps no reference to the db. Failure returns: a
 * negative SIM_E* code with err filled. */
#ifndef CALIB_TABLE_H
#define CALIB_TABLE_H

#include "sim_err.h"
#include "calib_db.h"
#include "calib_op.h"

#include <stdint.h>

typedef struct calib_table calib_table;
typedef struct calib_series calib_series;

typedef struct {
    double t0_s;          /* fitted floor */
    double s_per_flop;    /* 1 / compute rate reached */
    double s_per_byte;    /* 1 / bandwidth reached */
    double floor_s;       /* min(t0, fastest median): no answer below */
    double rms_rel;       /* RMS of (model − measured)/measured over the points */
    int64_t n_points;
    int32_t n_axes;
    int64_t skew_milli;   /* the routing skew of its rows (grouped GEMMs; else 0) */
    char kernels[96];     /* "vllm-0.24.0" (engine rows), or "all" / the one kernel */
} calib_series_info;

typedef enum {
    CALIB_TABLE_NONE = 0,     /* no series for (op, dtype) */
    CALIB_TABLE_MEASURED = 1, /* a measured shape */
    CALIB_TABLE_INTERP = 2,   /* inside the grid: model × interpolated residual */
    CALIB_TABLE_FIT = 3       /* outside the grid: the fitted model (fading residual) */
} calib_table_status;

/* Loads every point of gpu_id (dtype filter: NULL = all, else a NULL-
 * terminated list) and fits each series. engine NULL or "" = no engine
 * preference (fastest kernel of all). sms: SM count for η_wave (≤ 0: the
 * db's GPU row). An empty table (no points) is not an error. */
int calib_table_build(calib_db *db, int64_t gpu_id, const char *engine, const char *const *dtypes, int32_t sms,
                      calib_table **out, sim_err *err);
void calib_table_free(calib_table *t);

int32_t calib_table_n_series(const calib_table *t);
/* The series of (op, dtype), NULL when none: resolve once, look up often.
 * With several routing skews, the lowest skew's (the chain's first). */
const calib_series *calib_table_series(const calib_table *t, calib_op op, const char *dtype);
/* Its routing skew, the first series of its skew chain, and the next
 * (higher skew; NULL at the last). */
int64_t calib_series_skew_milli(const calib_series *s);
const calib_series *calib_series_skew_first(const calib_series *s);
const calib_series *calib_series_skew_next(const calib_series *s);
void calib_series_describe(const calib_series *s, calib_op *op, const char **dtype, calib_series_info *info);
const calib_series *calib_table_series_at(const calib_table *t, int32_t i);

/* Latency (s) of shape sh; status may be NULL. Thread-safe, allocation-free.
 * A NULL series answers 0 with CALIB_TABLE_NONE. Any series of a skew
 * chain answers for the whole chain at sh->skew_milli (see "Routing skew";
 * status: FIT when a series used answered FIT, else INTERP between two
 * skews, else that series' status). */
double calib_series_lookup(const calib_series *s, const calib_shape *sh, calib_table_status *status);
/* Leave-one-out check of the in-grid interpolation: every measured point
 * whose two neighbours one grid step below and above along an axis (all
 * other fields equal) are measured too is predicted from those two alone,
 * as a lookup between them answers (the fitted model times the log-space
 * interpolated residual, floored), and |predicted / measured − 1| written
 * to err (at most max values): one value per (point, axis); a point with
 * no such axis is tried along pairs of axes that move together (the
 * diagonal neighbours), one value. Returns how many values there are. */
int64_t calib_series_holdout(const calib_series *s, double *err, int64_t max);
/* The fitted model alone at shape sh (not floored). */
double calib_series_model(const calib_series *s, const calib_shape *sh);

/* A memo of lookups: a sim_slot_table of 2^slots_log2 entries (direct-
 * mapped, allocated once, never grown: a colliding shape replaces the
 * entry), and per series the
 * grid cell of its last in-grid interpolation (its corners' residuals), so
 * that a miss inside the same cell — decode attention's mean context moves
 * by about a token an iteration — re-weights those corners instead of
 * searching the grid (the same answer). A memo belongs to one thread (a
 * cluster and its cost models are run by one thread); the tables stay
 * shared and read-only. */
typedef struct calib_memo calib_memo;
int calib_memo_create(int32_t slots_log2, calib_memo **out, sim_err *err);
void calib_memo_free(calib_memo *m);
void calib_memo_stats(const calib_memo *m, uint64_t *hits, uint64_t *misses);
/* Misses answered from a kept grid cell. */
uint64_t calib_memo_bracket_hits(const calib_memo *m);
/* calib_series_lookup through memo m (NULL = no memo); the same answer. */
double calib_series_lookup_memo(const calib_series *s, const calib_shape *sh, calib_memo *m,
                                calib_table_status *status);

#endif
