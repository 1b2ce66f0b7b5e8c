/* bench_engine — throughput of the discrete-event core (not a test).
 *
 * Hold model: N events pending; each fired event schedules one new event at
 * now + Exp(mean) (increments drawn up front from a GSL stream into a table,
 * so the figure is engine cost, not RNG cost). Reported for N = 1e3, 1e5,
 * 1e6 as millions of events per second after a warm-up of N events.
 * Cancel: N events scheduled then all cancelled (cancel ops/s), followed by
 * the drain of the dead heap records; and a "timer" pattern where each fired
 * event schedules a timeout and a real event and cancels the previous
 * timeout (what a request deadline or batching timer looks like).
 *
 * Usage: bench_engine [events-per-run] (default 1e7). */
#include "sim_engine.h"
#include "sim_rng.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { INC_N = 1 << 16 };

typedef struct {
    sim_time inc[INC_N];
    uint32_t k;
    sim_handle timer;
    sim_time timeout;
} hold_ctx;

static double now_s(void)
{
    struct timespec ts;
    /* CPU time of this (single-threaded) process: robust on a shared box. */
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void hold_fn(sim_engine *eng, void *ctx, uint64_t arg)
{
    hold_ctx *h = ctx;
    sim_engine_after(eng, h->inc[h->k++ & (INC_N - 1)], hold_fn, h, arg);
}

static void timeout_fn(sim_engine *eng, void *ctx, uint64_t arg) {}

/* Hold step plus a timer that is re-armed (cancel + schedule) every event. */
static void timer_fn(sim_engine *eng, void *ctx, uint64_t arg)
{
    hold_ctx *h = ctx;
    sim_engine_cancel(eng, h->timer);
    h->timer = sim_engine_after(eng, h->timeout, timeout_fn, h, 0);
    sim_engine_after(eng, h->inc[h->k++ & (INC_N - 1)], timer_fn, h, arg);
}

static void fill_increments(hold_ctx *h, double mean)
{
    gsl_rng *r = sim_rng_create(1, "bench", 0);
    for (int i = 0; i < INC_N; i++) h->inc[i] = (sim_time)llround(gsl_ran_exponential(r, mean));
    gsl_rng_free(r);
    h->k = 0;
}

static double bench_hold(uint64_t n, uint64_t events, sim_event_fn fn, hold_ctx *h)
{
    sim_engine *eng = sim_engine_create();
    for (uint64_t i = 0; i < n; i++) sim_engine_at(eng, h->inc[h->k++ & (INC_N - 1)] * 4, fn, h, i);
    /* Warm-up: every initial event fires once, so the heap is in its
     * steady-state shape. */
    for (uint64_t i = 0; i < n; i++) sim_engine_step(eng);
    double t0 = now_s();
    uint64_t f0 = sim_engine_events_fired(eng);
    while (sim_engine_events_fired(eng) - f0 < events) sim_engine_step(eng);
    double dt = now_s() - t0;
    sim_engine_destroy(eng);
    return (double)events / dt;
}

static double bench_hold_run(uint64_t n, uint64_t events, hold_ctx *h)
{
    /* Same as bench_hold but driven by one sim_engine_run with stop(). */
    sim_engine *eng = sim_engine_create();
    for (uint64_t i = 0; i < n; i++) sim_engine_at(eng, h->inc[h->k++ & (INC_N - 1)] * 4, hold_fn, h, i);
    for (uint64_t i = 0; i < n; i++) sim_engine_step(eng);
    /* Bound by the clock: the hold model advances ~ n/mean per ns. */
    double t0 = now_s();
    uint64_t f0 = sim_engine_events_fired(eng);
    sim_time horizon = sim_engine_now(eng) + (sim_time)((double)events / (double)n * 1000.0);
    sim_engine_run(eng, horizon);
    double dt = now_s() - t0;
    uint64_t fired = sim_engine_events_fired(eng) - f0;
    sim_engine_destroy(eng);
    return (double)fired / dt;
}

static void bench_cancel(uint64_t n, double *sched_rate, double *cancel_rate, double *drain_rate)
{
    hold_ctx *h = malloc(sizeof *h);
    fill_increments(h, 1000.0);
    sim_engine *eng = sim_engine_create();
    sim_handle *hs = malloc(n * sizeof *hs);
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) hs[i] = sim_engine_at(eng, h->inc[i & (INC_N - 1)] * (sim_time)(i % 7 + 1), timeout_fn, h, i);
    double t1 = now_s();
    /* Cancel in a scattered order (stride coprime with n for n = 10^k). */
    uint64_t stride = 7919, j = 0;
    for (uint64_t i = 0; i < n; i++) {
        sim_engine_cancel(eng, hs[j]);
        j = (j + stride) % n;
    }
    double t2 = now_s();
    sim_engine_run(eng, SIM_TIME_MAX); /* pops n dead records, fires nothing */
    double t3 = now_s();
    *sched_rate = (double)n / (t1 - t0);
    *cancel_rate = (double)n / (t2 - t1);
    *drain_rate = (double)n / (t3 - t2);
    if (sim_engine_pending(eng) != 0 || sim_engine_events_fired(eng) != 0)
        fprintf(stderr, "bench_cancel: engine state wrong after cancelling everything\n");
    sim_engine_destroy(eng);
    free(hs);
    free(h);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? (uint64_t)strtod(argv[1], NULL) : 10000000;
    hold_ctx *h = malloc(sizeof *h);
    if (!h) return 1;
    fill_increments(h, 1000.0);

    printf("servesim engine benchmark (%llu events per hold run, CPU time)\n", (unsigned long long)events);
    /* Dead records are only dropped when they surface: schedule+cancel at a
     * fixed clock grows the heap without bound. Reported as peak RSS. */
    long rss0 = max_rss_kb();
    sim_engine *eng = sim_engine_create();
    const uint64_t churn = 10000000;
    for (uint64_t i = 0; i < churn; i++) {
        sim_handle t = sim_engine_after(eng, SIM_NS_PER_S, timeout_fn, NULL, i);
        sim_engine_cancel(eng, t);
    }
    long rss1 = max_rss_kb();
    printf("schedule+cancel churn without advancing time: %llu ops, pending %llu, peak RSS +%ld MiB\n",
           (unsigned long long)churn, (unsigned long long)sim_engine_pending(eng), (rss1 - rss0) / 1024);
    sim_engine_destroy(eng);

    printf("%-34s %10s %14s\n", "workload", "N pending", "Mevents/s");
    const uint64_t ns[] = {1000, 100000, 1000000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        double r = bench_hold(ns[i], events, hold_fn, h);
        printf("%-34s %10llu %14.2f\n", "hold (step loop)", (unsigned long long)ns[i], r / 1e6);
    }
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        double r = bench_hold_run(ns[i], events, h);
        printf("%-34s %10llu %14.2f\n", "hold (run loop)", (unsigned long long)ns[i], r / 1e6);
    }
    /* Timer re-arm: per fired event one cancel + two schedules. Timeout far
     * beyond the hold horizon, so cancelled timers pile up in the heap
     * until their time comes. */
    h->timer = 0;
    for (size_t i = 0; i < 2; i++) {
        h->timeout = 1000 * 1000; /* 1000x the mean hold increment */
        double r = bench_hold(ns[i], events / 4, timer_fn, h);
        printf("%-34s %10llu %14.2f\n", "hold + timer re-arm (1 cancel/ev)", (unsigned long long)ns[i],
               r / 1e6);
    }

    printf("\n%-10s %16s %16s %16s\n", "N", "schedule Mops/s", "cancel Mops/s", "drain dead Mrec/s");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        double s, c, d;
        bench_cancel(ns[i] * 10, &s, &c, &d);
        printf("%-10llu %16.2f %16.2f %16.2f\n", (unsigned long long)ns[i] * 10, s / 1e6, c / 1e6, d / 1e6);
    }

    free(h);
    return 0;
}
