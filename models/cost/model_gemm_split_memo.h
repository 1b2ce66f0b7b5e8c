/* model_gemm_split_memo — a memo of split-K picks (model_gemm_split_pick)
 * for the cost model's GEMM descriptors, so that an iteration whose GEMM
 * shapes recur (a decode batch keeps its size for many steps) does not
 * search the splits again.
 *
 * A sim_slot_table of 2^slots_log2 entries (direct-mapped, allocated once,
 * never grown): a pick's arguments (compared bit for bit) and its result;
 * a colliding pick replaces the entry. model_gemm_split_pick is a pure function of its
 * arguments, so an answer from the memo is the pick's own, bit for bit.
 * A memo is written while it answers: it belongs to one thread (a cluster
 * and its cost models run on one thread). Ownership: the creator frees it
 * with model_gemm_split_memo_free. Failure returns: create returns
 * SIM_EINVAL (size out of range) or SIM_ENOMEM with err filled. */
#ifndef MODEL_GEMM_SPLIT_MEMO_H
#define MODEL_GEMM_SPLIT_MEMO_H

#include "model_gemm_split.h"
#include "sim_err.h"

#include <stdint.h>

typedef struct model_gemm_split_memo model_gemm_split_memo;

int model_gemm_split_memo_create(int32_t slots_log2, model_gemm_split_memo **out, sim_err *err);
void model_gemm_split_memo_free(model_gemm_split_memo *m);
/* Picks answered from the memo and picks searched. */
void model_gemm_split_memo_stats(const model_gemm_split_memo *m, uint64_t *hits, uint64_t *misses);

/* model_gemm_split_pick through memo m (NULL: the pick itself); the same
 * answer. */
model_gemm_split model_gemm_split_pick_memo(model_gemm_split_memo *m, double sms, double tiles, double k,
                                            double tc_full, double bytes, double bw, double partial, int smooth);

#endif
