/* bench_search — how fast `servesim search` decides a space.
 *
 *   bench_search [SCENARIO] [--threads N] [--no-prune] [--repeat R]
 *   mpirun -np 2 bench_search SCENARIO --threads 1     (MPI build)
 *
 * Default scenario: scenarios/recommend-llama70b-h100.yaml (2816
 * candidates, Llama-3.1-70B on H100, up to 32 GPUs). Prints one line per
 * repeat: candidates, how many were infeasible / pruned / simulated, the
 * simulations run, wall time, and simulations per second; the best wall
 * time last. Scaling efficiency over MPI ranks is T(1 rank) / (N · T(N
 * ranks)) with the same --threads. */
#include "sim_loader.h"
#include "sim_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *path = "scenarios/recommend-llama70b-h100.yaml";
    int threads = 0, no_prune = 0, repeat = 1, rc = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-prune") == 0) no_prune = 1;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
        else path = argv[i];
    }
    int mpi = getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK") || getenv("PMIX_RANK");
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    if (!sc || sim_loader_load_file(path, NULL, 0, sc, &err) < 0) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        goto out;
    }
    double best = 1e300;
    int rank0 = 1;
    for (int r = 0; r < repeat; r++) {
        sim_search *s = NULL;
        sim_search_opts o = {.threads = threads, .no_prune = no_prune, .use_mpi = mpi};
        if (sim_search_create(sc, &o, &s, &err) < 0 || sim_search_run(s, &err) < 0) {
            fprintf(stderr, "bench_search: %s\n", err.msg);
            sim_search_destroy(s);
            goto out;
        }
        sim_search_stats st;
        sim_search_stats_get(s, &st);
        int32_t w = -1;
        sim_search_ranking(s, &w, 1);
        if (st.rank == 0)
            printf("%s: %lld candidates, %lld infeasible, %lld pruned, %lld simulated, %lld simulations, "
                   "%.2f s wall, %.0f sims/s, %d ranks x %d threads; winner: %s\n",
                   path, (long long)st.candidates, (long long)st.infeasible, (long long)st.pruned,
                   (long long)st.evaluated, (long long)st.simulations, st.wall_s, st.simulations / st.wall_s,
                   (int)st.ranks, (int)(st.workers / st.ranks), w >= 0 ? sim_search_cand_get(s, w)->label : "none");
        if (st.wall_s < best) best = st.wall_s;
        rank0 = st.rank == 0;
        sim_search_destroy(s);
    }
    if (rank0) printf("best wall: %.3f s\n", best);
    rc = 0;
out:
    free(sc);
    if (mpi) sim_search_mpi_finish();
    return rc;
}
