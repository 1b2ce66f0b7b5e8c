/* test_session — sessions without a cluster: the session fields of a
 * Mooncake trace (links, refusals with file:line), the synthetic session
 * generator (context chains, fan-out, join, think gaps, end of a session)
 * and the refusals of the workload and the loader. */
#include "sim_loader.h"
#include "sim_session.h"
#include "sim_trace.h"
#include "sim_workload.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static const char *src;

static sim_trace *parse(const char *text, sim_err *err)
{
    sim_trace *t = NULL;
    err->msg[0] = '\0';
    sim_trace_parse(text, strlen(text), "s.jsonl", SIM_TRACE_MOONCAKE, &t, err);
    return t;
}

/* The shipped fan-out trace: a turn, two sub-requests, the next turn. */
static void test_trace_links(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/sessions/fan_out.jsonl", src);
    sim_trace *t = NULL;
    sim_err err = {{0}};
    CHECK_MSG(sim_trace_load(path, SIM_TRACE_MOONCAKE, &t, &err) == 0, "%s", err.msg);
    if (!t) return;
    CHECK(t->n == 4 && t->n_sessions == 1);
    const sim_trace_entry *e = t->entries;
    CHECK(e[0].session == 0 && e[0].parent == -1 && e[0].turn == 0 && e[0].n_children == 2);
    CHECK(e[0].first_child == 1 && e[1].next_child == 2 && e[2].next_child == -1);
    CHECK(e[1].parent == 0 && e[2].parent == 0 && e[1].turn == 0 && e[2].turn == 0);
    CHECK(e[0].next == 3 && e[3].next == -1 && e[3].turn == 1 && e[3].parent == -1);
    CHECK_NEAR(e[2].delay_s, 0.005, 1e-15);
    CHECK_NEAR(e[3].delay_s, 0.1, 1e-15);
    sim_trace_destroy(t);

    /* Two interleaved sessions and a line outside any session. */
    const char *two = "{\"timestamp\": 0, \"session_id\": \"a\", \"input_length\": 5, \"output_length\": 1}\n"
                      "{\"timestamp\": 10, \"session_id\": \"b\", \"input_length\": 5, \"output_length\": 1}\n"
                      "{\"timestamp\": 20, \"input_length\": 5, \"output_length\": 1}\n"
                      "{\"session_id\": \"a\", \"input_length\": 9, \"output_length\": 1}\n"
                      "{\"session_id\": \"b\", \"timestamp\": 3, \"input_length\": 9, \"output_length\": 1}\n";
    t = parse(two, &err);
    CHECK_MSG(t != NULL, "%s", err.msg);
    if (!t) return;
    CHECK(t->n == 5 && t->n_sessions == 2);
    CHECK(t->entries[0].next == 3 && t->entries[1].next == 4 && t->entries[2].session == -1);
    CHECK(t->entries[4].turn == 1 && t->entries[4].session == 1);
    sim_trace_destroy(t);

    /* Without session fields nothing changes: no sessions, no links. */
    t = parse("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n", &err);
    CHECK(t && t->n_sessions == 0 && t->entries[0].session == -1 && t->entries[0].next == -1);
    sim_trace_destroy(t);
}

static void test_trace_refusals(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{\"timestamp\": 0, \"parent_id\": 1, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:1: field 'parent_id' needs 'session_id' on the same line"},
        {"{\"timestamp\": 0, \"delay\": 5, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:1: field 'delay' needs 'session_id'"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"parent_id\": 9, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:2: field 'parent_id': no earlier line has id '9'"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"id\": 2, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"parent_id\": 1, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:3: field 'parent_id': '1' is not the latest turn of session '1'"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"id\": 2, \"parent_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"parent_id\": 2, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:3: field 'parent_id': '2' is not the latest turn"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"timestamp\": 0, \"session_id\": 2, \"id\": 1, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:2: field 'id': '1' is already the id of an earlier line"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"delay\": -3, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:2: field 'delay': expected a number of ms >= 0"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"delay\": \"soon\", \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:2: field 'delay': expected a number of ms >= 0, got a string"},
        {"{\"timestamp\": 0, \"session_id\": [1], \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:1: field 'session_id': expected an integer >= 0 or a non-empty string"},
        {"{\"timestamp\": 0, \"session_id\": \"\", \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:1: field 'session_id': expected an integer >= 0 or a non-empty string"},
        {"{\"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:1: missing field 'timestamp'"},
        {"{\"timestamp\": 0, \"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"session_id\": 1, \"output_length\": 1}\n",
         "s.jsonl:2: missing field 'input_length'"},
        {"{\"timestamp\": 9, \"session_id\": 1, \"input_length\": 5, \"output_length\": 1}\n"
         "{\"timestamp\": 3, \"session_id\": 2, \"input_length\": 5, \"output_length\": 1}\n",
         "s.jsonl:2: timestamp 0.003 s is before the previous entry's 0.009 s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_err err = {{0}};
        sim_trace *t = parse(cases[i].text, &err);
        CHECK_MSG(t == NULL, "case %zu parsed", i);
        sim_trace_destroy(t);
        CHECK_CONTAINS(err.msg, cases[i].want);
    }
}

