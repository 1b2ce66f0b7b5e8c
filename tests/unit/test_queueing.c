/* test_queueing — validates the engine end to end against queueing theory.
 *
 * FIFO queues with c identical servers are built from two event kinds
 * (arrival, departure) on sim_engine, with separate GSL streams for
 * interarrival and service times. After a warm-up, the mean wait in queue is
 * compared with theory:
 *   M/M/1, rho=0.8:  Wq = rho / (mu - lambda)            (within 2%)
 *   M/D/1, rho=0.8:  Wq = rho / (2 mu (1 - rho))          (P-K, within 2%)
 *   M/M/4, rho=0.7:  Wq = ErlangC(c, a) / (c mu - lambda)  (within 2%)
 * and Little's law L = lambda W is checked on the simulated sample path
 * (time-average number in system, integrated over events, vs observed
 * arrival rate times mean sojourn; within 1%).
 *
 * Statistical margins: the tolerance must be several standard errors. The
 * asymptotic variance of the M/M/1 mean-wait estimator (Whitt 1989) is
 * rho(2+5rho-4rho^2+rho^3)/(mu^2 (1-rho)^4) ~ 1976/mu^2 at rho=0.8, so with
 * n = 4e6 customers the relative standard error is ~0.56% and 2% is ~3.6
 * sigma. Each run also prints a 20-batch-means standard error so a report
 * can state the observed margin. The full customer counts are used under
 * ASan+UBSan too (~12 s there, ~2 s in Release). */
#include "sim_engine.h"
#include "sim_rng.h"
#include "test_util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <stdint.h>
#include <stdlib.h>

enum { SVC_EXP = 0, SVC_DET = 1 };
enum { NBATCH = 20 };

typedef struct {
    /* configuration */
    int servers;
    int svc_kind;
    double mean_ia_ns, mean_svc_ns;
    uint64_t n_total, n_warm;
    gsl_rng *r_arr, *r_svc;
    /* state */
    uint64_t arrived;     /* arrivals so far */
    int busy;             /* busy servers */
    uint64_t in_system;   /* N(t) */
    uint64_t *fifo;       /* waiting customers' codes (ring buffer) */
    size_t fifo_cap, fifo_head, fifo_n;
    /* measurement window [t0, t1]: from the first measured arrival to the
     * last arrival */
    sim_time t0, t1, t_last;
    double area;          /* integral of N(t) dt over [t0, now] in ns */
    double area_t1;       /* same, frozen at t1 */
    uint64_t n_meas_arr;  /* measured arrivals */
    uint64_t n_wait;      /* measured customers whose service started */
    double sum_wait, sum_soj;
    uint64_t n_soj;
    double batch_sum[NBATCH];
    uint64_t batch_n[NBATCH];
    uint64_t max_in_system;
    int oom;
} queue_sim;

/* A customer is coded as (arrival time << 1) | measured. */
static uint64_t code_make(sim_time a, int measured) { return ((uint64_t)a << 1) | (uint64_t)measured; }
static sim_time code_time(uint64_t c) { return (sim_time)(c >> 1); }
static int code_measured(uint64_t c) { return (int)(c & 1); }

static sim_time draw_ns(gsl_rng *r, double mean) { return (sim_time)llround(gsl_ran_exponential(r, mean)); }

static void on_departure(sim_engine *eng, void *ctx, uint64_t arg);

/* Advances the N(t) integral to now (only inside the measurement window). */
static void integrate(queue_sim *q, sim_time now)
{
    if (q->n_meas_arr > 0) q->area += (double)q->in_system * (double)(now - q->t_last);
    q->t_last = now;
}

