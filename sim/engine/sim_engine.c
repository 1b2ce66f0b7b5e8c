/* sim_engine — 4-ary heap of 16-byte (time, seq·slot) records plus a slot
 * table holding payloads. The heap is laid out so the four children of a
 * node share one 64-byte cache line (records 1..4, 5..8, ... are
 * line-aligned): sifting touches one line per level. A record is live while
 * its slot still holds its seq; cancelled events free their slot at once
 * (bumping its generation for the handle), their heap record is dropped
 * when it reaches the top. */
#include "sim_engine.h"

#include "sim_err.h"
#include "sim_heap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* key = seq << SLOT_BITS | slot: ordering by key is ordering by seq. */
#define SLOT_BITS 24
#define MAX_SLOTS (1u << SLOT_BITS)          /* pending events at once */
#define SEQ_LIMIT (UINT64_C(1) << (64 - SLOT_BITS)) /* events scheduled in a run */
#define NO_SEQ UINT64_MAX

typedef struct {
    sim_time t;
    uint64_t key;
} heap_rec;

typedef struct {
    sim_event_fn fn;
    sim_warm_fn warm;   /* NULL: the event loop prefetches ctx's first lines instead */
    void *ctx;
    uint64_t arg;
    uint64_t seq;       /* of the pending record; NO_SEQ while free */
    uint32_t gen;
    uint32_t next_free; /* valid while free; UINT32_MAX ends the list */
} slot_rec;

struct sim_engine {
    void *heap_mem;      /* allocation holding the heap */
    heap_rec *heap;      /* heap_mem + 48 bytes: record 1 starts a cache line */
    size_t n, cap;
    slot_rec *slots;
    uint32_t nslots, slot_cap, free_head;
    sim_time now;
    uint64_t seq;
    uint64_t fired;
    uint64_t live;
    int stop;
    int fail;            /* 0, or the negative SIM_E* of sim_engine_fail */
    char fail_msg[256];
};

static inline uint32_t rec_slot(const heap_rec *r) { return (uint32_t)(r->key & (MAX_SLOTS - 1)); }
static inline uint64_t rec_seq(const heap_rec *r) { return r->key >> SLOT_BITS; }

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->free_head = UINT32_MAX;
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (!e) return;
    free(e->heap_mem);
    free(e->slots);
    free(e);
}

static inline int rec_less(const void *ctx, const heap_rec *a, const heap_rec *b)
{
    (void)ctx;
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

/* 4-ary: a record's four children share one cache line. */
SIM_HEAP_DEFINE(rec_heap, heap_rec, 4, const void *, rec_less, SIM_HEAP_NO_PLACE)

static uint32_t slot_alloc(sim_engine *e)
{
    if (e->free_head != UINT32_MAX) {
        uint32_t s = e->free_head;
        e->free_head = e->slots[s].next_free;
        return s;
    }
    if (e->nslots == e->slot_cap) {
        if (e->slot_cap >= MAX_SLOTS) return UINT32_MAX;
        uint32_t nc = e->slot_cap ? e->slot_cap * 2 : 1024;
        slot_rec *ns = realloc(e->slots, (size_t)nc * sizeof *ns);
        if (!ns) return UINT32_MAX;
        e->slots = ns;
        e->slot_cap = nc;
    }
    e->slots[e->nslots].gen = 1;
    return e->nslots++;
}

static void slot_free(sim_engine *e, uint32_t s)
{
    e->slots[s].gen++;
    if (e->slots[s].gen == 0) e->slots[s].gen = 1; /* 0 is reserved for "never" */
    e->slots[s].seq = NO_SEQ;
    e->slots[s].next_free = e->free_head;
    e->free_head = s;
}

/* Room for one more record, the layout kept cache-line aligned. */
static int heap_grow(sim_engine *e)
{
    size_t nc = e->cap ? e->cap * 2 : 1024;
    /* 64-aligned block; the heap starts 48 bytes in, so record i starts at
     * 48 + 16 i: records 4k+1 .. 4k+4 (a node's children) fill one line. */
    void *mem = aligned_alloc(64, (nc + 4) * sizeof(heap_rec));
    if (!mem) return SIM_ENOMEM;
    heap_rec *h = (heap_rec *)((char *)mem + 48);
    if (e->n) memcpy(h, e->heap, e->n * sizeof *h);
    free(e->heap_mem);
    e->heap_mem = mem;
    e->heap = h;
    e->cap = nc;
    return 0;
}

sim_handle sim_engine_at_warm(sim_engine *e, sim_time t, sim_event_fn fn, sim_warm_fn warm, void *ctx,
                              uint64_t arg)
{
    SIM_ASSERT(t >= e->now, e->now);
    if (e->n == e->cap && heap_grow(e) < 0) {
        sim_engine_fail(e, SIM_ENOMEM, "out of memory growing the event queue past %zu events", e->n);
        return 0;
    }
    if (e->seq >= SEQ_LIMIT) {
        sim_engine_fail(e, SIM_ERANGE, "more than %llu events scheduled in one run",
                        (unsigned long long)SEQ_LIMIT);
        return 0;
    }
    uint32_t s = slot_alloc(e);
    if (s == UINT32_MAX) {
        sim_engine_fail(e, SIM_ENOMEM, "out of memory growing the event table past %u pending events",
                        e->slot_cap);
        return 0;
    }
    slot_rec *sr = &e->slots[s];
    sr->fn = fn;
    sr->warm = warm;
    sr->ctx = ctx;
    sr->arg = arg;
    sr->seq = e->seq;
    heap_rec r = {t, e->seq++ << SLOT_BITS | s};
    e->heap[e->n] = r;
    rec_heap_up(NULL, e->heap, e->n);
    e->n++;
    e->live++;
    return ((uint64_t)sr->gen << 32) | (uint64_t)(s + 1);
}

sim_handle sim_engine_at(sim_engine *e, sim_time t, sim_event_fn fn, void *ctx, uint64_t arg)
{
    return sim_engine_at_warm(e, t, fn, NULL, ctx, arg);
}

sim_handle sim_engine_after_warm(sim_engine *e, sim_time delay, sim_event_fn fn, sim_warm_fn warm, void *ctx,
                                 uint64_t arg)
{
    SIM_ASSERT(delay >= 0, e->now);
    /* Saturate instead of overflowing: "never" stays at the end of time. */
    sim_time t = delay > SIM_TIME_MAX - e->now ? SIM_TIME_MAX : e->now + delay;
    return sim_engine_at_warm(e, t, fn, warm, ctx, arg);
}

sim_handle sim_engine_after(sim_engine *e, sim_time delay, sim_event_fn fn, void *ctx, uint64_t arg)
{
    return sim_engine_after_warm(e, delay, fn, NULL, ctx, arg);
}

/* Drops cancelled records and re-heapifies in O(n). Called when dead records
 * outnumber live ones, so a re-armed timer pattern cannot grow the heap
 * without bound; amortised O(1) per cancel. */
static void heap_compact(sim_engine *e)
{
    size_t k = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->slots[rec_slot(&e->heap[i])].seq == rec_seq(&e->heap[i])) e->heap[k++] = e->heap[i];
    e->n = k;
    rec_heap_heapify(NULL, e->heap, e->n);
}

