/* bench_prefix — throughput of the prefix index and the KV tier (not a test).
 *
 * An index holding N blocks (default 1e6) as chains of 64 blocks with random
 * keys, shared 8-block stems so the tree has branching. Reported in million
 * block operations per second of process CPU time:
 *   match    — full-chain matches of random held chains (hash lookup, hit
 *              and recency update, heap sift for evictable leaves);
 *   acq+rel  — acquire then release of the same chains (refcount, heap
 *              out/in for the leaf);
 *   insert   — requests (match, acquire, insert, release) of new chains
 *              into a full bounded index (capacity N): each created block
 *              first evicts one unreferenced leaf; ops = blocks created;
 *   evict    — draining all N blocks leaf by leaf;
 *   tier     — KV tier: demotion inserts into a full tier of N (one LRU
 *              eviction each) and leading-run matches.
 * Usage: bench_prefix [blocks] [lru|lfu]. */
#include "sim_kvtier.h"
#include "sim_prefix.h"
#include "sim_prefix_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CHAIN = 64, STEM = 8, STEMS = 256 };

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Chain c: one of STEMS shared stems, then blocks unique to c. */
static void make_chain(uint64_t c, uint64_t *keys)
{
    uint32_t ids[CHAIN];
    for (int j = 0; j < CHAIN; j++)
        ids[j] = j < STEM ? (uint32_t)(c % STEMS) * 131u + (uint32_t)j
                          : (uint32_t)(c * 977u + (uint64_t)j * 7919u);
    sim_prefix_keys_build(ids, CHAIN, CHAIN * 512, 512, 512, keys, CHAIN);
}

/* One request's life without timing: match, hold the hit, add the rest,
 * let go of everything. Returns the number of blocks created. */
static int32_t serve(sim_prefix *idx, const uint64_t *k, sim_time now)
{
    int32_t m = sim_prefix_match(idx, k, CHAIN, now);
    sim_prefix_acquire(idx, k, m, now);
    int32_t created = 0;
    int32_t have = sim_prefix_insert(idx, k, CHAIN, now, &created);
    sim_prefix_release(idx, k, have, now);
    return created;
}

static void report(const char *what, double ops, double secs)
{
    printf("  %-8s %12.0f ops  %8.3f s  %8.2f Mops/s\n", what, ops, secs, ops / secs / 1e6);
}

int main(int argc, char **argv)
{
    int64_t n_blocks = argc > 1 ? atoll(argv[1]) : 1000000;
    sim_prefix_policy pol = SIM_PREFIX_LRU;
    if (argc > 2 && sim_prefix_policy_parse(argv[2], &pol) < 0) {
        fprintf(stderr, "usage: bench_prefix [blocks] [lru|lfu]\n");
        return 2;
    }
    if (n_blocks < CHAIN * STEMS) n_blocks = CHAIN * STEMS;
    int64_t n_chains = n_blocks / (CHAIN - STEM); /* stems are shared */
    uint64_t *keys = malloc((size_t)n_chains * CHAIN * sizeof *keys);
    if (!keys) return 1;
    for (int64_t c = 0; c < n_chains; c++) make_chain((uint64_t)c, keys + c * CHAIN);

    sim_prefix *idx = NULL;
    sim_err err;
    if (sim_prefix_create(0, pol, &idx, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    sim_time now = 0;
    double t0 = cpu_s();
    for (int64_t c = 0; c < n_chains; c++) serve(idx, keys + c * CHAIN, ++now);
    double t_fill = cpu_s() - t0;
    sim_prefix_stats st;
    sim_prefix_stats_get(idx, &st);
    printf("bench_prefix: %lld blocks in %lld chains of %d (policy %s)\n", (long long)st.total,
           (long long)n_chains, CHAIN, sim_prefix_policy_name(pol));
    report("fill", (double)n_chains * CHAIN, t_fill);

    uint64_t s = 88172645463325252ull;
    int64_t reps = n_chains;
    t0 = cpu_s();
    int64_t hit = 0;
    for (int64_t r = 0; r < reps; r++)
        hit += sim_prefix_match(idx, keys + (int64_t)(rnd(&s) % (uint64_t)n_chains) * CHAIN,
                                CHAIN, ++now);
    report("match", (double)hit, cpu_s() - t0);

    t0 = cpu_s();
    for (int64_t r = 0; r < reps; r++) {
        const uint64_t *k = keys + (int64_t)(rnd(&s) % (uint64_t)n_chains) * CHAIN;
        sim_prefix_acquire(idx, k, CHAIN, ++now);
        sim_prefix_release(idx, k, CHAIN, now);
    }
    report("acq+rel", 2.0 * reps * CHAIN, cpu_s() - t0);

    /* Rebuild as a bounded index of exactly the blocks held, then insert
     * fresh chains: every created block costs one eviction. */
    sim_prefix *b = NULL;
    if (sim_prefix_create(st.total, pol, &b, &err) < 0) return 1;
    for (int64_t c = 0; c < n_chains; c++) serve(b, keys + c * CHAIN, ++now);
    uint64_t fresh[CHAIN];
    int64_t created_total = 0;
    t0 = cpu_s();
    for (int64_t r = 0; r < reps; r++) {
        make_chain((uint64_t)(n_chains + r), fresh);
        created_total += serve(b, fresh, ++now);
    }
    double t_ins = cpu_s() - t0;
    sim_prefix_stats bst;
    sim_prefix_stats_get(b, &bst);
    report("insert", (double)created_total, t_ins);
    printf("           (%lld evictions along the way; %lld blocks held, capacity %lld)\n",
           (long long)bst.evicted, (long long)bst.total, (long long)bst.capacity);
    sim_prefix_destroy(b);

    t0 = cpu_s();
    int64_t ev = sim_prefix_evict(idx, INT64_MAX, NULL, NULL);
    report("evict", (double)ev, cpu_s() - t0);
    sim_prefix_destroy(idx);

    sim_kvtier *tier = NULL;
    if (sim_kvtier_create(n_blocks, &tier, &err) < 0) return 1;
    for (int64_t i = 0; i < n_blocks; i++) sim_kvtier_insert(tier, rnd(&s), NULL, NULL);
    t0 = cpu_s();
    for (int64_t i = 0; i < n_blocks; i++) sim_kvtier_insert(tier, keys[i % (n_chains * CHAIN)], NULL, NULL);
    report("tier-ins", (double)n_blocks, cpu_s() - t0);
    t0 = cpu_s();
    int64_t th = 0;
    for (int64_t r = 0; r < reps; r++)
        th += sim_kvtier_match(tier, keys + (int64_t)(rnd(&s) % (uint64_t)n_chains) * CHAIN, CHAIN);
    report("tier-hit", (double)th, cpu_s() - t0);
    sim_kvtier_destroy(tier);
    free(keys);
    return 0;
}