static void start_service(sim_engine *eng, queue_sim *q, uint64_t code)
{
    sim_time now = sim_engine_now(eng);
    if (code_measured(code)) {
        double w = (double)(now - code_time(code));
        q->sum_wait += w;
        uint64_t per = (q->n_total - q->n_warm + NBATCH - 1) / NBATCH;
        size_t b = (size_t)(q->n_wait / per);
        if (b >= NBATCH) b = NBATCH - 1;
        q->batch_sum[b] += w;
        q->batch_n[b]++;
        q->n_wait++;
    }
    q->busy++;
    sim_time s = q->svc_kind == SVC_DET ? (sim_time)llround(q->mean_svc_ns) : draw_ns(q->r_svc, q->mean_svc_ns);
    if (!sim_engine_after(eng, s, on_departure, q, code)) q->oom = 1;
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg)
{
    queue_sim *q = ctx;
    sim_time now = sim_engine_now(eng);
    integrate(q, now);
    int measured = q->arrived >= q->n_warm;
    if (measured) {
        if (q->n_meas_arr == 0) q->t0 = q->t_last = now;
        q->n_meas_arr++;
    }
    q->arrived++;
    q->in_system++;
    if (q->in_system > q->max_in_system) q->max_in_system = q->in_system;
    uint64_t code = code_make(now, measured);
    if (q->busy < q->servers) {
        start_service(eng, q, code);
    } else {
        if (q->fifo_n == q->fifo_cap) { /* grow the ring, unwrapping it */
            size_t nc = q->fifo_cap ? 2 * q->fifo_cap : 1024;
            uint64_t *nf = malloc(nc * sizeof *nf);
            if (!nf) {
                q->oom = 1;
                sim_engine_stop(eng);
                return;
            }
            for (size_t i = 0; i < q->fifo_n; i++) nf[i] = q->fifo[(q->fifo_head + i) % q->fifo_cap];
            free(q->fifo);
            q->fifo = nf;
            q->fifo_cap = nc;
            q->fifo_head = 0;
        }
        q->fifo[(q->fifo_head + q->fifo_n) % q->fifo_cap] = code;
        q->fifo_n++;
    }
    if (q->arrived < q->n_total) {
        if (!sim_engine_after(eng, draw_ns(q->r_arr, q->mean_ia_ns), on_arrival, q, 0)) q->oom = 1;
    } else {
        q->t1 = now;
        q->area_t1 = q->area;
    }
}

static void on_departure(sim_engine *eng, void *ctx, uint64_t code)
{
    queue_sim *q = ctx;
    sim_time now = sim_engine_now(eng);
    integrate(q, now);
    if (code_measured(code)) {
        q->sum_soj += (double)(now - code_time(code));
        q->n_soj++;
    }
    q->in_system--;
    q->busy--;
    if (q->fifo_n > 0) {
        uint64_t next = q->fifo[q->fifo_head];
        q->fifo_head = (q->fifo_head + 1) % q->fifo_cap;
        q->fifo_n--;
        start_service(eng, q, next);
    }
}

typedef struct {
    double wq, wq_se;   /* mean wait in queue (in service-time units) and batch-means SE */
    double w;           /* mean sojourn (service-time units) */
    double L;           /* time-average number in system over the window */
    double lambda_obs;  /* measured arrivals / window length (per service time) */
    uint64_t n;         /* measured customers */
    uint64_t events;    /* engine events fired */
} queue_result;

static int run_queue(uint64_t seed, int servers, int svc_kind, double rho, uint64_t n_total,
                     uint64_t n_warm, queue_result *res)
{
    queue_sim q = {0};
    q.servers = servers;
    q.svc_kind = svc_kind;
    q.mean_svc_ns = 1e6; /* 1 ms mean service: mu = 1 per ms */
    q.mean_ia_ns = q.mean_svc_ns / (rho * servers);
    q.n_total = n_total;
    q.n_warm = n_warm;
    q.r_arr = sim_rng_create(seed, "arrival", 0);
    q.r_svc = sim_rng_create(seed, "service", 0);
    sim_engine *eng = sim_engine_create();
    if (!q.r_arr || !q.r_svc || !eng) return -1;

    sim_engine_at(eng, draw_ns(q.r_arr, q.mean_ia_ns), on_arrival, &q, 0);
    sim_engine_run(eng, SIM_TIME_MAX);

    int ok = !q.oom && q.in_system == 0 && q.busy == 0 && q.fifo_n == 0 &&
             q.n_wait == n_total - n_warm && q.n_soj == n_total - n_warm &&
             q.n_meas_arr == n_total - n_warm && sim_engine_pending(eng) == 0;
    double unit = q.mean_svc_ns;
    res->n = q.n_wait;
    res->wq = q.sum_wait / (double)q.n_wait / unit;
    res->w = q.sum_soj / (double)q.n_soj / unit;
    double span = (double)(q.t1 - q.t0);
    res->L = q.area_t1 / span;
    res->lambda_obs = (double)q.n_meas_arr / span * unit;
    double bm[NBATCH];
    for (int b = 0; b < NBATCH; b++) bm[b] = q.batch_n[b] ? q.batch_sum[b] / (double)q.batch_n[b] / unit : 0;
    res->wq_se = gsl_stats_sd(bm, 1, NBATCH) / sqrt((double)NBATCH);
    res->events = sim_engine_events_fired(eng);

    sim_engine_destroy(eng);
    gsl_rng_free(q.r_arr);
    gsl_rng_free(q.r_svc);
    free(q.fifo);
    return ok ? 0 : -1;
}

