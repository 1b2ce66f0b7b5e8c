/* kern_grouped_ref — CPU references for the MoE grouped GEMM, C_e = A_e·B_e
 * for E experts sharing N and K, in the two layouts serving kernels use:
 *  - contiguous: tokens gathered per expert into one A of T×K rows;
 *    offsets[E+1] (offsets[0] = 0, offsets[E] = T) delimit expert e's rows;
 *    C is T×N in the same order. Needs a gather before and a scatter after
 *    (perm) but every tile is full.
 *  - masked: A is E×cap×K, expert e's tokens in their original order in the
 *    first counts[e] ≤ cap rows of its slab; C is E×cap×N and rows at or past
 *    counts[e] are left untouched. No reordering, but tiles at the edge of
 *    each group run partly empty.
 * B is E×K×N row-major (one K×N matrix per expert); all fp32, fp32
 * accumulate. The layout builders turn a token→expert assignment (top-1 per
 * row; top-k callers list each (token, expert) pair as its own row) into
 * either layout. Callers own every buffer. */
#ifndef KERN_GROUPED_REF_H
#define KERN_GROUPED_REF_H

#include <stdint.h>

void kern_grouped_contig_ref(int32_t E, int64_t N, int64_t K, const int64_t *offsets, const float *A,
                             const float *B, float *C);
void kern_grouped_masked_ref(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *counts,
                             const float *A, const float *B, float *C);

/* Contiguous layout: offsets[E+1]; perm[T]: row r of the gathered A is
 * token perm[r] (stable: original order within each expert). Returns 0, or
 * -1 when an expert id is out of [0, E). */
int kern_moe_layout_contig(const int32_t *expert_of, int64_t T, int32_t E, int64_t *offsets, int64_t *perm);
/* Masked layout: counts[E]; slot[T] = e·cap + position of the token in its
 * expert's slab. Returns 0, -1 for a bad expert id, -2 when an expert gets
 * more than cap tokens. */
int kern_moe_layout_masked(const int32_t *expert_of, int64_t T, int32_t E, int64_t cap, int64_t *counts,
                           int64_t *slot);

#endif
