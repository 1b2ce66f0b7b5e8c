/* test_slo_classes_prefix — SLO classes with prefix structure
 * (workload.classes.*.prefix, starting from workload.prefix).
 *
 * Each class draws its prompts, documents and sessions from a generator of
 * its own: two classes with the same system-prompt configuration share no
 * hash id (their prompts are different content), each class's fresh ids
 * and multi-turn sessions lie in its own residue class (id mod the class
 * count), a class of kind none carries no ids, and one class's prefix
 * structure leaves another class's requests (arrivals, lengths, ids)
 * untouched. Through the simulator with the prefix cache on, by hand: two
 * classes of one 2048-token system prompt each (4 blocks of 512), requests
 * served one at a time: the first request of each class finds nothing
 * cached (the other class's prompt is not its own) and every later one its
 * class's whole prompt, 2048 tokens. The shipped scenario: every class
 * meets its SLO far more often with the cache than without. */
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_prefixgen.h"
#include "sim_workload.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n classes of constant arrivals (class k at rate 1 / (1 + 0.3 k), 6 requests each), fixed lengths. */
static void classes_cfg(sim_scenario *sc, int n, sim_prefix_kind kind)
{
    static const char *const names[3] = {"a", "b", "c"};
    test_class_scenario(sc, 256, 8, n, names);
    for (int k = 0; k < n; k++) {
        sim_class_cfg *c = &sc->workload.classes[k];
        c->requests = 6;
        c->arrival.process = SIM_ARRIVAL_CONSTANT;
        c->arrival.rate = 1 / (1 + 0.3 * k);
        c->prefix = sc->workload.prefix;
        c->prefix.kind = kind;
        c->prefix.prompts = 1;
        c->prefix.prompt_tokens = 2048;
        c->prefix.sessions = 2;
        c->prefix.turns = 3;
    }
}

typedef struct {
    int n;
    int cls[64];
    sim_time at[64];
    int32_t in[64], out[64], n_hash[64];
    uint32_t ids[64][16];
    uint64_t session[64];
} drawn;

/* Every request of the workload (at most 64, ids copied before release). */
static void draw(const sim_scenario *sc, drawn *d)
{
    sim_workload *w = NULL;
    sim_err err = {{0}};
    memset(d, 0, sizeof *d);
    REQUIRE_MSG(sim_workload_create(&sc->workload, sc->seed, &w, &err) == 0, "%s", err.msg);
    sim_request_spec s;
    while (d->n < 64 && sim_workload_next(w, &s) == 1) {
        int k = d->n++;
        d->cls[k] = s.cls;
        d->at[k] = s.arrival;
        d->in[k] = s.input_tokens;
        d->out[k] = s.output_tokens;
        d->n_hash[k] = s.n_hash;
        d->session[k] = s.session;
        for (int32_t b = 0; b < s.n_hash && b < 16; b++) d->ids[k][b] = s.hash_ids[b];
        sim_workload_release(w, &s);
    }
    sim_workload_destroy(w);
}

static void test_ids_own(void)
{
    sim_scenario sc;
    drawn d;
    classes_cfg(&sc, 3, SIM_PREFIX_SYSTEM_PROMPT);
    sc.workload.classes[2].prefix.kind = SIM_PREFIX_NONE;
    draw(&sc, &d);
    REQUIRE(d.n == 18);
    uint32_t first[3] = {0, 0, 0};
    for (int k = 0; k < d.n; k++) {
        int c = d.cls[k];
        if (c == 2) {
            CHECK(d.n_hash[k] == 0 && d.in[k] == 256);
            continue;
        }
        /* 2048 shared + 256 own tokens: 4 shared blocks, then one fresh. */
        REQUIRE(d.in[k] == 2304 && d.n_hash[k] == 5);
        for (int b = 0; b < 4; b++) CHECK(d.ids[k][b] & SIM_PREFIX_SHARED_BIT);
        if (!first[c]) first[c] = d.ids[k][0];
        CHECK_MSG(d.ids[k][0] == first[c], "class %d request %d: its prompt's first block differs", c, k);
        uint32_t fresh = d.ids[k][4];
        CHECK_MSG(!(fresh & SIM_PREFIX_SHARED_BIT) && fresh % 3 == (uint32_t)c, "class %d fresh id %u", c, fresh);
        /* No id of class a is one of class b's. */
        for (int j = 0; j < d.n; j++)
            if (d.cls[j] != c && d.cls[j] != 2)
                for (int b = 0; b < 5; b++)
                    for (int q = 0; q < 5; q++) CHECK(d.ids[k][b] != d.ids[j][q]);
    }
    CHECK(first[0] && first[1] && first[0] != first[1]);

    /* Class a's requests do not depend on class b's prefix structure. */
    drawn e;
    sc.workload.classes[1].prefix.kind = SIM_PREFIX_NONE;
    draw(&sc, &e);
    REQUIRE(e.n == d.n);
    for (int k = 0; k < d.n; k++) {
        CHECK(e.cls[k] == d.cls[k] && e.at[k] == d.at[k] && e.out[k] == d.out[k]);
        if (d.cls[k] == 0) CHECK(e.n_hash[k] == 5 && memcmp(e.ids[k], d.ids[k], sizeof d.ids[k]) == 0);
    }
}

