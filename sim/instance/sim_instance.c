/* sim_instance — continuous batching on one replica; see sim_instance.h for
 * the model and the O(log B) bookkeeping. Invariant kept between iterations
 * of a lane (decode step n = ln->dstep completed): a decoding request r of
 * that lane holds blocks_for(r->ctx_base + n) − its shared prefix KV
 * blocks; a waiting/prefilling one holds r->blocks; in->blocks_used is the
 * sum over every lane. With pp > 1 stages, each lane's batch goes through
 * the host and every stage in turn, waiting where an earlier batch still
 * occupies one (sim_instance_schedule). */
#include "sim_instance_impl.h"

#include "sim_energy.h"
#include "sim_graph_sizes.h"
#include "sim_heap.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Writes the router's view after every change of load, so routing a request
 * reads a contiguous array instead of calling into every instance. */
void sim_instance_publish(sim_instance *in)
{
    if (!in->published) return;
    in->published->outstanding_tokens = in->outstanding;
    in->published->waiting = (int32_t)in->waiting.n;
    in->published->running = (int32_t)in->running_n;
    in->published->kv_blocks_used = in->blocks_used + cached_kv(in);
    in->published->kv_blocks_total = in->blocks_total;
    in->published->active_blocks = in->blocks_used;
    if (in->pc) {
        sim_prefix_stats st;
        sim_prefix_stats_get(in->pc, &st);
        in->published->cached_blocks = st.total;
        in->published->active_blocks += st.referenced * in->cbk;
    }
    if (in->hooks.on_load) in->hooks.on_load(in->hooks.ctx, in->id, in->outstanding);
}

/* ---- finish heap ------------------------------------------------------- */

/* Keys live in the heap entries so sifting never touches the requests
 * themselves (they are scattered in memory; the heap is contiguous): no
 * back-index is kept in the request, because writing one into every moved
 * entry's request costs a cache miss per level once the cluster's requests
 * no longer fit in cache. A request leaves from the top when it finishes;
 * only a preemption looks for it in the heap (a scan of at most the batch,
 * on a path that already pays for a recompute). */

static void resv_release(sim_instance *in, sim_req *r);

static inline int heap_less(const void *ctx, const heap_ent *a, const heap_ent *b)
{
    (void)ctx;
    return a->finish_iter < b->finish_iter || (a->finish_iter == b->finish_iter && a->id < b->id);
}

SIM_HEAP_DEFINE(finish_heap, heap_ent, 2, const void *, heap_less, SIM_HEAP_NO_PLACE)

/* The lane's copy of the heap's top (sim_lane.top_finish, top_req). */
static inline void top_sync(sim_lane *ln)
{
    ln->top_finish = ln->heap_n > 0 ? ln->heap[0].finish_iter : INT64_MAX;
    ln->top_req = ln->heap_n > 0 ? ln->heap[0].r : NULL;
}

static int heap_push(sim_lane *in, sim_req *r)
{
    if (in->heap_n == in->heap_cap) {
        int32_t nc = in->heap_cap ? in->heap_cap * 2 : 64;
        heap_ent *nh = realloc(in->heap, (size_t)nc * sizeof *nh);
        if (!nh) return SIM_ENOMEM;
        in->heap = nh;
        in->heap_cap = nc;
    }
    in->heap[in->heap_n++] = (heap_ent){r->finish_iter, r->spec.id, r};
    finish_heap_up(NULL, in->heap, (size_t)in->heap_n - 1);
    top_sync(in);
    return SIM_OK;
}

static void heap_remove(sim_engine *eng, sim_lane *in, sim_req *r)
{
    int32_t i = 0;
    while (i < in->heap_n && in->heap[i].r != r) i++;
    SIM_ASSERT(i < in->heap_n, sim_engine_now(eng));
    in->heap_n--;
    finish_heap_remove(NULL, in->heap, (size_t)in->heap_n, (size_t)i);
    top_sync(in);
}

/* ---- decode set -------------------------------------------------------- */

void sim_instance_decode_join(sim_instance *in, sim_lane *ln, sim_req *r)
{
    int64_t n = ln->dstep;
    r->lane = ln->idx;
    r->state = SIM_REQ_DECODE;
    if (in->spec) {
        /* Its KV tokens now; finish_iter is the bound of one token a step. */
        SIM_ASSERT(r->blocks == blocks_for(in, r->prefill_target) - shared_kv(in, r), sim_engine_now(in->eng));
        r->ctx_base = r->prefill_target;
        r->join_iter = n;
        r->generated_at_join = r->generated;
        r->finish_iter = n + (r->spec.output_tokens - r->generated);
        r->spec_scale = sim_spec_request_scale(in->spec);
        ln->dec_n++;
        ln->dec_base_sum += r->ctx_base;
        if (heap_push(ln, r) != SIM_OK)
            sim_engine_fail(in->eng, SIM_ENOMEM, "out of memory growing the decode set of instance %d", in->id);
        return;
    }
    r->ctx_base = (int64_t)r->prefill_target - n;
    r->join_iter = n;
    r->generated_at_join = r->generated;
    r->finish_iter = n + (r->spec.output_tokens - r->generated);
    SIM_ASSERT(r->blocks == blocks_for(in, r->ctx_base + n) - shared_kv(in, r), sim_engine_now(in->eng));
    ln->dec_n++;
    ln->dec_base_sum += r->ctx_base;
    ln->res_cnt[mod_bs(in, r->ctx_base)]++;
    if (heap_push(ln, r) != SIM_OK)
        sim_engine_fail(in->eng, SIM_ENOMEM, "out of memory growing the decode set of instance %d", in->id);
}

/* Takes r out of the decode set at the current iteration index; returns the
 * blocks it held (already subtracted from blocks_used). */
static int64_t decode_leave(sim_instance *in, sim_req *r)
{
    sim_lane *ln = lane_of(in, r);
    sim_instance_forget_joined(in, r);
    if (in->spec) {
        int64_t held = r->blocks;
        heap_remove(in->eng, ln, r);
        ln->dec_n--;
        ln->dec_base_sum -= r->ctx_base;
        in->blocks_used -= held;
        r->blocks = 0;
        return held;
    }
    int64_t held = blocks_for(in, r->ctx_base + ln->dstep) - shared_kv(in, r);
    heap_remove(in->eng, ln, r);
    ln->dec_n--;
    ln->dec_base_sum -= r->ctx_base;
    ln->res_cnt[mod_bs(in, r->ctx_base)]--;
    in->blocks_used -= held;
    r->generated = r->generated_at_join + (int32_t)(ln->dstep - r->join_iter);
    r->blocks = 0;
    return held;
}

/* ---- lifecycle ---------------------------------------------------------- */


/* r's last token was sampled now; the client sees it `seen` later
 * (sim_detok_step). */
