/* test_search_spec — speculative decoding as a search dimension
 * (search.draft_tokens).
 *
 * The cases are built on Llama-3.1-8B at tp1 on an H100 priced by the
 * roofline, where one request's decode step takes 7.5 ms. Under a TPOT
 * bound of 5 ms no deployment without drafts can meet the SLO (every TPOT
 * is at least that step), while the model's MTP module drafting k tokens
 * accepted at 0.9 each yields E = 1 + 0.9 + ... + 0.9^k tokens a step
 * (1.9, 2.71, 3.439 for k = 1, 2, 3) for a step only a little longer, so
 * every k >= 1 meets it: the search's answer exists only with speculation.
 *
 * The bound's TPOT of a speculating candidate is its one-request step (the
 * target verifying 1 + k tokens plus the draft's k passes, as the instance
 * prices it) over E, checked against that closed form computed here from
 * the cost model: a bound just below it is refused analytically, one just
 * above is not. The recommended scenario replays the winner with its draft
 * tokens exactly; a PD candidate speculates in its decode pool only, with
 * a per-position acceptance list cut to its k. Bad lists and incomplete
 * speculative settings are refused naming the key. */
#include "test_util.h"
#include "test_search_util.h"

#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_pool_layout.h"
#include "sim_search.h"
#include "sim_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base_yaml =
    "name: t-search-spec\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8, perf_db: none}\n"
    "workload:\n"
    "  requests: 60\n"
    "  arrival: {process: poisson, rate: 1}\n"
    "  input_tokens: {dist: fixed, value: 300}\n"
    "  output_tokens: {dist: uniform, min: 32, max: 64}\n"
    "deployment:\n"
    "  mode: colocated\n"
    "  pools:\n"
    "    - role: colocated\n"
    "      instances: 1\n"
    "      scheduler:\n"
    "        speculative: {method: mtp, acceptance: 0.9}\n"
    "slo: {ttft_ms: 1000, tpot_ms: 5}\n"
    "search:\n"
    "  max_gpus: 1\n"
    "  rate: 1\n"
    "  modes: colocated\n"
    "  layouts: tp1\n"
    "  max_seqs: \"16\"\n"
    "  max_batched_tokens: \"2048\"\n"
    "  chunk_tokens: \"1024\"\n"
    "  draft_tokens: \"0,1,2,3\"\n"
    "  requests: 60\n";

static int load(const char *const *sets, int n, sim_scenario *sc, sim_err *err)
{
    return sim_loader_load_string(base_yaml, strlen(base_yaml), "test", sets, n, sc, err);
}

/* Creates and runs the search of base_yaml with sets; NULL on failure. */
static sim_search *search_of(const char *const *sets, int n)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    REQUIRE_OR(sc, return NULL);
    int rc = load(sets, n, sc, &err);
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    sim_search_opts o = {.threads = 2, .quiet = 1, .no_prune = 1};
    if (rc == 0) rc = sim_search_create(sc, &o, &s, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc == 0) rc = sim_search_run(s, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    free(sc);
    if (rc) {
        sim_search_destroy(s);
        return NULL;
    }
    return s;
}

static int32_t winner(const sim_search *s)
{
    int32_t w = -1;
    return sim_search_ranking(s, &w, 1) > 0 ? w : -1;
}

