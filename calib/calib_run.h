/* calib_run — the calibration loop: for each selected op and each kernel
 * the backend has for it, check the kernel against its reference at the
 * op's check shape, then time every grid shape not yet in the perf-db
 * (warm-up, then `reps` timed executions; median, p10, p90) and commit each
 * point as soon as it is measured, so an interrupted run resumes where it
 * stopped. A kernel that fails its check is not timed. max_points stops
 * after that many new points (resume tests, partial runs). A progress bar
 * goes to stderr when progress is set and stderr is a terminal; log, when
 * non-NULL, receives one line per check and per point. check_only runs
 * the checks and nothing else (db may then be NULL). */
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
    FILE *log;
} calib_run_opts;

typedef struct {
    int64_t planned;      /* grid points for the selected ops and kernels */
    int64_t measured;     /* new points written */
    int64_t skipped;      /* already in the perf-db */
    int64_t failed;       /* points whose prepare/run failed (reason logged) */
    int64_t checks_passed, checks_failed, checks_skipped;
    int32_t stopped;      /* 1 when max_points ended the run early */
} calib_run_stats;

int calib_run(calib_backend *b, calib_db *db, const calib_run_opts *o, calib_run_stats *st, sim_err *err);

/* Parses "gemm,attn_decode" into a mask. */
int calib_ops_parse(const char *list, uint32_t *mask, sim_err *err);

#endif
