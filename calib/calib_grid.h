/* calib_grid — the measurement grids: which shapes of each op calibration
 * times, chosen to cover what the cost model asks (GEMM m from 1 to 8192,
 * decode to prefill, over the n×k of typical projections; attention by
 * batch, context, heads, KV heads, head dim; norms and quantisation by rows
 * and hidden size; copies and collectives by bytes and ranks).
 *   tiny   a few small shapes per op: the CPU backend and the tests;
 *   quick  a GPU pass of a few minutes (scripts/gpu-check.sh);
 *   full   the dense grid for a perf-db worth committing.
 * calib_grid_build allocates the shape list (caller frees with free()).
 * calib_grid_check_shape is the small shape each op is checked at against
 * its CPU reference before any of its timings count. `ranks` is the number
 * of local GPUs for the all-reduce grid (0 skips it). */
#ifndef CALIB_GRID_H
#define CALIB_GRID_H

#include "../sim/sim_err.h"
#include "calib_op.h"

typedef enum { CALIB_GRID_TINY = 0, CALIB_GRID_QUICK = 1, CALIB_GRID_FULL = 2 } calib_grid_kind;

int calib_grid_from_name(const char *name, calib_grid_kind *out, sim_err *err);
const char *calib_grid_name(calib_grid_kind g);
int calib_grid_build(calib_grid_kind g, calib_op op, int32_t ranks, calib_shape **shapes, int64_t *n, sim_err *err);
void calib_grid_check_shape(calib_op op, calib_shape *s);

#endif