static void finish(sim_instance *in, sim_req *r, sim_time seen)
{
    sim_time now = sim_engine_now(in->eng);
    sim_instance_release_refs(in, r);
    r->state = SIM_REQ_DONE;
    r->finish = now;
    SIM_ASSERT(r->generated == r->spec.output_tokens, now);
    /* The client sees its tokens in order. */
    if (now + seen < r->first_token + r->stream_first) seen = r->first_token + r->stream_first - now;
    sim_req_record rec = {
        .id = r->spec.id,
        .instance = in->id,
        .input_tokens = r->spec.input_tokens,
        .output_tokens = r->spec.output_tokens,
        .preemptions = r->preemptions,
        .arrival = r->spec.arrival,
        .first_scheduled = r->first_scheduled,
        .first_token = r->first_token,
        .finish = now,
        .prefill_instance = r->prefill_instance,
        .kv_reserved = r->kv_reserved,
        .kv_arrived = r->kv_arrived,
        .decode_first = r->decode_first,
        .kv_bytes = r->kv_bytes,
        .cached_tokens = r->cached_tokens,
        .stream_first = r->stream_first,
        .stream_last = seen,
    };
    r->stream_last = seen;
    int mrc = sim_metrics_add_request(in->metrics, &rec);
    if (mrc >= 0 && in->class_metrics && r->spec.cls >= 0 && r->spec.cls < in->n_class_metrics)
        mrc = sim_metrics_add_request(in->class_metrics[r->spec.cls], &rec);
    if (mrc < 0) /* a lost record would make every statistic wrong: the run fails */
        sim_engine_fail(in->eng, mrc, "%s request %llu on instance %d",
                        mrc == SIM_ENOMEM ? "out of memory recording finished" : "inconsistent timestamps of finished",
                        (unsigned long long)r->spec.id, in->id);
    in->hooks.on_finish(in->hooks.ctx, r);
}

static void preempt(sim_instance *in, sim_req *r)
{
    int64_t before;
    int64_t pre_before = r->state == SIM_REQ_PREFILL ? r->prefill_target - r->prefilled : 0;
    /* preempt_keeps_kv: its full blocks stay cached (kept_tokens); the
     * blocks free before it and its partial last block are reused first. */
    int64_t in_kv = r->state != SIM_REQ_DECODE ? r->prefilled
                    : in->spec                ? r->ctx_base
                                              : r->ctx_base + lane_of(in, r)->dstep;
    r->kept_blocks = in->cfg.preempt_keeps_kv && !in->pc ? (int32_t)(in_kv / in->bs) : 0;
    r->kept_mark = in->blocks_taken + (in->blocks_total - in->blocks_used) + (in_kv % in->bs != 0);
    if (r->state == SIM_REQ_DECODE) {
        before = r->spec.output_tokens -
                 (in->spec ? r->generated : r->generated_at_join + (int32_t)(lane_of(in, r)->dstep - r->join_iter));
        decode_leave(in, r);
    } else {
        SIM_ASSERT(r->state == SIM_REQ_PREFILL, sim_engine_now(in->eng));
        before = (int64_t)(r->prefill_target - r->prefilled) + (r->spec.output_tokens - r->generated);
        in->blocks_used -= r->blocks;
        r->blocks = 0;
        sim_req_list_remove(&lane_of(in, r)->prefilling, r, SIM_PRE_LINK);
    }
    run_remove(in, r);
    resv_release(in, r);
    sim_instance_release_refs(in, r);
    /* Recompute: prompt plus everything generated so far goes through prefill again. */
    r->prefill_target = r->spec.input_tokens + r->generated;
    r->prefilled = 0;
    r->state = SIM_REQ_WAITING;
    r->preemptions++;
    in->preemptions++;
    sim_instance_gate_requeued(in, r);
    int64_t after = (int64_t)r->prefill_target + (r->spec.output_tokens - r->generated);
    in->outstanding += after - before;
    in->pending_prefill += r->prefill_target - pre_before;
    if (in->by_priority) {
        sim_instance_waiting_place(in, r);
    } else if (in->ratio_mode) {
        /* SGLang appends a retracted request to its waiting queue: behind
         * the received requests, ahead of arrivals not yet received. */
        sim_req *seen = in->waiting.tail;
        for (int64_t k = 0; k < in->unseen && seen; k++) seen = seen->run_link.prev;
        sim_req_list_insert_after(&in->waiting, seen, r, SIM_RUN_LINK);
    } else {
        sim_req_list_push_front(&in->waiting, r, SIM_RUN_LINK);
    }
    queued_add(in, 1);
}

/* Largest chunk <= want that fits the free blocks; allocates them. */
static int32_t take_chunk(sim_instance *in, sim_req *r, int32_t want)
{
    int64_t have = r->blocks + shared_kv(in, r);
    int64_t need = blocks_for(in, (int64_t)r->prefilled + want) - have;
    int64_t free_now = sim_instance_free_blocks(in, need);
    if (need > free_now) {
        int64_t t = (have + free_now) * in->bs - r->prefilled;
        want = t > 0 ? (int32_t)(t < want ? t : want) : 0;
        need = blocks_for(in, (int64_t)r->prefilled + want) - have;
    }
    if (want <= 0) return 0;
    if (need > 0) {
        r->blocks += (int32_t)need;
        in->blocks_used += need;
        in->blocks_taken += need;
    }
    return want;
}




static int add_chunk(sim_instance *eng_in, sim_lane *in, sim_req *r, int32_t t)
{
    if (in->n_chunks == in->chunk_cap) {
        int32_t nc = in->chunk_cap ? in->chunk_cap * 2 : 64;
        model_chunk *c = realloc(in->chunks, (size_t)nc * sizeof *c);
        if (!c) goto nomem;
        in->chunks = c;
        sim_req **cr = realloc(in->chunk_req, (size_t)nc * sizeof *cr);
        if (!cr) goto nomem;
        in->chunk_req = cr;
        in->chunk_cap = nc;
    }
    in->chunks[in->n_chunks] = (model_chunk){.tokens = t, .cached = r->prefilled};
    in->chunk_req[in->n_chunks] = r;
    in->n_chunks++;
    return SIM_OK;
nomem:
    sim_engine_fail(eng_in->eng, SIM_ENOMEM, "out of memory growing the batch of instance %d", eng_in->id);
    return SIM_ENOMEM;
}

static void on_iter_end(sim_engine *eng, void *ctx, uint64_t arg);
static void iter_end_warm(const void *ctx, uint64_t arg);

/* The newest running request that is not waiting for fetched KV (a fetch in
 * flight cannot be called back). */
static sim_req *victim(sim_instance *in, sim_lane *ln)
{
    if (in->by_priority) {
        sim_req *v = sim_instance_priority_victim(in, ln);
        SIM_ASSERT(v != NULL, sim_engine_now(in->eng));
        return v;
    }
    sim_req *r = ln->running.tail;
    while (r && r->fetching) r = r->run_link.prev;
    SIM_ASSERT(r != NULL, sim_engine_now(in->eng));
    return r;
}






static int32_t min3(int64_t a, int64_t b, int64_t c)
{
    int64_t m = a < b ? a : b;
    return (int32_t)(m < c ? m : c);
}

/* Fills the iteration's prefill chunks from `budget` tokens: started
 * prefills first, then admissions from the queue. */
/* admission reserve (TensorRT-LLM's GUARANTEED_NO_EVICT, SGLang's
 * conservative admission): a request is admitted only when the blocks for
 * its whole remaining sequence (the prompt alone on a prefill instance) fit
 * beside those promised to the running requests, so decoding never runs out
 * of KV and nothing is preempted; the rest wait in the queue. */
static int resv_admit(sim_instance *in, sim_req *r)
{
    if (in->ratio_mode) return sim_instance_ratio_admit(in, r);
    if (!in->reserve) return 1;
    int64_t tokens = (int64_t)r->prefill_target + (in->role == SIM_ROLE_PREFILL ? 0 : r->spec.output_tokens - r->generated);
    if (in->spec && in->role != SIM_ROLE_PREFILL) tokens += in->spec_k; /* the last step's draft KV */
    int64_t need = blocks_for(in, tokens);
    if (in->resv_total + need > in->blocks_total && in->running_n > 0) return 0;
    r->resv_blocks = (int32_t)need;
    in->resv_total += need;
    return 1;
}

static void resv_release(sim_instance *in, sim_req *r)
{
    in->resv_total -= r->resv_blocks;
    r->resv_blocks = 0;
}

