/* sim_slot_table — a direct-mapped table of 2^n fixed-size entries: the
 * skeleton of servesim's memos (the perf-db lookup memo, calib_memo; the
 * split-K pick memo, model_gemm_split_memo). The entries are allocated
 * zeroed once and never grown; a key hashes to one slot and a colliding key
 * replaces what the slot holds. The owner defines the entry type, the hash
 * and the compare, reaches a slot with SIM_SLOT_AT (typed, so the index is
 * scaled by a compile-time size) and counts its hits and misses in the
 * table's counters. Not thread-safe: a memo belongs to one thread.
 * Ownership: the owner embeds the struct and releases it with
 * sim_slot_table_release. Failure returns: init returns SIM_EINVAL (size
 * outside [2^log2_min, 2^log2_max]) or SIM_ENOMEM, with err naming the
 * table by the owner's `what`; the table is then empty (release is a
 * no-op). */
#ifndef SIM_SLOT_TABLE_H
#define SIM_SLOT_TABLE_H

#include "sim_err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    void *slots;           /* 2^log2 entries of the owner's type */
    uint64_t mask;         /* 2^log2 − 1 */
    uint64_t hits, misses; /* the owner's counts */
} sim_slot_table;

int sim_slot_table_init(sim_slot_table *t, int32_t log2, int32_t log2_min, int32_t log2_max, size_t entry_size,
                        const char *what, sim_err *err);
void sim_slot_table_release(sim_slot_table *t);
/* Hits and misses (0 and 0 for t NULL); either pointer may be NULL. */
void sim_slot_table_stats(const sim_slot_table *t, uint64_t *hits, uint64_t *misses);

/* The slot of a hash, as a pointer to the owner's entry type. */
#define SIM_SLOT_AT(t, type, hash) ((type *)(t)->slots + ((uint64_t)(hash) & (t)->mask))

#endif
