/* bench_sim — simulator speed on a large colocated cluster.
 *
 * Default: 1,000,000 requests (lognormal prompts, mean 1024 tokens; 256
 * output tokens) over 64 Llama-3.1-8B instances on H100 (TP1), Poisson at
 * 1,280 req/s (20 per instance), least-loaded routing, no results DB. Prints wall time, peak
 * RSS, simulated requests and events per wall second. Usage:
 *   bench_sim [requests] [instances] [rate]
 * Run it pinned to one core for the README figure: taskset -c 0 bench_sim */
#include "sim_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    int64_t requests = argc > 1 ? atoll(argv[1]) : 1000000;
    int32_t instances = argc > 2 ? atoi(argv[2]) : 64;
    double rate = argc > 3 ? atof(argv[3]) : 20.0 * instances;

    sim_scenario sc;
    sim_scenario_defaults(&sc);
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
    sc.routing.policy = SIM_ROUTE_LEAST_LOADED;
    sc.output.sample_interval_s = 1.0;

    sim_err err = {{0}};
    sim_cluster *c = NULL;
    if (sim_cluster_create(&sc, &c, &err) < 0) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    sim_summary s;
    if (sim_cluster_run(c, &s, &err) < 0) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        sim_cluster_destroy(c);
        return 1;
    }
    sim_cluster_state st;
    sim_cluster_state_get(c, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("requests            %lld over %d instances at %.0f req/s%s\n", (long long)s.requests_completed,
           instances, rate, s.overloaded ? " (OVERLOADED)" : "");
    printf("tokens simulated    %.3g (input %.3g, output %.3g)\n",
           (double)(st.input_tokens_done + st.output_tokens_done), (double)st.input_tokens_done,
           (double)st.output_tokens_done);
    printf("iterations          %lld (mean batch %.1f decode tokens/iteration)\n", (long long)st.iterations,
           (double)st.output_tokens_done / (double)(st.iterations ? st.iterations : 1));
    printf("simulated time      %.1f s\n", s.sim_time_s);
    printf("wall time           %.3f s\n", s.wall_time_s);
    printf("peak RSS            %.1f MB\n", ru.ru_maxrss / 1024.0);
    printf("requests / wall s   %.0f\n", s.requests_completed / s.wall_time_s);
    printf("events / wall s     %.0f (%llu events)\n", (double)s.events / s.wall_time_s,
           (unsigned long long)s.events);
    printf("TTFT p50/p99        %.1f / %.1f ms; TPOT p50/p99 %.2f / %.2f ms\n", s.ttft_ms.p50,
           s.ttft_ms.p99, s.tpot_ms.p50, s.tpot_ms.p99);
    sim_cluster_destroy(c);
    return 0;
}
