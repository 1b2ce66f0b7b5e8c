/* test_slo_classes_closed — SLO classes as closed-loop client populations:
 * two closed-loop classes with priorities on a saturated instance (the more
 * urgent class's TTFT is lower, and each class obeys Little's law for
 * closed systems, clients = X × (mean E2E + think)); a closed-loop class
 * beside an open-loop one, each sending exactly its own request budget,
 * every closed-loop request sent at a previous one's last token plus the
 * class's think time and never more than the class's clients in flight; a
 * shed closed-loop request counted as shed (and against the class's budget),
 * its client sending its next one after its think time; the shipped
 * example's --json `classes` object, its determinism (same seed,
 * byte-identical output) and a search over it. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama-3.1-8b on one H100 (analytic prices), two classes started from the
 * workload's keys: class 0 "batch" (input `bin` tokens) and class 1
 * "interactive" (input `iin`), output `out` tokens each. */
static void base(sim_scenario *sc, int bin, int iin, int out)
{
    static const char *const names[2] = {"batch", "interactive"};
    test_class_scenario(sc, bin, out, 2, names);
    sc->workload.classes[1].input_tokens.value = iin;
}

static void closed(sim_class_cfg *cl, int32_t clients, double think_s)
{
    cl->arrival.process = SIM_ARRIVAL_CLOSED;
    cl->arrival.concurrency = clients;
    cl->arrival.think_time_s = think_s;
}

/* 8 batch clients (4096-token prompts, no think time, priority 1) and 12
 * interactive ones (512-token prompts, 1 s think, priority 0) on one
 * instance with max_seqs 12: more clients than seats, so requests queue,
 * but the interactive class alone does not fill the seats (batch is slowed,
 * not starved). Both send for 600 s; the drain after it is a few E2Es, so
 * Little's law over the run's span holds to 1 %. */
static void saturated(sim_scenario *sc, int batch_prio)
{
    base(sc, 4096, 512, 128);
    sim_class_cfg *b = &sc->workload.classes[0], *in = &sc->workload.classes[1];
    closed(b, 8, 0);
    closed(in, 12, 1);
    b->priority = batch_prio;
    in->priority = 0;
    b->requests = in->requests = 0;
    b->duration_s = in->duration_s = 600;
    sc->deployment.pools[0].scheduler.max_seqs = 12;
}

static void test_priority_little(void)
{
    sim_scenario sc;
    run_result r, f;
    saturated(&sc, 1);
    REQUIRE(run(&sc, &r) == 0);
    REQUIRE(r.sum.n_classes == 2 && !r.sum.overloaded);
    const sim_class_summary *cb = &r.sum.classes[0], *ci = &r.sum.classes[1];
    CHECK(cb->requests_completed > 100 && ci->requests_completed > 1000);
    CHECK(r.sum.requests_completed == cb->requests_completed + ci->requests_completed);
    CHECK(r.sum.queue_ms.mean > 1); /* saturated: requests wait */
    CHECK_MSG(ci->ttft_ms.mean < 0.5 * cb->ttft_ms.mean, "interactive TTFT %.1f ms, batch %.1f ms", ci->ttft_ms.mean,
              cb->ttft_ms.mean);
    /* Little's law per class: N_c = X_c (E2E_c + Z_c). */
    const int32_t n[2] = {8, 12};
    const double z[2] = {0, 1};
    for (int c = 0; c < 2; c++) {
        const sim_class_summary *cs = &r.sum.classes[c];
        double x = (double)cs->requests_completed / r.sum.sim_time_s;
        double little = x * (cs->e2e_ms.mean / 1e3 + z[c]);
        CHECK_MSG(fabs(little - n[c]) < 0.01 * n[c], "%s: X %.3f req/s x (E2E %.3f s + Z %.1f s) = %.3f, clients %d",
                  cs->name, x, cs->e2e_ms.mean / 1e3, z[c], little, (int)n[c]);
    }
    /* One priority for both: the interactive class loses its head start. */
    saturated(&sc, 0);
    REQUIRE(run(&sc, &f) == 0);
    CHECK_MSG(f.sum.classes[1].ttft_ms.mean > 1.5 * ci->ttft_ms.mean, "interactive TTFT %.1f ms FCFS vs %.1f ms",
              f.sum.classes[1].ttft_ms.mean, ci->ttft_ms.mean);
    free(r.recs);
    free(f.recs);
}

/* A closed-loop class (3 clients, 0.25 s think, 40 requests) beside an
 * open-loop one (constant 5 req/s, 25 requests): each sends exactly its
 * budget and the run ends when both are done. Every closed-loop request
 * after the first three is sent 0.25 s after one of the class's requests
 * finished, and never more than 3 are in flight. */