/* An admitted request put back into the queue in the same pass. */
static void admit_undo(sim_instance *in, sim_req *r)
{
    resv_release(in, r);
    if (in->ratio_mode) sim_instance_ratio_refused(in, r);
}

/* scheduler.preempt_keeps_kv (vLLM V1 and SGLang cache a request's full
 * KV blocks when it is preempted): its freed blocks go to the end of the
 * free list, the blocks freed before them are reused first, and its own
 * are overwritten from the end of the sequence, so what other allocations
 * took since the preemption is lost from its end and the rest is found in
 * the cache again: the tokens a preempted request, re-admitted now, need
 * not recompute (at least one is always computed). */
static int64_t kept_tokens(const sim_instance *in, const sim_req *r)
{
    if (r->kept_blocks <= 0 || r->prefilled > 0 || r->blocks > 0) return 0;
    int64_t lost = in->blocks_taken - r->kept_mark;
    int64_t left = r->kept_blocks - (lost > 0 ? lost : 0);
    int64_t most = (r->prefill_target - 1) / in->bs;
    if (left > most) left = most;
    return left > 0 ? left * in->bs : 0;
}

/* Takes the surviving blocks back (they were counted free) as prefilled. */
static void reuse_kept(sim_instance *in, sim_req *r, int64_t tokens)
{
    r->kept_blocks = 0;
    if (tokens <= 0) return;
    int64_t b = tokens / in->bs;
    r->blocks += (int32_t)b;
    in->blocks_used += b;
    r->prefilled += (int32_t)tokens;
    in->outstanding -= tokens;
    in->pending_prefill -= tokens;
}

/* admit 0: only started prefills continue (vLLM V1 schedules no waiting
 * request in a step that had to preempt, so a request preempted to make
 * room is not re-admitted into that room at once). */
static void fill_prefill(sim_instance *in, sim_lane *ln, int64_t budget, int admit)
{
    ln->n_chunks = 0;
    for (sim_req *r = ln->prefilling.head; r && budget > 0; r = sim_req_next(r, SIM_PRE_LINK)) {
        if (r->fetching) continue;
        int32_t t = take_chunk(in, r, min3(r->prefill_target - r->prefilled, in->cfg.chunk_tokens, budget));
        if (t == 0) break;
        if (add_chunk(in, ln, r, t) != SIM_OK) return;
        budget -= t;
    }
    /* Several lanes: each admits up to its fair share of the requests here,
     * so the batches in flight stay balanced (vLLM hands a new request to
     * the virtual engine with the fewest). */
    int64_t share = in->n_lanes > 1 ? (in->running_n + in->waiting.n + in->n_lanes - 1) / in->n_lanes : INT64_MAX;
    if (in->ratio_mode) sim_instance_ratio_pass_start(in);
    while (admit && budget > 0 && ln->running.n < in->cfg.max_seqs && ln->running.n < share &&
           in->waiting.n > in->unseen) {
        sim_req *r = in->waiting.head;
        if (!resv_admit(in, r)) break;
        sim_instance_match_prefix(in, r);
        if (sim_instance_plan_fetch(in, r)) {
            /* Admitted, but its prefill waits for the fetched KV. */
            sim_req_list_remove(&in->waiting, r, SIM_RUN_LINK);
            sim_instance_gate_admitted(in, r);
            queued_add(in, -1);
            run_add(in, ln, r);
            sim_req_list_push_back(&ln->prefilling, r, SIM_PRE_LINK);
            r->state = SIM_REQ_PREFILL;
            ln->fetching++;
            in->hooks.on_fetch_start(in->hooks.ctx, r);
            continue;
        }
        /* A waiting request is admitted only with its whole first chunk in
         * free blocks (vLLM allocates a new request's scheduled tokens at
         * once or leaves it waiting; TensorRT-LLM and SGLang likewise):
         * squeezing a sliver of a recomputed prompt into the last free
         * blocks would only have it preempted again at the next step. */
        int64_t reuse = kept_tokens(in, r);
        int32_t want = min3(r->prefill_target - r->prefilled - reuse, in->cfg.chunk_tokens, budget);
        if (in->cfg.whole_prompts && ln->n_chunks > 0 && want < r->prefill_target - r->prefilled - reuse) {
            /* scheduler.whole_prompts: it waits for an iteration it fits. */
            sim_instance_unmatch_prefix(in, r);
            admit_undo(in, r);
            break;
        }
        int64_t need = blocks_for(in, (int64_t)r->prefilled + reuse + want) - (r->blocks + shared_kv(in, r));
        int32_t t = 0;
        if (need <= 0 || sim_instance_free_blocks(in, need) >= need) {
            reuse_kept(in, r, reuse);
            t = take_chunk(in, r, want);
        }
        if (t < want) {
            if (t > 0 || r->blocks > 0) { /* cannot happen: the blocks were free */
                in->blocks_used -= r->blocks;
                r->blocks = 0;
                in->outstanding += r->prefilled;
                in->pending_prefill += r->prefilled;
                r->prefilled = 0;
            }
            sim_instance_unmatch_prefix(in, r);
            admit_undo(in, r);
            break;
        }
        sim_req_list_remove(&in->waiting, r, SIM_RUN_LINK);
        sim_instance_gate_admitted(in, r);
        queued_add(in, -1);
        run_add(in, ln, r);
        sim_req_list_push_back(&ln->prefilling, r, SIM_PRE_LINK);
        r->state = SIM_REQ_PREFILL;
        if (add_chunk(in, ln, r, t) != SIM_OK) return;
        budget -= t;
    }
}

/* When lane ln's batch, started now, leaves the last stage: the host
 * prepares it (framework), then each stage runs it once the stage has
 * finished the batches ahead of it and the activations have crossed the
 * hop before it. Batches enter the pipeline in the order they are started
 * and every stage serves them first come first served, so each one's
 * times are fixed at its start. */
static sim_time pipeline_end(sim_instance *in, const model_batch *b, sim_time now)
{
    double host = 0;
    if (in->energy_on) {
        /* Each stage's GPUs run 1/pp of the batch's layers. */
        model_iter_cost ic;
        model_cost_pipeline_cost(in->cost, b, in->stage_s, in->hop_s, &host, &ic);
        double dev = 0;
        for (int32_t k = 0; k < in->n_stages; k++) dev += in->stage_s[k];
        in->energy_busy_s += sim_energy_busy_s(dev, ic.compute_busy_s, ic.mem_busy_s, in->energy_mem_share) /
                             in->n_stages;
    } else {
        model_cost_pipeline(in->cost, b, in->stage_s, in->hop_s, &host);
    }
    sim_time t = now > in->host_free ? now : in->host_free;
    t += (sim_time)(host * 1e9 + 0.5);
    in->host_free = t;
    for (int32_t k = 0; k < in->n_stages; k++) {
        if (t < in->stage_free[k]) t = in->stage_free[k];
        t += (sim_time)(in->stage_s[k] * 1e9 + 0.5);
        in->stage_free[k] = t;
        if (k + 1 < in->n_stages) t += (sim_time)(in->hop_s[k] * 1e9 + 0.5);
    }
    return t;
}

/* Speculative decoding: blocks the decode set needs beyond what it holds
 * for this step's verify (each request's KV tokens + 1 + k). */
static int64_t spec_need(const sim_instance *in, const sim_lane *ln)
{
    int64_t need = 0;
    for (int32_t i = 0; i < ln->heap_n; i++) {
        const sim_req *r = ln->heap[i].r;
        int64_t want = blocks_for(in, r->ctx_base + 1 + in->spec_k) - shared_kv(in, r) - r->blocks;
        if (want > 0) need += want;
    }
    return need;
}