/* Multi-turn classes: each session belongs to one class ((session - 1) mod 2 = its class). */
static void test_sessions_own(void)
{
    sim_scenario sc;
    drawn d;
    classes_cfg(&sc, 2, SIM_PREFIX_MULTI_TURN);
    draw(&sc, &d);
    REQUIRE(d.n == 12);
    int seen[2] = {0, 0};
    for (int k = 0; k < d.n; k++) {
        CHECK(d.session[k] != 0);
        CHECK_MSG((d.session[k] - 1) % 2 == (uint64_t)d.cls[k], "request %d of class %d in session %llu", k,
                  d.cls[k], (unsigned long long)d.session[k]);
        seen[d.cls[k]]++;
    }
    CHECK(seen[0] == 6 && seen[1] == 6);
}

/* Served one at a time (arrivals 1 s and 1.3 s apart, each request done in
 * well under 0.3 s): ids 0 (class a at 1 s) and 1 (class b at 1.3 s) find
 * nothing cached, every later request its class's 2048-token prompt. */
static void test_cache_by_hand(void)
{
    sim_scenario sc;
    classes_cfg(&sc, 2, SIM_PREFIX_SYSTEM_PROMPT);
    sc.cache.enabled = 1;
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    REQUIRE(r.n == 12);
    for (int64_t k = 0; k < r.n; k++) {
        const sim_req_record *q = &r.recs[k];
        CHECK(q->finish - q->arrival < 300000000); /* alone: done before the next arrival */
        int32_t want = q->id < 2 ? 0 : 2048;
        CHECK_MSG(q->cached_tokens == want, "id %llu: %d tokens cached, by hand %d", (unsigned long long)q->id,
                  (int)q->cached_tokens, (int)want);
    }
    /* 10 of 12 prompts hit 2048 of their 2304 tokens. */
    CHECK_NEAR(r.sum.cache_hit_rate, 10.0 * 2048 / (12.0 * 2304), 1e-9);
    free(r.recs);
}

/* scenarios/slo-classes-prefix.yaml as the README shows it: with the cache
 * every class meets its SLO, without it chat and rag fall well short. */
static void test_shipped_scenario(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/slo-classes-prefix.yaml", test_src_dir());
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_file(path, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    REQUIRE(sc.workload.classes[0].prefix.kind == SIM_PREFIX_MULTI_TURN &&
            sc.workload.classes[1].prefix.kind == SIM_PREFIX_RAG && sc.workload.classes[2].prefix.kind == SIM_PREFIX_NONE);
    run_result r, f;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.cache_hit_rate > 0.3);
    const char *off[] = {"cache.enabled=false"};
    REQUIRE_MSG(sim_loader_load_file(path, off, 1, &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &f) == 0);
    for (int c = 0; c < 2; c++)
        CHECK_MSG(r.sum.classes[c].slo_attainment > f.sum.classes[c].slo_attainment + 0.1, "%s: %.3f cached, %.3f not",
                  r.sum.classes[c].name, r.sum.classes[c].slo_attainment, f.sum.classes[c].slo_attainment);
    free(r.recs);
    free(f.recs);
}

static const test_case cases[] = {
    {"shipped_scenario", test_shipped_scenario},
    {"ids_own", test_ids_own},
    {"sessions_own", test_sessions_own},
    {"cache_by_hand", test_cache_by_hand},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_slo_classes_prefix", cases);
}
