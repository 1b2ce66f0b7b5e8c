/* test_perfdb_util — writing hand-made perf-db rows for the tests that
 * check how the cost model and the simulator use them: an H100 identity
 * (GPU backend), bf16 GEMM points, and the H100's rows as a dump writes
 * them. Include after test_util.h. */
#ifndef TEST_PERFDB_UTIL_H
#define TEST_PERFDB_UTIL_H

#include "calib_db.h"

#include <math.h>
#include <string.h>

/* A dump's gpus row for an H100, and the identity sub-select a point of
 * a dump names it by (as `db export` writes them). */
#define TEST_DUMP_GPU_ROW                                                                                       \
    "INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) "           \
    "VALUES('NVIDIA H100', 132, '9.0', 1980, 2619, '550', '12.4', 'gpu');\n"
#define TEST_DUMP_GPU_REF                                                                                       \
    "(SELECT id FROM gpus WHERE name='NVIDIA H100' AND sms=132 AND cc='9.0' AND sm_clock_mhz=1980 AND "        \
    "mem_clock_mhz=2619 AND driver='550' AND cuda='12.4' AND backend='gpu')"

/* Adds (or finds) the H100 the rows belong to; its id, 0 on failure. */
static inline int64_t test_perfdb_h100(calib_db *db)
{
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "NVIDIA H100 80GB HBM3");
    snprintf(id.backend, sizeof id.backend, "gpu");
    snprintf(id.cc, sizeof id.cc, "9.0");
    id.sms = 132;
    int64_t gid = 0;
    sim_err e = {{0}};
    CHECK_MSG(calib_db_gpu_ensure(db, &id, &gid, &e) == 0, "%s", e.msg);
    return gid;
}

/* One measured bf16 GEMM m×n×k taking `seconds`. */
static inline void test_perfdb_gemm(calib_db *db, int64_t gid, int64_t m, int64_t n, int64_t k, double seconds)
{
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = CALIB_OP_GEMM;
    snprintf(p.dtype, sizeof p.dtype, "bf16");
    snprintf(p.kernel, sizeof p.kernel, "test");
    p.shape.m = m, p.shape.n = n, p.shape.k = k;
    p.reps = 1;
    p.median_s = p.p10_s = p.p90_s = seconds;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    sim_err e = {{0}};
    CHECK_MSG(calib_db_point_insert(db, gid, &p, &e) == 0, "%s", e.msg);
}

#endif
