/* test_workload — length distributions (moments vs theory, clamping, zipf
 * frequencies, empirical files and their errors), arrival processes (Poisson
 * and gamma CV, constant spacing, limits), determinism and stream
 * independence, trace replay with scaling, and closed-loop sampling. All
 * draws use fixed seeds; tolerances are about 5 standard errors. */
#include "sim_rng.h"
#include "sim_trace.h"
#include "sim_workload.h"
#include "test_util.h"

#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <unistd.h>

#define N_DRAWS 100000

static const char *src_dir = ".";

static sim_len_dist dist_cfg(sim_dist_kind kind)
{
    sim_len_dist c;
    memset(&c, 0, sizeof c);
    c.dist = kind;
    c.min = 1;
    c.max = 1000000;
    c.s = 1.1;
    return c;
}

typedef struct {
    double mean, std, log_mean, log_std;
    int32_t lo, hi;
} draw_stats;

/* Draws N_DRAWS values and returns their moments (also in log space). */
static draw_stats draw_many(const sim_len_dist *cfg, uint64_t seed, int64_t *counts, int64_t n_counts)
{
    draw_stats st = {0, 0, 0, 0, INT32_MAX, 0};
    sim_err err = {{0}};
    sim_lendist *d = NULL;
    int rc = sim_lendist_create(cfg, &d, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return st;
    gsl_rng *r = sim_rng_create(seed, "test", 0);
    double s = 0, s2 = 0, l = 0, l2 = 0;
    for (int i = 0; i < N_DRAWS; i++) {
        int32_t v = sim_lendist_draw(d, r);
        s += v;
        s2 += (double)v * v;
        l += log(v);
        l2 += log(v) * log(v);
        if (v < st.lo) st.lo = v;
        if (v > st.hi) st.hi = v;
        if (counts && v >= 0 && v < n_counts) counts[v]++;
    }
    st.mean = s / N_DRAWS;
    st.std = sqrt(s2 / N_DRAWS - st.mean * st.mean);
    st.log_mean = l / N_DRAWS;
    st.log_std = sqrt(l2 / N_DRAWS - st.log_mean * st.log_mean);
    gsl_rng_free(r);
    sim_lendist_destroy(d);
    return st;
}

static double lendist_mean_of(const sim_len_dist *cfg)
{
    sim_lendist *d = NULL;
    sim_err err = {{0}};
    if (sim_lendist_create(cfg, &d, &err) != 0) return NAN;
    double m = sim_lendist_mean(d);
    sim_lendist_destroy(d);
    return m;
}

static void test_fixed_uniform(void)
{
    sim_len_dist c = dist_cfg(SIM_DIST_FIXED);
    c.value = 300.4;
    draw_stats st = draw_many(&c, 1, NULL, 0);
    CHECK(st.lo == 300 && st.hi == 300);
    CHECK_NEAR(lendist_mean_of(&c), 300, 0);
    c.min = 400; /* clamped up */
    c.max = 500;
    st = draw_many(&c, 1, NULL, 0);
    CHECK(st.lo == 400 && st.hi == 400);
    CHECK_NEAR(lendist_mean_of(&c), 400, 0);

    c = dist_cfg(SIM_DIST_UNIFORM);
    c.min = 10;
    c.max = 50;
    int64_t counts[64] = {0};
    st = draw_many(&c, 2, counts, 64);
    double sd = sqrt((41.0 * 41.0 - 1) / 12.0);
    CHECK_NEAR(st.mean, 30.0, 5 * sd / sqrt(N_DRAWS));
    CHECK_NEAR(st.std, sd, 0.1);
    CHECK(st.lo == 10 && st.hi == 50);
    CHECK(counts[9] == 0 && counts[51] == 0);
    CHECK_NEAR(lendist_mean_of(&c), 30.0, 0);
}

static void test_normal(void)
{
    sim_len_dist c = dist_cfg(SIM_DIST_NORMAL);
    c.mean = 1000;
    c.std = 100;
    draw_stats st = draw_many(&c, 3, NULL, 0);
    CHECK_NEAR(st.mean, 1000, 5 * 100 / sqrt(N_DRAWS));
    CHECK_NEAR(st.std, 100, 5 * 100 / sqrt(2.0 * N_DRAWS));
    CHECK_NEAR(lendist_mean_of(&c), 1000, 0);

    /* Clamped to [50, 150]: values below 50.5 round/clamp to 50, so the
     * mass at 50 is Phi(-0.495) = 0.3103. */
    c.mean = 100;
    c.min = 50;
    c.max = 150;
    int64_t counts[200] = {0};
    st = draw_many(&c, 4, counts, 200);
    CHECK(st.lo == 50 && st.hi == 150);
    double p = 0.3103;
    CHECK_NEAR((double)counts[50] / N_DRAWS, p, 5 * sqrt(p * (1 - p) / N_DRAWS));
    CHECK_NEAR((double)counts[150] / N_DRAWS, p, 5 * sqrt(p * (1 - p) / N_DRAWS));
    CHECK_NEAR(st.mean, 100, 0.5); /* symmetric clamp keeps the mean */
    CHECK_NEAR(lendist_mean_of(&c), 100, 0); /* configured mean */
}

static void test_lognormal(void)
{
    sim_len_dist c = dist_cfg(SIM_DIST_LOGNORMAL);
    c.mean = 2000;
    c.std = 1500;
    c.max = 100000000;
    draw_stats st = draw_many(&c, 5, NULL, 0);
    double sigma = sqrt(log(1 + (1500.0 / 2000) * (1500.0 / 2000)));
    double mu = log(2000.0) - sigma * sigma / 2;
    CHECK_NEAR(st.log_mean, mu, 5 * sigma / sqrt(N_DRAWS));
    CHECK_NEAR(st.log_std, sigma, 5 * sigma / sqrt(2.0 * N_DRAWS));
    CHECK_NEAR(st.mean, 2000, 5 * 1500 / sqrt(N_DRAWS));
    CHECK_NEAR(st.std, 1500, 0.05 * 1500); /* heavy tail: looser */
    CHECK_NEAR(lendist_mean_of(&c), 2000, 0);
    c.min = 1000;
    c.max = 3000;
    st = draw_many(&c, 5, NULL, 0);
    CHECK(st.lo == 1000 && st.hi == 3000);
}

static void test_zipf(void)
{
    sim_len_dist c = dist_cfg(SIM_DIST_ZIPF);
    c.min = 1;
    c.max = 100;
    c.s = 1.1;
    int64_t counts[128] = {0};
    draw_stats st = draw_many(&c, 6, counts, 128);
    double z = 0, m = 0;
    for (int k = 1; k <= 100; k++) {
        z += pow(k, -1.1);
        m += k * pow(k, -1.1);
    }
    m /= z;
    for (int k = 1; k <= 100; k++) {
        double p = pow(k, -1.1) / z;
        CHECK_MSG(fabs((double)counts[k] / N_DRAWS - p) <= 5 * sqrt(p * (1 - p) / N_DRAWS) + 1e-4,
                  "k=%d freq %g vs %g", k, (double)counts[k] / N_DRAWS, p);
    }
    CHECK(counts[0] == 0 && counts[101] == 0);
    CHECK(st.lo == 1 && st.hi == 100);
    CHECK_NEAR(lendist_mean_of(&c), m, 1e-9 * m);
    CHECK_NEAR(st.mean, m, 0.02 * m);

    /* Shifted support: P(k) ∝ k^-s over k = 1000..1010. */
    c.min = 1000;
    c.max = 1010;
    c.s = 3;
    z = 0;
    m = 0;
    for (int k = 1000; k <= 1010; k++) {
        z += pow(k, -3.0);
        m += k * pow(k, -3.0);
    }
    CHECK_NEAR(lendist_mean_of(&c), m / z, 1e-9);
    st = draw_many(&c, 7, NULL, 0);
    CHECK(st.lo == 1000 && st.hi == 1010);
}

static char *write_tmp(const char *content)
{
    char *path = strdup("/tmp/servesim_test_lendist_XXXXXX");
    int fd = path ? mkstemp(path) : -1;
    if (fd < 0) {
        free(path);
        return NULL;
    }
    size_t n = strlen(content);
    CHECK(write(fd, content, n) == (ssize_t)n);
    close(fd);
    return path;
}

static void expect_empirical_error(const char *content, int code, const char *needle)
{
    sim_len_dist c = dist_cfg(SIM_DIST_EMPIRICAL);
    char *path = write_tmp(content);
    REQUIRE(path != NULL);
    snprintf(c.path, sizeof c.path, "%s", path);
    sim_lendist *d = NULL;
    sim_err err = {{0}};
    int rc = sim_lendist_create(&c, &d, &err);
    CHECK_MSG(rc == code, "content '%s': rc %d (%s)", content, rc, err.msg);
    CHECK(d == NULL);
    CHECK_CONTAINS(err.msg, path);
    CHECK_CONTAINS(err.msg, needle);
    sim_lendist_destroy(d);
    unlink(path);
    free(path);
}

static void test_empirical(void)
{
    sim_len_dist c = dist_cfg(SIM_DIST_EMPIRICAL);
    snprintf(c.path, sizeof c.path, "%s/tests/data/workload/lengths_empirical.txt", src_dir);
    int64_t counts[800] = {0};
    draw_stats st = draw_many(&c, 8, counts, 800);
    CHECK_NEAR(lendist_mean_of(&c), 300, 1e-12);
    CHECK_NEAR(st.mean, 300, 5 * sqrt(45000.0 / N_DRAWS)); /* var = 45000 */
    CHECK(counts[100] + counts[200] + counts[700] == N_DRAWS);
    CHECK_NEAR((double)counts[100] / N_DRAWS, 0.25, 5 * sqrt(0.25 * 0.75 / N_DRAWS));
    CHECK_NEAR((double)counts[200] / N_DRAWS, 0.50, 5 * sqrt(0.25 / N_DRAWS));
    CHECK_NEAR((double)counts[700] / N_DRAWS, 0.25, 5 * sqrt(0.25 * 0.75 / N_DRAWS));
    c.max = 500; /* 700 clamps to 500 */
    CHECK_NEAR(lendist_mean_of(&c), 250, 1e-12);
    st = draw_many(&c, 8, NULL, 0);
    CHECK(st.hi == 500);

    expect_empirical_error("100\nabc\n", SIM_EINVAL, ":2: column 1 (value): expected an integer length");
    expect_empirical_error("# c\n\n0\n", SIM_EINVAL, ":3: column 1 (value)");
    expect_empirical_error("12.5\n", SIM_EINVAL, ":1: column 1 (value)");
    expect_empirical_error("10,1\n20,-1\n", SIM_EINVAL, ":2: column 2 (weight): expected a number >= 0, got '-1'");
    expect_empirical_error("10,x\n", SIM_EINVAL, ":1: column 2 (weight)");
    expect_empirical_error("10,1,2\n", SIM_EINVAL, ":1: column 2 (weight)");
    expect_empirical_error("10,0x1\n", SIM_EINVAL, ":1: column 2 (weight): expected a number >= 0, got '0x1'");
    expect_empirical_error("10,1e999\n", SIM_EINVAL, ":1: column 2 (weight)");
    expect_empirical_error("99999999999999999999\n", SIM_EINVAL, ":1: column 1 (value)");
    expect_empirical_error("0x10\n", SIM_EINVAL, ":1: column 1 (value)");
    expect_empirical_error("", SIM_EINVAL, "no lengths with positive weight");
    expect_empirical_error("5,0\n6,0\n", SIM_EINVAL, "no lengths with positive weight");

    sim_lendist *d = NULL;
    sim_err err = {{0}};
    snprintf(c.path, sizeof c.path, "/nonexistent/lengths.txt");
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EIO);
    CHECK_CONTAINS(err.msg, "/nonexistent/lengths.txt: cannot open");
    c.path[0] = '\0';
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "no path");
}

