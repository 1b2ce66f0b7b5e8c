/* sim_prefix_keys — cache-block keys: the hash chain of a prompt.
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
 * The prefix index and the KV tiers look keys up in a sim_keymap
 * (sim_keymap.h). */
#ifndef SIM_PREFIX_KEYS_H
#define SIM_PREFIX_KEYS_H

#include <stdint.h>

#include "sim_keymap.h"

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

/* Writes n keys that continue the chain from `parent` over blocks whose
 * content is the request `salt`'s own (an answer no later prompt repeats):
 * key_j = mix(mix(parent, tag ^ salt), j) chained, distinct from every
 * key sim_prefix_keys_build makes for hash ids and from other salts'. */
void sim_prefix_keys_unique(uint64_t parent, uint64_t salt, uint64_t *out, int32_t n);

#endif
