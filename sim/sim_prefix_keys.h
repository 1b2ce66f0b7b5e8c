/* sim_prefix_keys — cache-block keys: the hash chain of a prompt, and the
 * key → slot map the prefix index and the KV tiers look them up in.
 *
 * A request's prefix is described by hash ids of H-token blocks (H = 512 for
 * Mooncake traces, or the workload's prefix.block_tokens); two ids are equal
 * when their tokens are, and their KV is reusable only when every block
 * before them is equal too. The cache works in blocks of C tokens
 * (cache.block_tokens), C smaller than, equal to or larger than H. Cache
 * block j covers tokens [jC, (j+1)C); its 64-bit key mixes its parent's key
 * (block j-1, or a fixed root) with each hash id overlapping it and the
 * token range [lo, hi) it covers inside that hash block, so a key depends on
 * the whole prefix, as in vLLM and Mooncake. Only full cache blocks inside
 * the prompt get keys — floor(input/C) of them — and only as far as the hash
 * ids reach; a request without hash ids gets none. Keys are pure functions
 * of their inputs (no seed, no state), identical across runs and machines.
 *
 * sim_keymap is an open-addressing (linear probing, backward-shift delete)
 * map from a key to a non-negative int32 slot; it lives in caller memory
 * (_init/_fini) and owns only its two arrays. */
#ifndef SIM_PREFIX_KEYS_H
#define SIM_PREFIX_KEYS_H

#include <stdint.h>

/* Key of the (empty) prefix that block 0's key is mixed into. */
#define SIM_PREFIX_KEY_ROOT UINT64_C(0xcbf29ce484222325)

/* One step of the chain: a well-mixed 64-bit hash of (parent, v). */
uint64_t sim_prefix_key_mix(uint64_t parent, uint64_t v);

/* Number of keys a prompt of input_tokens with n_hash ids of hash_tokens
 * each gets at cache-block size block_tokens: min(floor(input/C),
 * floor(n_hash·H / C)); 0 when any argument is <= 0. */
int32_t sim_prefix_keys_count(int32_t input_tokens, int32_t n_hash, int32_t hash_tokens,
                              int32_t block_tokens);

/* Writes the first min(count, cap) keys of the chain into out and returns
 * how many it wrote (count as above). */
int32_t sim_prefix_keys_build(const uint32_t *hash_ids, int32_t n_hash, int32_t input_tokens,
                              int32_t hash_tokens, int32_t block_tokens, uint64_t *out,
                              int32_t cap);

typedef struct {
    uint64_t *keys;
    int32_t *vals;   /* slot value, -1 = empty */
    int64_t mask;    /* capacity - 1 (capacity is a power of two) */
    int64_t n;       /* entries held */
} sim_keymap;

/* Sets up an empty map sized for about `expect` entries. 0 or SIM_ENOMEM. */
int sim_keymap_init(sim_keymap *m, int64_t expect);
void sim_keymap_fini(sim_keymap *m);

/* Grows the table so that `n` entries in total fit without another
 * allocation (load factor <= 1/2). 0 or SIM_ENOMEM (map unchanged). */
int sim_keymap_reserve(sim_keymap *m, int64_t n);

/* The value stored for key, or -1 if absent. */
int32_t sim_keymap_get(const sim_keymap *m, uint64_t key);

/* Stores key → val (val >= 0), replacing any old value. 0 or SIM_ENOMEM. */
int sim_keymap_put(sim_keymap *m, uint64_t key, int32_t val);

/* Removes key. 1 if it was there, 0 if not. */
int sim_keymap_del(sim_keymap *m, uint64_t key);

#endif