static void test_lendist_errors(void)
{
    sim_lendist *d = NULL;
    sim_err err = {{0}};
    sim_len_dist c = dist_cfg(SIM_DIST_FIXED);
    c.value = 10;
    c.min = 0;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL && d == NULL);
    CHECK_CONTAINS(err.msg, "min 0");
    c.min = 10;
    c.max = 5;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "need 1 <= min <= max");
    c = dist_cfg(SIM_DIST_NORMAL);
    c.mean = 10;
    c.std = -1;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "normal");
    c = dist_cfg(SIM_DIST_LOGNORMAL);
    c.mean = 0;
    c.std = 1;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "lognormal: need mean > 0");
    c = dist_cfg(SIM_DIST_ZIPF);
    c.s = -1;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "zipf: exponent");
    c.s = 1;
    c.max = 2000000000;
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_ERANGE);
    CHECK_CONTAINS(err.msg, "too large");
    c = dist_cfg((sim_dist_kind)42);
    CHECK(sim_lendist_create(&c, &d, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "unknown length distribution 42");
    CHECK(d == NULL);
}

/* ---- workload ------------------------------------------------------------ */

static sim_workload_cfg wl_cfg(sim_arrival_kind kind, double rate, int64_t requests)
{
    sim_workload_cfg c;
    memset(&c, 0, sizeof c);
    c.requests = requests;
    c.arrival.process = kind;
    c.arrival.rate = rate;
    c.arrival.cv = 1;
    c.arrival.concurrency = 4;
    c.input_tokens = dist_cfg(SIM_DIST_UNIFORM);
    c.input_tokens.min = 100;
    c.input_tokens.max = 4000;
    c.output_tokens = dist_cfg(SIM_DIST_FIXED);
    c.output_tokens.value = 128;
    c.trace.time_scale = 1;
    c.trace.rate_scale = 1;
    return c;
}

