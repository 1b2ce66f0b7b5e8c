/* test_prefix — cache-block key chains (and answer keys of their own),
 * the key map, the prefix index
 * (match/acquire/release/insert/evict in LRU and LFU order, bounded mode,
 * invariants under a randomised workload checked against a reference
 * model) and the KV tiers (LRU demotion/promotion order, blocks conserved
 * when moved between HBM, host and pool). */
#include "sim_kvtier.h"
#include "sim_prefix.h"
#include "sim_prefix_keys.h"
#include "test_util.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng_state = 0x1234567u;
static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, no library state. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

/* ---- keys ------------------------------------------------------------------ */

static void test_keys_counts(void)
{
    /* floor(input/C), capped by what the hash ids cover. */
    CHECK(sim_prefix_keys_count(6758, 14, 512, 512) == 13);
    CHECK(sim_prefix_keys_count(6758, 14, 512, 256) == 26);
    CHECK(sim_prefix_keys_count(6758, 14, 512, 1024) == 6);
    CHECK(sim_prefix_keys_count(6758, 14, 512, 768) == 8);
    CHECK(sim_prefix_keys_count(6758, 3, 512, 512) == 3);   /* ids run out */
    CHECK(sim_prefix_keys_count(6758, 3, 512, 1024) == 1);  /* 1536 tokens covered */
    CHECK(sim_prefix_keys_count(511, 1, 512, 512) == 0);    /* no full block */
    CHECK(sim_prefix_keys_count(6758, 0, 512, 512) == 0);   /* no hash ids */
    CHECK(sim_prefix_keys_count(0, 4, 512, 512) == 0);
    CHECK(sim_prefix_keys_count(4096, 4, 512, 0) == 0);
    uint64_t out[4];
    uint32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(sim_prefix_keys_build(ids, 8, 4096, 512, 512, out, 4) == 4); /* capped by cap */
}

static void test_keys_chain(void)
{
    uint32_t a[6] = {0, 11, 12, 13, 14, 15};
    uint32_t b[6] = {0, 11, 12, 13, 14, 15};
    uint64_t ka[24], kb[24];
    const int32_t sizes[] = {128, 256, 512, 768, 1024, 2048};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int32_t C = sizes[s];
        int32_t na = sim_prefix_keys_build(a, 6, 3072, 512, C, ka, 24);
        int32_t nb = sim_prefix_keys_build(b, 6, 3072, 512, C, kb, 24);
        CHECK(na == 3072 / C && nb == na);
        for (int32_t j = 0; j < na; j++) CHECK_MSG(ka[j] == kb[j], "C=%d block %d", C, j);
        /* Keys within one chain are all distinct. */
        for (int32_t i = 0; i < na; i++)
            for (int32_t j = i + 1; j < na; j++) CHECK(ka[i] != ka[j]);
        /* Changing hash block 1 changes every cache block that covers any
         * token from 512 on, and none before. */
        b[1] = 99;
        nb = sim_prefix_keys_build(b, 6, 3072, 512, C, kb, 24);
        for (int32_t j = 0; j < nb; j++) {
            int changed = (int64_t)(j + 1) * C > 512;
            CHECK_MSG((ka[j] != kb[j]) == changed, "C=%d block %d", C, j);
        }
        b[1] = 11;
        /* Same ids after a different first id: nothing is shared. */
        b[0] = 7;
        nb = sim_prefix_keys_build(b, 6, 3072, 512, C, kb, 24);
        for (int32_t j = 0; j < nb; j++) CHECK(ka[j] != kb[j]);
        b[0] = 0;
    }
    /* Sub-blocks of one hash block differ from each other and from other
     * ids' sub-blocks: C=256 gives two keys per id. */
    uint32_t one[2] = {5, 5};
    uint64_t k[4];
    CHECK(sim_prefix_keys_build(one, 2, 1024, 512, 256, k, 4) == 4);
    CHECK(k[0] != k[1] && k[1] != k[2] && k[2] != k[3] && k[0] != k[2]);
    /* The input length only limits how many keys there are. */
    uint64_t k2[4];
    CHECK(sim_prefix_keys_build(one, 2, 700, 512, 256, k2, 4) == 2);
    CHECK(k2[0] == k[0] && k2[1] == k[1]);
}