/* Hands each decoding request the blocks spec_need counted (the caller
 * adds their sum to blocks_used). */
static void spec_take(sim_instance *in, sim_lane *ln)
{
    for (int32_t i = 0; i < ln->heap_n; i++) {
        sim_req *r = ln->heap[i].r;
        int64_t want = blocks_for(in, r->ctx_base + 1 + in->spec_k) - shared_kv(in, r);
        if (want > r->blocks) r->blocks = (int32_t)want;
    }
}

/* Colocated encoding: the vision tower's seconds for the requests of lane
 * ln's chunks that still owe it (their first chunk), energy included. */
static double encode_due(sim_instance *in, const sim_lane *ln)
{
    double s = 0;
    for (int32_t i = 0; i < ln->n_chunks; i++) {
        sim_req *r = ln->chunk_req[i];
        if (!r->encode_due) continue;
        double cs = 0, ms = 0, e = in->enc_fn(in->enc_ctx, r, &cs, &ms);
        r->encode_due = 0;
        if (in->energy_on) in->energy_busy_s += sim_energy_busy_s(e, cs, ms, in->energy_mem_share);
        s += e;
    }
    return s;
}

/* A decode-only iteration replays the CUDA graph of the smallest captured
 * batch that holds it (sim_graph_sizes.h): each attention-DP rank runs the
 * graph of its share of the batch (the ranks pad to the same size), the
 * extra rows dummy sequences of 1 token of context. A batch above the
 * largest captured size runs without a graph, as it is. */
int32_t sim_instance_graph_batch(const sim_instance *in, int32_t n)
{
    if (in->graph_max_bs <= 0 || n <= 0) return n;
    const int32_t dp = in->dp_ranks, per = (n + dp - 1) / dp;
    if (per > in->graph_max_bs) return n;
    return sim_graph_sizes_pad(in->cfg.cuda_graph_sizes, in->graph_max_bs, per) * dp;
}

static void graph_pad(const sim_instance *in, model_batch *b)
{
    const int32_t pad = sim_instance_graph_batch(in, b->n_decode) - b->n_decode;
    if (pad <= 0) return;
    b->n_decode += pad;
    b->decode_ctx_sum += pad;
    b->n_pad = pad;
}

/* Decode-first blocks: requests whose context sits on a block boundary at
 * step n need one more (speculative decoding: spec_need's). Preempts until
 * they fit, ratio admission in SGLang's retract_decode order; takes them
 * and returns how many. */
static inline int64_t decode_reserve(sim_instance *in, sim_lane *ln, int64_t n, int *preempted)
{
    int64_t need;
    for (;;) {
        need = in->spec ? spec_need(in, ln) : ln->dec_n ? ln->res_cnt[mod_bs(in, 1 - n)] : 0;
        if (sim_instance_free_blocks(in, need) >= need) break;
        sim_req *v = in->ratio_mode ? sim_instance_ratio_victim(in, ln) : NULL;
        preempt(in, v ? v : victim(in, ln));
        *preempted = 1;
    }
    if (in->spec) spec_take(in, ln);
    in->blocks_used += need;
    in->blocks_taken += need;
    return need;
}

/* The decode-first batch of lane ln at step n: every decoding request's
 * block, then prefill in the rest of the budget. Returns 1 when the lane
 * has work, 0 when it went idle or the run failed (out of memory). */
static inline int decode_fill(sim_instance *in, sim_lane *ln, int64_t n, int may_admit, int *preempted)
{
    for (;;) {
        const int64_t need = decode_reserve(in, ln, n, preempted);
        fill_prefill(in, ln, in->cfg.max_batched_tokens - lane_decode_tokens(in, ln),
                     may_admit && (!*preempted || ln->dec_n == 0));
        if (sim_engine_failed(in->eng, NULL)) return 0;
        if (ln->n_chunks > 0 || ln->dec_n > 0) return 1;
        if (ln->running.n == ln->fetching) { /* nothing runnable: idle (or waiting for fetches) */
            if (in->ratio_mode && in->running_n == 0) sim_instance_ratio_idle(in);
            sim_instance_publish(in);
            return 0;
        }
        /* Prefills hold every free block and none can grow: make room the way
         * vLLM does, by preempting the newest request. */
        in->blocks_used -= need;
        in->blocks_taken -= need;
        preempt(in, victim(in, ln));
    }
}

/* One stage's seconds for batch b, the iteration's busy seconds added to
 * the energy account (a speculative step's draft model, priced apart, adds
 * time but no busy seconds). */
static inline double stage_seconds(sim_instance *in, const model_batch *b)
{
    double s;
    model_iter_cost ic;
    model_iter_cost *icp = in->energy_on && !in->cost_fn ? &ic : NULL;
    if (in->spec)
        s = model_cost_verify_iteration(in->cost, b, 1 + in->spec_k, icp) + sim_spec_draft_s(in->spec, b);
    else
        s = in->cost_fn ? in->cost_fn(in->cost_ctx, b) : model_cost_iteration(in->cost, b, icp);
    if (icp) in->energy_busy_s += sim_energy_busy_s(s, ic.compute_busy_s, ic.mem_busy_s, in->energy_mem_share);
    return s;
}

/* How long lane ln's batch b, started now, takes: the vision tower first
 * (before the forward pass that takes its embeddings), then one stage or
 * the pipeline; at least 1 ns. */
static inline sim_time iter_duration(sim_instance *in, const sim_lane *ln, const model_batch *b, sim_time now)
{
    sim_time dur;
    const double enc_s = in->enc_fn && ln->n_chunks > 0 ? encode_due(in, ln) : 0;
    if (in->n_stages > 1) dur = pipeline_end(in, b, now) - now;
    else dur = (sim_time)((stage_seconds(in, b) + enc_s) * 1e9 + 0.5);
    return dur < 1 ? 1 : dur;
}

/* Marks lane ln busy with an iteration of n_dec decodes started now and
 * schedules its end dur later (on failure the engine records it and the
 * run stops). */
static inline void iter_begin(sim_instance *in, sim_lane *ln, int32_t n_dec, sim_time now, sim_time dur)
{
    ln->busy = 1;
    if (in->busy_lanes++ == 0) in->busy_since = now;
    ln->iter_start = now;
    ln->cur_n_decode = n_dec;
    ln->cur_batch = n_dec + ln->n_chunks;
    sim_engine_after_warm(in->eng, dur, on_iter_end, iter_end_warm, in, (uint64_t)ln->idx);
    sim_instance_publish(in);
}

/* Builds and starts lane ln's next iteration if it has work. decode_first
 * (vLLM, Sarathi) gives every decoding request a token and fills the rest
 * of the budget with prefill; prefill_first (SGLang's default) runs a
 * prefill-only iteration whenever prefill work can be scheduled and
 * decodes only otherwise. The budget and max_seqs bound each lane's
 * batch, as they bound one engine step. */
void sim_instance_schedule(sim_instance *in, sim_lane *ln)
{
    const sim_time now = sim_engine_now(in->eng);
    int64_t n = ln->dstep + 1;
    int with_decode = 1, preempted = 0;
    const int may_admit = sim_instance_gate_admit(in, ln);
    if (in->prefill_first && ln->dec_n > 0) {
        fill_prefill(in, ln, in->cfg.max_batched_tokens, may_admit);
        if (sim_engine_failed(in->eng, NULL)) return; /* out of memory: the run stops */
        if (ln->n_chunks > 0) with_decode = 0;
    }
    if (with_decode && !decode_fill(in, ln, n, may_admit, &preempted)) return;
    /* Speculative verify: 1 + k tokens per decoding request, Σ ctx counted
     * from each one's KV tokens plus the token it feeds; the draft's k
     * passes run before it. */
    if (in->spec) n = 1;
    const int32_t n_dec = with_decode ? (int32_t)ln->dec_n : 0;
    if (in->ratio_mode && n_dec > 0) sim_instance_ratio_after_step(in, preempted);
    model_batch b = {
        .n_chunks = ln->n_chunks,
        .chunks = ln->chunks,
        .n_decode = n_dec,
        .decode_ctx_sum = n_dec ? ln->dec_base_sum + ln->dec_n * n : 0,
    };
    if (ln->n_chunks == 0) graph_pad(in, &b);
    iter_begin(in, ln, n_dec, now, iter_duration(in, ln, &b, now));
}

