/* test_sketch — the log-bucket quantile sketch against exact order
 * statistics of a seeded sample (GSL RNG, sorted with GSL): every rank and
 * the interpolated percentiles within sqrt(r) − 1, merging equal to one
 * sketch of the union, the range edges, and bad arguments refused. */
#include "sim_err.h"
#include "sim_sketch.h"
#include "test_util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include <stdint.h>

#define LO 1e-6
#define HI 1e9
#define R 1.001


/* A latency-like sample: lognormal around 40 ms with a heavy tail, a few
 * exact zeros (queue times) and a few sub-ns values. */
static double *sample(size_t n, unsigned long seed)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double u = gsl_rng_uniform(rng);
        v[i] = u < 0.02 ? 0 : u < 0.025 ? 1e-7 * gsl_rng_uniform(rng) : gsl_ran_lognormal(rng, log(40.0), 1.5);
    }
    gsl_rng_free(rng);
    return v;
}

static void test_against_exact(void)
{
    enum { N = 200000 };
    double *v = sample(N, 20261201);
    sim_sketch *s = sim_sketch_create(LO, HI, R);
    REQUIRE_OR(s != NULL, free(v); return);
    double sum = 0;
    for (size_t i = 0; i < N; i++) {
        CHECK(sim_sketch_add(s, v[i], 1) == 0);
        sum += v[i];
    }
    gsl_sort(v, 1, N);
    double eps = sim_sketch_rel_error(s);
    CHECK_NEAR(eps, sqrt(R) - 1, 1e-15);
    CHECK(sim_sketch_count(s) == N);
    CHECK_NEAR(sim_sketch_sum(s), sum, 1e-9 * sum);
    CHECK(sim_sketch_min(s) == v[0] && sim_sketch_max(s) == v[N - 1]);

    /* Every 97th rank: within eps (relative) at or above lo, within lo below. */
    int bad = 0;
    for (uint64_t k = 1; k <= N; k += 97) {
        double exact = v[k - 1], got = sim_sketch_rank(s, k);
        double tol = exact >= LO ? eps * exact * (1 + 1e-12) : LO;
        if (fabs(got - exact) > tol) {
            if (bad++ < 5) fprintf(stderr, "rank %llu: got %.12g exact %.12g\n", (unsigned long long)k, got, exact);
        }
    }
    CHECK(bad == 0);
    /* Percentiles as GSL defines them, the bound still holding. */
    static const double qs[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        double exact = gsl_stats_quantile_from_sorted_data(v, 1, N, qs[i]);
        double got = sim_sketch_quantile_interp(s, qs[i]);
        CHECK_MSG(fabs(got - exact) <= eps * exact * (1 + 1e-12), "q=%g got %.12g exact %.12g", qs[i], got, exact);
        CHECK(exact == 0 ? got == 0 : got > 0); /* exact zeros come back as 0 */
    }
    /* The extremes are exact. */
    CHECK(sim_sketch_quantile_interp(s, 0) == v[0]);
    CHECK(sim_sketch_quantile_interp(s, 1) == v[N - 1]);
    CHECK(sim_sketch_quantile(s, 1) == v[N - 1]);
    /* The inverse CDF at rank ceil(q·n). */
    CHECK_NEAR(sim_sketch_quantile(s, 0.5), v[N / 2 - 1], eps * v[N / 2 - 1] * (1 + 1e-12));
    sim_sketch_destroy(s);
    free(v);
}

/* The error is real (the test above is not checking an exact structure):
 * between two bin edges the estimate differs from most values. */
static void test_is_approximate(void)
{
    sim_sketch *s = sim_sketch_create(LO, HI, R);
    REQUIRE_OR(s != NULL, return);
    CHECK(sim_sketch_add(s, 10.0, 1) == 0);
    CHECK(sim_sketch_add(s, 10.004, 1) == 0);
    CHECK(sim_sketch_add(s, 10.008, 1) == 0);
    double mid = sim_sketch_rank(s, 2);
    CHECK(mid != 10.004);
    CHECK(fabs(mid - 10.004) <= sim_sketch_rel_error(s) * 10.004 * (1 + 1e-12));
    sim_sketch_destroy(s);
}

