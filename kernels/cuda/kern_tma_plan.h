/* kern_tma_plan — the arguments the rungs' tensor maps are encoded with
 * (kern_tma.cu hands them to the driver's cuTensorMapEncodeTiled), as
 * plain C so they are tested without a GPU (tests/unit/test_kern_desc.c):
 * a row-major rows × cols matrix of `elem`-byte elements (bf16: 2, e4m3:
 * 1), or `batch` such matrices back to back as a 3-D map (one matrix per
 * box, so a box never reads the next matrix's rows), cut in boxes of
 * box_cols (innermost) × box_rows, for the 128-byte swizzle. Also the byte
 * count one box copy completes on its mbarrier: TMA writes and counts the
 * whole box, zero-filling what lies past the matrix, so a stage's
 * expect_tx is the sum of its boxes whatever the edge. Pure functions; the
 * plan is the caller's. */
#ifndef KERN_TMA_PLAN_H
#define KERN_TMA_PLAN_H

#include "sim_err.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The cuTensorMapEncodeTiled arguments besides the data type and the
 * enumerations (interleave none, 128-byte swizzle, 256-byte L2 promotion,
 * zero fill), in its order: dims innermost first, the strides in bytes of
 * every dimension but the innermost, box and element strides per
 * dimension. */
typedef struct {
    uint32_t rank;            /* 2, or 3 with the batch dimension */
    uint64_t dims[3];         /* cols, rows, batch */
    uint64_t strides[2];      /* bytes: a row; a matrix (rank 3) */
    uint32_t box[3];          /* box_cols, box_rows, 1 */
    uint32_t elem_strides[3]; /* 1, 1, 1: every element */
    uint32_t box_bytes;       /* one box copy's transaction bytes */
} kern_tma_tiled;

/* The bytes one box of box_cols × box_rows elements of `elem` bytes brings
 * (and counts on the mbarrier), in or past the matrix's edges. */
static inline uint32_t kern_tma_box_bytes(uint32_t elem, uint32_t box_cols, uint32_t box_rows)
{
    return elem * box_cols * box_rows;
}

/* Fills *t for the matrix at device address `addr` (batch 0: a 2-D map).
 * SIM_EINVAL, naming what, when the driver would refuse it or the 128-byte
 * swizzle could not hold it: addr not 16-byte aligned; elem not 1, 2 or 4;
 * rows, cols < 1, batch < 0, or a dimension past 2^32; a row's bytes not a
 * multiple of 16 or a stride at or past 2^40; box sides of 0 or past 256;
 * a box row (box_cols · elem) not a multiple of 16 bytes or wider than the
 * 128-byte swizzle span. */
int kern_tma_tiled_plan(uintptr_t addr, uint32_t elem, int64_t rows, int64_t cols, int64_t batch, uint32_t box_cols,
                        uint32_t box_rows, kern_tma_tiled *t, sim_err *err);

#ifdef __cplusplus
}
#endif

#endif