static sim_workload *wl_make(const sim_workload_cfg *c, uint64_t seed)
{
    sim_workload *w = NULL;
    sim_err err = {{0}};
    int rc = sim_workload_create(c, seed, &w, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return w;
}

/* Mean and CV of inter-arrival gaps over the whole workload (seconds). */
static void gap_stats(const sim_workload_cfg *c, uint64_t seed, double *mean, double *cv, int64_t *n_out)
{
    sim_workload *w = wl_make(c, seed);
    *mean = *cv = NAN;
    if (!w) return;
    sim_request_spec r;
    sim_time prev = 0;
    double s = 0, s2 = 0;
    int64_t n = 0;
    int monotone = 1, ids = 1;
    while (sim_workload_next(w, &r)) {
        double g = (double)(r.arrival - prev) * 1e-9;
        monotone &= r.arrival >= prev;
        ids &= r.id == (uint64_t)n;
        prev = r.arrival;
        s += g;
        s2 += g * g;
        n++;
    }
    CHECK(monotone);
    CHECK(ids);
    *mean = s / (double)n;
    *cv = sqrt(s2 / (double)n - *mean * *mean) / *mean;
    *n_out = n;
    sim_workload_destroy(w);
}

static void test_arrivals(void)
{
    double mean, cv;
    int64_t n;
    sim_workload_cfg c = wl_cfg(SIM_ARRIVAL_POISSON, 10, N_DRAWS);
    gap_stats(&c, 11, &mean, &cv, &n);
    CHECK(n == N_DRAWS);
    CHECK_NEAR(mean, 0.1, 5 * 0.1 / sqrt(N_DRAWS));
    CHECK_NEAR(cv, 1.0, 0.02);

    c = wl_cfg(SIM_ARRIVAL_GAMMA, 10, N_DRAWS);
    c.arrival.cv = 2;
    gap_stats(&c, 12, &mean, &cv, &n);
    CHECK_NEAR(mean, 0.1, 5 * 0.2 / sqrt(N_DRAWS));
    CHECK_NEAR(cv, 2.0, 0.08); /* shape 1/4: heavy-tailed variance estimate */
    c.arrival.cv = 0.5;
    gap_stats(&c, 13, &mean, &cv, &n);
    CHECK_NEAR(mean, 0.1, 5 * 0.05 / sqrt(N_DRAWS));
    CHECK_NEAR(cv, 0.5, 0.01);

    /* Constant: exactly (k+1)/rate. */
    c = wl_cfg(SIM_ARRIVAL_CONSTANT, 4, 1000);
    sim_workload *w = wl_make(&c, 1);
    sim_request_spec r;
    int exact = 1;
    for (int64_t k = 0; w && sim_workload_next(w, &r); k++) exact &= r.arrival == (k + 1) * 250000000LL;
    CHECK(exact);
    CHECK(w && sim_workload_total(w) == 1000);
    sim_workload_destroy(w);
}

static void test_limits(void)
{
    sim_request_spec r;
    /* Constant 10/s for 1 s: arrivals 0.1 .. 0.9 s (1.0 s is not before the end). */
    sim_workload_cfg c = wl_cfg(SIM_ARRIVAL_CONSTANT, 10, 0);
    c.duration_s = 1.0;
    sim_workload *w = wl_make(&c, 1);
    int64_t n = 0;
    while (w && sim_workload_next(w, &r)) n++;
    CHECK(n == 9);
    CHECK(w && sim_workload_total(w) == 9);
    CHECK(w && sim_workload_next(w, &r) == 0); /* stays exhausted */
    sim_workload_destroy(w);

    /* Poisson bounded by time only: about rate * duration, all before it. */
    c = wl_cfg(SIM_ARRIVAL_POISSON, 50, 0);
    c.duration_s = 100;
    w = wl_make(&c, 2);
    CHECK(w && sim_workload_total(w) == -1);
    n = 0;
    sim_time last = 0;
    while (w && sim_workload_next(w, &r)) {
        n++;
        last = r.arrival;
    }
    CHECK_NEAR((double)n, 5000, 5 * sqrt(5000.0));
    CHECK(last < 100000000000LL);
    sim_workload_destroy(w);

    /* Both limits: the request count caps. */
    c.requests = 10;
    w = wl_make(&c, 2);
    n = 0;
    while (w && sim_workload_next(w, &r)) n++;
    CHECK(n == 10 && w && sim_workload_total(w) == 10);
    sim_workload_destroy(w);

    /* Lengths respect their distributions. */
    c = wl_cfg(SIM_ARRIVAL_POISSON, 50, 5000);
    w = wl_make(&c, 3);
    int ok = 1;
    while (w && sim_workload_next(w, &r))
        ok &= r.input_tokens >= 100 && r.input_tokens <= 4000 && r.output_tokens == 128 && r.n_hash == 0 &&
              r.hash_ids == NULL;
    CHECK(ok);
    sim_workload_destroy(w);
}

/* Same seed: identical; different seed: differs; more output-length draws
 * leave arrivals and input lengths untouched. */
static void test_determinism(void)
{
    sim_workload_cfg a = wl_cfg(SIM_ARRIVAL_GAMMA, 20, 2000);
    a.arrival.cv = 1.5;
    sim_workload_cfg b = a;
    b.output_tokens = dist_cfg(SIM_DIST_LOGNORMAL);
    b.output_tokens.mean = 300;
    b.output_tokens.std = 200;
    sim_workload *w1 = wl_make(&a, 77), *w2 = wl_make(&a, 77), *w3 = wl_make(&a, 78), *w4 = wl_make(&b, 77);
    if (!w1 || !w2 || !w3 || !w4) goto done;
    sim_request_spec r1, r2, r3, r4;
    int same = 1, diff_arrival = 0, diff_len = 0, indep = 1, out_varies = 0;
    for (int i = 0; i < 2000; i++) {
        CHECK(sim_workload_next(w1, &r1) && sim_workload_next(w2, &r2) && sim_workload_next(w3, &r3) &&
              sim_workload_next(w4, &r4));
        same &= r1.arrival == r2.arrival && r1.input_tokens == r2.input_tokens &&
                r1.output_tokens == r2.output_tokens;
        diff_arrival += r1.arrival != r3.arrival;
        diff_len += r1.input_tokens != r3.input_tokens;
        indep &= r1.arrival == r4.arrival && r1.input_tokens == r4.input_tokens;
        out_varies += r4.output_tokens != 128;
    }
    CHECK(same);
    CHECK(diff_arrival > 1990 && diff_len > 1900);
    CHECK(indep);
    CHECK(out_varies > 1900);
done:
    sim_workload_destroy(w1);
    sim_workload_destroy(w2);
    sim_workload_destroy(w3);
    sim_workload_destroy(w4);
}

static void test_trace_replay(void)
{
    char path[SIM_PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/data/workload/mooncake_conversation_head.jsonl", src_dir);
    sim_trace *t = NULL;
    sim_err err = {{0}};
    CHECK_MSG(sim_trace_load(path, SIM_TRACE_MOONCAKE, &t, &err) == 0, "%s", err.msg);
    if (!t) return;

    sim_workload_cfg c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 0);
    c.trace.format = SIM_TRACE_MOONCAKE;
    snprintf(c.trace.path, sizeof c.trace.path, "%s", path);
    c.trace.time_scale = 2;
    c.trace.rate_scale = 4; /* net: timestamps halved */
    sim_workload *w = wl_make(&c, 1);
    sim_request_spec r;
    int64_t n = 0;
    int ok = 1;
    while (w && sim_workload_next(w, &r)) {
        const sim_trace_entry *e = &t->entries[n];
        ok &= r.id == (uint64_t)n && r.arrival == llround(e->timestamp_s * 0.5e9) &&
              r.input_tokens == e->input_tokens && r.output_tokens == e->output_tokens &&
              r.n_hash == e->n_hash && memcmp(r.hash_ids, t->hashes + e->hash_off, 4 * (size_t)e->n_hash) == 0;
        n++;
    }
    CHECK(ok);
    CHECK(n == 200 && w && sim_workload_total(w) == 200);
    CHECK(r.arrival == 36000000000LL); /* last timestamp 72 s, halved */
    sim_workload_destroy(w);

    /* Truncation by count and by duration (scaled time). */
    c.requests = 50;
    w = wl_make(&c, 1);
    n = 0;
    while (w && sim_workload_next(w, &r)) n++;
    CHECK(n == 50 && w && sim_workload_total(w) == 50);
    sim_workload_destroy(w);
    c.requests = 0;
    c.duration_s = 10; /* trace seconds < 20 */
    int64_t expect = 0;
    while (expect < t->n && t->entries[expect].timestamp_s < 20) expect++;
    w = wl_make(&c, 1);
    n = 0;
    while (w && sim_workload_next(w, &r)) n++;
    CHECK(expect > 10 && expect < 200);
    CHECK(n == expect && w && sim_workload_total(w) == expect);
    sim_workload_destroy(w);

    /* Closed loop over the trace: lengths in order, arrival = now. */
    c = wl_cfg(SIM_ARRIVAL_CLOSED, 0, 0);
    c.trace.format = SIM_TRACE_MOONCAKE;
    snprintf(c.trace.path, sizeof c.trace.path, "%s", path);
    w = wl_make(&c, 1);
    CHECK(w && sim_workload_is_closed(w) && sim_workload_total(w) == 200);
    n = 0;
    ok = 1;
    while (w && sim_workload_sample(w, n * 1000, &r)) {
        ok &= r.arrival == n * 1000 && r.input_tokens == t->entries[n].input_tokens &&
              r.n_hash == t->entries[n].n_hash;
        n++;
    }
    CHECK(ok && n == 200);
    sim_workload_destroy(w);
    sim_trace_destroy(t);

    /* CSV: first timestamp is the origin. */
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 0);
    c.trace.format = SIM_TRACE_CSV;
    snprintf(c.trace.path, sizeof c.trace.path, "%s/tests/data/workload/sample.csv", src_dir);
    c.trace.rate_scale = 2;
    w = wl_make(&c, 1);
    int64_t arrivals[4] = {0};
    n = 0;
    while (w && sim_workload_next(w, &r) && n < 4) arrivals[n++] = r.arrival;
    CHECK(n == 4);
    CHECK(arrivals[0] == 0 && arrivals[1] == 250000000 && arrivals[2] == 250000000 &&
          arrivals[3] == 6125000000LL);
    sim_workload_destroy(w);
}

