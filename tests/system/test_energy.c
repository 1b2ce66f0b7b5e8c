/* test_energy — the energy model (sim/metrics/sim_energy.h) end to end:
 * the busy rule and the totals by hand; one iteration's dynamic energy
 * against a hand count of its FLOPs and bytes over the roofline; an idle
 * run draws idle power × time × GPUs plus the hosts' share; a saturated
 * compute-bound run approaches the boards' maximum while a decode-bound one
 * stays well under it; the per-node host override; attention/FFN
 * disaggregation and an encode pool price the same ops as a colocated
 * instance; energy off leaves the summary without it; autoscaling, which
 * it cannot price, is refused. */
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

/* One one-token request on attention/FFN disaggregation (one attention
 * and n_ffn FFN instances of one H100 each, m micro-batches): the
 * attention GPU runs the attention side and the once-per-iteration ops,
 * the FFN GPUs the MLPs, each side's busy time from its own ops. */
static int run_af(int32_t n_ffn, int32_t m, run_result *r)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nenergy: {enabled: true}\n"
             "workload: {requests: 1, arrival: {process: poisson, rate: 1},\n"
             "  input_tokens: {dist: fixed, value: 1}, output_tokens: {dist: fixed, value: 1}}\n"
             "deployment: {mode: af, af_micro_batches: %d, pools: [{role: attention, instances: 1},"
             " {role: ffn, instances: %d}]}\n",
             (int)m, (int)n_ffn);
    sim_scenario sc;
    sim_err err = {{0}};
    int rc = sim_loader_load_string(yaml, strlen(yaml), "af.yaml", NULL, 0, &sc, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return rc;
    return run(&sc, r);
}

/* With one micro-batch and one FFN instance the split moves work between
 * GPUs and changes no op: the dynamic energy is the colocated run's, and so
 * the hand count of test_hand_iteration; the idle and host parts are two
 * GPUs'. Two micro-batches of the one-token batch are two one-token
 * passes (each reads the layers' weights), and two FFN instances each
 * read their MLP weights for the attention instance's tokens: more
 * dynamic energy, at most twice. */
static void test_af_pipeline(void)
{
    sim_scenario sc;
    base(&sc, 1, 1, 1);
    run_result col, af, af2, wide;
    if (run(&sc, &col)) return;
    if (run_af(1, 1, &af)) {
        free(col.recs);
        return;
    }
    REQUIRE(af.n == 1 && af.sum.energy.enabled);
    const sim_energy_summary *e = &af.sum.energy;
    CHECK_MSG(fabs(e->gpu_dynamic_j / col.sum.energy.gpu_dynamic_j - 1) < 1e-9, "af %.9g J, colocated %.9g J",
              e->gpu_dynamic_j, col.sum.energy.gpu_dynamic_j);
    const double span = e->span_s;
    CHECK(span > 0);
    CHECK_NEAR(e->gpu_idle_j, 2 * IDLE_W * span, 1e-9);
    CHECK_NEAR(e->host_j, 2 * HOST_W * span, 1e-9);
    if (run_af(1, 2, &af2) == 0) {
        const double d2 = af2.sum.energy.gpu_dynamic_j;
        CHECK_MSG(d2 > 1.5 * e->gpu_dynamic_j && d2 <= 2 * e->gpu_dynamic_j * (1 + 1e-9),
                  "two micro-batches: %.6g J against %.6g J", d2, e->gpu_dynamic_j);
        free(af2.recs);
    }
    if (run_af(2, 1, &wide) == 0) {
        const double dw = wide.sum.energy.gpu_dynamic_j;
        CHECK_MSG(dw > e->gpu_dynamic_j && dw < 2 * e->gpu_dynamic_j, "two FFN instances: %.6g J against %.6g J", dw,
                  e->gpu_dynamic_j);
        CHECK_NEAR(wide.sum.energy.gpu_idle_j, 3 * IDLE_W * wide.sum.energy.span_s, 1e-9);
        free(wide.recs);
    }
    free(col.recs);
    free(af.recs);
}

/* Requests 5 s apart, one image each, on one tp-1 instance: the tower's
 * passes cost the same dynamic energy in an encode pool as inside the
 * instance (the same ops on the same GPU type, nothing overlapping), and
 * the pool's encoder GPUs draw idle power over the whole run. */
static void test_encode_pool(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/multimodal-qwen3vl-h100.yaml", test_src_dir());
    const char *sets[] = {"energy.enabled=true",
                          "workload.requests=12",
                          "workload.arrival.process=constant",
                          "workload.arrival.rate=0.2",
                          "workload.images.per_request.dist=fixed",
                          "workload.images.per_request.value=1",
                          "deployment.pools.0.instances=1",
                          "deployment.encode.instances=0"};
    const int n = (int)(sizeof sets / sizeof *sets);
    sim_scenario col, pool;
    sim_err err = {{0}};
    REQUIRE(sim_loader_load_file(path, sets, n, &col, &err) == 0);
    const char *two[] = {"deployment.encode.instances=2"};
    REQUIRE(sim_loader_overlay(&col, two, 1, &pool, &err) == 0);
    run_result a, b;
    if (run(&col, &a)) return;
    if (run(&pool, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE(a.n == 12 && b.n == 12 && b.sum.encode.pool);
    CHECK_MSG(fabs(b.sum.energy.gpu_dynamic_j / a.sum.energy.gpu_dynamic_j - 1) < 1e-9,
              "encode pool %.9g J, colocated %.9g J", b.sum.energy.gpu_dynamic_j, a.sum.energy.gpu_dynamic_j);
    CHECK_NEAR(b.sum.energy.gpu_idle_j, 3 * IDLE_W * b.sum.energy.span_s, 1e-9);
    CHECK_NEAR(a.sum.energy.gpu_idle_j, 1 * IDLE_W * a.sum.energy.span_s, 1e-9);
    free(a.recs);
    free(b.recs);
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
    /* An autoscaled pool's GPUs are not powered for the whole run. */
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/autoscale-step.yaml", test_src_dir());
    const char *sets[] = {"energy.enabled=true"};
    sim_err err = {{0}};
    CHECK(sim_loader_load_file(path, sets, 1, &sc, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "autoscaling with energy.enabled is not modelled");
}

static const test_case cases[] = {
    {"busy_rule", test_busy_rule},
    {"hand_iteration", test_hand_iteration},
    {"idle_run", test_idle_run},
    {"saturated", test_saturated},
    {"af_pipeline", test_af_pipeline},
    {"encode_pool", test_encode_pool},
    {"off_and_refused", test_off_and_refused},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_energy", cases);
}