/* Without drafts nothing meets the 5 ms TPOT bound; with them every k does. */
static void case_winner_needs_drafts(void)
{
    const char *none[] = {"search.draft_tokens=0"};
    sim_search *s = search_of(none, 1);
    REQUIRE(s);
    CHECK(sim_search_count(s) == 1);
    CHECK(winner(s) < 0);
    const sim_search_result *r0 = sim_search_result_get(s, 0);
    CHECK_MSG(r0->status == SIM_CAND_SLO_MISSED && strstr(r0->reason, "one request's decode step takes 7.5 ms > TPOT "
                                                                        "bound 5.0 ms"),
              "%s", r0->reason);
    sim_search_destroy(s);

    s = search_of(NULL, 0);
    REQUIRE(s);
    CHECK(sim_search_count(s) == 4);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        const sim_search_result *r = sim_search_result_get(s, i);
        CHECK(c->draft_tokens == i);
        char lab[32];
        snprintf(lab, sizeof lab, "| draft %d", (int)i);
        CHECK_CONTAINS(c->label, lab);
        CHECK_MSG((r->status == SIM_CAND_OK) == (i > 0), "%s: status %d (%s)", c->label, (int)r->status, r->reason);
        if (r->status == SIM_CAND_OK) CHECK_MSG(r->tpot_ms <= 5.0, "%s: TPOT %.2f ms", c->label, r->tpot_ms);
    }
    int32_t w = winner(s);
    REQUIRE(w >= 0);
    CHECK(sim_search_cand_get(s, w)->draft_tokens >= 1);
    printf("  winner %s: TPOT p90 %.2f ms\n", sim_search_cand_get(s, w)->label, sim_search_result_get(s, w)->tpot_ms);
    sim_search_destroy(s);
}

/* The one-request step of the search's candidate with k drafts, priced as
 * the instance prices it, and E; 0 on failure. */
static double spec_step_s(int32_t k, double *E)
{
    char set[64];
    snprintf(set, sizeof set, "search.draft_tokens=%d", (int)k);
    const char *sets[] = {set};
    sim_scenario *sc = malloc(sizeof *sc), *run = malloc(sizeof *run);
    sim_err err = {{0}};
    sim_search *s = NULL;
    double t = 0;
    model_spec m;
    model_gpu g;
    model_layout l;
    model_cost *cost = NULL, *draft = NULL;
    sim_spec *sp = NULL;
    sim_search_opts o = {.threads = 1, .quiet = 1};
    if (sc && run && load(sets, 1, sc, &err) == 0 && sim_search_create(sc, &o, &s, &err) == 0 &&
        sim_search_apply(s, 0, 1, 0, run, &err) == 0 && model_catalog_model(run->model, &m, &err) == 0 &&
        model_catalog_gpu(run->hardware.gpu, &g, &err) == 0 &&
        sim_pool_layout(run, &run->deployment.pools[0], &l, &err) == 0 && model_cost_create(&m, &g, &l, &cost, &err) == 0 &&
        sim_spec_draft_cost(&run->deployment.pools[0].scheduler.spec, &m, &g, &l, &draft, &err) == 0 &&
        sim_spec_create(&run->deployment.pools[0].scheduler.spec, draft, 0, 0, &sp, &err) == 0) {
        /* One request decoding at the shortest prompt's context. */
        model_batch b = {.n_decode = 1, .decode_ctx_sum = 300};
        t = model_cost_verify_iteration(cost, &b, 1 + k, NULL) + sim_spec_draft_s(sp, &b);
        *E = sim_spec_expected_tokens(&run->deployment.pools[0].scheduler.spec);
    }
    CHECK_MSG(t > 0, "%s", err.msg);
    sim_spec_destroy(sp);
    model_cost_destroy(draft);
    model_cost_destroy(cost);
    sim_search_destroy(s);
    free(sc);
    free(run);
    return t;
}

