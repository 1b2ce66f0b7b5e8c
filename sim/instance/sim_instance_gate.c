/* sim_instance_gate — when an instance's scheduler may take new requests
 * from its waiting queue: the engines' own holds on admission, beside KV
 * (sim_instance.c). Part of the instance (sim_instance_impl.h).
 *
 * 1. Polling for new requests (scheduler.recv_interval, SGLang's
 *    --scheduler-recv-interval). The scheduler reads the requests the
 *    tokenizer sent only when a counter reaches the interval: a decode-only
 *    step adds 1, a step with a prefill (extend) adds at least the interval
 *    (SGLang's weight 1000), so the poll after a prefill step is immediate
 *    and during pure decoding new requests wait up to interval − 1 steps.
 *    An idle scheduler spins through its loop in microseconds and polls on
 *    every pass: an instance with nothing running receives at once.
 *    Requests not yet received are the tail of the waiting queue
 *    (arrivals append; preempted requests go to its front, already seen).
 * 2. Attention-DP balancing (scheduler.adp_timeout_iters, adp_wait_iters:
 *    TensorRT-LLM's attention_dp_config with enable_balance, timeout_iters,
 *    batching_wait_iters). The executor gives each new request a rank when
 *    it fetches it: the rank with the fewest requests (waiting for their
 *    context phase or running; ties to the lowest rank), as its heap of
 *    ranks under the expected per-rank count does, so in a closed loop a
 *    new request lands where one just finished. Context requests are
 *    scheduled only when every rank has one waiting and no rank's batch is
 *    full (the instance's batch below max_seqs), and then, while every rank
 *    also runs requests, only after adp_wait_iters further steps;
 *    otherwise they wait, the step counter running on every step (with no
 *    context request too), until it reaches adp_timeout_iters or some rank
 *    has nothing running. Fewer steps carry a context phase (each runs
 *    eagerly, stalling every rank's decoding), at the cost of the wait in
 *    TTFT: several arrivals on the same ranks leave the others without one,
 *    so the batch waits for the timeout more often than the count of
 *    waiting requests alone would say (on silicon-dev.csv's TensorRT-LLM
 *    B200 attention-DP rows, docs/cost-model.md). The ranks' counts
 *    (in->rank_n, rank_wait) are kept only where the hold is on; the batch
 *    itself is priced as one (ranks' shares as in sim_instance_graph_batch).
 * 3. Batch waiting (scheduler.batch_wait_iters, batch_wait_ratio:
 *    TensorRT-LLM's batch_wait_timeout_iters and batch_wait_max_tokens_ratio,
 *    PyExecutor's waiting step), without attention DP. When a step would
 *    schedule context requests beside decoding ones, it does so only if its
 *    tokens (one per decoding request, 1 + k under speculative
 *    decoding, plus the whole prompts of the waiting
 *    requests that fit the rest of max_batched_tokens, the first one at
 *    least as much of it as fits) reach batch_wait_ratio of
 *    max_batched_tokens, or it has already held them batch_wait_iters steps;
 *    otherwise it holds them and counts the step. With nothing decoding they
 *    start at once (the engine never waits on an idle batch).
 * No allocation (the rank counts are the instance's, sim_instance.c), no
 * failure. */
#include "sim_instance_impl.h"

void sim_instance_gate_arrival(sim_instance *in, sim_req *r)
{
    if (in->cfg.recv_interval > 1) in->unseen++;
    if (!in->rank_n) return;
    int32_t best = 0;
    for (int32_t k = 1; k < in->dp_ranks; k++)
        if (in->rank_n[k] < in->rank_n[best]) best = k;
    r->dp_rank = best;
    in->rank_n[best]++;
    in->rank_wait[best]++;
}

/* Part 2: whether every rank has a context request waiting, and whether
 * every rank runs requests. */
static void adp_ranks(const sim_instance *in, int *all_ctx, int *all_run)
{
    *all_ctx = *all_run = 1;
    for (int32_t k = 0; k < in->dp_ranks; k++) {
        if (in->rank_wait[k] <= 0) *all_ctx = 0;
        if (in->rank_n[k] - in->rank_wait[k] <= 0) *all_run = 0;
    }
}

void sim_instance_gate_step_end(sim_instance *in, const sim_lane *ln)
{
    if (in->cfg.recv_interval <= 1) return;
    /* SGLang's weights: DECODE 1, any step with an extend part 1000. */
    in->recv_count += ln->n_chunks > 0 ? in->cfg.recv_interval : 1;
}

/* Part 3 of the header comment: 1 when the held requests may start. */
static int batch_wait_admit(sim_instance *in, const sim_lane *ln)
{
    const sim_sched_cfg *c = &in->cfg;
    if ((c->batch_wait_iters <= 0 && c->batch_wait_ratio <= 0) || ln->dec_n <= 0 || in->waiting.n <= in->unseen)
        return 1;
    if (c->batch_wait_iters > 0 && in->batch_wait >= c->batch_wait_iters) {
        in->batch_wait = 0;
        return 1;
    }
    const double need = c->batch_wait_ratio * (double)c->max_batched_tokens;
    const int64_t dec = lane_decode_tokens(in, ln);
    int64_t tokens = dec, left = c->max_batched_tokens - dec, seen = in->waiting.n - in->unseen;
    for (const sim_req *r = in->waiting.head; r && seen-- > 0 && left > 0 && (double)tokens < need;
         r = r->run_link.next) {
        int64_t p = r->prefill_target - r->prefilled;
        if (p > left) {
            if (tokens == dec) tokens += left; /* the first prompt: its chunk */
            break;
        }
        tokens += p;
        left -= p;
    }
    if (c->batch_wait_ratio > 0 && (double)tokens >= need) {
        in->batch_wait = 0;
        return 1;
    }
    in->batch_wait++;
    return 0;
}

int sim_instance_gate_admit(sim_instance *in, const sim_lane *ln)
{
    if (in->role == SIM_ROLE_DECODE) return 1; /* its requests come through the KV hand-over */
    /* The poll happens whenever the counter is due, whether or not
     * anything arrived, and resets it. */
    if (in->cfg.recv_interval > 1 && (in->running_n == 0 || in->recv_count >= in->cfg.recv_interval)) {
        sim_instance_waiting_receive(in); /* priority order: the received take their places */
        in->unseen = 0;
        in->recv_count = 0;
    }
    if (in->dp_ranks <= 1) return batch_wait_admit(in, ln);
    if (in->cfg.adp_timeout_iters <= 0) return 1;
    int all_ctx, all_gen;
    adp_ranks(in, &all_ctx, &all_gen);
    if (ln->dec_n >= in->cfg.max_seqs) all_ctx = 0;
    if (all_ctx) {
        in->adp_wait = 0;
        if (!all_gen) return 1;
        if (in->adp_batching < in->cfg.adp_wait_iters) {
            in->adp_batching++;
            return 0;
        }
        in->adp_batching = 0;
        return 1;
    }
    if (++in->adp_wait >= in->cfg.adp_timeout_iters || !all_gen) {
        in->adp_wait = 0;
        return 1;
    }
    return 0;
}