sim_lane *sim_instance_idle_lane(sim_instance *in)
{
    for (int32_t k = 0; k < in->n_lanes; k++)
        if (!in->lanes[k].busy) return &in->lanes[k];
    return NULL;
}

void sim_instance_kick(sim_instance *in)
{
    int any = 0;
    for (int32_t k = 0; k < in->n_lanes; k++) {
        if (in->lanes[k].busy) continue;
        any = 1;
        sim_instance_schedule(in, &in->lanes[k]);
        if (sim_engine_failed(in->eng, NULL)) return;
    }
    if (!any) sim_instance_publish(in);
}

/* A request's lines that its finish or its prefill's end read and write. */
static inline void prefetch_req(const sim_req *r)
{
    const char *p = (const char *)r;
    for (size_t off = 0; off < sizeof *r; off += 64) __builtin_prefetch(p + off, 1);
}

/* The prefetch hint of an iteration's end (sim_warm_fn), called while the
 * event before it runs: the instance's first lines (its lane among them
 * without pipeline parallelism) were asked for an event earlier; this asks
 * for the rest of its hot part and for what its pointers lead to — the
 * finish heap's top (its request too when it finishes now), the
 * iteration's chunks and their requests' slots, the block-boundary counts,
 * the router's view. With thousands of instances
 * none of it stays in cache between two iterations of one instance. */
static void iter_end_warm(const void *ctx, uint64_t arg)
{
    const sim_instance *in = ctx;
    const char *p = ctx;
    /* The configuration's speculative-decoding block and what follows it
     * are read at set-up or per request, not per iteration. */
    const size_t hot_end = offsetof(sim_instance, cfg) + offsetof(sim_sched_cfg, spec);
    for (size_t off = 640; off < hot_end; off += 64) __builtin_prefetch(p + off);
    const sim_lane *ln = &in->lanes[arg];
    /* The finish heap's top entry, which the iteration's end compares; when
     * it finishes (the lane's copy of the top says so; with speculative
     * decoding the step's end decides, so always), its request, the heap's
     * top levels, which its removal sifts through, and its last entry,
     * which the removal moves to the top. */
    const char *h = (const char *)ln->heap;
    size_t hb = (size_t)ln->heap_n * sizeof *ln->heap;
    if (hb > 0) {
        __builtin_prefetch(h);
        __builtin_prefetch(h + sizeof *ln->heap - 1);
    }
    if (ln->top_req && ((ln->cur_n_decode > 0 && ln->top_finish == ln->dstep + 1) || in->spec)) {
        prefetch_req(ln->top_req);
        for (size_t off = 64; off < hb && off < 6 * 64; off += 64) __builtin_prefetch(h + off);
        __builtin_prefetch(h + hb - sizeof *ln->heap);
        __builtin_prefetch(h + hb - 1);
    }
    __builtin_prefetch(ln->chunks);
    __builtin_prefetch(ln->chunk_req);
    __builtin_prefetch(ln->res_cnt);
    __builtin_prefetch(in->published);
    /* The first waiting request, which the next schedule may admit. */
    if (in->waiting.head) prefetch_req(in->waiting.head);
}

/* A verify step ended: every decoding request keeps 1 + its accepted
 * drafts (at most what it still owes); those that are done get this step
 * as their finish_iter, the rest a later one, so the finish loop below
 * takes exactly the finished ones off the heap. Blocks stay as taken for
 * the step (they cover ctx + 1 + k ≥ the new KV). */
static int64_t spec_step_end(sim_instance *in, sim_lane *ln)
{
    const int64_t n = ln->dstep + 1; /* the step index once this step counts */
    int64_t tokens = 0;
    for (int32_t i = 0; i < ln->heap_n; i++) {
        sim_req *r = ln->heap[i].r;
        int32_t left = r->spec.output_tokens - r->generated;
        int32_t e = 1 + sim_spec_accepted(in->spec, r->spec_scale);
        if (e > left) e = left;
        r->generated += e;
        tokens += e;
        r->ctx_base += e;
        ln->dec_base_sum += e;
        in->outstanding -= e;
        r->finish_iter = r->generated >= r->spec.output_tokens ? n : n + (r->spec.output_tokens - r->generated);
        ln->heap[i].finish_iter = r->finish_iter;
    }
    finish_heap_heapify(NULL, ln->heap, (size_t)ln->heap_n);
    top_sync(ln);
    return tokens;
}

/* The iteration hook's record of lane ln's iteration that ended at now. */
static void iter_trace(sim_instance *in, const sim_lane *ln, sim_time now)
{
    sim_trace_iter it = {.start_ns = ln->iter_start, .end_ns = now, .decode_seqs = ln->cur_n_decode,
                         .prefill_seqs = ln->cur_batch - ln->cur_n_decode, .waiting = in->waiting.n,
                         .kv_used = in->blocks_total > 0 ? (double)in->blocks_used / (double)in->blocks_total : 0,
                         .slot = ln->idx,
                         .slots = in->n_lanes};
    for (int32_t k = 0; k < it.prefill_seqs && k < ln->n_chunks; k++) it.prefill_tokens += ln->chunks[k].tokens;
    in->hooks.on_iteration(in->hooks.ctx, in->id, &it);
}

/* The sampling window's batch-time and the busy time (the union over
 * lanes of time with a batch in flight) up to now. */
static void iter_account(sim_instance *in, const sim_lane *ln, sim_time now)
{
    sim_time from = ln->iter_start > in->win_start ? ln->iter_start : in->win_start;
    in->win_batch += (double)(now - from) * ln->cur_batch;
    if (--in->busy_lanes == 0) {
        sim_time bf = in->busy_since > in->win_start ? in->busy_since : in->win_start;
        in->win_busy += now - bf;
        in->busy_ns += now - in->busy_since;
    }
}

/* The iteration's entry in the inter-token gaps: a token's gap includes
 * the prefill-only iterations it sat through. */
static void iter_itl(sim_instance *in, sim_lane *ln, sim_time dur, int decoded, sim_time now)
{
    if (decoded) {
        int irc = sim_metrics_add_iteration(in->metrics, in->id, dur + ln->stall_ns, ln->cur_n_decode);
        SIM_ASSERT(irc == 0, now); /* it allocates nothing: only bad arguments fail */
        ln->stall_ns = 0;
        ln->dstep++;
    } else {
        int irc = sim_metrics_add_iteration(in->metrics, in->id, dur, 0);
        SIM_ASSERT(irc == 0, now);
        if (ln->dec_n > 0) ln->stall_ns += dur;
    }
}

/* Decoding requests whose last token was decode step n's leave. */
static void finish_decoded(sim_instance *in, sim_lane *ln, int64_t n, sim_time seen)
{
    while (ln->heap_n > 0 && ln->heap[0].finish_iter == n) {
        sim_req *r = ln->heap[0].r;
        int64_t kv_tokens = in->spec ? r->ctx_base : r->ctx_base + n;
        decode_leave(in, r);
        sim_instance_cache_output(in, r, kv_tokens);
        run_remove(in, r);
        sim_instance_gate_left(in, r);
        resv_release(in, r);
        finish(in, r, seen);
    }
}

