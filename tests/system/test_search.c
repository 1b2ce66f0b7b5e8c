/* test_search — deployment search: the winner equals a brute-force
 * enumeration done here with the simulator alone; bound pruning never drops
 * the brute-force optimum (nor changes the top-k); thread counts give the
 * same answer; the recommended scenario loads and replays the search's
 * numbers under `servesim run`; bad search blocks fail with a reason. */
#include "test_util.h"

#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"
#include "sim_cli_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base_yaml =
    "name: t-search\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
    "workload:\n"
    "  requests: 200\n"
    "  arrival: {process: poisson, rate: 30}\n"
    "  input_tokens: {dist: uniform, min: 256, max: 1024}\n"
    "  output_tokens: {dist: uniform, min: 32, max: 128}\n"
    "slo: {ttft_ms: 300, tpot_ms: 15}\n"
    "search:\n"
    "  max_gpus: 4\n"
    "  modes: colocated\n"
    "  layouts: \"tp1,tp2\"\n"
    "  max_seqs: \"16,64\"\n"
    "  max_batched_tokens: \"4096\"\n"
    "  chunk_tokens: \"1024\"\n"
    "  requests: 200\n";

static int load(const char *const *sets, int n, sim_scenario *sc)
{
    sim_err err = {{0}};
    int rc = sim_loader_load_string(base_yaml, strlen(base_yaml), "test", sets, n, sc, &err);
    if (rc < 0) fprintf(stderr, "load: %s\n", err.msg);
    return rc;
}

static double p90(const sim_stat *s) { return s->p90; }

/* What a report function writes, as a string (free it). */
enum { OUT_TABLES, OUT_CSV, OUT_JSON };
static char *report_text(const sim_search *s, int which)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (which == OUT_TABLES) sim_search_print_tables(s, f);
    else if (which == OUT_CSV) CHECK(sim_search_write_csv(s, f) == 0);
    else CHECK(sim_search_write_json(s, f) == 0);
    fclose(f);
    return buf;
}

/* The top list ranks distinct deployments (mode + layout + instances), each
 * by its best scheduler variant; the variants stay in candidates.csv, whose
 * header explains the score units. */
static void check_distinct(const sim_search *s)
{
    int32_t all[64], top[64], var[64];
    int32_t n = sim_search_ranking(s, all, 64), d = sim_search_ranking_distinct(s, top, var, 64);
    CHECK(d > 0 && d <= n);
    int32_t sum = 0;
    for (int32_t a = 0; a < d; a++) {
        sum += var[a];
        for (int32_t b = 0; b < a; b++) CHECK(!sim_search_same_deployment(s, top[a], top[b]));
        /* the head is the best-ranked candidate of its deployment */
        for (int32_t q = 0; q < n && all[q] != top[a]; q++) CHECK(!sim_search_same_deployment(s, all[q], top[a]));
    }
    CHECK(sum == n);
    CHECK_MSG(d < n, "the test space has scheduler variants meeting the SLO (%d ranked, %d deployments)", (int)n, (int)d);
    char *buf = report_text(s, OUT_TABLES);
    CHECK_CONTAINS(buf, "distinct deployments meeting the SLO");
    CHECK_CONTAINS(buf, "run/GPU");
    /* no two rows of the top list show the same deployment label before '|' */
    const char *t = strstr(buf, "limit / why it ranks lower");
    const char *end = t ? strstr(t, "Pareto frontier") : NULL;
    int rows = 0;
    for (const char *l = t ? strchr(t, '\n') : NULL; l && l < end; l = strchr(l + 1, '\n')) rows += l[1] != '\n' && l[1];
    int32_t k = sim_search_scenario(s)->search.top_k;
    /* the rows, and the line opening the Pareto table */
    CHECK_MSG(rows == (d < k ? d : k) + 1, "%d top rows for %d deployments", rows - 1, (int)d);
    free(buf);
    buf = report_text(s, OUT_CSV);
    CHECK_CONTAINS(buf, "# score (and the numbers in a pruned reason 'bound B < #K's S'): SLO-meeting output tokens/s per GPU");
    CHECK_CONTAINS(buf, "\nid,status,label,");
    int lines = 0;
    for (const char *l = buf; (l = strchr(l, '\n')); l++) lines += l[1] && l[1] != '#';
    CHECK(lines == sim_search_count(s) + 1); /* the header row and one per candidate */
    free(buf);
}

