/* test_search_autoscale — autoscaling as a search dimension
 * (search.autoscale).
 *
 * The space: each fleet size enumerated fixed and autoscaled, the policy's
 * min and starting instances carried over in GPUs (by hand: a policy of
 * min 2 and start 3 one-GPU instances gives a TP2 fleet of 2 min 1 and
 * start 2, and none to a TP4 instance alone), the autoscaled variant left
 * out where no pool could change size, and the candidate's scenario
 * holding the policy with max = its instance count.
 *
 * The run, on a step in the rate (2 -> 16 -> 2 req/s over 500 s) with a
 * concurrency policy of 1..max one-GPU instances: every candidate runs the
 * scenario's own arrivals once; a fixed fleet holds its GPUs over the
 * whole run (GPU-hours = GPUs x the run's end), an autoscaled one what its
 * autoscaler held; the score is the SLO-meeting goodput per GPU held,
 * computed here by hand from the probe; the pruning bound (the fleet at
 * max over the GPUs at every pool's min) stays above every score; fixed
 * and autoscaled fleets of one size rank as two deployments; at p90 an
 * autoscaled fleet wins with fewer GPU-hours than any fixed fleet meeting
 * the SLO, at p99 (its cold starts put requests in the tail) a fixed one
 * does; the recommended scenario replays the winner exactly. Refusals name
 * their key. The shipped scenario runs from the command line. */
#include "test_util.h"
#include "test_search_util.h"

#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_yaml =
    "name: t-search-autoscale\n"
    "seed: 7\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8, perf_db: none}\n"
    "workload:\n"
    "  requests: 0\n"
    "  duration_s: 500\n"
    "  arrival: {process: schedule, schedule: \"0:2, 100:16, 300:2\"}\n"
    "  input_tokens: {dist: fixed, value: 512}\n"
    "  output_tokens: {dist: uniform, min: 64, max: 192}\n"
    "deployment:\n"
    "  mode: colocated\n"
    "  pools:\n"
    "    - role: colocated\n"
    "      instances: 1\n"
    "      scheduler: {max_seqs: 16, max_batched_tokens: 4096, chunk_tokens: 2048}\n"
    "      autoscale: {enabled: true, min: 1, max: 4, metric: concurrency, up_threshold: 0.5, down_threshold: 0.2,\n"
    "                  interval_s: 5, window_s: 10, lag_s: 5, cooldown_s: 10, startup_s: 5}\n"
    "routing: {policy: least_loaded}\n"
    "slo: {ttft_ms: 2000, tpot_ms: 50}\n"
    "search:\n"
    "  max_gpus: 4\n"
    "  modes: colocated\n"
    "  layouts: \"tp1,tp2\"\n"
    "  max_seqs: \"16\"\n"
    "  max_batched_tokens: \"4096\"\n"
    "  chunk_tokens: \"2048\"\n";

static sim_search *create_of(const char *const *sets, int n)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    REQUIRE_OR(sc, return NULL);
    int rc = sim_loader_load_string(base_yaml, strlen(base_yaml), "test", sets, n, sc, &err);
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    sim_search_opts o = {.threads = 2, .quiet = 1, .no_prune = 1};
    if (rc == 0) rc = sim_search_create(sc, &o, &s, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    free(sc);
    return rc == 0 ? s : NULL;
}