static void test_mixed_budget(void)
{
    sim_scenario sc;
    run_result r;
    base(&sc, 300, 700, 64);
    sim_class_cfg *cl = &sc.workload.classes[0], *op = &sc.workload.classes[1];
    closed(cl, 3, 0.25);
    cl->requests = 40;
    op->arrival.process = SIM_ARRIVAL_CONSTANT;
    op->arrival.rate = 5;
    op->requests = 25;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.classes[0].requests_completed == 40 && r.sum.classes[1].requests_completed == 25);
    REQUIRE(r.n == 65);
    int at_zero = 0;
    for (int64_t k = 0; k < r.n; k++) {
        const sim_req_record *q = &r.recs[k];
        if (q->input_tokens != 300) continue;
        if (q->arrival == 0) {
            at_zero++;
            continue;
        }
        int found = 0, inflight = 0;
        for (int64_t j = 0; j < r.n; j++) {
            const sim_req_record *p = &r.recs[j];
            if (p->input_tokens != 300) continue;
            if (sim_req_record_last_seen(p) + 250000000 == q->arrival) found = 1;
            if (p->arrival <= q->arrival && sim_req_record_last_seen(p) > q->arrival) inflight++;
        }
        CHECK_MSG(found, "closed-loop request %llu at %lld ns follows no finished request",
                  (unsigned long long)q->id, (long long)q->arrival);
        CHECK_MSG(inflight <= 3, "%d closed-loop requests in flight at %lld ns", inflight, (long long)q->arrival);
    }
    CHECK(at_zero == 3);
    free(r.recs);
}

/* A class bucket that admits 2 requests (burst 2, refill 1 per 1000 s):
 * 2 clients send 20 requests; the first two are served, the other 18 are
 * shed at the door, each counted and followed by the client's next request
 * after its 0.1 s think time. */
static void test_shed_closed(void)
{
    sim_scenario sc;
    run_result r;
    base(&sc, 256, 256, 16);
    sim_class_cfg *cl = &sc.workload.classes[1];
    closed(cl, 2, 0.1);
    cl->requests = 20;
    cl->admission.rate = 0.001;
    cl->admission.burst = 2;
    sc.workload.classes[0].requests = 1;
    sc.workload.classes[0].arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.classes[0].arrival.rate = 1;
    REQUIRE(run(&sc, &r) == 0);
    const sim_class_summary *ci = &r.sum.classes[1];
    CHECK_MSG(ci->requests_completed == 2 && ci->requests_shed == 18, "completed %lld shed %lld",
              (long long)ci->requests_completed, (long long)ci->requests_shed);
    CHECK(r.sum.requests_shed == 18 && r.sum.classes[0].requests_completed == 1);
    free(r.recs);
}

/* The shipped example: --json carries a `classes` object with both
 * classes' usual figures, and the same seed gives byte-identical output. */
static void test_shipped_json(void)
{
    REQUIRE_OR(test_servesim != NULL, return);
    char cmd[4096];
    char *a = NULL, *b = NULL;
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/slo-classes-closed.yaml --no-db --json 2>/dev/null", test_servesim,
             test_src_dir());
    REQUIRE(test_sh(cmd, &a) == 0);
    REQUIRE(test_sh(cmd, &b) == 0);
    REQUIRE(a && b);
    test_strip_wall(a);
    test_strip_wall(b);
    CHECK(strcmp(a, b) == 0);
    CHECK_CONTAINS(a, "\"classes\": {\n    \"chat\": {\"priority\": 0, \"slo\": {\"ttft_ms\": 300, \"tpot_ms\": 40,");
    CHECK_CONTAINS(a, "\"batch\": {\"priority\": 1, \"slo\": {\"ttft_ms\": 0, \"tpot_ms\": 0, \"e2e_ms\": 60000}");
    static const char *keys[] = {"\"requests_completed\": ", "\"requests_good\": ", "\"requests_shed\": 0",
                                 "\"ttft_ms\": {", "\"tpot_ms\": {", "\"e2e_ms\": {", "\"queue_ms\": {",
                                 "\"goodput_req_per_s\": ", "\"slo_attainment\": ", "\"output_tokens_per_s\": "};
    const char *chat = a ? strstr(a, "\"chat\": {") : NULL;
    REQUIRE(chat != NULL);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) CHECK_CONTAINS(chat, keys[k]);
    free(a);
    free(b);
}

/* servesim search on the shipped example: closed-loop classes bound its
 * length statistics (a class sending for duration_s is drawn at t = 0) and
 * each candidate runs the classes' own clients; the notes say so. */
static void test_search(void)
{
    REQUIRE_OR(test_servesim != NULL, return);
    char cmd[4096], dir[] = "/tmp/test_slo_closed_XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd,
             "%s search %s/scenarios/slo-classes-closed.yaml --set search.max_gpus=2 --set search.modes=colocated "
             "--set search.layouts=tp1 --set search.max_seqs=24 --set search.max_batched_tokens=8192 --no-db --quiet "
             "--out %s 2>&1",
             test_servesim, test_src_dir(), dir);
    char *out = NULL;
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "2 simulated");
    CHECK_CONTAINS(out, "Closed-loop classes send at their own concurrency and think time.");
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(test_sh(cmd, NULL) == 0);
}

static const test_case cases[] = {
    {"search", test_search},
    {"priority_little", test_priority_little},
    {"mixed_budget", test_mixed_budget},
    {"shed_closed", test_shed_closed},
    {"shipped_json", test_shipped_json},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_slo_classes_closed", cases);
}
