/* kern_grouped_plan — see kern_grouped_plan.h. */
#include "kern_grouped_plan.h"

int64_t kern_grouped_tiles_max(int32_t E, int64_t max_rows)
{
    return E > 0 ? (int64_t)E * kern_grouped_group_tiles(max_rows) : 0;
}

size_t kern_grouped_workspace(int32_t E, int64_t max_rows)
{
    return 16 + (size_t)kern_grouped_tiles_max(E, max_rows) * sizeof(kern_grouped_tile);
}

static int64_t plan(int masked, int32_t E, int64_t cap, const int64_t *rows_of, kern_grouped_tile *tiles,
                    int64_t max)
{
    int64_t n = 0;
    for (int32_t e = 0; e < E; e++) {
        int64_t base, rows;
        kern_grouped_group(masked, e, cap, rows_of, &base, &rows);
        if (rows < 0) return -1;
        int64_t nt = kern_grouped_group_tiles(rows);
        if (nt > max - n) return -1;
        for (int64_t j = 0; j < nt; j++) tiles[n++] = kern_grouped_tile_of(e, base, rows, j);
    }
    return n;
}

int64_t kern_grouped_plan_contig(int32_t E, const int64_t *offsets, kern_grouped_tile *tiles, int64_t max)
{
    return plan(0, E, 0, offsets, tiles, max);
}

int64_t kern_grouped_plan_masked(int32_t E, int64_t cap, const int64_t *counts, kern_grouped_tile *tiles,
                                 int64_t max)
{
    return plan(1, E, cap, counts, tiles, max);
}