/* Fixed rate: the test enumerates the space itself (same order as the
 * search: layout, instance count, max_seqs), runs each deployment with the
 * simulator and keeps the best SLO-meeting goodput per GPU (ties: fewer
 * GPUs, then enumeration order). The search must pick the same one. */
static void test_brute_force_fixed(void)
{
    static const char *sets[] = {"search.rate=30"};
    sim_scenario *sc = malloc(sizeof *sc), *run = malloc(sizeof *run);
    CHECK(load(sets, 1, sc) == 0);
    sim_err err = {{0}};
    sim_search_opts opts = {.threads = 2};
    sim_search *s = NULL;
    CHECK(sim_search_create(sc, &opts, &s, &err) == 0);
    if (!s) {
        fprintf(stderr, "%s\n", err.msg);
        free(sc);
        free(run);
        return;
    }
    CHECK(sim_search_count(s) == 12); /* tp1 x1..4, tp2 x1..2, two max_seqs each */
    CHECK(sim_search_run(s, &err) == 0);

    static const int tps[] = {1, 2};
    static const int seqs[] = {16, 64};
    double best = -1;
    int best_tp = 0, best_n = 0, best_seqs = 0, best_g = 0, n_ok = 0;
    for (int a = 0; a < 2; a++)
        for (int n = 1; n * tps[a] <= 4; n++)
            for (int q = 0; q < 2; q++) {
                char s1[64], s2[64], s3[64];
                snprintf(s1, sizeof s1, "deployment.pools.0.parallel.tp=%d", tps[a]);
                snprintf(s2, sizeof s2, "deployment.pools.0.instances=%d", n);
                snprintf(s3, sizeof s3, "deployment.pools.0.scheduler.max_seqs=%d", seqs[q]);
                const char *rs[] = {s1, s2, s3, "deployment.pools.0.scheduler.max_batched_tokens=4096",
                                    "deployment.pools.0.scheduler.chunk_tokens=1024"};
                CHECK(load(rs, 5, run) == 0);
                run->overload.max_queue_delay_s = 10; /* what the search probes use (10x TTFT, >= 10 s) */
                /* The request count per simulation is part of the search's
                 * definition (enough for steady state): take the one it used. */
                int found = 0;
                for (int32_t i = 0; i < sim_search_count(s); i++) {
                    const sim_search_cand *c = sim_search_cand_get(s, i);
                    if (c->pools[0].tp == tps[a] && c->pools[0].instances == n && c->max_seqs == seqs[q]) {
                        run->workload.requests = sim_search_result_get(s, i)->requests;
                        found++;
                    }
                }
                CHECK(found == 1);
                sim_cluster *cl = NULL;
                sim_summary sum;
                CHECK(sim_cluster_create(run, &cl, &err) == 0);
                CHECK(sim_cluster_run(cl, &sum, &err) == 0);
                sim_cluster_destroy(cl);
                int ok = !sum.overloaded && sum.requests_rejected == 0 && p90(&sum.ttft_ms) <= 300 &&
                         p90(&sum.tpot_ms) <= 15;
                if (!ok) continue;
                n_ok++;
                double out_mean = sum.output_tokens_per_s / sum.req_per_s;
                double score = 30.0 * (double)sum.requests_good / (double)sum.requests_completed * out_mean /
                               (tps[a] * n);
                int g = tps[a] * n;
                if (score > best * (1 + 1e-9) || (score >= best * (1 - 1e-9) && g < best_g)) {
                    best = score;
                    best_tp = tps[a], best_n = n, best_seqs = seqs[q], best_g = g;
                }
            }
    CHECK(n_ok > 0 && n_ok < 12); /* the space has SLO failures, so the choice is not trivial */
    int32_t w = -1;
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    CHECK(st.ok == n_ok);
    CHECK(sim_search_ranking(s, &w, 1) == n_ok);
    if (w >= 0) {
        const sim_search_cand *c = sim_search_cand_get(s, w);
        const sim_search_result *r = sim_search_result_get(s, w);
        CHECK_MSG(c->pools[0].tp == best_tp && c->pools[0].instances == best_n && c->max_seqs == best_seqs,
                  "search picked %s, brute force tp%d x%d seqs %d", c->label, best_tp, best_n, best_seqs);
        /* Out-token mean from the summary vs the drawn requests: same requests, tiny rounding only. */
        CHECK_NEAR(r->goodput_per_gpu, best, 1e-6 * best);
    }
    check_distinct(s);
    sim_search_destroy(s);
    free(sc);
    free(run);
}

