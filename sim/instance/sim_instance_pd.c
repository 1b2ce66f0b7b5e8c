/* sim_instance_pd — the prefill/decode hand-over on an instance: a prefill
 * instance holds a finished prompt's KV until it has moved; a decode
 * instance reserves blocks (FIFO back-pressure when full), takes the
 * arrived KV in at the next iteration boundary and stamps the first decode
 * token. See sim_instance_impl.h. */
#include "sim_instance_impl.h"

void sim_instance_forget_joined(sim_instance *in, sim_req *r)
{
    /* A request still on the just-joined list (pre_link) leaves it first. */
    if (in->role != SIM_ROLE_DECODE || r->state != SIM_REQ_DECODE) return;
    sim_lane *ln = lane_of(in, r);
    if (r->pre_link.prev || r->pre_link.next || ln->just_joined.head == r)
        sim_req_list_remove(&ln->just_joined, r, SIM_PRE_LINK);
}

/* decode role: arrived KV joins lane ln's decode set (only between its
 * iterations). */
void sim_instance_join_ready(sim_instance *in, sim_lane *ln)
{
    /* Several lanes: up to this lane's fair share; the rest join the next
     * lanes to reach a boundary. */
    int64_t share = in->n_lanes > 1 ? (in->running_n + in->ready.n + in->n_lanes - 1) / in->n_lanes : INT64_MAX;
    while (in->ready.head && ln->running.n < share) {
        sim_req *r = in->ready.head;
        sim_req_list_remove(&in->ready, r, SIM_RUN_LINK);
        run_add(in, ln, r);
        in->reserved--;
        sim_instance_decode_join(in, ln, r);
        sim_req_list_push_back(&ln->just_joined, r, SIM_PRE_LINK);
    }
}

/* Blocks a decode instance with reserve admission promises a request: its
 * whole sequence (prompt KV plus the tokens still to generate). */
static int64_t resv_need(const sim_instance *in, const sim_req *r)
{
    return blocks_for(in, (int64_t)r->prefill_target + (r->spec.output_tokens - r->generated));
}

int sim_instance_can_reserve(const sim_instance *in, const sim_req *r)
{
    int64_t need = blocks_for(in, r->prefill_target);
    /* reserve admission (TensorRT-LLM's GUARANTEED_NO_EVICT generation
     * worker, SGLang's decode pre-allocation): take the KV only when the
     * whole sequence fits beside what running and incoming requests were
     * promised, so decoding never runs out of blocks (the first request
     * always gets in). */
    if (in->reserve && in->running_n + in->reserved > 0 && in->resv_total + resv_need(in, r) > in->blocks_total)
        return 0;
    /* Requests preempted here are recomputed before new KV is taken in
     * (they head the engine's waiting queue). */
    if (in->waiting.n > 0) return 0;
    return in->blocks_total - in->blocks_used - cached_kv(in) >= need &&
           in->running_n + in->reserved < (int64_t)in->cfg.max_seqs * in->n_lanes;
}

void sim_instance_do_reserve(sim_instance *in, sim_req *r)
{
    if (in->reserve) {
        r->resv_blocks = (int32_t)resv_need(in, r);
        in->resv_total += r->resv_blocks;
    }
    r->blocks = (int32_t)blocks_for(in, r->prefill_target);
    in->blocks_used += r->blocks;
    in->reserved++;
    r->instance = in->id;
    r->state = SIM_REQ_KV_MOVING;
    r->kv_reserved = sim_engine_now(in->eng);
}

/* decode role: FIFO grant of blocks to requests whose KV waits upstream. */
void sim_instance_grant_pending(sim_instance *in)
{
    while (in->kv_pending.head && sim_instance_can_reserve(in, in->kv_pending.head)) {
        sim_req *r = in->kv_pending.head;
        sim_req_list_remove(&in->kv_pending, r, SIM_RUN_LINK);
        sim_instance_do_reserve(in, r);
        in->hooks.on_kv_reserved(in->hooks.ctx, r);
    }
}

void sim_instance_release_hold(sim_instance *in, sim_req *r)
{
    SIM_ASSERT(in->role == SIM_ROLE_PREFILL && r->hold_blocks >= 0, sim_engine_now(in->eng));
    in->blocks_used -= r->hold_blocks;
    r->hold_blocks = 0;
    if (r->hold_shared > 0) sim_prefix_release(in->pc, r->keys, r->hold_shared, sim_engine_now(in->eng));
    r->hold_shared = 0;
    in->held--;
    /* Freed memory may let waiting prompts in. */
    sim_instance_kick(in);
}

void sim_instance_claim(sim_instance *in, sim_req *r)
{
    SIM_ASSERT(in->role == SIM_ROLE_DECODE && r->decode_pick >= 0, sim_engine_now(in->eng));
    in->outstanding += r->spec.output_tokens;
    sim_instance_publish(in);
}

int sim_instance_reserve(sim_instance *in, sim_req *r)
{
    SIM_ASSERT(in->role == SIM_ROLE_DECODE, sim_engine_now(in->eng));
    /* Decode-side work counts from the moment a request is assigned here
     * (at its arrival when claimed then: the prompt's one prefill token is
     * generated before it comes, so that token leaves the claim now). */
    if (r->decode_pick >= 0) in->outstanding -= r->generated;
    else in->outstanding += r->spec.output_tokens - r->generated;
    r->instance = in->id;
    if (!in->kv_pending.head && sim_instance_can_reserve(in, r)) {
        sim_instance_do_reserve(in, r);
        sim_instance_publish(in);
        return 1;
    }
    r->state = SIM_REQ_KV_HOLD;
    sim_req_list_push_back(&in->kv_pending, r, SIM_RUN_LINK);
    sim_instance_publish(in);
    return 0;
}

void sim_instance_submit_decode(sim_instance *in, sim_req *r)
{
    SIM_ASSERT(in->role == SIM_ROLE_DECODE && r->state == SIM_REQ_KV_MOVING, sim_engine_now(in->eng));
    r->state = SIM_REQ_READY;
    r->kv_arrived = sim_engine_now(in->eng);
    sim_req_list_push_back(&in->ready, r, SIM_RUN_LINK);
    sim_lane *ln = sim_instance_idle_lane(in);
    if (ln) {
        sim_instance_join_ready(in, ln);
        sim_instance_schedule(in, ln);
    }
}

