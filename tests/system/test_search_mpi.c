/* test_search_mpi — `servesim search` spread over 2 MPI ranks gives the
 * same answer as one process (winner, top-k, Pareto frontiers, counts).
 * The test binary is its own MPI program: run by ctest it computes the
 * one-process answer, then starts itself under `mpirun -np 2` in child
 * mode, whose rank 0 writes the answer as JSON. Skipped (exit 77) when
 * servesim was built without MPI or mpirun is missing. */
#include "test_util.h"

#include "sim_loader.h"
#include "sim_search.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *yaml =
    "name: t-search-mpi\n"
    "model: llama-3.1-70b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
    "workload:\n"
    "  arrival: {process: poisson, rate: 5}\n"
    "  input_tokens: {dist: lognormal, mean: 2000, std: 800, min: 64, max: 8000}\n"
    "  output_tokens: {dist: lognormal, mean: 300, std: 100, min: 8, max: 2000}\n"
    "slo: {ttft_ms: 2000, tpot_ms: 60}\n"
    "search:\n"
    "  max_gpus: 16\n"
    "  layouts: \"tp2,tp4,tp8,tp4pp2\"\n"
    "  max_seqs: \"64,256\"\n"
    "  requests: 300\n"
    "  top_k: 4\n";

static int search_json(int use_mpi, const char *out, int *rank)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    int rc = -1;
    if (!sc || sim_loader_load_string(yaml, strlen(yaml), "t", NULL, 0, sc, &err) < 0) goto out;
    sim_search_opts o = {.threads = 1, .use_mpi = use_mpi};
    if (sim_search_create(sc, &o, &s, &err) < 0 || sim_search_run(s, &err) < 0) goto out;
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    *rank = st.rank;
    if (st.rank == 0) {
        FILE *f = fopen(out, "w");
        if (!f) goto out;
        sim_search_write_json(s, f);
        fclose(f);
    }
    rc = 0;
out:
    if (rc < 0) fprintf(stderr, "search: %s\n", err.msg);
    sim_search_destroy(s);
    free(sc);
    return rc;
}

/* The same search in one process and over two MPI ranks gives the same candidates, counts, top list and Pareto fronts. */
static void case_one_process_vs_two_ranks(void)
{
    int rank = 0;
    char one[] = "/tmp/test_search_mpi1_XXXXXX", two[] = "/tmp/test_search_mpi2_XXXXXX";
    int f1 = mkstemp(one), f2 = mkstemp(two);
    CHECK(f1 >= 0 && f2 >= 0);
    close(f1);
    close(f2);
    CHECK(search_json(0, one, &rank) == 0);
    char self[4096], cmd[9000];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n > 0 ? n : 0] = '\0';
    /* Under LeakSanitizer, OpenMPI's own never-freed allocations are
     * suppressed (tests/lsan-mpi.supp; full stacks so the library frames
     * are seen); servesim's stay checked. */
    snprintf(cmd, sizeof cmd,
             "LSAN_OPTIONS=suppressions='%s/tests/lsan-mpi.supp':print_suppressions=0 "
             "ASAN_OPTIONS=fast_unwind_on_malloc=0 "
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -x LSAN_OPTIONS "
             "-x ASAN_OPTIONS "
             "-np 2 '%s' x x --child '%s'",
             test_src_dir(), self, two);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    json_error_t je;
    json_t *a = json_load_file(one, 0, &je), *b = json_load_file(two, 0, &je);
    CHECK(a && b);
    static const char *keys[] = {"candidates", "infeasible", "pruned", "simulated", "meet_slo", "simulations",
                                 "top", "pareto_user", "pareto_ttft"};
    for (size_t k = 0; a && b && k < sizeof keys / sizeof keys[0]; k++) {
        json_t *x = json_object_get(a, keys[k]), *y = json_object_get(b, keys[k]);
        CHECK_MSG(x && y && json_equal(x, y), "'%s' differs between 1 process and 2 ranks", keys[k]);
    }
    CHECK(b && json_integer_value(json_object_get(b, "ranks")) == 2);
    CHECK(a && json_array_size(json_object_get(a, "top")) == 4);
    json_decref(a);
    json_decref(b);
    unlink(one);
    unlink(two);
}

static const test_case cases[] = {
    {"one_process_vs_two_ranks", case_one_process_vs_two_ranks},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    int rank = 0;
    if (argc > 3 && strcmp(argv[3], "--child") == 0) {
        int rc = search_json(1, argv[4], &rank);
        sim_search_mpi_finish();
        return rc < 0 ? 1 : 0;
    }
#ifndef SERVESIM_HAVE_MPI
    return test_skip("test_search_mpi", "servesim built without MPI (SERVESIM_MPI=OFF or OpenMPI not found)");
#endif
    if (system("command -v mpirun > /dev/null 2>&1") != 0) {
        return test_skip("test_search_mpi", "mpirun not found");
    }
    return test_run("test_search_mpi", cases);
}