/* The bound's TPOT with k drafts: the step over E = Σ 0.9^i, i = 0..k. */
static void case_bound_tpot_closed_form(void)
{
    double E2 = 0, E3 = 0;
    double t2 = spec_step_s(2, &E2), t3 = spec_step_s(3, &E3);
    REQUIRE(t2 > 0 && t3 > 0);
    CHECK_NEAR(E2, 1 + 0.9 + 0.81, 1e-12);
    CHECK_NEAR(E3, 1 + 0.9 + 0.81 + 0.729, 1e-12);
    /* More drafts: a longer step (3 more verify tokens cost little, one more draft pass) but more tokens. */
    CHECK(t3 > t2);
    CHECK(t3 / E3 < t2 / E2);
    printf("  one request's step: k=2 %.3f ms / %.2f = %.3f ms a token; k=3 %.3f ms / %.3f = %.3f ms\n", t2 * 1e3, E2,
           t2 / E2 * 1e3, t3 * 1e3, E3, t3 / E3 * 1e3);
    const double tpot_ms = t2 / E2 * 1e3;
    for (int side = 0; side < 2; side++) {
        char slo[64];
        snprintf(slo, sizeof slo, "slo.tpot_ms=%.9f", tpot_ms * (side ? 1.001 : 0.999));
        const char *sets[] = {"search.draft_tokens=2", slo, "search.rate=0.2"};
        sim_search *s = search_of(sets, 3);
        REQUIRE(s);
        const sim_search_result *r = sim_search_result_get(s, 0);
        int refused = r->status == SIM_CAND_SLO_MISSED && strncmp(r->reason, "SLO unreachable", 15) == 0;
        CHECK_MSG(refused == !side, "TPOT bound %s: status %d (%s)", slo, (int)r->status, r->reason);
        if (!side) {
            char want[160];
            snprintf(want, sizeof want, "one request's speculative decode step takes %.1f ms for 2.71 expected tokens: "
                     "%.2f ms a token", t2 * 1e3, tpot_ms);
            CHECK_CONTAINS(r->reason, want);
        }
        sim_search_destroy(s);
    }
}

/* The recommended scenario carries the draft tokens and replays the search. */
static void case_replay(void)
{
    sim_search *s = search_of(NULL, 0);
    REQUIRE(s);
    int32_t w = winner(s);
    REQUIRE(w >= 0);
    const sim_search_result *r = sim_search_result_get(s, w);
    int32_t k = sim_search_cand_get(s, w)->draft_tokens;
    sim_scenario *back = malloc(sizeof *back);
    REQUIRE(back);
    sim_summary sum;
    CHECK(test_search_replay(s, w, back, &sum) == 0);
    CHECK(back->deployment.pools[0].scheduler.spec.draft_tokens == k);
    CHECK_NEAR(back->deployment.pools[0].scheduler.spec.acceptance.v[0], 0.9, 0);
    CHECK_NEAR(sum.ttft_ms.p90, r->ttft_ms, 1e-9 * r->ttft_ms);
    CHECK_NEAR(sum.tpot_ms.p90, r->tpot_ms, 1e-9 * r->tpot_ms);
    free(back);
    sim_search_destroy(s);
}

/* PD: the decode pool speculates, the prefill pool keeps the scenario's
 * (off); a per-position list is cut to the candidate's k. */
static void case_pd_decode_pool_only(void)
{
    const char *sets[] = {"search.modes=pd",
                          "search.max_gpus=2",
                          "search.pd_ratios=1:1",
                          "search.draft_tokens=0,2",
                          "deployment.pools.0.scheduler.speculative.acceptance=[0.9, 0.8, 0.7]"};
    sim_scenario *sc = malloc(sizeof *sc), *run = malloc(sizeof *run);
    REQUIRE(sc && run);
    sim_err err = {{0}};
    sim_search *s = NULL;
    CHECK_MSG(load(sets, 5, sc, &err) == 0, "%s", err.msg);
    sim_search_opts o = {.threads = 1, .quiet = 1};
    CHECK_MSG(sim_search_create(sc, &o, &s, &err) == 0, "%s", err.msg);
    REQUIRE(s);
    CHECK(sim_search_count(s) == 2);
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        CHECK(sim_search_apply(s, i, 1, 0, run, &err) == 0);
        CHECK(run->deployment.pools[0].role == SIM_ROLE_PREFILL && run->deployment.pools[1].role == SIM_ROLE_DECODE);
        CHECK(run->deployment.pools[0].scheduler.spec.draft_tokens == 0);
        CHECK(run->deployment.pools[1].scheduler.spec.draft_tokens == c->draft_tokens);
        if (c->draft_tokens == 2) CHECK(run->deployment.pools[1].scheduler.spec.acceptance.n == 2);
    }
    sim_search_destroy(s);
    free(sc);
    free(run);
}