/* Request r's prefill completed in the iteration that ended at now (it
 * sampled its next token): it finishes, hands its KV over (prefill role)
 * or joins the decoding set. */
static void prefill_complete(sim_instance *in, sim_lane *ln, sim_req *r, sim_time now, sim_time seen)
{
    sim_req_list_remove(&ln->prefilling, r, SIM_PRE_LINK);
    r->generated++;
    if (r->first_token < 0) {
        r->first_token = now;
        r->stream_first = seen;
    }
    if (r->generated >= r->spec.output_tokens) {
        if (in->role != SIM_ROLE_PREFILL) in->outstanding--;
        in->blocks_used -= r->blocks;
        r->blocks = 0;
        run_remove(in, r);
        sim_instance_gate_left(in, r);
        resv_release(in, r);
        finish(in, r, seen);
    } else if (in->role == SIM_ROLE_PREFILL) {
        /* Hand over: the blocks stay allocated here until the KV moved. */
        run_remove(in, r);
        sim_instance_gate_left(in, r);
        resv_release(in, r);
        r->state = SIM_REQ_KV_HOLD;
        r->prefill_instance = in->id;
        r->hold_blocks = r->blocks;
        r->blocks = 0;
        r->hold_shared = r->shared;
        r->shared = 0;
        in->held++;
        in->hooks.on_prefill_done(in->hooks.ctx, r);
    } else {
        in->outstanding--;
        sim_instance_decode_join(in, ln, r);
    }
}

/* The iteration's prefill chunks are in KV: progress, cache, and the
 * requests whose prompts are done. */
static void prefill_chunks_done(sim_instance *in, sim_lane *ln, sim_time now, sim_time seen)
{
    for (int32_t i = 0; i < ln->n_chunks; i++) {
        sim_req *r = ln->chunk_req[i];
        int32_t t = ln->chunks[i].tokens;
        r->prefilled += t;
        in->outstanding -= t;
        in->pending_prefill -= t;
        if (r->first_scheduled < 0) r->first_scheduled = ln->iter_start;
        sim_instance_cache_insert(in, r);
        if (r->prefilled >= r->prefill_target) prefill_complete(in, ln, r, now, seen);
    }
}

/* A decode instance's step boundary: the requests that joined at the
 * previous boundary got their first decode token (stamped once, for the
 * TTFT breakdown) after a decoding step; arrived KV joins, and waiting
 * hand-overs take freed blocks. */
static void decode_boundary(sim_instance *in, sim_lane *ln, int decoded, sim_time now)
{
    if (decoded) {
        while (ln->just_joined.head) {
            sim_req *j = ln->just_joined.head;
            sim_req_list_remove(&ln->just_joined, j, SIM_PRE_LINK);
            if (j->state == SIM_REQ_DECODE && j->decode_first < 0) j->decode_first = now;
        }
    }
    sim_instance_join_ready(in, ln);
    sim_instance_grant_pending(in);
}

static void on_iter_end(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_instance *in = ctx;
    sim_lane *ln = &in->lanes[arg];
    sim_time now = sim_engine_now(eng);
    /* The chunks' requests read below, whose addresses iter_end_warm
     * brought into cache: ask for them at once instead of missing on each
     * in turn (it asked for the first to finish itself). */
    for (int32_t i = 0; i < ln->n_chunks; i++) prefetch_req(ln->chunk_req[i]);
    if (in->hooks.on_iteration) iter_trace(in, ln, now);
    in->iter++;
    sim_time dur = now - ln->iter_start;
    iter_account(in, ln, now);
    int decoded = ln->cur_n_decode > 0;
    int64_t step_tokens = ln->cur_n_decode;
    if (in->spec && decoded) step_tokens = spec_step_end(in, ln);
    else in->outstanding -= ln->cur_n_decode;
    /* The detokenise-and-stream workers: one job per request that sampled
     * tokens this iteration (the decoding ones, and each finished prefill's
     * first token); the client sees them `seen` after now. */
    sim_time seen = 0;
    if (in->detok.workers > 0) {
        int64_t jobs = ln->cur_n_decode;
        for (int32_t i = 0; i < ln->n_chunks; i++)
            if (ln->chunk_req[i]->prefilled + ln->chunks[i].tokens >= ln->chunk_req[i]->prefill_target) jobs++;
        seen = sim_detok_step(&in->detok, now, jobs, step_tokens + (jobs - ln->cur_n_decode));
    }
    sim_instance_gate_step_end(in, ln);
    iter_itl(in, ln, dur, decoded, now);
    int64_t n = ln->dstep;
    if (decoded) finish_decoded(in, ln, n, seen);
    SIM_ASSERT(ln->heap_n == 0 || ln->heap[0].finish_iter > n, now);
    prefill_chunks_done(in, ln, now, seen);
    if (in->role == SIM_ROLE_DECODE) decode_boundary(in, ln, decoded, now);
    ln->n_chunks = 0;
    ln->busy = 0;
    SIM_ASSERT(in->outstanding >= 0 && in->pending_prefill >= 0 && in->blocks_used >= 0 &&
                   in->blocks_used + cached_kv(in) <= in->blocks_total, now);
    sim_instance_schedule(in, ln);
    /* Freed KV or finished requests may let an idle lane start. */
    for (int32_t k = 0; k < in->n_lanes && !sim_engine_failed(in->eng, NULL); k++) {
        if (in->lanes[k].busy || k == ln->idx) continue;
        if (in->role == SIM_ROLE_DECODE) sim_instance_join_ready(in, &in->lanes[k]);
        sim_instance_schedule(in, &in->lanes[k]);
    }
}

/* ---- public ------------------------------------------------------------- */

/* The scheduler settings an instance cannot run with, and a KV cache
 * smaller than one block; SIM_OK or the error, in that order. */
static int create_check(const sim_sched_cfg *cfg, int32_t id, int64_t kv_tokens, sim_err *err)
{
    if (cfg->block_tokens < 1 || cfg->max_seqs < 1 || cfg->chunk_tokens < 1)
        return sim_err_set(err, SIM_EINVAL, "scheduler: block_tokens, max_seqs and chunk_tokens must be >= 1");
    if (cfg->max_batched_tokens < cfg->max_seqs)
        return sim_err_set(err, SIM_EINVAL,
                           "scheduler: max_batched_tokens (%d) must be >= max_seqs (%d): every running "
                           "request needs one token of budget per decode step",
                           cfg->max_batched_tokens, cfg->max_seqs);
    if (kv_tokens / cfg->block_tokens < 1)
        return sim_err_set(err, SIM_ERANGE, "instance %d: KV cache holds %lld tokens, less than one block of %d",
                           id, (long long)kv_tokens, cfg->block_tokens);
    return SIM_OK;
}

/* What the layout ly (NULL: one GPU) gives the instance: pipeline stages,
 * attention-DP ranks with their request counts, and the largest CUDA
 * graph batch. SIM_ENOMEM when the counts cannot be allocated. */
