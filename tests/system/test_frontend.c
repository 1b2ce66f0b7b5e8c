/* test_frontend — the API server's worker pool (scheduler.tokenizer_workers)
 * against queueing theory and by hand.
 *
 * M/M/c: Poisson arrivals (rate λ) at one instance whose c workers each
 * spend tokenize_us_per_token per prompt token, with geometric prompt
 * lengths (p = 1/100: service times exponential up to the token grain, a
 * squared coefficient of variation of 1 − p = 0.99). The mean wait for a
 * worker is compared with Erlang C, Wq = C(c, a) / (c μ − λ) with a = λ/μ,
 * at two loads, within 6 % (200,000 customers: the estimator's standard
 * error at ρ = 0.7 is about 2 %; the 1 % shortfall of the geometric's
 * variance moves Wq by about 0.5 %). The engine is sped up (op_speedup) so
 * it never backs up behind the pool; it plays no part in the wait.
 *
 * By hand: one request alone waits for no worker, is served api_us +
 * tokenize_us_per_token × its prompt, then frontend_us, and its first
 * scheduled iteration moves by exactly that sum; without workers nothing
 * changes. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <unistd.h>

/* Erlang C: probability an arrival waits in M/M/c with offered load a. */
static double erlang_c(int c, double a)
{
    double sum = 0, term = 1;
    for (int k = 0; k < c; k++) {
        if (k) term *= a / k;
        sum += term;
    }
    double top = term * a / c / (1 - a / c); /* a^c / c! · c / (c − a) */
    return top / (sum + top);
}

/* Writes a geometric(p) length distribution (1..kmax, `length,weight`
 * lines) to path; returns its mean. */
static double write_geometric(const char *path, double p, int kmax)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    double w = 1, sw = 0, sk = 0;
    for (int k = 1; k <= kmax; k++, w *= 1 - p) {
        fprintf(f, "%d,%.17g\n", k, w);
        sw += w;
        sk += k * w;
    }
    fclose(f);
    return sk / sw;
}

static void pool_scenario(sim_scenario *sc, const char *lens, double rate, int64_t n, int workers, double us_tok)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    for (int f = 0; f < SIM_OP_FAMILIES; f++) sc->hardware.op_speedup[f] = 50;
    sc->workload.requests = n;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = rate;
    sc->workload.input_tokens.dist = SIM_DIST_EMPIRICAL;
    snprintf(sc->workload.input_tokens.path, sizeof sc->workload.input_tokens.path, "%s", lens);
    sc->workload.input_tokens.max = 100000;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = 1;
    sc->deployment.pools[0].instances = 1;
    sim_sched_cfg *s = &sc->deployment.pools[0].scheduler;
    s->overhead_us = 0;
    s->max_batched_tokens = 65536;
    s->chunk_tokens = 8192;
    s->max_seqs = 1024;
    s->tokenizer_workers = workers;
    s->tokenize_us_per_token = us_tok;
    sc->output.request_records = 0;
}

static void test_mmc(void)
{
    char lens[] = "/tmp/servesim-test-frontend-XXXXXX";
    int fd = mkstemp(lens);
    REQUIRE(fd >= 0);
    close(fd);
    const double p = 0.01, mean_tok = write_geometric(lens, p, 3000);
    REQUIRE_OR(mean_tok > 99 && mean_tok < 101, unlink(lens); return);
    const int c = 4;
    const double us_tok = 20, S = mean_tok * us_tok * 1e-6, mu = 1 / S; /* 2 ms */
    const double rhos[] = {0.7, 0.85};
    for (int i = 0; i < 2; i++) {
        const double lambda = rhos[i] * c * mu, a = lambda / mu;
        sim_scenario sc;
        pool_scenario(&sc, lens, lambda, 200000, c, us_tok);
        run_result r;
        if (run(&sc, &r)) break;
        const sim_workers_summary *f = &r.sum.frontend;
        CHECK(f->enabled && f->workers == c && f->jobs == 200000);
        const double wq = erlang_c(c, a) / (c * mu - lambda) * 1e3;
        CHECK_MSG(fabs(f->wait_ms / wq - 1) < 0.06, "rho %.2f: mean wait %.4f ms, Erlang C %.4f ms", rhos[i],
                  f->wait_ms, wq);
        CHECK_MSG(fabs(f->service_ms / (S * 1e3) - 1) < 0.01, "mean service %.4f ms, expected %.4f", f->service_ms,
                  S * 1e3);
        CHECK_MSG(fabs(f->utilization / rhos[i] - 1) < 0.02, "workers busy %.4f, rho %.2f", f->utilization, rhos[i]);
        printf("M/M/%d rho %.2f: mean wait %.4f ms, Erlang C %.4f ms (%+.2f %%)\n", c, rhos[i], f->wait_ms, wq,
               100 * (f->wait_ms / wq - 1));
        free(r.recs);
    }
    unlink(lens);
}

static void test_by_hand(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "h100-sxm");
    sc.workload.requests = 1;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 1000;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 4;
    sc.deployment.pools[0].instances = 1;
    sc.deployment.pools[0].scheduler.frontend_us = 3000;
    run_result a, b;
    if (run(&sc, &a)) return;
    sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    s->tokenizer_workers = 2;
    s->api_us = 250;
    s->tokenize_us_per_token = 1.5;
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE_OR(a.n == 1 && b.n == 1, free(a.recs); free(b.recs); return);
    CHECK(!a.sum.frontend.enabled);
    CHECK(b.sum.frontend.enabled && b.sum.frontend.jobs == 1 && b.sum.frontend.wait_ms == 0);
    const sim_time svc = (sim_time)((250 + 1.5 * 1000) * 1e3 + 0.5);
    CHECK_NEAR(b.sum.frontend.service_ms, svc * 1e-6, 1e-12);
    CHECK((b.recs[0].first_scheduled - b.recs[0].arrival) - (a.recs[0].first_scheduled - a.recs[0].arrival) == svc);
    CHECK(b.recs[0].first_token - b.recs[0].first_scheduled == a.recs[0].first_token - a.recs[0].first_scheduled);
    CHECK(b.recs[0].finish - b.recs[0].first_token == a.recs[0].finish - a.recs[0].first_token);
    free(a.recs);
    free(b.recs);
}

static const test_case cases[] = {
    {"mmc_erlang_c", test_mmc},
    {"by_hand", test_by_hand},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_frontend", cases);
}
