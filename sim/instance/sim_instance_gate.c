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
 *    batching_wait_iters). With dp attention ranks, context requests are
 *    scheduled only when every rank has one (taken as at least dp waiting
 *    requests, the executor spreading new requests over the ranks) and no
 *    rank's batch is full, and then, while every rank also decodes, only
 *    after adp_wait_iters further steps; otherwise they wait, the step
 *    counter running on every step (with no context request too), until it
 *    reaches adp_timeout_iters or some rank has nothing to decode. Fewer
 *    steps carry a context phase (each runs eagerly, stalling every rank's
 *    decoding), at the cost of the wait in TTFT.
 * 3. Batch waiting (scheduler.batch_wait_iters, batch_wait_ratio:
 *    TensorRT-LLM's batch_wait_timeout_iters and batch_wait_max_tokens_ratio,
 *    PyExecutor's waiting step), without attention DP. When a step would
 *    schedule context requests beside decoding ones, it does so only if its
 *    tokens (one per decoding request plus the whole prompts of the waiting
 *    requests that fit the rest of max_batched_tokens, the first one at
 *    least as much of it as fits) reach batch_wait_ratio of
 *    max_batched_tokens, or it has already held them batch_wait_iters steps;
 *    otherwise it holds them and counts the step. With nothing decoding they
 *    start at once (the engine never waits on an idle batch).
 * No allocation, no failure. */
#include "sim_instance_impl.h"

void sim_instance_gate_arrival(sim_instance *in)
{
    if (in->cfg.recv_interval > 1) in->unseen++;
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
    int64_t tokens = ln->dec_n, left = c->max_batched_tokens - ln->dec_n, seen = in->waiting.n - in->unseen;
    for (const sim_req *r = in->waiting.head; r && seen-- > 0 && left > 0 && (double)tokens < need;
         r = r->run_link.next) {
        int64_t p = r->prefill_target - r->prefilled;
        if (p > left) {
            if (tokens == ln->dec_n) tokens += left; /* the first prompt: its chunk */
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
    int64_t ctx = in->waiting.n - in->unseen;
    int all_ctx = ctx >= in->dp_ranks && ln->dec_n < in->cfg.max_seqs;
    int all_gen = ln->dec_n >= in->dp_ranks;
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