/* Erlang C: probability an arrival waits in M/M/c with offered load a. */
static double erlang_c(int c, double a)
{
    double term = 1, sum = 1; /* k = 0 */
    for (int k = 1; k < c; k++) {
        term *= a / k;
        sum += term;
    }
    double top = term * a / c / (1 - a / c); /* a^c / c! / (1 - rho) */
    return top / (sum + top);
}

static void report(const char *name, const queue_result *r, double theory, double tol_rel)
{
    double err = (r->wq - theory) / theory;
    printf("%-6s n=%llu  Wq=%.5f  theory=%.5f  err=%+.3f%%  (batch SE %.3f%%, tol %.2f%%)  "
           "%llu events\n",
           name, (unsigned long long)r->n, r->wq, theory, 100 * err, 100 * r->wq_se / theory,
           100 * tol_rel, (unsigned long long)r->events);
    CHECK_MSG(fabs(err) <= tol_rel, "%s: mean wait %.5f vs theory %.5f (%.3f%% off, tol %.2f%%)", name,
              r->wq, theory, 100 * err, 100 * tol_rel);
}

/* Customers left out of the averages while the queue warms up. */
static const uint64_t warm = 100000;

static void case_mm1(void)
{
    queue_result r;
    /* M/M/1, rho = 0.8. */
    double rho = 0.8;
    int rc = run_queue(1, 1, SVC_EXP, rho, 4000000 + warm, warm, &r);
    CHECK_MSG(rc == 0, "M/M/1 run left inconsistent state");
    CHECK(r.n >= 1000000);
    double wq_mm1 = rho / (1 - rho); /* rho/(mu - lambda) with mu = 1 */
    report("M/M/1", &r, wq_mm1, 0.02);

    /* Little's law on the same sample path: L = lambda W. */
    double lw = r.lambda_obs * r.w;
    printf("Little M/M/1: L=%.5f  lambda*W=%.5f  diff=%+.4f%%  (theory L=%.4f)\n", r.L, lw,
           100 * (r.L - lw) / lw, rho / (1 - rho));
    CHECK_MSG(fabs(r.L - lw) <= 0.01 * lw, "Little's law: L=%.5f vs lambda*W=%.5f", r.L, lw);
    CHECK_NEAR(r.w - r.wq, 1.0, 0.01); /* mean service time is 1 */
    CHECK_NEAR(r.lambda_obs, rho, 0.01 * rho);
}

static void case_md1(void)
{
    queue_result r;
    /* M/D/1, rho = 0.8: Pollaczek-Khinchine. */
    double rho = 0.8;
    int rc = run_queue(2, 1, SVC_DET, rho, 2000000 + warm, warm, &r);
    CHECK_MSG(rc == 0, "M/D/1 run left inconsistent state");
    CHECK(r.n >= 1000000);
    double wq_md1 = rho / (2 * (1 - rho));
    report("M/D/1", &r, wq_md1, 0.02);
    CHECK_NEAR(r.w - r.wq, 1.0, 1e-6); /* deterministic service */
    double lw = r.lambda_obs * r.w;
    printf("Little M/D/1: L=%.5f  lambda*W=%.5f  diff=%+.4f%%\n", r.L, lw, 100 * (r.L - lw) / lw);
    CHECK_MSG(fabs(r.L - lw) <= 0.01 * lw, "Little's law (M/D/1): L=%.5f vs lambda*W=%.5f", r.L, lw);
}

static void case_mm4(void)
{
    queue_result r;
    /* M/M/4, rho = 0.7: Erlang C. */
    int c = 4;
    double rho = 0.7;
    int rc = run_queue(3, c, SVC_EXP, rho, 4000000 + warm, warm, &r);
    CHECK_MSG(rc == 0, "M/M/4 run left inconsistent state");
    CHECK(r.n >= 1000000);
    double a = rho * c;
    double wq_mmc = erlang_c(c, a) / (c - a);
    report("M/M/4", &r, wq_mmc, 0.02);
    double lw = r.lambda_obs * r.w;
    printf("Little M/M/4: L=%.5f  lambda*W=%.5f  diff=%+.4f%%  (theory L=%.4f)\n", r.L, lw,
           100 * (r.L - lw) / lw, a + (a / c) * wq_mmc * c);
    CHECK_MSG(fabs(r.L - lw) <= 0.01 * lw, "Little's law (M/M/4): L=%.5f vs lambda*W=%.5f", r.L, lw);

    /* The estimator must be able to fail: theory for the wrong load is far
     * outside the tolerance (guards against a vacuous comparison). */
    CHECK(fabs(r.wq - erlang_c(c, 0.75 * c) / (c - 0.75 * c)) > 0.1 * r.wq);
}

static const test_case cases[] = {
    {"mm1", case_mm1},
    {"md1", case_md1},
    {"mm4", case_mm4},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_queueing", cases);
}
