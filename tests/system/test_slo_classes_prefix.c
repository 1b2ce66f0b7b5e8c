/* test_slo_classes_prefix — SLO classes with prefix structure and
 * sessions of their own (workload.classes.*.prefix and .sessions, starting
 * from workload.prefix and workload.sessions).
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
 * meets its SLO far more often with the cache than without.
 *
 * Sessions per class: a class's session model numbers its sessions in the
 * class's residue, and its follow-up turns and sub-requests carry the
 * class and its priority and fresh ids of the merged workload; through the
 * simulator 4 sessions of 3 turns fanning out 2 sub-requests per turn but
 * the last give 4 x 3 + 4 x 2 x 2 = 28 requests of their class beside the
 * other class's 5; a closed-loop class or a class prefix structure with
 * sessions is refused naming the key. */
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_prefixgen.h"
#include "sim_session.h"
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

/* scenarios/slo-classes-prefix.yaml as the README shows it: the agent
 * class's requests are its sessions' turns and sub-requests; with the
 * cache chat, rag and agent meet their SLOs far more often than without. */
static void test_shipped_scenario(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/slo-classes-prefix.yaml", test_src_dir());
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_file(path, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    REQUIRE(sc.workload.classes[0].prefix.kind == SIM_PREFIX_MULTI_TURN &&
            sc.workload.classes[1].prefix.kind == SIM_PREFIX_RAG && sc.workload.classes[2].sessions.count == 30 &&
            sc.workload.classes[3].prefix.kind == SIM_PREFIX_NONE);
    run_result r, f;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.cache_hit_rate > 0.3);
    CHECK(r.sum.sessions.completed == 30 &&
          r.sum.classes[2].requests_completed == r.sum.sessions.turns + r.sum.sessions.sub_requests);
    const char *off[] = {"cache.enabled=false"};
    REQUIRE_MSG(sim_loader_load_file(path, off, 1, &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &f) == 0);
    for (int c = 0; c < 3; c++)
        CHECK_MSG(r.sum.classes[c].slo_attainment > f.sum.classes[c].slo_attainment + 0.1, "%s: %.3f cached, %.3f not",
                  r.sum.classes[c].name, r.sum.classes[c].slo_attainment, f.sum.classes[c].slo_attainment);
    free(r.recs);
    free(f.recs);
}

/* Two classes of sessions: agent (priority 3) and helper (priority 1). */
static void session_classes(sim_scenario *sc)
{
    static const char *const names[2] = {"agent", "helper"};
    test_class_scenario(sc, 300, 20, 2, names);
    for (int k = 0; k < 2; k++) {
        sim_class_cfg *c = &sc->workload.classes[k];
        c->priority = k ? 1 : 3;
        c->arrival.process = SIM_ARRIVAL_CONSTANT;
        c->arrival.rate = 1 / (1 + 0.3 * k);
        sim_session_cfg *ss = &c->sessions;
        ss->count = 3;
        ss->fan_out = 2;
        sim_len_dist *d[5] = {&ss->turns, &ss->user_tokens, &ss->think_ms, &ss->child_input_tokens,
                              &ss->child_output_tokens};
        static const double v[5] = {3, 50, 100, 40, 10};
        for (int j = 0; j < 5; j++) {
            d[j]->dist = SIM_DIST_FIXED;
            d[j]->value = v[j];
        }
    }
}

typedef struct {
    int n;
    sim_request_spec got[8];
} emitted;

static int collect(void *ctx, sim_request_spec *spec)
{
    emitted *e = ctx;
    if (e->n < 8) e->got[e->n++] = *spec;
    return 0;
}

static void test_sessions_per_class(void)
{
    sim_scenario sc;
    session_classes(&sc);
    sim_workload *w = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_workload_create(&sc.workload, sc.seed, &w, &err) == 0, "%s", err.msg);
    CHECK(sim_workload_has_sessions(w));
    sim_request_spec first[6];
    int n = 0;
    while (n < 6 && sim_workload_next(w, &first[n]) == 1) n++;
    REQUIRE(n == 6);
    CHECK(sim_workload_sessions_open(w) == 6);
    uint64_t next_id = 6;
    for (int k = 0; k < n; k++) {
        const sim_request_spec *f = &first[k];
        CHECK_MSG(f->session != 0 && (f->session - 1) % 2 == (uint64_t)f->cls, "first turn %d of class %d in session %llu",
                  k, (int)f->cls, (unsigned long long)f->session);
        CHECK(f->priority == (f->cls ? 1 : 3));
        /* The first turn done: it fans out its 2 sub-requests, of its class and session. */
        emitted e = {0};
        sim_session_done_info info;
        CHECK(sim_workload_request_done(w, f, f->arrival + 1000000, collect, &e, &info) == 1);
        CHECK(info.is_turn && !info.ended);
        REQUIRE(e.n == 2);
        for (int j = 0; j < e.n; j++) {
            CHECK(e.got[j].cls == f->cls && e.got[j].priority == f->priority && e.got[j].session == f->session);
            CHECK_MSG(e.got[j].id == next_id, "follow-up id %llu, expected %llu", (unsigned long long)e.got[j].id,
                      (unsigned long long)next_id);
            next_id++;
            sim_workload_release(w, &e.got[j]);
        }
        sim_workload_release(w, f);
    }
    sim_workload_destroy(w);

    /* Through the simulator: 3 sessions x (3 turns + 2 x 2 sub-requests) = 21 requests per class. */
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    for (int c = 0; c < 2; c++)
        CHECK_MSG(r.sum.classes[c].requests_completed == 21, "%s: %lld", r.sum.classes[c].name,
                  (long long)r.sum.classes[c].requests_completed);
    CHECK(r.sum.sessions.completed == 6 && r.sum.sessions.turns == 18 && r.sum.sessions.sub_requests == 24);
    free(r.recs);

    /* Refused, naming the key: a closed-loop class, a class prefix structure beside sessions. */
    const char *closed = "workload:\n  classes:\n    - {name: a, arrival: {process: closed_loop, concurrency: 2}, "
                         "sessions: {count: 2}}\n";
    const char *prefix = "workload:\n  classes:\n    - {name: a, prefix: {kind: rag}, sessions: {count: 2}}\n";
    const char *yamls[2] = {closed, prefix};
    const char *want[2] = {"workload.classes.0.sessions.count: sessions are their own closed loop",
                           "workload.classes.0.prefix.kind: prefix.kind rag and the class's sessions exclude"};
    for (int k = 0; k < 2; k++) {
        sim_scenario bad;
        sim_err e2 = {{0}};
        CHECK(sim_loader_load_string(yamls[k], strlen(yamls[k]), "t.yaml", NULL, 0, &bad, &e2) < 0);
        CHECK_CONTAINS(e2.msg, want[k]);
    }
}

static const test_case cases[] = {
    {"sessions_per_class", test_sessions_per_class},
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