/* Answer keys of requests outside sessions: a pure function of (parent,
 * salt), distinct within a chain, across salts and parents, and from the
 * hash-id chain continued from the same parent. */
static void test_keys_unique(void)
{
    uint32_t ids[4] = {1, 2, 3, 4};
    uint64_t chain[4], a[8], b[8], c[8], d[8];
    REQUIRE(sim_prefix_keys_build(ids, 4, 2048, 512, 512, chain, 4) == 4);
    sim_prefix_keys_unique(chain[1], 7, a, 8);
    sim_prefix_keys_unique(chain[1], 7, b, 8);
    sim_prefix_keys_unique(chain[1], 8, c, 8);
    sim_prefix_keys_unique(chain[0], 7, d, 8);
    for (int32_t j = 0; j < 8; j++) {
        CHECK(a[j] == b[j]);
        CHECK_MSG(a[j] != c[j] && a[j] != d[j], "block %d", j);
        for (int32_t i = 0; i < 4; i++) CHECK(a[j] != chain[i]);
        for (int32_t i = j + 1; i < 8; i++) CHECK(a[i] != a[j]);
    }
    /* A shorter run is the longer one's start (keys grow with the answer). */
    sim_prefix_keys_unique(chain[1], 7, b, 3);
    CHECK(b[0] == a[0] && b[1] == a[1] && b[2] == a[2]);
}

static void test_keys_mixing(void)
{
    /* 200k one-step keys from consecutive ids: no collisions, and each
     * output bit is set about half the time (a weak mixer fails this). */
    enum { N = 200000 };
    uint64_t *k = malloc(N * sizeof *k);
    int ones[64] = {0};
    for (int i = 0; i < N; i++) {
        k[i] = sim_prefix_key_mix(SIM_PREFIX_KEY_ROOT, (uint64_t)i);
        for (int b = 0; b < 64; b++) ones[b] += (int)((k[i] >> b) & 1);
    }
    for (int b = 0; b < 64; b++) CHECK_MSG(abs(ones[b] - N / 2) < N / 100, "bit %d: %d", b, ones[b]);
    sim_keymap m;
    CHECK(sim_keymap_init(&m, 16) == 0);
    int dup = 0;
    for (int i = 0; i < N; i++) {
        if (sim_keymap_get(&m, k[i]) >= 0) dup++;
        sim_keymap_put(&m, k[i], i);
    }
    CHECK(dup == 0);
    CHECK(m.n == N);
    /* Avalanche: flipping one input bit flips about half the output bits. */
    double flips = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t v = rnd(), p = rnd();
        int bit = (int)(rnd() % 64);
        flips += __builtin_popcountll(sim_prefix_key_mix(p, v) ^ sim_prefix_key_mix(p, v ^ (1ull << bit)));
        flips += __builtin_popcountll(sim_prefix_key_mix(p, v) ^ sim_prefix_key_mix(p ^ (1ull << bit), v));
    }
    CHECK_NEAR(flips / 2000, 32, 1.0);
    CHECK(sim_prefix_key_mix(1, 2) != sim_prefix_key_mix(2, 1));
    sim_keymap_fini(&m);
    free(k);
}

static void test_keymap(void)
{
    /* Random puts/dels on small consecutive keys (clustered probe runs)
     * checked against a plain array. */
    enum { U = 3000 };
    int32_t ref[U];
    for (int i = 0; i < U; i++) ref[i] = -1;
    sim_keymap m;
    CHECK(sim_keymap_init(&m, 0) == 0);
    int bad = 0;
    int64_t count = 0;
    for (int op = 0; op < 200000; op++) {
        int key = (int)(rnd() % U);
        if (rnd() % 3 == 0) {
            int was = sim_keymap_del(&m, (uint64_t)key);
            if (was != (ref[key] >= 0)) bad++;
            if (ref[key] >= 0) count--;
            ref[key] = -1;
        } else {
            int32_t v = (int32_t)(rnd() % 1000);
            sim_keymap_put(&m, (uint64_t)key, v);
            if (ref[key] < 0) count++;
            ref[key] = v;
        }
        if (op % 1000 == 0)
            for (int i = 0; i < U; i++) bad += sim_keymap_get(&m, (uint64_t)i) != ref[i];
    }
    for (int i = 0; i < U; i++) bad += sim_keymap_get(&m, (uint64_t)i) != ref[i];
    CHECK(bad == 0);
    CHECK(m.n == count);
    sim_keymap_fini(&m);
}

