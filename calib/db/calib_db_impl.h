/* calib_db_impl — internals shared by calib_db.c, calib_lookup.c and
 * calib_dump.c (not for other modules). */
#ifndef CALIB_DB_IMPL_H
#define CALIB_DB_IMPL_H

#include "calib_db.h"

#include <sqlite3.h>

#define CALIB_CACHE_SLOTS 32

/* A slot of calib_db_lookup's cache, keyed by (gpu, op, dtype, kernel):
 * gpu and op, compared first, are integers; dtype and kernel stay the
 * names the rows are stored under (an open set, see calib_dtype.h), so a
 * name is compared only where gpu and op already match. */
typedef struct {
    int used;
    int64_t gpu_id;
    calib_op op;
    char dtype[CALIB_DTYPE_MAX], kernel[64]; /* kernel "" = fastest of all */
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
    "ranks, skew_milli, reps, median_s, p10_s, p90_s, tflops, gbps, frac_of_peak, check_err, measured_at"
/* The same for schema version 1 (no skew_milli: every row skew 0), what
 * calib_db_migrate.c and a version-1 dump read. */
#define CALIB_POINT_COLS_V1                                                                          \
    "op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, " \
    "ranks, reps, median_s, p10_s, p90_s, tflops, gbps, frac_of_peak, check_err, measured_at"
/* The shape columns, in calib_shape order (the key, and the walks' order). */
#define CALIB_SHAPE_COLS "m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, ranks, skew_milli"
#define CALIB_GPU_COLS "name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend"

/* The first line of every dump; the second is "-- schema_version N". */
#define CALIB_DUMP_HEADER "-- servesim perf-db dump\n"

#define CALIB_GPU_NCOLS 8    /* columns of CALIB_GPU_COLS */
#define CALIB_POINT_NCOLS 25 /* columns of CALIB_POINT_COLS */
#define CALIB_POINT_COL_SKEW 15 /* skew_milli's index in CALIB_POINT_COLS, absent in version 1 */

/* A column value as SQLite or a dump literal gives it (s: not
 * NUL-terminated, len bytes; owned by whoever produced it). */
typedef enum { CALIB_V_NULL, CALIB_V_INT, CALIB_V_REAL, CALIB_V_TEXT, CALIB_V_BLOB } calib_vtype;
typedef struct {
    calib_vtype t;
    int64_t i;
    double r;
    const char *s;
    size_t len;
} calib_value;

/* calib_db_check.c: a gpus row (CALIB_GPU_COLS order) or a points row
 * (CALIB_POINT_COLS order) checked for types and ranges and converted; 0,
 * or −1 with the reason in why and the offending column in *bad_col (−1
 * when the row as a whole is wrong, e.g. p10 > median; bad_col may be NULL). */
int calib_gpu_from_values(const calib_value *v, calib_gpu_id *out, int32_t *bad_col, char *why, size_t len);
int calib_point_from_values(const calib_value *v, calib_point *out, int32_t *bad_col, char *why, size_t len);
const char *calib_gpu_col_name(int32_t i);
const char *calib_point_col_name(int32_t i);
/* Columns first..first+n−1 of the current row. */
void calib_values_from_row(sqlite3_stmt *st, int first, int n, calib_value *v);
/* Every gpus and points row checked; SIM_EINVAL naming the first bad row's
 * table, id and reason, and how many are bad. */
int calib_db_check_rows(calib_db *db, sim_err *err);

/* calib_db.c: binds an identity to parameters 1..8, a point (with its
 * gpu_id) to parameters 1..26 of an insert in CALIB_*_COLS order. */
void calib_db_bind_gpu(sqlite3_stmt *st, const calib_gpu_id *id);
void calib_db_bind_point(sqlite3_stmt *st, int64_t gpu_id, const calib_point *p);

/* Reads a points row whose first selected column is gpu_id, then
 * CALIB_POINT_COLS. */
void calib_db_row_to_point(sqlite3_stmt *st, calib_point *p);
void calib_db_cache_clear(calib_db *db);
/* The perf-db's tables as this version creates them (CREATE … IF NOT
 * EXISTS), shared by calib_db.c and calib_db_migrate.c. */
extern const char calib_schema_sql[];

/* calib_db_migrate.c: a perf-db of an older schema version brought to
 * CALIB_SCHEMA_VERSION (version 1: points gain skew_milli, 0 in every
 * row, and the key holds it). Writable: in place, in one transaction;
 * read-only: copied into a new in-memory database that replaces db->h
 * (the file is left as it is). SIM_EINVAL for a version it cannot read. */
int calib_db_migrate(calib_db *db, const char *path, int version, int writable, sim_err *err);

#endif
