/* sim_prefix_keys — see sim_prefix_keys.h. */
#include "sim_prefix_keys.h"

#include "sim_err.h"
#include "sim_hash.h"

#include <stdlib.h>


uint64_t sim_prefix_key_mix(uint64_t parent, uint64_t v)
{
    /* Rotating the parent keeps (p, v) and (v, p) apart; the inner mix
     * makes v's low bits reach every bit before they meet the parent. */
    uint64_t p = (parent << 23) | (parent >> 41);
    return sim_hash_mix64(p ^ sim_hash_mix64(v + SIM_HASH_GAMMA));
}

int32_t sim_prefix_keys_count(int32_t input_tokens, int32_t n_hash, int32_t hash_tokens,
                              int32_t block_tokens)
{
    if (input_tokens <= 0 || n_hash <= 0 || hash_tokens <= 0 || block_tokens <= 0) return 0;
    int64_t by_input = (int64_t)input_tokens / block_tokens;
    int64_t by_hash = (int64_t)n_hash * hash_tokens / block_tokens;
    int64_t n = by_input < by_hash ? by_input : by_hash;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

int32_t sim_prefix_keys_build(const uint32_t *hash_ids, int32_t n_hash, int32_t input_tokens,
                              int32_t hash_tokens, int32_t block_tokens, uint64_t *out,
                              int32_t cap)
{
    int32_t n = sim_prefix_keys_count(input_tokens, n_hash, hash_tokens, block_tokens);
    if (n > cap) n = cap < 0 ? 0 : cap;
    const int64_t C = block_tokens, H = hash_tokens;
    uint64_t k = SIM_PREFIX_KEY_ROOT;
    for (int32_t j = 0; j < n; j++) {
        int64_t start = (int64_t)j * C, end = start + C;
        for (int64_t h = start / H; h * H < end; h++) {
            int64_t lo = (start > h * H ? start : h * H) - h * H;
            int64_t hi = (end < (h + 1) * H ? end : (h + 1) * H) - h * H;
            /* The range inside the hash block tells sub-blocks of one id
             * apart (C < H) and partial overlaps apart (C not a multiple
             * of H); for C == H it is always [0, H). */
            k = sim_prefix_key_mix(k, hash_ids[h]);
            k = sim_prefix_key_mix(k, ((uint64_t)lo << 32) | (uint64_t)hi);
        }
        out[j] = k;
    }
    return n;
}

void sim_prefix_keys_unique(uint64_t parent, uint64_t salt, uint64_t *out, int32_t n)
{
    /* The tag keeps these chains apart from hash-id chains, whose mixed-in
     * values are 32-bit ids and 64-bit token ranges below 2^63. */
    uint64_t k = sim_prefix_key_mix(parent, UINT64_C(0xa5c3f00dd15ea5e5) ^ salt);
    for (int32_t j = 0; j < n; j++) {
        k = sim_prefix_key_mix(k, UINT64_C(0x8000000000000000) | (uint64_t)j);
        out[j] = k;
    }
}

int32_t sim_prefix_keys_total(const sim_prefix_turn *t, int32_t n_prompt, int32_t block_tokens)
{
    if (n_prompt <= 0 || block_tokens <= 0 || n_prompt != t->input_tokens / block_tokens) return n_prompt;
    int64_t all = ((int64_t)t->input_tokens + t->output_tokens) / block_tokens;
    return all > INT32_MAX ? INT32_MAX : (int32_t)all;
}

/* Whether the context ids name the prompt's full hash blocks as the prompt
 * does, so the answer's keys continue its chain. */
static int ctx_ids_extend_prompt(const sim_prefix_turn *t, int32_t hash_tokens)
{
    if (!t->ctx_ids || t->n_ctx_ids <= 0) return 0;
    int64_t full = t->input_tokens / hash_tokens;
    if (full > t->n_hash) full = t->n_hash;
    if (full > t->n_ctx_ids) return 0;
    for (int64_t h = 0; h < full; h++)
        if (t->ctx_ids[h] != t->hash_ids[h]) return 0;
    return 1;
}

int32_t sim_prefix_keys_answer(const sim_prefix_turn *t, int32_t hash_tokens, int32_t block_tokens,
                               uint64_t *keys, int32_t n_prompt, int32_t n_all)
{
    int32_t n = n_prompt;
    if (n_all <= n) return 0;
    if (ctx_ids_extend_prompt(t, hash_tokens)) {
        uint64_t last = n > 0 ? keys[n - 1] : 0;
        int64_t ctx_tokens = (int64_t)t->input_tokens + t->output_tokens;
        int32_t m = sim_prefix_keys_build(t->ctx_ids, t->n_ctx_ids,
                                          ctx_tokens > INT32_MAX ? INT32_MAX : (int32_t)ctx_tokens,
                                          hash_tokens, block_tokens, keys, n_all);
        if (m > n && (n == 0 || keys[n - 1] == last)) return m - n;
        /* They do not continue the prompt's chain after all: rebuild it. */
        sim_prefix_keys_build(t->hash_ids, t->n_hash, t->input_tokens, hash_tokens, block_tokens, keys, n);
    }
    sim_prefix_keys_unique(n > 0 ? keys[n - 1] : SIM_PREFIX_KEY_ROOT, t->salt, keys + n, n_all - n);
    return n_all - n;
}