static void test_closed_loop(void)
{
    sim_workload_cfg c = wl_cfg(SIM_ARRIVAL_CLOSED, 0, 3);
    sim_workload *w = wl_make(&c, 5);
    sim_request_spec r;
    CHECK(w && sim_workload_is_closed(w) == 1 && sim_workload_total(w) == 3);
    for (int i = 0; w && i < 3; i++) {
        CHECK(sim_workload_sample(w, 1000 + i, &r) == 1);
        CHECK(r.arrival == 1000 + i && r.id == (uint64_t)i && r.output_tokens == 128);
        CHECK(r.input_tokens >= 100 && r.input_tokens <= 4000);
    }
    CHECK(w && sim_workload_sample(w, 5000, &r) == 0);
    sim_workload_destroy(w);

    c.requests = 0;
    c.duration_s = 5;
    w = wl_make(&c, 5);
    CHECK(w && sim_workload_total(w) == -1);
    CHECK(w && sim_workload_sample(w, 4999999999LL, &r) == 1);
    CHECK(w && sim_workload_sample(w, 5000000000LL, &r) == 0);
    sim_workload_destroy(w);

    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 3);
    w = wl_make(&c, 5);
    CHECK(w && sim_workload_is_closed(w) == 0);
    sim_workload_destroy(w);
}

