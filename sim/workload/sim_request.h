/* sim_request — a request in flight inside the cluster.
 *
 * Created by the cluster when a request arrives (from a pool with a free
 * list, so memory tracks requests in flight, not requests simulated) and
 * handed to one instance, which owns it until it finishes and reports it
 * back through its on_finish hook. Decode progress is NOT stored per token:
 * a decoding request keeps the iteration it joined decode and the iteration
 * its last token is due, and its context at iteration n is ctx_base + n
 * (see sim_instance.c). Times are ns. */
#ifndef SIM_REQUEST_H
#define SIM_REQUEST_H

#include "sim_engine.h"
#include "sim_workload.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SIM_REQ_WAITING = 0,
    SIM_REQ_PREFILL = 1,
    SIM_REQ_DECODE = 2,
    SIM_REQ_DONE = 3,
    SIM_REQ_KV_HOLD = 4,     /* pd: prefill done, KV held on the prefill side until it moves */
    SIM_REQ_KV_MOVING = 5,   /* pd: decode blocks reserved, KV in flight */
    SIM_REQ_READY = 6        /* pd: KV arrived, joins decode at the next iteration boundary */
} sim_req_state;

typedef struct sim_req sim_req;

/* Intrusive doubly-linked list node and list. */
typedef struct sim_link {
    sim_req *prev, *next;
} sim_link;

typedef struct {
    sim_req *head, *tail;
    int64_t n;
} sim_req_list;

struct sim_req {
    sim_request_spec spec;
    int32_t instance;
    int32_t client;          /* closed-loop client, -1 for open loop */
    sim_req_state state;
    int32_t preemptions;
    /* prefill progress (counts recompute after preemption) */
    int32_t prefill_target;  /* tokens to put in KV before the next token: input + generated */
    int32_t prefilled;
    int32_t generated;       /* output tokens emitted so far */
    int32_t blocks;          /* KV blocks held while waiting/prefilling */
    /* decode bookkeeping: ctx(n) = ctx_base + n at iteration n */
    int64_t ctx_base;
    int64_t join_iter;       /* iteration whose end emitted the token before decode began */
    int32_t generated_at_join;
    int64_t finish_iter;     /* iteration that emits the last token */
    int32_t lane;            /* the instance's batch slot it runs in (sim_instance_impl.h) */
    int32_t dp_rank;         /* attention-DP rank it was given on arrival, where the instance tracks
                              * ranks (TensorRT-LLM's balancing, sim_instance_gate.c) */
    float spec_scale;        /* speculative decoding: this request's acceptance scale (sim_spec.h) */
    sim_time first_scheduled, first_token, finish;
    sim_time stream_first;   /* detokenizer_workers: first token seen this long after first_token */
    sim_time stream_last;    /* detokenizer_workers: last token seen this long after finish (set when it finishes) */
    /* pd: where the KV was computed and when it moved */
    int32_t prefill_instance;
    int32_t decode_pick;     /* decode-pool index chosen at arrival (deployment.decode_pick), -1 = at prefill end */
    int32_t hold_blocks;     /* blocks still held on the prefill instance */
    int32_t resv_blocks;     /* scheduler.admission reserve: blocks promised to it at admission */
    sim_time kv_reserved, kv_arrived, decode_first;
    double kv_bytes;
    /* prefix caching: the prompt's cache-block keys (owned by the cluster),
     * then n_out_keys more for the blocks its answer completes (the chain
     * continued as the next prompt of its session names it; inserted when
     * it finishes), how many leading blocks this request references in its
     * instance's index, and how many prompt tokens it found cached there */
    uint64_t *keys;
    int32_t n_keys;
    int32_t n_out_keys;
    int32_t shared;
    int32_t hold_shared;     /* pd: references still held on the prefill instance */
    int32_t cached_tokens;
    /* scheduler.preempt_keeps_kv: the full KV blocks it held when last
     * preempted, and the instance's blocks_taken then (what other
     * allocations have overwritten since) */
    int32_t kept_blocks;
    int64_t kept_mark;
    /* KV sharing: blocks being fetched from a peer or a tier before prefill */
    int32_t fetching;        /* 1 while a fetch is in flight */
    int32_t fetch_blocks;    /* cache blocks the fetch brings */
    int32_t fetch_src;       /* pull: front index of the peer; pool: host-tier blocks */
    int32_t fetch_parts;     /* transfers still in flight */
    /* workload.images: the instance runs the vision tower in the iteration
     * of its first prefill chunk (colocated encoding); with an encode pool,
     * the front instance it goes to, the encoder that serves it and when
     * its wait or transfer began */
    int32_t encode_due;
    int32_t enc_target, enc_unit;
    sim_time enc_t0;
    sim_link run_link;       /* waiting list or running list */
    sim_link pre_link;       /* prefilling list */
    sim_req *free_next;      /* pool free list */
};

static inline void sim_req_list_push_back(sim_req_list *l, sim_req *r, size_t link_off)
{
    sim_link *lk = (sim_link *)((char *)r + link_off);
    lk->next = NULL;
    lk->prev = l->tail;
    if (l->tail) ((sim_link *)((char *)l->tail + link_off))->next = r;
    else l->head = r;
    l->tail = r;
    l->n++;
}

static inline void sim_req_list_push_front(sim_req_list *l, sim_req *r, size_t link_off)
{
    sim_link *lk = (sim_link *)((char *)r + link_off);
    lk->prev = NULL;
    lk->next = l->head;
    if (l->head) ((sim_link *)((char *)l->head + link_off))->prev = r;
    else l->tail = r;
    l->head = r;
    l->n++;
}

/* r into l right after `after` (a member of l), or at the front when after is NULL. */
static inline void sim_req_list_insert_after(sim_req_list *l, sim_req *after, sim_req *r, size_t link_off)
{
    if (!after) {
        sim_req_list_push_front(l, r, link_off);
        return;
    }
    sim_link *lk = (sim_link *)((char *)r + link_off), *al = (sim_link *)((char *)after + link_off);
    lk->prev = after;
    lk->next = al->next;
    if (al->next) ((sim_link *)((char *)al->next + link_off))->prev = r;
    else l->tail = r;
    al->next = r;
    l->n++;
}

static inline void sim_req_list_remove(sim_req_list *l, sim_req *r, size_t link_off)
{
    sim_link *lk = (sim_link *)((char *)r + link_off);
    if (lk->prev) ((sim_link *)((char *)lk->prev + link_off))->next = lk->next;
    else l->head = lk->next;
    if (lk->next) ((sim_link *)((char *)lk->next + link_off))->prev = lk->prev;
    else l->tail = lk->prev;
    lk->prev = lk->next = NULL;
    l->n--;
}

#define SIM_RUN_LINK offsetof(sim_req, run_link)
#define SIM_PRE_LINK offsetof(sim_req, pre_link)

static inline sim_req *sim_req_next(const sim_req *r, size_t link_off)
{
    return ((const sim_link *)((const char *)r + link_off))->next;
}

#endif
