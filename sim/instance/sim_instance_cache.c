/* sim_instance_cache — an instance's prefix cache: KV blocks shared by
 * prompts with a common prefix, evicted (unreferenced leaves only) when an
 * allocation needs room, reused at admission, extended as prefills complete
 * blocks, and topped up by fetches from peers or tiers (KV sharing). See
 * sim_instance_impl.h. */
#include "sim_instance_impl.h"

void sim_instance_evicted(void *ctx, uint64_t key)
{
    sim_instance *in = ctx;
    if (in->hooks.on_cache_evict) in->hooks.on_cache_evict(in->hooks.ctx, in->id, key);
}

/* Free blocks, evicting unreferenced cached prefixes when that makes room
 * for `need` (vLLM keeps cached blocks in the free pool the same way). */
int64_t sim_instance_free_blocks(sim_instance *in, int64_t need)
{
    int64_t free_now = in->blocks_total - in->blocks_used - cached_kv(in);
    if (free_now < need && in->pc) {
        int64_t want = (need - free_now + in->cbk - 1) / in->cbk;
        sim_prefix_evict(in->pc, want, sim_instance_evicted, in);
        free_now = in->blocks_total - in->blocks_used - cached_kv(in);
    }
    return free_now;
}

void sim_instance_release_refs(sim_instance *in, sim_req *r)
{
    if (r->shared > 0) sim_prefix_release(in->pc, r->keys, r->shared, sim_engine_now(in->eng));
    r->shared = 0;
}

/* Admission of a waiting request: reuse its longest cached prefix (at least
 * one token is always computed, so the last block of a fully cached prompt
 * is recomputed, as in vLLM). */
void sim_instance_match_prefix(sim_instance *in, sim_req *r)
{
    if (!in->pc || !r->keys || r->n_keys == 0) return;
    sim_time now = sim_engine_now(in->eng);
    int32_t m = sim_prefix_match(in->pc, r->keys, r->n_keys, now);
    int64_t cap = (r->prefill_target - 1) / in->ctok;
    if (m > cap) m = (int32_t)cap;
    if (m <= 0) {
        r->cached_tokens = 0;
        return;
    }
    sim_prefix_acquire(in->pc, r->keys, m, now);
    r->shared = m;
    r->prefilled = (int32_t)(m * in->ctok);
    r->cached_tokens = r->prefilled;
    in->outstanding -= r->prefilled;
    in->pending_prefill -= r->prefilled;
}

/* Undoes match_prefix when the request could not be admitted after all. */
void sim_instance_unmatch_prefix(sim_instance *in, sim_req *r)
{
    sim_instance_release_refs(in, r);
    in->outstanding += r->prefilled;
    in->pending_prefill += r->prefilled;
    r->prefilled = 0;
}

/* r's first `done` keys into the index, r holding one reference on each
 * (the index walks chains from the root: where another request cached a
 * block meanwhile, r takes a reference on theirs). Returns how many cache
 * blocks of r's own KV became the index's, or -1 after failing the run. */
static int64_t cache_extend(sim_instance *in, sim_req *r, int32_t done)
{
    sim_time now = sim_engine_now(in->eng);
    int32_t created = 0;
    int32_t ret = sim_prefix_insert(in->pc, r->keys, done, now, &created);
    if (ret < 0) {
        sim_engine_fail(in->eng, ret, "out of memory growing the prefix cache of instance %d", in->id);
        return -1;
    }
    SIM_ASSERT(ret == done, now);
    int32_t existed_to = ret - created;
    if (existed_to > r->shared) {
        /* Take the whole run, then drop the part r already held, netting
         * +1 on the rest. */
        sim_prefix_acquire(in->pc, r->keys, existed_to, now);
        if (r->shared > 0) sim_prefix_release(in->pc, r->keys, r->shared, now);
    }
    int64_t conv = ret - r->shared;
    r->shared = ret;
    return conv;
}