/* Follow-ups collected from sim_session_done. */
typedef struct {
    int n;
    sim_request_spec spec[8];
} sink;

static int collect(void *ctx, sim_request_spec *spec)
{
    sink *k = ctx;
    if (k->n < 8) k->spec[k->n++] = *spec;
    return 0;
}

static void fixed(sim_len_dist *d, double v)
{
    d->dist = SIM_DIST_FIXED;
    d->value = v;
}

/* Turn 1: 100 tokens (blocks of 16: 6 full + 1 partial), answer 10. Two
 * sub-requests of 20 + 100 + 10 tokens; turn 2 = 110 + 2 × 7 + 30. */
static void test_synthetic_chain(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sim_workload_cfg *w = &sc.workload;
    w->prefix.block_tokens = 16;
    fixed(&w->input_tokens, 100);
    fixed(&w->output_tokens, 10);
    w->sessions.count = 1;
    fixed(&w->sessions.turns, 2);
    fixed(&w->sessions.user_tokens, 30);
    fixed(&w->sessions.think_ms, 250);
    w->sessions.fan_out = 2;
    fixed(&w->sessions.child_input_tokens, 20);
    fixed(&w->sessions.child_output_tokens, 7);
    sim_session *s = NULL;
    sim_err err = {{0}};
    CHECK_MSG(sim_session_create(w, NULL, 0, 5, &s, &err) == 0, "%s", err.msg);
    if (!s) return;
    sim_request_spec t1;
    CHECK(sim_session_start(s, -1, 1000, &t1) == 0);
    CHECK(t1.session == 1 && t1.turn == 0 && !t1.sub && t1.arrival == 1000);
    CHECK(t1.input_tokens == 100 && t1.output_tokens == 10 && t1.n_hash == 7);
    CHECK(sim_session_open(s) == 1 && sim_session_live(s) == 1);

    sink k = {0};
    sim_session_done_info info;
    CHECK(sim_session_done(s, &t1, 5000, collect, &k, &info) == 0);
    CHECK(info.is_turn && info.turn == 0 && !info.ended);
    CHECK(k.n == 2);
    for (int i = 0; i < k.n && i < 2; i++) {
        const sim_request_spec *c = &k.spec[i];
        CHECK(c->sub == 1 && c->turn == 0 && c->arrival == 5000 && c->session == 1);
        /* context 110 = 6 full blocks shared with turn 1, then its own. */
        CHECK(c->input_tokens == 130 && c->output_tokens == 7 && c->n_hash == 9);
        CHECK(memcmp(c->hash_ids, t1.hash_ids, 6 * sizeof *c->hash_ids) == 0);
        CHECK(c->hash_ids[6] != t1.hash_ids[6]);
    }
    CHECK(k.spec[0].hash_ids[6] != k.spec[1].hash_ids[6]);
    sim_request_spec c0 = k.spec[0], c1 = k.spec[1];
    k.n = 0;
    /* The first sub-request to finish does not release the next turn. */
    CHECK(sim_session_done(s, &c0, 6000, collect, &k, &info) == 0);
    CHECK(k.n == 0 && !info.is_turn && !info.ended);
    CHECK(sim_session_done(s, &c1, 9000, collect, &k, &info) == 0);
    CHECK(k.n == 1);
    const sim_request_spec *t2 = &k.spec[0];
    /* The join: the last sub-request's end + the think gap. */
    CHECK(t2->arrival == 9000 + 250 * 1000000LL && t2->turn == 1 && !t2->sub);
    CHECK(t2->input_tokens == 110 + 14 + 30 && t2->n_hash == 10);
    CHECK(memcmp(t2->hash_ids, t1.hash_ids, 6 * sizeof *t2->hash_ids) == 0);
    CHECK(t2->hash_ids[6] != t1.hash_ids[6] && t2->hash_ids[6] != c0.hash_ids[6]);
    sim_request_spec last = *t2;
    sim_session_release(s, &t1);
    sim_session_release(s, &c0);
    sim_session_release(s, &c1);
    k.n = 0;
    /* The last turn fans out nothing and ends the session. */
    CHECK(sim_session_done(s, &last, 400000000LL, collect, &k, &info) == 0);
    CHECK(k.n == 0 && info.ended && info.start == 1000 && info.turns == 2);
    CHECK(sim_session_open(s) == 0);
    sim_session_release(s, &last);
    CHECK(sim_session_live(s) == 0);
    sim_session_destroy(s);
}

/* Through the workload: the arrival process times session starts, ids
 * number every request, and the run ends only when sessions close. */
