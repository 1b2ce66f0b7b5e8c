/* test_loadtree — the least-loaded index against a plain scan: for random
 * loads full of ties, every start index, sizes that are and are not powers
 * of two, and leaf updates (up and down); and the least_loaded router picks
 * the same instances through the index as by scanning its views. */
#include "sim_loadtree.h"
#include "sim_router.h"
#include "test_util.h"

/* The reference: first index in cyclic order from start with the minimum. */
static int32_t scan_first_min(const int64_t *v, int32_t n, int32_t start)
{
    int32_t best = start;
    for (int32_t k = 1; k < n; k++) {
        int32_t i = (start + k) % n;
        if (v[i] < v[best]) best = i;
    }
    return best;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void check_size(int32_t n, uint64_t seed)
{
    sim_loadtree *t = sim_loadtree_create(n);
    REQUIRE(t != NULL);
    CHECK(sim_loadtree_size(t) == n);
    int64_t *v = calloc((size_t)n, sizeof *v);
    REQUIRE(v != NULL);
    /* All zero: the start itself wins. */
    int ok = 1;
    for (int32_t s = 0; s < n; s++) ok &= sim_loadtree_first_min_from(t, s) == s;
    CHECK_MSG(ok, "n=%d all-zero", n);
    uint64_t st = seed;
    int mismatches = 0;
    for (int round = 0; round < 200; round++) {
        /* A few leaves change per round, over a small range so ties abound. */
        for (int u = 0; u < 3; u++) {
            int32_t i = (int32_t)(lcg(&st) % (uint64_t)n);
            v[i] = (int64_t)(lcg(&st) % 6);
            sim_loadtree_set(t, i, v[i]);
        }
        for (int32_t s = 0; s < n; s++)
            if (sim_loadtree_first_min_from(t, s) != scan_first_min(v, n, s)) mismatches++;
    }
    CHECK_MSG(mismatches == 0, "n=%d: %d picks differ from the scan", n, mismatches);
    free(v);
    sim_loadtree_destroy(t);
}

/* The index against a scan at sizes around the fan-out; none of size 0. */
static void case_sizes(void)
{
    CHECK(sim_loadtree_create(0) == NULL);
    const int32_t sizes[] = {1, 2, 3, 7, 8, 9, 64, 100, 257};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_size(sizes[i], 17 + i);
}

static void case_router_same_picks(void)
{
    /* The router: the same sequence of picks with and without the index. */
    enum { N = 37 };
    sim_routing_cfg cfg = {.policy = SIM_ROUTE_LEAST_LOADED};
    sim_router *scan = NULL, *fast = NULL;
    sim_err err;
    REQUIRE(sim_router_create(&cfg, 5, &scan, &err) == 0);
    REQUIRE(sim_router_create(&cfg, 5, &fast, &err) == 0);
    sim_loadtree *t = sim_loadtree_create(N);
    REQUIRE(t != NULL);
    sim_router_use_loadtree(fast, t);
    sim_router_view v[N] = {{0}};
    sim_request_spec req = {0};
    uint64_t st = 99;
    int same = 1, spread = 0;
    for (int i = 0; i < 5000; i++) {
        int32_t a = sim_router_pick(scan, &req, v, N);
        int32_t b = sim_router_pick(fast, &req, v, N);
        same &= a == b;
        spread += a != 0;
        /* The chosen instance gets the request; a random one finishes work. */
        v[a].outstanding_tokens += 1 + (int64_t)(lcg(&st) % 300);
        sim_loadtree_set(t, a, v[a].outstanding_tokens);
        int32_t d = (int32_t)(lcg(&st) % N);
        v[d].outstanding_tokens -= v[d].outstanding_tokens / 2;
        sim_loadtree_set(t, d, v[d].outstanding_tokens);
    }
    CHECK(same);
    CHECK(spread > 4000);
    /* A pick over a different number of views than the index holds scans. */
    CHECK(sim_router_pick(fast, &req, v, 3) == sim_router_pick(scan, &req, v, 3));
    sim_router_destroy(scan);
    sim_router_destroy(fast);
    sim_loadtree_destroy(t);
}

static const test_case cases[] = {
    {"sizes", case_sizes},
    {"router_same_picks", case_router_same_picks},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_loadtree", cases);
}