/* ---- prefix index ---------------------------------------------------------- */

typedef struct {
    uint64_t keys[4096];
    int n;
} evlog;

static void log_evict(void *ctx, uint64_t key)
{
    evlog *l = ctx;
    if (l->n < 4096) l->keys[l->n++] = key;
}

static void check_index(const sim_prefix *idx, const char *where)
{
    sim_err err = {{0}};
    int rc = sim_prefix_check(idx, &err);
    CHECK_MSG(rc == 0, "%s: %s", where, err.msg);
}

static void test_index_basic(void)
{
    sim_prefix *idx = NULL;
    sim_err err = {{0}};
    CHECK(sim_prefix_create(-1, SIM_PREFIX_LRU, &idx, &err) == SIM_EINVAL && idx == NULL);
    CHECK_CONTAINS(err.msg, "capacity");
    CHECK(sim_prefix_create(0, SIM_PREFIX_LRU, &idx, &err) == 0);
    uint64_t a[4] = {10, 11, 12, 13}, b[3] = {10, 11, 22};
    int32_t created = -1;
    CHECK(sim_prefix_match(idx, a, 4, 0) == 0);
    CHECK(sim_prefix_insert(idx, a, 4, 100, &created) == 4 && created == 4);
    CHECK(sim_prefix_refcount(idx, 13) == 1);
    /* Referenced blocks cannot be evicted. */
    CHECK(sim_prefix_evict(idx, 10, NULL, NULL) == 0);
    sim_prefix_release(idx, a, 4, 200);
    CHECK(sim_prefix_refcount(idx, 10) == 0);
    CHECK(sim_prefix_match(idx, b, 3, 300) == 2);
    sim_prefix_acquire(idx, b, 2, 300);
    CHECK(sim_prefix_insert(idx, b, 3, 300, &created) == 3 && created == 1);
    CHECK(sim_prefix_refcount(idx, 11) == 1 && sim_prefix_refcount(idx, 22) == 1);
    sim_prefix_stats st;
    sim_prefix_stats_get(idx, &st);
    CHECK(st.total == 5 && st.referenced == 3 && st.evictable == 1 && st.capacity == 0);
    check_index(idx, "basic");
    /* Only the unreferenced leaf 13, then its parent 12 (now a leaf), go;
     * 11 still has child 22, which is referenced. */
    evlog l = {{0}, 0};
    CHECK(sim_prefix_evict(idx, 10, log_evict, &l) == 2);
    CHECK(l.n == 2 && l.keys[0] == 13 && l.keys[1] == 12);
    CHECK(sim_prefix_peek(idx, a, 4) == 2);
    /* Ranges: a second holder of 11..22 only (10 stays at 0 extra). */
    sim_prefix_acquire_range(idx, b, 1, 3, 350);
    CHECK(sim_prefix_refcount(idx, 10) == 1 && sim_prefix_refcount(idx, 11) == 2 &&
          sim_prefix_refcount(idx, 22) == 2);
    sim_prefix_release_range(idx, b, 1, 3, 360);
    CHECK(sim_prefix_refcount(idx, 10) == 1 && sim_prefix_refcount(idx, 22) == 1);
    check_index(idx, "ranges");
    sim_prefix_release(idx, b, 3, 400);
    l.n = 0;
    CHECK(sim_prefix_evict(idx, 10, log_evict, &l) == 3);
    CHECK(l.n == 3 && l.keys[0] == 22 && l.keys[1] == 11 && l.keys[2] == 10);
    sim_prefix_stats_get(idx, &st);
    CHECK(st.total == 0 && st.evicted == 5);
    check_index(idx, "emptied");
    sim_prefix_destroy(idx);
}

/* Three chains used at different times: LRU evicts by last use, LFU by hit
 * count (then last use). */
