/* test_estimate — `servesim estimate` and `servesim init` as users call
 * them: the estimate equals `servesim run` of the same deployment written as
 * a scenario, layout flags come from the schema table (--tp, --max-seqs)
 * and bad values name the key; init writes a scenario that loads, builds
 * and carries the SLO and search block, and refuses to overwrite. */
#include "test_util.h"

#include "sim_loader.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *bin;

#define sh test_sh

static double num(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_number_value(v);
}

static void test_estimate(void)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s estimate --model llama-3.1-8b --gpu h100-sxm --tp 2 --max-seqs 64 --isl 512 "
             "--osl 64 --concurrency 8 --no-perf-db --json 2>&1", bin);
    CHECK(sh(cmd, &out) == 0);
    json_t *e = json_loads(out, 0, NULL);
    CHECK_MSG(e != NULL, "%s", out);
    free(out);
    /* The same deployment as a scenario under `servesim run`. */
    char yaml[] = "/tmp/test_estimate_XXXXXX";
    int fd = mkstemp(yaml);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("name: estimate\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm, perf_db: none}\n"
          "workload:\n  requests: 200\n  arrival: {process: closed_loop, concurrency: 8}\n"
          "  input_tokens: {dist: fixed, value: 512, max: 512}\n  output_tokens: {dist: fixed, value: 64, max: 64}\n"
          "deployment:\n  mode: colocated\n  pools:\n    - {role: colocated, instances: 1, parallel: {tp: 2}, "
          "scheduler: {max_seqs: 64}}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s --no-db --json --quiet", bin, yaml);
    CHECK(sh(cmd, &out) == 0);
    json_t *r = json_loads(out, 0, NULL);
    free(out);
    unlink(yaml);
    CHECK(e && r);
    if (e && r) {
        CHECK(num(e, "n_gpus", NULL) == 2);
        CHECK(num(e, "requests_completed", NULL) == 200);
        CHECK(num(e, "ttft_ms", "p90") > 0);
        CHECK_NEAR(num(e, "ttft_ms", "p90"), num(r, "ttft_ms", "p90"), 1e-9 * num(r, "ttft_ms", "p90"));
        CHECK_NEAR(num(e, "tpot_ms", "mean"), num(r, "tpot_ms", "mean"), 1e-9 * num(r, "tpot_ms", "mean"));
    }
    json_decref(e);
    json_decref(r);
    /* The table names the units and the deployment. */
    snprintf(cmd, sizeof cmd, "%s estimate --model llama-3.1-8b --gpu h100-sxm --tp 1 --isl 256 --osl 32 --rate 4 "
             "--requests 100 2>&1", bin);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "TTFT");
    CHECK_CONTAINS(out, "tok/s/GPU");
    CHECK_CONTAINS(out, "Poisson 4 req/s");
    free(out);
    /* Bad input: exit 2 with what was wrong. */
    snprintf(cmd, sizeof cmd, "%s estimate --model llama-3.1-8b --gpu h100-sxm --max-seqs abc --isl 1 --osl 1 "
             "--rate 1 2>&1", bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "scheduler.max_seqs");
    free(out);
    snprintf(cmd, sizeof cmd, "%s estimate --model llama-3.1-8b --gpu h100-sxm --tpp 2 --isl 1 --osl 1 --rate 1 2>&1",
             bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "unknown option '--tpp'");
    CHECK_CONTAINS(out, "--tp");
    free(out);
    snprintf(cmd, sizeof cmd, "%s estimate --model llama-3.1-8b --gpu h100-sxm --isl 1 --osl 1 2>&1", bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--concurrency or --rate");
    free(out);
}

static void test_init(void)
{
    char dir[] = "/tmp/test_init_XXXXXX", cmd[2048], path[256], *out = NULL;
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cd %s && %s init --model llama-3.1-70b --gpu h100-sxm --slo-ttft 1500 --slo-tpot 40 "
             "--gpus 16 2>&1", dir, bin);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "wrote llama-3.1-70b-h100-sxm.yaml");
    free(out);
    snprintf(path, sizeof path, "%s/llama-3.1-70b-h100-sxm.yaml", dir);
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    CHECK_MSG(sim_loader_load_file(path, NULL, 0, sc, &err) == 0, "%s", err.msg);
    CHECK_NEAR(sc->slo.ttft_ms, 1500, 0);
    CHECK_NEAR(sc->slo.tpot_ms, 40, 0);
    CHECK(sc->search.max_gpus == 16);
    CHECK(sc->deployment.pools[0].parallel.tp == 2); /* 141 GB of weights: tp1 does not fit an H100 */
    free(sc);
    snprintf(cmd, sizeof cmd, "%s validate %s > /dev/null", bin, path);
    CHECK(sh(cmd, NULL) == 0);
    /* Not overwritten without --force. */
    snprintf(cmd, sizeof cmd, "cd %s && %s init --model llama-3.1-70b --gpu h100-sxm --slo-ttft 1 --slo-tpot 1 2>&1",
             dir, bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--force");
    free(out);
    snprintf(cmd, sizeof cmd, "%s init --model llama-3.1-8b --gpu h200-sx --slo-ttft 1 --slo-tpot 1 -o %s/x.yaml 2>&1",
             bin, dir);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "did you mean 'h200-sxm'");
    free(out);
    snprintf(cmd, sizeof cmd, "%s init --model llama-3.1-8b --gpu h100-sxm --slo-ttft abc --slo-tpot 1 2>&1", bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--slo-ttft");
    free(out);
    unlink(path);
    rmdir(dir);
}

static const test_case cases[] = {
    {"estimate", test_estimate},
    {"init", test_init},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    bin = argc > 1 ? argv[1] : "servesim";
    return test_run("test_estimate", cases);
}
