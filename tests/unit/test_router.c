/* test_router — the built-in routing policies on hand-made load views. */
#include "sim_router.h"
#include "test_util.h"

static sim_router *make(sim_route_policy p, uint64_t seed)
{
    sim_routing_cfg cfg = {.policy = p};
    sim_router *r = NULL;
    sim_err err;
    CHECK(sim_router_create(&cfg, seed, &r, &err) == 0);
    return r;
}

/* Four instances' load views, two tied for the least loaded, and a
 * request. */
static const sim_request_spec req;
static const sim_router_view v[4] = {{.outstanding_tokens = 100}, {.outstanding_tokens = 50},
                                     {.outstanding_tokens = 50}, {.outstanding_tokens = 300}};

/* round_robin: 0, 1, 2, 3, 0, ... whatever the load. */
static void case_round_robin(void)
{
    sim_router *rr = make(SIM_ROUTE_ROUND_ROBIN, 1);
    for (int i = 0; i < 12; i++) CHECK(sim_router_pick(rr, &req, v, 4) == i % 4);
    sim_router_destroy(rr);
}

static void case_least_loaded(void)
{
    /* least_loaded: always one of the two minima, alternating between them. */
    sim_router *ll = make(SIM_ROUTE_LEAST_LOADED, 1);
    int hits[4] = {0};
    for (int i = 0; i < 100; i++) hits[sim_router_pick(ll, &req, v, 4)]++;
    CHECK(hits[0] == 0 && hits[3] == 0);
    CHECK(hits[1] >= 20 && hits[2] >= 20 && hits[1] + hits[2] == 100);
    sim_router_destroy(ll);
}

static void case_power_of_two(void)
{
    /* power_of_two never picks the most loaded instance unless it drew it
     * twice, which it cannot (distinct candidates). */
    sim_router *p2 = make(SIM_ROUTE_POWER_OF_TWO, 7);
    int h2[4] = {0};
    for (int i = 0; i < 4000; i++) h2[sim_router_pick(p2, &req, v, 4)]++;
    CHECK(h2[3] == 0);
    /* Instance 0 (load 100) wins only against 3: P = 2/12 of pairs ⇒ ≈ 1/6. */
    CHECK_NEAR(h2[0] / 4000.0, 1.0 / 6.0, 0.03);
    sim_router_destroy(p2);
}

static void case_random(void)
{
    /* random: uniform within a few percent; same seed ⇒ same sequence. */
    sim_router *ra = make(SIM_ROUTE_RANDOM, 3), *rb = make(SIM_ROUTE_RANDOM, 3);
    int h3[4] = {0}, same = 1;
    for (int i = 0; i < 8000; i++) {
        int a = sim_router_pick(ra, &req, v, 4);
        h3[a]++;
        if (a != sim_router_pick(rb, &req, v, 4)) same = 0;
    }
    CHECK(same);
    for (int i = 0; i < 4; i++) CHECK_NEAR(h3[i] / 8000.0, 0.25, 0.03);
    sim_router_destroy(ra);
    sim_router_destroy(rb);
}

static void case_one_instance(void)
{
    /* One instance: always 0. */
    sim_router *one = make(SIM_ROUTE_POWER_OF_TWO, 1);
    CHECK(sim_router_pick(one, &req, v, 1) == 0);
    sim_router_destroy(one);
}

/* An unknown policy is refused. */
static void case_bad_policy(void)
{
    sim_routing_cfg bad = {.policy = (sim_route_policy)99};
    sim_router *r = NULL;
    sim_err err;
    CHECK(sim_router_create(&bad, 1, &r, &err) == SIM_EINVAL && r == NULL);
}

static const test_case cases[] = {
    {"round_robin", case_round_robin},
    {"least_loaded", case_least_loaded},
    {"power_of_two", case_power_of_two},
    {"random", case_random},
    {"one_instance", case_one_instance},
    {"bad_policy", case_bad_policy},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_router", cases);
}
