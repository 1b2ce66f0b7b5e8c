/* test_sched_engines — engine behaviours of the instance scheduler, each
 * against a hand calculation on one instance whose every iteration lasts
 * exactly D = 10 ms (a fixed cost function in place of the cost model,
 * which also logs every prefill chunk):
 *
 * - SGLang's --scheduler-recv-interval (scheduler.recv_interval): request A
 *   arrives at t = 0 into an idle instance (received at once), request B at
 *   12 ms, during A's first decode-only step. Polling every step, B is
 *   scheduled at the step boundary at 20 ms and its prefill ends at 30 ms
 *   (TTFT 18 ms). With interval 4 the counter, reset by the poll after A's
 *   prefill step at 10 ms, reaches 4 only after the decode steps ending at
 *   20, 30, 40 and 50 ms: B is scheduled at 50 ms, first token at 60 ms
 *   (TTFT 48 ms). A step with a prefill sets the counter due at once: with
 *   B arriving at 5 ms, during A's prefill, it is scheduled at 10 ms either way.
 * - TensorRT-LLM's attention-DP balancing (scheduler.adp_timeout_iters,
 *   adp_wait_iters) on an instance of 2 attention-DP ranks: A and B arrive
 *   at t = 0; A finds the instance idle and starts alone, B follows at the
 *   boundary at 10 ms (while fewer than two decode, nothing is held): TTFT
 *   10 and 20 ms either way. Then C arrives at 12 ms: one context request
 *   for two ranks while both decode, so it waits; the step counter, reset
 *   by B's release at 10 ms, reaches the timeout of 3 at the boundary at
 *   40 ms: C's prefill runs 40–50 ms (TTFT 38 ms; 18 ms without
 *   balancing, or without attention DP). With C and D both at 12 ms (one
 *   per rank) they go at once at 20 ms (TTFT 18), unless adp_wait_iters = 2
 *   holds them for two more steps (to 40 ms, TTFT 38).
 * - TensorRT-LLM's batch waiting (scheduler.batch_wait_iters,
 *   batch_wait_ratio) without attention DP: A arrives at t = 0 into an idle
 *   instance and starts at once (nothing decodes: no wait); B arrives at 12
 *   ms while A decodes. With 3 steps and a ratio of 0.9 (3,686.4 of 4,096
 *   tokens; the step would schedule A's 1 + B's 64) the boundaries at 20,
 *   30 and 40 ms hold B and count 1, 2, 3; at 50 ms the count has reached 3:
 *   B prefills 50-60 ms, TTFT 48 ms (18 without waiting). A ratio of 0.01
 *   (40.96 tokens, met by 65) lets B go at 20 ms (TTFT 18); with no step
 *   limit and the 0.9 ratio B waits until A, 20 output tokens, finishes
 *   with its step ending at 200 ms: B prefills 200-210 ms, TTFT 198 ms;
 *   with attention DP (2 ranks) this gate holds nothing (TTFT 18).
 * - A preempted request's cached KV (scheduler.preempt_keeps_kv, vLLM V1's
 *   and SGLang's prefix caches): KV of 10 blocks of 16 tokens, A and B of 64
 *   prompt and 60 output tokens arriving at t = 0. A prefills in step 1 and
 *   takes a block for its context 64; B prefills in step 2 (4 blocks) and
 *   takes its fifth at context 64 in step 3: the KV is full. At step 18 A's
 *   context reaches 80 and needs a block: B (the newest) is preempted with
 *   79 tokens in KV (generated 16, so it must recompute 64 + 16 = 80) and
 *   4 full blocks cached. Nothing was free before; its partial fifth block
 *   is reused first (A's block at 80), then A's blocks at 96 and 112 take
 *   two of its full ones from the end. A finishes after step 60 (60
 *   tokens), B is admitted at step 61 and finds 2 blocks, 32 tokens, cached:
 *   its re-admission prefills 48 tokens after 32 cached (80 from scratch
 *   without the cache). */