static void test_index_order(void)
{
    for (int pol = 0; pol < 2; pol++) {
        sim_prefix *idx = NULL;
        CHECK(sim_prefix_create(0, (sim_prefix_policy)pol, &idx, NULL) == 0);
        uint64_t c1[2] = {1, 2}, c2[2] = {3, 4}, c3[2] = {5, 6};
        sim_prefix_insert(idx, c1, 2, 10, NULL);
        sim_prefix_release(idx, c1, 2, 10);
        sim_prefix_insert(idx, c2, 2, 20, NULL);
        sim_prefix_release(idx, c2, 2, 20);
        sim_prefix_insert(idx, c3, 2, 30, NULL);
        sim_prefix_release(idx, c3, 2, 30);
        /* c1 is hit three times, last at t=40; c3 once more at t=50. */
        for (int i = 0; i < 3; i++) CHECK(sim_prefix_match(idx, c1, 2, 40) == 2);
        CHECK(sim_prefix_match(idx, c3, 2, 50) == 2);
        /* A peek changes nothing. */
        CHECK(sim_prefix_peek(idx, c2, 2) == 2);
        evlog l = {{0}, 0};
        CHECK(sim_prefix_evict(idx, 6, log_evict, &l) == 6);
        /* LRU: c2 (t=20), c1 (t=40), c3 (t=50); LFU: c2 (1 hit), c3 (2), c1 (4). */
        const uint64_t lru[6] = {4, 3, 2, 1, 6, 5}, lfu[6] = {4, 3, 6, 5, 2, 1};
        const uint64_t *want = pol == SIM_PREFIX_LRU ? lru : lfu;
        for (int i = 0; i < 6; i++)
            CHECK_MSG(l.keys[i] == want[i], "%s #%d: %llu", sim_prefix_policy_name(pol), i,
                      (unsigned long long)l.keys[i]);
        sim_prefix_destroy(idx);
    }
    sim_prefix_policy p;
    CHECK(sim_prefix_policy_parse("lfu", &p) == 0 && p == SIM_PREFIX_LFU);
    CHECK(sim_prefix_policy_parse("lru", &p) == 0 && p == SIM_PREFIX_LRU);
    CHECK(sim_prefix_policy_parse("fifo", &p) == SIM_EINVAL);
}

static void test_index_bounded(void)
{
    sim_prefix *idx = NULL;
    CHECK(sim_prefix_create(3, SIM_PREFIX_LRU, &idx, NULL) == 0);
    evlog l = {{0}, 0};
    sim_prefix_set_evict_hook(idx, log_evict, &l);
    uint64_t a[5] = {1, 2, 3, 4, 5}, b[2] = {1, 9};
    int32_t created = -1;
    /* A chain longer than the cache: only what fits, and it says so. */
    CHECK(sim_prefix_insert(idx, a, 5, 10, &created) == 3 && created == 3);
    CHECK(l.n == 0);
    /* Everything referenced: nothing fits. */
    CHECK(sim_prefix_insert(idx, b, 2, 11, &created) == 1 && created == 0);
    sim_prefix_release(idx, a, 3, 12);
    /* Now the leaf 3 is evicted to make room for 9 under 1. */
    CHECK(sim_prefix_match(idx, b, 2, 13) == 1);
    sim_prefix_acquire(idx, b, 1, 13);
    CHECK(sim_prefix_insert(idx, b, 2, 13, &created) == 2 && created == 1);
    CHECK(l.n == 1 && l.keys[0] == 3);
    check_index(idx, "bounded");
    sim_prefix_release(idx, b, 2, 14);
    /* Extending an unreferenced chain: its deepest block (2, a leaf and
     * least recent) must not be evicted from under the new block; 9 goes. */
    CHECK(sim_prefix_insert(idx, a, 3, 15, &created) == 3 && created == 1);
    CHECK(l.n == 2 && l.keys[1] == 9);
    CHECK(sim_prefix_refcount(idx, 2) == 0 && sim_prefix_refcount(idx, 3) == 1);
    check_index(idx, "extend");
    /* Extending it further with nothing evictable but itself: no room. */
    CHECK(sim_prefix_insert(idx, a, 5, 16, &created) == 3 && created == 0);
    check_index(idx, "full");
    sim_prefix_stats st;
    sim_prefix_stats_get(idx, &st);
    CHECK(st.total == 3 && st.capacity == 3 && st.evicted == 2);
    sim_prefix_destroy(idx);

    /* Extending an unreferenced chain whose deepest block is the only
     * evictable one: it must stay (the new block hangs under it), so
     * nothing fits. */
    CHECK(sim_prefix_create(3, SIM_PREFIX_LRU, &idx, NULL) == 0);
    uint64_t c[1] = {7};
    sim_prefix_insert(idx, a, 2, 20, NULL);
    sim_prefix_release(idx, a, 2, 21);
    sim_prefix_insert(idx, c, 1, 22, NULL); /* held */
    CHECK(sim_prefix_insert(idx, a, 3, 23, &created) == 2 && created == 0);
    CHECK(sim_prefix_refcount(idx, 2) == 0 && sim_prefix_refcount(idx, 3) == -1);
    check_index(idx, "pinned");
    sim_prefix_destroy(idx);
}