/* Refused at load or search creation with `want` in the message; yaml NULL: base_yaml. */
static void refused_yaml(const char *yaml, const char *const *sets, int n, const char *want)
{
    test_search_refused(yaml ? yaml : base_yaml, sets, n, want);
}

static void refused(const char *const *sets, int n, const char *want) { refused_yaml(NULL, sets, n, want); }

static void case_refusals(void)
{
    const char *range[] = {"search.draft_tokens=0,9"};
    refused(range, 1, "search.draft_tokens: '9' is not an integer from 0 to 8");
    const char *twice[] = {"search.draft_tokens=1,2,1"};
    refused(twice, 1, "search.draft_tokens: 1 listed twice");
    const char *empty[] = {"search.draft_tokens=' , '"};
    refused(empty, 1, "search.draft_tokens: expected a comma-separated list");
    /* The scenario's pool without speculative settings. */
    char plain[2048];
    const char *cut = strstr(base_yaml, "      scheduler:\n        speculative:");
    REQUIRE(cut);
    snprintf(plain, sizeof plain, "%.*s%s", (int)(cut - base_yaml), base_yaml, strstr(cut, "slo:"));
    refused_yaml(plain, NULL, 0, "deployment.pools.0.scheduler.speculative.acceptance: required by search.draft_tokens");
    const char *short_list[] = {"deployment.pools.0.scheduler.speculative.acceptance=[0.9, 0.8]"};
    refused(short_list, 1, "deployment.pools.0.scheduler.speculative.acceptance: 2 rates, but search.draft_tokens asks "
                           "for 3 draft tokens");
    const char *nodraft[] = {"deployment.pools.0.scheduler.speculative.method=draft"};
    refused(nodraft, 1, "deployment.pools.0.scheduler.speculative.draft_model: method draft needs the draft model");
    const char *pp_only[] = {"search.layouts=tp1pp2", "search.max_gpus=2", "search.draft_tokens=1,2"};
    refused(pp_only, 3, "search.draft_tokens: no candidate searched can speculate");
    /* With 0 in the list the pipeline-parallel candidates stay, without drafts, and a note says so. */
    const char *pp_zero[] = {"search.layouts=tp1,tp1pp2", "search.max_gpus=2", "search.draft_tokens=0,1"};
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    CHECK(load(pp_zero, 3, sc, &err) == 0);
    sim_search_opts o = {.threads = 1, .quiet = 1};
    CHECK_MSG(sim_search_create(sc, &o, &s, &err) == 0, "%s", err.msg);
    if (s) {
        int pp_spec = 0, pp_plain = 0;
        for (int32_t i = 0; i < sim_search_count(s); i++) {
            const sim_search_cand *c = sim_search_cand_get(s, i);
            if (c->pools[0].pp > 1) {
                pp_spec += c->draft_tokens > 0;
                pp_plain += c->draft_tokens == 0;
            }
        }
        CHECK(pp_spec == 0 && pp_plain > 0);
        sim_search_stats st;
        sim_search_stats_get(s, &st);
        CHECK_CONTAINS(st.notes, "search.draft_tokens:");
    }
    sim_search_destroy(s);
    free(sc);
}

static const test_case cases[] = {
    {"winner_needs_drafts", case_winner_needs_drafts},
    {"bound_tpot_closed_form", case_bound_tpot_closed_form},
    {"replay", case_replay},
    {"pd_decode_pool_only", case_pd_decode_pool_only},
    {"refusals", case_refusals},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_spec", cases);
}