/* Max-rate search with and without pruning: same winner, same top-k, and
 * every pruned candidate's brute-force score below the k-th best. */
static void test_pruning_exact(void)
{
    static const char *sets[] = {"search.max_gpus=8", "search.layouts=tp1,tp2,tp4", "search.max_seqs=16,64,256",
                                 "search.top_k=2", "search.modes=colocated,pd", "search.pd_ratios=1:1,1:3"};
    sim_scenario *sc = malloc(sizeof *sc);
    CHECK(load(sets, 6, sc) == 0);
    sim_err err = {{0}};
    sim_search *a = NULL, *b = NULL;
    sim_search_opts po = {.threads = 2}, bo = {.threads = 3, .no_prune = 1};
    CHECK(sim_search_create(sc, &po, &a, &err) == 0);
    CHECK(sim_search_create(sc, &bo, &b, &err) == 0);
    if (!a || !b) {
        fprintf(stderr, "%s\n", err.msg);
        goto out;
    }
    CHECK(sim_search_run(a, &err) == 0);
    CHECK(sim_search_run(b, &err) == 0);
    sim_search_stats sa, sb;
    sim_search_stats_get(a, &sa);
    sim_search_stats_get(b, &sb);
    CHECK_MSG(sa.pruned > 0, "pruning dropped nothing (%lld candidates)", (long long)sa.candidates);
    CHECK(sb.pruned == 0);
    CHECK(sa.evaluated < sb.evaluated);
    int32_t ta[2] = {-1, -1}, tb[2] = {-1, -1};
    int32_t na = sim_search_ranking(a, ta, 2), nb = sim_search_ranking(b, tb, 2);
    CHECK(na >= 2 && nb >= 2);
    CHECK_MSG(ta[0] == tb[0] && ta[1] == tb[1], "top-2 differ: %d,%d vs brute force %d,%d", ta[0], ta[1], tb[0], tb[1]);
    if (ta[0] >= 0 && tb[0] >= 0)
        CHECK(sim_search_result_get(a, ta[0])->score == sim_search_result_get(b, tb[0])->score);
    double kth = tb[1] >= 0 ? sim_search_result_get(b, tb[1])->score : 0;
    for (int32_t i = 0; i < sim_search_count(a); i++) {
        const sim_search_result *ra = sim_search_result_get(a, i), *rb = sim_search_result_get(b, i);
        if (ra->status == SIM_CAND_PRUNED) {
            CHECK_MSG(rb->status != SIM_CAND_OK || rb->score <= kth, "pruned %s scores %g > #2 %g",
                      sim_search_cand_get(a, i)->label, rb->score, kth);
            /* the bound held: the simulated score is below it */
            CHECK(rb->status != SIM_CAND_OK || rb->score < ra->bound_score);
        } else if (ra->status == SIM_CAND_OK) {
            CHECK(ra->score == rb->score); /* evaluation does not depend on what else ran */
            CHECK(ra->score < ra->bound_score);
        }
    }
    /* A PD candidate exists and was bounded. */
    int pd = 0;
    for (int32_t i = 0; i < sim_search_count(a); i++) pd |= sim_search_cand_get(a, i)->mode == SIM_MODE_PD;
    CHECK(pd);
out:
    sim_search_destroy(a);
    sim_search_destroy(b);
    free(sc);
}

