/* bench_sim — simulator speed on a large colocated cluster.
 *
 * Default: 1,000,000 requests (lognormal prompts, mean 1024 tokens; 256
 * output tokens) over 64 Llama-3.1-8B instances on H100 (TP1), Poisson at
 * 1,280 req/s (20 per instance), least-loaded routing, no results DB. Prints wall time, peak
 * RSS, simulated requests and events per wall second. Usage:
 *   bench_sim [requests] [instances] [rate] [policy] [request_records]
 *   bench_sim --sweep [requests_per_instance] [policy]
 * --sweep runs 64, 256, 1,024 and 4,096 instances at 20 req/s each with the
 * same requests per instance (default 400) and prints one row each: the
 * CPU ns per event is the figure that must stay flat as the cluster grows
 * (CPU, not wall, time: on a shared machine wall time counts others' turns).
 * policy: least_loaded (default), power_of_two, round_robin, random.
 * request_records: output.request_records (default 1,000,000: past it the
 * run keeps no more records and reads percentiles from sketches, so peak
 * RSS stops growing with the requests; give the request count to keep
 * every record and get exact percentiles). 
 * Run it pinned to one core for the README figure: taskset -c 0 bench_sim */
#include "sim_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static sim_route_policy policy_of(const char *name)
{
    if (!name || strcmp(name, "least_loaded") == 0) return SIM_ROUTE_LEAST_LOADED;
    if (strcmp(name, "power_of_two") == 0) return SIM_ROUTE_POWER_OF_TWO;
    if (strcmp(name, "round_robin") == 0) return SIM_ROUTE_ROUND_ROBIN;
    if (strcmp(name, "random") == 0) return SIM_ROUTE_RANDOM;
    fprintf(stderr, "bench_sim: unknown policy '%s' (least_loaded, power_of_two, round_robin, random)\n", name);
    exit(2);
}

/* CPU seconds of this process: on a shared machine wall time also counts
 * other processes' turns, CPU time only this one's. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

/* One run; fills *s and *st. Returns 0, or 1 after printing the error. */
static int run_one(int64_t requests, int32_t instances, double rate, sim_route_policy policy, int64_t records,
                   sim_summary *s, sim_cluster_state *st)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    if (records >= 0) sc.output.request_records = records;
    snprintf(sc.name, sizeof sc.name, "bench");
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "h100-sxm");
    sc.workload.requests = requests;
    sc.workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc.workload.arrival.rate = rate;
    sc.workload.input_tokens.dist = SIM_DIST_LOGNORMAL;
    sc.workload.input_tokens.mean = 1024;
    sc.workload.input_tokens.std = 512;
    sc.workload.input_tokens.min = 1;
    sc.workload.input_tokens.max = 32768;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 256;
    sc.deployment.pools[0].instances = instances;
    sc.routing.policy = policy;
    sc.output.sample_interval_s = 1.0;

    sim_err err = {{0}};
    sim_cluster *c = NULL;
    if (sim_cluster_create(&sc, &c, &err) < 0) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    if (sim_cluster_run(c, s, &err) < 0) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        sim_cluster_destroy(c);
        return 1;
    }
    sim_cluster_state_get(c, st);
    sim_cluster_destroy(c);
    return 0;
}

static int sweep(int64_t per_instance, sim_route_policy policy)
{
    const int32_t sizes[] = {64, 256, 1024, 4096};
    printf("%9s %10s %11s %9s %9s %13s %12s\n", "instances", "requests", "events", "wall_s", "cpu_s", "cpu_ns/event",
           "vs_64");
    double base = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        sim_summary s;
        sim_cluster_state st;
        double c0 = cpu_s();
        if (run_one(per_instance * sizes[i], sizes[i], 20.0 * sizes[i], policy, -1, &s, &st)) return 1;
        double cpu = cpu_s() - c0; /* set-up and summary included */
        double ns = cpu * 1e9 / (double)(s.events ? s.events : 1);
        if (i == 0) base = ns;
        printf("%9d %10lld %11llu %9.2f %9.2f %13.0f %11.2fx%s\n", sizes[i], (long long)s.requests_completed,
               (unsigned long long)s.events, s.wall_time_s, cpu, ns, ns / base, s.overloaded ? " (OVERLOADED)" : "");
        fflush(stdout);
    }
    printf("peak RSS            %.1f MB (largest run)\n", peak_rss_mb());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--sweep") == 0)
        return sweep(argc > 2 ? atoll(argv[2]) : 400, policy_of(argc > 3 ? argv[3] : NULL));
    int64_t requests = argc > 1 ? atoll(argv[1]) : 1000000;
    int32_t instances = argc > 2 ? atoi(argv[2]) : 64;
    double rate = argc > 3 ? atof(argv[3]) : 20.0 * instances;
    sim_route_policy policy = policy_of(argc > 4 ? argv[4] : NULL);
    int64_t records = argc > 5 ? atoll(argv[5]) : -1;

    sim_summary s;
    sim_cluster_state st;
    double c0 = cpu_s();
    if (run_one(requests, instances, rate, policy, records, &s, &st)) return 1;
    double cpu = cpu_s() - c0;
    printf("requests            %lld over %d instances at %.0f req/s%s\n", (long long)s.requests_completed,
           instances, rate, s.overloaded ? " (OVERLOADED)" : "");
    printf("tokens simulated    %.3g (input %.3g, output %.3g)\n",
           (double)(st.input_tokens_done + st.output_tokens_done), (double)st.input_tokens_done,
           (double)st.output_tokens_done);
    printf("iterations          %lld (mean batch %.1f decode tokens/iteration)\n", (long long)st.iterations,
           (double)st.output_tokens_done / (double)(st.iterations ? st.iterations : 1));
    printf("simulated time      %.1f s\n", s.sim_time_s);
    printf("wall time           %.3f s (event loop and summary)\n", s.wall_time_s);
    printf("CPU time            %.3f s (with set-up)\n", cpu);
    printf("peak RSS            %.1f MB\n", peak_rss_mb());
    printf("requests / wall s   %.0f\n", s.requests_completed / s.wall_time_s);
    printf("events / wall s     %.0f (%llu events)\n", (double)s.events / s.wall_time_s,
           (unsigned long long)s.events);
    printf("CPU ns / event      %.0f\n", cpu * 1e9 / (double)(s.events ? s.events : 1));
    printf("TTFT p50/p99        %.1f / %.1f ms; TPOT p50/p99 %.2f / %.2f ms\n", s.ttft_ms.p50,
           s.ttft_ms.p99, s.tpot_ms.p50, s.tpot_ms.p99);
    if (s.records.sketch_rel_error > 0)
        printf("records             %lld of %lld requests kept; percentiles from sketches (within %.2g %%)\n",
               (long long)s.records.requests_kept, (long long)s.requests_completed, 100 * s.records.sketch_rel_error);
    else
        printf("records             every request kept; exact percentiles\n");
    return 0;
}