#include "model_cost.h"
#include "sim_engine.h"
#include "sim_instance.h"
#include "sim_metrics.h"
#include "sim_scenario.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define D_NS 10000000LL /* one iteration */
#define MS 1000000LL

static double fixed_cost(void *ctx, const model_batch *b)
{
    (void)ctx;
    (void)b;
    return D_NS * 1e-9;
}

static void on_finish(void *ctx, sim_req *r)
{
    (void)r;
    (*(int *)ctx)++;
}

typedef struct {
    sim_instance *in;
    sim_req *r;
} arrival;

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)arg;
    arrival *a = ctx;
    sim_instance_submit(a->in, a->r);
}

/* Every prefill chunk the instance ran, in order. */
typedef struct {
    int n;
    int32_t tokens[64], cached[64];
} chunk_log;

static double logged_cost(void *ctx, const model_batch *b)
{
    chunk_log *lg = ctx;
    for (int32_t i = 0; b->chunks && i < b->n_chunks; i++)
        if (lg->n < 64) {
            lg->tokens[lg->n] = b->chunks[i].tokens;
            lg->cached[lg->n++] = b->chunks[i].cached;
        }
    return fixed_cost(NULL, b);
}

typedef struct {
    int recv_interval, adp_timeout, adp_wait, dp; /* dp: the layout's attention-DP ranks */
    int batch_wait;                              /* scheduler.batch_wait_iters */
    double batch_ratio;                          /* scheduler.batch_wait_ratio */
    int output_tokens;                           /* 0 = 20 */
    int64_t kv_tokens;                           /* 0 = plenty */
    int keeps_kv;                                /* scheduler.preempt_keeps_kv */
    sim_admission admission;                     /* 0 = optimistic */
    double ratio_init, ratio_min, ratio_decay;   /* admission ratio */
    int ratio_clip;                              /* 0 = 4096 */
    int chunk;                                   /* scheduler.chunk_tokens (0 = 4096) */
    const int *inputs;                           /* prompt tokens per request (NULL = 64 each) */
    const int *outputs;                          /* output tokens per request (NULL = output_tokens each) */
    double probe_ms;                             /* > 0: record the new-token ratio then */
    double *probe_ratio;
    int *preempted;                              /* NULL or per request: times preempted */
} gate_setup;

typedef struct {
    sim_instance *in;
    double *out;
} probe;

static void on_probe(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)arg;
    probe *p = ctx;
    *p->out = sim_instance_ratio(p->in);
}

/* Runs requests arriving at arrive_ms[i] (input 64 tokens) on one
 * decode_first instance set up as u says; fills ttft_ms[i] and, when lg is
 * not NULL, the chunk log. Returns 0 when the run completed. */