/* Releasing a block nobody holds is a bug: the always-on assert aborts. */
static void test_index_negative_ref(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        sim_prefix *idx = NULL;
        uint64_t a[2] = {1, 2};
        if (sim_prefix_create(0, SIM_PREFIX_LRU, &idx, NULL) != 0) _exit(3);
        sim_prefix_insert(idx, a, 2, 0, NULL);
        sim_prefix_release(idx, a, 2, 1);
        if (freopen("/dev/null", "w", stderr) == NULL) _exit(4);
        sim_prefix_release(idx, a, 1, 2);
        _exit(0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
}

/* Random requests over a forest of shared prefixes; every block's refcount
 * is tracked in a reference model, and after every step the evicted blocks
 * must have been unreferenced leaves and the index's invariants must hold. */
enum { LIVE = 6, LEN = 8 };
typedef struct {
    uint64_t chains[LIVE][LEN]; /* the reference model: what each request holds */
    int32_t held[LIVE];
    int bad;
} evict_guard;

static void guard_evict(void *ctx, uint64_t key)
{
    evict_guard *g = ctx;
    for (int k = 0; k < LIVE; k++)
        for (int32_t j = 0; j < g->held[k]; j++)
            if (g->chains[k][j] == key) g->bad++;
}

static void test_index_random(void)
{
    for (int pol = 0; pol < 2; pol++) {
        for (int bounded = 0; bounded < 2; bounded++) {
            sim_prefix *idx = NULL;
            int64_t cap = bounded ? 40 : 0;
            CHECK(sim_prefix_create(cap, (sim_prefix_policy)pol, &idx, NULL) == 0);
            evict_guard g;
            memset(&g, 0, sizeof g);
            sim_prefix_set_evict_hook(idx, guard_evict, &g);
            uint64_t (*chains)[LEN] = g.chains;
            int32_t *held = g.held;
            sim_time now = 0;
            int over = 0, viol = 0;
            for (int step = 0; step < 4000; step++) {
                int s = (int)(rnd() % LIVE);
                now += (sim_time)(rnd() % 3);
                if (held[s] > 0) {
                    sim_prefix_release(idx, chains[s], held[s], now);
                    held[s] = 0;
                } else {
                    /* ids from a small alphabet so that prefixes are shared */
                    uint32_t ids[LEN];
                    int32_t n = 1 + (int32_t)(rnd() % LEN);
                    for (int32_t j = 0; j < n; j++) ids[j] = (uint32_t)(rnd() % (j < 2 ? 2 : 4));
                    sim_prefix_keys_build(ids, n, n * 512, 512, 512, chains[s], LEN);
                    int32_t m = sim_prefix_match(idx, chains[s], n, now);
                    sim_prefix_acquire(idx, chains[s], m, now);
                    held[s] = m; /* guarded while insert evicts */
                    int32_t created = 0;
                    int32_t have = sim_prefix_insert(idx, chains[s], n, now, &created);
                    if (have < m || have - created != m) viol++;
                    held[s] = have;
                }
                if (rnd() % 10 == 0) sim_prefix_evict(idx, (int64_t)(rnd() % 5), guard_evict, &g);
                sim_prefix_stats st;
                sim_prefix_stats_get(idx, &st);
                if (bounded && st.total > cap) over++;
                /* Every held chain is still fully present with refs >= 1. */
                for (int k = 0; k < LIVE; k++)
                    for (int32_t j = 0; j < held[k]; j++)
                        if (sim_prefix_refcount(idx, chains[k][j]) < 1) viol++;
                if (step % 50 == 0) check_index(idx, "random");
            }
            CHECK(g.bad == 0);
            CHECK(over == 0);
            CHECK(viol == 0);
            for (int k = 0; k < LIVE; k++) sim_prefix_release(idx, chains[k], held[k], now);
            sim_prefix_stats st;
            sim_prefix_stats_get(idx, &st);
            CHECK(st.referenced == 0 && st.evictable >= 1);
            CHECK(sim_prefix_evict(idx, INT64_MAX, NULL, NULL) == st.total);
            check_index(idx, "drained");
            sim_prefix_destroy(idx);
        }
    }
}

/* ---- KV tiers ---------------------------------------------------------------- */

static void test_tier_lru(void)
{
    sim_kvtier *t = NULL;
    sim_err err = {{0}};
    CHECK(sim_kvtier_create(-5, &t, &err) == SIM_EINVAL && t == NULL);
    CHECK(sim_kvtier_create(3, &t, &err) == 0);
    evlog l = {{0}, 0};
    for (uint64_t k = 1; k <= 3; k++) CHECK(sim_kvtier_insert(t, k, log_evict, &l) == 1);
    uint64_t order[8];
    CHECK(sim_kvtier_keys_lru(t, order, 8) == 3);
    CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3);
    /* A hit on [1] makes it most recent; inserting 4 then drops 2. */
    uint64_t run[3] = {1, 7, 3};
    CHECK(sim_kvtier_match(t, run, 3) == 1);
    CHECK(sim_kvtier_insert(t, 4, log_evict, &l) == 1);
    CHECK(l.n == 1 && l.keys[0] == 2);
    CHECK(sim_kvtier_keys_lru(t, order, 8) == 3);
    CHECK(order[0] == 3 && order[1] == 1 && order[2] == 4);
    /* Re-inserting a held key only touches it. */
    CHECK(sim_kvtier_insert(t, 3, log_evict, &l) == 1 && l.n == 1);
    CHECK(sim_kvtier_size(t) == 3);
    uint64_t chain[3] = {1, 4, 9};
    CHECK(sim_kvtier_peek(t, chain, 3) == 2);
    CHECK(sim_kvtier_take(t, chain, 3) == 2);
    CHECK(sim_kvtier_size(t) == 1 && sim_kvtier_contains(t, 3) && !sim_kvtier_contains(t, 1));
    CHECK(sim_kvtier_remove(t, 3) == 1 && sim_kvtier_remove(t, 3) == 0);
    CHECK(sim_kvtier_evict(t, 5, NULL, NULL) == 0);
    sim_kvtier_destroy(t);
    /* Capacity 0: the block falls through to the callback. */
    CHECK(sim_kvtier_create(0, &t, NULL) == 0);
    l.n = 0;
    CHECK(sim_kvtier_insert(t, 42, log_evict, &l) == 0 && l.n == 1 && l.keys[0] == 42);
    CHECK(sim_kvtier_size(t) == 0);
    sim_kvtier_destroy(t);
}

