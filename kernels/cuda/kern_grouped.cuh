/* kern_grouped — the device-built tile list the grouped GEMM's rungs share
 * (kern_grouped.cu on the Ampere tile, kern_grouped_sm90.cu on the Hopper
 * one): the shape checks and the one-CTA kernel that writes the list of
 * kern_grouped_plan.h into the caller's workspace from the device-side
 * offsets (contiguous) or counts (masked). CUDA C++; the workspace is the
 * caller's. */
#ifndef KERN_GROUPED_CUH
#define KERN_GROUPED_CUH

#include "kern_cuda.cuh"
#include "kern_grouped_plan.h"

/* The list where the GEMM finds it: the tile count on the device, the
 * tiles, and the most tiles the list can hold (0: no rows, nothing to
 * launch). */
typedef struct {
    const int64_t *count;
    const kern_grouped_tile *tiles;
    int64_t max;
} kern_grouped_list;

/* Checks the shape (experts; N, K multiples of 8) and the workspace
 * (kern_grouped_workspace(E, max_rows) bytes; max_rows: contiguous the
 * largest group, masked the cap) and launches the list builder on the
 * default stream; `what` names the kernel in messages. SIM_EINVAL for a
 * bad shape or a workspace too small, SIM_EIO for a failed launch. */
int kern_grouped_list_build(bool masked, const char *what, int32_t E, int64_t max_rows, int64_t cap, int64_t N,
                            int64_t K, const int64_t *d_rows_of, void *d_work, size_t work_bytes,
                            kern_grouped_list *list, sim_err *err);

#endif