static int create_layout(sim_instance *in, const sim_sched_cfg *cfg, const model_cost *cost,
                         const model_layout *ly, sim_role role)
{
    in->n_stages = ly && ly->pp > 1 ? ly->pp : 1;
    in->dp_ranks = ly && ly->dp > 1 ? ly->dp : 1;
    if (cfg->cuda_graph_sizes != SIM_GRAPH_NONE) {
        int32_t gmax = cfg->cuda_graph_max_bs;
        if (gmax <= 0) {
            const double gib = cost ? model_cost_gpu(cost)->hbm_bytes / (1024.0 * 1024.0 * 1024.0) : 0;
            gmax = sim_graph_sizes_default_max(cfg->cuda_graph_sizes, cfg->max_seqs, gib,
                                               ly ? ly->tp * in->dp_ranks : 1);
        }
        in->graph_max_bs = gmax;
    }
    if (in->dp_ranks > 1 && cfg->adp_timeout_iters > 0 && role != SIM_ROLE_DECODE) {
        /* TensorRT-LLM's attention-DP balancing counts each rank's requests (sim_instance_gate.c). */
        in->rank_n = calloc((size_t)in->dp_ranks * 2, sizeof *in->rank_n);
        if (!in->rank_n) return SIM_ENOMEM;
        in->rank_wait = in->rank_n + in->dp_ranks;
    }
    return SIM_OK;
}

/* The lanes (one per micro-batch in flight through the pipeline, one
 * without stages) with their residue counts, and the stages' clocks.
 * SIM_ENOMEM on allocation failure, what was allocated left for
 * sim_instance_destroy. */
static int create_lanes(sim_instance *in, const sim_sched_cfg *cfg, const model_layout *ly)
{
    in->n_lanes = in->n_stages > 1 ? ly->micro_batches : 1;
    if (in->n_lanes < 1) in->n_lanes = 1;
    in->lanes = in->n_lanes == 1 ? &in->lane0 : calloc((size_t)in->n_lanes, sizeof *in->lanes);
    if (!in->lanes) return SIM_ENOMEM;
    for (int32_t k = 0; k < in->n_lanes; k++) {
        in->lanes[k].idx = k;
        in->lanes[k].top_finish = INT64_MAX;
        in->lanes[k].res_cnt = calloc((size_t)cfg->block_tokens, sizeof *in->lanes[k].res_cnt);
        if (!in->lanes[k].res_cnt) return SIM_ENOMEM;
    }
    if (in->n_stages > 1) {
        in->stage_free = calloc((size_t)in->n_stages, sizeof *in->stage_free);
        in->stage_s = calloc((size_t)in->n_stages, sizeof *in->stage_s);
        in->hop_s = calloc((size_t)in->n_stages, sizeof *in->hop_s);
        if (!in->stage_free || !in->stage_s || !in->hop_s) return SIM_ENOMEM;
    }
    return SIM_OK;
}

/* The scheduling policy and admission mode cfg asks of an instance of
 * this role. */
static void create_policy(sim_instance *in, const sim_sched_cfg *cfg, sim_role role)
{
    in->prefill_first = cfg->policy == SIM_POLICY_PREFILL_FIRST;
    /* ratio admission runs where one engine prefills and decodes; a PD
     * prefill or decode instance keeps reserve (sim_instance_ratio.c). */
    in->ratio_mode = cfg->admission == SIM_ADMISSION_RATIO && role == SIM_ROLE_COLOCATED;
    in->reserve = cfg->admission == SIM_ADMISSION_RESERVE || (cfg->admission == SIM_ADMISSION_RATIO && !in->ratio_mode);
    in->ratio = cfg->ratio_init;
}

int sim_instance_create(sim_engine *eng, int32_t id, sim_role role, const sim_sched_cfg *cfg,
                        const model_cost *cost, int64_t kv_tokens, sim_metrics *metrics,
                        sim_instance_hooks hooks, sim_instance **out, sim_err *err)
{
    *out = NULL;
    const int rc = create_check(cfg, id, kv_tokens, err);
    if (rc != SIM_OK) return rc;
    /* Line-aligned, so the lines the event loop and iter_end_warm ask for
     * are the instance's own (sim_instance_impl.h). */
    const size_t in_size = (sizeof(sim_instance) + 63) / 64 * 64;
    sim_instance *in = aligned_alloc(64, in_size);
    if (!in) goto nomem;
    memset(in, 0, in_size);
    /* Pipeline parallelism: up to micro_batches batches in flight (the
     * layout resolves 0 to pp), each through every stage in turn. */
    const model_layout *ly = cost ? model_cost_layout(cost) : NULL;
    if (create_layout(in, cfg, cost, ly, role) != SIM_OK || create_lanes(in, cfg, ly) != SIM_OK) goto nomem;
    in->eng = eng;
    in->id = id;
    in->role = role;
    create_policy(in, cfg, role);
    in->cfg = *cfg;
    in->fe_idle = cfg->tokenizer_workers > 0 ? cfg->tokenizer_workers : 0;
    sim_detok_init(&in->detok, cfg);
    in->cost = cost;
    in->metrics = metrics;
    in->hooks = hooks;
    in->bs = cfg->block_tokens;
    in->blocks_total = kv_tokens / cfg->block_tokens;
    in->win_start = sim_engine_now(eng);
    *out = in;
    return SIM_OK;
nomem:
    sim_instance_destroy(in);
    return sim_err_set(err, SIM_ENOMEM, "out of memory creating instance %d", id);
}

int sim_instance_enable_spec(sim_instance *in, sim_spec *spec, sim_err *err)
{
    if (in->n_stages > 1 || in->cost_fn) {
        sim_spec_destroy(spec);
        return sim_err_set(err, SIM_ENOTSUP,
                           "instance %d: speculative decoding is not modelled with pipeline stages or attention/FFN "
                           "disaggregation", in->id);
    }
    sim_spec_destroy(in->spec);
    in->spec = spec;
    in->spec_k = spec ? sim_spec_k(spec) : 0;
    return SIM_OK;
}

void sim_instance_set_iteration_hook(sim_instance *in,
                                     void (*fn)(void *ctx, int32_t instance, const sim_trace_iter *it))
{
    in->hooks.on_iteration = fn;
}

void sim_instance_set_load_hook(sim_instance *in, void (*fn)(void *ctx, int32_t instance, int64_t outstanding))
{
    in->hooks.on_load = fn;
}

int sim_instance_enable_energy(sim_instance *in, double mem_share, sim_err *err)
{
    if (in->cost_fn)
        return sim_err_set(err, SIM_EINVAL,
                           "energy: not modelled for attention/FFN disaggregation (deployment.mode af or pd+af)");
    in->energy_on = 1;
    in->energy_mem_share = mem_share;
    return SIM_OK;
}

void sim_instance_set_encoder(sim_instance *in, sim_encode_fn fn, void *ctx)
{
    in->enc_fn = fn;
    in->enc_ctx = ctx;
}

void sim_instance_set_cost_fn(sim_instance *in, double (*fn)(void *ctx, const model_batch *b), void *ctx)
{
    in->cost_fn = fn;
    in->cost_ctx = ctx;
    /* fn prices a whole iteration: one batch at a time, no stage pipeline
     * (called before the instance has work, so the other lanes are empty). */
    for (int32_t k = 1; k < in->n_lanes; k++) {
        free(in->lanes[k].res_cnt);
        free(in->lanes[k].heap);
        free(in->lanes[k].chunks);
        free(in->lanes[k].chunk_req);
    }
    in->n_lanes = 1;
    in->n_stages = 1;
}

void sim_instance_destroy(sim_instance *in)
{
    if (!in) return;
    sim_prefix_destroy(in->pc);
    sim_spec_destroy(in->spec);
    for (int32_t k = 0; in->lanes && k < in->n_lanes; k++) {
        free(in->lanes[k].res_cnt);
        free(in->lanes[k].heap);
        free(in->lanes[k].chunks);
        free(in->lanes[k].chunk_req);
    }
    if (in->lanes != &in->lane0) free(in->lanes);
    free(in->stage_free);
    free(in->stage_s);
    free(in->hop_s);
    free(in->rank_n);
    free(in);
}