static void test_workload_sessions(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sim_workload_cfg *w = &sc.workload;
    w->arrival.process = SIM_ARRIVAL_CONSTANT;
    w->arrival.rate = 2;
    w->sessions.count = 3;
    fixed(&w->sessions.turns, 2);
    sim_workload *wl = NULL;
    sim_err err = {{0}};
    CHECK_MSG(sim_workload_create(w, 1, &wl, &err) == 0, "%s", err.msg);
    if (!wl) return;
    CHECK(sim_workload_has_sessions(wl) && sim_workload_total(wl) == -1);
    sim_request_spec sp[3];
    for (int i = 0; i < 3; i++) {
        CHECK(sim_workload_next(wl, &sp[i]) == 1);
        CHECK(sp[i].id == (uint64_t)i && sp[i].arrival == (i + 1) * 500000000LL && sp[i].turn == 0);
    }
    sim_request_spec extra;
    CHECK(sim_workload_next(wl, &extra) == 0);
    CHECK(sim_workload_sessions_open(wl) == 3);
    sink k = {0};
    sim_session_done_info info;
    CHECK(sim_workload_request_done(wl, &sp[1], 2000000000LL, collect, &k, &info) == 1);
    CHECK(k.n == 1 && k.spec[0].id == 3 && k.spec[0].arrival == 2000000000LL + 1000000000LL);
    sim_workload_release(wl, &sp[1]);
    sim_request_spec plain = {0};
    CHECK(sim_workload_request_done(wl, &plain, 0, collect, &k, &info) == 0);
    sim_workload_destroy(wl);
}

static void test_refusals(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.workload.sessions.count = 2;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sim_workload *wl = NULL;
    sim_err err = {{0}};
    CHECK(sim_workload_create(&sc.workload, 1, &wl, &err) < 0 && wl == NULL);
    CHECK_CONTAINS(err.msg, "workload.sessions.count: sessions need an open-loop arrival.process");
    sc.workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc.workload.prefix.kind = SIM_PREFIX_MULTI_TURN;
    CHECK(sim_workload_create(&sc.workload, 1, &wl, &err) < 0);
    CHECK_CONTAINS(err.msg, "workload.prefix.kind: multi_turn and workload.sessions exclude each other");

    /* A session trace is replayed open loop and whole. */
    sim_scenario_defaults(&sc);
    sc.workload.trace.format = SIM_TRACE_MOONCAKE;
    snprintf(sc.workload.trace.path, sizeof sc.workload.trace.path, "%s/tests/data/sessions/fan_out.jsonl", src);
    sc.workload.requests = 2;
    CHECK(sim_workload_create(&sc.workload, 1, &wl, &err) < 0);
    CHECK_CONTAINS(err.msg, "workload.requests:");
    CHECK_CONTAINS(err.msg, "has session_id fields and is replayed whole");
    sc.workload.requests = 0;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    CHECK(sim_workload_create(&sc.workload, 1, &wl, &err) < 0);
    CHECK_CONTAINS(err.msg, "a session trace is replayed open loop");

    /* The loader names the key path, file, line and column. */
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"workload:\n  sessions:\n    count: 4\n    turns: {dist: fixed, value: 0}\n",
         "workload.sessions.turns.value"},
        {"workload:\n  sessions:\n    count: 4\n    think_ms: {dist: normal, mean: -5}\n",
         "workload.sessions.think_ms.mean"},
        {"workload:\n  sessions:\n    count: 4\n    fan_out: -1\n", "workload.sessions.fan_out"},
        {"workload:\n  sessions:\n    count: 4\n    fanout: 2\n", "workload.sessions.fanout"},
        {"workload:\n  arrival: {process: closed_loop}\n  sessions: {count: 4}\n",
         "sessions are their own closed loop"},
        {"workload:\n  prefix: {kind: rag}\n  sessions: {count: 4}\n", "workload.prefix.kind"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_err le = {{0}};
        CHECK_MSG(sim_loader_load_string(cases[i].yaml, strlen(cases[i].yaml), "t.yaml", NULL, 0, &sc, &le) < 0,
                  "case %zu loaded", i);
        CHECK_CONTAINS(le.msg, cases[i].want);
        CHECK_CONTAINS(le.msg, "t.yaml:");
    }
    /* Off by default, and a valid section loads. */
    const char *ok = "workload:\n  sessions:\n    count: 4\n    fan_out: 2\n    turns: {dist: uniform, min: 2, max: 5}\n";
    sim_err le = {{0}};
    CHECK_MSG(sim_loader_load_string(ok, strlen(ok), "t.yaml", NULL, 0, &sc, &le) == 0, "%s", le.msg);
    CHECK(sc.workload.sessions.count == 4 && sc.workload.sessions.fan_out == 2 &&
          sc.workload.sessions.turns.dist == SIM_DIST_UNIFORM && sc.workload.sessions.turns.max == 5);
    sim_scenario_defaults(&sc);
    CHECK(sc.workload.sessions.count == 0);
}

static const test_case cases[] = {
    {"trace_links", test_trace_links},
    {"trace_refusals", test_trace_refusals},
    {"synthetic_chain", test_synthetic_chain},
    {"workload_sessions", test_workload_sessions},
    {"refusals", test_refusals},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    src = test_src_dir();
    return test_run("test_session", cases);
}
