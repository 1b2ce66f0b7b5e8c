/* test_op_params — hardware.op_params_gpu: the op model's fitted sets of
 * another GPU's measured tables price a deployment, as if its own GPU had
 * never been measured (the end-to-end cross-GPU check of README's
 * "Cross-GPU, end to end").
 *
 * - model_op_params_from: a catalogue GPU with tables of its own names
 *   them (b200 → b200_sxm), "" clears the choice, a GPU without tables
 *   (h200-sxm: priced with its architecture's) or an unknown name fails;
 *   model_op_table_gpu follows the choice.
 * - One TensorRT-LLM instance of Llama-3.1-8B on a B200 (op-model prices,
 *   no perf-db), 16 requests of 512 prompt and 64 output tokens: priced
 *   with the H100 sets its TTFT and TPOT differ from its own (B200) sets';
 *   naming its own GPU changes nothing, to the nanosecond.
 * - The key: a GPU without tables of its own or an unknown name fails the
 *   build with the key path. */
#include "model_op.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_scenario.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <math.h>
#include <string.h>

static void test_from(void)
{
    model_gpu g;
    sim_err err = {{0}};
    REQUIRE(model_catalog_gpu("b200", &g, &err) == 0);
    CHECK(!strcmp(model_op_table_gpu(&g), "b200_sxm"));
    CHECK(model_op_params_from(&g, "h100-sxm", &err) == 0);
    CHECK(!strcmp(g.op_params_table, "h100_sxm"));
    CHECK(!strcmp(model_op_table_gpu(&g), "h100_sxm"));
    CHECK(model_op_params_from(&g, "a100_sxm", &err) == 0); /* an alias */
    CHECK(!strcmp(model_op_table_gpu(&g), "a100_sxm"));
    CHECK(model_op_params_from(&g, "", &err) == 0);
    CHECK(!strcmp(model_op_table_gpu(&g), "b200_sxm"));
    CHECK(model_op_params_from(&g, "h200-sxm", &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "'h200-sxm' has no measured per-op tables of its own");
    CHECK(!g.op_params_table[0]); /* a failed choice leaves none */
    CHECK(model_op_params_from(&g, "nope", &err) < 0);
    CHECK_CONTAINS(err.msg, "nope");
}

static int load(const char *params_gpu, sim_scenario *sc, sim_err *err)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\nseed: 3\n"
             "hardware: {gpu: b200, perf_db: none, op_params_gpu: '%s'}\n"
             "deployment: {pools: [{parallel: {tp: 1}, scheduler: {preset: trtllm}}]}\n"
             "workload: {requests: 16, arrival: {process: closed_loop, concurrency: 16},\n"
             "  input_tokens: {dist: fixed, value: 512}, output_tokens: {dist: fixed, value: 64}}\n",
             params_gpu);
    return sim_loader_load_string(yaml, strlen(yaml), "op_params.yaml", NULL, 0, sc, err);
}

static void test_run_priced(void)
{
    sim_scenario sc;
    sim_err err = {{0}};
    run_result own, named, h100;
    REQUIRE_MSG(load("", &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &own) == 0);
    REQUIRE_MSG(load("b200", &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &named) == 0);
    REQUIRE_MSG(load("h100-sxm", &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &h100) == 0);
    CHECK(own.n == 16 && named.n == 16 && h100.n == 16);
    CHECK_MSG(own.sum.ttft_ms.mean == named.sum.ttft_ms.mean && own.sum.tpot_ms.mean == named.sum.tpot_ms.mean,
              "own sets %.9g/%.9g ms, named %.9g/%.9g ms", own.sum.ttft_ms.mean, own.sum.tpot_ms.mean, named.sum.ttft_ms.mean,
              named.sum.tpot_ms.mean);
    /* Other fitted sets, other prices (both stay physical). */
    CHECK_MSG(fabs(h100.sum.tpot_ms.mean / own.sum.tpot_ms.mean - 1) > 0.01, "TPOT %.6g ms with H100 sets, %.6g ms own",
              h100.sum.tpot_ms.mean, own.sum.tpot_ms.mean);
    CHECK(h100.sum.ttft_ms.mean > 0 && h100.sum.tpot_ms.mean > 0 && isfinite(h100.sum.ttft_ms.mean));
    free(own.recs), free(named.recs), free(h100.recs);
}

static void test_key_errors(void)
{
    sim_scenario sc;
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    REQUIRE_MSG(load("h200-sxm", &sc, &err) == 0, "%s", err.msg);
    CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "hardware.op_params_gpu");
    CHECK_CONTAINS(err.msg, "no measured per-op tables");
    sim_cluster_destroy(c);
    c = NULL;
    REQUIRE_MSG(load("x999", &sc, &err) == 0, "%s", err.msg);
    CHECK(sim_cluster_create(&sc, &c, &err) < 0);
    CHECK_CONTAINS(err.msg, "hardware.op_params_gpu");
    sim_cluster_destroy(c);
}

static const test_case cases[] = {
    {"from", test_from},
    {"run_priced", test_run_priced},
    {"key_errors", test_key_errors},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_op_params", cases);
}