/* The recommended scenario is a file `servesim run` accepts and that
 * replays the search's simulation exactly. */
static void test_recommended_yaml(void)
{
    const char *servesim = test_servesim ? test_servesim : "servesim";
    static const char *sets[] = {"search.layouts=tp1,tp2", "search.max_seqs=64"};
    sim_scenario *sc = malloc(sizeof *sc), *back = malloc(sizeof *back);
    CHECK(load(sets, 2, sc) == 0);
    sim_err err = {{0}};
    sim_search *s = NULL;
    sim_search_opts o = {.threads = 2};
    CHECK(sim_search_create(sc, &o, &s, &err) == 0);
    CHECK(s && sim_search_run(s, &err) == 0);
    int32_t w = -1;
    CHECK(s && sim_search_ranking(s, &w, 1) > 0);
    char path[] = "/tmp/test_search_rec_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (w >= 0 && fd >= 0) {
        FILE *f = fdopen(fd, "w");
        CHECK(sim_search_write_yaml(s, w, f, &err) == 0);
        fclose(f);
        CHECK_MSG(sim_loader_load_file(path, NULL, 0, back, &err) == 0, "%s", err.msg);
        CHECK(back->deployment.pools[0].parallel.tp == sim_search_cand_get(s, w)->pools[0].tp);
        sim_cluster *cl = NULL;
        sim_summary sum;
        CHECK(sim_cluster_create(back, &cl, &err) == 0);
        CHECK(cl && sim_cluster_run(cl, &sum, &err) == 0);
        sim_cluster_destroy(cl);
        const sim_search_result *r = sim_search_result_get(s, w);
        CHECK_NEAR(sum.ttft_ms.p90, r->ttft_ms, 1e-9 * r->ttft_ms);
        CHECK_NEAR(sum.tpot_ms.p90, r->tpot_ms, 1e-9 * r->tpot_ms);
        CHECK(sum.ttft_ms.p90 <= 300 && sum.tpot_ms.p90 <= 15);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' run '%s' --no-db --quiet > /dev/null", servesim, path);
        CHECK_MSG(system(cmd) == 0, "%s", cmd);
        unlink(path);
        /* The launch scripts carry the winner's layout and caps (tests/system/test_launch.c checks them in full). */
        char buf[65536] = "";
        FILE *m = fmemopen(buf, sizeof buf - 1, "w");
        CHECK(sim_search_write_launch(s, w, SIM_LAUNCH_VLLM, m, &err) == 0);
        fclose(m);
        const char *text = buf;
        CHECK_CONTAINS(text, "--tensor-parallel-size");
        CHECK_CONTAINS(text, "--max-num-seqs 64");
        memset(buf, 0, sizeof buf);
        m = fmemopen(buf, sizeof buf - 1, "w");
        CHECK(sim_search_write_launch(s, w, SIM_LAUNCH_SGLANG, m, &err) == 0);
        fclose(m);
        CHECK_CONTAINS(text, "sglang.launch_server");
    }
    sim_search_destroy(s);
    free(sc);
    free(back);
}

/* Progress is reported per candidate with the best so far; a stop request
 * (what Ctrl-C sets) ends the search with what was decided: the tables,
 * CSV and JSON say INCOMPLETE and rank the candidates evaluated. */
typedef struct {
    volatile sig_atomic_t stop;
    int64_t calls, waves, last_done, monotonic, best_seen;
} stop_ctx;

