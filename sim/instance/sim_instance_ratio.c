/* sim_instance_ratio — scheduler.admission ratio: SGLang's admission by a
 * decaying new-token ratio and its retraction of decoding requests.
 *
 * SGLang (0.4-0.5, scheduler.py, schedule_policy.py PrefillAdder,
 * schedule_batch.py retract_decode, environ.py defaults) admits a waiting
 * request when the KV pool's free and evictable tokens, less
 * ratio x min(remaining output, clip) for every running request and less
 * prompt + min(output, clip) for each request admitted earlier in the same
 * pass, exceed the candidate's prompt + min(remaining output, clip). The
 * ratio starts at init (0.7), falls by decay each decode step to min
 * (0.7 x 0.14) and returns to init when the scheduler idles. A decode step
 * whose next tokens do not fit retracts running requests, the one with the
 * fewest output tokens first (the longest prompt among equals), until they
 * fit; the retracted requests join the back of the waiting queue
 * (preempt in sim_instance.c) and recompute their prompt and output so far
 * (what preempt_keeps_kv keeps is found again), and the ratio becomes
 * (Σ output so far + retract_steps x n) / (Σ whole output + 1), at most 1,
 * over the requests that stay.
 *
 * Only colocated instances run it; a prefill or decode instance of a PD
 * deployment keeps reserve admission (SGLang's decode side admits by its
 * own pre-allocation, not modelled here). */
#include "sim_instance_impl.h"

/* Output tokens r has generated so far (a decoding request counts lazily). */
static int64_t generated_now(sim_instance *in, const sim_req *r)
{
    if (r->state == SIM_REQ_DECODE && !in->spec)
        return r->generated_at_join + (lane_of(in, r)->dstep - r->join_iter);
    return r->generated;
}

static int64_t clip(const sim_instance *in, int64_t tokens)
{
    if (tokens < 0) return 0;
    return tokens < in->cfg.ratio_clip ? tokens : in->cfg.ratio_clip;
}

/* KV tokens the running requests are counted for beyond what they hold:
 * the prompt still to prefill plus ratio x their clipped remaining output. */
static double running_debt(sim_instance *in)
{
    double debt = 0;
    for (int32_t k = 0; k < in->n_lanes; k++)
        for (sim_req *r = in->lanes[k].running.head; r; r = sim_req_next(r, SIM_RUN_LINK)) {
            int64_t pre = r->state == SIM_REQ_PREFILL ? r->prefill_target - r->prefilled : 0;
            debt += (double)pre + in->ratio * (double)clip(in, r->spec.output_tokens - generated_now(in, r));
        }
    return debt;
}

void sim_instance_ratio_pass_start(sim_instance *in)
{
    in->ratio_pass = -1; /* the running requests' debt is summed at the pass's first candidate */
}

int sim_instance_ratio_admit(sim_instance *in, sim_req *r)
{
    if (in->ratio_pass < 0) in->ratio_pass = running_debt(in);
    int64_t want = (int64_t)(r->prefill_target - r->prefilled) + clip(in, r->spec.output_tokens - r->generated);
    if (in->running_n > 0) {
        /* Free and evictable KV (the prefix cache gives up what it must). */
        double need_tokens = in->ratio_pass + (double)want;
        int64_t need = (int64_t)(need_tokens / (double)in->bs) + 1;
        double avail = (double)sim_instance_free_blocks(in, need) * (double)in->bs;
        if (need_tokens >= avail) return 0;
    }
    in->ratio_pass += (double)want;
    return 1;
}

void sim_instance_ratio_refused(sim_instance *in, const sim_req *r)
{
    in->ratio_pass -= (double)((int64_t)(r->prefill_target - r->prefilled) +
                               clip(in, r->spec.output_tokens - r->generated));
}

/* The running request of lane ln that retract_decode takes first: the
 * fewest output tokens, then the longest prompt, then the newest (NULL
 * when every request waits for fetched KV). */
sim_req *sim_instance_ratio_victim(sim_instance *in, sim_lane *ln)
{
    sim_req *best = NULL;
    int64_t best_gen = 0;
    for (sim_req *r = ln->running.tail; r; r = r->run_link.prev) {
        if (r->fetching) continue;
        int64_t g = generated_now(in, r);
        if (!best || g < best_gen || (g == best_gen && r->spec.input_tokens > best->spec.input_tokens)) {
            best = r;
            best_gen = g;
        }
    }
    return best;
}

void sim_instance_ratio_after_step(sim_instance *in, int retracted)
{
    if (!retracted) {
        in->ratio -= in->cfg.ratio_decay;
        if (in->ratio < in->cfg.ratio_min) in->ratio = in->cfg.ratio_min;
        return;
    }
    double done = 0, total = 0, n = 0;
    for (int32_t k = 0; k < in->n_lanes; k++)
        for (sim_req *r = in->lanes[k].running.head; r; r = sim_req_next(r, SIM_RUN_LINK)) {
            done += (double)generated_now(in, r);
            total += (double)r->spec.output_tokens;
            n += 1;
        }
    double est = (done + (double)in->cfg.retract_steps * n) / (total + 1);
    in->ratio = est < 1 ? est : 1;
}

void sim_instance_ratio_idle(sim_instance *in)
{
    in->ratio = in->cfg.ratio_init;
}

double sim_instance_ratio(const sim_instance *in)
{
    return in->ratio;
}