static sim_search *search_of(const char *const *sets, int n)
{
    sim_search *s = create_of(sets, n);
    if (!s) return NULL;
    sim_err err = {{0}};
    int rc = sim_search_run(s, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    if (rc) {
        sim_search_destroy(s);
        return NULL;
    }
    return s;
}

static int32_t find(const sim_search *s, const char *label)
{
    for (int32_t i = 0; i < sim_search_count(s); i++)
        if (strcmp(sim_search_cand_get(s, i)->label, label) == 0) return i;
    return -1;
}

/* The policy carried over in GPUs: min 2 and start 3 one-GPU instances. */
static void case_space(void)
{
    const char *sets[] = {"deployment.pools.0.instances=3", "deployment.pools.0.autoscale.min=2",
                          "search.layouts=tp1,tp2,tp4"};
    sim_search *s = create_of(sets, 3);
    REQUIRE(s);
    /* tp1 x1..4 fixed (4) and x3, x4 autoscaled (x1, x2: min 2 leaves no room); tp2 x1, x2 fixed and x2
     * autoscaled (min ceil(2/2) = 1; x1: 1 = its count); tp4 x1 fixed (min 1 = its count): 4 + 2 + 2 + 1 + 1 =
     * 10, and 2 + 1 + 1 autoscaled variants left out. */
    CHECK_MSG(sim_search_count(s) == 10, "%d candidates", (int)sim_search_count(s));
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    CHECK(st.autoscale == 1);
    CHECK_CONTAINS(st.notes, "4 autoscaled variants not enumerated");
    static const struct {
        const char *label;
        int autoscale, min, start, max;
    } want[] = {
        {"colocated 2..3x tp1 | seqs 16 mbt 4096 chunk 2048", 1, 2, 3, 3},
        {"colocated 2..4x tp1 | seqs 16 mbt 4096 chunk 2048", 1, 2, 3, 4},
        {"colocated 1..2x tp2 | seqs 16 mbt 4096 chunk 2048", 1, 1, 2, 2},
        {"colocated 2x tp1 | seqs 16 mbt 4096 chunk 2048", 0, 0, 2, 0},
        {"colocated 1x tp4 | seqs 16 mbt 4096 chunk 2048", 0, 0, 1, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int32_t i = find(s, want[k].label);
        REQUIRE_MSG(i >= 0, "no candidate '%s'", want[k].label);
        const sim_search_cand *c = sim_search_cand_get(s, i);
        CHECK(c->autoscale == want[k].autoscale);
        sim_scenario *sc = malloc(sizeof *sc);
        REQUIRE(sc);
        sim_err err = {{0}};
        REQUIRE_MSG(sim_search_apply(s, i, 0, 0, sc, &err) == 0, "%s", err.msg);
        const sim_pool_cfg *pc = &sc->deployment.pools[0];
        CHECK_MSG(pc->autoscale.enabled == want[k].autoscale && pc->instances == want[k].start, "%s: enabled %d start %d",
                  want[k].label, (int)pc->autoscale.enabled, (int)pc->instances);
        if (want[k].autoscale)
            CHECK_MSG(pc->autoscale.min == want[k].min && pc->autoscale.max == want[k].max, "%s: %d..%d", want[k].label,
                      (int)pc->autoscale.min, (int)pc->autoscale.max);
        /* The scenario's own arrivals and duration, not the search's request count. */
        CHECK(sc->workload.requests == 0 && sc->workload.duration_s == 500);
        CHECK(sc->overload.max_queue_delay_s == 120);
        free(sc);
    }
    sim_search_destroy(s);
}

/* Scores by hand from each probe, the bound above them, and the answer. */
static void case_run(void)
{
    sim_search *s = search_of(NULL, 0);
    REQUIRE(s);
    int fixed_ok = 0, scaled_ok = 0;
    double best_fixed_gh = INFINITY;
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_cand *c = sim_search_cand_get(s, i);
        const sim_search_result *r = sim_search_result_get(s, i);
        REQUIRE(r->status == SIM_CAND_OK || r->status == SIM_CAND_SLO_MISSED);
        REQUIRE_MSG(r->n_probes == 1, "%s: %d probes (one run at the scenario's arrivals)", c->label,
                    (int)r->n_probes);
        if (r->status != SIM_CAND_OK) continue;
        const sim_summary *sum = &r->probes[r->best_probe].sum;
        CHECK(sum->end_s > 0 && sum->end_s >= sum->sim_time_s);
        double gh, held;
        if (c->autoscale == 1) {
            scaled_ok++;
            REQUIRE(sum->autoscale.enabled);
            gh = sum->autoscale.gpu_hours;
            CHECK(fabs(sum->autoscale.span_s - sum->end_s) < 1e-9);
            held = sum->autoscale.pools[0].mean_instances * c->pools[0].gpus;
            /* Never fewer than its min (1 instance) nor more than its max. */
            CHECK(held >= c->pools[0].gpus - 1e-9 && held <= c->gpus + 1e-9);
        } else {
            fixed_ok++;
            CHECK(!sum->autoscale.enabled);
            gh = c->gpus * sum->end_s / 3600;
            held = c->gpus;
            if (gh < best_fixed_gh) best_fixed_gh = gh;
        }
        CHECK_MSG(fabs(r->gpu_hours - gh) < 1e-12 * gh && fabs(r->gpus_held - held) < 1e-9 * held,
                  "%s: %.9g GPU-h held %.9g, by hand %.9g, %.9g", c->label, r->gpu_hours, r->gpus_held, gh, held);
        CHECK(r->requests_missed == sum->requests_completed - sum->requests_good);
        /* Goodput per GPU held: SLO-meeting req/s (never above the bound) x mean output / GPUs held. */
        double good = sum->goodput_req_per_s < r->bound_rate ? sum->goodput_req_per_s : r->bound_rate;
        double g = good * r->mean_output / held;
        CHECK_MSG(fabs(r->goodput_per_gpu - g) < 1e-9 * g, "%s: %.9g, by hand %.9g", c->label, r->goodput_per_gpu, g);
        CHECK_MSG(r->score <= r->bound_score * (1 + 1e-12), "%s: score %.6g above its bound %.6g", c->label, r->score,
                  r->bound_score);
    }
    CHECK(fixed_ok >= 2 && scaled_ok >= 2);
    /* Fixed and autoscaled fleets of one size rank as two deployments. */
    int32_t top[16];
    int32_t n = sim_search_ranking_distinct(s, top, NULL, 16);
    CHECK(n == fixed_ok + scaled_ok);
    const sim_search_cand *w = sim_search_cand_get(s, top[0]);
    const sim_search_result *rw = sim_search_result_get(s, top[0]);
    CHECK_MSG(w->autoscale == 1 && strcmp(w->label, "colocated 1..2x tp1 | seqs 16 mbt 4096 chunk 2048") == 0,
              "winner %s", w->label);
    CHECK_MSG(rw->gpu_hours < best_fixed_gh && rw->gpus_held < w->gpus, "%.4f GPU-h against %.4f fixed",
              rw->gpu_hours, best_fixed_gh);
    /* The recommended scenario replays it: the same GPU-hours and requests within the SLO. */
    sim_scenario *back = malloc(sizeof *back);
    sim_summary *sum = malloc(sizeof *sum);
    REQUIRE(back && sum);
    if (test_search_replay(s, top[0], back, sum) == 0) {
        CHECK(back->deployment.pools[0].autoscale.enabled && back->deployment.pools[0].autoscale.max == 2);
        CHECK(sum->autoscale.gpu_hours == rw->gpu_hours);
        CHECK(sum->requests_good == rw->probes[rw->best_probe].sum.requests_good);
    }
    free(back);
    free(sum);
    /* search.json and candidates.csv carry the held GPUs. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f);
    CHECK(sim_search_write_csv(s, f) == 0);
    CHECK(sim_search_write_json(s, f) == 0);
    fclose(f);
    CHECK_CONTAINS(buf, ",autoscale,gpus_held,gpu_hours,requests_missed\n");
    CHECK_CONTAINS(buf, "\"autoscale_min\": 1");
    CHECK_CONTAINS(buf, "\"gpus_held\": ");
    free(buf);
    sim_search_destroy(s);

    /* At p99 the requests queued through the cold starts decide: a fixed fleet wins. */
    const char *p99[] = {"search.percentile=99"};
    s = search_of(p99, 1);
    REQUIRE(s);
    n = sim_search_ranking_distinct(s, top, NULL, 16);
    REQUIRE(n > 0);
    CHECK_MSG(sim_search_cand_get(s, top[0])->autoscale == 0, "p99 winner %s", sim_search_cand_get(s, top[0])->label);
    sim_search_destroy(s);
}

/* search.autoscale off on the same schedule: fixed fleets only, still at the schedule. */
static void case_off(void)
{
    const char *sets[] = {"search.autoscale=off", "deployment.pools.0.autoscale.enabled=false"};
    sim_search *s = create_of(sets, 2);
    REQUIRE(s);
    CHECK(sim_search_count(s) == 6);
    for (int32_t i = 0; i < sim_search_count(s); i++) CHECK(sim_search_cand_get(s, i)->autoscale == 0);
    sim_search_destroy(s);
}

static void case_refused(void)
{
    const char *rate[] = {"search.rate=5"};
    test_search_refused(base_yaml, rate, 1, "search.rate: with autoscaling in the search");
    const char *energy[] = {"search.objective=energy"};
    test_search_refused(base_yaml, energy, 1, "search.objective: energy is not modelled with autoscaling");
    const char *nopol[] = {"search.autoscale=on", "deployment.pools.0.autoscale.enabled=false"};
    test_search_refused(base_yaml, nopol, 2, "search.autoscale: on needs a policy");
    const char *bad[] = {"search.autoscale=sometimes"};
    test_search_refused(base_yaml, bad, 1, "search.autoscale: unknown value 'sometimes'");
    const char *twice[] = {"search.autoscale=on,on"};
    test_search_refused(base_yaml, twice, 1, "search.autoscale: 'on' listed twice");
    const char *sched[] = {"deployment.pools.0.autoscale.enabled=false"};
    test_search_refused(base_yaml, sched, 1, "or set search.autoscale (off for fixed fleets)");
}

/* scenarios/search-autoscale-llama8b.yaml as the README shows it. */
static void case_shipped(void)
{
    REQUIRE_OR(test_servesim != NULL, return);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s search %s/scenarios/search-autoscale-llama8b.yaml --no-db --quiet 2>&1",
             test_servesim, test_src_dir());
    char *out = NULL;
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "evaluated at the scenario's own arrivals");
    CHECK_CONTAINS(out, "GPUs held over the run");
    CHECK_CONTAINS(out, "recommended: colocated 2..3x tp1 | seqs 64 mbt 8192 chunk 2048");
    free(out);
}

static const test_case cases[] = {
    {"space", case_space},
    {"run", case_run},
    {"off", case_off},
    {"refused", case_refused},
    {"shipped", case_shipped},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_autoscale", cases);
}
