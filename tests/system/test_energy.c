/* test_energy — the energy model (sim/metrics/sim_energy.h) end to end:
 * the busy rule and the totals by hand; one iteration's dynamic energy
 * against a hand count of its FLOPs and bytes over the roofline; an idle
 * run draws idle power × time × GPUs plus the hosts' share; a saturated
 * compute-bound run approaches the boards' maximum while a decode-bound one
 * stays well under it; the per-node host override; energy off leaves the
 * summary without it; a mode it cannot price is refused. */
#include "model_catalog.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "test_util.h"
#include "test_cluster_util.h"

/* H100 SXM's catalogue figures (models/gpus/h100-sxm.yaml). */
#define IDLE_W 70.0
#define MAX_W 700.0
#define MEM_SHARE 0.6
#define HOST_W 575.0

static void base(sim_scenario *sc, int32_t requests, int32_t in, int32_t out)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->workload.requests = requests;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = 5;
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = in;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = out;
    sc->deployment.pools[0].instances = 1;
    sc->energy.enabled = 1;
}

static void test_busy_rule(void)
{
    /* min(d, compute + share · memory), never negative. */
    CHECK_NEAR(sim_energy_busy_s(1.0, 0.2, 0.5, 0.6), 0.5, 1e-15);
    CHECK_NEAR(sim_energy_busy_s(1.0, 0.9, 0.5, 0.6), 1.0, 1e-15);
    CHECK_NEAR(sim_energy_busy_s(1.0, -1, 0.5, 0.6), 0.3, 1e-15);
    CHECK(sim_energy_busy_s(0, 1, 1, 0.6) == 0);
    /* Two pools over 10 s: 3 GPUs (100 W idle, 400 W max, 50 W host each)
     * with 6 GPU-seconds at full dynamic range, 1 GPU (50/300, 20 W host)
     * with none; 20 requests, 1000 prompt and 500 output tokens. */
    sim_energy_summary e = {0};
    sim_power a = {100, 400, 0.6, 50}, b = {50, 300, 0.6, 20};
    sim_energy_add_pool(&e, &a, 3, 10, 6, 0);
    sim_energy_add_pool(&e, &b, 1, 10, 0, 0);
    sim_energy_finish(&e, 10, 1, 0, 20, 1000, 500);
    CHECK_NEAR(e.gpu_idle_j, 3 * 100 * 10 + 50 * 10, 1e-9);
    CHECK_NEAR(e.gpu_dynamic_j, 300 * 6, 1e-9);
    CHECK_NEAR(e.host_j, (3 * 50 + 20) * 10, 1e-9);
    CHECK_NEAR(e.joules, 3500 + 1800 + 1700, 1e-9);
    CHECK_NEAR(e.mean_power_w, 700, 1e-9);
    CHECK_NEAR(e.joules_per_output_token, 7000.0 / 500, 1e-12);
    CHECK_NEAR(e.joules_per_request, 350, 1e-9);
    CHECK_NEAR(e.joules_per_million_tokens, 7000.0 / 1500 * 1e6, 1e-6);
    CHECK_NEAR(e.kwh_per_million_output_tokens, 14.0 * 1e6 / 3.6e6, 1e-9);
    /* The per-node override replaces the catalogue's host share. */
    sim_energy_summary o = {0};
    sim_energy_add_pool(&o, &a, 3, 10, 6, 1);
    sim_energy_finish(&o, 10, 2, 1000, 20, 1000, 500);
    CHECK_NEAR(o.host_j, 2 * 1000 * 10, 1e-9);
}

/* One request of one prompt token and one output token is one iteration:
 * a single-token forward pass reads every weight but the embedding table
 * once and does 2 FLOPs per weight read. Its dynamic energy is
 * (max − idle) × (FLOPs / derated peak + mem_share × bytes / derated
 * bandwidth), counted here from the catalogue, not from the cost model's
 * busy fields; the KV, activations and norms add well under 1 %. The idle
 * and host parts are exactly their power × the request's latency. */
static void test_hand_iteration(void)
{
    sim_scenario sc;
    base(&sc, 1, 1, 1);
    run_result r;
    if (run(&sc, &r)) return;
    REQUIRE(r.n == 1 && r.sum.energy.enabled);
    model_spec m;
    model_gpu g;
    sim_err err = {{0}};
    REQUIRE(model_catalog_model("llama-3.1-8b", &m, &err) == 0);
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &err) == 0);
    CHECK(g.power_idle_w == IDLE_W && g.power_max_w == MAX_W && g.power_mem_share == MEM_SHARE &&
          g.power_host_w == HOST_W);
    const double weights = m.params - (double)m.vocab * m.hidden; /* all but the embedding table */
    const double flops = 2 * weights, bytes = 2 * weights;       /* bf16 */
    const double busy = flops / (g.flops_bf16 * g.eff_gemm) + MEM_SHARE * bytes / (g.hbm_bw * g.eff_mem);
    const double want = (MAX_W - IDLE_W) * busy;
    const sim_energy_summary *e = &r.sum.energy;
    CHECK_MSG(fabs(e->gpu_dynamic_j / want - 1) < 0.01, "dynamic %.4f J, hand count %.4f J", e->gpu_dynamic_j, want);
    const double span = (double)(r.recs[0].finish - r.recs[0].arrival) / 1e9;
    CHECK_NEAR(e->span_s, span, 1e-12);
    CHECK_NEAR(e->gpu_idle_j, IDLE_W * span, 1e-9);
    CHECK_NEAR(e->host_j, HOST_W * span, 1e-9);
    CHECK_NEAR(e->joules, e->gpu_idle_j + e->gpu_dynamic_j + e->host_j, 1e-9);
    CHECK_NEAR(e->joules_per_output_token, e->joules, 1e-9);
    free(r.recs);
}