static void test_merge(void)
{
    enum { N = 50000 };
    double *v = sample(N, 7);
    sim_sketch *all = sim_sketch_create(LO, HI, R), *a = sim_sketch_create(LO, HI, R),
               *b = sim_sketch_create(LO, HI, R);
    REQUIRE_OR(all && a && b, goto out);
    for (size_t i = 0; i < N; i++) {
        sim_sketch_add(all, v[i], 1 + i % 3);
        sim_sketch_add(i % 5 ? a : b, v[i], 1 + i % 3);
    }
    CHECK(sim_sketch_merge(a, b) == 0);
    CHECK(sim_sketch_count(a) == sim_sketch_count(all));
    CHECK(sim_sketch_min(a) == sim_sketch_min(all) && sim_sketch_max(a) == sim_sketch_max(all));
    for (double q = 0; q <= 1.0; q += 0.01) {
        CHECK(sim_sketch_quantile(a, q) == sim_sketch_quantile(all, q));
        CHECK(sim_sketch_quantile_interp(a, q) == sim_sketch_quantile_interp(all, q));
    }
    /* Merging an empty sketch changes nothing; into an empty one copies. */
    sim_sketch *e = sim_sketch_create(LO, HI, R);
    CHECK(sim_sketch_merge(a, e) == 0 && sim_sketch_count(a) == sim_sketch_count(all));
    CHECK(sim_sketch_merge(e, all) == 0 && sim_sketch_quantile(e, 0.9) == sim_sketch_quantile(all, 0.9));
    CHECK(sim_sketch_min(e) == sim_sketch_min(all));
    sim_sketch_destroy(e);
    /* Different layouts do not merge. */
    sim_sketch *other = sim_sketch_create(LO, HI, 1.01);
    CHECK(sim_sketch_merge(a, other) == SIM_EINVAL);
    sim_sketch_destroy(other);
out:
    sim_sketch_destroy(all);
    sim_sketch_destroy(a);
    sim_sketch_destroy(b);
    free(v);
}

static void test_edges(void)
{
    sim_sketch *s = sim_sketch_create(1000, 1e12, R);
    REQUIRE_OR(s != NULL, return);
    /* Empty: zeros. */
    CHECK(sim_sketch_count(s) == 0 && sim_sketch_quantile(s, 0.5) == 0 && sim_sketch_rank(s, 1) == 0);
    CHECK(sim_sketch_min(s) == 0 && sim_sketch_max(s) == 0);
    /* Below lo: within lo; above hi: the observed max. */
    CHECK(sim_sketch_add(s, 200, 2) == 0);
    CHECK(sim_sketch_add(s, 5e12, 1) == 0);
    CHECK(sim_sketch_add(s, 3e12, 1) == 0);
    CHECK(fabs(sim_sketch_rank(s, 1) - 200) <= 1000);
    CHECK(sim_sketch_rank(s, 2) >= 200 && sim_sketch_rank(s, 2) <= 1000);
    CHECK(sim_sketch_rank(s, 4) == 5e12);
    CHECK(sim_sketch_rank(s, 99) == 5e12); /* past the count: the max */
    CHECK(sim_sketch_count(s) == 4 && sim_sketch_sum(s) == 400 + 8e12);
    /* Bad arguments. */
    CHECK(sim_sketch_add(s, -1, 1) == SIM_EINVAL);
    CHECK(sim_sketch_add(s, NAN, 1) == SIM_EINVAL);
    CHECK(sim_sketch_add(s, INFINITY, 1) == SIM_EINVAL);
    CHECK(sim_sketch_add(s, 1, 0) == SIM_EINVAL);
    CHECK(sim_sketch_add(NULL, 1, 1) == SIM_EINVAL);
    CHECK(sim_sketch_count(s) == 4);
    sim_sketch_destroy(s);
    CHECK(sim_sketch_create(0, 1, R) == NULL);
    CHECK(sim_sketch_create(1, 1, R) == NULL);
    CHECK(sim_sketch_create(1, 10, 1) == NULL);
    CHECK(sim_sketch_create(1, INFINITY, R) == NULL);
    CHECK(sim_sketch_create(1e-300, 1e300, 1.0000000001) == NULL); /* too many bins */
    sim_sketch_destroy(NULL);
}

static const test_case cases[] = {
    {"against_exact", test_against_exact},
    {"is_approximate", test_is_approximate},
    {"merge", test_merge},
    {"edges", test_edges},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_sketch", cases);
}