static int run_sched(int n, const double *arrive_ms, const gate_setup *u, double *ttft_ms, chunk_log *lg)
{
    const int dp = u->dp > 1 ? u->dp : 1;
    sim_sched_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_seqs = 16;
    cfg.max_batched_tokens = 4096;
    cfg.chunk_tokens = u->chunk > 0 ? u->chunk : 4096;
    cfg.block_tokens = 16;
    cfg.policy = SIM_POLICY_DECODE_FIRST;
    cfg.recv_interval = u->recv_interval;
    cfg.adp_timeout_iters = u->adp_timeout;
    cfg.adp_wait_iters = u->adp_wait;
    cfg.batch_wait_iters = u->batch_wait;
    cfg.batch_wait_ratio = u->batch_ratio;
    cfg.preempt_keeps_kv = u->keeps_kv;
    cfg.admission = u->admission;
    cfg.ratio_init = u->ratio_init;
    cfg.ratio_min = u->ratio_min;
    cfg.ratio_decay = u->ratio_decay;
    cfg.ratio_clip = u->ratio_clip > 0 ? u->ratio_clip : 4096;
    cfg.retract_steps = 20;
    /* The layout only tells the instance its attention-DP ranks; the fixed
     * cost function prices every iteration. */
    model_spec m;
    model_gpu g;
    model_cost *cost = NULL;
    sim_err err = {{0}};
    REQUIRE_OR(model_catalog_model("qwen3-30b-a3b", &m, &err) == 0, return -1);
    REQUIRE_OR(model_catalog_gpu("h100-sxm", &g, &err) == 0, return -1);
    model_layout l = {.tp = 1, .pp = 1, .dp = dp, .ep = dp, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8};
    int rc = model_cost_create(&m, &g, &l, &cost, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return -1;
    sim_engine *eng = sim_engine_create();
    sim_metrics *met = sim_metrics_create(1);
    int done = 0;
    sim_instance_hooks hooks = {.on_finish = on_finish, .ctx = &done};
    sim_instance *in = NULL;
    rc = eng && met ? sim_instance_create(eng, 0, SIM_ROLE_COLOCATED, &cfg, cost, u->kv_tokens > 0 ? u->kv_tokens : 1 << 20, met,
                                          hooks, &in, &err)
                    : -1;
    CHECK_MSG(rc == 0, "%s", err.msg);
    sim_req *reqs = calloc((size_t)n, sizeof *reqs);
    arrival *arr = calloc((size_t)n, sizeof *arr);
    if (rc == 0 && reqs && arr) {
        if (lg) memset(lg, 0, sizeof *lg);
        if (lg) sim_instance_set_cost_fn(in, logged_cost, lg);
        else sim_instance_set_cost_fn(in, fixed_cost, NULL);
        for (int i = 0; i < n; i++) {
            reqs[i].spec.id = (uint64_t)i;
            reqs[i].spec.arrival = (sim_time)(arrive_ms[i] * MS);
            reqs[i].spec.input_tokens = u->inputs ? u->inputs[i] : 64;
            reqs[i].spec.output_tokens = u->outputs ? u->outputs[i] : u->output_tokens > 0 ? u->output_tokens : 20;
            reqs[i].client = -1;
            arr[i] = (arrival){in, &reqs[i]};
            sim_engine_at(eng, reqs[i].spec.arrival, on_arrival, &arr[i], 0);
        }
        probe pr = {in, u->probe_ratio};
        if (u->probe_ms > 0 && u->probe_ratio) sim_engine_at(eng, (sim_time)(u->probe_ms * MS), on_probe, &pr, 0);
        sim_engine_run(eng, (sim_time)10 * 1000 * MS);
        CHECK_MSG(!sim_engine_failed(eng, NULL), "the run failed");
        CHECK_MSG(done == n, "%d of %d requests finished", done, n);
        for (int i = 0; i < n; i++) ttft_ms[i] = (double)(reqs[i].first_token - reqs[i].spec.arrival) / MS;
        for (int i = 0; u->preempted && i < n; i++) u->preempted[i] = reqs[i].preemptions;
    } else {
        rc = -1;
    }
    sim_instance_destroy(in);
    free(reqs);
    free(arr);
    sim_metrics_destroy(met);
    sim_engine_destroy(eng);
    model_cost_destroy(cost);
    return rc == 0 && done == n ? 0 : -1;
}

static void test_recv_interval(void)
{
    const double at[] = {0, 12};
    double t[2];
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 1, .adp_timeout = 0, .adp_wait = 0, .dp = 1}, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 18, "polling every step: TTFT %.1f / %.1f ms, expected 10 / 18", t[0], t[1]);
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 4, .adp_timeout = 0, .adp_wait = 0, .dp = 1}, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 48, "interval 4: TTFT %.1f / %.1f ms, expected 10 / 48", t[0], t[1]);
    /* Arriving during a prefill step: the poll after it is immediate. */
    const double during[] = {0, 5};
    REQUIRE(run_sched(2, during, &(gate_setup){.recv_interval = 4, .adp_timeout = 0, .adp_wait = 0, .dp = 1}, t, NULL) == 0);
    CHECK_MSG(t[1] == 15, "interval 4, arrival in a prefill step: TTFT %.1f ms, expected 15", t[1]);
}