int sim_engine_cancel(sim_engine *e, sim_handle h)
{
    if (h == 0) return 0;
    uint32_t s = (uint32_t)(h & 0xffffffffu);
    uint32_t gen = (uint32_t)(h >> 32);
    if (s == 0 || s > e->nslots) return 0;
    s--;
    if (e->slots[s].gen != gen) return 0;
    /* A slot on the free list has a bumped gen, so a match means pending. */
    slot_free(e, s);
    e->live--;
    if (e->n > 1024 && e->n > 2 * e->live) heap_compact(e);
    return 1;
}

sim_time sim_engine_now(const sim_engine *e) { return e->now; }
uint64_t sim_engine_events_fired(const sim_engine *e) { return e->fired; }
uint64_t sim_engine_pending(const sim_engine *e) { return e->live; }
void sim_engine_stop(sim_engine *e) { e->stop = 1; }

void sim_engine_fail(sim_engine *e, int code, const char *fmt, ...)
{
    e->stop = 1;
    if (e->fail) return;
    e->fail = code < 0 ? code : SIM_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->fail_msg, sizeof e->fail_msg, fmt, ap);
    va_end(ap);
}

int sim_engine_failed(const sim_engine *e, const char **msg)
{
    if (msg) *msg = e->fail_msg;
    return e->fail;
}

static void heap_pop(sim_engine *e)
{
    e->n--;
    rec_heap_remove(NULL, e->heap, e->n, 0);
}

/* Drops cancelled records from the top; returns 1 if a live one is there. */
static int top_live(sim_engine *e)
{
    while (e->n > 0) {
        heap_rec *r = &e->heap[0];
        if (e->slots[rec_slot(r)].seq == rec_seq(r)) return 1;
        heap_pop(e);
    }
    return 0;
}

/* While one event runs, the contexts of the next two are fetched (in a
 * large cluster an instance's state is no longer in cache between its
 * events): the one after next, the smallest of the root's four children
 * (one cache line), gets its first PREFETCH_LINES lines asked for; the
 * next one, whose first lines were asked for one event earlier, gets its
 * warm function, which asks for the lines those point to (or, without
 * one, its first lines again, in case it was not the guess). Hints only:
 * they change no result. */
#define PREFETCH_LINES 10
static inline void prefetch_ctx(const void *ctx)
{
    const char *p = ctx;
    for (int k = 0; k < PREFETCH_LINES; k++) __builtin_prefetch(p + 64 * k);
}

static inline void prefetch_ahead(const sim_engine *e)
{
    const slot_rec *next = &e->slots[rec_slot(&e->heap[0])];
    if (next->warm && next->seq == rec_seq(&e->heap[0])) /* a cancelled one's ctx may be gone */
        next->warm(next->ctx, next->arg);
    else
        prefetch_ctx(next->ctx);
    if (e->n < 2) return;
    size_t last = e->n - 1 < 4 ? e->n - 1 : 4, best = 1;
    for (size_t j = 2; j <= last; j++)
        if (rec_less(NULL, &e->heap[j], &e->heap[best])) best = j;
    prefetch_ctx(e->slots[rec_slot(&e->heap[best])].ctx);
}

static void fire_top(sim_engine *e)
{
    heap_rec r = e->heap[0];
    heap_pop(e);
    SIM_ASSERT(r.t >= e->now, e->now);
    uint32_t slot = rec_slot(&r);
    slot_rec sr = e->slots[slot];
    slot_free(e, slot);
    e->live--;
    e->now = r.t;
    e->fired++;
    if (e->n > 0) prefetch_ahead(e);
    sr.fn(e, sr.ctx, sr.arg);
}

int sim_engine_step(sim_engine *e)
{
    if (e->fail || !top_live(e)) return 0;
    fire_top(e);
    return 1;
}

uint64_t sim_engine_run(sim_engine *e, sim_time until)
{
    uint64_t start = e->fired;
    e->stop = 0;
    while (!e->stop && !e->fail && top_live(e)) {
        if (e->heap[0].t > until) break;
        fire_top(e);
    }
    return e->fired - start;
}