/* After a chunk: the prompt's newly completed cache blocks join the index
 * (or, if another request cached them meanwhile, this one's copy is freed
 * and it references theirs). */
void sim_instance_cache_insert(sim_instance *in, sim_req *r)
{
    if (!in->pc || !r->keys) return;
    int64_t done = r->prefilled / in->ctok;
    if (done > r->n_keys) done = r->n_keys;
    if (done <= r->shared) return;
    int64_t conv = cache_extend(in, r, (int32_t)done);
    if (conv < 0) return;
    r->blocks -= (int32_t)(conv * in->cbk);
    in->blocks_used -= conv * in->cbk;
}

/* r finished decoding with kv_tokens in KV and its private blocks already
 * freed (decode_leave): the full cache blocks its answer completed join
 * the index under its output keys, as vLLM, SGLang and TensorRT-LLM keep
 * a finished request's prompt AND output blocks findable. They are r's own
 * KV handed to the cache, not a copy: the blocks decode_leave freed become
 * cached (evictable once r's references go at finish). */
void sim_instance_cache_output(sim_instance *in, sim_req *r, int64_t kv_tokens)
{
    if (!in->pc || !r->keys || r->n_out_keys <= 0) return;
    int64_t done = kv_tokens / in->ctok, most = (int64_t)r->n_keys + r->n_out_keys;
    if (done > most) done = most;
    if (done <= r->shared || r->shared < r->n_keys) return;
    if (cache_extend(in, r, (int32_t)done) < 0) return;
    if (in->hooks.on_answer_cached) in->hooks.on_answer_cached(in->hooks.ctx, in->id, r, r->shared);
}

/* KV sharing at admission: if the cluster finds more of r's prefix elsewhere
 * and blocks for it are free here, allocate them and plan the fetch. */
int sim_instance_plan_fetch(sim_instance *in, sim_req *r)
{
    if (!in->hooks.on_fetch_plan || !in->pc || !r->keys || r->shared >= r->n_keys) return 0;
    int32_t x = in->hooks.on_fetch_plan(in->hooks.ctx, r, r->shared);
    int64_t cap = (r->prefill_target - 1) / in->ctok - r->shared;
    if (x > cap) x = (int32_t)cap;
    if (x <= 0) return 0;
    int64_t have = r->blocks + shared_kv(in, r);
    int64_t need = blocks_for(in, (r->shared + (int64_t)x) * in->ctok) - have;
    if (sim_instance_free_blocks(in, need) < need) return 0;
    r->blocks += (int32_t)need;
    in->blocks_used += need;
    r->fetching = 1;
    r->fetch_blocks = x;
    return 1;
}

int sim_instance_enable_cache(sim_instance *in, int32_t cache_tokens, sim_prefix_policy policy, sim_err *err)
{
    if (cache_tokens < 1 || cache_tokens % in->bs != 0)
        return sim_err_set(err, SIM_EINVAL,
                           "cache.block_tokens (%d) must be a positive multiple of the KV block "
                           "(scheduler.block_tokens = %lld)", cache_tokens, (long long)in->bs);
    int rc = sim_prefix_create(0, policy, &in->pc, err);
    if (rc < 0) return rc;
    in->ctok = cache_tokens;
    in->cbk = cache_tokens / in->bs;
    return SIM_OK;
}

void sim_instance_fetch_done(sim_instance *in, sim_req *r)
{
    SIM_ASSERT(r->fetching && r->state == SIM_REQ_PREFILL, sim_engine_now(in->eng));
    int32_t tokens = (int32_t)(r->fetch_blocks * in->ctok);
    r->fetching = 0;
    lane_of(in, r)->fetching--;
    r->prefilled += tokens;
    r->cached_tokens += tokens;
    in->outstanding -= tokens;
    in->pending_prefill -= tokens;
    sim_instance_cache_insert(in, r);
    sim_instance_kick(in);
}

struct sim_prefix *sim_instance_cache(const sim_instance *in) { return in->pc; }