static void stop_after_three(void *ctx, const sim_search *s, const sim_search_progress *p)
{
    stop_ctx *c = ctx;
    (void)s;
    c->calls++;
    c->waves += p->wave_end;
    if (p->done < c->last_done) c->monotonic = 0;
    c->last_done = p->done;
    if (p->best >= 0) c->best_seen++;
    if (p->evaluated >= 3) c->stop = 1;
}

static void test_interrupted(void)
{
    static const char *sets[] = {"search.max_gpus=8", "search.layouts=tp1,tp2,tp4", "search.max_seqs=16,64,256"};
    sim_scenario *sc = malloc(sizeof *sc);
    CHECK(load(sets, 3, sc) == 0);
    sim_err err = {{0}};
    stop_ctx ctx = {.monotonic = 1};
    sim_search_opts o = {.threads = 2, .no_prune = 1, .progress = stop_after_three, .progress_ctx = &ctx, .stop = &ctx.stop};
    sim_search *s = NULL;
    CHECK(sim_search_create(sc, &o, &s, &err) == 0);
    CHECK(s && sim_search_run(s, &err) == 0);
    if (s) {
        sim_search_stats st;
        sim_search_stats_get(s, &st);
        CHECK(st.interrupted == 1);
        CHECK_MSG(st.undecided > 0 && st.evaluated >= 3 && st.evaluated < 16, "%lld evaluated, %lld undecided",
                  (long long)st.evaluated, (long long)st.undecided);
        CHECK(ctx.calls >= 4 && ctx.monotonic && ctx.waves == 1); /* per candidate, then the one wave it stopped in */
        CHECK(ctx.best_seen > 0);
        int32_t w = -1;
        CHECK(sim_search_ranking(s, &w, 1) > 0);
        char *buf = report_text(s, OUT_TABLES);
        CHECK_CONTAINS(buf, "INCOMPLETE: ");
        CHECK_CONTAINS(buf, "the search was interrupted");
        CHECK_CONTAINS(buf, "distinct deployments meeting the SLO");
        if (w >= 0) CHECK_CONTAINS(buf, sim_search_cand_get(s, w)->label);
        free(buf);
        buf = report_text(s, OUT_CSV);
        CHECK(buf && strncmp(buf, "# INCOMPLETE", 12) == 0);
        CHECK_CONTAINS(buf, ",pending,");
        free(buf);
        buf = report_text(s, OUT_JSON);
        CHECK_CONTAINS(buf, "\"complete\": false");
        free(buf);
    }
    sim_search_destroy(s);
    free(sc);
}

