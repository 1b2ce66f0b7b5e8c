/* calib_db — the perf-db: measured kernel latencies in SQLite, and the
 * read-back the cost model uses.
 *
 * Schema (version CALIB_SCHEMA_VERSION, in table meta): gpus holds one row
 * per device identity (name, SMs, compute capability, clocks, driver, CUDA
 * version, backend); points holds one row per measurement (op, dtype,
 * kernel + version, the twelve shape fields of calib_shape — the last,
 * skew_milli, the grouped GEMMs' routing skew —, median/p10/p90
 * seconds, TFLOP/s, GB/s, fraction of the roofline peak, check error, UTC
 * time) with a UNIQUE key over (gpu, op, dtype, kernel, kernel version,
 * shape) so a resumed run skips what is measured. Version 1 (no
 * skew_milli) is still read: a file of it is migrated when opened, a dump
 * of it imported, its rows at skew 0 (calib_db_migrate.c,
 * calib_dump_read.c); exports are always of the current version. Each point is written in
 * its own transaction. A text dump (.sql, calib_db_export) is the form
 * committed to the repository; calib_db_import loads one back (merging:
 * rows already present are kept).
 *
 * Lookup: latency of (gpu, op, dtype, shape) interpolated multilinearly in
 * log(latency) over log(1+x) of the op's axes (calib_op_axes: m,n,k for
 * GEMMs, batch/ctx for attention, …) on the measured grid; the other shape
 * fields must match exactly. kernel NULL takes, per shape, the fastest
 * measured kernel. Outside the grid, or with no point sharing the exact fields
 * (another head count, say), the status says so and the nearest
 * point's latency and efficiency (fraction of peak) are returned so the
 * caller can scale its analytic estimate. Units: seconds, FLOP/s, bytes/s.
 * The handle owns the SQLite connection and a cache of loaded points. */
#ifndef CALIB_DB_H
#define CALIB_DB_H

#include "sim_err.h"
#include "calib_op.h"

#include <stdint.h>
#include <stdio.h>

#define CALIB_SCHEMA_VERSION 2

typedef struct calib_db calib_db;

typedef struct {
    char name[256];
    int32_t sms;
    char cc[16];                 /* "9.0", or "cpu" */
    int32_t sm_clock_mhz, mem_clock_mhz;
    char driver[32], cuda[32];
    char backend[16];            /* "gpu" | "cpu" */
} calib_gpu_id;

/* Longest dtype name a point holds, with its NUL ("w4a8_mxfp4_mxfp8",
 * "fp8_block/fp8"). */
#define CALIB_DTYPE_MAX 24

typedef struct {
    calib_op op;
    char dtype[CALIB_DTYPE_MAX];
    char kernel[64];
    int32_t kernel_version;
    calib_shape shape;
    int32_t reps;
    double median_s, p10_s, p90_s;
    double tflops, gbps, frac_of_peak, check_err; /* NAN = unknown */
    char measured_at[32];                         /* ISO 8601 UTC */
} calib_point;

enum { CALIB_DB_READONLY = 0, CALIB_DB_CREATE = 1 };

/* Opens (or with CALIB_DB_CREATE creates) a perf-db. Refused with
 * SIM_EINVAL: a missing file (read-only), a directory or other non-regular
 * file, a file that is not SQLite, a servesim results DB or any other SQLite
 * file without the perf-db tables, a schema version other than 1 and
 * CALIB_SCHEMA_VERSION, and a perf-db holding a row that calib_point_check
 * (or the column types) refuses. A version-1 file is migrated: in place
 * when opened with CALIB_DB_CREATE, into memory (the file untouched) when
 * read-only. */
int calib_db_open(const char *path, int flags, calib_db **out, sim_err *err);
void calib_db_close(calib_db *db);

/* Finds or inserts the identity; *gpu_id is its row id. */
int calib_db_gpu_ensure(calib_db *db, const calib_gpu_id *id, int64_t *gpu_id, sim_err *err);
/* First GPU (lowest id) whose name contains `name` (case-insensitive) and,
 * if backend is non-NULL, has that backend. SIM_EINVAL when none. */
int calib_db_gpu_find(calib_db *db, const char *name, const char *backend, int64_t *gpu_id, sim_err *err);

int calib_db_point_exists(calib_db *db, int64_t gpu_id, const calib_point *p, int *exists, sim_err *err);
/* One transaction per point; an existing identical key is left alone. */
int calib_db_point_insert(calib_db *db, int64_t gpu_id, const calib_point *p, sim_err *err);
/* n points in one transaction, all or none: each is checked first
 * (calib_point_check); *added (may be NULL) gets the rows new to the db. */