static void test_adp_balance(void)
{
    const double one[] = {0, 0, 12};
    double t[4];
    REQUIRE(run_sched(3, one, &(gate_setup){.recv_interval = 1, .adp_timeout = 0, .adp_wait = 0, .dp = 2}, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 20 && t[2] == 18, "no balancing: TTFT %.1f / %.1f / %.1f ms", t[0], t[1], t[2]);
    REQUIRE(run_sched(3, one, &(gate_setup){.recv_interval = 1, .adp_timeout = 3, .adp_wait = 0, .dp = 2}, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 20, "fewer than two decoding: TTFT %.1f / %.1f ms, expected 10 / 20", t[0], t[1]);
    CHECK_MSG(t[2] == 38, "one context request for two ranks: TTFT %.1f ms, expected 38 (timeout 3 steps)", t[2]);
    /* Without attention DP the same settings hold nothing. */
    REQUIRE(run_sched(3, one, &(gate_setup){.recv_interval = 1, .adp_timeout = 3, .adp_wait = 0, .dp = 1}, t, NULL) == 0);
    CHECK_MSG(t[2] == 18, "dp 1: TTFT %.1f ms, expected 18", t[2]);
    const double two[] = {0, 0, 12, 12};
    REQUIRE(run_sched(4, two, &(gate_setup){.recv_interval = 1, .adp_timeout = 3, .adp_wait = 0, .dp = 2}, t, NULL) == 0);
    CHECK_MSG(t[2] == 18 && t[3] == 18, "one per rank: TTFT %.1f / %.1f ms, expected 18", t[2], t[3]);
    REQUIRE(run_sched(4, two, &(gate_setup){.recv_interval = 1, .adp_timeout = 3, .adp_wait = 2, .dp = 2}, t, NULL) == 0);
    CHECK_MSG(t[2] == 38 && t[3] == 38, "batching wait 2: TTFT %.1f / %.1f ms, expected 38", t[2], t[3]);
    /* Ranks given by load: A (idle instance, rank 0) starts at once; B, C,
     * D, E at t = 0 go to ranks 1, 0, 1, 0 (the fewest requests, ties to
     * the lower rank) and, rank 1 running nothing, start together at 10 ms.
     * D (3 tokens) finishes with the step ending at 40 ms: ranks hold 3 and
     * 1. F and G at 42 ms both go to rank 1, so rank 0 has no context
     * request while both ranks decode: they wait for the timeout. The step
     * counter, reset at 10 ms, reached 3 at 40 ms (counting steps with
     * nothing waiting too) and restarted; it reaches 3 again at 70 ms: F and
     * G prefill 70-80 ms, TTFT 38 ms. Counting only the waiting requests (2
     * for 2 ranks) would have let them go at 50 ms (TTFT 18). */
    const double pile[] = {0, 0, 0, 0, 0, 42, 42};
    const int outs[] = {40, 40, 40, 3, 40, 20, 20};
    double p[7];
    REQUIRE(run_sched(7, pile, &(gate_setup){.recv_interval = 1, .adp_timeout = 3, .dp = 2, .outputs = outs}, p,
                      NULL) == 0);
    CHECK_MSG(p[0] == 10 && p[1] == 20 && p[4] == 20, "start: TTFT %.1f / %.1f / %.1f ms, expected 10 / 20 / 20", p[0],
              p[1], p[4]);
    CHECK_MSG(p[5] == 38 && p[6] == 38, "two arrivals on one rank: TTFT %.1f / %.1f ms, expected 38 (timeout)", p[5],
              p[6]);
}

static void test_batch_wait(void)
{
    const double at[] = {0, 12};
    double t[2];
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 1, .dp = 1, .batch_wait = 3, .batch_ratio = 0.9}, t,
                      NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 48, "3 steps, ratio 0.9: TTFT %.1f / %.1f ms, expected 10 / 48", t[0], t[1]);
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 1, .dp = 1, .batch_wait = 3, .batch_ratio = 0.01}, t,
                      NULL) == 0);
    CHECK_MSG(t[1] == 18, "ratio met: TTFT %.1f ms, expected 18", t[1]);
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 1, .dp = 1, .batch_wait = 0, .batch_ratio = 0.9}, t,
                      NULL) == 0);
    CHECK_MSG(t[1] == 198, "no step limit: TTFT %.1f ms, expected 198 (after A's last step)", t[1]);
    /* With attention DP the gate is the ranks' balancing, not this one. */
    REQUIRE(run_sched(2, at, &(gate_setup){.recv_interval = 1, .dp = 2, .batch_wait = 3, .batch_ratio = 0.9}, t,
                      NULL) == 0);
    CHECK_MSG(t[1] == 18, "attention DP: TTFT %.1f ms, expected 18", t[1]);
}

