/* kern_grouped_plan — the tile list of the MoE grouped GEMM (kern_grouped.cu):
 * every KERN_GEMM_BM-row M tile of every expert, in expert order, as
 * (expert, first row, rows), so a grid of (tiles in the list) × (N tiles)
 * covers exactly the work: no CTA for an empty expert, none for a masked
 * slab's unused rows, nothing past an expert's last (possibly partial)
 * tile. Built from the contiguous layout's offsets or the masked layout's
 * counts (kern_grouped_ref.h). The GPU builds the same list on the device
 * from the device-side offsets or counts (as engines do: routing is on the
 * GPU) with the inline functions below; the host builders here are its
 * tested statement. Plain C, no allocation: callers own the list. The host
 * builders return the number of tiles, or -1 when the list would exceed
 * `max` or a group is malformed (offsets decreasing, negative counts). */
#ifndef KERN_GROUPED_PLAN_H
#define KERN_GROUPED_PLAN_H

#include "kern_plan.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [row0, row0 + rows) of the stacked A and C, all of expert `expert`;
 * 1 ≤ rows ≤ KERN_GEMM_BM. */
typedef struct {
    int64_t row0;
    int32_t expert, rows;
} kern_grouped_tile;

/* Expert e's first row and row count: contiguous (masked 0) offsets[e] and
 * offsets[e+1] − offsets[e]; masked e·cap and min(counts[e], cap). */
static inline KERN_PLAN_HD void kern_grouped_group(int masked, int32_t e, int64_t cap, const int64_t *rows_of,
                                                   int64_t *base, int64_t *rows)
{
    if (masked) {
        *base = (int64_t)e * cap;
        *rows = rows_of[e] < cap ? rows_of[e] : cap;
    } else {
        *base = rows_of[e];
        *rows = rows_of[e + 1] - rows_of[e];
    }
}

/* M tiles of a group of `rows` rows (0 for none or fewer). */
static inline KERN_PLAN_HD int64_t kern_grouped_group_tiles(int64_t rows)
{
    return rows > 0 ? (rows + KERN_GEMM_BM - 1) / KERN_GEMM_BM : 0;
}

/* Tile j of expert e whose rows start at `base`: the last one takes the
 * remainder. */
static inline KERN_PLAN_HD kern_grouped_tile kern_grouped_tile_of(int32_t e, int64_t base, int64_t rows, int64_t j)
{
    kern_grouped_tile t;
    const int64_t bm = KERN_GEMM_BM;
    int64_t left = rows - j * bm;
    t.row0 = base + j * bm;
    t.expert = e;
    t.rows = (int32_t)(left < bm ? left : bm);
    return t;
}

/* The most tiles a list can hold: E experts whose rows (largest group
 * max_rows) each fill ceil(max_rows / KERN_GEMM_BM) tiles at most. */
int64_t kern_grouped_tiles_max(int32_t E, int64_t max_rows);
/* Device workspace of the grouped GEMM: the tile count (16 bytes) and
 * kern_grouped_tiles_max(E, max_rows) tiles. */
size_t kern_grouped_workspace(int32_t E, int64_t max_rows);

/* The list from the contiguous layout's offsets[E+1]. */
int64_t kern_grouped_plan_contig(int32_t E, const int64_t *offsets, kern_grouped_tile *tiles, int64_t max);
/* The list from the masked layout's counts[E] (rows past cap ignored). */
int64_t kern_grouped_plan_masked(int32_t E, int64_t cap, const int64_t *counts, kern_grouped_tile *tiles,
                                 int64_t max);

#ifdef __cplusplus
}
#endif

#endif
