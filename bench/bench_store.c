/* bench_store — speed of the results database (not a test): one run with
 * N request rows (output.store_requests on, default 100,000) written to a
 * fresh SQLite file in $TMPDIR, three times; prints the CPU and wall seconds
 * of each write (wall includes the file system's sync) and the rows per
 * second of the best by CPU. The requests are hand-made
 * records (the metrics are not the point), so the figure is the store's
 * cost: the run, summary and request inserts in one transaction.
 *
 * Usage: bench_store [requests] */
#include "sim_store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    if (n <= 0) {
        fprintf(stderr, "usage: bench_store [requests > 0]\n");
        return 2;
    }
    sim_metrics *m = sim_metrics_create(2);
    if (!m) return 1;
    for (long i = 0; i < n; i++) {
        sim_req_record r = {0};
        r.id = (uint64_t)(1000 + i);
        r.instance = (int32_t)(i % 2);
        r.input_tokens = 100 + (int32_t)(i % 1000);
        r.output_tokens = 10;
        r.arrival = (sim_time)i * 500 * SIM_NS_PER_MS;
        r.first_scheduled = r.arrival + 2 * SIM_NS_PER_MS;
        r.first_token = r.arrival + 20 * SIM_NS_PER_MS;
        r.finish = r.first_token + 9 * 9 * SIM_NS_PER_MS;
        sim_metrics_add_request(m, &r);
    }
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.output.store_requests = 1;
    sim_summary sum;
    sim_metrics_summarize(m, NULL, 1, &sum, NULL);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char db[4200];
    snprintf(db, sizeof db, "%s/bench_store_%d.db", tmp, (int)getpid());
    double best = 0;
    for (int k = 0; k < 3; k++) {
        unlink(db);
        sim_err err = {{0}};
        sim_store *st = NULL;
        if (sim_store_open(db, &st, &err) != 0) {
            fprintf(stderr, "bench_store: %s\n", err.msg);
            sim_metrics_destroy(m);
            return 1;
        }
        double t0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
        int rc = sim_store_write_run(st, &sc, NULL, NULL, &sum, m, NULL, &err);
        sim_store_close(st);
        double t = clock_s(CLOCK_PROCESS_CPUTIME_ID) - t0, w = clock_s(CLOCK_MONOTONIC) - w0;
        if (rc != 0) {
            fprintf(stderr, "bench_store: %s\n", err.msg);
            break;
        }
        printf("write %d: %ld request rows in %.3f s of CPU, %.3f s wall (%.0f rows/s of CPU)\n", k + 1, n, t, w,
               (double)n / t);
        if (best == 0 || t < best) best = t;
    }
    unlink(db);
    sim_metrics_destroy(m);
    if (best == 0) return 1;
    printf("best: %.0f request rows/s of CPU\n", (double)n / best);
    return 0;
}