/* Requests 40 s apart on two instances: the GPUs are busy for a few ms of
 * the ~80 s, so the run draws idle power × time × GPUs plus the hosts'
 * share, to within the few iterations' dynamic part. */
static void test_idle_run(void)
{
    sim_scenario sc;
    base(&sc, 3, 16, 2);
    sc.workload.arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.arrival.rate = 0.025;
    sc.deployment.pools[0].instances = 2;
    run_result r;
    if (run(&sc, &r)) return;
    REQUIRE(r.n == 3);
    const sim_energy_summary *e = &r.sum.energy;
    const double T = r.sum.sim_time_s, G = 2;
    CHECK(T > 79 && T < 81);
    CHECK_NEAR(e->gpu_idle_j, IDLE_W * T * G, 1e-6);
    CHECK_NEAR(e->host_j, HOST_W * T * G, 1e-6);
    const double idle = (IDLE_W + HOST_W) * T * G;
    CHECK_MSG(e->joules >= idle && e->joules / idle - 1 < 1e-3, "%.6g J against idle %.6g J", e->joules, idle);
    CHECK_NEAR(e->mean_power_w, (IDLE_W + HOST_W) * G, 1.0);
    /* The host share per node instead: both GPUs sit in one 8-GPU node. */
    sc.energy.host_w_per_node = 2000;
    run_result o;
    if (run(&sc, &o)) {
        free(r.recs);
        return;
    }
    CHECK_NEAR(o.sum.energy.host_j, 2000 * o.sum.sim_time_s, 1e-6);
    CHECK_NEAR(o.sum.energy.gpu_dynamic_j, e->gpu_dynamic_j, 1e-9);
    free(r.recs);
    free(o.recs);
}

/* Mean board power (idle + dynamic, hosts left out) per GPU of a run. */
static double board_w(const sim_summary *s)
{
    return (s->energy.gpu_idle_j + s->energy.gpu_dynamic_j) / s->energy.span_s / s->n_gpus;
}

/* Four clients keep one instance busy with 8192-token prompts and one
 * output token: every iteration is a compute-bound prefill, so the board
 * runs near its maximum (what launches and framework time leave idle).
 * Clients decoding long answers at batch 4 stream the weights instead:
 * memory-bound, the board stays near idle + mem_share of the range. */
static void test_saturated(void)
{
    sim_scenario sc;
    base(&sc, 40, 8192, 1);
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 4;
    sc.deployment.pools[0].scheduler.chunk_tokens = 8192;
    sc.deployment.pools[0].scheduler.max_batched_tokens = 8192;
    run_result r;
    if (run(&sc, &r)) return;
    REQUIRE(r.n == 40);
    double w = board_w(&r.sum);
    CHECK_MSG(w > 0.95 * MAX_W && w <= MAX_W + 1e-9, "compute-bound run: %.1f W per board (max %.0f)", w, MAX_W);
    free(r.recs);

    base(&sc, 8, 16, 2000);
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 4;
    if (run(&sc, &r)) return;
    REQUIRE(r.n == 8);
    double d = board_w(&r.sum);
    CHECK_MSG(d < IDLE_W + (MEM_SHARE + 0.05) * (MAX_W - IDLE_W) && d > IDLE_W + 0.4 * (MAX_W - IDLE_W),
              "decode-bound run: %.1f W per board", d);
    free(r.recs);
}

static void test_off_and_refused(void)
{
    sim_scenario sc;
    base(&sc, 20, 100, 10);
    sc.energy.enabled = 0;
    run_result r;
    if (run(&sc, &r)) return;
    CHECK(!r.sum.energy.enabled && r.sum.energy.joules == 0);
    free(r.recs);
    /* Attention/FFN disaggregation has no per-iteration busy time to price. */
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/af-deepseek-v3.yaml", test_src_dir());
    const char *sets[] = {"energy.enabled=true", "workload.requests=10"};
    sim_err err = {{0}};
    REQUIRE(sim_loader_load_file(path, sets, 2, &sc, &err) == 0);
    sim_cluster *c = NULL;
    CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "energy: not modelled for attention/FFN disaggregation");
    CHECK(c == NULL);
}

static const test_case cases[] = {
    {"busy_rule", test_busy_rule},
    {"hand_iteration", test_hand_iteration},
    {"idle_run", test_idle_run},
    {"saturated", test_saturated},
    {"off_and_refused", test_off_and_refused},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_energy", cases);
}