int calib_db_points_insert(calib_db *db, int64_t gpu_id, const calib_point *pts, size_t n, int64_t *added,
                           sim_err *err);

typedef int (*calib_db_gpu_cb)(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points);
int calib_db_gpu_foreach(calib_db *db, calib_db_gpu_cb cb, void *ctx, sim_err *err);
/* gpu_id 0 = all GPUs, op −1 = all ops; ordered by gpu, op, dtype, kernel,
 * shape. A non-zero callback return stops the walk and is returned. */
typedef int (*calib_db_point_cb)(void *ctx, int64_t gpu_id, const calib_point *p);
int calib_db_point_foreach(calib_db *db, int64_t gpu_id, int op, calib_db_point_cb cb, void *ctx, sim_err *err);

/* The range a stored latency (median, p10, p90) must lie in, seconds: a
 * row outside it, not finite, or with p10 ≤ median ≤ p90 broken (beyond a
 * relative 1e-12 of rounding) is refused
 * on insert, on import and when a perf-db file is opened. */
#define CALIB_MIN_LATENCY_S 1e-9
#define CALIB_MAX_LATENCY_S 3600.0

/* 0 when p may be stored; −1 with the field and reason in why. */
int calib_point_check(const calib_point *p, char *why, size_t len);

int calib_db_export(calib_db *db, FILE *out, sim_err *err);
/* Reads what calib_db_export writes, and nothing else: the dump is parsed
 * here, never handed to SQLite as SQL. Schema and transaction statements
 * are checked and skipped; each gpus/points insert must be
 * INSERT OR IGNORE … VALUES(…) of literals of the column's type (a point's
 * GPU given as the identity sub-select export writes), and every row passes
 * the checks of calib_point_check. Anything else — INSERT … SELECT,
 * functions, expressions, a NUL byte, another schema version — is
 * SIM_EINVAL naming file:line:column and the statement number, and nothing
 * is imported (one transaction). A dump of schema version 1 (points
 * without skew_milli) loads with every row at skew 0. Files must be
 * regular and at most
 * CALIB_DUMP_MAX_BYTES. */
#define CALIB_DUMP_MAX_BYTES (512LL << 20)
int calib_db_import(calib_db *db, const char *sql_path, int64_t *rows, sim_err *err);
/* The same on text already in memory (len bytes, NULs refused); `name`
 * labels messages. */
int calib_db_import_text(calib_db *db, const char *text, size_t len, const char *name, int64_t *rows, sim_err *err);

/* The newest calibration dump for a catalogue GPU ("h200-sxm"): the
 * <gpu>-*.sql file with the greatest name under $SERVESIM_CALIB_DATA or the
 * build's calib/data. Returns 1 and writes the path, or 0 when there is none. */
int calib_db_default_path(const char *gpu, char *out, size_t len);
/* calib_db_import of a .sql dump or a gzip-compressed .sql.gz one. */
int calib_db_import_any(calib_db *db, const char *path, int64_t *rows, sim_err *err);
/* Opens a perf-db file, or imports a .sql / .sql.gz dump into an in-memory one. */
int calib_db_open_any(const char *path, calib_db **out, sim_err *err);

typedef enum {
    CALIB_LOOKUP_EXACT = 0,   /* a measured point */
    CALIB_LOOKUP_INTERP = 1,  /* inside the grid, interpolated */
    CALIB_LOOKUP_NEAREST = 2, /* inside the grid's range but a corner is missing: nearest point's */
    CALIB_LOOKUP_OUTSIDE = 3, /* outside the grid: not found; nearest point given */
    CALIB_LOOKUP_NONE = 4     /* no points for this gpu/op/dtype */
} calib_lookup_status;

typedef struct {
    calib_lookup_status status;
    double latency_s;        /* EXACT/INTERP: the answer; NEAREST/OUTSIDE: the nearest point's, for the
                              * caller to scale by its roofline (see model_cost_db.c) */
    double efficiency;       /* frac_of_peak of the nearest point (NAN if unknown) */
    calib_shape nearest;
    int32_t points_used;
} calib_lookup_result;

int calib_db_lookup(calib_db *db, int64_t gpu_id, calib_op op, const char *dtype, const char *kernel,
                    const calib_shape *s, calib_lookup_result *res, sim_err *err);

#endif