static void expect_create_error(const sim_workload_cfg *c, int code, const char *needle)
{
    sim_workload *w = (sim_workload *)0x1;
    sim_err err = {{0}};
    int rc = sim_workload_create(c, 1, &w, &err);
    CHECK_MSG(rc == code, "rc %d want %d (%s)", rc, code, err.msg);
    CHECK(w == NULL);
    CHECK_CONTAINS(err.msg, needle);
}

static void test_create_errors(void)
{
    sim_workload_cfg c = wl_cfg(SIM_ARRIVAL_POISSON, 10, 0);
    expect_create_error(&c, SIM_EINVAL, "unbounded");
    c.arrival.process = SIM_ARRIVAL_CLOSED;
    expect_create_error(&c, SIM_EINVAL, "unbounded");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 0, 10);
    expect_create_error(&c, SIM_EINVAL, "workload.arrival.rate");
    c = wl_cfg(SIM_ARRIVAL_GAMMA, 1, 10);
    c.arrival.cv = 0;
    expect_create_error(&c, SIM_EINVAL, "workload.arrival.cv");
    c = wl_cfg(SIM_ARRIVAL_CLOSED, 0, 10);
    c.arrival.concurrency = 0;
    expect_create_error(&c, SIM_EINVAL, "concurrency");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, -1);
    expect_create_error(&c, SIM_EINVAL, "workload.requests");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 10);
    c.duration_s = -1;
    expect_create_error(&c, SIM_EINVAL, "workload.duration_s");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 10);
    c.input_tokens.min = 0;
    expect_create_error(&c, SIM_EINVAL, "workload.input_tokens: uniform: bounds");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 10);
    c.output_tokens.dist = SIM_DIST_EMPIRICAL;
    expect_create_error(&c, SIM_EINVAL, "workload.output_tokens: empirical: no path");
    c = wl_cfg(SIM_ARRIVAL_POISSON, 1, 10);
    c.trace.format = SIM_TRACE_MOONCAKE;
    snprintf(c.trace.path, sizeof c.trace.path, "/nonexistent/t.jsonl");
    expect_create_error(&c, SIM_EIO, "workload.trace.path: /nonexistent/t.jsonl: cannot open");
    c.trace.time_scale = 0;
    expect_create_error(&c, SIM_EINVAL, "workload.trace.time_scale");
    c.trace.time_scale = 1;
    c.trace.rate_scale = -2;
    expect_create_error(&c, SIM_EINVAL, "workload.trace.rate_scale");
}

