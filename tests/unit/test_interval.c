/* test_interval — Student-t confidence intervals over replications
 * (sim_interval.h) and the replication seeds (sim_rng_replication_seed).
 *
 * Hand values: the t quantile and the interval of {1, 2, 3, 4, 5}.
 * Coverage: M/M/1 at rho = 0.5 (lambda 0.5, mu 1) started in its
 * stationary state (the wait of the first customer drawn from the
 * stationary law: 0 with probability 1 − rho, else Exp(mu − lambda)), so
 * every customer's wait, W_{k+1} = max(0, W_k + S_k − A_{k+1}) (Lindley),
 * has the stationary mean Wq = rho / (mu − lambda) = 1 exactly and the mean
 * over a short run is an unbiased estimate. 200 intervals, each over 10
 * replications of 2000 customers with the seeds servesim derives, must
 * cover Wq about 95 % of the time: 200 × 0.95 = 190, binomial sd 3.08, so
 * 181..199 (within 3 sd). The seeds are fixed, so the count is exact and
 * repeatable (printed). */
#include "sim_err.h"
#include "sim_interval.h"
#include "sim_rng.h"
#include "test_util.h"

#include <gsl/gsl_randist.h>
#include <math.h>

static void case_hand_values(void)
{
    const double x[] = {1, 2, 3, 4, 5};
    sim_interval iv;
    REQUIRE(sim_interval_t(x, 5, 0.95, &iv) == 0);
    /* t(0.975, 4) = 2.776445105; sd = sqrt(2.5) */
    double hw = 2.776445105 * sqrt(2.5) / sqrt(5.0);
    CHECK_NEAR(iv.mean, 3, 1e-12);
    CHECK_NEAR(iv.sd, sqrt(2.5), 1e-12);
    CHECK_NEAR(iv.half_width, hw, 1e-8);
    CHECK_NEAR(iv.low, 3 - hw, 1e-8);
    CHECK_NEAR(iv.high, 3 + hw, 1e-8);
    CHECK(iv.n == 5);
    /* 90 %: t(0.95, 4) = 2.131846786 */
    REQUIRE(sim_interval_t(x, 5, 0.90, &iv) == 0);
    CHECK_NEAR(iv.half_width, 2.131846786 * sqrt(2.5) / sqrt(5.0), 1e-8);
    /* Constant figures: a zero-width interval. */
    const double c[] = {7, 7, 7};
    REQUIRE(sim_interval_t(c, 3, 0.95, &iv) == 0);
    CHECK(iv.half_width == 0 && iv.low == 7 && iv.high == 7);
}

static void case_refusals(void)
{
    const double x[] = {1, NAN, 3};
    sim_interval iv;
    CHECK(sim_interval_t(x, 1, 0.95, &iv) == SIM_EINVAL);
    CHECK(iv.n == 1 && iv.half_width == 0);
    CHECK(sim_interval_t(x, 3, 0.95, &iv) == SIM_EINVAL);
    CHECK(sim_interval_t(x, 1, 1.0, &iv) == SIM_EINVAL);
    const double y[] = {1, 2};
    CHECK(sim_interval_t(y, 2, 0, &iv) == SIM_EINVAL);
    CHECK(sim_interval_t(y, 2, 0.5, &iv) == 0);
}

static void case_overlap(void)
{
    sim_interval a = {.low = 1, .high = 2}, b = {.low = 2, .high = 3}, c = {.low = 2.5, .high = 4};
    CHECK(sim_interval_overlap(&a, &b));
    CHECK(sim_interval_overlap(&b, &a));
    CHECK(!sim_interval_overlap(&a, &c));
    CHECK(sim_interval_overlap(&c, &b));
}

static void case_seeds(void)
{
    /* Distinct, below 2^53, a pure function of (seed, i). */
    uint64_t s[64];
    for (int i = 0; i < 64; i++) {
        s[i] = sim_rng_replication_seed(42, (uint64_t)i);
        CHECK(s[i] < (UINT64_C(1) << 53));
        CHECK(s[i] == sim_rng_replication_seed(42, (uint64_t)i));
        for (int j = 0; j < i; j++) CHECK(s[i] != s[j]);
    }
    CHECK(sim_rng_replication_seed(43, 0) != s[0]);
}

/* Mean wait over n customers of a stationary M/M/1 (lambda, mu = 1). */
static double mm1_mean_wait(uint64_t seed, double lambda, int n)
{
    gsl_rng *r = sim_rng_create(seed, "mm1", 0);
    if (!r) return NAN;
    const double mu = 1, rho = lambda / mu;
    double w = gsl_rng_uniform(r) < rho ? gsl_ran_exponential(r, 1 / (mu - lambda)) : 0, sum = 0;
    for (int k = 0; k < n; k++) {
        sum += w;
        double s = gsl_ran_exponential(r, 1 / mu), a = gsl_ran_exponential(r, 1 / lambda);
        w = w + s - a > 0 ? w + s - a : 0;
    }
    gsl_rng_free(r);
    return sum / n;
}

static void case_mm1_coverage(void)
{
    enum { INTERVALS = 200, REPS = 10, CUSTOMERS = 2000 };
    const double lambda = 0.5, wq = lambda / (1 - lambda); /* rho / (mu − lambda), mu = 1 */
    int covered = 0;
    double width = 0;
    for (int k = 0; k < INTERVALS; k++) {
        double x[REPS];
        for (int i = 0; i < REPS; i++)
            x[i] = mm1_mean_wait(sim_rng_replication_seed(1000 + (uint64_t)k, (uint64_t)i), lambda, CUSTOMERS);
        sim_interval iv;
        REQUIRE(sim_interval_t(x, REPS, 0.95, &iv) == 0);
        covered += iv.low <= wq && wq <= iv.high;
        width += iv.half_width / INTERVALS;
    }
    printf("  M/M/1 rho 0.5: %d of %d intervals (10 x 2000 customers) contain Wq = %g; mean half-width %.3f\n",
           covered, INTERVALS, wq, width);
    CHECK(covered >= 181 && covered <= 199);
}

static const test_case cases[] = {
    {"hand_values", case_hand_values},
    {"refusals", case_refusals},
    {"overlap", case_overlap},
    {"seeds", case_seeds},
    {"mm1_coverage", case_mm1_coverage},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_interval", cases);
}