/* HBM (bounded prefix index) → host tier → pool tier → dropped. Blocks are
 * moved: demoted on eviction, promoted (taken) on a lower-tier hit. Every
 * block ever created is in exactly one place or counted as dropped. */
typedef struct {
    sim_kvtier *host, *pool;
    int64_t dropped;
} hierarchy;

static void to_nowhere(void *ctx, uint64_t key)
{
    (void)key;
    ((hierarchy *)ctx)->dropped++;
}

static void to_pool(void *ctx, uint64_t key)
{
    hierarchy *h = ctx;
    sim_kvtier_insert(h->pool, key, to_nowhere, h);
}

static void to_host(void *ctx, uint64_t key)
{
    hierarchy *h = ctx;
    sim_kvtier_insert(h->host, key, to_pool, h);
}

static void test_tier_conservation(void)
{
    hierarchy h = {NULL, NULL, 0};
    sim_prefix *hbm = NULL;
    CHECK(sim_prefix_create(16, SIM_PREFIX_LRU, &hbm, NULL) == 0);
    CHECK(sim_kvtier_create(24, &h.host, NULL) == 0);
    CHECK(sim_kvtier_create(40, &h.pool, NULL) == 0);
    sim_prefix_set_evict_hook(hbm, to_host, &h);
    int64_t fresh = 0, lost = 0, dup = 0;
    /* Record of which keys exist, to check each is in one place. */
    enum { MAXK = 20000 };
    uint64_t *all = malloc(MAXK * sizeof *all);
    int64_t n_all = 0;
    for (int r = 0; r < 1500; r++) {
        uint32_t ids[6];
        int32_t n = 2 + (int32_t)(rnd() % 5);
        for (int32_t j = 0; j < n; j++) ids[j] = (uint32_t)(rnd() % (j == 0 ? 3 : 6));
        uint64_t keys[6];
        sim_prefix_keys_build(ids, n, n * 512, 512, 512, keys, 6);
        sim_time now = r;
        int32_t m = sim_prefix_match(hbm, keys, n, now);
        sim_prefix_acquire(hbm, keys, m, now);
        /* Promote the run that continues in host, then in pool. */
        int32_t mh = sim_kvtier_take(h.host, keys + m, n - m);
        int32_t mp = sim_kvtier_take(h.pool, keys + m + mh, n - m - mh);
        int32_t created = 0;
        int32_t have = sim_prefix_insert(hbm, keys, n, now, &created);
        /* The promoted blocks are the first ones created; any that did not
         * fit back into HBM are lost. */
        int32_t promoted = mh + mp;
        int32_t placed = created < promoted ? created : promoted;
        lost += promoted - placed;
        for (int32_t j = m + promoted; j < m + created; j++) {
            /* A block recomputed in HBM while an older copy sits further
             * down (not in the leading run) moves up too: the copy goes. */
            int stale = sim_kvtier_remove(h.host, keys[j]) + sim_kvtier_remove(h.pool, keys[j]);
            if (stale > 1) dup++;
            if (!stale) fresh++;
            if (n_all < MAXK) all[n_all++] = keys[j];
        }
        sim_prefix_release(hbm, keys, have, now);
    }
    sim_prefix_stats st;
    sim_prefix_stats_get(hbm, &st);
    int64_t held = st.total + sim_kvtier_size(h.host) + sim_kvtier_size(h.pool);
    CHECK_MSG(held + h.dropped + lost == fresh, "held %lld + dropped %lld + lost %lld vs %lld",
              (long long)held, (long long)h.dropped, (long long)lost, (long long)fresh);
    CHECK(sim_kvtier_size(h.host) == 24 && sim_kvtier_size(h.pool) == 40); /* filled */
    CHECK(h.dropped > 0);
    for (int64_t i = 0; i < n_all; i++) {
        int places = (sim_prefix_refcount(hbm, all[i]) >= 0) + sim_kvtier_contains(h.host, all[i]) +
                     sim_kvtier_contains(h.pool, all[i]);
        if (places > 1) dup++;
    }
    CHECK(dup == 0);
    check_index(hbm, "hierarchy");
    free(all);
    sim_prefix_destroy(hbm);
    sim_kvtier_destroy(h.host);
    sim_kvtier_destroy(h.pool);
}

static const test_case cases[] = {
    {"keys_counts", test_keys_counts},
    {"keys_chain", test_keys_chain},
    {"keys_unique", test_keys_unique},
    {"keys_mixing", test_keys_mixing},
    {"keymap", test_keymap},
    {"index_basic", test_index_basic},
    {"index_order", test_index_order},
    {"index_bounded", test_index_bounded},
    {"index_negative_ref", test_index_negative_ref},
    {"index_random", test_index_random},
    {"tier_lru", test_tier_lru},
    {"tier_conservation", test_tier_conservation},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    (void)argv;
    return test_run("test_prefix", cases);
}