static void test_preempt_keeps_kv(void)
{
    const double at[] = {0, 0};
    double t[2];
    chunk_log lg;
    for (int keep = 0; keep <= 1; keep++) {
        gate_setup u = {.output_tokens = 60, .kv_tokens = 160, .keeps_kv = keep};
        REQUIRE(run_sched(2, at, &u, t, &lg) == 0);
        /* A's and B's prefills, then B's re-admission after its preemption. */
        REQUIRE_MSG(lg.n == 3, "%d prefill chunks, expected 3", lg.n);
        CHECK(lg.tokens[0] == 64 && lg.cached[0] == 0 && lg.tokens[1] == 64 && lg.cached[1] == 0);
        if (keep)
            CHECK_MSG(lg.tokens[2] == 48 && lg.cached[2] == 32, "re-admission: %d tokens after %d cached, expected 48 "
                      "after 32", lg.tokens[2], lg.cached[2]);
        else
            CHECK_MSG(lg.tokens[2] == 80 && lg.cached[2] == 0, "re-admission without the cache: %d tokens after %d, "
                      "expected 80 after 0", lg.tokens[2], lg.cached[2]);
    }
}

/* scheduler.admission ratio, admission: KV of 28 blocks (448 tokens), A
 * and B of 64 prompt and 200 output tokens at t = 0, ratio 0.5. reserve
 * promises A 17 blocks and B 17 (34 > 28): B waits for A to finish. ratio
 * admits A into the idle instance; B in the same pass would need A's
 * 64 + 200 and its own 264 tokens, 528 > 384 free: it waits. At the next
 * step A has 1 token and holds 5 blocks: 0.5 x 199 + 264 = 363.5 < 23 x 16
 * = 368, so B is admitted at 10 ms and its first token comes at 20 ms. */
static void test_ratio_admits(void)
{
    const double at[] = {0, 0};
    double t[2];
    gate_setup u = {.output_tokens = 200, .kv_tokens = 448, .admission = SIM_ADMISSION_RESERVE};
    REQUIRE(run_sched(2, at, &u, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] > 2000, "reserve: TTFT %.1f / %.1f ms, expected 10 / after A's 200 steps", t[0],
              t[1]);
    u.admission = SIM_ADMISSION_RATIO;
    u.ratio_init = u.ratio_min = 0.5;
    REQUIRE(run_sched(2, at, &u, t, NULL) == 0);
    CHECK_MSG(t[0] == 10 && t[1] == 20, "ratio 0.5: TTFT %.1f / %.1f ms, expected 10 / 20", t[0], t[1]);
    /* At 0.7 (SGLang's start): 0.7 x 199 + 264 = 403.3 > 368, B waits. */
    u.ratio_init = u.ratio_min = 0.7;
    REQUIRE(run_sched(2, at, &u, t, NULL) == 0);
    CHECK_MSG(t[1] > 20, "ratio 0.7: TTFT %.1f ms, expected later than 20", t[1]);
}

/* The ratio falls by ratio_decay per decode step to ratio_min and returns
 * to ratio_init when the instance idles. One request of 64 + 200 tokens:
 * its prefill step (0-10 ms) decodes nothing, the steps starting at 10,
 * 20, 30, 40 and 50 ms decode: at 55 ms the ratio is 0.5 - 5 x 0.01. */