static void test_bad_input(void)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    static const char *bad_layout[] = {"search.layouts=tp2,tq4"};
    CHECK(load(bad_layout, 1, sc) == 0);
    CHECK(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "tq4");
    /* A layout's count is a whole number in 1..1024, said once per axis. */
    static const char *bad_counts[] = {"search.layouts=tp0", "search.layouts=tp2048",
                                       "search.layouts=tp99999999999999999999999", "search.layouts=tp2tp4"};
    for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++) {
        CHECK(load(&bad_counts[i], 1, sc) == 0);
        CHECK_MSG(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL, "'%s' accepted", bad_counts[i]);
        CHECK_CONTAINS(err.msg, "search.layouts: layout 'tp");
        CHECK_CONTAINS(err.msg, "bad or repeated tp");
    }
    /* A ratio is two whole numbers >= 1 joined by one ':', nothing else. */
    static const char *bad_ratios[] = {"search.pd_ratios=1:1,1:0",      "search.pd_ratios=1:3:5",
                                       "search.pd_ratios=1:x",          "search.pd_ratios=3",
                                       "search.pd_ratios=1.5:2",        "search.af_ratios=2147483648:1",
                                       "search.af_ratios=99999999999999999999:1", "search.af_ratios=2:-1"};
    for (size_t i = 0; i < sizeof bad_ratios / sizeof *bad_ratios; i++) {
        CHECK(load(&bad_ratios[i], 1, sc) == 0);
        CHECK_MSG(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL, "'%s' accepted", bad_ratios[i]);
        CHECK_CONTAINS(err.msg, "is not a ratio like 1:3");
        CHECK_CONTAINS(err.msg, i < 5 ? "search.pd_ratios: '" : "search.af_ratios: '");
    }
    static const char *bad_pct[] = {"search.percentile=95"};
    CHECK(load(bad_pct, 1, sc) == 0);
    CHECK(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "percentile");
    static const char *no_slo[] = {"slo.ttft_ms=0", "slo.tpot_ms=0"};
    CHECK(load(no_slo, 2, sc) == 0);
    CHECK(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "SLO");
    /* An autoscaled pool puts autoscaling in the space (test_search_autoscale): every candidate at the
     * scenario's own arrivals, so a fixed search.rate is refused, saying why. */
    static const char *autoscaled[] = {"deployment.pools.0.autoscale.enabled=true", "deployment.pools.0.autoscale.max=4",
                                       "search.rate=5"};
    int arc = load(autoscaled, 3, sc);
    CHECK_MSG(arc == 0, "autoscaled pool not loaded");
    if (arc == 0) {
        CHECK(sim_search_create(sc, NULL, &s, &err) == SIM_EINVAL);
        CHECK_CONTAINS(err.msg, "search.rate: with autoscaling in the search");
        CHECK_CONTAINS(err.msg, "every candidate runs the scenario's own arrivals");
    }
    static const char *too_big[] = {"search.max_candidates=3"};
    CHECK(load(too_big, 1, sc) == 0);
    CHECK(sim_search_create(sc, NULL, &s, &err) == SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "max_candidates");
    /* 70B weights do not fit one H100: the reason says so. */
    static const char *big[] = {"model=llama-3.1-70b", "search.layouts=tp1,tp4"};
    CHECK(load(big, 2, sc) == 0);
    CHECK(sim_search_create(sc, NULL, &s, &err) == 0);
    if (s) {
        CHECK(sim_search_run(s, &err) == 0);
        int infeasible = 0;
        for (int32_t i = 0; i < sim_search_count(s); i++)
            if (sim_search_result_get(s, i)->status == SIM_CAND_INFEASIBLE) {
                infeasible++;
                CHECK_CONTAINS(sim_search_result_get(s, i)->reason, "weights");
                CHECK(sim_search_cand_get(s, i)->pools[0].tp == 1);
            }
        CHECK(infeasible > 0);
    }
    sim_search_destroy(s);
    free(sc);
}

/* The command line's overrides stay within their array: every --set the
 * limit allows, then --top, --rate and --no-perf-db repeated (the last
 * --top/--rate wins), on a scenario that does not exist (bad input, 2). */
static void test_cli_many_overrides(void)
{
    enum { N = 1 + 2 * 256 + 6 * 2 + 2 + 1 };
    char *av[N];
    int n = 0;
    av[n++] = "search";
    for (int i = 0; i < 256; i++) av[n++] = "--set", av[n++] = "search.top_k=3";
    for (int i = 0; i < 3; i++) av[n++] = "--top", av[n++] = "4", av[n++] = "--rate", av[n++] = "5";
    av[n++] = "--no-perf-db";
    av[n++] = "--no-perf-db";
    av[n++] = "/nonexistent/scenario.yaml";
    CHECK(n == N);
    CHECK(sim_cli_search(n, av) == 2);
}

static const test_case cases[] = {
    {"cli_many_overrides", test_cli_many_overrides},
    {"brute_force_fixed", test_brute_force_fixed},
    {"pruning_exact", test_pruning_exact},
    {"recommended_yaml", test_recommended_yaml},
    {"bad_input", test_bad_input},
    {"interrupted", test_interrupted},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_search", cases);
}
