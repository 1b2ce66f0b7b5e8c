/* calib_run — the calibration loop: for each selected op and each kernel
 * the backend has for it, check the kernel against its reference at every
 * one of the op's check cases (calib_check_cases: every timed variant and
 * the edges), then time every grid shape not yet in the perf-db (warm-up,
 * then `reps` timed executions; median, p10, p90) and commit each point as
 * soon as it is measured, so an interrupted run resumes where it stopped. A
 * kernel that fails any case is not timed; a case the kernel does not take
 * (prepare's SIM_EINVAL) is logged "n/a". Each grid point whose reference
 * costs at most check_budget operations (calib_op_check_cost; default
 * 2^28, negative: none) is itself checked before it is timed, and its
 * check_err is that check's worst error as a fraction of the tolerance
 * (≤ 1); a point too large to check stores check_err NULL, and a point that
 * fails its own check is not stored (counted failed). Samples taken while
 * the device reported a slowdown (calib_sample.throttled) are dropped and
 * retaken, up to 3·reps runs; a point left with fewer than
 * min(reps, CALIB_MIN_REPS) samples fails. max_points stops after that
 * many new points (resume tests, partial runs). A progress bar goes to
 * stderr when progress is set and stderr is a terminal; log, when non-NULL,
 * receives one line per check case and per point (with its clocks, dropped
 * samples and whether its data came from HBM, when the backend knows).
 * check_only runs the checks and nothing else (db may then be NULL). */
#ifndef CALIB_RUN_H
#define CALIB_RUN_H

#include "calib_backend.h"
#include "calib_db.h"
#include "calib_grid.h"

#include <stdio.h>

typedef struct {
    calib_grid_kind grid;
    uint32_t ops_mask;   /* bit (1u << op); 0 = all ops */
    int32_t check_only;
    int64_t max_points;  /* 0 = no limit */
    int32_t warmup, reps; /* 0 = the backend's defaults */
    int32_t progress;
    double check_budget; /* 0 = CALIB_CHECK_BUDGET, < 0 = no per-point checks */
    const char *kernels; /* comma-separated kernel names to check and time; NULL = every kernel */
    FILE *log;
} calib_run_opts;

#define CALIB_CHECK_BUDGET 268435456.0 /* 2^28 reference operations, a fraction of a second on one core */
#define CALIB_MIN_REPS 5

typedef struct {
    int64_t planned;      /* grid points for the selected ops and kernels */
    int64_t measured;     /* new points written */
    int64_t skipped;      /* already in the perf-db */
    int64_t failed;       /* points whose prepare/run failed (reason logged) */
    int64_t checks_passed, checks_failed, checks_skipped; /* check cases */
    int64_t points_checked;   /* new points that were themselves checked */
    int64_t samples_dropped;  /* samples taken during a slowdown, retaken */
    int32_t stopped;      /* 1 when max_points ended the run early */
} calib_run_stats;

int calib_run(calib_backend *b, calib_db *db, const calib_run_opts *o, calib_run_stats *st, sim_err *err);

/* Writes "op kernel dtype version bundled|library" per kernel of the
 * selected ops on backend b (what --kernels may name); 0, or SIM_EIO. */
int calib_run_list_kernels(calib_backend *b, uint32_t ops_mask, FILE *out, sim_err *err);

/* Parses "gemm,attn_decode" into a mask. */
int calib_ops_parse(const char *list, uint32_t *mask, sim_err *err);

#endif
