/* calib_check — how the calibration harness decides that a kernel's output
 * is right, shared by the CPU backend and the GPU plugin:
 *   - element-wise comparison with a reference: element i passes when
 *     |x_i − ref_i| ≤ atol + rtol·|ref_i| (a NaN or an infinity that the
 *     reference does not have never passes); the result is the worst ratio
 *     |x − ref| / (atol + rtol·|ref|) over all elements (≤ 1 passes), where
 *     it is, both values there, and how many elements failed;
 *   - NaN poisoning: output buffers are filled with CALIB_POISON_BYTE
 *     before the checked launch (0xFF bytes are NaN in fp32, bf16, e4m3 and
 *     E8M0), so an element the kernel never wrote cannot pass;
 *   - guard canaries: CALIB_CANARY_BYTES of a fixed pattern after every
 *     buffer, verified after the launch, so a write past a buffer's end is
 *     caught even where it lands in memory nobody compares.
 * Pure functions over host memory; no allocation, no failure returns.
 * calib_check_init resets everything, the canary count included: call it
 * before counting canaries. */
#ifndef CALIB_CHECK_H
#define CALIB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define CALIB_POISON_BYTE 0xFF
#define CALIB_CANARY_BYTES 256

typedef struct {
    double worst;          /* max |x−ref|/(atol+rtol·|ref|); INFINITY for a non-finite miss; ≤ 1 passes */
    int64_t worst_index;   /* element of the worst ratio (−1: nothing compared) */
    double got, ref;       /* the two values there */
    int64_t n, n_bad;      /* elements compared, elements over the tolerance */
    double atol, rtol;
    int32_t canary_broken; /* buffers whose guard canary was overwritten */
    char what[64];         /* which output the worst element is in ("o", "lse", "scale") */
} calib_check_result;

void calib_check_init(calib_check_result *r, double atol, double rtol);
/* Compares n floats and merges them into r (the worst over all calls wins;
 * counts add up). offset is added to the reported index; what names the
 * output for the report. */
void calib_check_compare(calib_check_result *r, const float *got, const float *ref, int64_t n, int64_t offset,
                         const char *what);
/* Like calib_check_compare for one value with its own tolerance ratio
 * already computed (quantisation bounds): ratio ≤ 1 passes. */
void calib_check_ratio(calib_check_result *r, double ratio, int64_t index, double got, double ref, const char *what);
/* Exact comparison of n bytes (copies): the first differing byte is the
 * worst, with ratio INFINITY. */
void calib_check_bytes(calib_check_result *r, const void *got, const void *ref, size_t n, const char *what);
/* max |x_i| (0 for n = 0): the scale absolute tolerances are set against. */
double calib_absmax(const float *x, int64_t n);
/* 1 when the check passed: every element within tolerance, no canary broken,
 * at least one element compared. */
int calib_check_passed(const calib_check_result *r);
/* "worst 0.31 of tolerance at o[1234]: 0.5012 vs 0.5 (atol 1e-3, rtol 1e-2),
 * 0 of 40960 over" or the canary/NaN finding. */
void calib_check_format(const calib_check_result *r, char *buf, size_t len);

/* The canary pattern after a buffer of `bytes` (the caller allocated
 * bytes + CALIB_CANARY_BYTES), and its verification (1 = intact). */
void calib_canary_fill(void *buf_end, size_t n);
int calib_canary_intact(const void *buf_end, size_t n);

#endif