static void test_ratio_decay(void)
{
    const double at[] = {0};
    double t[1], r = -1;
    gate_setup u = {.output_tokens = 200, .admission = SIM_ADMISSION_RATIO, .ratio_init = 0.5, .ratio_min = 0.1,
                    .ratio_decay = 0.01, .probe_ms = 55, .probe_ratio = &r};
    REQUIRE(run_sched(1, at, &u, t, NULL) == 0);
    CHECK_MSG(fabs(r - 0.45) < 1e-12, "after 5 decode steps: ratio %.6f, expected 0.45", r);
    u.ratio_decay = 0.2; /* floored at ratio_min */
    REQUIRE(run_sched(1, at, &u, t, NULL) == 0);
    CHECK_MSG(fabs(r - 0.1) < 1e-12, "decay 0.2: ratio %.6f, expected the floor 0.1", r);
    u.probe_ms = 5000; /* long after the request finished (about 2,000 ms) */
    REQUIRE(run_sched(1, at, &u, t, NULL) == 0);
    CHECK_MSG(r == 0.5, "idle: ratio %.6f, expected ratio_init 0.5", r);
}

/* Retraction: KV of 19 blocks, A (96-token prompt, prefilled in chunks
 * of 48) and B (32) of 200 output tokens at t = 0, ratio 0.1, no decay,
 * estimates clipped at 16 tokens. A starts alone (0-10 ms); B, received
 * next, is admitted at 10 ms beside A's second chunk (1.6 + 48 tokens <
 * 13 x 16 free): both have their first token at 20 ms. They take blocks at
 * the same steps (contexts 96 + k and 32 + k, k = 0, 16, ...): 10 blocks
 * at step 3, 12, 14, 16, 18 at steps 19, 35, 51, 67, and at step 83
 * (820 ms) both need one with one free. Both have 81 tokens: SGLang
 * retracts the longest prompt, A (vLLM takes the newest, B). B alone fits;
 * the ratio becomes (81 + 20) / (200 + 1). A, re-queued, needs 177 + 16
 * tokens with 11 blocks free: it waits for B to finish, so A is retracted
 * once and B never. */
static void test_ratio_retract(void)
{
    const double at[] = {0, 0};
    const int inputs[] = {96, 32};
    double t[2], r = -1;
    int pre[2] = {-1, -1};
    gate_setup u = {.output_tokens = 200, .kv_tokens = 19 * 16, .admission = SIM_ADMISSION_RATIO,
                    .ratio_init = 0.1, .ratio_min = 0.1, .ratio_clip = 16, .chunk = 48, .inputs = inputs,
                    .probe_ms = 825, .probe_ratio = &r, .preempted = pre};
    REQUIRE(run_sched(2, at, &u, t, NULL) == 0);
    CHECK_MSG(t[0] == 20 && t[1] == 20, "TTFT %.1f / %.1f ms, expected 20 / 20", t[0], t[1]);
    CHECK_MSG(pre[0] == 1 && pre[1] == 0, "retracted: A %d times, B %d, expected 1 and 0", pre[0], pre[1]);
    CHECK_MSG(fabs(r - 101.0 / 201.0) < 1e-12, "after the retraction: ratio %.6f, expected 101/201 = %.6f", r,
              101.0 / 201.0);
    /* vLLM's rule on the same requests preempts the newest. */
    gate_setup v = {.output_tokens = 200, .kv_tokens = 19 * 16, .chunk = 48, .inputs = inputs, .preempted = pre};
    REQUIRE(run_sched(2, at, &v, t, NULL) == 0);
    CHECK_MSG(pre[1] >= 1 && pre[0] == 0, "optimistic: A preempted %d times, B %d, expected B", pre[0], pre[1]);
}

static const test_case cases[] = {
    {"ratio_admits", test_ratio_admits},
    {"ratio_decay", test_ratio_decay},
    {"ratio_retract", test_ratio_retract},
    {"recv_interval", test_recv_interval},
    {"adp_balance", test_adp_balance},
    {"batch_wait", test_batch_wait},
    {"preempt_keeps_kv", test_preempt_keeps_kv},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_sched_engines", cases);
}
