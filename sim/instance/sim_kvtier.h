/* sim_kvtier — a capacity-bounded LRU set of cache-block keys: the host-DRAM
 * tier of one node or the remote pool below the GPUs' prefix caches.
 *
 * A tier holds whole blocks by key (sim_prefix_keys.h), with no reference
 * counts: blocks in it are not being computed on, only stored. Capacity is
 * in blocks (the caller converts bytes with the model's KV bytes per
 * block); 0 means the tier holds nothing. Blocks enter by demotion (insert,
 * evicting the least recently used block when full and handing it to a
 * callback, so the caller can demote it one tier further down), are found
 * as a leading run of a key chain (match, which makes them most recently
 * used), and leave by promotion (take: the caller moves them up) or by
 * eviction. The tier never copies a block elsewhere itself, so a caller that
 * moves blocks with insert/take keeps each block in exactly one place.
 * Every operation is O(1) expected per block. The tier owns its memory. */
#ifndef SIM_KVTIER_H
#define SIM_KVTIER_H

#include "sim_err.h"

#include <stdint.h>

typedef struct sim_kvtier sim_kvtier;

/* Called with each block a tier drops to make room (or, at capacity 0, the
 * block offered to it), least recently used first. */
typedef void (*sim_kvtier_evict_fn)(void *ctx, uint64_t key);

int sim_kvtier_create(int64_t capacity_blocks, sim_kvtier **out, sim_err *err);
void sim_kvtier_destroy(sim_kvtier *t);

int64_t sim_kvtier_size(const sim_kvtier *t);
int64_t sim_kvtier_capacity(const sim_kvtier *t);
int sim_kvtier_contains(const sim_kvtier *t, uint64_t key);

/* Length of the leading run of keys held; those become most recently used,
 * the first key least recent of them. */
int32_t sim_kvtier_match(sim_kvtier *t, const uint64_t *keys, int32_t n);
/* As match, without changing recency. */
int32_t sim_kvtier_peek(const sim_kvtier *t, const uint64_t *keys, int32_t n);

/* Demotes key into the tier as its most recently used block (a key already
 * held is only made most recent). When full, the least recently used block
 * is evicted first and passed to cb (may be NULL). Returns 1 if the key is
 * held afterwards, 0 if the tier has capacity 0 (cb then gets the key
 * itself), SIM_ENOMEM if memory ran out (tier unchanged). */
int sim_kvtier_insert(sim_kvtier *t, uint64_t key, sim_kvtier_evict_fn cb, void *ctx);

/* Removes the leading run of keys held (promotion: the caller moves them up)
 * and returns its length. */
int32_t sim_kvtier_take(sim_kvtier *t, const uint64_t *keys, int32_t n);

/* Removes one key. 1 if it was held, 0 if not. */
int sim_kvtier_remove(sim_kvtier *t, uint64_t key);

/* Evicts up to n least recently used blocks, calling cb (may be NULL) for
 * each. Returns the number evicted. */
int64_t sim_kvtier_evict(sim_kvtier *t, int64_t n, sim_kvtier_evict_fn cb, void *ctx);

/* Writes up to cap keys from least to most recently used into out and
 * returns how many it wrote (tests, debugging). */
int64_t sim_kvtier_keys_lru(const sim_kvtier *t, uint64_t *out, int64_t cap);

#endif
