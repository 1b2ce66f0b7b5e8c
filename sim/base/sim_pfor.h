/* sim_pfor — a parallel for: fn(ctx, i) once for every i in [0, n), on up
 * to `threads` threads, the calling thread one of them. Indices are handed
 * out one at a time in increasing order, so long and short items balance;
 * which thread runs which index is not fixed, so fn must write only what
 * belongs to index i (results land in per-index slots, never in shared
 * state without its own lock). Threads that cannot be started are done
 * without: the work still completes on the ones that were. Returns the
 * number of threads that worked (>= 1 when n > 0). No heap, no globals. */
#ifndef SIM_PFOR_H
#define SIM_PFOR_H

#include <stdint.h>

#define SIM_PFOR_MAX_THREADS 256

typedef void (*sim_pfor_fn)(void *ctx, int64_t i);

/* threads <= 0: one per online CPU. */
int sim_pfor(int64_t n, int threads, sim_pfor_fn fn, void *ctx);

#endif