/* arrival.schedule: a piecewise-constant Poisson rate. Counts per segment
 * match rate x length; nothing arrives during a zero-rate stretch; errors. */
static void test_rate_schedule(void)
{
    sim_workload_cfg c;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    c = sc.workload;
    c.arrival.process = SIM_ARRIVAL_SCHEDULE;
    snprintf(c.arrival.schedule, sizeof c.arrival.schedule, "0:50, 100:0, 200:200");
    c.requests = 0;
    c.duration_s = 300;
    sim_workload *w = NULL;
    sim_err err = {{0}};
    CHECK_MSG(sim_workload_create(&c, 11, &w, &err) == 0, "%s", err.msg);
    if (!w) return;
    int64_t seg[3] = {0, 0, 0};
    sim_request_spec r;
    sim_time prev = 0;
    int mono = 1;
    while (sim_workload_next(w, &r) == 1) {
        double t = (double)r.arrival / 1e9;
        if (r.arrival < prev) mono = 0;
        prev = r.arrival;
        seg[t < 100 ? 0 : t < 200 ? 1 : 2]++;
        sim_workload_release(w, &r);
    }
    CHECK(mono);
    CHECK_MSG(fabs(seg[0] - 5000.0) < 4 * sqrt(5000.0), "first segment %lld arrivals", (long long)seg[0]);
    CHECK(seg[1] == 0);
    CHECK_MSG(fabs(seg[2] - 20000.0) < 4 * sqrt(20000.0), "last segment %lld arrivals", (long long)seg[2]);
    sim_workload_destroy(w);
    const char *bad[] = {"", "0:0", "10:5, 5:3", "0:5; 10:2", "0:-1", "x:1", "0x10:5", "0:5x", "0:", "inf:1", "0:1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(c.arrival.schedule, sizeof c.arrival.schedule, "%s", bad[i]);
        w = NULL;
        CHECK_MSG(sim_workload_create(&c, 1, &w, &err) == SIM_EINVAL && w == NULL, "'%s' accepted", bad[i]);
        CHECK_CONTAINS(err.msg, "workload.arrival.schedule");
    }
    snprintf(c.arrival.schedule, sizeof c.arrival.schedule, "%s", "0:5x");
    CHECK(sim_workload_create(&c, 1, &w, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "workload.arrival.schedule: expected a rate after '0:', got '5x'");
    /* Blanks around a rate and tabs before a time are read as before. */
    snprintf(c.arrival.schedule, sizeof c.arrival.schedule, "%s", "\t0: 50 ,100:0");
    w = NULL;
    CHECK(sim_workload_create(&c, 1, &w, &err) == 0 && w != NULL);
    sim_workload_destroy(w);
}

static const test_case cases[] = {
    {"fixed_uniform", test_fixed_uniform},
    {"normal", test_normal},
    {"lognormal", test_lognormal},
    {"zipf", test_zipf},
    {"empirical", test_empirical},
    {"lendist_errors", test_lendist_errors},
    {"arrivals", test_arrivals},
    {"limits", test_limits},
    {"determinism", test_determinism},
    {"trace_replay", test_trace_replay},
    {"closed_loop", test_closed_loop},
    {"create_errors", test_create_errors},
    {"rate_schedule", test_rate_schedule},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    src_dir = test_src_dir();
    return test_run("test_workload", cases);
}