int sim_instance_fits(const sim_instance *in, int32_t input_tokens, int32_t output_tokens)
{
    return blocks_for(in, (int64_t)input_tokens + output_tokens + in->spec_k) <= in->blocks_total;
}

static void enqueue_waiting(sim_instance *in, sim_req *r)
{
    /* Unreceived arrivals (recv_interval) wait at the tail in arrival order. */
    if (in->by_priority && in->cfg.recv_interval <= 1) sim_instance_waiting_place(in, r);
    else sim_req_list_push_back(&in->waiting, r, SIM_RUN_LINK);
    sim_instance_gate_arrival(in, r);
    sim_instance_kick(in);
}

static void on_frontend_done(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    enqueue_waiting(ctx, (sim_req *)(uintptr_t)arg);
}

/* After the worker pool (if any): the fixed frontend delay, then the queue. */
static void frontend_delay(sim_instance *in, sim_req *r)
{
    sim_time fe = (sim_time)(in->cfg.frontend_us * 1e3);
    /* A frontend event that cannot be scheduled failed the run (the engine records it). */
    if (fe > 0) sim_engine_after(in->eng, fe, on_frontend_done, in, (uint64_t)(uintptr_t)r);
    else enqueue_waiting(in, r);
}

static void on_worker_done(sim_engine *eng, void *ctx, uint64_t arg);

/* A worker takes r now: api_us + tokenize_us_per_token per prompt token;
 * r waited since it was submitted (its arrival). */
static void worker_start(sim_instance *in, sim_req *r)
{
    sim_time now = sim_engine_now(in->eng);
    sim_time svc = (sim_time)((in->cfg.api_us + in->cfg.tokenize_us_per_token * r->spec.input_tokens) * 1e3 + 0.5);
    in->fe_jobs++;
    in->fe_wait_ns += now > r->spec.arrival ? now - r->spec.arrival : 0;
    in->fe_service_ns += svc;
    sim_engine_after(in->eng, svc, on_worker_done, in, (uint64_t)(uintptr_t)r);
}

static void on_worker_done(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    sim_instance *in = ctx;
    sim_req *next = in->fe_queue.head;
    if (next) {
        sim_req_list_remove(&in->fe_queue, next, SIM_RUN_LINK);
        worker_start(in, next);
    } else {
        in->fe_idle++;
    }
    frontend_delay(in, (sim_req *)(uintptr_t)arg);
}

void sim_instance_submit(sim_instance *in, sim_req *r)
{
    r->instance = in->id;
    r->state = SIM_REQ_WAITING;
    r->prefill_target = r->spec.input_tokens;
    r->prefilled = 0;
    r->generated = 0;
    r->blocks = 0;
    r->lane = 0;
    r->first_scheduled = -1;
    r->first_token = -1;
    r->stream_first = 0;
    r->stream_last = 0;
    r->prefill_instance = -1;
    r->hold_blocks = 0;
    r->resv_blocks = 0;
    r->kv_reserved = r->kv_arrived = r->decode_first = -1;
    r->kv_bytes = 0;
    r->shared = r->hold_shared = 0;
    r->cached_tokens = 0;
    r->kept_blocks = 0;
    r->kept_mark = 0;
    r->fetching = r->fetch_blocks = r->fetch_parts = 0;
    /* A prefill instance only owes the prompt; decode work is owed downstream. */
    in->outstanding += (int64_t)r->spec.input_tokens +
                       (in->role == SIM_ROLE_PREFILL ? 0 : r->spec.output_tokens);
    in->pending_prefill += r->spec.input_tokens;
    queued_add(in, 1);
    /* The frontend (API server, tokenisation) holds the request first: it
     * counts as this instance's load for routers at once, but joins the
     * queue only when the frontend hands it over. */
    if (in->role == SIM_ROLE_DECODE) {
        enqueue_waiting(in, r);
    } else if (in->cfg.tokenizer_workers > 0) {
        /* The API server's workers, first come first served. */
        if (in->fe_idle > 0) {
            in->fe_idle--;
            worker_start(in, r);
        } else {
            sim_req_list_push_back(&in->fe_queue, r, SIM_RUN_LINK);
        }
    } else {
        frontend_delay(in, r);
    }
}




void sim_instance_publish_view(sim_instance *in, sim_router_view *slot)
{
    in->published = slot;
    sim_instance_publish(in);
}

void sim_instance_count_queued(sim_instance *in, int64_t *counter)
{
    in->queued = counter;
    if (counter) *counter += in->waiting.n;
}

void sim_instance_view(const sim_instance *in, sim_router_view *out)
{
    out->outstanding_tokens = in->outstanding;
    out->waiting = (int32_t)in->waiting.n;
    out->running = (int32_t)in->running_n;
}

void sim_instance_sample(sim_instance *in, sim_time now, sim_sample *out)
{
    for (int32_t k = 0; k < in->n_lanes; k++) {
        const sim_lane *ln = &in->lanes[k];
        if (!ln->busy) continue;
        sim_time from = ln->iter_start > in->win_start ? ln->iter_start : in->win_start;
        in->win_batch += (double)(now - from) * ln->cur_batch;
    }
    if (in->busy_lanes > 0) in->win_busy += now - (in->busy_since > in->win_start ? in->busy_since : in->win_start);
    sim_time span = now - in->win_start;
    out->instance = in->id;
    out->t = now;
    out->utilization = span > 0 ? (double)in->win_busy / (double)span : 0.0;
    out->batch_size = span > 0 ? in->win_batch / (double)span : 0.0;
    out->kv_occupancy = (double)in->blocks_used / (double)in->blocks_total;
    out->waiting = (int32_t)in->waiting.n;
    in->win_start = now;
    in->win_busy = 0;
    in->win_batch = 0;
}

int64_t sim_instance_pending_prefill(const sim_instance *in) { return in->pending_prefill; }

void sim_instance_set_class_metrics(sim_instance *in, sim_metrics **m, int32_t n)
{
    in->class_metrics = m;
    in->n_class_metrics = m ? n : 0;
}

sim_time sim_instance_oldest_waiting(const sim_instance *in)
{
    if (in->by_priority) return sim_instance_priority_oldest(in);
    return in->waiting.head ? in->waiting.head->spec.arrival : -1;
}

void sim_instance_stats_get(const sim_instance *in, sim_instance_stats *out)
{
    out->kv_blocks_total = in->blocks_total;
    out->kv_blocks_used = in->blocks_used;
    out->waiting = in->waiting.n;
    out->running = in->running_n;
    out->decoding = 0;
    for (int32_t k = 0; k < in->n_lanes; k++) out->decoding += in->lanes[k].dec_n;
    out->iterations = in->iter;
    out->preemptions = in->preemptions;
    out->outstanding_tokens = in->outstanding;
    out->kv_pending = in->kv_pending.n;
    out->held = in->held;
    out->cached_blocks = cached_kv(in);
    out->cache_referenced = 0;
    if (in->pc) {
        sim_prefix_stats st;
        sim_prefix_stats_get(in->pc, &st);
        out->cache_referenced = st.referenced;
    }
    out->busy_ns = in->busy_ns;
    out->energy_busy_s = in->energy_busy_s;
    out->fe_jobs = in->fe_jobs;
    out->fe_wait_ns = in->fe_wait_ns;
    out->fe_service_ns = in->fe_service_ns;
    out->dt_jobs = in->detok.jobs;
    out->dt_tokens = in->detok.tokens;
    out->dt_wait_ns = in->detok.wait_ns;
    out->dt_service_ns = in->detok.service_ns;
}
