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

/* A request's prompt and answer as its chain sees them: the prompt's hash
 * ids and lengths, the context after the answer as its session's next
 * prompt names it (ctx_ids, NULL = not known) and a salt naming the request
 * (keys of its own when its answer is nobody's prefix). */
typedef struct {
    const uint32_t *hash_ids;
    int32_t n_hash;
    int32_t input_tokens;
    int32_t output_tokens;
    const uint32_t *ctx_ids;
    int32_t n_ctx_ids;
    uint64_t salt;
} sim_prefix_turn;

/* Keys of the whole chain, prompt then answer, when the prompt has
 * n_prompt keys: floor((input + output) / C) when every full prompt block
 * is keyed (n_prompt == floor(input / C) > 0), else n_prompt (an answer
 * after an unkeyed block continues no chain). */
int32_t sim_prefix_keys_total(const sim_prefix_turn *t, int32_t n_prompt, int32_t block_tokens);

/* The keys of the full cache blocks t's answer completes, after its
 * n_prompt prompt keys in keys[0, n_prompt): the chain of its context ids
 * when they extend the prompt's (a session's turn: the keys its next prompt
 * looks up), else one continued with the salt, which no other request's
 * chain holds. Writes keys[n_prompt, n_all) and returns how many (0 when
 * n_all <= n_prompt). The simulator's instances and cache-replay both name
 * answer blocks with it. */
int32_t sim_prefix_keys_answer(const sim_prefix_turn *t, int32_t hash_tokens, int32_t block_tokens,
                               uint64_t *keys, int32_t n_prompt, int32_t n_all);

#endif
