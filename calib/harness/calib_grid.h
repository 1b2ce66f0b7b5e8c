/* calib_grid — the measurement grids: which shapes of each op calibration
 * times, chosen to cover what the cost model asks (GEMM m from 1 to 8192,
 * decode to prefill, over the n×k of typical projections; attention by
 * batch, context, heads, KV heads, head dim; norms and quantisation by rows
 * and hidden size; copies and collectives by bytes and ranks).
 *   tiny   a few small shapes per op: the CPU backend and the tests;
 *   quick  a GPU pass of a few minutes (scripts/gpu-check.sh);
 *   full   the dense grid for a perf-db worth committing.
 * calib_grid_build allocates the shape list (caller frees with free()).
 * `ranks` is the number of local GPUs for the all-reduce grid (0 skips it).
 *
 * The check list: calib_check_cases gives, per op, the small shapes (and
 * data layouts, CALIB_LAYOUT_*) every kernel of the op is checked at
 * against its reference before any of its timings count. It covers every
 * code path the grids time — calib_variant names the path a shape takes
 * (attention: the head_dim template and the GQA group size; prefill also
 * with and without a cached prefix), and tests/model/test_calib.c asserts that
 * every variant of every grid is among the check cases' — plus the edges no
 * grid point has: partial M/N tiles, K tails, M = 1, partial prefill
 * query and key tiles and a cached prefix off the key-tile grid, masked groups below
 * their cap and empty experts, unequal contiguous groups, decode splits
 * left empty, −inf LSE partials and all-−inf rows, rows shorter than a
 * warp. */
#ifndef CALIB_GRID_H
#define CALIB_GRID_H

#include "sim_err.h"
#include "calib_op.h"

typedef enum { CALIB_GRID_TINY = 0, CALIB_GRID_QUICK = 1, CALIB_GRID_FULL = 2 } calib_grid_kind;

int calib_grid_from_name(const char *name, calib_grid_kind *out, sim_err *err);
const char *calib_grid_name(calib_grid_kind g);
int calib_grid_build(calib_grid_kind g, calib_op op, int32_t ranks, calib_shape **shapes, int64_t *n, sim_err *err);
typedef struct {
    calib_shape shape;
    uint32_t layout;  /* CALIB_LAYOUT_* (calib_op.h) */
    const char *what; /* what the case exercises, for the log */
} calib_check_case;

/* The op's check cases (a static list; n ≥ 1 for every op but allreduce). */
int32_t calib_check_cases(calib_op op, const calib_check_case **cases);
/* The code path a shape of op takes through the bundled kernels, e.g.
 * "d=128 group=4 cached" (ops with one path give ""). */
void calib_variant(calib_op op, const calib_shape *s, char *buf, size_t len);

#endif
