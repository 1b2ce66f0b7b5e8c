/* calib_db_impl — internals shared by calib_db.c, calib_lookup.c and
 * calib_dump.c (not for other modules). */
#ifndef CALIB_DB_IMPL_H
#define CALIB_DB_IMPL_H

#include "calib_db.h"

#include <sqlite3.h>

#define CALIB_CACHE_SLOTS 32

typedef struct {
    int used;
    int64_t gpu_id;
    calib_op op;
    char dtype[16], kernel[64]; /* kernel "" = fastest of all */
    calib_point *pts;
    int64_t n;
    uint64_t stamp;
} calib_cache_slot;

struct calib_db {
    sqlite3 *h;
    calib_cache_slot cache[CALIB_CACHE_SLOTS];
    uint64_t clock;
};

/* Column list of points after gpu_id, in calib_point order. */
#define CALIB_POINT_COLS                                                                             \
    "op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, " \
    "ranks, reps, median_s, p10_s, p90_s, tflops, gbps, frac_of_peak, check_err, measured_at"
#define CALIB_GPU_COLS "name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend"

/* Reads a points row whose first selected column is gpu_id, then
 * CALIB_POINT_COLS. */
void calib_db_row_to_point(sqlite3_stmt *st, calib_point *p);
void calib_db_cache_clear(calib_db *db);

#endif
