/* sim_prefix — one instance's prefix-cache index over cache blocks.
 *
 * Nodes are cache blocks named by their chain keys (sim_prefix_keys.h): a
 * node's parent is the block before it, so the index is a radix tree held
 * as a hash table (key → node) plus parent links, as in vLLM's and SGLang's
 * prefix caches. Each node has a reference count (requests using it), a
 * child count, a last-access time (sim_time, ns) with a tie-breaking access
 * counter, and a hit count. Only unreferenced leaves can be evicted — a
 * block with children stays while anything below it is cached, so every
 * cached chain is whole from its root. Evictable leaves sit in a binary
 * min-heap ordered by (last access, access counter) for LRU or by (hits,
 * last access, access counter) for LFU; every operation is O(1) expected
 * per block for the table plus O(log n) for the heap.
 *
 * Capacity is in blocks. With capacity > 0 the index bounds itself: insert
 * evicts first (calling the evict hook for each victim, e.g. to demote it to
 * a lower tier) and, when everything is referenced, inserts fewer blocks and
 * says so. With capacity 0 the owner (the instance's KV-block manager)
 * bounds it by calling sim_prefix_evict. The index owns its memory; keys
 * are copied; callbacks must not call back into the index. */
#ifndef SIM_PREFIX_H
#define SIM_PREFIX_H

#include "sim_engine.h"
#include "sim_err.h"

#include <stdint.h>

typedef enum {
    SIM_PREFIX_LRU = 0, /* least recently used first */
    SIM_PREFIX_LFU = 1  /* fewest hits first, then least recently used */
} sim_prefix_policy;

typedef struct sim_prefix sim_prefix;

/* Called once for each evicted block (leaf first, so a chain's deeper
 * blocks are reported before its shallower ones). */
typedef void (*sim_prefix_evict_fn)(void *ctx, uint64_t key);

typedef struct {
    int64_t total;       /* blocks held */
    int64_t referenced;  /* blocks with refcount > 0 */
    int64_t evictable;   /* unreferenced leaves */
    int64_t capacity;    /* 0 = bounded by the owner */
    int64_t evicted;     /* blocks evicted since create */
} sim_prefix_stats;

/* "lru" or "lfu" → *out. 0 or SIM_EINVAL. */
int sim_prefix_policy_parse(const char *s, sim_prefix_policy *out);
const char *sim_prefix_policy_name(sim_prefix_policy p);

int sim_prefix_create(int64_t capacity_blocks, sim_prefix_policy policy, sim_prefix **out,
                      sim_err *err);
void sim_prefix_destroy(sim_prefix *idx);

/* Sets the hook called for blocks insert evicts to make room (NULL: none). */
void sim_prefix_set_evict_hook(sim_prefix *idx, sim_prefix_evict_fn fn, void *ctx);

/* Number of leading keys present; counts a hit on each of them and makes
 * them most recently used at `now`. */
int32_t sim_prefix_match(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now);

/* As match, but changes nothing (a router scoring instances). */
int32_t sim_prefix_peek(const sim_prefix *idx, const uint64_t *keys, int32_t n);

/* Take / drop one reference on each of the first n keys, which must be
 * present (and, for release, referenced: SIM_ASSERT). Both mark the blocks
 * used at `now`; a block whose last reference goes becomes evictable if it
 * is a leaf. */
void sim_prefix_acquire(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now);
void sim_prefix_release(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now);

/* As acquire/release, on keys[from, to) only (keys[0, from) must be present
 * too: they name the chain). For a request that already holds a prefix and
 * takes or drops references on the blocks after it. */
void sim_prefix_acquire_range(sim_prefix *idx, const uint64_t *keys, int32_t from, int32_t to,
                              sim_time now);
void sim_prefix_release_range(sim_prefix *idx, const uint64_t *keys, int32_t from, int32_t to,
                              sim_time now);

/* Adds the keys missing after the leading run present, as a chain. Each
 * block it creates holds one reference for the inserter (release it when
 * the request finishes); blocks already present are marked used but not
 * referenced. In bounded mode it evicts (through the hook) to make room
 * and, if unreferenced leaves run out, creates only what fits. Returns the
 * number of leading keys present afterwards (n when everything fit) and
 * sets *created (may be NULL) to the number created — these are keys
 * [ret - created, ret). SIM_ENOMEM (index unchanged) if memory runs out. */
int32_t sim_prefix_insert(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now,
                          int32_t *created);

/* Evicts up to n unreferenced leaves in policy order (a parent left
 * childless and unreferenced becomes a candidate at once), calling cb (may
 * be NULL) for each. Returns the number evicted. */
int64_t sim_prefix_evict(sim_prefix *idx, int64_t n, sim_prefix_evict_fn cb, void *ctx);

void sim_prefix_stats_get(const sim_prefix *idx, sim_prefix_stats *out);

/* Reference count of key, or -1 if it is not held. */
int32_t sim_prefix_refcount(const sim_prefix *idx, uint64_t key);

/* Walks the whole index and checks its invariants (child counts, heap
 * order, heap = unreferenced leaves, parents present, capacity). O(n); for
 * tests and debugging. 0, or SIM_EINVAL with the first violation in err. */
int sim_prefix_check(const sim_prefix *idx, sim_err *err);

#endif
